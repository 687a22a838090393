// The block level of the weighted scan: each thread's chunk sequentially, the warps by shuffles, the warps' totals
// through shared memory.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/engine/linear_map.hpp"
#include "core/engine/operator_pair.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/flags.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/warp_ops.cuh"

namespace swgpu::gpu {

// ---------------------------------------------------------------------------------------------------------------------
// Block level
// ---------------------------------------------------------------------------------------------------------------------

// A tile of THREADS·CPT·SUBS cells. Warp w owns the contiguous segment [w·WARP_LEN, (w+1)·WARP_LEN), split into SUBS
// sub-segments of 32·CPT cells; lane l holds the CPT consecutive cells (the chunk) at
//   offset(s, e) = w·WARP_LEN + s·SUB_LEN + l·CPT + e
// so a warp reads each sub-segment as one coalesced run of CPT-wide vectors.
template <class Alg, int THREADS, int CPT, int SUBS>
struct block_scan {
    using elem = typename Alg::elem;
    using power = typename Alg::power;
    static_assert(THREADS % 32 == 0 && THREADS >= 32 && THREADS <= 1024);
    static constexpr int warps = THREADS / 32;
    static constexpr int sub_len = 32 * CPT;
    static constexpr int warp_len = sub_len * SUBS;
    static constexpr int tile = warp_len * warps;

    struct storage {
        elem warp_total[warps];
    };

    // The weights of the runs the scan combines, for this thread; made once per algebra (per kernel, or per row).
    struct powers {
        power one;       // 1 cell
        power lanes[5];  // CPT·d cells, d = 1, 2, 4, 8, 16 (the warp scan's steps)
        power sub;       // a sub-segment
        power warp;      // a warp's segment
        power lane;      // the chunks of the lanes before this one in a sub-segment: lane·CPT cells
        power first;     // offset(0, 0): everything in the tile before this thread's first chunk
    };

    __device__ __forceinline__ static int lane() { return threadIdx.x & 31; }
    __device__ __forceinline__ static int warp() { return threadIdx.x >> 5; }
    __device__ __forceinline__ static int offset(int s, int e) { return warp() * warp_len + s * sub_len + lane() * CPT + e; }

    __device__ __forceinline__ static powers make_powers(const Alg& alg) {
        powers p;
        p.one = alg.pow(1);
        p.lanes[0] = alg.pow(CPT);
#pragma unroll
        for (int k = 1; k < 5; ++k) p.lanes[k] = Alg::pow_sum(p.lanes[k - 1], p.lanes[k - 1]);
        p.sub = Alg::pow_sum(p.lanes[4], p.lanes[4]);
        p.warp = alg.pow(warp_len);
        p.lane = alg.pow(std::int64_t(lane()) * CPT);
        p.first = Alg::pow_sum(alg.pow(std::int64_t(warp()) * warp_len), p.lane);
        return p;
    }

    // Input: the maps of this thread's cells, el[s][e]. Output: before[s], the composite of every tile cell before
    // chunk s (relative to the tile start; its weight is that of offset(s, 0) cells: pw.first, then · pw.sub per s);
    // returns the composite of the whole tile. With more than one warp it contains one __syncthreads, and
    // `sm.warp_total` must not be rewritten until every thread has returned from here; one warp needs no shared memory.
    __device__ __forceinline__ static elem scan(const Alg& alg, const powers& pw, const elem (&el)[SUBS][CPT],
                                                elem (&before)[SUBS], storage& sm) {
        elem c[SUBS];
#pragma unroll
        for (int s = 0; s < SUBS; ++s) c[s] = chunk_composite(alg, pw, el[s]);
        return scan_chunks(alg, pw, c, before, sm);
    }

    // Thread level: the composite of one chunk, sequentially.
    __device__ __forceinline__ static elem chunk_composite(const Alg& alg, const powers& pw, const elem (&chunk)[CPT]) {
        elem c = chunk[0];
#pragma unroll
        for (int e = 1; e < CPT; ++e) c = alg.combine(c, chunk[e], pw.one);
        return c;
    }

    // scan() from the chunk composites c[s] on (c is overwritten); same outputs, barrier and rules.
    __device__ __forceinline__ static elem scan_chunks(const Alg& alg, const powers& pw, elem (&c)[SUBS],
                                                       elem (&before)[SUBS], storage& sm) {
        using namespace scan_detail;
        warp_inclusive_scan<Alg, SUBS>(alg, c, pw.lanes, lane());  // warp: the SUBS scans interleaved
        elem warp_prefix_of_sub[SUBS];
        elem running = Alg::identity();
#pragma unroll
        for (int s = 0; s < SUBS; ++s) {
            const elem excl = shfl_up(c[s], 1);
            before[s] = lane() == 0 ? Alg::identity() : excl;
            warp_prefix_of_sub[s] = running;
            running = alg.combine(running, shfl_idx(c[s], 31), pw.sub);
        }
        elem warp_prefix = Alg::identity(), tile_total = running;
        if constexpr (warps > 1) {
            if (lane() == 0) sm.warp_total[warp()] = running;
            __syncthreads();
            tile_total = Alg::identity();
#pragma unroll
            for (int k = 0; k < warps; ++k) {  // block: the composite of the warps before this one, and of all
                const elem t = sm.warp_total[k];
                if (k == warp()) warp_prefix = tile_total;
                tile_total = alg.combine(tile_total, t, pw.warp);
            }
        }
        power subs = alg.pow(0);  // the weight of s sub-segments
#pragma unroll
        for (int s = 0; s < SUBS; ++s) {
            const elem sub_prefix = alg.combine(warp_prefix, warp_prefix_of_sub[s], subs);
            before[s] = alg.combine(sub_prefix, before[s], pw.lane);
            subs = Alg::pow_sum(subs, pw.sub);
        }
        return tile_total;
    }
};

}  // namespace swgpu::gpu
