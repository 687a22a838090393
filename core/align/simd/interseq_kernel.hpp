// The inter-sequence score kernel, written once over an instruction set's lane operations `L`.
//
// Included only by core/align/simd/interseq_<isa>.cpp, inside the region that compiles that file for its target.
// Everything here is a template on `L`, and each file defines its `L` types in an anonymous namespace (on the shared
// operations of core/align/simd/lanes_<isa>.hpp, in one too), so every instantiation has internal linkage: code built
// for AVX2 cannot be picked by the linker for a caller in baseline code.
//
// Inputs: a query q (codes < t.letters), a batch of L::lanes subject streams (see interseq.hpp), the score
// tables. Output: the scores, in the order interseq.hpp describes. Recurrence, all lanes at once (rows i = query
// residues, columns j = subject residues, o/e the BLAST gap costs):
//   E[i][j] = max(E[i][j-1] - e, H[i][j-1] - o - e)    gap in the query, carried along a row
//   F[i][j] = max(F[i-1][j] - e, H[i-1][j] - o - e)    gap in the subject, carried down a column
//   H[i][j] = max(0, H[i-1][j-1] + σ(q_i, s_j), E[i][j], F[i][j]),   score = max over all H
// with H = 0 and E = F = "<= 0" outside the matrix and at the start of each subject. Lanes hold values offset so that
// H = 0 is the type's minimum (score_tables): the saturating add of σ is max(0, H + σ), and E, F stop at H = 0.
//
// Columns go `C` at a time (SWIPE's trick): for each row, H and E of the pass's last column go through memory, while
// the H and F of the C columns stay in registers, so memory traffic is 1/C of one column at a time. Before a pass,
// the score profile of its columns is built with table look-ups: profile[a][c] = σ(a, residues of column c). Before
// a pass where subjects start, those lanes' maxima are reported and their H, E and maximum reset to 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/align/simd/interseq.hpp"

namespace swgpu::interseq {

template <class L, int C>
void score_batch(std::span<const std::uint8_t> query, const batch_view& batch, const score_tables& t, void* scratch,
                 int* scores) {
    using vec = typename L::vec;
    static_assert(sizeof(vec) <= max_vector_bytes && L::lanes <= max_lanes);
    const typename L::consts k = L::make_consts(t);
    const int limit = L::limit(t);
    const std::size_t m = query.size();
    const std::uint8_t* q = query.data();
    // rows[2i] = H[i][last column done], rows[2i+1] = E[i][next column]; scratch_bytes() leaves room to align.
    vec* rows = reinterpret_cast<vec*>((reinterpret_cast<std::uintptr_t>(scratch) + max_vector_bytes - 1) &
                                       ~std::uintptr_t(max_vector_bytes - 1));
    const vec zero = L::zero();
    for (std::size_t i = 0; i < 2 * m; ++i) rows[i] = zero;
    vec best = zero;
    vec profile[table_width * C];
    int lane_values[L::lanes];

    for (std::size_t j0 = 0; j0 < batch.n_columns; j0 += C) {
        if (j0 > 0) {
            const std::uint8_t* starts = batch.starts + (j0 / C) * L::lanes;
            const auto mask = L::load_starts(starts);
            if (L::any(mask)) {
                L::store_values(best, lane_values);
                for (unsigned l = 0; l < L::lanes; ++l)
                    if (starts[l]) *scores++ = lane_values[l] <= limit ? lane_values[l] : -1;
                best = L::reset(best, mask, zero);
                for (std::size_t i = 0; i < 2 * m; ++i) rows[i] = L::reset(rows[i], mask, zero);
            }
        }
        for (int c = 0; c < C; ++c) {
            const auto index = L::index_column(batch.columns + (j0 + static_cast<std::size_t>(c)) * L::lanes);
            for (int a = 0; a < t.letters; ++a) profile[a * C + c] = L::lookup(index, t, a);
        }
        vec up[C], f[C];  // H[i-1][j0+c] and F[i][j0+c]
        for (int c = 0; c < C; ++c) up[c] = f[c] = zero;
        vec left_above = zero;  // H[i-1][j0-1]
        for (std::size_t i = 0; i < m; ++i) {
            const vec* s = profile + q[i] * C;
            vec diag = left_above;
            left_above = rows[2 * i];
            vec e = rows[2 * i + 1];
#pragma GCC unroll 16
            for (int c = 0; c < C; ++c) {
                const vec h = L::max(L::max(L::adds(diag, s[c]), e), f[c]);
                best = L::max(best, h);
                const vec h_gap = L::subs(h, k.open_extend);
                e = L::max(L::subs(e, k.extend), h_gap);
                f[c] = L::max(L::subs(f[c], k.extend), h_gap);
                diag = up[c];
                up[c] = h;
            }
            rows[2 * i] = up[C - 1];
            rows[2 * i + 1] = e;
        }
    }
    L::store_values(best, lane_values);
    for (unsigned l = 0; l < L::lanes; ++l) *scores++ = lane_values[l] <= limit ? lane_values[l] : -1;
}

}  // namespace swgpu::interseq
