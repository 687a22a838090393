// Top hits of each query selected on the GPU, from its row of scores (original subject order), so that only k hits per
// query cross the bus instead of a score per subject.
//
// Contract (that of search_cpu): the hits of a row are the k = min(max_hits, subjects) best subjects with score >=
// min_score, in the order score descending, subject ascending. Scores are >= 0 and < 2^31.
//
// Method, one block per row: radix select of the k-th largest eligible key T, 8 bits at a time from the top (four
// passes of a 256-bin shared histogram over the row), then one pass in subject order that keeps every key > T and the
// first `ties` keys == T (the smallest subjects), their places found by block-wide prefix sums. A row with at most k
// eligible scores keeps them all. Hits come out in subject order; the host orders them (k per row).
//
// Ranked by E-value (evalue_order; core/align/evalue_rank.hpp), the key is the E-value order of (score, subject
// length), made an integer: (λS − ln(area/n) + 64)·2^20 below the rank cap, 2^30 + score from it on (those hits keep
// the score order). The device's logarithms and error functions may differ from the host's in the last bits, so the
// device keeps a superset: every eligible key >= T − margin, at most `capacity` of them (the count says how many
// there were), and the host computes the exact order of those (hit_selector). A row whose k-th key lies in the capped
// range, or with more candidates than the capacity, is ranked by the host from its whole row of scores.
//
// The E-value order's key costs a logarithm and an error function; a row's block would compute it in each of its six
// passes, on one SM (85 ms for one query against 2 million subjects). So the keys of a group of rows are computed
// once by order_keys, a grid over all of them (an ineligible score gets no_key), and the selection reads them
// (Keys = true) instead of computing them.
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <cstdint>

#include "core/align/evalue_rank.hpp"

namespace swgpu::gpu::kernels {

inline constexpr int select_threads = 256;

// The E-value order of a search's rows: Spouge's parameters, the subjects' lengths (original order) and each row's
// query length. Without it (`on` false) the key is the score.
struct evalue_order {
    bool on = false;
    spouge_shape shape;
    const std::uint32_t* subject_lengths = nullptr;
    const std::uint32_t* row_lengths = nullptr;  // indexed by the block (row)
    std::uint32_t capacity = 0;                   // hits kept per row at most
};
inline constexpr unsigned capped_keys = 1u << 30;  // keys from here on: the rank cap reached, then the score
inline constexpr unsigned key_margin = 4;          // units of 2^-20 in the key: far above the device's rounding
inline constexpr std::uint32_t ranked_on_host = 0xffffffffu;  // out_count of a row the host must rank

// The E-value order's key of score v of subject j in row `row`.
__device__ __forceinline__ unsigned evalue_key(const evalue_order& order, int v, std::uint32_t row, std::uint32_t j) {
    const double rank = evalue_rank(order.shape, v, order.row_lengths[row], order.subject_lengths[j]);
    if (rank == 0) return capped_keys + static_cast<unsigned>(v);
    const double q = (rank_cap + 64.0 - rank) * 1048576.0;
    return q <= 0 ? 0u : static_cast<unsigned>(q);
}

// Ranked: the E-value order's key (a template parameter, so that the score order's kernel carries none of it).
template <bool Ranked>
__device__ __forceinline__ unsigned order_key(const evalue_order& order, int v, std::uint32_t j) {
    if constexpr (!Ranked) return static_cast<unsigned>(v);
    return evalue_key(order, v, blockIdx.x, j);
}

inline constexpr unsigned no_key = 0xffffffffu;  // an ineligible score's place in order_keys' output (keys < 3·2^30)

// keys[r * subjects + j] = the E-value key of scores[r * stride + j], or no_key below min_score; rows blockIdx.y.
__global__ void __launch_bounds__(select_threads)
    order_keys(const int* __restrict__ scores, std::size_t stride, std::uint32_t subjects, int min_score,
               evalue_order order, unsigned* __restrict__ keys) {
    const std::uint32_t r = blockIdx.y;
    const int* row = scores + r * stride;
    unsigned* out = keys + static_cast<std::size_t>(r) * subjects;
    for (std::uint32_t j = blockIdx.x * select_threads + threadIdx.x; j < subjects; j += gridDim.x * select_threads) {
        const int v = row[j];
        out[j] = v >= min_score ? evalue_key(order, v, r, j) : no_key;
    }
}

// The selection of select_top_hits<true> over keys made by order_keys (rows `subjects` apart), the scores read only
// for the hits kept: the same output. Blocks of 1024 threads: a search of few queries has few rows, each a block that
// reads its row six times, so the wider block (more loads in flight on its SM) is what makes it fast.
inline constexpr int key_select_threads = 1024;
__global__ void __launch_bounds__(key_select_threads)
    select_top_keys(const int* __restrict__ scores, std::size_t stride, const unsigned* __restrict__ keys,
                    std::uint32_t subjects, std::uint32_t k, std::uint32_t capacity, int2* __restrict__ out,
                    std::uint32_t* __restrict__ out_count) {
    using reduce = cub::BlockReduce<unsigned, key_select_threads>;
    using scan = cub::BlockScan<unsigned, key_select_threads>;
    __shared__ union {
        typename reduce::TempStorage reduce;
        typename scan::TempStorage scan;
    } tmp;
    __shared__ unsigned histogram[256];
    __shared__ unsigned shared_prefix, shared_need, shared_count;
    const int* row = scores + blockIdx.x * stride;
    const unsigned* row_keys = keys + static_cast<std::size_t>(blockIdx.x) * subjects;
    int2* hits = out + static_cast<std::size_t>(blockIdx.x) * capacity;

    unsigned eligible = 0;
    for (std::uint32_t j = threadIdx.x; j < subjects; j += key_select_threads) eligible += row_keys[j] != no_key;
    eligible = reduce(tmp.reduce).Sum(eligible);
    if (threadIdx.x == 0) shared_count = eligible;
    __syncthreads();
    const bool keep_all = shared_count <= k;

    unsigned prefix = 0, mask = 0, need = k;
    if (!keep_all) {
        for (int shift = 24; shift >= 0; shift -= 8) {
            for (int b = threadIdx.x; b < 256; b += key_select_threads) histogram[b] = 0;
            __syncthreads();
            for (std::uint32_t j = threadIdx.x; j < subjects; j += key_select_threads) {
                const unsigned key = row_keys[j];
                const bool counted = key != no_key && (key & mask) == prefix;
                // Most keys of a row share their top bytes: one atomic per bin per warp, not per lane.
                const unsigned bin = counted ? (key >> shift) & 255u : 256u;
                const unsigned peers = __match_any_sync(__activemask(), bin);
                if (counted && (threadIdx.x & 31u) == static_cast<unsigned>(__ffs(peers) - 1))
                    atomicAdd(&histogram[bin], static_cast<unsigned>(__popc(peers)));
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
            __syncthreads();
        }
    }
    const unsigned threshold = prefix;
    if (!keep_all && threshold >= capped_keys) {
        if (threadIdx.x == 0) out_count[blockIdx.x] = ranked_on_host;
        return;
    }
    const unsigned band_floor = threshold > key_margin ? threshold - key_margin : 0u;
    unsigned kept_before = 0;
    for (std::uint32_t base = 0; base < subjects; base += key_select_threads) {
        const std::uint32_t j = base + threadIdx.x;
        const unsigned key = j < subjects ? row_keys[j] : no_key;
        const bool keep = key != no_key && (keep_all || key >= band_floor);
        unsigned place, kept_total;
        scan(tmp.scan).ExclusiveSum(keep ? 1u : 0u, place, kept_total);
        __syncthreads();
        if (keep && kept_before + place < capacity) hits[kept_before + place] = make_int2(row[j], static_cast<int>(j));
        kept_before += kept_total;
    }
    if (threadIdx.x == 0) out_count[blockIdx.x] = kept_before;
}

template <bool Ranked>
__global__ void __launch_bounds__(select_threads)
    select_top_hits(const int* __restrict__ scores, std::size_t stride, std::uint32_t subjects, std::uint32_t k,
                    int min_score, evalue_order order, int2* __restrict__ out, std::uint32_t* __restrict__ out_count) {
    using reduce = cub::BlockReduce<unsigned, select_threads>;
    using scan = cub::BlockScan<unsigned, select_threads>;
    __shared__ union {
        typename reduce::TempStorage reduce;
        typename scan::TempStorage scan;
    } tmp;
    __shared__ unsigned histogram[256];
    __shared__ unsigned shared_prefix, shared_need, shared_count;
    const int* row = scores + blockIdx.x * stride;
    const std::uint32_t capacity = Ranked ? order.capacity : k;
    int2* hits = out + static_cast<std::size_t>(blockIdx.x) * capacity;

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
                if (v < min_score) continue;
                const unsigned key = order_key<Ranked>(order, v, j);
                if ((key & mask) == prefix) atomicAdd(&histogram[(key >> shift) & 255u], 1u);
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
    const unsigned threshold = prefix;  // the k-th largest key (keep_all: unused)
    if (Ranked && !keep_all && threshold >= capped_keys) {
        if (threadIdx.x == 0) out_count[blockIdx.x] = ranked_on_host;
        return;
    }
    // Ranked by E-value: every key from threshold − margin on (a superset the host orders exactly).
    const unsigned band_floor = threshold > key_margin ? threshold - key_margin : 0u;

    // Keep, in subject order, the keys above the threshold and the first `need` equal to it.
    unsigned ties_before = 0, kept_before = 0;
    for (std::uint32_t base = 0; base < subjects; base += select_threads) {
        const std::uint32_t j = base + threadIdx.x;
        const int v = j < subjects ? row[j] : -1;
        const bool eligible_here = v >= min_score;
        const unsigned key = eligible_here && !keep_all ? order_key<Ranked>(order, v, j) : 0u;
        const bool tie = !keep_all && eligible_here && !Ranked && key == threshold;
        unsigned tie_rank, tie_total;
        scan(tmp.scan).ExclusiveSum(tie ? 1u : 0u, tie_rank, tie_total);
        __syncthreads();
        const bool keep = eligible_here && (keep_all || key > threshold || (Ranked && key >= band_floor) ||
                                            (tie && ties_before + tie_rank < need));
        unsigned place, kept_total;
        scan(tmp.scan).ExclusiveSum(keep ? 1u : 0u, place, kept_total);
        __syncthreads();
        if (keep && kept_before + place < capacity) hits[kept_before + place] = make_int2(v, static_cast<int>(j));
        ties_before += tie_total;
        kept_before += kept_total;
    }
    if (threadIdx.x == 0) out_count[blockIdx.x] = kept_before;
}

// A row the block selection could not bound (ranked_on_host), ranked from its candidates found over the whole device:
// after order_keys and a radix sort of the row's keys (ascending; no_key, the largest, last), row_floor finds the
// floor the host ranks from: 0 when at most k keys are eligible, else from the k-th largest eligible key T: T less
// the margin, or `near_cap` when T lies in the capped range. candidate_at picks the subjects whose key is eligible
// and at or above the floor (cub's selection keeps subject order); gather_candidates pairs each with its score.
__global__ void row_floor(const unsigned* __restrict__ sorted, std::uint32_t subjects, std::uint32_t k,
                          unsigned near_cap, unsigned* __restrict__ floor) {
    std::uint32_t lo = 0, hi = subjects;  // eligible = the place of the first no_key
    while (lo < hi) {
        const std::uint32_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] != no_key) lo = mid + 1;
        else hi = mid;
    }
    unsigned f = 0;
    if (lo > k) {
        const unsigned threshold = sorted[lo - k];
        f = threshold >= capped_keys ? near_cap : threshold > key_margin ? threshold - key_margin : 0u;
    }
    *floor = f;
}

struct candidate_at {
    const unsigned* keys;
    const unsigned* floor;
    __device__ bool operator()(std::uint32_t j) const {
        const unsigned key = keys[j];
        return key != no_key && key >= *floor;
    }
};

__global__ void __launch_bounds__(select_threads)
    gather_candidates(const int* __restrict__ row, const std::uint32_t* __restrict__ picked, std::uint32_t count,
                      int2* __restrict__ out) {
    for (std::uint32_t i = blockIdx.x * select_threads + threadIdx.x; i < count; i += gridDim.x * select_threads)
        out[i] = make_int2(row[picked[i]], static_cast<int>(picked[i]));
}

}  // namespace swgpu::gpu::kernels
