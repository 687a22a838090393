// gpu_row_sync: one row at a time across the whole GPU (docs/engine.md), for any compensable problem.
//
// For row i, every tile of the row (one block each) does Theorem 1's three steps:
//   1. gather g_j = gather(i, j, A[i-1][j], A[i-1][j-1]) and the map m_j = carry(i, j, g_j), ignoring the in-row
//      dependency;
//   2. x_j = (m_{j-1} after ... after m_0)(incoming(i)) by the block scan plus decoupled look-back between the row's
//      tiles (the weighted scan when the problem's weight is constant, else the map scan);
//   3. A[i][j] = finish(i, j, g_j, x_j).
// Rows are separated by a global barrier, either the end of a kernel launch (one launch per row) or a grid-wide sync
// inside one cooperative launch whose blocks stay resident for all rows.
//
// Buffers: two rows of cells in slot layout, slot j+1 = column j and slot 0 = column -1; row i reads rows[i % 2] and
// writes rows[(i + 1) % 2]. Rows written by other blocks are read through L2 (ld.global.cg), so no stale L1 line is
// ever seen after the barrier.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/engine/wavefront.hpp"
#include "gpu/engine/engine.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/weighted_scan.cuh"

namespace swgpu::gpu {

// The scan algebra a problem's rows use: the weighted scan for constant-weight problems unless told otherwise.
template <compensable_problem P, bool ForceMap>
using problem_algebra = std::conditional_t<constant_weight_problem<P> && !ForceMap, weighted_algebra<typename P::op>,
                                           map_algebra<typename P::op>>;

template <class Alg, class P>
__device__ __forceinline__ Alg make_row_algebra(const P& p, index_t i) {
    if constexpr (Alg::is_map) return Alg{};
    else return Alg{p.weight(i)};
}

template <class P, class Alg, int THREADS, int CPT, int SUBS>
struct row_pass {
    using bs = block_scan<Alg, THREADS, CPT, SUBS>;
    using cell = typename P::cell;
    using value = typename P::op::value;
    using elem = typename Alg::elem;
    using gathered = typename P::gathered;

    struct storage {
        typename bs::storage scan;
        lookback_storage<elem, THREADS> lookback;
        unsigned tile_slot;
    };

    // One tile of row i: the three steps above. All threads of the block call it.
    __device__ static void run_tile(P& p, index_t i, unsigned tile, const cell* up, cell* cur,
                                    const lookback_view<elem>& status, unsigned epoch, storage& sm) {
        using scan_detail::load_cg;
        const index_t cols = p.cols();
        const index_t start = index_t(tile) * bs::tile;
        const Alg alg = make_row_algebra<Alg>(p, i);
        gathered g[SUBS][CPT];
        elem el[SUBS][CPT];
#pragma unroll
        for (int s = 0; s < SUBS; ++s) {
            const index_t j0 = start + bs::offset(s, 0);
            cell diag{};
            if (j0 < cols) diag = load_cg(up + j0);  // slot j0 = column j0 - 1
#pragma unroll
            for (int e = 0; e < CPT; ++e) {
                const index_t j = j0 + e;
                if (j < cols) {
                    const cell u = load_cg(up + j + 1);
                    g[s][e] = p.gather(i, j, u, diag);
                    el[s][e] = Alg::from_map(p.carry(i, j, g[s][e]));
                    diag = u;
                } else {
                    el[s][e] = Alg::identity();
                }
            }
        }
        const typename bs::powers pw = bs::make_powers(alg);
        typename Alg::power tile_pw = pw.warp;
#pragma unroll
        for (int w = 1; w < bs::warps; ++w) tile_pw = Alg::pow_sum(tile_pw, pw.warp);
        elem before[SUBS];
        const elem total = bs::scan(alg, pw, el, before, sm.scan);
        const elem prefix = tile_prefix<Alg, THREADS>(alg, status, tile, epoch, total, tile_pw, sm.lookback);
        const value entering_tile = alg.apply(prefix, p.incoming(i), alg.pow(start));
        typename Alg::power off = pw.first;  // the weight of offset(s, 0) cells
#pragma unroll
        for (int s = 0; s < SUBS; ++s) {
            value x = alg.apply(before[s], entering_tile, off);
            off = Alg::pow_sum(off, pw.sub);
#pragma unroll
            for (int e = 0; e < CPT; ++e) {
                const index_t j = start + bs::offset(s, e);
                if (j < cols) cur[j + 1] = p.finish(i, j, g[s][e], x);
                x = alg.step(el[s][e], x);
            }
        }
        if (tile == 0 && threadIdx.x == 0) cur[0] = p.left(i);
    }
};

// Row -1 in slot layout: slot j+1 = top(j) for j = -1 .. cols-1.
template <class P>
__global__ void row_sync_top_kernel(const P p, typename P::cell* row) {
    const index_t j = index_t(blockIdx.x) * blockDim.x + threadIdx.x - 1;
    if (j < p.cols()) row[j + 1] = p.top(j);
}

// One launch per row: tiles of row i in block start order (see take_tile), prefixes by look-back under `epoch`.
template <class P, class Alg, int THREADS, int CPT, int SUBS>
__global__ void __launch_bounds__(THREADS)
    row_sync_row_kernel(const P problem, index_t i, const typename P::cell* up, typename P::cell* cur,
                        const lookback_view<typename Alg::elem> status, unsigned epoch, unsigned* counter,
                        unsigned base) {
    using pass = row_pass<P, Alg, THREADS, CPT, SUBS>;
    __shared__ typename pass::storage sm;
    P p = problem;
    const unsigned tile = take_tile(counter, base, &sm.tile_slot);
    pass::run_tile(p, i, tile, up, cur, status, epoch, sm);
}

// All rows in one cooperative launch: block b takes tiles b, b + gridDim.x, ... of every row (in increasing order, so
// a tile only waits on tiles of co-resident blocks at the same or an earlier step); grid.sync() between rows.
template <class P, class Alg, int THREADS, int CPT, int SUBS>
__global__ void __launch_bounds__(THREADS)
    row_sync_grid_kernel(const P problem, typename P::cell* row0, typename P::cell* row1,
                         const lookback_view<typename Alg::elem> status, unsigned first_epoch) {
    using pass = row_pass<P, Alg, THREADS, CPT, SUBS>;
    __shared__ typename pass::storage sm;
    P p = problem;
    auto grid = cooperative_groups::this_grid();
    const index_t tiles = (p.cols() + pass::bs::tile - 1) / pass::bs::tile;
    for (index_t i = 0; i < p.rows(); ++i) {
        const typename P::cell* up = (i % 2 == 0) ? row0 : row1;
        typename P::cell* cur = (i % 2 == 0) ? row1 : row0;
        for (index_t t = blockIdx.x; t < tiles; t += gridDim.x) {
            pass::run_tile(p, i, static_cast<unsigned>(t), up, cur, status, first_epoch + static_cast<unsigned>(i), sm);
            __syncthreads();  // shared memory of this tile read by all before the next tile rewrites it
        }
        grid.sync();
    }
}

// Tuning of row_sync: block threads, cells per chunk, chunks per thread.
struct row_sync_config {
    int threads, cells_per_chunk, chunks;
    constexpr int tile() const { return threads * cells_per_chunk * chunks; }
};
inline constexpr row_sync_config row_sync_tuning{256, 4, 2};

// Reusable device state of row_sync for one problem type.
template <class P, class Alg>
struct row_sync_workspace {
    device_buffer<typename P::cell> rows[2];
    lookback_workspace<typename Alg::elem> lookback;
};

// Runs problem `p` (device pointers inside) with row_sync on `stream`. Afterwards the last row, in slot layout, is
// ws.rows[p.rows() % 2] (slot j+1 = column j).
template <class P, class Alg>
void run_row_sync(const P& p, row_barrier barrier, row_sync_workspace<P, Alg>& ws, cudaStream_t stream) {
    constexpr row_sync_config c = row_sync_tuning;
    using cell = typename P::cell;
    const index_t rows = p.rows(), cols = p.cols();
    if (rows <= 0 || cols <= 0) return;
    for (auto& r : ws.rows) r.reserve(static_cast<std::size_t>(cols) + 1);
    const index_t tiles = (cols + c.tile() - 1) / c.tile();
    if (rows >= index_t(lookback_epoch_limit) / 2)
        throw runtime_failure("row_sync: " + std::to_string(rows) + " rows is more than one pass supports; use tiled_p2p");
    const unsigned first_epoch = ws.lookback.begin(static_cast<std::size_t>(tiles), static_cast<unsigned>(rows), stream);
    const auto status = ws.lookback.view();
    row_sync_top_kernel<P><<<static_cast<unsigned>((cols + 1 + 255) / 256), 256, 0, stream>>>(p, ws.rows[0].data());
    SWGPU_CUDA_CHECK_LAUNCH("row_sync_top_kernel");
    if (barrier == row_barrier::launch) {
        for (index_t i = 0; i < rows; ++i) {
            const cell* up = ws.rows[i % 2].data();
            cell* cur = ws.rows[(i + 1) % 2].data();
            const unsigned base = ws.lookback.take(static_cast<std::size_t>(tiles));
            row_sync_row_kernel<P, Alg, c.threads, c.cells_per_chunk, c.chunks>
                <<<static_cast<unsigned>(tiles), c.threads, 0, stream>>>(p, i, up, cur, status,
                                                                          first_epoch + static_cast<unsigned>(i),
                                                                          ws.lookback.counter(), base);
            SWGPU_CUDA_CHECK_LAUNCH("row_sync_row_kernel");
        }
        return;
    }
    auto kernel = &row_sync_grid_kernel<P, Alg, c.threads, c.cells_per_chunk, c.chunks>;
    int device = 0, sms = 0, per_sm = 0;
    SWGPU_CUDA_CHECK(cudaGetDevice(&device));
    SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    SWGPU_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, c.threads, 0));
    if (per_sm < 1) throw runtime_failure("row_sync: the grid-barrier kernel does not fit on this GPU; use the launch barrier");
    const index_t grid = std::min<index_t>(tiles, index_t(per_sm) * sms);
    P problem = p;
    cell* row0 = ws.rows[0].data();
    cell* row1 = ws.rows[1].data();
    lookback_view<typename Alg::elem> st = status;
    unsigned epoch = first_epoch;
    void* args[] = {&problem, &row0, &row1, &st, &epoch};
    SWGPU_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(static_cast<unsigned>(grid)),
                                                 dim3(c.threads), args, 0, stream));
}

}  // namespace swgpu::gpu
