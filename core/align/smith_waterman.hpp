// Smith-Waterman-Gotoh local alignment on the CPU: the score pass and the traceback.
//
// With q the query (rows i), s the subject (columns j), σ the substitution score, o/e the BLAST gap costs:
//   E[i][j] = max(E[i-1][j] - e, H[i-1][j] - o - e)        query residue against a gap (vertical, 'I')
//   F[i][j] = max(F[i][j-1] - e, H[i][j-1] - o - e)        subject residue against a gap (horizontal, 'D')
//   H[i][j] = max(0, H[i-1][j-1] + σ(q_i, s_j), E[i][j], F[i][j])
// with H = 0 and E = F = -inf outside the matrix. The end cell is the cell of maximal H with the smallest i, then the
// smallest j. Traceback from it prefers, at each step, the diagonal over E over F, and closing a gap (coming from H)
// over extending it; it stops at a cell whose H is 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/align/alignment.hpp"
#include "core/align/scoring.hpp"

namespace swgpu {

struct sw_end {
    int score = 0;
    std::int64_t query_end = -1;    // 0-based; -1 when score is 0
    std::int64_t subject_end = -1;
    bool operator==(const sw_end&) const = default;
};

// Score and end cell, 32-bit scalar (exact for any score below 2^30).
sw_end sw_score(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc);

struct traceback_options {
    // Bytes the traceback may use for its matrices per recursion level. When the end-anchored rectangle does not fit,
    // rows are checkpointed and the blocks between checkpoints recomputed (recursively), giving the same alignment
    // with memory linear in the subject length.
    std::size_t memory_budget = std::size_t(256) << 20;
};

// The full alignment: score pass, then traceback from the end cell.
alignment sw_align(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc,
                   const traceback_options& opt = {});

// Traceback only, for an end cell found by any backend (must be the end cell of sw_score).
alignment sw_traceback(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc,
                       const sw_end& end, const traceback_options& opt = {});

}  // namespace swgpu
