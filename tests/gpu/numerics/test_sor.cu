// SOR on the GPU (gpu/numerics/sor.hpp): the sweeps of every method give the CPU's bits (the compensation method's within
// rounding); the subdomain MLSSOR gives the CPU's bits; the solve converges as the CPU's does.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "core/numerics/sor.hpp"
#include "core/thread_pool.hpp"
#include "core/tuning.hpp"
#include "gpu/numerics/sor.hpp"
#include "tests/gpu/harness.hpp"

namespace {

swgpu::sor::problem random_problem(swgpu::sor::index_t n) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(n));
    std::uniform_real_distribution<double> d(-1, 1);
    std::vector<double> f(static_cast<std::size_t>(n * n)), g(f.size());
    for (auto& v : f) v = d(rng) * 30;
    for (auto& v : g) v = d(rng);
    return swgpu::sor::from_arrays(n, f, g, "random");
}

}  // namespace

GPU_TEST("sor: GPU sweeps anti-diagonal by anti-diagonal give the CPU's bits for every method") {
    using namespace swgpu;
    thread_pool pool(4);
    const tuning::scoped_override diagonal("sor.lex=diagonal");
    for (const sor::index_t n : {3, 4, 17, 64, 101}) {
        const auto p = random_problem(n);
        const auto h2f = sor::scaled_rhs(p);
        for (const auto m : {sor::method::lex, sor::method::redblack, sor::method::ssor, sor::method::mlssor}) {
            auto cpu = p.u;
            for (int k = 0; k < 4; ++k) sor::sweep(m, n, cpu, h2f, 1.8, pool, 3);
            const auto gpu_u = gpu::sor_sweeps(p, m, 1.8, 4, nullptr, 3);
            CHECK(std::memcmp(cpu.data(), gpu_u.data(), cpu.size() * sizeof(double)) == 0);
        }
    }
}

namespace {
// Column strips and the compensation method against the CPU's lexicographic sweeps on n x n problems, for every
// schedule of the lexicographic sweep and every method that takes it.
void check_lex_schedules(std::initializer_list<swgpu::sor::index_t> sizes, int sweeps) {
    // The row's recurrence x_{j+1} = (omega/4) x_j + b_j solved by the weighted scan re-associates it: each value
    // may move by a few units in the last place, and the contraction of the iteration keeps that from growing.
    using namespace swgpu;
    thread_pool pool(4);
    for (const char* schedule : {"strips", "tiled", "rowsync"}) {
        const tuning::scoped_override lex(std::string("sor.lex=") + schedule);
        for (const sor::index_t n : sizes) {
            const auto p = random_problem(n);
            const auto h2f = sor::scaled_rhs(p);
            for (const auto m : {sor::method::lex, sor::method::ssor, sor::method::mlssor}) {
                auto cpu = p.u;
                for (int k = 0; k < sweeps; ++k) sor::sweep(m, n, cpu, h2f, 1.8, pool, 2);
                const auto gpu_u = gpu::sor_sweeps(p, m, 1.8, sweeps, nullptr, 2);
                REQUIRE(gpu_u.size() == cpu.size());
                double scale = 1, worst = 0;
                for (const double v : cpu) scale = std::max(scale, std::abs(v));
                for (std::size_t k = 0; k < cpu.size(); ++k) worst = std::max(worst, std::abs(gpu_u[k] - cpu[k]));
                CHECK(worst <= 1e-12 * scale);
                // the boundary is untouched
                CHECK(gpu_u[0] == cpu[0]);
                CHECK(gpu_u.back() == cpu.back());
            }
        }
    }
}
}  // namespace

GPU_TEST("sor: column strips and the compensation method (tiled P2P, row-sync) give the lexicographic sweeps within rounding") {
    check_lex_schedules({3, 4, 17, 100, 301, 1025, 1026, 1027, 1030, 2100}, 4);
}

GPU_TEST("sor: column strips and the compensation method on small grids, two sweeps (sanitize)") {
    // The sanitizers' copy of the test above: every schedule and method, grids that still cross strips and tiles.
    check_lex_schedules({3, 17, 301, 1030}, 2);
}

GPU_TEST("sor: the GPU solve converges on the model problem like the CPU's") {
    using namespace swgpu;
    thread_pool pool(4);
    const auto p = sor::model_problem(65);
    for (const auto m : {sor::method::lex, sor::method::redblack}) {
        sor::options o;
        o.m = m;
        o.omega = sor::optimal_omega(65);
        o.tol = 1e-10;
        o.max_sweeps = 3000;
        const auto cpu = sor::solve(p, o, pool);
        const auto gpu_s = gpu::sor_solve(p, o);
        CHECK(gpu_s.converged);
        CHECK(cpu.converged);
        // The iterates agree to rounding (lex goes through the compensation method), so the residuals agree to
        // about 1e-12 of ||f|| (they are relative to it) and the sweep counts to one.
        const long diff = long(gpu_s.history.size()) - long(cpu.history.size());
        CHECK((diff >= -1 && diff <= 1));
        CHECK(std::abs(cpu.history[0].residual - gpu_s.history[0].residual) <= 1e-9 * cpu.history[0].residual);
        const std::size_t common = std::min(cpu.history.size(), gpu_s.history.size());
        CHECK(std::abs(cpu.history[common - 1].residual - gpu_s.history[common - 1].residual) <= 1e-11);
    }
}

GPU_TEST("sor: the subdomain MLSSOR (one thread per subdomain) gives the CPU's bits") {
    // Each thread runs its tile with the CPU's code and no two tiles of a step touch a point another writes, so the
    // iterates are the CPU's bit for bit; the residuals, summed on the device in another order, agree to rounding.
    using namespace swgpu;
    thread_pool pool(4);
    struct shape {
        sor::index_t a, b;
        int layers;
    };
    for (const sor::index_t n : {3, 4, 17, 64, 101, 300, 1030}) {
        const auto p = random_problem(n);
        for (const shape s : {shape{2, 2, 1}, shape{4, 4, 2}, shape{5, 7, 2}, shape{6, 3, 1}, shape{8, 8, 4},
                              shape{13, 11, 5}, shape{32, 32, 16}, shape{n, n + 5, 1}})
            for (const bool forward_only : {false, true}) {
                if (2 * s.layers > std::min(s.a, s.b)) continue;
                sor::options o;
                o.m = sor::method::mlssor;
                o.omega = 1.6;
                o.tol = 1e-300;
                o.max_sweeps = 3 * 2 * s.layers;  // sweeps over the grid: 3 iterations
                o.layers = s.layers;
                o.sub_rows = s.a;
                o.sub_cols = s.b;
                o.forward_only = forward_only;
                const auto cpu = sor::solve(p, o, pool);
                const auto gpu_s = gpu::sor_solve(p, o);
                REQUIRE(gpu_s.u.size() == cpu.u.size());
                CHECK(std::memcmp(cpu.u.data(), gpu_s.u.data(), cpu.u.size() * sizeof(double)) == 0);
                REQUIRE(gpu_s.history.size() == cpu.history.size());
                // Sums of ~n^2 squares in another order, each residual f - A u formed with another rounding: within
                // 1e-9 of the value, or 1e-12 of ||f|| where u has (nearly) solved a tiny grid and r is rounding noise.
                for (std::size_t k = 0; k < cpu.history.size(); ++k)
                    CHECK(std::abs(gpu_s.history[k].residual - cpu.history[k].residual) <=
                          1e-9 * cpu.history[k].residual + 1e-12);
            }
    }
}

GPU_TEST("sor: the GPU subdomain MLSSOR converges on the rough problem like the CPU's") {
    using namespace swgpu;
    thread_pool pool(4);
    const auto p = sor::builtin_problem("rough", 257);
    for (const sor::index_t a : {4, 16}) {
        sor::options o;
        o.m = sor::method::mlssor;
        o.omega = 1.25;
        o.tol = 1e-4;  // 573 iterations (2292 sweeps) with 4 x 4 subdomains, 79 (1264) with 16 x 16 (the CPU, N = 257)
        o.max_sweeps = 3000;
        o.layers = int(a / 2);
        o.sub_rows = o.sub_cols = a;
        const auto cpu = sor::solve(p, o, pool);
        const auto gpu_s = gpu::sor_solve(p, o);
        CHECK(cpu.converged);
        CHECK(gpu_s.converged);
        // the same iterates: only the residual's last digits differ, so the counts agree to one iteration
        const long diff = long(gpu_s.history.size()) - long(cpu.history.size());
        CHECK((diff >= -1 && diff <= 1));
        const std::size_t common = std::min(cpu.history.size(), gpu_s.history.size());
        if (diff == 0) CHECK(std::memcmp(cpu.u.data(), gpu_s.u.data(), cpu.u.size() * sizeof(double)) == 0);
        CHECK(std::abs(cpu.history[common - 1].residual - gpu_s.history[common - 1].residual) <=
              1e-12 * cpu.history[common - 1].residual);
    }
}

GPU_TEST("sor: strips running several lex sweeps per launch give one sweep per launch's bits") {
    // A batch runs each sweep with the same code as a launch of one sweep (only the waits differ), so the grids are
    // equal bit for bit; against the CPU, within rounding as above. Widths of 1 to 5 strips, odd and tiny grids,
    // batches that do and do not divide the sweeps.
    using namespace swgpu;
    thread_pool pool(4);
    for (const sor::index_t n : {3, 4, 5, 37, 1026, 1027, 2051, 4100, 5000}) {
        const auto p = random_problem(n);
        const auto h2f = sor::scaled_rhs(p);
        for (const int sweeps : {1, 2, 7, 20}) {
            auto cpu = p.u;
            for (int k = 0; k < sweeps; ++k) sor::sweep(sor::method::lex, n, cpu, h2f, 1.7, pool);
            const auto one = [&] {
                const tuning::scoped_override single("sor.batch=1");
                return gpu::sor_sweeps(p, sor::method::lex, 1.7, sweeps);
            }();
            for (const char* cap : {"3", "32"}) {
                const tuning::scoped_override batch(std::string("sor.batch=") + cap);
                const auto batched = gpu::sor_sweeps(p, sor::method::lex, 1.7, sweeps);
                REQUIRE(batched.size() == one.size());
                CHECK(std::memcmp(batched.data(), one.data(), one.size() * sizeof(double)) == 0);
            }
            double scale = 1, worst = 0;
            for (const double v : cpu) scale = std::max(scale, std::abs(v));
            for (std::size_t k = 0; k < cpu.size(); ++k) worst = std::max(worst, std::abs(one[k] - cpu[k]));
            CHECK(worst <= 1e-12 * scale);
        }
    }
}

GPU_TEST("sor: a batched lex solve stops at the sweep one sweep at a time stops at, with its grid") {
    // The residuals inside a batch come from the strips, that of its last iterate from the residual pass; a batch
    // that converges before its end is run again up to the converged sweep. So the history has the same length, the
    // residuals agree to rounding and the grid is the same bits.
    using namespace swgpu;
    for (const sor::index_t n : {65, 1100}) {
        const auto p = sor::model_problem(n);
        for (const int max_sweeps : {5, 37, 3000}) {
            sor::options o;
            o.m = sor::method::lex;
            o.omega = sor::optimal_omega(n);
            o.tol = n == 65 ? 1e-10 : 1e-3;
            o.max_sweeps = max_sweeps;
            const auto one = [&] {
                const tuning::scoped_override single("sor.batch=1");
                return gpu::sor_solve(p, o);
            }();
            for (const char* cap : {"4", "32"}) {
                const tuning::scoped_override batch(std::string("sor.batch=") + cap);
                const auto batched = gpu::sor_solve(p, o);
                CHECK(batched.converged == one.converged);
                REQUIRE(batched.history.size() == one.history.size());
                for (std::size_t k = 0; k < one.history.size(); ++k) {
                    CHECK(batched.history[k].iteration == one.history[k].iteration);
                    CHECK(std::abs(batched.history[k].residual - one.history[k].residual) <=
                          1e-9 * one.history[k].residual + 1e-14);
                }
                CHECK(std::memcmp(batched.u.data(), one.u.data(), one.u.size() * sizeof(double)) == 0);
            }
        }
    }
}

GPU_TEST("sor: the one-pass red-black sweep gives the CPU's two colour passes bit for bit") {
    // redblack_sweep reads one grid and writes the other, red then black in one pass over the rows; each point takes
    // point() of the same values as in the CPU's passes. Grids smaller than, equal to and just past a block's 254
    // columns and 64 rows, several blocks each way, odd and even sweep counts (the grids alternate).
    using namespace swgpu;
    thread_pool pool(4);
    for (const sor::index_t n : {3, 4, 5, 17, 66, 67, 255, 256, 257, 300, 511, 1030}) {
        const auto p = random_problem(n);
        const auto h2f = sor::scaled_rhs(p);
        auto cpu = p.u;
        int done = 0;
        for (const int sweeps : {1, 2, 5}) {
            while (done < sweeps) {
                sor::sweep(sor::method::redblack, n, cpu, h2f, 1.8, pool);
                ++done;
            }
            const auto gpu_u = gpu::sor_sweeps(p, sor::method::redblack, 1.8, sweeps);
            REQUIRE(gpu_u.size() == cpu.size());
            const bool same = std::memcmp(cpu.data(), gpu_u.data(), cpu.size() * sizeof(double)) == 0;
            if (!same) std::printf("  n %lld, %d sweeps: red-black differs\n", static_cast<long long>(n), sweeps);
            CHECK(same);
        }
    }
}

GPU_TEST("sor: a batched red-black solve gives the CPU's iterates and stops where one sweep at a time stops") {
    // The residuals inside a batch come from the sweeps (of their input iterate), that of its last iterate from the
    // residual pass; a batch that converges before its end is run again up to the converged sweep.
    using namespace swgpu;
    thread_pool pool(4);
    for (const sor::index_t n : {65, 700}) {
        const auto p = sor::model_problem(n);
        for (const int max_sweeps : {5, 37, 3000}) {
            sor::options o;
            o.m = sor::method::redblack;
            o.omega = sor::optimal_omega(n);
            o.tol = n == 65 ? 1e-10 : 1e-3;
            o.max_sweeps = max_sweeps;
            const auto cpu = sor::solve(p, o, pool);
            const auto one = [&] {
                const tuning::scoped_override single("sor.batch=1");
                return gpu::sor_solve(p, o);
            }();
            REQUIRE(one.history.size() == cpu.history.size());
            CHECK(std::memcmp(one.u.data(), cpu.u.data(), cpu.u.size() * sizeof(double)) == 0);
            for (const char* cap : {"4", "32"}) {
                const tuning::scoped_override batch(std::string("sor.batch=") + cap);
                const auto batched = gpu::sor_solve(p, o);
                CHECK(batched.converged == one.converged);
                REQUIRE(batched.history.size() == one.history.size());
                for (std::size_t k = 0; k < one.history.size(); ++k) {
                    CHECK(batched.history[k].iteration == one.history[k].iteration);
                    CHECK(std::abs(batched.history[k].residual - cpu.history[k].residual) <=
                          1e-9 * cpu.history[k].residual + 1e-14);
                }
                CHECK(std::memcmp(batched.u.data(), cpu.u.data(), cpu.u.size() * sizeof(double)) == 0);
            }
        }
    }
}
