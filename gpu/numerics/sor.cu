#include "gpu/numerics/sor.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "core/error.hpp"
#include "core/tuning.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/flags.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/row_sync.cuh"
#include "gpu/engine/tiled_p2p.cuh"
#include "gpu/engine/warp_ops.cuh"
#include "gpu/engine/weighted_scan.cuh"

namespace swgpu::gpu {

namespace {

using sor::index_t;
constexpr int threads = 256;

__device__ void update(index_t n, double* u, const double* h2f, double omega, index_t i, index_t j) {
    const index_t s = i * n + j;
    u[s] = sor::point(u[s], u[s - n], u[s + n], u[s - 1], u[s + 1], h2f[s], omega);
}

// The interior points of anti-diagonal t (i + j == t), i from i_lo.
__global__ void diagonal(index_t n, index_t t, index_t i_lo, index_t count, double* u, const double* h2f,
                         double omega) {
    const index_t x = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (x < count) update(n, u, h2f, omega, i_lo + x, t - i_lo - x);
}

// The points of one colour ((i + j) % 2 == colour), one thread each.
__global__ void colour_pass(index_t n, int colour, double* u, const double* h2f, double omega) {
    const index_t half = (n - 2 + 1) / 2;
    const index_t i = 1 + index_t(blockIdx.y);
    const index_t jj = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (jj >= half) return;
    const index_t j = 1 + ((i + 1 + colour) & 1) + 2 * jj;
    if (j < n - 1) update(n, u, h2f, omega, i, j);
}

// A whole red-black sweep in one pass over the grid, from `old` into `out` (both full grids; the boundary of `out`
// already holds the boundary). Red points ((i + j) even) take point() of their old black neighbours, black points
// point() of their new red ones, as the CPU's two colour passes do, so the values are the CPU's bit for bit; reading
// one grid and writing the other lets every block work alone. Block (x, y) writes columns [j0, j0 + rb_cols) of rows
// [i0, i0 + rb_rows); thread t holds column c = j0 - 1 + t (t = 0 .. 255, one column of halo each side) and walks
// down the rows: at step r it updates the red points of row r (old rows r-1..r+1, the row r neighbours from shared
// memory) and the black points of row r-1 (the red-updated rows r-2..r, the row r-1 neighbours from shared memory),
// then stores row r-1 whole (coalesced). The next rows of `old` and h^2 f are loaded one step ahead. One
// __syncthreads per row: the shared rows alternate between two buffers. With Residual, the block also sums
// r^2 = ((h^2 f - h^2 A u) / h^2)^2 over its points of the input iterate (as lex_strips does) into *res.
constexpr int rb_threads = 256;
constexpr index_t rb_cols = rb_threads - 2;
constexpr index_t rb_rows = 64;

template <bool Residual>
__global__ void __launch_bounds__(rb_threads) redblack_sweep(index_t n, const double* __restrict__ old,
                                                             double* __restrict__ out, const double* __restrict__ h2f,
                                                             double omega, double inv_h2, double* res) {
    __shared__ double s_old[2][rb_threads + 2];
    __shared__ double s_mid[2][rb_threads];
    const int t = static_cast<int>(threadIdx.x);
    const index_t j0 = 1 + index_t(blockIdx.x) * rb_cols, i0 = 1 + index_t(blockIdx.y) * rb_rows;
    const index_t c = j0 - 1 + t;
    const bool in_grid = c <= n - 1;                       // a column this thread loads
    const bool interior_c = c >= 1 && c <= n - 2;
    const bool writes = t >= 1 && t <= rb_threads - 2 && interior_c;
    const index_t last = min(i0 + rb_rows, n - 1);         // the last step's row
    const auto ld = [&](const double* a, index_t r, index_t col) { return __ldg(a + r * n + col); };
    // old rows r-1, r, r+1 and the one loaded ahead (r+2) at column c; edge columns j0-2 and j0+255 for threads 0, 255
    double o_up = 0, o_cur = 0, o_dn = 0, o_nx = 0, e_nx = 0, h_prev = 0, h_cur = 0, h_nx = 0;
    double m_a = 0, m_b = 0, m_c = 0;  // red-updated values of rows r-2, r-1, r at column c
    const index_t edge = t == 0 ? c - 1 : c + 1;
    const bool edge_ok = (t == 0 || t == rb_threads - 1) && edge >= 0 && edge <= n - 1;
    index_t r = i0 - 1;
    if (in_grid) {
        o_cur = r >= 1 ? ld(old, r - 1, c) : 0.0;  // becomes o_up at the first step
        o_dn = ld(old, r, c);
        o_nx = ld(old, r + 1, c);
        h_nx = ld(h2f, r, c);
    }
    if (edge_ok) e_nx = ld(old, r, edge);
    double r2 = 0;
    for (int buf = 0; r <= last; ++r, buf ^= 1) {
        o_up = o_cur;
        o_cur = o_dn;
        o_dn = o_nx;
        h_prev = h_cur;
        h_cur = h_nx;
        const double e_cur = e_nx;
        o_nx = 0;
        h_nx = 0;
        e_nx = 0;
        if (in_grid) {
            if (r + 2 <= n - 1) o_nx = ld(old, r + 2, c);
            if (r + 1 <= n - 1) h_nx = ld(h2f, r + 1, c);
        }
        if (edge_ok && r + 1 <= n - 1) e_nx = ld(old, r + 1, edge);
        s_old[buf][t + 1] = o_cur;
        if (t == 0) s_old[buf][0] = e_cur;
        if (t == rb_threads - 1) s_old[buf][rb_threads + 1] = e_cur;
        __syncthreads();
        const bool interior = interior_c && r >= 1 && r <= n - 2;
        const double left = s_old[buf][t], right = s_old[buf][t + 2];
        double mid = o_cur;
        if (interior && ((r + c) & 1) == 0) mid = sor::point(o_cur, o_up, o_dn, left, right, h_cur, omega);
        if constexpr (Residual) {
            if (interior && writes && r >= i0 && r < i0 + rb_rows) {
                const double e = (h_cur - (4 * o_cur - o_up - o_dn - left - right)) * inv_h2;
                r2 += e * e;
            }
        }
        s_mid[buf][t] = mid;
        m_a = m_b;
        m_b = m_c;
        m_c = mid;
        const index_t rp = r - 1;  // the row finished at this step
        if (rp >= i0 && writes) {
            double v = m_b;
            if (((rp + c) & 1) == 1)
                v = sor::point(m_b, m_a, m_c, s_mid[buf ^ 1][t - 1], s_mid[buf ^ 1][t + 1], h_prev, omega);
            out[rp * n + c] = v;
        }
    }
    if constexpr (Residual) {
        __shared__ double part[rb_threads / 32];
#pragma unroll
        for (int d = 16; d > 0; d /= 2) r2 += __shfl_down_sync(0xffffffffu, r2, d);
        if ((t & 31) == 0) part[t >> 5] = r2;
        __syncthreads();
        if (t == 0) {
            double total = 0;
            for (int w = 0; w < rb_threads / 32; ++w) total += part[w];
            atomicAdd(res, total);
        }
    }
}

// One step (row part pi, column part pj) of a half of the parallel MLSSOR: thread (x, y) runs the tile of subdomain
// (y, x) (sor::mlssor_tile, the CPU's code); no two tiles of a step write a point that another reads or writes.
__global__ void mlssor_step(index_t n, double* u, const double* h2f, double omega, int layers, index_t rows,
                            index_t cols, index_t sj_count, int pi, int pj, bool backward) {
    const index_t sj = index_t(blockIdx.x) * blockDim.x + threadIdx.x, si = index_t(blockIdx.y);
    if (sj < sj_count) sor::mlssor_tile(n, u, h2f, omega, layers, rows, cols, si, sj, pi, pj, backward);
}

// Sums of r^2 and f^2 over the interior (r = f - A u), into sums[0..1]: block (x, y) takes row 1 + y, columns
// 1 + x * threads ... (no division per point), then one atomic add per block and sum.
__global__ void residual_sums(index_t n, const double* u, const double* f, double inv_h2, double* sums) {
    __shared__ double part[2][threads];
    const index_t i = 1 + index_t(blockIdx.y), j = 1 + index_t(blockIdx.x) * blockDim.x + threadIdx.x;
    double r2 = 0, f2 = 0;
    if (j < n - 1) {
        const index_t s = i * n + j;
        const double au = (4 * u[s] - u[s - n] - u[s + n] - u[s - 1] - u[s + 1]) * inv_h2;
        const double r = f[s] - au;
        r2 = r * r;
        f2 = f[s] * f[s];
    }
    part[0][threadIdx.x] = r2;
    part[1][threadIdx.x] = f2;
    __syncthreads();
    for (int w = threads / 2; w > 0; w /= 2) {
        if (int(threadIdx.x) < w) {
            part[0][threadIdx.x] += part[0][threadIdx.x + w];
            part[1][threadIdx.x] += part[1][threadIdx.x + w];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(&sums[0], part[0][0]);
        atomicAdd(&sums[1], part[1][0]);
    }
}

}  // namespace

namespace sor_detail {

// A lexicographic sweep as a wavefront problem of the engine (core/engine/wavefront.hpp) over (+, ·): the interior rows in
// order, and in a row  x_{j+1} = a x_j + b_j  with x_j the new value left of point j, a = omega / 4 and
//   b_j = (1 - omega) u_old[j] + (omega / 4) (((up_new + down_old) + right_old) + h^2 f),
// so a row is a weighted scan (the compensation method) once the row above is done. Reads `old`, writes `out` (both
// full grids with the boundary); `reverse` sweeps from the last interior point backwards (ssor's second half). The
// result is the lexicographic sweep's up to rounding: the scan re-associates the row.
struct sor_lex_problem {
    using op = plus_times<double>;
    using cell = double;
    struct gathered {
        double b;
    };
    static constexpr bool constant_weight = true;

    index_t n = 0;
    const double* old = nullptr;
    const double* h2f = nullptr;
    double* out = nullptr;
    double omega = 1;
    bool reverse = false;

    SWGPU_HD index_t rows() const { return n - 2; }
    SWGPU_HD index_t cols() const { return n - 2; }
    // Full-grid index of interior point (i, j) in the sweep's order, and the steps to the next row and column.
    SWGPU_HD index_t at(index_t i, index_t j) const { return reverse ? (n - 2 - i) * n + (n - 2 - j) : (i + 1) * n + j + 1; }
    SWGPU_HD index_t row_step() const { return reverse ? -n : n; }
    SWGPU_HD index_t col_step() const { return reverse ? -1 : 1; }
    SWGPU_HD cell top(index_t j) const { return old[at(-1, j)]; }     // the boundary row before the first
    SWGPU_HD cell left(index_t i) const { return old[at(i, -1)]; }    // the boundary column before the first
    SWGPU_HD double incoming(index_t i) const { return old[at(i, -1)]; }
    SWGPU_HD double weight(index_t) const { return omega * 0.25; }
    SWGPU_HD gathered gather(index_t i, index_t j, const cell& up, const cell&) const {
        const index_t s = at(i, j);
        const double around = ((up + old[s + row_step()]) + old[s + col_step()]) + h2f[s];
        return {(1 - omega) * old[s] + omega * 0.25 * around};
    }
    SWGPU_HD linear_map<op> carry(index_t, index_t, const gathered& g) const { return {omega * 0.25, g.b}; }
    SWGPU_HD cell finish(index_t i, index_t j, const gathered& g, double x) {
        const double v = x * (omega * 0.25) + g.b;
        out[at(i, j)] = v;
        return v;
    }
};
static_assert(compensable_problem<sor_lex_problem> && constant_weight_problem<sor_lex_problem>);
}  // namespace sor_detail

namespace {

using sor_detail::sor_lex_problem;
using sor_algebra = weighted_algebra<plus_times<double>>;

// ---- the lexicographic sweep in column strips, several sweeps at once ----------------------------------------------
//
// Block c of a sweep owns the strip of columns [c·1024, (c+1)·1024) of every row (4 per thread) and walks down the
// rows in the sweep's order, keeping the new row above in registers. A row's recurrence x_j = a x_{j-1} + b_j over the
// strip is a scan of affine maps (thread: its 4 points composed; warp: shuffles; block: the warps' maps through shared
// memory, one barrier per row), applied to x_in, the new value left of the strip, which block c-1 has written (it
// publishes its progress every publish_rows rows with a release store; each warp's lane 0 waits with an acquire
// load). So no row waits for a flag of the row above: the strips run down the grid together, each a few rows behind
// the one to its left, and a row costs one block barrier instead of a hop through L2; the x_in of a strip arrive 8
// rows at a time. The next row's inputs are in flight while a row is computed (loading 4 rows ahead was slower: 197
// registers). Like the tiles, the scan re-associates the row: the lexicographic sweep up to rounding.
//
// A sweep is a chain of dependent rows (about 1.3 µs each, whatever the strip's width), so one sweep leaves most of
// the GPU idle. A launch therefore runs `sweeps` consecutive sweeps of one direction at once, one row of blocks per
// sweep, sweep q reading grid q % 2 and writing the other: sweep q's strip c takes rows [s, s + 8) once sweep q-1's
// strip c has finished the rows up to s + 10 (its rows s..s+9 are read: centre, down, and one row ahead) and strip
// c+1 those up to s + 9 (the right neighbours, one row ahead). The same waits protect what sweep q overwrites (sweep
// q-2's iterate, which sweep q-1 has then finished reading) and what sweep q-1 still reads of its input at the strip
// edges. Every block waits only for blocks of lower index, and the caller launches no more blocks than the GPU holds
// at once. With Residual, each block also adds up r^2 = (f - A u)^2 over its strip of its input iterate (the rows
// above, below, left and right of a point are all in hand but the strip's left edge, read from the input grid, which
// sweep q+1 overwrites only after this strip has passed the row), so the residuals of the iterates inside a batch
// come at no extra pass.
constexpr int strip_threads = 256;
constexpr index_t strip_cols = 4 * strip_threads;
constexpr index_t publish_rows = 8;

// x -> a x + b: the engine's linear map over (+,·) (core/engine/linear_map.hpp), composed by its then() and scanned
// over a warp by its warp_scan_maps (gpu/engine/warp_ops.cuh).
using affine = linear_map<plus_times<double>>;

// Spins (lane 0 of a warp) until *flag >= need; `seen` keeps the last value read.
__device__ __forceinline__ void wait_rows(const unsigned* flag, unsigned need, unsigned& seen) {
    unsigned spins = 0;
    std::uint64_t since = 0;
    while (seen < need) {
        seen = load_acquire(flag);
        if (seen < need) spin_backoff(spins, since);
    }
}

struct strip_batch {
    sor_detail::sor_lex_problem p;  // old: the first sweep's input; out: the other grid
    unsigned* done = nullptr;       // sweeps x strips: rows finished
    index_t strips = 1;
    double inv_h2 = 0;              // Residual: 1/h^2, and res[q] += the sum of r^2 of sweep q's input
    double* res = nullptr;
};

template <bool Residual>
__global__ void __launch_bounds__(strip_threads) lex_strips(strip_batch sb) {
    __shared__ affine wtot[2][strip_threads / 32];
    const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
    const index_t q = blockIdx.x / sb.strips, c = blockIdx.x % sb.strips;
    sor_detail::sor_lex_problem p = sb.p;
    if (q & 1) {
        double* in = p.out;
        p.out = const_cast<double*>(p.old);
        p.old = in;
    }
    unsigned* const done = sb.done + q * sb.strips;
    const unsigned* const prev = done - sb.strips;  // sweep q-1's (q > 0)
    const index_t rows = p.rows(), cols = p.cols(), j0 = c * strip_cols + 4 * tid;
    const double a = p.omega * 0.25, keep = 1 - p.omega;
    const index_t rs = p.row_step(), cs = p.col_step();
    const bool right_strip = c + 1 < sb.strips;
    unsigned seen = 0, seen_prev = 0, seen_right = 0;
    // Before rows [start, start + publish_rows): sweep q-1 far enough ahead in this strip and the next.
    const auto wait_previous = [&](index_t start) {
        if (q == 0) return;
        if (lane == 0) {
            wait_rows(prev + c, static_cast<unsigned>(min(rows, start + publish_rows + 2)), seen_prev);
            if (right_strip) wait_rows(prev + c + 1, static_cast<unsigned>(min(rows, start + publish_rows + 1)), seen_right);
        }
        __syncwarp();
    };
    wait_previous(0);
    bool ok[4];
    // This row's values of the input (centre; down: the row below; above: the row above, for the residual), the new
    // row above (up), h^2 f, and the input's values right of the thread's last point and left of its first.
    double up[4], centre[4], down[4], f[4], above[4], right = 0, left = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        ok[k] = j0 + k < cols;
        const index_t s = p.at(0, min(j0 + k, cols));  // past the last column: the boundary's
        up[k] = ok[k] ? __ldcg(p.old + p.at(-1, j0 + k)) : 0.0;  // the boundary row above the first
        above[k] = up[k];
        centre[k] = __ldcg(p.old + s);
        down[k] = __ldcg(p.old + s + rs);
        f[k] = p.h2f[s];
    }
    // right: lane 31's, the others take their neighbour's centre by a shuffle; left: likewise, lane 0's
    if (lane == 31 && ok[3]) right = __ldcg(p.old + p.at(0, j0 + 4));
    if (Residual && lane == 0 && ok[0]) left = __ldcg(p.old + p.at(0, j0 - 1));
    double r2 = 0;
    double left_next = c == 0 ? p.left(0) : 0.0;  // strip 0: the boundary column, a row ahead
    double x_group = 0;  // lane k: x_in of row (group start + k), for the other strips
    for (index_t i = 0; i < rows; ++i) {
        const index_t start = i - i % publish_rows;
        if (i == start && i > 0) wait_previous(start);
        // the next row's inputs, in flight while this row is computed (its centre is this row's down)
        double nd[4] = {}, nf[4] = {}, nright = 0, nleft = 0;
        const bool more = i + 1 < rows;
        const double left_now = left_next;
        if (c == 0) left_next = more ? p.left(i + 1) : 0.0;
        if (more) {
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const index_t s = p.at(i + 1, min(j0 + k, cols));
                nd[k] = __ldcg(p.old + s + rs);
                nf[k] = p.h2f[s];
            }
            if (lane == 31 && ok[3]) nright = __ldcg(p.old + p.at(i + 1, j0 + 4));
            if (Residual && lane == 0 && ok[0]) nleft = __ldcg(p.old + p.at(i + 1, j0 - 1));
        }
        double right3 = __shfl_down_sync(0xffffffffu, centre[0], 1);
        if (lane == 31) right3 = right;
        double b[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const double r = k < 3 ? centre[k + 1] : right3;
            b[k] = keep * centre[k] + a * (((up[k] + down[k]) + r) + f[k]);
        }
        if constexpr (Residual) {
            // r = f - A u at this row of the input iterate, as (h^2 f - h^2 A u) / h^2
            double left0 = __shfl_up_sync(0xffffffffu, centre[3], 1);
            if (lane == 0) left0 = left;
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const double l = k == 0 ? left0 : centre[k - 1], r = k < 3 ? centre[k + 1] : right3;
                const double res = (f[k] - (4 * centre[k] - above[k] - down[k] - l - r)) * sb.inv_h2;
                if (ok[k]) r2 += res * res;
            }
        }
        affine t{a, b[0]};
#pragma unroll
        for (int k = 1; k < 4; ++k) t = then(t, affine{a, b[k]});
        t = warp_scan_maps(t, lane);
        affine before = scan_detail::shfl_up(t, 1);
        if (lane == 0) before = affine{1, 0};
        if (lane == 31) wtot[i & 1][warp] = t;
        __syncthreads();
        affine pre{1, 0};
        for (int w = 0; w < warp; ++w) pre = then(pre, wtot[i & 1][w]);
        before = then(pre, before);
        double x_in;
        if (c == 0) {
            x_in = left_now;
        } else {
            // Strip c-1 publishes every publish_rows rows: wait for a whole group, then its x_in arrive together
            // (lane k loads that of row start + k) and each row takes its own by a shuffle.
            if (i == start) {
                if (lane == 0) wait_rows(done + c - 1, static_cast<unsigned>(min(rows, start + publish_rows)), seen);
                __syncwarp();
                if (lane < publish_rows && start + lane < rows) x_group = __ldcg(p.out + p.at(start + lane, c * strip_cols - 1));
            }
            x_in = __shfl_sync(0xffffffffu, x_group, static_cast<int>(i - start));
        }
        double x = before.a * x_in + before.b;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            x = a * x + b[k];
            if (ok[k]) p.out[p.at(i, j0 + k)] = x;
            up[k] = x;
            above[k] = centre[k];
            centre[k] = down[k];
            down[k] = nd[k];
            f[k] = nf[k];
        }
        right = nright;
        left = nleft;
        if ((i + 1) % publish_rows == 0 || i + 1 == rows) {
            __threadfence();
            __syncthreads();
            if (tid == 0) store_release(done + c, static_cast<unsigned>(i + 1));
        }
    }
    if constexpr (Residual) {
        __shared__ double part[strip_threads / 32];
#pragma unroll
        for (int d = 16; d > 0; d /= 2) r2 += __shfl_down_sync(0xffffffffu, r2, d);
        if (lane == 0) part[warp] = r2;
        __syncthreads();
        if (tid == 0) {
            double total = 0;
            for (int w = 0; w < strip_threads / 32; ++w) total += part[w];
            atomicAdd(sb.res + q, total);
        }
    }
}

// How a lexicographic sweep runs on the GPU: column strips (default), the compensation method on the engine's tiled
// P2P or row-sync schedule, or anti-diagonal by anti-diagonal (bit for bit the CPU's sweep). The tuning key sor.lex=
// strips|tiled|rowsync|diagonal chooses (tests and measurements).
enum class lex_schedule { strips, tiled, row_sync, diagonal };
lex_schedule lex_schedule_asked() {
    const std::string how = tuning::text("sor.lex", device_arch());
    if (how == "diagonal") return lex_schedule::diagonal;
    if (how == "rowsync") return lex_schedule::row_sync;
    if (how == "tiled") return lex_schedule::tiled;
    return lex_schedule::strips;
}

// The grids of a compensation sweep: it reads one and writes the other, so u alternates between two buffers.
struct lex_workspace {
    device_buffer<double> other;
    device_buffer<unsigned> done;  // the strips' progress
    tiled_workspace<sor_lex_problem> tiled;
    row_sync_workspace<sor_lex_problem, sor_algebra> rows;
};

// Optional: the residuals of the iterates inside a batch of strip sweeps (strip_batch's Residual).
struct batch_residuals {
    double inv_h2 = 0;
    double* res = nullptr;  // res[q] += the sum of r^2 of sweep q's input; zeroed by the caller
};

// How many sweeps one launch of the strips runs: as many as the GPU holds blocks for (every block must be resident,
// since blocks wait for each other), at most the tuning key sor.batch: 32 (more gained nothing measurable; 1 = one
// sweep per launch).
int strip_batch_limit(index_t n) {
    static const int resident = resident_blocks(lex_strips<true>, strip_threads);
    const index_t cap = std::max<index_t>(1, tuning::integer("sor.batch", device_arch()));
    const index_t strips = (n - 2 + strip_cols - 1) / strip_cols;
    return static_cast<int>(std::max<index_t>(1, std::min<index_t>(cap, resident / std::max<index_t>(strips, 1))));
}

// `count` lexicographic sweeps of one direction, from u into u (which swaps with ws.other as the sweeps alternate).
// The strips run them in batches of strip_batch_limit sweeps per launch; with `r`, strips only, r->res[q] receives the
// residual sums of the input of the q-th sweep (q < count; r->res holds count values, zeroed by the caller).
void compensation_sweeps(index_t n, device_buffer<double>& u, const double* h2f, double omega, bool reverse, int count,
                         lex_schedule how, lex_workspace& ws, const batch_residuals* r = nullptr) {
    if (ws.other.size() != u.size()) {
        ws.other.allocate(u.size());
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(ws.other.data(), u.data(), u.size() * sizeof(double), cudaMemcpyDeviceToDevice,
                                         nullptr));  // the boundary, which no sweep writes
    }
    sor_lex_problem p;
    p.n = n;
    p.h2f = h2f;
    p.omega = omega;
    p.reverse = reverse;
    if (how != lex_schedule::strips) {
        for (int k = 0; k < count; ++k) {
            p.old = u.data();
            p.out = ws.other.data();
            if (how == lex_schedule::row_sync) run_row_sync<sor_lex_problem, sor_algebra>(p, row_barrier::launch, ws.rows, nullptr);
            else run_tiled_p2p<sor_lex_problem, sor_algebra>(p, 0, 0, ws.tiled, nullptr);
            std::swap(u, ws.other);
        }
        return;
    }
    const index_t strips = (n - 2 + strip_cols - 1) / strip_cols;
    const int limit = strip_batch_limit(n);
    for (int done_sweeps = 0; done_sweeps < count;) {
        const int batch = std::min(limit, count - done_sweeps);
        strip_batch sb;
        p.old = u.data();
        p.out = ws.other.data();
        sb.p = p;
        sb.strips = strips;
        const auto flags = static_cast<std::size_t>(strips) * static_cast<std::size_t>(batch);
        ws.done.reserve(flags);
        SWGPU_CUDA_CHECK(cudaMemsetAsync(ws.done.data(), 0, flags * sizeof(unsigned), nullptr));
        sb.done = ws.done.data();
        const auto blocks = static_cast<unsigned>(flags);
        if (r) {
            sb.inv_h2 = r->inv_h2;
            sb.res = r->res + done_sweeps;
            lex_strips<true><<<blocks, strip_threads>>>(sb);
        } else {
            lex_strips<false><<<blocks, strip_threads>>>(sb);
        }
        SWGPU_CUDA_CHECK_LAUNCH("sor lex strips");
        if (batch % 2 == 1) std::swap(u, ws.other);
        done_sweeps += batch;
    }
}

// `count` red-black sweeps from u into u, one redblack_sweep launch each (u alternates with ws.other); with `r`,
// r->res[q] receives the residual sums of the input of the q-th sweep for q >= 1 (q < count; zeroed by the caller).
void redblack_sweeps(index_t n, device_buffer<double>& u, const double* h2f, double omega, int count,
                     lex_workspace& ws, const batch_residuals* r = nullptr) {
    if (n < 3) return;
    if (ws.other.size() != u.size()) {
        ws.other.allocate(u.size());
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(ws.other.data(), u.data(), u.size() * sizeof(double), cudaMemcpyDeviceToDevice,
                                         nullptr));  // the boundary, which no sweep writes
    }
    const dim3 grid(static_cast<unsigned>((n - 2 + rb_cols - 1) / rb_cols), static_cast<unsigned>((n - 2 + rb_rows - 1) / rb_rows));
    for (int q = 0; q < count; ++q) {
        if (r && q > 0)
            redblack_sweep<true><<<grid, rb_threads>>>(n, u.data(), ws.other.data(), h2f, omega, r->inv_h2, r->res + q);
        else
            redblack_sweep<false><<<grid, rb_threads>>>(n, u.data(), ws.other.data(), h2f, omega, 0.0, nullptr);
        SWGPU_CUDA_CHECK_LAUNCH("sor redblack sweep");
        std::swap(u, ws.other);
    }
}

void run_sweep(sor::method m, index_t n, double* u, const double* h2f, double omega, int layers) {
    const auto diagonal_at = [&](index_t t) {
        const index_t i_lo = std::max<index_t>(1, t - (n - 2)), i_hi = std::min<index_t>(n - 2, t - 1);
        const index_t count = i_hi - i_lo + 1;
        if (count <= 0) return;
        diagonal<<<static_cast<unsigned>((count + threads - 1) / threads), threads>>>(n, t, i_lo, count, u, h2f, omega);
        SWGPU_CUDA_CHECK_LAUNCH("sor diagonal");
    };
    switch (m) {
        case sor::method::lex:
            for (index_t t = 2; t <= 2 * (n - 2); ++t) diagonal_at(t);
            return;
        case sor::method::ssor:
            for (index_t t = 2; t <= 2 * (n - 2); ++t) diagonal_at(t);
            for (index_t t = 2 * (n - 2); t >= 2; --t) diagonal_at(t);
            return;
        case sor::method::mlssor:
            for (int k = 0; k < layers; ++k)
                for (index_t t = 2; t <= 2 * (n - 2); ++t) diagonal_at(t);
            for (int k = 0; k < layers; ++k)
                for (index_t t = 2 * (n - 2); t >= 2; --t) diagonal_at(t);
            return;
        case sor::method::redblack: {
            const index_t half = (n - 2 + 1) / 2;
            const dim3 grid(static_cast<unsigned>((half + threads - 1) / threads), static_cast<unsigned>(n - 2));
            for (int colour = 0; colour < 2; ++colour) {
                colour_pass<<<grid, threads>>>(n, colour, u, h2f, omega);
                SWGPU_CUDA_CHECK_LAUNCH("sor colour pass");
            }
            return;
        }
    }
}

constexpr int tile_threads = 64;  // subdomains per block: small blocks spread the few long tiles of large subdomains

// One iteration of the parallel MLSSOR: four launches per half.
void mlssor_subdomain_iteration(index_t n, double* u, const double* h2f, const sor::options& o) {
    const index_t si_count = sor::subdomain_count(n - 2, o.sub_rows), sj_count = sor::subdomain_count(n - 2, o.sub_cols);
    if (n < 3) return;
    const dim3 grid(static_cast<unsigned>((sj_count + tile_threads - 1) / tile_threads), static_cast<unsigned>(si_count));
    for (const bool backward : {false, !o.forward_only})
        for (int step = 0; step < 4; ++step) {
            mlssor_step<<<grid, tile_threads>>>(n, u, h2f, o.omega, o.layers, o.sub_rows, o.sub_cols, sj_count, step / 2,
                                                step % 2, backward);
            SWGPU_CUDA_CHECK_LAUNCH("sor mlssor step");
        }
}

// `iterations` iterations of a method: lex and ssor through the compensation method unless the diagonal schedule is
// asked for (the strips run consecutive sweeps of one direction in batches).
void sweeps_on_device(sor::method m, index_t n, device_buffer<double>& u, const double* h2f, double omega, int layers,
                      lex_workspace& ws, int iterations, bool forward_only = false) {
    const lex_schedule how = lex_schedule_asked();
    if (m == sor::method::redblack && how != lex_schedule::diagonal) {
        redblack_sweeps(n, u, h2f, omega, iterations, ws);
        return;
    }
    if (m == sor::method::redblack || how == lex_schedule::diagonal) {
        const sor::method one = m == sor::method::mlssor && forward_only ? sor::method::lex : m;
        const int per = m == sor::method::mlssor && forward_only ? 2 * layers : 1;
        for (int k = 0; k < iterations * per; ++k) run_sweep(one, n, u.data(), h2f, omega, layers);
        return;
    }
    if (m == sor::method::lex || (m == sor::method::mlssor && forward_only)) {
        compensation_sweeps(n, u, h2f, omega, false, iterations * (m == sor::method::lex ? 1 : 2 * layers), how, ws);
        return;
    }
    const int each = m == sor::method::mlssor ? layers : 1;  // ssor, mlssor: each way in turn
    for (int k = 0; k < iterations; ++k) {
        compensation_sweeps(n, u, h2f, omega, false, each, how, ws);
        compensation_sweeps(n, u, h2f, omega, true, each, how, ws);
    }
}

// One iteration of the method and variant in o.
void iterate_on_device(const sor::options& o, index_t n, device_buffer<double>& u, const double* h2f, lex_workspace& ws) {
    if (o.m == sor::method::mlssor && o.sub_rows > 0) mlssor_subdomain_iteration(n, u.data(), h2f, o);
    else sweeps_on_device(o.m, n, u, h2f, o.omega, o.layers, ws, 1, o.m == sor::method::mlssor && o.forward_only);
}

struct device_problem {
    device_buffer<double> u, h2f, f;
    explicit device_problem(const sor::problem& p) {
        if (p.n - 2 > 65535) throw usage_error("SOR on the GPU takes grids of at most 65537 x 65537 points");
        u.upload(p.u);
        h2f.upload(sor::scaled_rhs(p));
        f.upload(p.f);
    }
};

// The residual of every iterate of a solve: the grid's sums of r^2 and f^2 after the last sweep run (the solve divides
// sqrt(r^2) by sor::residual_scale, ||b|| with the boundary terms, found once on the host; the f^2 sum is not used).
struct residual_pass {
    index_t n;
    double inv_h2;
    device_buffer<double> sums{2};
    explicit residual_pass(index_t n_) : n(n_), inv_h2(double(n_ - 1) * double(n_ - 1)) {}
    void launch(const device_problem& d) {
        const dim3 blocks(static_cast<unsigned>((n - 2 + threads - 1) / threads), static_cast<unsigned>(n - 2));
        sums.zero();
        residual_sums<<<blocks, threads>>>(n, d.u.data(), d.f.data(), inv_h2, sums.data());
        SWGPU_CUDA_CHECK_LAUNCH("sor residual");
    }
};

// A lex solve through the strips, or a red-black solve through redblack_sweep, in batches of sweeps run at once. The
// residuals of the iterates inside a batch come from the sweeps themselves, that of its last from the residual pass;
// a batch's sweeps share its time evenly in the history. A batch that passes the tolerance before its last sweep is
// run again, from a copy of the grid taken before it, up to that sweep: the iterates are those of one sweep at a
// time, bit for bit (the same kernel code per sweep). Without room for the copy, batches of one sweep. Red-black
// batches are capped by the tuning key sor.batch only (its blocks never wait for each other).
sor::solution solve_batched(const sor::problem& p, const sor::options& o, device_problem& d, sor_report* report) {
    residual_pass rp(p.n);
    lex_workspace ws;
    std::size_t free_bytes = 0, total_bytes = 0;
    SWGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t grid_bytes = d.u.size() * sizeof(double);
    const bool redblack = o.m == sor::method::redblack;
    int limit = redblack ? static_cast<int>(std::max<std::int64_t>(1, tuning::integer("sor.batch", device_arch())))
                         : strip_batch_limit(p.n);
    const auto sweeps = [&](int count, const batch_residuals* r) {
        if (redblack) redblack_sweeps(p.n, d.u, d.h2f.data(), o.omega, count, ws, r);
        else compensation_sweeps(p.n, d.u, d.h2f.data(), o.omega, false, count, lex_schedule::strips, ws, r);
    };
    device_buffer<double> before, res(static_cast<std::size_t>(limit));
    // the copy, and ws.other if not there yet, with 256 MiB to spare
    if (limit > 1 && free_bytes > 2 * grid_bytes + (std::size_t(256) << 20)) before.allocate(d.u.size());
    else limit = 1;
    batch_residuals br{rp.inv_h2, res.data()};
    const double scale = sor::residual_scale(p);  // ||b||: the residual relative to the whole right-hand side
    sor::stop_test stop{o};
    bool stopped = false;
    SWGPU_CUDA_CHECK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    double seconds = 0;
    sor::solution s;
    cuda_event a, b, c;
    double sweeps_ms = 0, residual_ms = 0;
    for (int k = 1; k <= o.max_sweeps;) {
        const int batch = std::min(limit, o.max_sweeps - k + 1);
        if (batch > 1)
            SWGPU_CUDA_CHECK(cudaMemcpyAsync(before.data(), d.u.data(), grid_bytes, cudaMemcpyDeviceToDevice, nullptr));
        a.record(nullptr);
        res.zero();
        sweeps(batch, batch > 1 ? &br : nullptr);
        b.record(nullptr);
        rp.launch(d);
        c.record(nullptr);
        const auto sums = rp.sums.download(2);
        const auto inside = res.download(static_cast<std::size_t>(batch));
        sweeps_ms += b.since(a);
        residual_ms += c.since(b);
        const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        int last = batch;  // sweeps of this batch that count
        for (int q = 1; q <= batch; ++q) {
            const double r = std::sqrt(q < batch ? inside[static_cast<std::size_t>(q)] : sums[0]) / scale;
            s.history.push_back({k + q - 1, r, seconds + (now - seconds) * q / batch});
            if (stop(k + q - 1, r)) {
                stopped = true;
                last = q;
                break;
            }
        }
        if (last < batch) {  // back to the copy, then the sweeps up to the one that stopped the run
            SWGPU_CUDA_CHECK(cudaMemcpyAsync(d.u.data(), before.data(), grid_bytes, cudaMemcpyDeviceToDevice, nullptr));
            sweeps(last, nullptr);
        }
        seconds = now;
        k += batch;
        if (stopped) break;
    }
    s.reason = stop.reason;
    s.converged = stop.reason == sor::stop_reason::converged;
    s.u = d.u.download(p.u.size());
    if (report) {
        report->sweeps_ms = sweeps_ms;
        report->residual_ms = residual_ms;
    }
    return s;
}

}  // namespace

std::vector<double> sor_sweeps(const sor::problem& p, sor::method m, double omega, int sweeps, sor_report* report,
                               int layers) {
    device_problem d(p);
    cuda_event start, stop;
    start.record(nullptr);
    lex_workspace ws;
    sweeps_on_device(m, p.n, d.u, d.h2f.data(), omega, layers, ws, sweeps);
    stop.record(nullptr);
    stop.synchronize();
    if (report) report->sweeps_ms = stop.since(start);
    return d.u.download(p.u.size());
}

sor::solution sor_solve(const sor::problem& p, const sor::options& o, sor_report* report) {
    sor::check(o);
    device_problem d(p);
    if ((o.m == sor::method::lex || o.m == sor::method::redblack) && lex_schedule_asked() == lex_schedule::strips)
        return solve_batched(p, o, d, report);
    residual_pass rp(p.n);
    const double scale = sor::residual_scale(p);
    sor::stop_test stop{o};
    SWGPU_CUDA_CHECK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();  // the sweeps' time, not the copies
    sor::solution s;
    lex_workspace ws;
    cuda_event a, b, c;
    double sweeps_ms = 0, residual_ms = 0;
    for (int k = 1; k <= o.max_sweeps; ++k) {
        a.record(nullptr);
        iterate_on_device(o, p.n, d.u, d.h2f.data(), ws);
        b.record(nullptr);
        rp.launch(d);
        c.record(nullptr);
        const auto host = rp.sums.download(2);
        sweeps_ms += b.since(a);
        residual_ms += c.since(b);
        const double r = std::sqrt(host[0]) / scale;
        s.history.push_back({k, r, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
        if (stop(k, r)) break;
    }
    s.reason = stop.reason;
    s.converged = stop.reason == sor::stop_reason::converged;
    s.u = d.u.download(p.u.size());
    if (report) {
        report->sweeps_ms = sweeps_ms;
        report->residual_ms = residual_ms;
    }
    return s;
}

}  // namespace swgpu::gpu
