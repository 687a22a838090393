// Smith-Waterman-Gotoh as a wavefront problem (docs/engine.md), over (max, +).
//
// Rows are query residues i, columns subject residues j. From the finished row i-1:
//   Ẽ[i][j] = max(E[i-1][j] - e, H[i-1][j] - o - e)
//   H̃[i][j] = max(H[i-1][j-1] + σ(q_i, s_j), Ẽ[i][j], 0)
// The horizontal gap is the weighted (max,+) scan of the row, with x_j the value entering cell j:
//   x_0 = -inf,   x_{j+1} = max(x_j - e, H̃[i][j] - o - e)     (the map with a = -e, b = H̃ - o - e)
//   H[i][j] = max(H̃[i][j], x_j)
// Because o >= 0, a gap opened from a cell whose value came from a horizontal gap never scores better, so x may differ
// from the textbook F while H and the score never do.
//
// The end cell (max H, smallest i, then smallest j) is kept per row as a key that orders (score desc, j asc), so rows
// may finish in any order and the result does not depend on the schedule.
#pragma once

#include <cstdint>

#include "core/host_device.hpp"
#include "core/engine/operator_pair.hpp"
#include "core/engine/wavefront.hpp"

namespace swgpu {

// (score << 32) | (0xffffffff - j): larger key = better score, then smaller column.
SWGPU_HD std::uint64_t sw_row_key(std::int64_t score, std::int64_t j) {
    return (static_cast<std::uint64_t>(score) << 32) | (0xffffffffull - static_cast<std::uint64_t>(j));
}
SWGPU_HD std::int64_t sw_key_score(std::uint64_t key) { return static_cast<std::int64_t>(key >> 32); }
SWGPU_HD std::int64_t sw_key_col(std::uint64_t key) { return static_cast<std::int64_t>(0xffffffffull - (key & 0xffffffffull)); }

template <class T>
struct sw_problem {
    using op = max_plus<T>;
    struct cell {
        T h, e;
    };
    struct gathered {
        T ht, e;
    };
    static constexpr bool constant_weight = true;

    const std::uint8_t* query;
    const std::uint8_t* subject;
    index_t m, n;
    const std::int8_t* table;  // substitution_matrix::table()
    T open_extend, extend;
    std::uint64_t* row_best;  // m entries, zero-initialized

    SWGPU_HD index_t rows() const { return m; }
    SWGPU_HD index_t cols() const { return n; }
    SWGPU_HD cell top(index_t) const { return {T(0), op::identity()}; }
    SWGPU_HD cell left(index_t) const { return {T(0), op::identity()}; }
    SWGPU_HD T incoming(index_t) const { return op::identity(); }
    SWGPU_HD T weight(index_t) const { return T(-extend); }
    // Every row's weight is at most 0 and every value entering a row is -inf: the GPU engine may scan the rows with
    // one add-and-max per step (descending_max_plus_algebra).
    SWGPU_HD bool weights_descending() const { return extend >= 0; }
    SWGPU_HD gathered gather(index_t i, index_t j, const cell& up, const cell& diag) const {
        // up.h >= 0, so up.h - open_extend is above -inf and decides whenever up.e - extend would fall below it: the
        // plain subtraction equals dist(up.e, -extend) here without dist's clamp (and never wraps: up.e >= -inf).
        const T e = op::acc(T(up.e - extend), T(up.h - open_extend));
        const T sigma = table[query[i] * 32 + subject[j]];
        T ht = op::acc(T(diag.h + sigma), e);
        ht = op::acc(ht, T(0));
        return {ht, e};
    }
    SWGPU_HD linear_map<op> carry(index_t, index_t, const gathered& g) const {
        return {T(-extend), T(g.ht - open_extend)};
    }
    SWGPU_HD cell finish(index_t i, index_t j, const gathered& g, T x) {
        const T h = op::acc(g.ht, x);
        const std::uint64_t key = sw_row_key(h, j);
        if (key > row_best[i] && h > 0) row_best[i] = key;
        return {h, g.e};
    }
};

}  // namespace swgpu
