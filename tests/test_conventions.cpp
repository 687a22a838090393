// The promises of docs/conventions.md, kept by every subcommand: one registry row per subcommand says how to make a
// small valid run and which of its files are inputs, and each promise is one test that loops over the rows (as
// parasail's tests loop over its function registry). A new subcommand joins by adding a row; a promise it breaks fails
// here. Promises covered: an output that is an input (by its name, ./name, a symbolic link or a hard link) is refused
// with exit 2 and one error line, leaving the input as it was; -t beyond 4096 is refused with exit 2.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "tests/cli_support.hpp"

namespace {

using namespace swgpu::testing;
namespace fs = std::filesystem;

// A little-endian float64 .npy of `shape`, every element `value` (format 1.0, data at byte 128).
void write_npy(const fs::path& p, const std::vector<int>& shape, double value) {
    std::string dims;
    std::size_t n = 1;
    for (const int d : shape) {
        dims += std::to_string(d) + ", ";
        n *= static_cast<std::size_t>(d);
    }
    if (shape.size() > 1) dims.resize(dims.size() - 2);
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + dims + "), }";
    header.resize(128 - 10 - 1, ' ');  // the 10 bytes before it and the header: a multiple of 64
    header += '\n';
    std::ofstream out(p, std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const std::uint16_t len = static_cast<std::uint16_t>(header.size());
    out.write(reinterpret_cast<const char*>(&len), 2);
    out << header;
    for (std::size_t k = 0; k < n; ++k) out.write(reinterpret_cast<const char*>(&value), 8);
}

struct subcommand {
    std::string name;
    std::function<void(const fs::path&)> make_inputs;  // writes the inputs into the folder
    std::string args;                                   // run in that folder; {OUT} is the output to write
    std::vector<std::string> inputs;                    // the files it reads (relative to the folder)
    bool has_threads = true;
    std::string bad;                                    // a run with a bad input (--backend auto where there is one)
};

const std::vector<subcommand>& registry() {
    static const std::vector<subcommand> rows = {
        {"align",
         [](const fs::path& d) {
             std::ofstream(d / "q.fa") << ">q\nMKVLAAGIVGLLLAQHWERTYPLKV\n";
             std::ofstream(d / "db.fa") << ">s\nAAMKVLAAGIVGLLLAQHWERTYPLKVGG\n";
         },
         "align --backend cpu q.fa db.fa -o {OUT}",
         {"q.fa", "db.fa"}, true, "align no_such.fa db.fa"},
        {"makedb", [](const fs::path& d) { std::ofstream(d / "in.swdb") << ">s\nMKVLAAGIVGLLLAQHWERTYPLKV\n"; },
         "makedb in.swdb {OUT}", {"in.swdb"}, false, "makedb no_such.fa out"},
        {"sat", [](const fs::path& d) { write_npy(d / "img.npy", {6, 5}, 1.5); }, "sat --backend cpu img.npy -o {OUT}",
         {"img.npy"}, true, "sat no_such.npy -o x.npy"},
        {"ihist", [](const fs::path& d) { write_npy(d / "img.npy", {6, 5}, 0.25); },
         "ihist --backend cpu img.npy --bins 2 -o {OUT}", {"img.npy"}, true, "ihist img.npy --bins 0 -o x.npy"},
        {"sor",
         [](const fs::path& d) {
             write_npy(d / "f.npy", {9, 9}, 1.0);
             write_npy(d / "g.npy", {9, 9}, 0.0);
         },
         "sor --backend cpu --rhs f.npy --boundary g.npy -o {OUT}", {"f.npy", "g.npy"}, true,
         "sor --rhs no_such.npy --boundary g.npy -o x.npy"},
        {"levels",
         [](const fs::path& d) {
             std::ofstream(d / "a.mtx") << "%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 2\n2 1 1\n2 2 2\n"
                                           "3 2 1\n3 3 4\n";
             write_npy(d / "b.npy", {3}, 1.0);
         },
         "levels --backend cpu --matrix a.mtx --rhs b.npy -o {OUT}", {"a.mtx", "b.npy"}, true,
         "levels --matrix no_such.mtx -o x.npy"},
        {"sweep3d", [](const fs::path&) {}, "sweep3d --backend cpu --n 8 -o {OUT}", {}, true,
         "sweep3d --n 8 --kernel dd --loops 3 -o x.npy"},
    };
    return rows;
}

// Runs swgpu in `dir` (relative names are the folder's) with `args`, {OUT} replaced by `out`.
program_result run_here(const fs::path& dir, std::string args, const std::string& out, const std::string& env = "") {
    args.replace(args.find("{OUT}"), 5, out);
    return run_program(args, env, "/dev/null", 0, dir.string());
}

}  // namespace

TEST_CASE("conventions: every subcommand runs its registry row (the rows are valid runs)", "[conventions][cli]") {
    for (const auto& c : registry()) {
        INFO(c.name);
        const temp_dir dir("swgpu-conv-ok");
        c.make_inputs(dir.path);
        const auto r = run_here(dir.path, c.args, c.name == "makedb" ? "fresh" : "fresh.out" + std::string(c.name == "align" ? "" : ".npy"));
        INFO(r.err);
        CHECK(r.code == 0);
        CHECK(r.err.find("error") == std::string::npos);
    }
}

TEST_CASE("conventions: an output that is an input is refused by any name, exit 2, the input kept", "[conventions][cli]") {
    for (const auto& c : registry()) {
        for (const auto& input : c.inputs) {
            const temp_dir dir("swgpu-conv-same");
            c.make_inputs(dir.path);
            const std::string before = slurp(dir / input);
            fs::create_symlink(input, dir.path / ("link_" + input));
            fs::create_hard_link(dir.path / input, dir.path / ("hard_" + input));
            // makedb's output is PREFIX.swdb: the input's name without .swdb names it too.
            const std::string stem = c.name == "makedb" ? input.substr(0, input.size() - 5) : input;
            for (const std::string& out : {stem, "./" + stem, (dir.path / stem).string(), "link_" + input, "hard_" + input}) {
                INFO(c.name << ": -o " << out << " with input " << input);
                const auto r = run_here(dir.path, c.args, out);
                CHECK(r.code == 2);
                CHECK(one_error_line(r.err));
                CHECK(slurp(dir / input) == before);
                CHECK(fs::is_symlink(dir.path / ("link_" + input)));
            }
        }
    }
}

TEST_CASE("conventions: -t beyond 4096 threads is refused with exit 2 before any work", "[conventions][cli]") {
    for (const auto& c : registry()) {
        if (!c.has_threads) continue;
        INFO(c.name);
        const temp_dir dir("swgpu-conv-threads");
        c.make_inputs(dir.path);
        const auto r = run_here(dir.path, c.args + " -t 100000", "x.npy");
        CHECK(r.code == 2);
        CHECK(!fs::exists(dir.path / "x.npy"));
    }
}

TEST_CASE("conventions: a bad input is one error line, with no notice beside it (a CPU fallback is said after success)",
          "[conventions][cli]") {
    for (const auto& c : registry()) {
        INFO(c.name << ": " << c.bad);
        const temp_dir dir("swgpu-conv-bad");
        c.make_inputs(dir.path);
        std::string args = c.bad + " {OUT}";
        const auto r = run_here(dir.path, args, "");
        INFO(r.err);
        CHECK(r.code != 0);
        CHECK(one_error_line(r.err));
        CHECK(!fs::exists(dir.path / "x.npy"));
    }
}

TEST_CASE("conventions: a result that overflows to infinity or NaN is refused (exit 1, one line), no file written",
          "[conventions][cli]") {
    const temp_dir dir("swgpu-conv-overflow");
    write_npy(dir.path / "big.npy", {50, 50}, 1e307);
    std::ofstream(dir.path / "tiny.mtx") << "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1e-320\n2 1 1\n2 2 1\n";
    const std::vector<std::pair<std::string, std::string>> runs = {
        {"sat --backend cpu big.npy -o {OUT}", "the sums overflow float64"},
        {"sweep3d --backend cpu --n 16 --kernel dd --source 1e308 -o {OUT}", "--source and --sigma"},
        {"sweep3d --backend cpu --n 16 --c 1e-50 --precision single -o {OUT}", "--c is too small"},
        {"levels --backend cpu --matrix tiny.mtx -o {OUT}", "the solve overflowed"},
    };
    for (const auto& [args, says] : runs) {
        INFO(args);
        const auto r = run_here(dir.path, args + " -q", "out.npy");
        CHECK(r.code == 1);
        CHECK(one_error_line(r.err));
        CHECK_THAT(r.err, Catch::Contains("not finite") && Catch::Contains(says));
        CHECK(!fs::exists(dir.path / "out.npy"));
    }
}

TEST_CASE("conventions: threads that cannot start are one error line and exit 3, never a hang", "[conventions][cli]") {
    // Under a 600 MB address-space limit 4000 threads' stacks cannot all be mapped: the threads already started are
    // stopped and the run ends (sat -t 128 under ulimit -v 1G hung in pthread_cond_destroy).
    for (const auto& c : registry()) {
        if (!c.has_threads) continue;
        INFO(c.name);
        const temp_dir dir("swgpu-conv-nothreads");
        c.make_inputs(dir.path);
        std::string args = c.args + " -t 4000";
        args.replace(args.find("{OUT}"), 5, "x.npy");
        const temp_dir io("swgpu-conv-nothreads-io");
        const std::string cmd = "cd '" + dir.path.string() + "' && ulimit -v 600000 && timeout 120 '" + swgpu_binary() +
                                "' " + args + " >/dev/null 2>'" + (io / "err") + "'";
        const int status = std::system(("bash -c \"" + cmd + "\"").c_str());
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        const std::string err = slurp(io / "err");
        INFO(err);
        CHECK(code == 3);
        CHECK(one_error_line(err));
        CHECK_THAT(err, Catch::Contains("could not start 4000 threads"));
        CHECK(!fs::exists(dir.path / "x.npy"));
    }
}

TEST_CASE("conventions: an output into a folder that does not exist is exit 5, one line, before any work",
          "[conventions][cli]") {
    for (const auto& c : registry()) {
        INFO(c.name);
        const temp_dir dir("swgpu-conv-nodir");
        c.make_inputs(dir.path);
        const auto r = run_here(dir.path, c.args + " -q", c.name == "makedb" ? "no_such_dir/x" : "no_such_dir/x.npy");
        INFO(r.err);
        CHECK(r.code == 5);
        CHECK(one_error_line(r.err));
        CHECK(!fs::exists(dir.path / "no_such_dir"));
    }
}

TEST_CASE("conventions: a run that needs more memory than is available is refused with exit 4 before it takes it",
          "[conventions][cli]") {
    // The numerical commands (docs/conventions.md, "Memory"), with the memory allowed set to 4 MiB (the tuning key
    // host.memory_mib stands for the machine's): one line saying what takes the memory, no output file.
    const temp_dir dir("swgpu-conv-memory");
    write_npy(dir.path / "m.npy", {1000, 1000}, 1.0);
    write_npy(dir.path / "g.npy", {1000, 1000}, 0.0);
    std::ofstream(dir.path / "big.mtx") << "%%MatrixMarket matrix coordinate real general\n1000000 1000000 1\n1 1 2\n";
    for (const std::string args : {"sat --backend cpu m.npy -o {OUT}", "ihist --backend cpu m.npy --bins 4 -o {OUT}",
                                   "sor --backend cpu --rhs m.npy --boundary g.npy -o {OUT}",
                                   "sweep3d --backend cpu --n 200 -o {OUT}",
                                   "levels --backend cpu --matrix big.mtx -o {OUT}"}) {
        INFO(args);
        const auto r = run_here(dir.path, args + " -q", "out.npy", "SWGPU_TUNE=host.memory_mib=4");
        INFO(r.err);
        CHECK(r.code == 4);
        CHECK(one_error_line(r.err));
        CHECK(!fs::exists(dir.path / "out.npy"));
    }
}
