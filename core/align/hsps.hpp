// Several local alignments of one pair (BLAST's HSPs; `--max-hsps`): the best alignment, then the best one that
// shares no aligned pair of residues with those before it, and so on (Waterman and Eggert 1987; the non-intersecting
// alignments of SIM, Huang and Miller 1991, which lalign36 computes).
//
// Each alignment after the first is found in the matrix of core/align/smith_waterman.hpp with the pairs (i, j) that
// earlier alignments aligned (their 'M' columns) forbidden as diagonal steps: H[i][j] takes max(0, E, F) there, so a
// later alignment may cross an earlier one in a gap but never aligns a residue pair it aligned. End cell and
// traceback follow sw_align's rules (first cell of the best score in row-major order; diagonal before E before F,
// closing a gap before extending it), so the first alignment is sw_align's. Exact: every matrix is recomputed in
// full with the forbidden pairs, rows from the first forbidden one on (the rows above it are unchanged).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/align/alignment.hpp"
#include "core/align/composition.hpp"
#include "core/align/scoring.hpp"

namespace swgpu {

struct hsp_options {
    int max_hsps = 1;      // at most this many alignments
    int min_score = 1;     // stop at the first alignment scoring less (and never report a score of 0)
    // Cells (query length x subject length) beyond which the pair is refused (usage_error, exit 2): the matrices
    // take 12 bytes a cell.
    double max_cells = double(1 << 26);
};

// The alignments in order of discovery (scores non-increasing), at most opt.max_hsps.
std::vector<alignment> sw_align_hsps(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                     const scoring& sc, const hsp_options& opt);
// The same with a wide (composition-adjusted: core/align/composition.hpp) matrix and its gap costs; the first is
// sw_align_wide's alignment.
std::vector<alignment> sw_align_hsps_wide(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                          const wide_matrix& m, int gap_open, int gap_extend, const hsp_options& opt);

}  // namespace swgpu
