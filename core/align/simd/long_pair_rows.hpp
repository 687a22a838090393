// The CPU long-pair backend's inner loop: N consecutive rows of a tile at once, one row per vector lane, written once
// with GCC/Clang vector extensions and compiled for each instruction set (long_pair_rows_avx2.cpp: 8 lanes of 32 bits
// or 16 of 16 bits, long_pair_rows_avx512.cpp: 16 or 32; long_pair_rows.cpp, the portable build: 4 or 8), the way the
// GPU band kernel uses warp lanes.
//
// Lane k holds row i0 + k and at step t computes column j = t − k, so each lane is one column behind the lane above
// it (a wavefront of skew 1): what lane k needs from row i0 + k − 1 at column j (H, and E entering its row) was
// computed by lane k − 1 at the step before, and the diagonal H[i−1][j−1] one step earlier still; moving them is a
// shift of the whole vector by one lane, with the tile's top border entering lane 0. Recurrence and border
// conventions as core/align/long_pair/long_pair.hpp. The kernel calls no inline library function, so that the copies
// compiled for different instruction sets share no symbol the linker could pick from the wrong one.
//
// Cells of 32 bits, or of 16 bits relative to the group's corner (run_group16: twice the lanes per vector). Relative
// values are exact where every H, E and F of the group lies within 16384 of the corner's H: neighbouring H differ by at
// most σmax + oe (σmax the largest score, at least 0; oe a gap of one), E and F lie within oe of an H, and every cell of
// a group of N rows and w columns (and the cells its idle lanes compute past either end, N more columns) is at most
// 2N + w + 1 steps from the corner; narrow_fits() checks (2N + w + 2)·(σmax + 2·oe) < 16384. H >= 0 becomes
// H_rel >= −corner; where the corner is above 16384 every H of the group is positive and the floor is −32768, below
// them all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "core/align/simd/isa.hpp"

namespace swgpu::long_pair::rows {

// The widest group the kernel takes its fastest way (wider ones run, a lane extracted at every step).
inline constexpr int max_group_columns = 2048;
// The most subject letters for which σ is chosen by comparisons (one vector per letter) rather than gathered: 8 in
// 32-bit cells, 24 in 16-bit cells (protein), where a gather fills twice the lanes one at a time.
inline constexpr int max_select_letters = 8, max_select_letters16 = 24;

// One group of N rows against the columns [0, w) of a tile (pointers already at the tile's first column).
struct group {
    const int* profile;          // N x 32: profile[k * 32 + x] = σ(row k's query letter, x); rows past `rows` padded
    const std::uint8_t* subject; // w subject codes
    // Optional: the subject as `letters` compact codes (at most max_select_letters16): σ is then chosen per step by
    // comparisons where letters <= max_select_letters (16-bit cells: max_select_letters16)
    // against each letter instead of being gathered (profile[k * 32 + letter_code[c]] for compact code c).
    const std::uint8_t* compact = nullptr;
    const std::uint8_t* letter_code = nullptr;
    int letters = 0;
    // Optional, with compact codes: the same codes as 32-bit values in reverse order, compact_rev[−x] = compact[x],
    // readable for x in [−N, w + N): the codes of every lane at step t are then one load (compact_rev − t), where
    // shifting each new code in would take a broadcast and a shuffle. compact_rev16: the same as 16-bit values, for
    // the 16-bit cells.
    const int* compact_rev = nullptr;
    const std::int16_t* compact_rev16 = nullptr;
    // Optional, with compact codes: σ is `match` where a lane's row letter (its compact code, row_code[k]; a code no
    // subject letter has when the letter is not among them) equals the subject's and `mismatch` elsewhere: one
    // comparison per step. The caller checks that σ has this form on the letters involved.
    const int* row_code = nullptr;
    int match = 0, mismatch = 0;
    int w = 0;
    int rows = 0;                // real rows, 1..N: the bottom row handed on is row rows − 1
    int* top_h;                  // in: H[i0−1][j], out: H[i0+rows−1][j]          (w entries)
    int* top_e;                  // in: E[i0][j],   out: E[i0+rows][j]
    int corner = 0;              // H[i0−1][−1]
    int* left_h;                 // in: H[i0+k][−1], out: H[i0+k][w−1]             (rows entries)
    int* left_f;                 // in: F[i0+k][0],  out: F[i0+k][w]
    int oe = 0, ext = 0;
    // Optional trace (cpu_backend::trace_rect): the nibble of core/align/long_pair/long_pair.hpp's `trace` of every lane's cell at
    // every step, a byte each: steps_out[t * N + k] for the cell (i0 + k, t − k); (w + N − 1) · N bytes.
    std::uint8_t* steps_out = nullptr;
    // Optional, with steps_out: target > 0 sets hit_col[k] to the first column of row k whose H is target (−1: none).
    int target = 0;
    int* hit_col = nullptr;
    // Optional (several alignments per pair: core/align/long_pair/long_pair.hpp, forbidden_pairs): forbidden_count > 0
    // lists, for each lane k, forbidden_count columns of the tile (forbidden[x · N + k], x < forbidden_count; a
    // column outside [0, w) where there is none) whose cell may not take H from the diagonal: H = max(0, E, F) there.
    const int* forbidden = nullptr;
    int forbidden_count = 0;
};

template <int N, class T = int>
struct vector_of {
    typedef T type __attribute__((vector_size(N * sizeof(T))));
};

// Whether 16-bit cells relative to the corner are exact for groups of `lanes` rows and up to `w` columns (see the top
// of this file): sigma_max is the largest score (at least 0), oe the cost of a gap of one.
constexpr bool narrow_fits(int lanes, int w, int sigma_max, int oe) {
    return sigma_max >= 0 && oe >= 0 &&
           static_cast<long long>(2 * lanes + w + 2) * (static_cast<long long>(sigma_max) + 2LL * oe) < 16384;
}

template <int N>
struct bytes_of {
    typedef std::uint8_t type __attribute__((vector_size(N)));
};

// One group's steps, for run_group_as below: references to its locals, as a lambda capturing them by reference would
// hold, so that once the calls are inlined (always) the state is run_group_as's locals, in registers, as if the steps
// were written in its body; and, each instantiation's N and T being its instruction set's own, the copies compiled for
// different instruction sets share no symbol. Fields in the order run_group_as initializes them (by designators).
template <int N, bool Trace, bool Forbid, class T>
struct group_steps {
    using vec = typename vector_of<N, T>::type;
    static constexpr bool narrow = sizeof(T) < sizeof(int);
    // The body's last 16 bytes of lanes of H and E at every step (see `hand_on`), L per column of the bottom row.
    static constexpr int L = 16 / static_cast<int>(sizeof(T));

    const group& g;
    const vec &shift_mask, &zero, &h_floor, &one, &row_code, &match, &mismatch, &lane_row, &neg_oe, &neg_e, &w;
    const vec (&by)[narrow ? max_select_letters16 : max_select_letters];
    const int &base, &gw, &rows, &steps, &letters, &last;
    int* const& top_h;
    int* const& top_e;
    const std::uint8_t* const& compact;
    const int* const& compact_rev;
    const std::int16_t* const& compact_rev16;
    const std::uint8_t* const& subject;
    const int* const& profile;
    vec &codes, &up, &e_in, &h_left, &f, &best, &diag, &j, &hits;
    T (&tail_h)[L * max_group_columns];
    T (&tail_e)[L * max_group_columns];

    // Lane k takes lane k − 1's value, lane 0 the first lane of `first` (one two-source permute).
    [[gnu::always_inline]] vec shift_in(vec v, vec first) const { return __builtin_shuffle(v, first, shift_mask); }
    [[gnu::always_inline]] vec splat(int v) const { return zero + static_cast<T>(v); }

    // σ of every lane at step t (col: lane 0's column). Mode 0: two values, 1: by letter, 2: gathered from the profile.
    template <int Mode>
    [[gnu::always_inline]] vec sigma_at(int t, int col) const {
        vec sigma;
        if constexpr (Mode == 0 || Mode == 1) {
            if (compact_rev)
                __builtin_memcpy(&codes, compact_rev - t, sizeof codes);
            else if (compact_rev16)
                __builtin_memcpy(&codes, compact_rev16 - t, sizeof codes);
            else
                codes = shift_in(codes, splat(compact[col]));
        }
        if constexpr (Mode == 0) {
            sigma = codes == row_code ? match : mismatch;
        } else if constexpr (Mode == 1) {
            sigma = codes == 0 ? by[0] : zero;
            for (int x = 1; x < letters; ++x) sigma = codes == splat(x) ? by[x] : sigma;
        } else {  // a gather: lane k reads σ(row k, its subject letter)
            codes = shift_in(codes, splat(subject[col] & 31));
            const vec at = lane_row + codes;
            for (int k = 0; k < N; ++k) sigma[k] = static_cast<T>(profile[at[k]]);
        }
        return sigma;
    }

    // Where H comes from (0: it is 0, 1: the diagonal, 2: E, 3: F, the first that matches) and which gaps open here,
    // as trace_rect's scalar definition in core/align/long_pair/long_pair.hpp; each lane's first column whose H is the
    // target.
    template <bool Masked>
    [[gnu::always_inline]] void trace(int t, vec d, vec h, vec g_open, vec e_next, vec f_next) const {
        vec src = h == e_in ? splat(2) : splat(3);
        src = h == d ? splat(1) : src;
        src = h == h_floor ? zero : src;  // H = 0
        const vec nib = src | ((e_next == g_open) & splat(4)) | ((f_next == g_open) & splat(8));
        const auto bytes = __builtin_convertvector(nib, typename bytes_of<N>::type);
        __builtin_memcpy(g.steps_out + static_cast<std::size_t>(t) * N, &bytes, N);
        // A target further than 16-bit cells reach from the corner is no H of the group.
        if (g.target > 0 && (!narrow || (g.target - base >= -32768 && g.target - base <= 32767))) {
            vec found = (h == splat(g.target - base)) & (hits < zero);
            if constexpr (Masked) found &= (j >= zero) & (j < w);
            hits = found ? j : hits;
        }
    }

    // The bottom row's H and E at step t. Body: the last L lanes (the bottom row's column t − (N − 1) in the last)
    // stored whole, a store where taking one lane out of the vector would be a shuffle (copied to top_h, top_e after
    // the sweep); otherwise the bottom lane's column, where it lies inside the tile.
    template <bool Full, bool Body>
    [[gnu::always_inline]] void hand_on(int t, vec h, vec e_next) const {
        if constexpr (Body) {
            const int jl = t - (N - 1);
            __builtin_memcpy(tail_h + L * jl, reinterpret_cast<const char*>(&h) + (N - L) * sizeof(T), L * sizeof(T));
            __builtin_memcpy(tail_e + L * jl, reinterpret_cast<const char*>(&e_next) + (N - L) * sizeof(T),
                             L * sizeof(T));
        } else {
            const int bottom = Full ? N - 1 : last;
            const int jl = t - bottom;
            if (jl >= 0 && jl < gw) {
                top_h[jl] = h[bottom] + base;
                top_e[jl] = e_next[bottom] + base;
            }
        }
    }

    // One step. Masked: some lanes are before column 0 or past the last column (the first and last N − 1 steps, or a
    // tile narrower than N); Full: the group has N rows, so the bottom row is lane N − 1 (a constant lane); Body: every
    // lane inside the tile and the bottom lane's column inside it; Mode: σ's (sigma_at).
    template <bool Masked, bool Full, bool Body, int Mode>
    [[gnu::always_inline]] void step(int t) const {
        const int col = t < gw ? t : gw - 1;  // lane 0's inputs (unused once t >= w)
        up = shift_in(h_left, splat(top_h[col] - base));
        e_in = shift_in(e_in, splat(top_e[col] - base));
        vec d = diag + sigma_at<Mode>(t, col);
        if constexpr (Forbid)
            for (int x = 0; x < g.forbidden_count; ++x) {
                vec cols;
                __builtin_memcpy(&cols, g.forbidden + static_cast<std::size_t>(x) * N, sizeof cols);
                d = j == cols ? splat(-(1 << 29)) : d;  // below any H: neither H nor the trace's "diagonal"
            }
        vec h = d > h_floor ? d : h_floor;
        h = h > e_in ? h : e_in;
        h = h > f ? h : f;
        const vec g_open = h + neg_oe;
        vec e_next = e_in + neg_e;
        e_next = e_next > g_open ? e_next : g_open;
        vec f_next = f + neg_e;
        f_next = f_next > g_open ? f_next : g_open;
        if constexpr (Trace) trace<Masked>(t, d, h, g_open, e_next, f_next);
        diag = up;
        e_in = e_next;
        if constexpr (Masked) {
            const vec active = (j >= zero) & (j < w);
            h_left = active ? h : h_left;
            f = active ? f_next : f;
            const vec counted = active ? h : h_floor;  // inactive lanes hold borders of cells outside this tile
            best = best > counted ? best : counted;
        } else {
            h_left = h;
            f = f_next;
            best = best > h ? best : h;
        }
        hand_on<Full, Body>(t, h, e_next);
        j += one;
    }

    template <int Mode>
    [[gnu::always_inline]] void sweep() const {
        // Steps N − 1 .. w − 1 have every lane inside the tile; their bottom-row columns 0 .. w − N go to top_h and
        // top_e once they are done (no later step of the group reads them).
        const int body_begin = N - 1, body_end = gw;
        if (body_begin < body_end && rows == N && gw <= max_group_columns) {
            for (int t = 0; t < body_begin; ++t) step<true, true, false, Mode>(t);
            for (int t = body_begin; t < body_end; ++t) step<false, true, true, Mode>(t);
            for (int jl = 0; jl <= gw - N; ++jl)
                top_h[jl] = tail_h[L * jl + L - 1] + base, top_e[jl] = tail_e[L * jl + L - 1] + base;
            for (int t = body_end; t < steps; ++t) step<true, true, false, Mode>(t);
        } else {
            for (int t = 0; t < steps; ++t) step<true, false, false, Mode>(t);
        }
    }
};

// Runs a group; returns the largest H of its cells. Trace: g.steps_out is set; Forbid: g.forbidden_count > 0. T: int,
// or std::int16_t for cells relative to the corner (no forbidden cells; the caller checks narrow_fits and gives
// N = g.rows).
template <int N, bool Trace, bool Forbid, class T = int>
int run_group_as(const group& g) {
    using vec = typename vector_of<N, T>::type;
    constexpr bool narrow = sizeof(T) < sizeof(int);
    static_assert(!narrow || !Forbid, "16-bit cells: no forbidden cells");
    vec lane, shift_mask, zero;
    for (int k = 0; k < N; ++k) lane[k] = static_cast<T>(k), shift_mask[k] = static_cast<T>(k == 0 ? N : k - 1), zero[k] = 0;
    // Lane k takes lane k − 1's value, lane 0 the first lane of `first` (one two-source permute).
    const auto shift_in = [&shift_mask](vec v, vec first) { return __builtin_shuffle(v, first, shift_mask); };
    const auto splat = [&zero](int v) { return zero + static_cast<T>(v); };
    // Values in the vectors: v − base (base: 0, or the corner's H for 16-bit cells); `h_floor`: H = 0 there.
    const int base = narrow ? g.corner : 0;
    const auto rel = [base](int v) { return v - base; };
    const vec h_floor = narrow ? splat(base > 16384 ? -32768 : -base) : zero, one = splat(1);
    // σ of every lane at every step, from a vector of each lane's subject letter shifted in like the borders. Two
    // values: match where it equals the lane's row letter. Few letters: one vector per letter (σ of each lane's row
    // against it), chosen where the codes match. Otherwise each lane reads the profile at its row and letter (a
    // gather; building σ per step in a buffer first, one scalar store per cell, took 1.6 times as long for protein).
    // The group's fields in locals: the stores through top_h and top_e could otherwise alias them, and the compiler
    // would reload each from memory at every step.
    const int gw = g.w, rows = g.rows;
    int* const top_h = g.top_h;
    int* const top_e = g.top_e;
    const std::uint8_t* const compact = g.compact;
    const int* const compact_rev = narrow ? nullptr : g.compact_rev;
    const std::int16_t* const compact_rev16 = narrow ? g.compact_rev16 : nullptr;
    const std::uint8_t* const subject = g.subject;
    const int* const profile = g.profile;
    const int steps = gw + N - 1;
    constexpr int select_letters = narrow ? max_select_letters16 : max_select_letters;
    const bool by_letter = compact && g.letters <= select_letters;
    const bool two_values = by_letter && g.row_code;
    const int letters = by_letter ? g.letters : 0;
    vec by[select_letters], row_code = zero;
    const vec match = splat(g.match), mismatch = splat(g.mismatch);
    if (two_values) {
        for (int k = 0; k < N; ++k) row_code[k] = static_cast<T>(k < rows ? g.row_code[k] : -1);
    } else if (by_letter) {
        for (int x = 0; x < letters; ++x)
            for (int k = 0; k < N; ++k) by[x][k] = static_cast<T>(profile[k * 32 + g.letter_code[x]]);
    }
    vec lane_row = zero;  // each lane's row of the profile: lane · 32
    for (int k = 0; k < N; ++k) lane_row[k] = static_cast<T>(k * 32);
    vec codes = zero;
    const vec neg_oe = splat(-g.oe), neg_e = splat(-g.ext), w = splat(gw);
    vec h_left = zero, f = zero, up, e_in = zero, best = h_floor;
    for (int k = 0; k < N; ++k) {
        h_left[k] = static_cast<T>(k < rows ? rel(g.left_h[k]) : 0);
        f[k] = static_cast<T>(k < rows ? rel(g.left_f[k]) : -g.oe);
    }
    // The diagonal of lane 0 at step 0 is the corner; of lane k > 0, H[i0+k−1][−1] (the left border of the row above).
    vec diag = shift_in(h_left, splat(rel(g.corner)));
    const int last = rows - 1;
    vec j = zero - lane;  // the column of each lane at step t
    vec hits = splat(-1);  // Trace with a target: each lane's first column whose H is the target
    using steps_of = group_steps<N, Trace, Forbid, T>;
    T tail_h[steps_of::L * max_group_columns], tail_e[steps_of::L * max_group_columns];
    const steps_of s{.g = g, .shift_mask = shift_mask, .zero = zero, .h_floor = h_floor, .one = one,
                     .row_code = row_code, .match = match, .mismatch = mismatch, .lane_row = lane_row,
                     .neg_oe = neg_oe, .neg_e = neg_e, .w = w, .by = by, .base = base, .gw = gw, .rows = rows,
                     .steps = steps, .letters = letters, .last = last, .top_h = top_h, .top_e = top_e,
                     .compact = compact, .compact_rev = compact_rev, .compact_rev16 = compact_rev16,
                     .subject = subject, .profile = profile, .codes = codes, .up = up, .e_in = e_in,
                     .h_left = h_left, .f = f, .best = best, .diag = diag, .j = j, .hits = hits,
                     .tail_h = tail_h, .tail_e = tail_e};
    if (two_values)
        s.template sweep<0>();
    else if (by_letter)
        s.template sweep<1>();
    else
        s.template sweep<2>();
    for (int k = 0; k < rows; ++k) {
        g.left_h[k] = h_left[k] + base;
        g.left_f[k] = f[k] + base;
    }
    if constexpr (Trace) {
        if (g.target > 0)
            for (int k = 0; k < rows; ++k) g.hit_col[k] = hits[k];
    }
    int m = 0;
    for (int k = 0; k < rows; ++k) m = best[k] + base > m ? best[k] + base : m;
    return m;
}

template <int N>
int run_group(const group& g) {
    if (g.forbidden_count > 0) return g.steps_out ? run_group_as<N, true, true>(g) : run_group_as<N, false, true>(g);
    return g.steps_out ? run_group_as<N, true, false>(g) : run_group_as<N, false, false>(g);
}
// 16-bit cells relative to the corner: a group of exactly N rows, no forbidden cells, narrow_fits.
template <int N>
int run_group16(const group& g) {
    return g.steps_out ? run_group_as<N, true, false, std::int16_t>(g) : run_group_as<N, false, false, std::int16_t>(g);
}

// The group kernels, one per instruction set: portable (4 lanes, 8 of 16 bits), avx2 (8, 16), avx512bw (16, 32).
using group_kernel = int (*)(const group&);
struct kernel_choice {
    simd::isa isa;
    int lanes;
    group_kernel run;    // nullptr: none for this instruction set
    int lanes16 = 0;     // rows of a group of 16-bit cells (run16)
    group_kernel run16 = nullptr;
};
// The kernel built for `target`, whether or not the CPU runs it; run is nullptr for sse41 and, where the x86 kernels
// are not compiled, for avx2 and avx512bw.
kernel_choice kernel_for(simd::isa target);
// The kernels this binary has and this CPU runs, one for each of simd::available_isas() but sse41, ascending (portable
// first); best_kernel() is the last.
std::span<const kernel_choice> available_kernels();
kernel_choice best_kernel();

}  // namespace swgpu::long_pair::rows
