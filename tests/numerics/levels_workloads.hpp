// The workloads of scripts/make_loops.py (the paper's Table 2), built from the same definitions for the host tests
// (tests/numerics/test_levels.cpp) and the GPU tests (tests/gpu/numerics/test_levels.cu), with each one's direct form: the PolyBench
// loop nest over 2-D arrays, or the synthetic loop over A, with the same operations in the same order as the
// documented bodies (core/numerics/levels.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/numerics/levels.hpp"
#include "core/thread_pool.hpp"

namespace swgpu::testing::loops {

// n iterations of k uniform reads and one uniform write over `locations`.
inline levels::indirect_loop random_loop(std::int64_t n, std::int64_t locations, int k, std::mt19937_64& rng) {
    levels::indirect_loop loop;
    loop.locations = locations;
    loop.reads_per_iteration = k;
    for (std::int64_t i = 0; i < n; ++i) {
        loop.writes.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(locations)));
        for (int r = 0; r < k; ++r) loop.reads.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(locations)));
    }
    return loop;
}

struct kernel {
    std::string name;
    levels::indirect_loop loop;
    levels::body_spec body;
};
struct workload {
    std::int64_t locations = 0;
    std::vector<double> a0;
    std::vector<kernel> kernels;
};

inline const std::vector<double> conv_coefficients = {0.2, -0.3, 0.4, 0.5, 0.6, 0.7, -0.8, -0.9, 0.1};

inline kernel make_kernel(const std::string& name, std::int64_t locations, int k, levels::loop_body b, std::vector<double> c) {
    kernel kn{name, {}, {b, std::move(c)}};
    kn.loop.locations = locations;
    kn.loop.reads_per_iteration = k;
    return kn;
}
inline void add_iteration(kernel& kn, std::int64_t w, const std::vector<std::int64_t>& reads) {
    kn.loop.writes.push_back(w);
    kn.loop.reads.insert(kn.loop.reads.end(), reads.begin(), reads.end());
}
inline std::vector<double> random_values(std::size_t n, std::mt19937_64& rng) {
    std::vector<double> v(n);
    for (auto& x : v) x = static_cast<double>(rng() >> 11) * 0x1p-53;
    return v;
}

inline workload rand_acc(std::int64_t n, int k, std::mt19937_64& rng) {
    workload w;
    w.locations = n;
    kernel kn = make_kernel("loop", n, k, levels::loop_body::fmod, {});
    kn.loop = random_loop(n, n, k, rng);
    w.kernels.push_back(std::move(kn));
    for (std::int64_t i = 0; i < n; ++i) w.a0.push_back(static_cast<double>(rng() % 1021));
    return w;
}
inline std::vector<double> rand_acc_direct(const workload& w) {
    std::vector<double> a = w.a0;
    const auto& loop = w.kernels[0].loop;
    const auto k = static_cast<std::size_t>(loop.reads_per_iteration);
    for (std::size_t i = 0; i < loop.writes.size(); ++i) {
        double s = 0;
        for (std::size_t r = 0; r < k; ++r) s += a[static_cast<std::size_t>(loop.reads[i * k + r])];
        a[static_cast<std::size_t>(loop.writes[i])] = std::fmod(s + 1, 1021.0);
    }
    return a;
}

inline workload do_all(std::int64_t n, std::mt19937_64& rng) {
    workload w;
    w.locations = n;
    w.a0 = random_values(static_cast<std::size_t>(n), rng);
    kernel kn = make_kernel("loop", n, 1, levels::loop_body::sum, {});
    for (std::int64_t i = 0; i < n; ++i) add_iteration(kn, i, {i});
    w.kernels.push_back(std::move(kn));
    return w;
}

inline workload conv2d(std::int64_t N, std::mt19937_64& rng) {
    workload w;
    w.locations = 2 * N * N;
    w.a0 = random_values(static_cast<std::size_t>(N * N), rng);
    w.a0.resize(static_cast<std::size_t>(2 * N * N), 0.0);
    kernel kn = make_kernel("conv", w.locations, 9, levels::loop_body::wsum, conv_coefficients);
    const auto A = [N](std::int64_t i, std::int64_t j) { return i * N + j; };
    for (std::int64_t i = 1; i < N - 1; ++i)
        for (std::int64_t j = 1; j < N - 1; ++j)
            add_iteration(kn, N * N + i * N + j,
                          {A(i - 1, j - 1), A(i, j - 1), A(i + 1, j - 1), A(i - 1, j), A(i, j), A(i + 1, j), A(i - 1, j + 1),
                           A(i, j + 1), A(i + 1, j + 1)});
    w.kernels.push_back(std::move(kn));
    return w;
}
inline std::vector<double> conv2d_direct(const workload& w, std::int64_t N) {
    std::vector<std::vector<double>> A(static_cast<std::size_t>(N)), B(static_cast<std::size_t>(N));
    for (std::int64_t i = 0; i < N; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
            A[static_cast<std::size_t>(i)].push_back(w.a0[static_cast<std::size_t>(i * N + j)]);
            B[static_cast<std::size_t>(i)].push_back(w.a0[static_cast<std::size_t>(N * N + i * N + j)]);
        }
    const double c11 = 0.2, c12 = -0.3, c13 = 0.4, c21 = 0.5, c22 = 0.6, c23 = 0.7, c31 = -0.8, c32 = -0.9, c33 = 0.1;
    for (std::size_t i = 1; i + 1 < A.size(); ++i)
        for (std::size_t j = 1; j + 1 < A.size(); ++j)
            B[i][j] = c11 * A[i - 1][j - 1] + c12 * A[i + 0][j - 1] + c13 * A[i + 1][j - 1] + c21 * A[i - 1][j + 0] +
                      c22 * A[i + 0][j + 0] + c23 * A[i + 1][j + 0] + c31 * A[i - 1][j + 1] + c32 * A[i + 0][j + 1] +
                      c33 * A[i + 1][j + 1];
    std::vector<double> out;
    for (const auto* m : {&A, &B})
        for (const auto& row : *m) out.insert(out.end(), row.begin(), row.end());
    return out;
}

inline workload fdtd2d(std::int64_t N, std::mt19937_64& rng) {
    workload w;
    const std::int64_t E = N * (N + 1);
    w.locations = 2 * E + N * N;
    w.a0 = random_values(static_cast<std::size_t>(w.locations), rng);
    const auto ex = [N](std::int64_t i, std::int64_t j) { return i * (N + 1) + j; };
    const auto ey = [N, E](std::int64_t i, std::int64_t j) { return E + i * N + j; };
    const auto hz = [N, E](std::int64_t i, std::int64_t j) { return 2 * E + i * N + j; };
    kernel k1 = make_kernel("ey", w.locations, 3, levels::loop_body::wsum, {1.0, -0.5, 0.5});
    for (std::int64_t i = 1; i < N; ++i)
        for (std::int64_t j = 0; j < N; ++j) add_iteration(k1, ey(i, j), {ey(i, j), hz(i, j), hz(i - 1, j)});
    kernel k2 = make_kernel("ex", w.locations, 3, levels::loop_body::wsum, {1.0, -0.5, 0.5});
    for (std::int64_t i = 0; i < N; ++i)
        for (std::int64_t j = 1; j < N; ++j) add_iteration(k2, ex(i, j), {ex(i, j), hz(i, j), hz(i, j - 1)});
    kernel k3 = make_kernel("hz", w.locations, 5, levels::loop_body::wsum, {1.0, -0.7, 0.7, -0.7, 0.7});
    for (std::int64_t i = 0; i < N; ++i)
        for (std::int64_t j = 0; j < N; ++j)
            add_iteration(k3, hz(i, j), {hz(i, j), ex(i, j + 1), ex(i, j), ey(i + 1, j), ey(i, j)});
    w.kernels = {std::move(k1), std::move(k2), std::move(k3)};
    return w;
}
inline std::vector<double> fdtd2d_direct(const workload& w, std::int64_t N) {
    const auto n = static_cast<std::size_t>(N);
    std::vector<std::vector<double>> ex(n, std::vector<double>(n + 1)), ey(n + 1, std::vector<double>(n)),
        hz(n, std::vector<double>(n));
    std::size_t p = 0;
    for (auto* m : {&ex, &ey, &hz})
        for (auto& row : *m)
            for (auto& v : row) v = w.a0[p++];
    for (std::size_t i = 1; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) ey[i][j] = 1.0 * ey[i][j] + -0.5 * hz[i][j] + 0.5 * hz[i - 1][j];
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 1; j < n; ++j) ex[i][j] = 1.0 * ex[i][j] + -0.5 * hz[i][j] + 0.5 * hz[i][j - 1];
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            hz[i][j] = 1.0 * hz[i][j] + -0.7 * ex[i][j + 1] + 0.7 * ex[i][j] + -0.7 * ey[i + 1][j] + 0.7 * ey[i][j];
    std::vector<double> out;
    for (const auto* m : {&ex, &ey, &hz})
        for (const auto& row : *m) out.insert(out.end(), row.begin(), row.end());
    return out;
}

inline constexpr double gemm_alpha = 32412, gemm_beta = 2123;

inline workload gemm(std::int64_t N, std::mt19937_64& rng) {
    workload w;
    w.locations = 3 * N * N;
    w.a0 = random_values(static_cast<std::size_t>(w.locations), rng);
    kernel kn = make_kernel("gemm", w.locations, static_cast<int>(1 + 2 * N), levels::loop_body::dot, {gemm_alpha, gemm_beta});
    for (std::int64_t i = 0; i < N; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
            std::vector<std::int64_t> r = {i * N + j};
            for (std::int64_t k = 0; k < N; ++k) r.push_back(N * N + i * N + k), r.push_back(2 * N * N + k * N + j);
            add_iteration(kn, i * N + j, r);
        }
    w.kernels.push_back(std::move(kn));
    return w;
}
inline std::vector<double> gemm_direct(const workload& w, std::int64_t N) {
    std::vector<double> a = w.a0;
    const double* A = a.data() + N * N;
    const double* B = a.data() + 2 * N * N;
    for (std::int64_t i = 0; i < N; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
            double& c = a[static_cast<std::size_t>(i * N + j)];
            c *= gemm_beta;
            for (std::int64_t k = 0; k < N; ++k) c += gemm_alpha * A[i * N + k] * B[k * N + j];
        }
    return a;
}

inline workload mvt(std::int64_t N, std::mt19937_64& rng) {
    workload w;
    w.locations = N * N + 4 * N;
    w.a0 = random_values(static_cast<std::size_t>(w.locations), rng);
    const std::int64_t x1 = N * N, x2 = x1 + N, y1 = x2 + N, y2 = y1 + N;
    for (const bool transposed : {false, true}) {
        kernel kn = make_kernel(transposed ? "x2" : "x1", w.locations, static_cast<int>(1 + 2 * N), levels::loop_body::dot, {1.0, 1.0});
        const std::int64_t x = transposed ? x2 : x1, y = transposed ? y2 : y1;
        for (std::int64_t i = 0; i < N; ++i) {
            std::vector<std::int64_t> r = {x + i};
            for (std::int64_t j = 0; j < N; ++j) r.push_back(transposed ? j * N + i : i * N + j), r.push_back(y + j);
            add_iteration(kn, x + i, r);
        }
        w.kernels.push_back(std::move(kn));
    }
    return w;
}
inline std::vector<double> mvt_direct(const workload& w, std::int64_t N) {
    std::vector<double> v = w.a0;
    const double* a = v.data();
    double* x1 = v.data() + N * N;
    double* x2 = x1 + N;
    const double* y1 = x2 + N;
    const double* y2 = y1 + N;
    for (std::int64_t i = 0; i < N; ++i)
        for (std::int64_t j = 0; j < N; ++j) x1[i] = x1[i] + a[i * N + j] * y1[j];
    for (std::int64_t i = 0; i < N; ++i)
        for (std::int64_t j = 0; j < N; ++j) x2[i] = x2[i] + a[j * N + i] * y2[j];
    return v;
}

// Runs the kernels in order: by the sequential loop when `pool` is null, else by levels on the pool.
inline std::vector<double> run_workload(const workload& w, thread_pool* pool) {
    std::vector<double> a = w.a0;
    for (const auto& kn : w.kernels) {
        if (pool) levels::run_by_levels(kn.loop, kn.body, levels::group_by_level(levels::loop_levels(kn.loop)), a, *pool);
        else levels::run_sequential(kn.loop, kn.body, a);
    }
    return a;
}

}  // namespace swgpu::testing::loops
