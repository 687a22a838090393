// bench_long_pair: one long pair through core/align/long_pair/long_pair.hpp on the GPU or the CPU, score pass and full alignment.
//
//   bench_long_pair [--length N | --files A.fa B.fa] [--backend gpu|cpu] [--reps R] [--threads T] [--score-only]
//                   [--mutation RATE] [--seed S] [--policy antidiagonal|compensation|engine-tiles] [--parasail]
//                   [--gpu-mem-gib G] [--trace-batch B]
//
// --trace-batch B (CPU): leaves the walk traces at once, a thread each (1: one at a time; default: the threads, from
// 4 threads up).
//
// --parasail (builds that found libparasail-dev) also times parasail's 32-bit single-pair functions on one thread.
//
// --policy picks the GPU's forward kernels (long_pair::policy: the anti-diagonal bands or the compensation method at
// warp level), for data/long_pair_policy.tsv; engine-tiles runs the score pass (score and end cell) on the engine's
// tiled schedule instead (gpu::sw_score with tiled_p2p: the compensation weighted scan inside each tile).
//
// --length N makes a random DNA sequence of N bases and a relative of it (substitutions at RATE, default 0.05, and
// an indel every 10 kbp, up to 50 bases), deterministic for a seed; --files aligns the first record of each file
// (query A, subject B), DNA scoring 2/-3, gaps 5/2 (protein: BLOSUM62 11/1 when the records are not DNA). GCUPS =
// m·n / wall time of the call, median of R runs after one warm-up (--reps 0: the one run). Prints a line per run and "summary:" lines.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/align/long_pair/long_pair.hpp"
#include "core/align/sequence.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/thread_pool.hpp"
#include "gpu/engine/engine.hpp"
#if SWGPU_ENGINE_SW
#include "tests/gpu/engine/sw_on_engine.hpp"
#endif
#include "gpu/gpu.hpp"
#include "io/align/sequence_reader.hpp"

#if defined(SWGPU_HAVE_PARASAIL)
#include <parasail.h>
#endif

using namespace swgpu;

namespace {

int run(int argc, char** argv) {
    std::size_t length = 100000, reps = 5, threads = 0, trace_batch = 0;
    double mutation = 0.05;
    unsigned seed = 1;
    std::string file_a, file_b, backend = "gpu", policy = "antidiagonal";
    bool score_only = false, with_parasail = false;
    std::size_t device_memory = 0;  // --gpu-mem-gib: the GPU backend's budget (0: what is free)
    for (int k = 1; k < argc; ++k) {
        const std::string a = argv[k];
        auto next = [&] { return k + 1 < argc ? std::string(argv[++k]) : std::string(); };
        if (a == "--length") length = std::stoull(next());
        else if (a == "--files") file_a = next(), file_b = next();
        else if (a == "--backend") backend = next();
        else if (a == "--reps") reps = std::stoull(next());
        else if (a == "--threads") threads = std::stoull(next());
        else if (a == "--trace-batch") trace_batch = std::stoull(next());
        else if (a == "--score-only") score_only = true;
        else if (a == "--policy") policy = next();
        else if (a == "--parasail") with_parasail = true;
        else if (a == "--gpu-mem-gib") device_memory = std::stoull(next()) << 30;
        else if (a == "--mutation") mutation = std::stod(next());
        else if (a == "--seed") seed = static_cast<unsigned>(std::stoul(next()));
        else {
            std::fprintf(stderr, "bench_long_pair: unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    sequence_set qs, ss;
    if (!file_a.empty()) {
        qs = io::read_all(file_a);
        ss = io::read_all(file_b);
    } else {
        std::mt19937_64 rng(seed);
        const char* acgt = "ACGT";
        std::string a(length, 'A');
        for (auto& c : a) c = acgt[rng() % 4];
        std::string b;
        b.reserve(length + length / 100);
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (i % 10000 == 5000) {
                const std::size_t len = 1 + rng() % 50;
                if (rng() % 2) i += len;  // deletion
                else for (std::size_t t = 0; t < len; ++t) b.push_back(acgt[rng() % 4]);
                if (i >= a.size()) break;
            }
            b.push_back(std::uniform_real_distribution<double>(0, 1)(rng) < mutation ? acgt[rng() % 4] : a[i]);
        }
        qs.add("a", a);
        ss.add("b", b);
    }
    const bool dna = detect_type(qs) == seq_type::dna;
    scoring sc{dna ? substitution_matrix::match_mismatch(2, -3) : substitution_matrix::builtin("BLOSUM62"),
               dna ? gap_costs{5, 2} : gap_costs{11, 1}, dna ? seq_type::dna : seq_type::protein};
    encode(qs, sc.matrix);
    encode(ss, sc.matrix);
    const auto q = qs[0], s = ss[0];
    const auto m = std::int64_t(q.size()), n = std::int64_t(s.size());
    const double cells = double(m) * double(n);
    thread_pool pool(threads);
    std::unique_ptr<long_pair::backend> be;
    if (backend == "gpu") be = gpu::long_pair_backend(q, s, sc, device_memory);
    else be = std::make_unique<long_pair::cpu_backend>(q, s, sc, pool, std::size_t(1) << 30, double(1 << 20), 0, trace_batch);
    if (policy != "antidiagonal" && policy != "compensation" && policy != "engine-tiles") {
        std::fprintf(stderr, "bench_long_pair: --policy is antidiagonal, compensation or engine-tiles\n");
        return 2;
    }
    be->use_policy(policy == "compensation" ? long_pair::policy::compensation : long_pair::policy::antidiagonal);
    std::printf("# bench_long_pair %lld x %lld (%s), backend %s, %s\n", (long long)m, (long long)n,
                dna ? "DNA 2/-3 5/2" : "protein BLOSUM62 11/1", backend.c_str(), score_only ? "score" : "alignment");
    std::vector<double> wall, fwd;
    alignment last;
    for (std::size_t r = 0; r <= reps; ++r) {
        long_pair::timing t;
        const auto t0 = std::chrono::steady_clock::now();
        if (policy == "engine-tiles") {  // the engine's tiled schedule, compensation inside tiles: score and end cell
#if SWGPU_ENGINE_SW
            gpu::schedule_choice choice;
            choice.sched = gpu::schedule::tiled_p2p;
            const auto t1 = std::chrono::steady_clock::now();
            const auto e = gpu::sw_score(q, s, sc, choice).end;
            t.forward_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
            last.score = int(e.score), last.query_end = e.query_end, last.subject_end = e.subject_end;
#else
            std::fprintf(stderr, "bench_long_pair: --policy engine-tiles needs a build with CUDA\n");
            return 2;
#endif
        } else if (score_only) {
            const auto e = long_pair::score(*be, m, n, sc, &t);
            last.score = int(e.score), last.query_end = e.query_end, last.subject_end = e.subject_end;
        } else {
            last = long_pair::align(*be, m, n, sc, &t);
        }
        const double s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("run %zu%s: %.4f s (forward %.4f s = %.1f GCUPS, end %.4f s, traceback %.4f s, %.3g cells "
                    "recomputed: %zu forward calls %.4f s, %zu traces %.4f s, borders %.4f s) score %d end %lld,%lld "
                    "begin %lld,%lld\n",
                    r, r == 0 ? " (warm-up)" : "", s_, t.forward_s, cells / t.forward_s / 1e9, t.end_s, t.traceback_s,
                    t.cells_recomputed, t.forward_calls, t.recompute_s, t.trace_calls, t.trace_s, t.borders_s,
                    last.score, (long long)last.query_end, (long long)last.subject_end, (long long)last.query_begin,
                    (long long)last.subject_begin);
        if (r > 0 || reps == 0) wall.push_back(s_), fwd.push_back(t.forward_s);
    }
#if defined(SWGPU_HAVE_PARASAIL)
    if (with_parasail) {
        // parasail's 32-bit single-pair functions, one thread (its gap open is ours plus one extension).
        const std::string qa = decode(q, sc.matrix), sa = decode(s, sc.matrix);
        parasail_matrix_t* matrix = dna ? parasail_matrix_create("ACGTN", 2, -3) : nullptr;
        const parasail_matrix_t* lookup = dna ? matrix : parasail_matrix_lookup("blosum62");
        using fn = parasail_result_t* (*)(const char*, int, const char*, int, int, int, const parasail_matrix_t*);
        for (const auto& [name, f] : {std::pair<const char*, fn>{"sw_striped_32", &parasail_sw_striped_32},
                                      {"sw_scan_32", &parasail_sw_scan_32}, {"sw_diag_32", &parasail_sw_diag_32}}) {
            const auto t0 = std::chrono::steady_clock::now();
            parasail_result_t* r = f(qa.c_str(), int(qa.size()), sa.c_str(), int(sa.size()),
                                     sc.gaps.open + sc.gaps.extend, sc.gaps.extend, lookup);
            const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            const int score = parasail_result_get_score(r);
            parasail_result_free(r);
            std::printf("summary: parasail %s, one thread: %.4f s = %.2f GCUPS, score %d (%s)\n", name, secs,
                        cells / secs / 1e9, score, score == last.score ? "equal" : "DIFFERENT");
        }
        if (matrix) parasail_matrix_free(matrix);
    }
#else
    if (with_parasail) std::printf("# built without parasail (libparasail-dev): --parasail ignored\n");
#endif
    std::sort(wall.begin(), wall.end());
    std::sort(fwd.begin(), fwd.end());
    const double mw = wall[wall.size() / 2], mf = fwd[fwd.size() / 2];
    std::printf("summary: %s %lldx%lld %s: median %.4f s = %.1f GCUPS (forward pass %.4f s = %.1f GCUPS; total/forward %.2f)\n",
                backend.c_str(), (long long)m, (long long)n, score_only ? "score" : "align", mw, cells / mw / 1e9, mf,
                cells / mf / 1e9, mw / mf);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {  // no GPU, a file that cannot be read: one line
        std::fprintf(stderr, "bench_long_pair: %s\n", e.what());
        return 1;
    }
}
