// The summed-area table in one fixed order of additions, the CPU's (core/numerics/sat.cpp) and NumPy's
// `a.cumsum(1).cumsum(0)`: along each row (lane) left to right first, R[i][x] = R[i][x - L] + a[i][x] with the first
// element of a row taken as it is, then down each column, S[i][x] = S[i - 1][x] + R[i][x] with row 0 taken as it is.
// Float tables are then bit for bit the CPU's (IEEE additions, no contraction: there is no product to fuse); the other
// schedules (sat_kernels.cuh, sat_strip_kernels.cuh) add in orders of their own and stay within the error bound only.
//
// Two passes, each a set of independent sequential chains (the order forbids splitting a chain):
//   rows     one lane: a warp owns 32 rows and walks along them 32 columns at a time; the warp loads a 32 x 32 tile
//            (coalesced, one row per load), turns it through shared memory so that each lane adds along its own row,
//            and stores it back coalesced; the next tile's loads are in flight while a tile is added. Several lanes:
//            a thread per (row, lane) chain, strided loads.
//   columns  a thread per flattened column walks down the rows, 16 rows' loads in flight at a time, adding in place.
// The table is written twice and read once (the input once): 3 table passes where the strips take about 1.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>

#include "core/engine/wavefront.hpp"
#include "gpu/cuda_check.cuh"

namespace swgpu::gpu::sat_ordered {

inline constexpr int tile = 32;            // rows per warp and columns per step of the one-lane rows pass
inline constexpr int row_warps = 4;        // warps per block of that pass
inline constexpr int column_unroll = 16;   // rows whose loads the columns pass keeps in flight
inline constexpr int column_threads = 128;

template <class In, class Out>
__global__ void __launch_bounds__(tile * row_warps) rows_one_lane(const In* __restrict__ in, Out* __restrict__ out,
                                                                   index_t rows, index_t cols) {
    __shared__ Out sh[row_warps][tile][tile + 1];  // + 1: a row's walk and a column's load hit distinct banks
    const int w = static_cast<int>(threadIdx.x) / tile, lane = static_cast<int>(threadIdx.x) % tile;
    const index_t row0 = (static_cast<index_t>(blockIdx.x) * row_warps + w) * tile;
    if (row0 >= rows) return;
    const int nr = static_cast<int>(rows - row0 < tile ? rows - row0 : tile);
    auto& s = sh[w];
    In next[tile];
    const auto load = [&](index_t c0) {
        const index_t x = c0 + lane;
#pragma unroll
        for (int r = 0; r < tile; ++r) next[r] = (r < nr && x < cols) ? in[(row0 + r) * cols + x] : In(0);
    };
    load(0);
    Out carry = Out(0);
    for (index_t c0 = 0; c0 < cols; c0 += tile) {
#pragma unroll
        for (int r = 0; r < tile; ++r) s[r][lane] = static_cast<Out>(next[r]);
        if (c0 + tile < cols) load(c0 + tile);  // in flight while this tile is added
        __syncwarp();
        const int nc = static_cast<int>(cols - c0 < tile ? cols - c0 : tile);
        if (lane < nr) {
            int j = 0;
            if (c0 == 0) {  // the row's first element as it is (a -0.0 keeps its sign)
                carry = s[lane][0];
                j = 1;
            }
            for (; j < nc; ++j) {
                carry = carry + s[lane][j];
                s[lane][j] = carry;
            }
        }
        __syncwarp();
        const index_t x = c0 + lane;
        if (x < cols) {
#pragma unroll
            for (int r = 0; r < tile; ++r)
                if (r < nr) out[(row0 + r) * cols + x] = s[r][lane];
        }
        __syncwarp();
    }
}

template <class In, class Out>
__global__ void rows_lanes(const In* __restrict__ in, Out* __restrict__ out, index_t rows, index_t cols, int lanes) {
    const index_t q = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (q >= rows * lanes) return;
    const index_t i = q / lanes, c = q % lanes;
    const In* src = in + i * cols * lanes + c;
    Out* dst = out + i * cols * lanes + c;
    Out carry = static_cast<Out>(src[0]);
    dst[0] = carry;
#pragma unroll 8
    for (index_t j = 1; j < cols; ++j) {
        carry = carry + static_cast<Out>(src[j * lanes]);
        dst[j * lanes] = carry;
    }
}

template <class Out>
__global__ void __launch_bounds__(column_threads) columns(Out* __restrict__ t, index_t rows, index_t n) {
    const index_t x = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (x >= n) return;
    Out* p = t + x;
    Out above = p[0];
    index_t i = 1;
    for (; i + column_unroll <= rows; i += column_unroll) {
        Out v[column_unroll];
#pragma unroll
        for (int u = 0; u < column_unroll; ++u) v[u] = p[(i + u) * n];
#pragma unroll
        for (int u = 0; u < column_unroll; ++u) {
            above = above + v[u];
            p[(i + u) * n] = above;
        }
    }
    for (; i < rows; ++i) {
        above = above + p[i * n];
        p[i * n] = above;
    }
}

// The table of `in` (rows x cols x lanes, device memory) into `out` (device memory, not overlapping `in`).
template <class In, class Out>
void launch(const In* in, Out* out, index_t rows, index_t cols, index_t lanes, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0 || lanes <= 0) return;
    if (lanes == 1) {
        const index_t blocks = (rows + tile * row_warps - 1) / (tile * row_warps);
        rows_one_lane<In, Out><<<static_cast<unsigned>(blocks), tile * row_warps, 0, stream>>>(in, out, rows, cols);
        SWGPU_CUDA_CHECK_LAUNCH("sat_ordered::rows_one_lane");
    } else {
        const index_t chains = rows * lanes;
        rows_lanes<In, Out><<<static_cast<unsigned>((chains + 127) / 128), 128, 0, stream>>>(in, out, rows, cols,
                                                                                            static_cast<int>(lanes));
        SWGPU_CUDA_CHECK_LAUNCH("sat_ordered::rows_lanes");
    }
    const index_t n = cols * lanes;
    if (rows > 1) {
        columns<Out><<<static_cast<unsigned>((n + column_threads - 1) / column_threads), column_threads, 0, stream>>>(
            out, rows, n);
        SWGPU_CUDA_CHECK_LAUNCH("sat_ordered::columns");
    }
}

}  // namespace swgpu::gpu::sat_ordered
