// GCUPS of the CPU score pass (search_cpu) and of ssearch36 on the same data and thread count, in one run.
//
//   bench_cpu_search QUERIES DB [-t THREADS] [-n SUBJECTS] [-r RUNS] [--ssearch-runs R] [--kernels best|all|NAME]
//                    [--ssearch PATH | --no-ssearch]
//
// DB is any file io::read_all reads (FASTA, gzip); its first SUBJECTS records (all if 0) are the database. Protein,
// BLOSUM62, gaps 11/1 (BLAST convention; ssearch36 -f -11 -g -1). GCUPS = sum over queries of query length x database
// residues / wall time (docs/performance.md). swgpu's time is search_cpu alone: packing the database into batches included,
// reading the files not (printed apart). ssearch36's time is its whole run (it reads the files itself) with
// `-b 10 -d 10 -m 8`: ten hits per query with coordinates, about what swgpu's score pass plus traceback of the top
// hits costs. Medians of RUNS timed runs after one warm-up run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/error.hpp"
#include "core/align/scoring.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/sequence.hpp"
#include "core/align/simd/interseq.hpp"
#include "core/thread_pool.hpp"
#include "io/align/sequence_reader.hpp"

namespace {

using namespace swgpu;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// CPU seconds of this process and its children so far (threads included): with wall time, it shows how much of the
// machine a run got, which matters on a shared machine.
double cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    rusage children{};
    getrusage(RUSAGE_CHILDREN, &children);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec) +
           static_cast<double>(children.ru_utime.tv_sec + children.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(children.ru_utime.tv_usec + children.ru_stime.tv_usec);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void write_fasta(const sequence_set& set, const std::filesystem::path& path) {
    std::ofstream out(path);
    for (std::size_t k = 0; k < set.size(); ++k) {
        out << '>' << set.names[k] << '\n';
        const auto s = set[k];
        for (std::size_t i = 0; i < s.size(); i += 60)
            out.write(reinterpret_cast<const char*>(s.data() + i), static_cast<std::streamsize>(std::min<std::size_t>(60, s.size() - i))) << '\n';
    }
    if (!out) throw output_error(path.string(), "cannot write the temporary FASTA file for ssearch36");
}

struct options {
    std::string queries, db, ssearch = "ssearch36", kernels = "best";
    unsigned threads = 2;
    std::size_t subjects = 5000;
    int runs = 5, ssearch_runs = 5;
};

int usage() {
    std::cerr << "usage: bench_cpu_search QUERIES DB [-t THREADS] [-n SUBJECTS (0 = all)] [-r RUNS] [--ssearch-runs R]\n"
                 "                        [--kernels best|all|NAME] [--ssearch PATH | --no-ssearch]\n";
    return 2;
}

struct timing {
    std::vector<double> wall, cpu;
};

void print_row(const std::string& what, const timing& t, double cells) {
    const double w = median(t.wall), c = median(t.cpu);
    std::printf("%-24s %8.3f s %8.2f GCUPS | cpu %8.3f s, %6.2f GCUPS per cpu-second | runs:", what.c_str(), w,
                cells / w * 1e-9, c, cells / c * 1e-9);
    for (const double x : t.wall) std::printf(" %.3f", x);
    std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    std::vector<std::string> positional;
    for (int k = 1; k < argc; ++k) {
        const std::string a = argv[k];
        const auto value = [&]() -> std::string {
            if (k + 1 >= argc) throw usage_error(a + " needs a value");
            return argv[++k];
        };
        if (a == "-t") o.threads = static_cast<unsigned>(std::stoul(value()));
        else if (a == "-n") o.subjects = std::stoul(value());
        else if (a == "-r") o.runs = std::stoi(value());
        else if (a == "--ssearch-runs") o.ssearch_runs = std::stoi(value());
        else if (a == "--kernels") o.kernels = value();
        else if (a == "--ssearch") o.ssearch = value();
        else if (a == "--no-ssearch") o.ssearch_runs = 0;
        else if (!a.empty() && a[0] == '-') return usage();
        else positional.push_back(a);
    }
    if (positional.size() != 2 || o.runs < 1 || o.threads < 1) return usage();
    o.queries = positional[0];
    o.db = positional[1];

    try {
        const auto t_read = clock_type::now();
        sequence_set queries = io::read_all(o.queries);
        sequence_set all = io::read_all(o.db);
        const double read_s = seconds_since(t_read);
        sequence_set db;
        db.source = all.source;
        const std::size_t n = o.subjects == 0 ? all.size() : std::min(o.subjects, all.size());
        for (std::size_t k = 0; k < n; ++k) db.add(all.names[k], all[k]);

        const double cells = static_cast<double>(queries.total_residues()) * static_cast<double>(db.total_residues());
        std::printf("queries  %s: %zu sequences, %llu residues\n", o.queries.c_str(), queries.size(),
                    static_cast<unsigned long long>(queries.total_residues()));
        std::printf("database %s: first %zu sequences, %llu residues\n", o.db.c_str(), db.size(),
                    static_cast<unsigned long long>(db.total_residues()));
        std::printf("cells %.4g; threads %u (hardware threads: %u); reading both files took %.3f s\n", cells,
                    o.threads, std::thread::hardware_concurrency(), read_s);

        // ssearch36 reads files: the same records, written as plain FASTA.
        std::filesystem::path dir;
        if (o.ssearch_runs > 0) {
            std::string tmpl = (std::filesystem::temp_directory_path() / "bench_cpu_search.XXXXXX").string();
            if (!mkdtemp(tmpl.data())) throw output_error(tmpl, "cannot create a temporary directory");
            dir = tmpl;
            write_fasta(queries, dir / "queries.fa");
            write_fasta(db, dir / "db.fa");
        }

        scoring sc{substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein};
        encode(queries, sc.matrix);
        encode(db, sc.matrix);
        thread_pool pool(o.threads);
        search_options opt;
        opt.max_hits = 10;

        std::vector<const interseq::kernel_set*> sets;
        if (o.kernels == "best") sets.push_back(interseq::best_kernels());
        else
            for (const auto* k : interseq::available_kernels())
                if (o.kernels == "all" || o.kernels == simd::isa_name(k->isa)) sets.push_back(k);
        if (o.kernels == "scalar") sets.push_back(nullptr);
        if (sets.empty()) throw usage_error("no kernel set '" + o.kernels + "' on this CPU");

        std::vector<std::vector<score_hit>> first_result;
        for (const auto* k : sets) {
            timing times;
            for (int r = 0; r <= o.runs; ++r) {
                const double c0 = cpu_seconds();
                const auto t0 = clock_type::now();
                auto hits = interseq::search_cpu_with(k, queries, db, sc, opt, pool);
                if (r > 0) {  // run 0 warms up
                    times.wall.push_back(seconds_since(t0));
                    times.cpu.push_back(cpu_seconds() - c0);
                }
                if (first_result.empty()) first_result = std::move(hits);
                else if (r == 0 && hits != first_result)
                    throw runtime_failure("kernel sets disagree on the hits; run the [search] tests");
            }
            print_row(std::string("swgpu search_cpu ") + (k ? simd::isa_name(k->isa) : "scalar"), times, cells);
        }

        if (o.ssearch_runs > 0) {
            const std::string cmd = o.ssearch + " -q -p -T " + std::to_string(o.threads) +
                                    " -s BL62 -f -11 -g -1 -b 10 -d 10 -m 8 " + (dir / "queries.fa").string() + " " +
                                    (dir / "db.fa").string();
            std::printf("ssearch36 command: %s > /dev/null\n", cmd.c_str());
            std::fflush(stdout);
            timing times;
            for (int r = 0; r <= o.ssearch_runs; ++r) {
                const double c0 = cpu_seconds();
                const auto t0 = clock_type::now();
                if (std::system((cmd + " > /dev/null").c_str()) != 0)
                    throw runtime_failure("ssearch36 failed: " + cmd);
                if (r > 0) {
                    times.wall.push_back(seconds_since(t0));
                    times.cpu.push_back(cpu_seconds() - c0);
                }
            }
            print_row("ssearch36", times, cells);
            std::filesystem::remove_all(dir);
        }
        std::fflush(stdout);
    } catch (const swgpu::error& e) {
        std::cerr << "bench_cpu_search: " << e.what() << '\n';
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        std::cerr << "bench_cpu_search: " << e.what() << '\n';
        return 3;
    }
    return 0;
}
