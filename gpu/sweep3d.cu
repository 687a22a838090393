#include "gpu/sweep3d.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <cooperative_groups.h>

#include "core/error.hpp"
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

// One slot of step t of the fmod sweep. A slot with no point now keeps its value: 0 until its first point, its last
// point after (both what the next step must read there).
template <class T>
__device__ void fmod_slot(index_t n, index_t t, index_t j, index_t k, int loops, T c, const T* __restrict__ prev,
                          T* __restrict__ cur, T* __restrict__ grid) {
    const index_t i = t - j - k;
    if (i < 0 || i >= n) return;
    const index_t s = j * n + k;
    const T top = prev[s];  // 0 when i == 0: the slot had no point yet
    const T north = j > 0 ? prev[s - n] : T(0);
    const T west = k > 0 ? prev[s - 1] : T(0);
    const T v = sweep3d::fmod_point(sweep3d::initial_value<T>(i, j, k), top, north, west, c, loops);
    cur[s] = v;
    grid[(i * n + j) * n + k] = v;
}

template <class T>
__global__ void fmod_step(index_t n, index_t t, step_range r, int loops, T c, const T* __restrict__ prev,
                          T* __restrict__ cur, T* __restrict__ grid) {
    const index_t k = r.k_lo + index_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k <= r.k_hi) fmod_slot(n, t, r.j_lo + index_t(blockIdx.y), k, loops, c, prev, cur, grid);
}

// Faces of plane buffers: [angle][x, y, z][j][k].
template <class T>
__device__ void dd_slot(index_t n, index_t t, index_t j, index_t k, int angles, const sweep3d::dd_angle<T>* coef,
                        T source, T weight, const T* __restrict__ prev, T* __restrict__ cur, T* __restrict__ phi) {
    const index_t i = t - j - k;
    if (i < 0 || i >= n) return;
    const index_t plane = n * n, s = j * n + k;
    T sum = T(0);
    for (int a = 0; a < angles; ++a) {
        const T* pa = prev + index_t(a) * 3 * plane;
        T* ca = cur + index_t(a) * 3 * plane;
        T x = pa[s];                                 // from (i-1, j, k)
        T y = j > 0 ? pa[plane + s - n] : T(0);      // from (i, j-1, k)
        T z = k > 0 ? pa[2 * plane + s - 1] : T(0);  // from (i, j, k-1)
        const sweep3d::dd_angle<T> c = coef[a];
        const T psi = sweep3d::dd_cell(c, source, x, y, z);
        sum = sweep3d::add_rn(sum, sweep3d::mul_rn(psi, weight));
        ca[s] = x;
        ca[plane + s] = y;
        ca[2 * plane + s] = z;
    }
    phi[(i * n + j) * n + k] = sum;
}

template <class T>
__global__ void dd_step(index_t n, index_t t, step_range r, int angles, const sweep3d::dd_angle<T>* coef, T source,
                        T weight, const T* __restrict__ prev, T* __restrict__ cur, T* __restrict__ phi) {
    const index_t k = r.k_lo + index_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k <= r.k_hi) dd_slot(n, t, r.j_lo + index_t(blockIdx.y), k, angles, coef, source, weight, prev, cur, phi);
}

__device__ step_range device_range_of(index_t n, index_t t) {
    step_range r;
    r.j_lo = t - 2 * (n - 1) > 0 ? t - 2 * (n - 1) : 0;
    r.j_hi = t < n - 1 ? t : n - 1;
    r.k_lo = t - r.j_hi - (n - 1) > 0 ? t - r.j_hi - (n - 1) : 0;
    r.k_hi = t - r.j_lo < n - 1 ? t - r.j_lo : n - 1;
    return r;
}

// Every step in one cooperative launch: the blocks share each step's slots (grid-stride) and meet at a grid barrier
// between steps, instead of a kernel launch per step (small grids have many short steps).
template <class T, class Slot>
__global__ void all_steps(index_t n, T* buf0, T* buf1, Slot slot) {
    auto grid = cooperative_groups::this_grid();
    const index_t stride = index_t(gridDim.x) * blockDim.x;
    for (index_t t = 0; t <= 3 * (n - 1); ++t) {
        const step_range r = device_range_of(n, t);
        const index_t width = r.k_hi - r.k_lo + 1, slots = (r.j_hi - r.j_lo + 1) * width;
        T* cur = (t & 1) ? buf1 : buf0;
        const T* prev = (t & 1) ? buf0 : buf1;
        for (index_t x = index_t(blockIdx.x) * blockDim.x + threadIdx.x; x < slots; x += stride)
            slot(t, r.j_lo + x / width, r.k_lo + x % width, prev, cur);
        grid.sync();
    }
}

// The schedule: a launch per step, or every step in one cooperative launch (SWGPU_SWEEP_SCHEDULE=launch|grid forces
// one, for measurements). Grids up to grid_barrier_max take the grid barrier.
constexpr index_t grid_barrier_max = 384;
bool use_grid_barrier(index_t n) {
    if (const char* e = std::getenv("SWGPU_SWEEP_SCHEDULE")) return std::strcmp(e, "grid") == 0;
    return n <= grid_barrier_max;
}

template <class T, class Slot>
void launch_all_steps(index_t n, T* buf0, T* buf1, Slot slot) {
    const auto kernel = &all_steps<T, Slot>;
    int device = 0, sms = 0, per_sm = 0;
    SWGPU_CUDA_CHECK(cudaGetDevice(&device));
    SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    int threads = step_threads;  // SWGPU_SWEEP_BLOCK: threads per block, for measurements
    if (const char* e = std::getenv("SWGPU_SWEEP_BLOCK")) threads = std::clamp(std::atoi(e) / 32 * 32, 32, 1024);
    SWGPU_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
    if (per_sm < 1) throw runtime_failure("sweep3d: the grid-barrier kernel does not fit on this GPU");
    const index_t widest = (n * n + threads - 1) / threads;
    const unsigned blocks = static_cast<unsigned>(std::max<index_t>(1, std::min<index_t>(widest, index_t(per_sm) * sms)));
    void* args[] = {&n, &buf0, &buf1, &slot};
    SWGPU_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(blocks),
                                                 dim3(static_cast<unsigned>(threads)), args, 0, nullptr));
}

template <class T>
struct fmod_slots {
    index_t n;
    int loops;
    T c;
    T* grid;
    __device__ void operator()(index_t t, index_t j, index_t k, const T* prev, T* cur) const {
        fmod_slot(n, t, j, k, loops, c, prev, cur, grid);
    }
};
template <class T>
struct dd_slots {
    index_t n;
    int angles;
    const sweep3d::dd_angle<T>* coef;
    T source, weight;
    T* phi;
    __device__ void operator()(index_t t, index_t j, index_t k, const T* prev, T* cur) const {
        dd_slot(n, t, j, k, angles, coef, source, weight, prev, cur, phi);
    }
};

// Runs the steps, one launch each (step(t, range, blocks)) or all in one cooperative launch (all()), timed.
template <class Step, class All>
void run_steps(index_t n, sweep_report* report, Step&& step, All&& all) {
    cuda_event start, stop;
    start.record(nullptr);
    if (use_grid_barrier(n)) {
        all();
        SWGPU_CUDA_CHECK_LAUNCH("sweep3d all steps");
    } else {
        for (index_t t = 0; t <= 3 * (n - 1); ++t) {
            const step_range r = range_of(n, t);
            const dim3 grid(static_cast<unsigned>((r.k_hi - r.k_lo + step_threads) / step_threads),
                            static_cast<unsigned>(r.j_hi - r.j_lo + 1));
            step(t, r, grid);
            SWGPU_CUDA_CHECK_LAUNCH("sweep3d step");
        }
    }
    stop.record(nullptr);
    stop.synchronize();
    if (report) {
        report->kernel_ms = stop.since(start);
        report->steps = static_cast<int>(3 * (n - 1) + 1);
        report->grid_barrier = use_grid_barrier(n);
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
    run_steps(
        n, report,
        [&](index_t t, const step_range& r, dim3 blocks) {
            fmod_step<T><<<blocks, step_threads>>>(n, t, r, p.loops, T(p.c), bufs[(t + 1) & 1], bufs[t & 1],
                                                   grid.data());
        },
        [&] { launch_all_steps(n, bufs[0], bufs[1], fmod_slots<T>{n, p.loops, T(p.c), grid.data()}); });
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
    run_steps(
        n, report,
        [&](index_t t, const step_range& r, dim3 blocks) {
            dd_step<T><<<blocks, step_threads>>>(n, t, r, p.angles, d_coef.data(), T(p.source), weight,
                                                 bufs[(t + 1) & 1], bufs[t & 1], phi.data());
        },
        [&] {
            launch_all_steps(n, bufs[0], bufs[1],
                             dd_slots<T>{n, p.angles, d_coef.data(), T(p.source), weight, phi.data()});
        });
    return phi.download(plane * static_cast<std::size_t>(n));
}

template std::vector<float> sweep3d_fmod<float>(const sweep3d::fmod_params&, sweep_report*);
template std::vector<double> sweep3d_fmod<double>(const sweep3d::fmod_params&, sweep_report*);
template std::vector<float> sweep3d_dd<float>(const sweep3d::dd_params&, sweep_report*);
template std::vector<double> sweep3d_dd<double>(const sweep3d::dd_params&, sweep_report*);

}  // namespace swgpu::gpu
