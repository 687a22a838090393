// GPU levels (gpu/numerics/levels.hpp) against the CPU (core/numerics/levels.hpp, itself tested against direct definitions in
// tests/numerics/test_levels.cpp): levels equal exactly; x equals the CPU solve bit for bit for every schedule; generic loops'
// levels equal and their arrays equal the sequential loop's.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/numerics/levels.hpp"
#include "core/thread_pool.hpp"
#include "core/tuning.hpp"
#include "gpu/numerics/levels.hpp"
#include "tests/gpu/harness.hpp"
#include "tests/numerics/levels_workloads.hpp"

namespace {

using namespace swgpu;

// A random lower (or upper) triangle: row i reads up to `deps` rows among the `reach` nearest in dependence order.
levels::csr_matrix random_triangle(std::int64_t n, int deps, std::int64_t reach, bool upper, std::mt19937_64& rng) {
    levels::csr_matrix m;
    m.rows = n;
    m.row_ptr.push_back(0);
    std::uniform_real_distribution<double> u(-1, 1);
    for (std::int64_t i = 0; i < n; ++i) {
        std::vector<std::int32_t> cols;
        const std::int64_t avail = upper ? n - 1 - i : i;
        for (int d = 0; d < deps && avail > 0; ++d) {
            const std::int64_t off = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(std::min(avail, reach)));
            cols.push_back(static_cast<std::int32_t>(upper ? i + off : i - off));
        }
        cols.push_back(static_cast<std::int32_t>(i));
        std::sort(cols.begin(), cols.end());
        cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
        for (const auto c : cols) {
            m.col.push_back(c);
            m.val.push_back(c == i ? 1.5 + u(rng) * 0.25 : u(rng));
        }
        m.row_ptr.push_back(static_cast<std::int64_t>(m.col.size()));
    }
    return m;
}

}  // namespace

GPU_TEST("levels: GPU levels and solves equal the CPU's exactly, every schedule, lower and upper") {
    std::mt19937_64 rng(15);
    thread_pool pool(2);
    struct shape {
        std::int64_t n;
        int deps;
        std::int64_t reach;
    };
    for (const shape sh : {shape{1, 1, 1}, shape{31, 2, 3}, shape{32, 3, 1}, shape{33, 1, 40}, shape{1000, 4, 8},
                           shape{100000, 3, 300}, shape{300000, 6, 100000}, shape{200000, 1, 1}})
        for (const bool upper : {false, true}) {
            const auto part = upper ? levels::triangle::upper : levels::triangle::lower;
            const auto t = random_triangle(sh.n, sh.deps, sh.reach, upper, rng);
            levels::check_triangular(t, part, "test");
            const auto lv = levels::triangular_levels(t, part);
            const auto sets = levels::group_by_level(lv);
            std::vector<double> b(static_cast<std::size_t>(sh.n)), ref(b.size());
            for (auto& v : b) v = static_cast<double>(rng() % 1000) / 7.0;
            levels::triangular_solve(t, part, sets, b, ref, pool);
            gpu::triangular_solver solver(t, part);
            CHECK(solver.levels() == lv);
            std::vector<std::int64_t> widths;
            for (levels::level_t l = 1; l <= sets.count(); ++l) widths.push_back(sets.width(l));
            CHECK(solver.widths() == widths);
            for (const auto s : {gpu::solve_schedule::syncfree, gpu::solve_schedule::syncfree_by_level,
                                 gpu::solve_schedule::level_sync, gpu::solve_schedule::level_grid,
                                 gpu::solve_schedule::level_p2p})
                for (int rep = 0; rep < 2; ++rep) {  // a second solve reuses the analysis and the flags
                    const auto x = solver.solve(b, s);
                    CHECK(x.size() == ref.size() && std::memcmp(x.data(), ref.data(), x.size() * sizeof(double)) == 0);
                }
        }
}

GPU_TEST("levels: GPU inspector of generic loops equals the CPU's; the GPU loop equals the sequential loop") {
    std::mt19937_64 rng(16);
    struct shape {
        std::int64_t n, locations;
        int k;
    };
    using levels::loop_body;
    for (const shape sh : {shape{0, 5, 2}, shape{1, 1, 1}, shape{50, 3, 2}, shape{1000, 1000, 0}, shape{1000, 50, 3},
                           shape{100000, 100000, 1}, shape{200000, 20000, 2}, shape{64, 1, 1}, shape{3000, 2000, 9},
                           shape{20000, 5000, 17}, shape{500, 40, 33}})
        for (const auto kind : {loop_body::sum, loop_body::max, loop_body::fmod, loop_body::wsum, loop_body::dot}) {
            if (kind == loop_body::dot && sh.k % 2 == 0) continue;  // dot reads the written element, then pairs
            levels::indirect_loop loop;
            loop.locations = sh.locations;
            loop.reads_per_iteration = sh.k;
            for (std::int64_t i = 0; i < sh.n; ++i) {
                loop.writes.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(sh.locations)));
                for (int r = 0; r < sh.k; ++r)
                    loop.reads.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(sh.locations)));
            }
            levels::body_spec body{kind, {}};
            if (kind == loop_body::wsum)
                for (int r = 0; r < sh.k; ++r) body.coefficients.push_back((r % 2 ? -0.3 : 0.7) / (r + 1));
            if (kind == loop_body::dot) body.coefficients = {0.1, 0.9};  // alpha, beta
            REQUIRE(levels::body_mismatch(body, sh.k).empty());
            const int before = ::swgpu::gputest::failures();
            const auto lv = levels::loop_levels(loop);
            CHECK(gpu::loop_levels(loop) == lv);
            std::vector<double> a(static_cast<std::size_t>(sh.locations)), ref;
            for (auto& v : a) v = static_cast<double>(rng() % 100) / 7.0;
            ref = a;
            levels::run_sequential(loop, body, ref);
            gpu::loop_report rep;
            const auto got = gpu::run_loop(loop, body, a, &rep, true);
            CHECK(std::memcmp(got.data(), ref.data(), got.size() * sizeof(double)) == 0);
            CHECK(rep.levels == lv);
            if (::swgpu::gputest::failures() != before)
                std::fprintf(stderr, "  (n %lld, locations %lld, k %d, body %s)\n", static_cast<long long>(sh.n),
                             static_cast<long long>(sh.locations), sh.k, levels::body_name(kind));
        }
}

GPU_TEST("levels: the paper's workloads on the GPU: levels equal the CPU's, arrays equal the sequential loop's") {
    using namespace swgpu::testing::loops;
    std::mt19937_64 rng(17);
    std::vector<std::pair<std::string, workload>> all;
    all.emplace_back("randAcc", rand_acc(200000, 1, rng));
    all.emplace_back("randAcc3", rand_acc(200000, 3, rng));
    all.emplace_back("doAll", do_all(300000, rng));
    all.emplace_back("2dconv", conv2d(300, rng));
    all.emplace_back("fdtd-2d", fdtd2d(200, rng));
    all.emplace_back("gemm", gemm(64, rng));
    all.emplace_back("mvt", mvt(256, rng));
    for (const auto& [name, w] : all) {
        const int before = ::swgpu::gputest::failures();
        std::vector<double> ref = w.a0, got = w.a0;
        for (const auto& kn : w.kernels) {
            const auto lv = levels::loop_levels(kn.loop);
            CHECK(gpu::loop_levels(kn.loop) == lv);
            levels::run_sequential(kn.loop, kn.body, ref);
            got = gpu::run_loop(kn.loop, kn.body, got);
        }
        CHECK(got.size() == ref.size());
        CHECK(std::memcmp(got.data(), ref.data(), got.size() * sizeof(double)) == 0);
        if (::swgpu::gputest::failures() != before) std::fprintf(stderr, "  (in workload %s)\n", name.c_str());
    }
}

GPU_TEST("levels: the analysis by frontiers, the sync-free pass and the frontiers capped and finished by the pass give the CPU's levels") {
    // The frontiers' levels, their cap (the sync-free pass keeps the rows they placed and levels the rest) and the
    // sync-free pass alone must all give the definition's levels and widths, for wide and deep level structures.
    std::mt19937_64 rng(17);
    struct shape {
        std::int64_t n;
        int deps;
        std::int64_t reach;
    };
    struct mode {
        const char* analysis;
        const char* cap;
    };
    for (const shape sh : {shape{1, 1, 1}, shape{40, 2, 3}, shape{5000, 3, 5}, shape{200000, 4, 100000},
                           shape{100000, 1, 1}})
        for (const bool upper : {false, true}) {
            const auto part = upper ? levels::triangle::upper : levels::triangle::lower;
            const auto t = random_triangle(sh.n, sh.deps, sh.reach, upper, rng);
            const auto lv = levels::triangular_levels(t, part);
            const auto sets = levels::group_by_level(lv);
            std::vector<std::int64_t> widths;
            for (levels::level_t l = 1; l <= sets.count(); ++l) widths.push_back(sets.width(l));
            for (const mode md : {mode{"frontiers", nullptr}, mode{"frontiers", "1"}, mode{"frontiers", "3"},
                                  mode{"frontiers", "64"}, mode{"syncfree", nullptr}}) {
                const tuning::scoped_override analysis(std::string("levels.analysis=") + md.analysis +
                                                       (md.cap ? std::string(",levels.frontier_cap=") + md.cap : ""));
                gpu::triangular_solver solver(t, part);
                const bool same = solver.levels() == lv && solver.widths() == widths;
                if (!same)
                    std::printf("  n %lld %s, %s, cap %s: levels differ\n", static_cast<long long>(sh.n),
                                upper ? "upper" : "lower", md.analysis, md.cap ? md.cap : "default");
                CHECK(same);
            }
        }
}

GPU_TEST("levels: the first solve that comes with the analysis equals the CPU solve, whichever way the levels are found") {
    // The fused sync-free pass, the frontiers then level_p2p, and the frontiers stopped by their cap (the sync-free
    // pass finishing the levels): x bit for bit, and the levels still the definition's.
    using namespace swgpu;
    std::mt19937_64 rng(18);
    thread_pool pool(2);
    struct shape {
        std::int64_t n;
        int deps;
        std::int64_t reach;
    };
    for (const shape sh : {shape{1, 1, 1}, shape{33, 2, 3}, shape{20000, 4, 1000}, shape{200000, 3, 100000}})
        for (const bool upper : {false, true}) {
            const auto part = upper ? levels::triangle::upper : levels::triangle::lower;
            const auto t = random_triangle(sh.n, sh.deps, sh.reach, upper, rng);
            const auto lv = levels::triangular_levels(t, part);
            const auto sets = levels::group_by_level(lv);
            std::vector<double> b(static_cast<std::size_t>(sh.n)), ref(b.size());
            for (auto& v : b) v = static_cast<double>(rng() % 1000) / 7.0 - 60;
            levels::triangular_solve(t, part, sets, b, ref, pool);
            for (const char* how : {"syncfree", "frontiers", "frontiers-cap"}) {
                const tuning::scoped_override analysis(
                    std::strcmp(how, "frontiers-cap") == 0 ? "levels.analysis=frontiers,levels.frontier_cap=2"
                                                           : std::string("levels.analysis=") + how);
                gpu::triangular_solver solver(t, part, b);
                const auto& x = solver.first_solution();
                const bool same = x.size() == ref.size() && std::memcmp(x.data(), ref.data(), x.size() * sizeof(double)) == 0;
                if (!same) std::printf("  n %lld %s, %s: x differs\n", static_cast<long long>(sh.n), upper ? "upper" : "lower", how);
                CHECK(same);
                CHECK(solver.levels() == lv);
                const auto again = solver.solve(b);  // and a later solve still works
                CHECK(std::memcmp(again.data(), ref.data(), ref.size() * sizeof(double)) == 0);
            }
        }
}

GPU_TEST("levels: level_p2p gives the CPU's x with every launch shape (blocks per SM, block size, sleep when idle)") {
    // The schedule's correctness must not depend on how many threads share the rows or how often they poll: every
    // shape the benchmark measures, on random lower and upper triangles (rows of more entries than are staged, long
    // chains, wide levels), x bit for bit.
    using namespace swgpu;
    std::mt19937_64 rng(19);
    thread_pool pool(2);
    struct shape {
        std::int64_t n;
        int deps;
        std::int64_t reach;
    };
    struct launch {
        int per_sm, threads;
        unsigned sleep_ns;
    };
    for (const shape sh : {shape{1, 1, 1}, shape{77, 3, 5}, shape{5000, 9, 40}, shape{300000, 3, 3000}, shape{20000, 1, 1}})
        for (const bool upper : {false, true}) {
            const auto part = upper ? levels::triangle::upper : levels::triangle::lower;
            const auto t = random_triangle(sh.n, sh.deps, sh.reach, upper, rng);
            const auto sets = levels::group_by_level(levels::triangular_levels(t, part));
            std::vector<double> b(static_cast<std::size_t>(sh.n)), ref(b.size());
            for (auto& v : b) v = static_cast<double>(rng() % 1000) / 7.0 - 60;
            levels::triangular_solve(t, part, sets, b, ref, pool);
            gpu::triangular_solver solver(t, part);
            for (const launch l : {launch{1, 256, 0}, launch{1, 128, 0}, launch{1, 256, 100}, launch{1, 256, 500},
                                   launch{1, 128, 250}, launch{2, 256, 250}, launch{4, 256, 500}}) {
                const auto x = solver.solve_p2p(b, {l.per_sm, l.threads, l.sleep_ns});
                const bool same = std::memcmp(x.data(), ref.data(), ref.size() * sizeof(double)) == 0;
                if (!same)
                    std::printf("  n %lld %s, %d x %d threads per SM, sleep %u: x differs\n", static_cast<long long>(sh.n),
                                upper ? "upper" : "lower", l.per_sm, l.threads, l.sleep_ns);
                CHECK(same);
            }
        }
}
