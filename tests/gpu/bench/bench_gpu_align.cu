// Benchmark of the alignments of printed hits (issue 5 (c)): the top hits of a GPU search, aligned on the GPU
// (gpu::align_scored), on CPU threads (sw_align_scored on a pool), and split by size as `swgpu align` does (pairs above
// the split on the pool, the rest on the GPU, at the same time).
//
// usage: bench_gpu_align QUERIES DB [-k HITS] [-r RUNS] [-t THREADS] [--splits CELLS,CELLS,...]
//        bench_gpu_align --synthetic M N COUNT [-r RUNS]
//
// --synthetic: COUNT random pairs of M x N related protein sequences on the GPU alone (one pair: the latency of a
// pair; many: the kernels' throughput).
//
// Protein, BLOSUM62, gaps 11/1; HITS per query (10). Times are medians of RUNS (5) after one warm-up; the GPU results
// are checked once against sw_align_scored on the CPU.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/simd/align_scored.hpp"
#include "core/thread_pool.hpp"
#include "core/tuning.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/gpu.hpp"
#include "io/align/sequence_reader.hpp"

namespace {

using namespace swgpu;
using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
double since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

int usage() {
    std::fprintf(stderr, "usage: bench_gpu_align QUERIES DB [-k HITS] [-r RUNS] [-t THREADS] [--splits C,C,...]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::vector<std::string> positional;
        std::size_t k = 10, runs = 5;
        unsigned threads = 0;
        const double default_split = tuning::real("search.align_max_cells", gpu::device_arch());  // what `swgpu align` uses
        std::vector<double> splits = {4.0 * (1 << 20), default_split, 1e18};
        std::size_t syn_m = 0, syn_n = 0, syn_count = 0;
        for (int a = 1; a < argc; ++a) {
            const std::string arg = argv[a];
            const bool has_value = a + 1 < argc;
            if (arg == "-k" && has_value) k = std::stoul(argv[++a]);
            else if (arg == "-r" && has_value) runs = std::stoul(argv[++a]);
            else if (arg == "-t" && has_value) threads = static_cast<unsigned>(std::stoul(argv[++a]));
            else if (arg == "--synthetic" && a + 3 < argc) {
                syn_m = std::stoul(argv[++a]);
                syn_n = std::stoul(argv[++a]);
                syn_count = std::stoul(argv[++a]);
            } else if (arg == "--splits" && has_value) {
                splits.clear();
                std::stringstream list(argv[++a]);
                for (std::string item; std::getline(list, item, ',');) splits.push_back(std::stod(item));
            } else if (!arg.empty() && arg[0] == '-') return usage();
            else positional.push_back(arg);
        }
        if (positional.size() != 2 && syn_count == 0) return usage();
        if (!gpu::available()) {
            std::fprintf(stderr, "bench_gpu_align: no usable GPU\n");
            return 77;
        }
        gpu::warm_up(true);  // as `swgpu align` starts the device: alignment memory mapped ahead
        const scoring sc{substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein};
        if (syn_count) {
            std::uint64_t x = 42;
            const auto next = [&] {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                return static_cast<unsigned>(x >> 33);
            };
            std::vector<std::vector<std::uint8_t>> seqs;
            std::vector<scored_pair> pairs;
            seqs.reserve(2 * syn_count);
            for (std::size_t c = 0; c < syn_count; ++c) {
                std::vector<std::uint8_t> a(syn_m), b(syn_n);
                for (auto& r : a) r = static_cast<std::uint8_t>(next() % 20);
                for (std::size_t k = 0; k < syn_n; ++k) b[k] = next() % 4 ? a[k % syn_m] : static_cast<std::uint8_t>(next() % 20);
                seqs.push_back(std::move(a));
                seqs.push_back(std::move(b));
                pairs.push_back({seqs[2 * c], seqs[2 * c + 1], sw_score(seqs[2 * c], seqs[2 * c + 1], sc).score});
            }
            std::vector<double> total, fill, prepare;
            for (std::size_t r = 0; r <= runs; ++r) {
                gpu::align_timing timing;
                const auto got = gpu::align_scored(pairs, sc, 0, &timing);
                if (!r) {
                    for (std::size_t c = 0; c < syn_count; c += std::max<std::size_t>(1, syn_count / 16))
                        if (!got[c] || !(*got[c] == sw_align(pairs[c].query, pairs[c].subject, sc))) {
                            std::fprintf(stderr, "bench_gpu_align: pair %zu differs from the CPU\n", c);
                            return 1;
                        }
                    continue;
                }
                total.push_back(timing.total_s);
                fill.push_back(timing.kernel_s);
                prepare.push_back(timing.prepare_s);
            }
            const double cells = double(syn_m) * double(syn_n) * double(syn_count);
            std::printf("summary: synthetic %zu x %zu x %zu pairs: call %.3f ms (prepare %.3f, kernel %.3f); "
                        "kernel %.1f GCUPS, %.1f ns per column step of a strip round\n",
                        syn_m, syn_n, syn_count, 1e3 * median(total), 1e3 * median(prepare), 1e3 * median(fill),
                        cells / median(fill) / 1e9,
                        1e9 * median(fill) / (std::ceil((syn_m + 127) / 128 / 8.0) * (syn_n + 31.0)));
            return 0;
        }
        sequence_set queries = io::read_all(positional[0]);
        sequence_set db = io::read_all(positional[1]);
        encode(queries, sc.matrix);
        encode(db, sc.matrix);
        search_options so;
        so.max_hits = k;
        const auto hits = gpu::search(queries, db, sc, so);
        std::vector<scored_pair> pairs;
        for (std::size_t q = 0; q < hits.size(); ++q)
            for (const auto& h : hits[q]) pairs.push_back({queries[q], db[h.subject], h.score});
        const auto cells = [](const scored_pair& p) { return double(p.query.size()) * double(p.subject.size()); };
        std::stable_sort(pairs.begin(), pairs.end(),
                         [&](const scored_pair& a, const scored_pair& b) { return cells(a) > cells(b); });
        double total_cells = 0;
        for (const auto& p : pairs) total_cells += cells(p);
        thread_pool pool(threads);
        std::printf("pairs %zu (top %zu of %zu queries), %.4g cells, largest %.4g; %u CPU threads\n", pairs.size(), k,
                    queries.size(), total_cells, pairs.empty() ? 0.0 : cells(pairs.front()), pool.size());

        // Correctness once: every pair the GPU aligns equals the CPU's alignment.
        {
            const auto got = gpu::align_scored(pairs, sc);
            std::size_t aligned = 0, differ = 0;
            for (std::size_t x = 0; x < pairs.size(); ++x) {
                if (!got[x]) continue;
                ++aligned;
                const auto want = sw_align_scored(pairs[x].query, pairs[x].subject, sc, pairs[x].score);
                if (!want || !(*want == *got[x])) ++differ;
            }
            std::printf("check: the GPU aligned %zu of %zu pairs, %zu differ from the CPU\n", aligned, pairs.size(),
                        differ);
            if (differ) return 1;
        }

        const auto cpu_align = [&](std::span<const scored_pair> part) {
            std::vector<std::optional<alignment>> out(part.size());
            pool.parallel_for(part.size(), [&](std::size_t x) {
                out[x] = sw_align_scored(part[x].query, part[x].subject, sc, part[x].score);
            });
            return out;
        };
        double cpu_only = 0;
        {
            std::vector<double> t;
            for (std::size_t r = 0; r <= runs; ++r) {
                const auto t0 = clock_type::now();
                cpu_align(pairs);
                if (r) t.push_back(since(t0));
            }
            cpu_only = median(t);
            std::printf("cpu only            %8.2f ms (%.1f GCUPS)\n", 1e3 * cpu_only, total_cells / cpu_only / 1e9);
        }
        double best = 1e30, best_split = 0, at_default = 0;
        for (const double split : splits) {
            const std::size_t first_gpu = static_cast<std::size_t>(
                std::partition_point(pairs.begin(), pairs.end(), [&](const scored_pair& p) { return cells(p) > split; }) -
                pairs.begin());
            const std::span<const scored_pair> big(pairs.data(), first_gpu), small(pairs.data() + first_gpu,
                                                                                  pairs.size() - first_gpu);
            std::vector<double> wall, gpu_total, fill, cpu_part, prepare;
            gpu::align_timing last;
            for (std::size_t r = 0; r <= runs; ++r) {
                gpu::align_timing timing;
                const auto t0 = clock_type::now();
                auto device = std::async(std::launch::async, [&] { return gpu::align_scored(small, sc, 0, &timing); });
                const auto c0 = clock_type::now();
                cpu_align(big);
                const double cpu_s = since(c0);
                device.get();
                const double w = since(t0);
                if (!r) continue;
                wall.push_back(w);
                cpu_part.push_back(cpu_s);
                gpu_total.push_back(timing.total_s);
                fill.push_back(timing.kernel_s);
                prepare.push_back(timing.prepare_s);
                last = timing;
            }
            const double w = median(wall);
            std::printf("split %9.3g cells: %5zu pairs on the CPU %8.2f ms | %5zu on the GPU %8.2f ms (prepare %.2f, kernel %.2f, "
                        "%zu batches, %.1f GCUPS) | together %8.2f ms\n",
                        split, big.size(), 1e3 * median(cpu_part), small.size(), 1e3 * median(gpu_total),
                        1e3 * median(prepare), 1e3 * median(fill), last.batches,
                        median(fill) > 0 ? last.cells / median(fill) / 1e9 : 0.0, 1e3 * w);
            if (split == default_split) at_default = w;
            if (w < best) {
                best = w;
                best_split = split;
            }
        }
        std::printf("summary: %zu pairs (%.3g cells) aligned in %.2f ms (GPU, pairs above %.3g cells on %u CPU threads "
                    "beside it); CPU threads alone %.2f ms; best split %.3g cells, %.2f ms\n",
                    pairs.size(), total_cells, 1e3 * at_default, default_split, pool.size(), 1e3 * cpu_only, best_split,
                    1e3 * best);
        return 0;
    } catch (const error& e) {
        std::fprintf(stderr, "bench_gpu_align: %s\n", e.what());
        return static_cast<int>(e.code());
    }
}
