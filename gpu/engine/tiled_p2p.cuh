// gpu_tiled_p2p: persistent blocks, tiles in anti-diagonal order, peer-to-peer readiness between tiles
// (docs/engine.md), for any compensable problem.
//
// The matrix is cut into tiles of TR rows × TC columns (TC = THREADS·CPT, one chunk of CPT columns per thread). Tile
// numbers k = 0, 1, ... enumerate the tiles diagonal by diagonal (ti + tj = 0, 1, ...; ti ascending inside one), and a
// block takes the next k from a global counter. A tile depends on its top and left neighbours, which are on the
// previous diagonal and so have smaller numbers: they were taken earlier by blocks that are running or done, so a wait
// always ends.
//
// Inside a tile, each row is one compensation step over TC cells: gather (no in-row dependency), block scan entered
// with the value coming from the left tile, finish. The row above lives in registers (each thread keeps its chunk);
// the diagonal neighbour of a chunk's first cell comes from the previous lane (shuffle), the previous warp (shared
// memory) or the tile's left boundary.
//
// Boundaries between tiles, all in global memory, all O(rows + cols):
//   bottom[j]       the last row computed in column j: written by tile (ti, tj) at its end, read by (ti+1, tj) at
//                   its start (its top row)
//   right_cell[i],  the cell in the tile's last column and the value leaving it, for each row i: written by (ti, tj),
//   right_x[i]      read by (ti, tj+1) at its start
//   corner[ti]      cell (i0-1, j1-1) of tile (ti, tj) (the top-right cell above it): written by (ti, tj) at its end,
//                   read by (ti, tj+1) as its top-left corner. bottom[j1-1] would no longer hold it by then.
// Each boundary element has exactly one writer and then one reader before its next writer, and that next writer
// waits for the reader (it is the reader's right or bottom neighbour, or the reader itself).
//
// Synchronization protocol. done[ti] counts the finished tiles of tile row ti (they finish left to right); each sits in
// a 128-byte line of its own (status_stride, as the scan's look-back statuses), so neighbouring rows' stores and polls
// do not queue on one line.
//   Writer: every thread stores its boundary data with st.global.cg; __syncthreads(); thread 0 __threadfence() and
//           st.release.gpu done[ti] = tj + 1.
//   Reader: thread 0 spins with ld.acquire.gpu until done[ti-1] > tj (top) and done[ti] >= tj (left), the spin bounded
//           by a deadline that traps; __syncthreads(); every thread loads boundary data with ld.global.cg (L2, never a
//           stale L1 line).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "core/engine/wavefront.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/flags.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/row_sync.cuh"
#include "gpu/engine/weighted_scan.cuh"

namespace swgpu::gpu {

// Tile k of an nti × ntj grid in anti-diagonal order (diagonal d = ti + tj ascending, ti ascending inside).
struct tile_coord {
    std::int64_t ti, tj;
};
__host__ __device__ inline tile_coord antidiagonal_tile(std::int64_t k, std::int64_t nti, std::int64_t ntj) {
    const std::int64_t a = nti < ntj ? nti : ntj, b = nti < ntj ? ntj : nti;
    const std::int64_t ramp = a * (a + 1) / 2;  // tiles on diagonals 0 .. a-1 (lengths 1 .. a)
    const std::int64_t total = nti * ntj;
    auto triangle_root = [](std::int64_t r) {  // largest e with e(e+1)/2 <= r
        std::int64_t e = static_cast<std::int64_t>((sqrt(8.0 * double(r) + 1.0) - 1.0) / 2.0);
        while (e > 0 && e * (e + 1) / 2 > r) --e;
        while ((e + 1) * (e + 2) / 2 <= r) ++e;
        return e;
    };
    std::int64_t d, index;  // diagonal, position on it from its top tile
    if (k < ramp) {
        d = triangle_root(k);
        index = k - d * (d + 1) / 2;
    } else if (k < ramp + (b - a) * a) {  // diagonals a .. b-1 all have length a
        d = a + (k - ramp) / a;
        index = (k - ramp) % a;
    } else {  // the closing triangle: diagonal D-1-e has length e+1 for the last diagonals
        const std::int64_t r = total - 1 - k;
        const std::int64_t e = triangle_root(r);
        d = nti + ntj - 2 - e;
        index = e - (r - e * (e + 1) / 2);
    }
    const std::int64_t ti_lo = d - (ntj - 1) > 0 ? d - (ntj - 1) : 0;
    const std::int64_t ti = ti_lo + index;
    return {ti, d - ti};
}

template <class Cell, class Value>
struct tiled_state {
    std::int64_t tile_rows, tiles_down, tiles_across;
    Cell* bottom;        // cols
    Cell* right_cell;    // rows
    Value* right_x;      // rows
    Cell* corner;        // tiles_down
    unsigned* done;      // tiles_down flags, each in a 128-byte line of its own (status_stride), zero at launch
    unsigned* counter;   // zero at launch, in a line of its own

    __device__ __forceinline__ unsigned* done_of(std::int64_t ti) const { return done + ti * status_stride<unsigned>; }
};

template <class P, class Alg, int THREADS, int CPT>
__global__ void __launch_bounds__(THREADS)
    tiled_p2p_kernel(const P problem, const tiled_state<typename P::cell, typename P::op::value> st) {
    using bs = block_scan<Alg, THREADS, CPT, 1>;
    using cell = typename P::cell;
    using value = typename P::op::value;
    using elem = typename Alg::elem;
    using namespace scan_detail;
    __shared__ typename bs::storage scan_sm;
    __shared__ cell last_up[bs::warps];  // each warp's last cell of the row above
    __shared__ cell corner_in;
    __shared__ unsigned long long tile_slot;
    extern __shared__ __align__(16) unsigned char boundary_sm[];  // left boundary of the tile: tile_rows cells, then tile_rows values
    cell* left_cell = reinterpret_cast<cell*>(boundary_sm);
    value* left_x = reinterpret_cast<value*>(boundary_sm + ((st.tile_rows * sizeof(cell) + 15) / 16) * 16);

    P p = problem;
    const index_t rows = p.rows(), cols = p.cols();
    const std::int64_t total = st.tiles_down * st.tiles_across;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    for (;;) {
        if (threadIdx.x == 0) tile_slot = atomicAdd(st.counter, 1u);
        __syncthreads();
        const std::int64_t k = static_cast<std::int64_t>(tile_slot);
        if (k >= total) return;
        const tile_coord tc = antidiagonal_tile(k, st.tiles_down, st.tiles_across);
        const index_t i0 = tc.ti * st.tile_rows, i1 = std::min<index_t>(rows, i0 + st.tile_rows);
        const index_t j0 = tc.tj * bs::tile, j1 = std::min<index_t>(cols, j0 + bs::tile);
        if (threadIdx.x == 0) {  // wait for the top and left neighbours
            unsigned spins = 0;
            std::uint64_t since = 0;
            if (tc.ti > 0)
                while (load_acquire(st.done_of(tc.ti - 1)) <= static_cast<unsigned>(tc.tj)) spin_backoff(spins, since);
            if (tc.tj > 0)
                while (load_acquire(st.done_of(tc.ti)) < static_cast<unsigned>(tc.tj)) spin_backoff(spins, since);
        }
        __syncthreads();

        // Load the tile's boundaries.
        cell up[CPT];
        cell corner_out{};  // cell (i0-1, j1-1), for the right neighbour; kept by the thread owning column j1-1
#pragma unroll
        for (int e = 0; e < CPT; ++e) {
            const index_t j = j0 + bs::offset(0, e);
            if (j < cols) up[e] = tc.ti == 0 ? p.top(j) : load_cg(st.bottom + j);
            else up[e] = cell{};
            if (j == j1 - 1) corner_out = up[e];
        }
        if (threadIdx.x == 0)
            corner_in = tc.ti == 0 ? p.top(j0 - 1) : (tc.tj == 0 ? p.left(i0 - 1) : load_cg(st.corner + tc.ti));
        for (index_t r = threadIdx.x; r < i1 - i0; r += THREADS) {
            left_cell[r] = tc.tj == 0 ? p.left(i0 + r) : load_cg(st.right_cell + i0 + r);
            left_x[r] = tc.tj == 0 ? p.incoming(i0 + r) : load_cg(st.right_x + i0 + r);
        }
        if (lane == 31) last_up[warp] = up[CPT - 1];
        __syncthreads();

        Alg alg = make_row_algebra<Alg>(p, i0);
        typename bs::powers pw = bs::make_powers(alg);
        for (index_t r = 0; r < i1 - i0; ++r) {
            const index_t i = i0 + r;
            if constexpr (!Alg::is_map) {  // the powers change only when the row's weight does
                const Alg row_alg = make_row_algebra<Alg>(p, i);
                if (!(row_alg.w == alg.w)) {
                    alg = row_alg;
                    pw = bs::make_powers(alg);
                }
            }
            cell diag = shfl_up(up[CPT - 1], 1);
            if (lane == 0) diag = warp > 0 ? last_up[warp - 1] : (r == 0 ? corner_in : left_cell[r - 1]);
            typename P::gathered g[CPT];
            elem el[1][CPT];
#pragma unroll
            for (int e = 0; e < CPT; ++e) {
                const index_t j = j0 + bs::offset(0, e);
                if (j < cols) {
                    g[e] = p.gather(i, j, up[e], diag);
                    el[0][e] = Alg::from_map(p.carry(i, j, g[e]));
                } else {
                    el[0][e] = Alg::identity();
                }
                diag = up[e];
            }
            elem before[1];
            bs::scan(alg, pw, el, before, scan_sm);  // barrier A (several warps): warp totals written before, read after
            value x = alg.apply(before[0], left_x[r], pw.first);
#pragma unroll
            for (int e = 0; e < CPT; ++e) {
                const index_t j = j0 + bs::offset(0, e);
                const value leaving = alg.step(el[0][e], x);
                if (j < cols) {
                    up[e] = p.finish(i, j, g[e], x);
                    if (j == j1 - 1) {
                        store_cg(st.right_cell + i, up[e]);
                        store_cg(st.right_x + i, leaving);
                    }
                }
                x = leaving;
            }
            if (lane == 31) last_up[warp] = up[CPT - 1];
            __syncthreads();  // barrier B: last_up and warp totals of this row consumed before the next row rewrites them
        }

#pragma unroll
        for (int e = 0; e < CPT; ++e) {
            const index_t j = j0 + bs::offset(0, e);
            if (j < cols) store_cg(st.bottom + j, up[e]);
            if (j == j1 - 1) store_cg(st.corner + tc.ti, corner_out);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            __threadfence();
            store_release(st.done_of(tc.ti), static_cast<unsigned>(tc.tj + 1));
        }
    }
}

// Tuning entries of tiled_p2p: block threads, cells per chunk (tile columns = threads · cells), default tile rows.
struct tiled_config {
    int threads, cells_per_chunk;
    std::int64_t tile_rows;
    constexpr std::int64_t tile_cols() const { return std::int64_t(threads) * cells_per_chunk; }
};
inline constexpr std::array<tiled_config, 3> tiled_configs{{{32, 4, 64}, {64, 4, 64}, {128, 4, 32}}};

template <class P>
struct tiled_workspace {
    device_buffer<typename P::cell> bottom, right_cell, corner;
    device_buffer<typename P::op::value> right_x;
    device_buffer<unsigned> sync;  // done[] (tiles_down lines), then the tile counter (one line)
};

template <class P, class Alg, int Entry>
void run_tiled_p2p_entry(const P& p, std::int64_t tile_rows, tiled_workspace<P>& ws, cudaStream_t stream) {
    constexpr tiled_config c = tiled_configs[Entry];
    using cell = typename P::cell;
    using value = typename P::op::value;
    const index_t rows = p.rows(), cols = p.cols();
    const std::int64_t tr = tile_rows > 0 ? tile_rows : c.tile_rows;
    const std::int64_t down = (rows + tr - 1) / tr, across = (cols + c.tile_cols() - 1) / c.tile_cols();
    if (across >= (1ll << 31)) throw runtime_failure("tiled_p2p: too many tile columns");
    ws.bottom.reserve(static_cast<std::size_t>(cols));
    ws.right_cell.reserve(static_cast<std::size_t>(rows));
    ws.right_x.reserve(static_cast<std::size_t>(rows));
    ws.corner.reserve(static_cast<std::size_t>(down));
    const std::size_t sync_words = (static_cast<std::size_t>(down) + 1) * status_stride<unsigned>;
    ws.sync.reserve(sync_words);
    SWGPU_CUDA_CHECK(cudaMemsetAsync(ws.sync.data(), 0, sync_words * sizeof(unsigned), stream));
    tiled_state<cell, value> st{tr,
                                down,
                                across,
                                ws.bottom.data(),
                                ws.right_cell.data(),
                                ws.right_x.data(),
                                ws.corner.data(),
                                ws.sync.data(),
                                ws.sync.data() + down * status_stride<unsigned>};
    const std::size_t smem = ((static_cast<std::size_t>(tr) * sizeof(cell) + 15) / 16) * 16 +
                             static_cast<std::size_t>(tr) * sizeof(value);
    auto kernel = &tiled_p2p_kernel<P, Alg, c.threads, c.cells_per_chunk>;
    if (smem > 48 * 1024)
        SWGPU_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    int device = 0, sms = 0, per_sm = 0;
    SWGPU_CUDA_CHECK(cudaGetDevice(&device));
    SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    SWGPU_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, c.threads, smem));
    if (per_sm < 1) throw runtime_failure("tiled_p2p: a tile of " + std::to_string(tr) + " rows does not fit on this GPU; use fewer tile rows");
    const std::int64_t grid = std::min<std::int64_t>(down * across, std::int64_t(per_sm) * sms);
    kernel<<<static_cast<unsigned>(grid), c.threads, smem, stream>>>(p, st);
    SWGPU_CUDA_CHECK_LAUNCH("tiled_p2p_kernel");
}

// Runs problem `p` with tiled_p2p, tuning entry `entry` and `tile_rows` rows per tile (0: the entry's). Afterwards the
// last row is ws.bottom (column j at index j).
template <class P, class Alg>
void run_tiled_p2p(const P& p, int entry, std::int64_t tile_rows, tiled_workspace<P>& ws, cudaStream_t stream) {
    if (p.rows() <= 0 || p.cols() <= 0) return;
    using fn = void (*)(const P&, std::int64_t, tiled_workspace<P>&, cudaStream_t);
    static constexpr auto table = []<std::size_t... K>(std::index_sequence<K...>) {
        return std::array<fn, sizeof...(K)>{&run_tiled_p2p_entry<P, Alg, static_cast<int>(K)>...};
    }(std::make_index_sequence<tiled_configs.size()>{});
    table[static_cast<std::size_t>(entry)](p, tile_rows, ws, stream);
}

}  // namespace swgpu::gpu
