#include "gpu/sweep3d.hpp"

#include <algorithm>

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"

namespace swgpu::gpu {

namespace {

using sweep3d::index_t;

constexpr int step_threads = 256;

// The slots of step t that hold a point: j in [j_lo, j_hi], and k in [k_lo, k_hi] covers every row's range.
struct step_range {
    index_t j_lo, j_hi, k_lo, k_hi;
};
step_range range_of(index_t n, index_t t) {
    step_range r;
    r.j_lo = std::max<index_t>(0, t - 2 * (n - 1));
    r.j_hi = std::min<index_t>(t, n - 1);
    r.k_lo = std::max<index_t>(0, t - r.j_hi - (n - 1));
    r.k_hi = std::min<index_t>(t - r.j_lo, n - 1);
    return r;
}

template <class T>
__global__ void fmod_step(index_t n, index_t t, step_range r, int loops, T c, const T* __restrict__ prev,
                          T* __restrict__ cur, T* __restrict__ grid) {
    const index_t k = r.k_lo + index_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const index_t j = r.j_lo + index_t(blockIdx.y);
    if (k > r.k_hi) return;
    const index_t i = t - j - k;
    if (i < 0 || i >= n) return;  // no point here now; the slot keeps 0 until its first point, its last one after
    const index_t s = j * n + k;
    const T top = prev[s];  // 0 when i == 0: the slot had no point yet
    const T north = j > 0 ? prev[s - n] : T(0);
    const T west = k > 0 ? prev[s - 1] : T(0);
    const T v = sweep3d::fmod_point(sweep3d::initial_value<T>(i, j, k), top, north, west, c, loops);
    cur[s] = v;
    grid[(i * n + j) * n + k] = v;
}

// Faces of plane buffers: [angle][x, y, z][j][k].
template <class T>
__global__ void dd_step(index_t n, index_t t, step_range r, int angles, const sweep3d::dd_angle<T>* coef, T source,
                        T weight, const T* __restrict__ prev, T* __restrict__ cur, T* __restrict__ phi) {
    const index_t k = r.k_lo + index_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const index_t j = r.j_lo + index_t(blockIdx.y);
    if (k > r.k_hi) return;
    const index_t i = t - j - k;
    if (i < 0 || i >= n) return;
    const index_t plane = n * n, s = j * n + k;
    T sum = T(0);
    for (int a = 0; a < angles; ++a) {
        const T* pa = prev + index_t(a) * 3 * plane;
        T* ca = cur + index_t(a) * 3 * plane;
        T x = pa[s];                                    // from (i-1, j, k)
        T y = j > 0 ? pa[plane + s - n] : T(0);         // from (i, j-1, k)
        T z = k > 0 ? pa[2 * plane + s - 1] : T(0);     // from (i, j, k-1)
        const sweep3d::dd_angle<T> c = coef[a];
        const T psi = sweep3d::dd_cell(c, source, x, y, z);
        sum = sweep3d::add_rn(sum, sweep3d::mul_rn(psi, weight));
        ca[s] = x;
        ca[plane + s] = y;
        ca[2 * plane + s] = z;
    }
    phi[(i * n + j) * n + k] = sum;
}

template <class Step>
void run_steps(index_t n, sweep_report* report, Step&& step) {
    cuda_event start, stop;
    start.record(nullptr);
    for (index_t t = 0; t <= 3 * (n - 1); ++t) {
        const step_range r = range_of(n, t);
        const dim3 grid(static_cast<unsigned>((r.k_hi - r.k_lo + step_threads) / step_threads),
                        static_cast<unsigned>(r.j_hi - r.j_lo + 1));
        step(t, r, grid);
        SWGPU_CUDA_CHECK_LAUNCH("sweep3d step");
    }
    stop.record(nullptr);
    stop.synchronize();
    if (report) {
        report->kernel_ms = stop.since(start);
        report->steps = static_cast<int>(3 * (n - 1) + 1);
    }
}

}  // namespace

template <class T>
std::vector<T> sweep3d_fmod(const sweep3d::fmod_params& p, sweep_report* report) {
    sweep3d::check(p);
    const index_t n = p.n;
    const auto plane = static_cast<std::size_t>(n * n);
    device_buffer<T> a(plane), b(plane), grid(plane * static_cast<std::size_t>(n));
    a.zero();
    b.zero();
    T* bufs[2] = {a.data(), b.data()};
    run_steps(n, report, [&](index_t t, const step_range& r, dim3 blocks) {
        fmod_step<T><<<blocks, step_threads>>>(n, t, r, p.loops, T(p.c), bufs[(t + 1) & 1], bufs[t & 1], grid.data());
    });
    return grid.download(plane * static_cast<std::size_t>(n));
}

template <class T>
std::vector<T> sweep3d_dd(const sweep3d::dd_params& p, sweep_report* report) {
    sweep3d::check(p);
    const index_t n = p.n;
    const auto plane = static_cast<std::size_t>(n * n);
    const auto faces = plane * 3 * static_cast<std::size_t>(p.angles);
    device_buffer<T> a(faces), b(faces), phi(plane * static_cast<std::size_t>(n));
    a.zero();
    b.zero();
    std::vector<sweep3d::dd_angle<T>> coef(static_cast<std::size_t>(p.angles));
    for (int k = 0; k < p.angles; ++k) coef[static_cast<std::size_t>(k)] = sweep3d::dd_coefficients<T>(p, k);
    device_buffer<sweep3d::dd_angle<T>> d_coef;
    d_coef.upload(coef);
    const T weight = T(1) / T(p.angles);
    T* bufs[2] = {a.data(), b.data()};
    run_steps(n, report, [&](index_t t, const step_range& r, dim3 blocks) {
        dd_step<T><<<blocks, step_threads>>>(n, t, r, p.angles, d_coef.data(), T(p.source), weight, bufs[(t + 1) & 1],
                                             bufs[t & 1], phi.data());
    });
    return phi.download(plane * static_cast<std::size_t>(n));
}

template std::vector<float> sweep3d_fmod<float>(const sweep3d::fmod_params&, sweep_report*);
template std::vector<double> sweep3d_fmod<double>(const sweep3d::fmod_params&, sweep_report*);
template std::vector<float> sweep3d_dd<float>(const sweep3d::dd_params&, sweep_report*);
template std::vector<double> sweep3d_dd<double>(const sweep3d::dd_params&, sweep_report*);

}  // namespace swgpu::gpu
