// SOR on the GPU (gpu/sor.hpp): the sweeps of every method give the CPU's bits; the solve converges as the CPU's does.
#include <cstring>
#include <random>
#include <vector>

#include "core/sor.hpp"
#include "core/thread_pool.hpp"
#include "gpu/sor.hpp"
#include "tests/gpu/harness.hpp"

GPU_TEST("sor: GPU sweeps give the CPU's bits for lex, redblack and ssor") {
    using namespace swgpu;
    thread_pool pool(4);
    for (const sor::index_t n : {3, 4, 17, 64, 101}) {
        std::mt19937_64 rng(static_cast<std::uint64_t>(n));
        std::uniform_real_distribution<double> d(-1, 1);
        std::vector<double> f(static_cast<std::size_t>(n * n)), g(f.size());
        for (auto& v : f) v = d(rng) * 30;
        for (auto& v : g) v = d(rng);
        const auto p = sor::from_arrays(n, f, g, "random");
        const auto h2f = sor::scaled_rhs(p);
        for (const auto m : {sor::method::lex, sor::method::redblack, sor::method::ssor}) {
            auto cpu = p.u;
            for (int k = 0; k < 4; ++k) sor::sweep(m, n, cpu, h2f, 1.8, pool);
            const auto gpu_u = gpu::sor_sweeps(p, m, 1.8, 4);
            CHECK(std::memcmp(cpu.data(), gpu_u.data(), cpu.size() * sizeof(double)) == 0);
        }
    }
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
        // the iterates are the same bits; only the residual's sum order differs
        const long diff = long(gpu_s.history.size()) - long(cpu.history.size());
        CHECK((diff >= -1 && diff <= 1));
        const std::size_t common = std::min(cpu.history.size(), gpu_s.history.size());
        CHECK(std::abs(cpu.history[common - 1].residual - gpu_s.history[common - 1].residual) <=
              1e-9 * cpu.history[common - 1].residual + 1e-300);
    }
}
