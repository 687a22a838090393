// Benchmark of the GPU score pass of protein database search (docs/performance.md): GCUPS = sum over queries of
// (query length x database residues) / time, as the median of RUNS timed runs after one warm-up run, for
//   device      the score kernels alone (CUDA events; the 32-bit recomputation of overflowing lanes included),
//   search      the whole gpu search call: pack and upload the database, plan, score, copy back, select top hits
//               (reading the FASTA files is not included; its time is printed separately).
//
// usage: bench_gpu_search QUERIES DB [REPEAT [RUNS]] [--kernel dpx16|dpx32|simple32] [--launches] [--check N]
//                         [--label NAME] [--early]
//   REPEAT concatenates the database REPEAT times (1). --launches: one more run with the kernel launches serialized,
//   printing each launch's time. --check N compares the hits of the first N queries with the
//   CPU backend's first. --early: with a (no-op) receiver of early hits, as `swgpu align` runs the GPU (the queries
//   then go in batches, two in flight; "device" then sums the batches' spans, which overlap). Scoring: BLOSUM62, gaps
//   11/1, max_hits 500.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/thread_pool.hpp"
#include "gpu/gpu.hpp"
#include "gpu/align/search_config.hpp"
#include "io/align/sequence_reader.hpp"

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int usage() {
    std::fprintf(stderr,
                 "usage: bench_gpu_search QUERIES DB [REPEAT [RUNS]] [--kernel dpx16|dpx32|simple32] [--launches] "
                 "[--check N] [--label NAME] [--early]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace swgpu;
    std::vector<std::string> positional;
    gpu::detail::search_config cfg;
    std::size_t check = 0;
    std::string label = "search";
    bool launches = false, early = false;
    for (int k = 1; k < argc; ++k) {
        const std::string a = argv[k];
        if (a == "--kernel" && k + 1 < argc) {
            const std::string v = argv[++k];
            if (v == "dpx16") cfg.kernel = gpu::detail::score_kernel::dpx16;
            else if (v == "dpx32") cfg.kernel = gpu::detail::score_kernel::dpx32;
            else if (v == "simple32") cfg.kernel = gpu::detail::score_kernel::simple32;
            else return usage();
        } else if (a == "--check" && k + 1 < argc) {
            check = std::strtoull(argv[++k], nullptr, 10);
        } else if (a == "--launches") {
            launches = true;
        } else if (a == "--early") {
            early = true;
        } else if (a == "--label" && k + 1 < argc) {
            label = argv[++k];
        } else if (a.rfind("--", 0) == 0) {
            return usage();
        } else {
            positional.push_back(a);
        }
    }
    if (positional.size() < 2 || positional.size() > 4) return usage();
    const int repeat = positional.size() > 2 ? std::max(1, std::atoi(positional[2].c_str())) : 1;
    const int runs = positional.size() > 3 ? std::max(1, std::atoi(positional[3].c_str())) : 5;
    try {
        if (!gpu::available()) {
            std::printf("no CUDA device: nothing to measure\n");
            return 77;
        }
        const auto dev = gpu::devices().front();
        std::printf("device: %s, %d SMs; %s\n", dev.name.c_str(), dev.multiprocessors, gpu::build_info().c_str());

        scoring sc;
        sc.matrix = substitution_matrix::builtin("BLOSUM62");
        sc.gaps = default_gaps("BLOSUM62");
        sc.type = seq_type::protein;
        const auto read_start = std::chrono::steady_clock::now();
        sequence_set queries = io::read_all(positional[0]);
        const sequence_set one_db = io::read_all(positional[1]);
        const double read_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - read_start).count();
        encode(queries, sc.matrix);
        sequence_set db;
        db.source = one_db.source;
        db.residues.reserve(one_db.residues.size() * repeat);
        for (int r = 0; r < repeat; ++r)
            for (std::size_t s = 0; s < one_db.size(); ++s) db.add(one_db.names[s], one_db[s]);
        encode(db, sc.matrix);
        std::uint64_t qres = 0;
        for (std::size_t q = 0; q < queries.size(); ++q) qres += queries.length(q);
        std::printf("%s: %zu queries (%llu residues) vs %zu subjects (%llu residues, database x%d); reading %.1f ms\n",
                    label.c_str(), queries.size(), static_cast<unsigned long long>(qres), db.size(),
                    static_cast<unsigned long long>(db.total_residues()), repeat, read_ms);

        search_options opt;
        opt.max_hits = 500;
        std::size_t delivered = 0;
        if (early) opt.on_final = [&](auto listed, const auto&) { delivered += listed.size(); };
        gpu::detail::search_timing t;
        const auto hits = gpu::detail::search(queries, db, sc, opt, cfg, &t);  // warm-up
        std::vector<double> device, whole, pack, upload, select;
        for (int r = 0; r < runs; ++r) {
            (void)gpu::detail::search(queries, db, sc, opt, cfg, &t);
            device.push_back(t.score_ms);
            whole.push_back(t.total_ms);
            pack.push_back(t.pack_ms);
            upload.push_back(t.upload_ms);
            select.push_back(t.select_ms);
            std::printf("  run %d: device %.2f ms (%.0f GCUPS), search %.2f ms (%.0f GCUPS)\n", r, t.score_ms,
                        t.cells / t.score_ms * 1e-6, t.total_ms, t.cells / t.total_ms * 1e-6);
        }
        const double cells = static_cast<double>(t.cells);
        std::printf("  breakdown (median ms): pack+plan %.1f, upload %.1f, score %.1f (32-bit recomputation %.2f, "
                    "%llu lanes), copy back+select %.1f, %d batches, %d blocks\n",
                    median(pack), median(upload), median(device), t.rescore_ms,
                    static_cast<unsigned long long>(t.overflow_lanes), median(select), t.batches, t.blocks);
        std::printf("summary: %s: %.4g cells, median of %d: device %.2f ms = %.0f GCUPS; search %.2f ms = %.0f GCUPS\n",
                    label.c_str(), cells, runs, median(device), cells / median(device) * 1e-6, median(whole),
                    cells / median(whole) * 1e-6);

        if (launches) {
            // One more run with the launches serialized and timed one by one.
            std::vector<gpu::detail::launch_record> log;
            auto serial = cfg;
            serial.launch_log = &log;
            (void)gpu::detail::search(queries, db, sc, opt, serial, &t);
            std::printf("LAUNCHES %s (serialized: device %.2f ms)\n", label.c_str(), t.score_ms);
            for (const auto& l : log)
                std::printf("  class %d regs %2d: %7zu tasks, %4zu blocks, %.4g cells, %8.2f ms, %5.0f GCUPS\n",
                            l.length_class, l.regs, l.tasks, l.blocks, l.cells, l.ms, l.cells / l.ms * 1e-6);
        }
        if (check > 0) {
            sequence_set some;
            for (std::size_t q = 0; q < std::min(check, queries.size()); ++q) some.add(queries.names[q], queries[q]);
            some.encoded = true;
            thread_pool pool;
            const auto cpu = search_cpu(some, db, sc, opt, pool);
            std::size_t same = 0;
            for (std::size_t q = 0; q < some.size(); ++q) same += cpu[q] == hits[q];
            std::printf("CHECK %s: %zu of %zu queries have the CPU backend's hits\n", label.c_str(), same, some.size());
            if (same != some.size()) return 1;
        }
        return 0;
    } catch (const error& e) {
        std::fprintf(stderr, "bench_gpu_search: error: %s\n", e.what());
        return static_cast<int>(e.code());
    }
}
