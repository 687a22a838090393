// GPU levels (gpu/levels.hpp) against the CPU (core/levels.hpp, itself tested against direct definitions in
// tests/test_levels.cpp): levels equal exactly; x equals the CPU solve bit for bit for every schedule; generic loops'
// levels equal and their arrays equal the sequential loop's.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/levels.hpp"
#include "core/thread_pool.hpp"
#include "gpu/levels.hpp"
#include "tests/gpu/harness.hpp"

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
                                 gpu::solve_schedule::level_sync})
                for (int rep = 0; rep < 2; ++rep) {  // a second solve reuses the analysis and the flags
                    const auto x = solver.solve(b, s);
                    CHECK(x.size() == ref.size() && std::memcmp(x.data(), ref.data(), x.size() * sizeof(double)) == 0);
                }
        }
}

GPU_TEST("levels: GPU inspector of generic loops equals the CPU's; the GPU loop equals the sequential loop") {
    std::mt19937_64 rng(16);
    thread_pool pool(2);
    struct shape {
        std::int64_t n, locations;
        int k;
    };
    for (const shape sh : {shape{0, 5, 2}, shape{1, 1, 1}, shape{50, 3, 2}, shape{1000, 1000, 0}, shape{1000, 50, 3},
                           shape{100000, 100000, 1}, shape{200000, 20000, 2}, shape{64, 1, 1}})
        for (const auto body : {levels::loop_body::sum, levels::loop_body::max, levels::loop_body::fmod}) {
            levels::indirect_loop loop;
            loop.locations = sh.locations;
            loop.reads_per_iteration = sh.k;
            for (std::int64_t i = 0; i < sh.n; ++i) {
                loop.writes.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(sh.locations)));
                for (int r = 0; r < sh.k; ++r)
                    loop.reads.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(sh.locations)));
            }
            const auto lv = levels::loop_levels(loop);
            CHECK(gpu::loop_levels(loop) == lv);
            std::vector<double> a(static_cast<std::size_t>(sh.locations)), ref;
            for (auto& v : a) v = static_cast<double>(rng() % 100);
            ref = a;
            levels::run_sequential(loop, body, ref);
            const auto got = gpu::run_loop(loop, body, a);
            CHECK(got == ref);
        }
}
