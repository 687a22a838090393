// The cost of full output over the score pass (issue 5 (c)): the CPU score pass (scan_database over search_cpu) against
// finish_hits (E-values, then the alignment of every printed hit), on the same data and threads.
//
//   bench_finish QUERIES DB [-t THREADS] [-q QUERIES (first N, 0 = all)] [-n SUBJECTS (first N, 0 = all)]
//                [-k HITS per query] [-e EVALUE] [-r RUNS] [--isas]
//
// Protein, BLOSUM62, gaps 11/1. The database is read (and held as letters) before timing; the score pass is timed from
// the letters, encoding included, as `swgpu align` runs it. Times are medians of RUNS runs (each stage once before to
// warm up). --isas also times the alignments alone with each instruction set this CPU runs, portable included (the
// scalar sw_score + sw_traceback: the previous way of finishing, once), and checks they equal finish_hits' alignments.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/scoring.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/sequence.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/statistics.hpp"
#include "core/align/simd/align_scored.hpp"
#include "core/thread_pool.hpp"
#include "io/align/sequence_reader.hpp"

namespace {

using namespace swgpu;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string runs_text(const std::vector<double>& v) {
    std::string s;
    char buf[32];
    for (const double x : v) {
        std::snprintf(buf, sizeof buf, " %.4f", x);
        s += buf;
    }
    return s;
}

int usage() {
    std::cerr << "usage: bench_finish QUERIES DB [-t THREADS] [-q FIRST_QUERIES] [-n SUBJECTS] [-k HITS] [-e EVALUE]\n"
                 "                    [-r RUNS] [--isas]\n";
    return 2;
}

sequence_set first_records(const sequence_set& all, std::size_t n) {
    sequence_set out;
    out.source = all.source;
    const std::size_t count = n == 0 ? all.size() : std::min(n, all.size());
    for (std::size_t k = 0; k < count; ++k) out.add(all.names[k], all[k]);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    unsigned threads = 2;
    std::size_t first_queries = 0, subjects = 0, hits_per_query = 10;
    double max_evalue = 10;
    int runs = 3;
    bool compare_isas = false;
    std::vector<std::string> positional;
    try {
        for (int k = 1; k < argc; ++k) {
            const std::string a = argv[k];
            const auto value = [&]() -> std::string {
                if (k + 1 >= argc) throw usage_error(a + " needs a value");
                return argv[++k];
            };
            if (a == "-t") threads = static_cast<unsigned>(std::stoul(value()));
            else if (a == "-q") first_queries = std::stoul(value());
            else if (a == "-n") subjects = std::stoul(value());
            else if (a == "-k") hits_per_query = std::stoul(value());
            else if (a == "-e") max_evalue = std::stod(value());
            else if (a == "-r") runs = std::stoi(value());
            else if (a == "--isas") compare_isas = true;
            else if (!a.empty() && a[0] == '-') return usage();
            else positional.push_back(a);
        }
        if (positional.size() != 2 || runs < 1 || threads < 1 || hits_per_query < 1) return usage();

        const scoring sc{substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein};
        query_strands queries;
        queries.plus = first_records(io::read_all(positional[0]), first_queries);
        const sequence_set db = first_records(io::read_all(positional[1]), subjects);
        encode(queries.plus, sc.matrix);
        thread_pool pool(threads);

        std::printf("queries  %s: %zu sequences, %llu residues\n", positional[0].c_str(), queries.size(),
                    static_cast<unsigned long long>(queries.plus.total_residues()));
        std::printf("database %s: %zu sequences, %llu residues\n", positional[1].c_str(), db.size(),
                    static_cast<unsigned long long>(db.total_residues()));
        std::printf("threads %u (hardware threads %u), -k %zu, -e %g, alignment code: %s\n", threads,
                    std::thread::hardware_concurrency(), hits_per_query, max_evalue,
                    simd::isa_name(align_scored_isas().back()));

        // Score pass: the whole database as one chunk of letters.
        const auto scan_once = [&] {
            bool given = false;
            const chunk_reader reader = [&](sequence_set& chunk) {
                if (given) return false;
                chunk = db;
                given = true;
                return true;
            };
            const score_pass search = [&](const sequence_set& q, const sequence_set& d, const search_options& o) {
                return search_cpu(q, d, sc, o, pool);
            };
            function_chunks chunks(reader);
            function_backend backend(search);
            return scan_database(queries, sc, hits_per_query, chunks, backend);
        };
        std::vector<double> scan_times;
        database_scan scan = scan_once();
        for (int r = 0; r < runs; ++r) {
            const auto t0 = clock_type::now();
            scan = scan_once();
            scan_times.push_back(seconds_since(t0));
        }

        const evalue_calculator stats(sc, scan.residues, scan.sequences);
        finish_options fopt;
        fopt.statistics = &stats;
        fopt.max_evalue = max_evalue;
        std::vector<double> finish_times;
        auto printed = finish_hits(scan, queries, sc, fopt, pool);
        for (int r = 0; r < runs; ++r) {
            const auto t0 = clock_type::now();
            printed = finish_hits(scan, queries, sc, fopt, pool);
            finish_times.push_back(seconds_since(t0));
        }

        std::size_t n_printed = 0;
        double cells = 0;
        for (std::size_t q = 0; q < printed.size(); ++q)
            for (const auto& h : printed[q]) {
                ++n_printed;
                cells += double(queries.plus.length(q)) * double(scan.subjects.at(h.subject).residues.size());
            }
        const double scan_s = median(scan_times), finish_s = median(finish_times);
        std::printf("printed hits %zu (query x subject cells %.4g)\n", n_printed, cells);
        std::printf("score pass  %9.4f s  runs:%s\n", scan_s, runs_text(scan_times).c_str());
        std::printf("finish      %9.4f s  runs:%s  = %.2f %% of the score pass\n", finish_s,
                    runs_text(finish_times).c_str(), 100 * finish_s / scan_s);

        if (compare_isas) {
            // The alignments alone, as finish_hits runs them (largest first, on the pool), with each instruction set.
            struct job {
                std::size_t query, slot;
                double cells;
            };
            std::vector<job> jobs;
            for (std::size_t q = 0; q < printed.size(); ++q)
                for (std::size_t k = 0; k < printed[q].size(); ++k)
                    jobs.push_back({q, k,
                                    double(queries.plus.length(q)) *
                                        double(scan.subjects.at(printed[q][k].subject).residues.size())});
            std::stable_sort(jobs.begin(), jobs.end(), [](const job& a, const job& b) { return a.cells > b.cells; });
            for (const auto isa : align_scored_isas()) {
                std::vector<alignment> got(jobs.size());
                std::vector<double> times;
                for (int r = 0; r < (isa == simd::isa::portable ? 1 : runs); ++r) {
                    const auto t0 = clock_type::now();
                    pool.parallel_for(jobs.size(), [&](std::size_t k) {
                        const auto& h = printed[jobs[k].query][jobs[k].slot];
                        got[k] = sw_align_scored(queries.plus[jobs[k].query], scan.subjects.at(h.subject).span(), sc,
                                                 h.score, {}, isa)
                                     .value();
                    });
                    times.push_back(seconds_since(t0));
                }
                for (std::size_t k = 0; k < jobs.size(); ++k)
                    if (!(got[k] == printed[jobs[k].query][jobs[k].slot].aln))
                        throw runtime_failure(std::string(simd::isa_name(isa)) +
                                              " and finish_hits disagree on an alignment; run the [alignfast] tests");
                const double t = median(times);
                std::printf("align %-9s %9.4f s  runs:%s  = %.2f %% of the score pass%s\n", simd::isa_name(isa), t,
                            runs_text(times).c_str(), 100 * t / scan_s,
                            isa == simd::isa::portable ? " (sw_score + sw_traceback: the previous finishing)" : "");
            }
        }
        std::fflush(stdout);
    } catch (const swgpu::error& e) {
        std::cerr << "bench_finish: " << e.what() << '\n';
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        std::cerr << "bench_finish: " << e.what() << '\n';
        return 3;
    }
    return 0;
}
