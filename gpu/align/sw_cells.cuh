// The Smith-Waterman-Gotoh cell code shared by the database kernels (gpu/align/search_kernels.cuh) and the long-pair kernel
// (gpu/align/long_pair_kernels.cuh): score lanes (two 16-bit alignments or one 32-bit alignment per word, updated with Hopper's DPX
// instructions), the shared-memory geometry of a profile chunk, and one thread's step over R consecutive cells.
// See gpu/align/search_kernels.cuh for the orientation (cells in registers along one sequence, the other streaming through).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace swgpu::gpu::kernels {

// Two alignments per word, one per signed 16-bit lane.
struct lanes_s16x2 {
    static constexpr int count = 2;
    __host__ __device__ static constexpr std::uint32_t splat(int v) {
        return (static_cast<std::uint32_t>(v) & 0xffffu) | (static_cast<std::uint32_t>(v) << 16);
    }
    __device__ static std::uint32_t add(std::uint32_t a, std::uint32_t b) { return __vadd2(a, b); }
    __device__ static std::uint32_t max3_relu(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
        return __vimax3_s16x2_relu(a, b, c);
    }
    __device__ static std::uint32_t addmax(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
        return __viaddmax_s16x2(a, b, c);
    }
    __device__ static std::uint32_t max3(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
        return __vimax3_s16x2(a, b, c);
    }
    __device__ static std::uint32_t max2(std::uint32_t a, std::uint32_t b) { return __vmaxs2(a, b); }
    __device__ static std::uint32_t max2_relu(std::uint32_t a, std::uint32_t b) { return __vimax_s16x2_relu(a, b); }
    __device__ static int lane(std::uint32_t w, int l) {
        return l == 0 ? static_cast<int>(static_cast<std::int16_t>(w & 0xffffu))
                      : static_cast<int>(static_cast<std::int16_t>(w >> 16));
    }
};

// One alignment per word, signed 32-bit.
struct lanes_s32 {
    static constexpr int count = 1;
    __host__ __device__ static constexpr std::uint32_t splat(int v) { return static_cast<std::uint32_t>(v); }
    __device__ static std::uint32_t add(std::uint32_t a, std::uint32_t b) {
        return static_cast<std::uint32_t>(static_cast<int>(a) + static_cast<int>(b));
    }
    __device__ static std::uint32_t max3_relu(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
        return static_cast<std::uint32_t>(
            __vimax3_s32_relu(static_cast<int>(a), static_cast<int>(b), static_cast<int>(c)));
    }
    __device__ static std::uint32_t addmax(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
        return static_cast<std::uint32_t>(
            __viaddmax_s32(static_cast<int>(a), static_cast<int>(b), static_cast<int>(c)));
    }
    __device__ static std::uint32_t max3(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
        return static_cast<std::uint32_t>(__vimax3_s32(static_cast<int>(a), static_cast<int>(b), static_cast<int>(c)));
    }
    __device__ static std::uint32_t max2(std::uint32_t a, std::uint32_t b) {
        return static_cast<std::uint32_t>(max(static_cast<int>(a), static_cast<int>(b)));
    }
    __device__ static std::uint32_t max2_relu(std::uint32_t a, std::uint32_t b) {
        return static_cast<std::uint32_t>(__vimax_s32_relu(static_cast<int>(a), static_cast<int>(b)));
    }
    __device__ static int lane(std::uint32_t w, int) { return static_cast<int>(w); }
};

// Shared-memory geometry of one pass's profile chunk for groups of G threads with R columns each: a thread's stripe
// is an odd number of 16-byte units, a letter row a multiple of 32 words (so the bank of a word does not depend on
// its letter row).
constexpr int chunk_stripe_words(int R) { return 4 * (((R + 3) / 4) | 1); }
constexpr int chunk_row_words(int G, int R) { return (G * chunk_stripe_words(R) + 31) / 32 * 32; }

// The R words of a profile row (16-byte loads where R allows).
template <int R>
__device__ __forceinline__ void load_scores(const std::uint32_t* __restrict__ prof, std::uint32_t (&sc)[R]) {
#pragma unroll
    for (int c4 = 0; c4 < R; c4 += 4) {
        if (R - c4 >= 4) {
            const uint4 v = *reinterpret_cast<const uint4*>(prof + c4);
            sc[c4] = v.x, sc[c4 + 1] = v.y, sc[c4 + 2] = v.z, sc[c4 + 3] = v.w;
        } else if (R - c4 >= 2) {
            const uint2 v = *reinterpret_cast<const uint2*>(prof + c4);
            sc[c4] = v.x, sc[c4 + 1] = v.y;
            if (R - c4 == 3) sc[c4 + 2] = prof[c4 + 2];
        } else {
            sc[c4] = prof[c4];
        }
    }
}

template <int R, class Lanes>
__device__ __forceinline__ void scored_cells(const std::uint32_t (&sc)[R], std::uint32_t diag, std::uint32_t& e,
                                             std::uint32_t (&h)[R], std::uint32_t (&f)[R], std::uint32_t& m,
                                             std::uint32_t neg_oe, std::uint32_t neg_e);

// One row of R cells of one thread, in place: h enters as the previous row's H and leaves as this row's; F is
// updated in place and E along the row. `diag` enters as H[first column - 1][j - 1], `e` as E[first column][j]; on
// return e is E[last column + 1][j]. The diagonal input of column c+1 (the old h[c]) is added to its substitution
// score before h[c] is overwritten, so no register holds two rows at once.
//
// Per cell, with d = H[i-1][j-1] + σ and x = max(d, F, 0): H = max(x, E), F' = max(F - e, H - oe) and
// E' = max(E - e, x - oe), which equals max(E - e, H - oe) because oe >= e. So the only dependency from one column
// to the next is E -> E': one fused add-max (VIADDMNMX), where E' from H would chain three instructions; measured on
// the H100 (classic20 vs db20k x10), the short chain is 9% faster than the textbook order despite one more addition.
// The running maximum takes x: the best H of a local alignment is a diagonal step (d), and x <= H, so the maxima
// are equal; it also keeps the overflow argument (every H computed before a 16-bit wrap is <= the maximum of x).
// On sm_90 a cell compiles to 6.5 DPX instructions: VIADDMNMX.RELU (x, fused with d), VIMNMX (H), two VIADD.16x2
// (x - oe, H - oe), two VIADDMNMX (E', F'), half a VIMNMX3 (running maximum of two columns).
template <int R, class Lanes>
__device__ __forceinline__ void row_cells(const std::uint32_t* __restrict__ prof, std::uint32_t diag, std::uint32_t& e,
                                          std::uint32_t (&h)[R], std::uint32_t (&f)[R], std::uint32_t& m,
                                          std::uint32_t neg_oe, std::uint32_t neg_e) {
    std::uint32_t sc[R];
    load_scores<R>(prof, sc);
    scored_cells<R, Lanes>(sc, diag, e, h, f, m, neg_oe, neg_e);
}

// row_cells for two subjects in the two 16-bit lanes against one query (a twin pair, gpu/align/search_plan.hpp):
// `prof0` and `prof1` are the profile rows of lane 0's and lane 1's subject letters (both halves of a twin profile
// word hold the same score), and each word takes its low half from prof0's and its high half from prof1's (one
// PRMT).
template <int R>
__device__ __forceinline__ void twin_row_cells(const std::uint32_t* __restrict__ prof0,
                                               const std::uint32_t* __restrict__ prof1, std::uint32_t diag,
                                               std::uint32_t& e, std::uint32_t (&h)[R], std::uint32_t (&f)[R],
                                               std::uint32_t& m, std::uint32_t neg_oe, std::uint32_t neg_e) {
    std::uint32_t sc[R], sc1[R];
    load_scores<R>(prof0, sc);
    load_scores<R>(prof1, sc1);
#pragma unroll
    for (int c = 0; c < R; ++c) sc[c] = __byte_perm(sc[c], sc1[c], 0x7610);
    scored_cells<R, lanes_s16x2>(sc, diag, e, h, f, m, neg_oe, neg_e);
}

// One row of cells from its substitution scores (row_cells above).
template <int R, class Lanes>
__device__ __forceinline__ void scored_cells(const std::uint32_t (&sc)[R], std::uint32_t diag, std::uint32_t& e,
                                             std::uint32_t (&h)[R], std::uint32_t (&f)[R], std::uint32_t& m,
                                             std::uint32_t neg_oe, std::uint32_t neg_e) {
    std::uint32_t d = Lanes::add(diag, sc[0]);
    std::uint32_t previous = 0;
#pragma unroll
    for (int c = 0; c < R; ++c) {
        const std::uint32_t d_next = c + 1 < R ? Lanes::add(h[c], sc[c + 1]) : 0u;
        const std::uint32_t x = Lanes::max2_relu(d, f[c]);
        const std::uint32_t hv = Lanes::max2(x, e);
        const std::uint32_t g = Lanes::add(hv, neg_oe);
        e = Lanes::addmax(e, neg_e, Lanes::add(x, neg_oe));
        f[c] = Lanes::addmax(f[c], neg_e, g);
        h[c] = hv;
        if (c & 1) m = Lanes::max3(m, previous, x);
        else if (c == R - 1) m = Lanes::max2(m, x);
        previous = x;
        d = d_next;
    }
}

}  // namespace swgpu::gpu::kernels
