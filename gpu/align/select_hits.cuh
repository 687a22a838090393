// Top hits of each query selected on the GPU, from its row of scores (original subject order), so that only k hits per
// query cross the bus instead of a score per subject.
//
// Contract (that of search_cpu): the hits of a row are the k = min(max_hits, subjects) best subjects with score >=
// min_score, in the order score descending, subject ascending. Scores are >= 0 and < 2^31.
//
// Method, one block per row: radix select of the k-th largest eligible score T, 8 bits at a time from the top (four
// passes of a 256-bin shared histogram over the row), then one pass in subject order that keeps every score > T and the
// first `ties` scores == T (the smallest subjects), their places found by block-wide prefix sums. A row with at most k
// eligible scores keeps them all. Hits come out in subject order; the host orders them (k per row).
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <cstdint>

namespace swgpu::gpu::kernels {

inline constexpr int select_threads = 256;

__global__ void __launch_bounds__(select_threads)
    select_top_hits(const int* __restrict__ scores, std::size_t stride, std::uint32_t subjects, std::uint32_t k,
                    int min_score, int2* __restrict__ out, std::uint32_t* __restrict__ out_count) {
    using reduce = cub::BlockReduce<unsigned, select_threads>;
    using scan = cub::BlockScan<unsigned, select_threads>;
    __shared__ union {
        typename reduce::TempStorage reduce;
        typename scan::TempStorage scan;
    } tmp;
    __shared__ unsigned histogram[256];
    __shared__ unsigned shared_prefix, shared_need, shared_count;
    const int* row = scores + blockIdx.x * stride;
    int2* hits = out + static_cast<std::size_t>(blockIdx.x) * k;

    unsigned eligible = 0;
    for (std::uint32_t j = threadIdx.x; j < subjects; j += select_threads) eligible += row[j] >= min_score;
    eligible = reduce(tmp.reduce).Sum(eligible);
    if (threadIdx.x == 0) shared_count = eligible;
    __syncthreads();
    const bool keep_all = shared_count <= k;

    // The k-th largest eligible score: bits above `shift + 8` fixed in `prefix`; `need` = how many of the scores
    // matching the prefix so far are still to be taken, counting from the largest.
    unsigned prefix = 0, mask = 0, need = k;
    if (!keep_all) {
        for (int shift = 24; shift >= 0; shift -= 8) {
            for (int b = threadIdx.x; b < 256; b += select_threads) histogram[b] = 0;
            __syncthreads();
            for (std::uint32_t j = threadIdx.x; j < subjects; j += select_threads) {
                const int v = row[j];
                if (v >= min_score && (static_cast<unsigned>(v) & mask) == prefix)
                    atomicAdd(&histogram[(static_cast<unsigned>(v) >> shift) & 255u], 1u);
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                unsigned above = 0;
                int d = 255;
                for (; d > 0 && above + histogram[d] < need; --d) above += histogram[d];
                shared_prefix = prefix | (static_cast<unsigned>(d) << shift);
                shared_need = need - above;
            }
            __syncthreads();
            prefix = shared_prefix;
            need = shared_need;
            mask |= 255u << shift;
            __syncthreads();  // the histogram is cleared again only after everyone has read the shared results
        }
    }
    const unsigned threshold = prefix;  // the k-th largest score (keep_all: unused)

    // Keep, in subject order, the scores above the threshold and the first `need` equal to it.
    unsigned ties_before = 0, kept_before = 0;
    for (std::uint32_t base = 0; base < subjects; base += select_threads) {
        const std::uint32_t j = base + threadIdx.x;
        const int v = j < subjects ? row[j] : -1;
        const bool eligible_here = v >= min_score;
        const bool tie = !keep_all && eligible_here && static_cast<unsigned>(v) == threshold;
        unsigned tie_rank, tie_total;
        scan(tmp.scan).ExclusiveSum(tie ? 1u : 0u, tie_rank, tie_total);
        __syncthreads();
        const bool keep = eligible_here && (keep_all || static_cast<unsigned>(v) > threshold ||
                                            (tie && ties_before + tie_rank < need));
        unsigned place, kept_total;
        scan(tmp.scan).ExclusiveSum(keep ? 1u : 0u, place, kept_total);
        __syncthreads();
        if (keep) hits[kept_before + place] = make_int2(v, static_cast<int>(j));
        ties_before += tie_total;
        kept_before += kept_total;
    }
    if (threadIdx.x == 0) out_count[blockIdx.x] = kept_before;
}

}  // namespace swgpu::gpu::kernels
