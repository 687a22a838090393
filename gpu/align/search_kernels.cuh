// Kernels of the database-search score pass.
//
// Recurrence (Smith-Waterman-Gotoh, BLAST gap costs o/e, oe = o + e; query residue i, subject residue j):
//   E[i][j] = max(E[i-1][j] - e, H[i-1][j] - oe)          gap running along the query
//   F[i][j] = max(F[i][j-1] - e, H[i][j-1] - oe)          gap running along the subject
//   H[i][j] = max(0, H[i-1][j-1] + σ(q_i, s_j), E[i][j], F[i][j]),   score = max over all H
// with H = 0 and E = F = -inf outside the matrix. This is core/align/smith_waterman.hpp's recurrence; only the score is
// computed here (end cells and alignments are found afterwards on the host for the printed hits).
//
// dpx_search (the fast path): a persistent kernel over block tasks (gpu/align/search_plan.hpp). A block task is one query
// pair against up to block_threads / G subjects of one length class; each subject gets a group of G threads.
//   * Orientation: query columns live in registers, the subject streams through as rows. Thread t of a group holds R
//     consecutive query columns of the current pass (a pass covers G*R columns); at step k it computes row j = k - t,
//     so every thread is one row behind its left neighbour (a wavefront of skew 1). Rows outside [0, length) read pad
//     letters (score <= 0): with H = 0 and E, F >= -oe coming in, such rows leave H = 0 above the matrix and never
//     exceed the true maximum below it, so the skew needs no masking.
//   * Values: a 32-bit word holds two alignments (the two queries of a pair) in 16-bit lanes, updated with Hopper's
//     DPX instructions (6.5 per word-cell, see row_cells). The lanes_s32 variant holds one alignment per word in
//     32 bits. Each kernel is compiled for one (class, R): a pair of length L in class c runs ceil(L / (G*R)) passes
//     with R = regs_for(L, c) (gpu/align/search_plan.hpp), so padding stays below G columns per pass.
//   * Substitution scores come from a per-pass profile chunk in shared memory: word (letter x, column c) = the two
//     lanes' scores of x against query column c. A thread reads its R columns of the row of the current subject
//     letter with 16-byte loads; the chunk's row stride is a multiple of 32 words and a thread's stripe is an odd
//     number of 16-byte units, so the 8 threads of a quarter warp hit 8 distinct bank quads whatever the letters.
//   * Between threads: thread t passes (H, E) of its last column to t+1 by warp shuffle every step (the group's
//     shuffles also keep its lanes in step). Between passes: thread G-1 writes (H, E) of the pass's last column for
//     every row to the group's boundary slot in global memory; thread 0 of the next pass reads them as its left input.
//     One slot serves both directions: row j is read (and consumed) by thread 0 at step j-1 at the latest and
//     overwritten by thread G-1 at step j+G-1; the __syncthreads between passes makes one pass's writes visible to
//     the next pass's reads.
//   * Overflow: in 16-bit lanes, no value wraps while every H stays <= 32767 - max σ; the first wrap needs an
//     earlier H above that bound, which the running maximum has seen. A lane whose maximum exceeds the bound is
//     listed in `overflow` and recomputed by the lanes_s32 kernel; its score is written there.
//
// simple_search (the reference path): one thread per (query, subject), 32-bit, the textbook row sweep.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "gpu/align/db_layout.hpp"
#include "gpu/align/search_plan.hpp"
#include "gpu/align/sw_cells.cuh"

namespace swgpu::gpu::kernels {

inline constexpr int block_threads = 128;

// Everything dpx_search reads and writes; built on the host and passed by value.
struct dpx_params {
    const std::uint8_t* residues;           // packed_db::residues
    const std::uint64_t* subject_offset;    // per sorted subject
    const std::uint32_t* subject_length;
    const std::uint32_t* subject_original;
    const std::uint32_t* task_subjects;
    const search_task* tasks;
    std::uint32_t task_count;
    std::uint32_t* task_counter;            // zero before the launch; blocks take tasks in order
    const query_pair* pairs;
    const std::uint32_t* profiles;
    int profile_rows;                       // letters + 1 (the pad letter)
    uint2* boundary;                        // per block: boundary_block entries
    std::size_t boundary_block;
    std::uint32_t class_rows[search_class_count];  // boundary rows per group in each class (its longest subject)
    int* scores;                            // [query - query_base][original subject index]
    std::size_t score_stride;
    std::int32_t query_base;
    uint2* overflow;                        // (query, sorted subject) whose 16-bit lane may have wrapped
    std::uint32_t* overflow_count;
    std::uint32_t overflow_capacity;
    int gap_oe, gap_e;
    int overflow_above;                     // a 16-bit lane maximum above this is recomputed in 32 bits
};

struct group_state {
    int t;                         // thread index in the group
    unsigned mask;                 // the group's lanes in the warp
    bool active;                   // the task has a subject for this group
    const std::uint8_t* subject;   // first residue (pad letters around it)
    int length;                    // rows streamed (a twin group: the longer of its two subjects)
    const std::uint8_t* subjects[2];  // a twin group: lane l's subject and its length (0: none); rows past a
    int lengths[2];                   // subject's end read as pad letters
    uint2* slot;                   // boundary rows of this group
};

// Streams the group's subject through one pass of R columns per thread; the profile chunk is in `chunk`.
// read_boundary: thread 0's left input comes from the slot (else the matrix edge: H = 0, E = -oe).
// write_boundary: thread G-1 stores its last column's (H, E) per row for the next pass.
template <int G, int R, class Lanes, bool Twin>
__device__ __forceinline__ void stream_pass(const dpx_params& p, const std::uint32_t* chunk, const group_state& gs,
                                            bool read_boundary, bool write_boundary, std::uint32_t& m) {
    const std::uint32_t neg_oe = Lanes::splat(-p.gap_oe), neg_e = Lanes::splat(-p.gap_e);
    const std::uint32_t* stripe = chunk + gs.t * chunk_stripe_words(R);
    const int t = gs.t, length = gs.length;
    const bool reader = read_boundary && t == 0;
    const bool writer = write_boundary && t == G - 1;
    const uint2 edge = make_uint2(0u, neg_oe);
    auto left_input = [&](int j) {
        uint2 v = edge;
        if (reader && j < length) v = gs.slot[j];
        return v;
    };

    std::uint32_t f[R], h[R];
#pragma unroll
    for (int c = 0; c < R; ++c) f[c] = neg_oe, h[c] = 0u;
    std::uint32_t hdiag = 0u;  // H[first column - 1][j - 1]
    const uint2 in0 = left_input(0);
    std::uint32_t hin = t == 0 ? in0.x : 0u, ein = t == 0 ? in0.y : neg_oe;
    uint2 in1 = left_input(1), in2 = left_input(2);
    const std::uint8_t* letters = gs.subject - t;  // letters[k] is row k - t
    int x0 = letters[0], x1 = letters[1];
    // A twin group's lane-1 letters (x0, x1 are lane 0's), pad letters outside each subject: a shorter subject's
    // rows past its end lie beyond its pad run.
    const int pad = p.profile_rows - 1;
    const auto twin_letter = [&](int l, int k) {
        return static_cast<unsigned>(k - t) < static_cast<unsigned>(gs.lengths[l]) ? int(gs.subjects[l][k - t]) : pad;
    };
    int y0 = 0, y1 = 0;
    if constexpr (Twin) x0 = twin_letter(0, 0), x1 = twin_letter(0, 1), y0 = twin_letter(1, 0), y1 = twin_letter(1, 1);

    // Two rows per iteration: the letters and boundary inputs of the next iteration are loaded at its start.
    const int steps = length + G - 1;
    for (int k = 0; k < steps; k += 2) {
        const uint2 next1 = left_input(k + 3), next2 = left_input(k + 4);
        int nx0 = letters[k + 2], nx1 = letters[k + 3], ny0 = 0, ny1 = 0;
        if constexpr (Twin)
            nx0 = twin_letter(0, k + 2), nx1 = twin_letter(0, k + 3), ny0 = twin_letter(1, k + 2), ny1 = twin_letter(1, k + 3);
#pragma unroll 1
        for (int half = 0; half < 2; ++half) {
            const std::uint32_t diag = hdiag;
            hdiag = hin;
            std::uint32_t e = ein;
            if constexpr (Twin)
                twin_row_cells<R>(stripe + (half == 0 ? x0 : x1) * chunk_row_words(G, R),
                                  stripe + (half == 0 ? y0 : y1) * chunk_row_words(G, R), diag, e, h, f, m, neg_oe, neg_e);
            else
                row_cells<R, Lanes>(stripe + (half == 0 ? x0 : x1) * chunk_row_words(G, R), diag, e, h, f, m,
                                    neg_oe, neg_e);
            const std::uint32_t hout = h[R - 1];
            if (writer) {
                const int j = k + half - (G - 1);
                if (j >= 0 && j < length) gs.slot[j] = make_uint2(hout, e);
            }
            hin = __shfl_up_sync(gs.mask, hout, 1, G);
            ein = __shfl_up_sync(gs.mask, e, 1, G);
            if (t == 0) {
                const uint2 in = half == 0 ? in1 : in2;
                hin = in.x, ein = in.y;
            }
        }
        in1 = next1, in2 = next2;
        x0 = nx0, x1 = nx1;
        y0 = ny0, y1 = ny1;
    }
}

// One pass for the whole block: load the chunk of query columns [column0, column0 + G*R), then stream.
template <int G, int R, class Lanes, bool Twin>
__device__ void block_pass(const dpx_params& p, std::uint32_t* chunk, const group_state& gs, const query_pair& pair,
                           std::uint32_t column0, bool first, bool last, std::uint32_t& m) {
    constexpr int cols = G * R;
    const std::uint32_t* prof = p.profiles + pair.profile_offset + column0;
    const int words = p.profile_rows * cols;
    __syncthreads();  // every group is done with the previous chunk
    for (int idx = threadIdx.x; idx < words; idx += block_threads) {
        const int x = idx / cols, c = idx - x * cols;
        const int owner = c / R, o = c - owner * R;
        chunk[x * chunk_row_words(G, R) + owner * chunk_stripe_words(R) + o] =
            prof[static_cast<std::size_t>(x) * pair.padded_length + c];
    }
    __syncthreads();  // the chunk and the previous pass's boundary writes are visible
    if (gs.active) stream_pass<G, R, Lanes, Twin>(p, chunk, gs, !first, !last, m);
}

// A block task of class Cls with R columns per thread: every group aligns the pair against its subject over all
// passes (a twin pair's group: its query against two subjects, one per lane), then writes the scores (or lists the
// lanes for the 32-bit recomputation).
template <int Cls, int R, class Lanes, bool Twin>
__device__ __forceinline__ void run_task(const dpx_params& p, std::uint32_t* chunk, const search_task& task) {
    constexpr int G = search_classes[Cls].group_size;
    static_assert(G >= 4 && G <= 32 && (G & (G - 1)) == 0 && block_threads % G == 0, "group size");
    static_assert(R >= 1 && R <= search_classes[Cls].regs, "columns per thread");
    const int g = threadIdx.x / G;
    group_state gs;
    gs.t = threadIdx.x % G;
    gs.mask = G == 32 ? 0xffffffffu : ((1u << G) - 1u) << ((threadIdx.x & 31) & ~(G - 1));
    constexpr int per_group = Twin ? 2 : 1;
    gs.active = g * per_group < task.count;
    std::uint32_t subject = 0, subjects[2] = {0, 0};
    gs.subject = p.residues + pad_run;
    gs.length = 0;
    if (gs.active) {
        subject = p.task_subjects[task.first + g * per_group];
        gs.subject = p.residues + p.subject_offset[subject];
        gs.length = static_cast<int>(p.subject_length[subject]);
    }
    if constexpr (Twin) {
#pragma unroll
        for (int l = 0; l < 2; ++l) {
            const bool has = gs.active && 2 * g + l < task.count;
            subjects[l] = has ? p.task_subjects[task.first + 2 * g + l] : 0u;
            gs.subjects[l] = has ? p.residues + p.subject_offset[subjects[l]] : gs.subject;
            gs.lengths[l] = has ? static_cast<int>(p.subject_length[subjects[l]]) : 0;
        }
        gs.length = max(gs.lengths[0], gs.lengths[1]);
    }
    gs.slot = p.boundary + blockIdx.x * p.boundary_block + static_cast<std::size_t>(g) * p.class_rows[Cls];

    const query_pair pair = p.pairs[task.pair];
    constexpr std::uint32_t width = G * R;
    const std::uint32_t passes = (pair.length + width - 1) / width;
    std::uint32_t m = 0u;
    for (std::uint32_t pass = 0; pass < passes; ++pass)
        block_pass<G, R, Lanes, Twin>(p, chunk, gs, pair, pass * width, pass == 0, pass + 1 == passes, m);
#pragma unroll
    for (int off = G / 2; off > 0; off >>= 1) m = Lanes::max2(m, __shfl_xor_sync(gs.mask, m, off, G));

    if (gs.active && gs.t == 0) {
        if constexpr (Twin) {
            // One query, lane l against subject l of the group.
            const int q = pair.query[0];
#pragma unroll
            for (int l = 0; l < 2; ++l) {
                if (2 * g + l >= task.count) continue;  // the task's last group may hold one subject
                const int v = Lanes::lane(m, l);
                int* dst = p.scores + static_cast<std::size_t>(q - p.query_base) * p.score_stride +
                           p.subject_original[subjects[l]];
                if (v > p.overflow_above) {
                    const std::uint32_t at = atomicAdd(p.overflow_count, 1u);
                    if (at < p.overflow_capacity)
                        p.overflow[at] = make_uint2(static_cast<std::uint32_t>(q), subjects[l]);
                    *dst = -1;
                } else {
                    *dst = v;
                }
            }
            return;
        }
        const std::uint32_t original = p.subject_original[subject];
#pragma unroll
        for (int l = 0; l < Lanes::count; ++l) {
            const int q = pair.query[l];
            if (q < 0) continue;
            const int v = Lanes::lane(m, l);
            int* dst = p.scores + static_cast<std::size_t>(q - p.query_base) * p.score_stride + original;
            if (Lanes::count == 2 && v > p.overflow_above) {
                const std::uint32_t at = atomicAdd(p.overflow_count, 1u);
                if (at < p.overflow_capacity) p.overflow[at] = make_uint2(static_cast<std::uint32_t>(q), subject);
                *dst = -1;
            } else {
                *dst = v;
            }
        }
    }
}

// The persistent kernel of one (class, columns per thread) configuration: blocks take tasks from p.tasks in order
// until none is left. All tasks of a launch share the configuration, so each kernel gets the registers it needs.
template <int Cls, int R, class Lanes, bool Twin>
__global__ void __launch_bounds__(block_threads) dpx_search(const dpx_params p) {
    extern __shared__ uint4 chunk_storage[];
    std::uint32_t* chunk = reinterpret_cast<std::uint32_t*>(chunk_storage);
    __shared__ std::uint32_t next_task;
    for (;;) {
        __syncthreads();  // every thread has read next_task of the previous round
        if (threadIdx.x == 0) next_task = atomicAdd(p.task_counter, 1u);
        __syncthreads();
        const std::uint32_t ti = next_task;
        if (ti >= p.task_count) return;
        run_task<Cls, R, Lanes, Twin>(p, chunk, p.tasks[ti]);
    }
}

// Host-side table of the kernels: kernel_table<Lanes, Twin>::get(cls, regs).
template <class Lanes, bool Twin = false>
struct kernel_table {
    using kernel = void (*)(dpx_params);
    template <int C, int... I>
    static constexpr void fill_class(kernel (&row)[32], std::integer_sequence<int, I...>) {
        ((row[I] = &dpx_search<C, I + 1, Lanes, Twin>), ...);
    }
    template <int... C>
    static void fill(kernel (&table)[search_class_count][32], std::integer_sequence<int, C...>) {
        (fill_class<C>(table[C], std::make_integer_sequence<int, search_classes[C].regs>{}), ...);
    }
    static kernel get(int cls, int regs) {
        static kernel table[search_class_count][32] = {};
        static const bool filled = (fill(table, std::make_integer_sequence<int, search_class_count>{}), true);
        (void)filled;
        return table[cls][regs - 1];
    }
};

// Profiles of query pairs (gpu/align/search_plan.hpp): one block row per pair.
__global__ void build_profiles(const std::uint8_t* query_residues, const std::uint64_t* query_offsets,
                               const query_pair* pairs, const std::int8_t* matrix /* 32 x 32 */, int letters,
                               int pad_score, int lanes, std::uint32_t* profiles) {
    const query_pair pr = pairs[blockIdx.y];
    const std::uint32_t stride = blockDim.x * gridDim.x;
    for (std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < pr.padded_length; c += stride) {
        int code[2] = {letters, letters};
        for (int l = 0; l < lanes; ++l) {
            const int q = pr.query[l];
            if (q < 0) continue;
            const std::uint64_t begin = query_offsets[q], len = query_offsets[q + 1] - begin;
            if (c < len) code[l] = query_residues[begin + c];
        }
        std::uint32_t* out = profiles + pr.profile_offset + c;
        for (int x = 0; x <= letters; ++x) {
            int s[2];
            for (int l = 0; l < 2; ++l)
                s[l] = (x == letters || code[l] == letters) ? pad_score : matrix[code[l] * 32 + x];
            out[static_cast<std::size_t>(x) * pr.padded_length] =
                lanes == 2 ? (static_cast<std::uint32_t>(s[0]) & 0xffffu) | (static_cast<std::uint32_t>(s[1]) << 16)
                           : static_cast<std::uint32_t>(s[0]);
        }
    }
}

// The reference kernel: one thread per (query, subject) pair, 32-bit scores, rows = query residues, a row buffer of
// (H, E) over the subject in `scratch` (scratch_stride entries per thread).
__global__ void simple_search(const std::uint8_t* query_residues, const std::uint64_t* query_offsets,
                              std::uint32_t query_first, std::uint32_t query_count, const std::uint8_t* subject_residues,
                              const std::uint64_t* subject_offsets, std::uint32_t subject_count,
                              const std::int8_t* matrix, int gap_oe, int gap_e, int* scores, int2* scratch,
                              std::size_t scratch_stride) {
    constexpr int neg_inf = -(1 << 29);
    const std::uint64_t total = static_cast<std::uint64_t>(query_count) * subject_count;
    const std::uint64_t stride = static_cast<std::uint64_t>(blockDim.x) * gridDim.x;
    const std::uint64_t self = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    int2* row = scratch + self * scratch_stride;
    for (std::uint64_t pair = self; pair < total; pair += stride) {
        const std::uint32_t qi = static_cast<std::uint32_t>(pair / subject_count);
        const std::uint32_t si = static_cast<std::uint32_t>(pair % subject_count);
        const std::uint8_t* q = query_residues + query_offsets[query_first + qi];
        const std::uint64_t m = query_offsets[query_first + qi + 1] - query_offsets[query_first + qi];
        const std::uint8_t* s = subject_residues + subject_offsets[si];
        const std::uint64_t n = subject_offsets[si + 1] - subject_offsets[si];
        for (std::uint64_t j = 0; j < n; ++j) row[j] = make_int2(0, neg_inf);  // (H, E) of row -1
        int best = 0;
        for (std::uint64_t i = 0; i < m; ++i) {
            const std::int8_t* sigma = matrix + q[i] * 32;
            int diag = 0, left = 0, f = neg_inf;
            for (std::uint64_t j = 0; j < n; ++j) {
                const int2 up = row[j];
                const int e = max(up.y - gap_e, up.x - gap_oe);
                f = max(f - gap_e, left - gap_oe);
                const int h = max(max(0, diag + sigma[s[j]]), max(e, f));
                diag = up.x;
                row[j] = make_int2(h, e);
                left = h;
                best = max(best, h);
            }
        }
        scores[static_cast<std::size_t>(qi) * subject_count + si] = best;
    }
}

}  // namespace swgpu::gpu::kernels
