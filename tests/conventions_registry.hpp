// The registry of the conformance suite (tests/test_conventions.cpp, and tests/gpu/test_conventions_backends.cpp on a
// GPU): one row per subcommand of the command line, saying how to make its inputs (small, and large enough that
// threads, a GPU and a signal have work to meet), how to run it, and which of its files are inputs. A new subcommand
// joins the suite by adding a row here; every promise of docs/conventions.md is then checked on it.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace swgpu::testing {

namespace conv {

namespace fs = std::filesystem;

// A little-endian float64 .npy of `shape` (format 1.0, data at byte 128), element k = value(k) in C order; with
// `integers`, int64 elements (the values truncated).
inline void write_npy(const fs::path& p, const std::vector<int>& shape, const std::function<double(std::size_t)>& value,
                      bool integers = false) {
    std::string dims;
    std::size_t n = 1;
    for (const int d : shape) {
        dims += std::to_string(d) + ", ";
        n *= static_cast<std::size_t>(d);
    }
    if (shape.size() > 1) dims.resize(dims.size() - 2);
    std::string header = std::string("{'descr': '") + (integers ? "<i8" : "<f8") + "', 'fortran_order': False, 'shape': (" +
                         dims + "), }";
    header.resize(128 - 10 - 1, ' ');  // the 10 bytes before it and the header: a multiple of 64
    header += '\n';
    std::ofstream out(p, std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const std::uint16_t len = static_cast<std::uint16_t>(header.size());
    out.write(reinterpret_cast<const char*>(&len), 2);
    out << header;
    for (std::size_t k = 0; k < n; ++k) {
        const double v = value(k);
        const auto i = static_cast<std::int64_t>(v);
        out.write(integers ? reinterpret_cast<const char*>(&i) : reinterpret_cast<const char*>(&v), 8);
    }
}
inline void write_npy(const fs::path& p, const std::vector<int>& shape, double value) {
    write_npy(p, shape, [value](std::size_t) { return value; });
}

// Values whose float sums round differently in every order (so that a table summed in another order differs).
inline double rough(std::size_t k) { return 1000.0 * std::sin(0.37 * static_cast<double>(k)) + 1e-3 * static_cast<double>(k % 977); }

// `count` random proteins of `length` residues, FASTA, names s0, s1, ...
inline void write_proteins(const fs::path& p, int count, int length, std::uint32_t seed) {
    static const char letters[] = "ACDEFGHIKLMNPQRSTVWY";
    std::mt19937 rng(seed);
    std::ofstream out(p);
    for (int r = 0; r < count; ++r) {
        out << ">s" << r << '\n';
        for (int k = 0; k < length; ++k) out << letters[rng() % 20];
        out << '\n';
    }
}

// A Matrix Market lower triangle of n rows: a dominant diagonal and up to `per_row` entries left of it.
inline void write_lower_triangle(const fs::path& p, int n, int per_row, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<std::string> entries;
    for (int i = 0; i < n; ++i) {
        for (int e = 0; e < per_row && i > 0; ++e) {
            const int j = static_cast<int>(rng() % static_cast<std::uint32_t>(i));
            entries.push_back(std::to_string(i + 1) + ' ' + std::to_string(j + 1) + ' ' +
                              std::to_string(0.1 + 0.01 * static_cast<double>(rng() % 50)));
        }
        entries.push_back(std::to_string(i + 1) + ' ' + std::to_string(i + 1) + " 4.5");
    }
    std::ofstream out(p);
    out << "%%MatrixMarket matrix coordinate real general\n" << n << ' ' << n << ' ' << entries.size() << '\n';
    for (const auto& e : entries) out << e << '\n';
}

}  // namespace conv

struct subcommand {
    std::string name;
    // Writes the inputs into the folder: small (a quick valid run), or large (work for threads, a GPU, a signal).
    std::function<void(const std::filesystem::path&, bool large)> make_inputs;
    // Run in that folder; {OUT} is the output to write, {BACKEND} "--backend cpu" (or gpu on a GPU).
    std::string args;
    std::string large_args;             // with the large inputs (empty: args)
    // The run compared between the CPU and the GPU (empty: large_args).
    std::string backend_args;
    std::vector<std::string> inputs;    // the files it reads (relative to the folder)
    bool has_threads = true;
    bool has_backend = true;
    std::string bad;                    // a run with a bad input (--backend auto where there is one)
    std::string out = "fresh.npy";      // a fresh output name of the right kind
    std::string written_suffix;         // what the run appends to the output's name (makedb: .swdb)
};

inline const std::vector<subcommand>& registry() {
    using conv::write_npy;
    static const std::vector<subcommand> rows = {
        {"align",
         [](const std::filesystem::path& d, bool large) {
             std::ofstream(d / "q.fa") << ">q\nMKVLAAGIVGLLLAQHWERTYPLKVDEFGHIKLMNPQRSTVWYACDEFGHIKLMNPQRS\n";
             if (!large) {
                 std::ofstream(d / "db.fa") << ">s\nAAMKVLAAGIVGLLLAQHWERTYPLKVGG\n";
                 return;
             }
             conv::write_proteins(d / "db.fa", 40000, 300, 7);
         },
         "align {BACKEND} q.fa db.fa -o {OUT}", "align {BACKEND} q.fa db.fa -k 50 -o {OUT}", "", {"q.fa", "db.fa"}, true,
         true, "align no_such.fa db.fa", "fresh.tsv", ""},
        {"makedb",
         [](const std::filesystem::path& d, bool large) {
             if (large) conv::write_proteins(d / "in.swdb", 40000, 300, 11);
             else std::ofstream(d / "in.swdb") << ">s\nMKVLAAGIVGLLLAQHWERTYPLKV\n";
         },
         "makedb in.swdb {OUT}", "", "", {"in.swdb"}, false, false, "makedb no_such.fa out", "fresh", ".swdb"},
        {"sat",
         [](const std::filesystem::path& d, bool large) {
             if (!large) return write_npy(d / "img.npy", {6, 5}, 1.5);
             write_npy(d / "img.npy", {1500, 1700}, conv::rough);
         },
         "sat {BACKEND} img.npy -o {OUT}", "", "", {"img.npy"}, true, true, "sat no_such.npy -o x.npy", "fresh.npy", ""},
        {"ihist",
         [](const std::filesystem::path& d, bool large) {
             if (large) write_npy(d / "img.npy", {1200, 1000}, conv::rough);
             else write_npy(d / "img.npy", {6, 5}, 0.25);
         },
         "ihist {BACKEND} img.npy --bins 2 -o {OUT}", "ihist {BACKEND} img.npy --bins 24 -o {OUT}", "", {"img.npy"}, true,
         true, "ihist img.npy --bins 0 -o x.npy", "fresh.npy", ""},
        {"sor",
         [](const std::filesystem::path& d, bool large) {
             const int n = large ? 257 : 9;
             write_npy(d / "f.npy", {n, n}, large ? std::function<double(std::size_t)>(conv::rough)
                                                  : [](std::size_t) { return 1.0; });
             write_npy(d / "g.npy", {n, n}, 0.0);
         },
         "sor {BACKEND} --rhs f.npy --boundary g.npy -o {OUT}",
         "sor {BACKEND} --rhs f.npy --boundary g.npy --method redblack --tol 1e-12 -o {OUT}", "", {"f.npy", "g.npy"}, true,
         true, "sor --rhs no_such.npy --boundary g.npy -o x.npy", "fresh.npy", ""},
        {"levels",
         [](const std::filesystem::path& d, bool large) {
             if (large) {
                 conv::write_lower_triangle(d / "a.mtx", 200000, 4, 5);
                 write_npy(d / "b.npy", {200000}, conv::rough);
                 return;
             }
             std::ofstream(d / "a.mtx") << "%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 2\n2 1 1\n2 2 2\n"
                                           "3 2 1\n3 3 4\n";
             write_npy(d / "b.npy", {3}, 1.0);
         },
         "levels {BACKEND} --matrix a.mtx --rhs b.npy -o {OUT}", "", "", {"a.mtx", "b.npy"}, true, true,
         "levels --matrix no_such.mtx -o x.npy", "fresh.npy", ""},
        {"sweep3d", [](const std::filesystem::path&, bool) {}, "sweep3d {BACKEND} --n 8 -o {OUT}",
         "sweep3d {BACKEND} --n 120 --loops 40 -o {OUT}", "", {}, true, true, "sweep3d --n 8 --kernel dd --loops 3 -o x.npy", "fresh.npy", ""},
    };
    return rows;
}

// `args` with {OUT} and {BACKEND} filled in.
inline std::string filled(std::string args, const std::string& out, const std::string& backend = "cpu") {
    if (const auto at = args.find("{OUT}"); at != std::string::npos) args.replace(at, 5, out);
    if (const auto at = args.find("{BACKEND}"); at != std::string::npos) args.replace(at, 9, "--backend " + backend);
    return args;
}

}  // namespace swgpu::testing
