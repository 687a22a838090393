#include "gpu/numerics/sweep3d.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <cooperative_groups.h>

#include "core/error.hpp"
#include "core/tuning.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/flags.cuh"
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

// The fmod sweep in 3-D tiles of TS^3 points, one block of TS^2 threads (one per (j, k) column of the tile) per tile.
// Blocks take tiles from a ticket counter in the order of their diagonals ti + tj + tk (`order`), wait for the done
// flags of the (up to) three tiles upstream, load their inflow faces from the grid (through L2) into shared memory,
// sweep the tile's own hyperplanes with a block barrier between them, write the tile to the grid row by row (coalesced
// along k) and raise their own flag. A tile only waits for tiles of earlier tickets, whose blocks are running: no
// deadlock, whatever the grid size, and no barrier or launch between diagonals. The points and their inputs are those
// of every other schedule, so are the bits (the initial values from a table of T(m) / T(10), the same expression).
template <class T, int TS>
__global__ void __launch_bounds__(TS * TS) fmod_tiles(index_t n, index_t nt, int loops, T c, const unsigned* __restrict__ order,
                                                      unsigned* counter, unsigned* done, T* grid) {
    constexpr int E = TS + 1;  // s[a][b][c], a, b, c in 0..TS: index 0 is the inflow face, point (a, b, c) at +1
    __shared__ T s[E * E * E];
    __shared__ T tenths[10];
    __shared__ unsigned ticket;
    const int tid = static_cast<int>(threadIdx.x);
    if (tid == 0) ticket = atomicAdd(counter, 1u);
    if (tid < 10) tenths[tid] = T(tid) / T(10);
    __syncthreads();
    const unsigned packed = order[ticket];
    const index_t ti = packed >> 20, tj = (packed >> 10) & 1023u, tk = packed & 1023u;
    const auto id = [&](index_t a, index_t b, index_t k) { return (a * nt + b) * nt + k; };
    if (tid == 0) {
        unsigned spins = 0;
        std::uint64_t since = 0;
        if (ti > 0) while (load_acquire(done + id(ti - 1, tj, tk)) == 0) spin_backoff(spins, since);
        if (tj > 0) while (load_acquire(done + id(ti, tj - 1, tk)) == 0) spin_backoff(spins, since);
        if (tk > 0) while (load_acquire(done + id(ti, tj, tk - 1)) == 0) spin_backoff(spins, since);
    }
    __syncthreads();
    const index_t i0 = ti * TS, j0 = tj * TS, k0 = tk * TS;
    const int ei = static_cast<int>(n - i0 < TS ? n - i0 : TS), ej = static_cast<int>(n - j0 < TS ? n - j0 : TS),
              ek = static_cast<int>(n - k0 < TS ? n - k0 : TS);
    const auto at = [&](index_t i, index_t j, index_t k) { return __ldcg(grid + (i * n + j) * n + k); };
    {  // the three inflow faces: (0, b, c), (a, 0, c), (a, b, 0)
        const int u = tid / TS, v = tid % TS;
        s[(0 * E + u + 1) * E + v + 1] = (i0 > 0 && u < ej && v < ek) ? at(i0 - 1, j0 + u, k0 + v) : T(0);
        s[((u + 1) * E + 0) * E + v + 1] = (j0 > 0 && u < ei && v < ek) ? at(i0 + u, j0 - 1, k0 + v) : T(0);
        s[((u + 1) * E + v + 1) * E + 0] = (k0 > 0 && u < ei && v < ej) ? at(i0 + u, j0 + v, k0 - 1) : T(0);
    }
    __syncthreads();
    const int b = tid / TS, cc = tid % TS;
    const int m0 = static_cast<int>((i0 + 2 * (j0 + b) + 3 * (k0 + cc)) % 10);  // (i + 2j + 3k) mod 10 at a = 0
    for (int u = 0; u <= ei + ej + ek - 3; ++u) {
        const int a = u - b - cc;
        if (a >= 0 && a < ei && b < ej && cc < ek) {
            const T top = s[(a * E + b + 1) * E + cc + 1], north = s[((a + 1) * E + b) * E + cc + 1],
                    west = s[((a + 1) * E + b + 1) * E + cc];
            s[((a + 1) * E + b + 1) * E + cc + 1] = sweep3d::fmod_point(tenths[(m0 + a) % 10], top, north, west, c, loops);
        }
        __syncthreads();
    }
    for (int e = tid; e < ei * ej * TS; e += TS * TS) {
        const int a = e / (ej * TS), rest = e % (ej * TS), bb = rest / TS, k = rest % TS;
        if (k < ek) grid[((i0 + a) * n + j0 + bb) * n + k0 + k] = s[((a + 1) * E + bb + 1) * E + k + 1];
    }
    __threadfence();
    __syncthreads();
    if (tid == 0) store_release(done + id(ti, tj, tk), 1u);
}

// The schedule: the fmod sweep in tiles (a launch per diagonal of tiles); the dd sweep, and the fmod sweep when the
// tuning key sweep.schedule=launch|grid|tiles asks (for measurements and tests), a launch per hyperplane or every
// hyperplane in one cooperative launch, which grids up to grid_barrier_max take.
constexpr index_t grid_barrier_max = 384;
enum class sweep_schedule { launch, grid, tiles };
sweep_schedule schedule_for(index_t n, bool fmod) {
    const std::string asked = tuning::text("sweep.schedule", device_arch());
    if (asked == "grid") return sweep_schedule::grid;
    if (asked == "tiles" && fmod) return sweep_schedule::tiles;
    if (asked == "launch") return sweep_schedule::launch;
    if (fmod) return sweep_schedule::tiles;
    return n <= grid_barrier_max ? sweep_schedule::grid : sweep_schedule::launch;
}
const char* name_of(sweep_schedule s) {
    return s == sweep_schedule::grid ? "grid" : s == sweep_schedule::tiles ? "tiles" : "launch";
}

// Tile edge: 8 up to N = 256 (more tiles per diagonal to fill the GPU), else 16; the tuning key sweep.tile=8|16
// forces one (0: this choice).
int tile_edge(index_t n) {
    if (const std::int64_t forced = tuning::integer("sweep.tile", device_arch())) return forced == 16 ? 16 : 8;
    return n <= 256 ? 8 : 16;
}

template <class T, int TS>
void launch_fmod_tiles(index_t n, int loops, T c, T* grid, sweep_report* report) {
    const index_t nt = (n + TS - 1) / TS;
    std::vector<unsigned> order;  // tiles by diagonal, packed ti << 20 | tj << 10 | tk (nt <= 512)
    order.reserve(static_cast<std::size_t>(nt * nt * nt));
    for (index_t d = 0; d <= 3 * (nt - 1); ++d)
        for (index_t ti = std::max<index_t>(0, d - 2 * (nt - 1)); ti <= std::min(d, nt - 1); ++ti)
            for (index_t tj = std::max<index_t>(0, d - ti - (nt - 1)); tj <= std::min(d - ti, nt - 1); ++tj)
                order.push_back(static_cast<unsigned>((ti << 20) | (tj << 10) | (d - ti - tj)));
    device_buffer<unsigned> d_order, flags(order.size() + 1);
    d_order.upload(order);
    flags.zero();
    fmod_tiles<T, TS><<<static_cast<unsigned>(order.size()), TS * TS>>>(n, nt, loops, c, d_order.data(), flags.data(),
                                                                       flags.data() + 1, grid);
    SWGPU_CUDA_CHECK_LAUNCH("sweep3d tiles");
    if (report) report->steps = static_cast<int>(3 * (nt - 1) + 1);
}

template <class T, class Slot>
void launch_all_steps(index_t n, T* buf0, T* buf1, Slot slot) {
    const auto kernel = &all_steps<T, Slot>;
    int device = 0, sms = 0, per_sm = 0;
    SWGPU_CUDA_CHECK(cudaGetDevice(&device));
    SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    // Threads per block: the tuning key sweep.block (256, as the launches per step; other values for measurements).
    const std::int64_t asked = tuning::integer("sweep.block", device_arch());
    const int threads = static_cast<int>(std::clamp<std::int64_t>(asked / 32 * 32, 32, 1024));
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

// Runs the steps, one launch each (step(t, range, blocks)), all in one cooperative launch (all()) or in tiles
// (tiles()), timed.
template <class Step, class All, class Tiles>
void run_steps(index_t n, sweep_schedule sched, sweep_report* report, Step&& step, All&& all, Tiles&& tiles) {
    cuda_event start, stop;
    start.record(nullptr);
    if (report) report->steps = static_cast<int>(3 * (n - 1) + 1);
    if (sched == sweep_schedule::tiles) {
        tiles();
    } else if (sched == sweep_schedule::grid) {
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
        report->schedule = name_of(sched);
    }
}

}  // namespace

template <class T>
std::vector<T> sweep3d_fmod(const sweep3d::fmod_params& p, sweep_report* report) {
    sweep3d::check(p);
    std::vector<T> out(static_cast<std::size_t>(p.n * p.n * p.n));
    sweep3d_fmod_into(p, std::span<T>(out), report);
    return out;
}

template <class T>
void sweep3d_fmod_into(const sweep3d::fmod_params& p, std::span<T> out, sweep_report* report) {
    sweep3d::check(p);
    const index_t n = p.n;
    if (out.size() != static_cast<std::size_t>(n * n * n))
        throw error(exit_code::bad_command_line, "sweep3d: the grid holds " + std::to_string(out.size()) +
                                                     " values; N^3 = " + std::to_string(n * n * n) + " expected");
    const auto plane = static_cast<std::size_t>(n * n);
    device_buffer<T> a(plane), b(plane), grid(plane * static_cast<std::size_t>(n));
    a.zero();
    b.zero();
    T* bufs[2] = {a.data(), b.data()};
    run_steps(
        n, schedule_for(n, true), report,
        [&](index_t t, const step_range& r, dim3 blocks) {
            fmod_step<T><<<blocks, step_threads>>>(n, t, r, p.loops, T(p.c), bufs[(t + 1) & 1], bufs[t & 1],
                                                   grid.data());
        },
        [&] { launch_all_steps(n, bufs[0], bufs[1], fmod_slots<T>{n, p.loops, T(p.c), grid.data()}); },
        [&] {
            if (tile_edge(n) == 8) launch_fmod_tiles<T, 8>(n, p.loops, T(p.c), grid.data(), report);
            else launch_fmod_tiles<T, 16>(n, p.loops, T(p.c), grid.data(), report);
        });
    grid.download_to(out.data(), out.size());
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
        n, schedule_for(n, false), report,
        [&](index_t t, const step_range& r, dim3 blocks) {
            dd_step<T><<<blocks, step_threads>>>(n, t, r, p.angles, d_coef.data(), T(p.source), weight,
                                                 bufs[(t + 1) & 1], bufs[t & 1], phi.data());
        },
        [&] {
            launch_all_steps(n, bufs[0], bufs[1],
                             dd_slots<T>{n, p.angles, d_coef.data(), T(p.source), weight, phi.data()});
        },
        [] {});
    return phi.download(plane * static_cast<std::size_t>(n));
}

template std::vector<float> sweep3d_fmod<float>(const sweep3d::fmod_params&, sweep_report*);
template void sweep3d_fmod_into<float>(const sweep3d::fmod_params&, std::span<float>, sweep_report*);
template void sweep3d_fmod_into<double>(const sweep3d::fmod_params&, std::span<double>, sweep_report*);
template std::vector<double> sweep3d_fmod<double>(const sweep3d::fmod_params&, sweep_report*);
template std::vector<float> sweep3d_dd<float>(const sweep3d::dd_params&, sweep_report*);
template std::vector<double> sweep3d_dd<double>(const sweep3d::dd_params&, sweep_report*);

}  // namespace swgpu::gpu
