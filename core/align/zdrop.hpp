// Collinear blocks (`--zdrop Z`): a local alignment cut where it runs through a rearrangement, by minimap2's Z-drop
// rule applied to the alignment's path.
//
// minimap2 (Li 2018, Bioinformatics 34:3094; `-z`, ksw2's `ksw_extz` and align.c's `mm_test_zdrop`): walking an
// alignment from its start with its running score S, let M be the best running score so far, reached last at cell
// (i0, j0); at cell (i, j) the alignment is cut when
//     M − S > Z + e·|(i − i0) − (j − j0)|
// with e the gap extension cost (a gap of k costs o + k·e: the BLAST convention, minimap2's too). The term e·|...|
// forgives a drop that one gap explains: a deletion of k residues lowers S by o + k·e and moves the diagonal by k,
// so it cuts only when o > Z. A drop that no gap explains (the path through an inversion or a translocation, a run
// of mismatches, two gaps that cancel) cuts. As mm_test_zdrop does, the path is walked one aligned pair at a time and
// one whole gap run at a time (a gap's cells between its ends never cut when its end does not: see the proof in
// zdrop.cpp).
//
// Blocks of a path: the walk starts at the path's first pair with S = 0 and M = 0. A block ends at the cell where S
// last reached M when the rule cuts, or when S falls to 0 or below (the local alignment's own end: its score no
// longer positive), or at the path's end; it is the path from where the walk started to that cell, with score M.
// The walk then starts again right after that cell (S = 0, M = 0), so the part of the path between two blocks is
// searched for positive stretches too. Each block starts and ends with an aligned pair of positive score, never with
// a gap, and its score is what rescore() gives (re-scoring it gives its score). For an optimal local alignment (every
// prefix scores more than 0, its end is its best prefix) that the rule does not cut, the one block is the alignment
// itself, whatever Z: --zdrop changes only alignments it cuts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "core/align/alignment.hpp"
#include "core/align/scoring.hpp"

namespace swgpu {

// The largest Z taken (scores of a pair fit 32-bit integers; a larger Z cuts nothing either).
inline constexpr int max_zdrop = std::numeric_limits<int>::max() / 4;

// The blocks of `a` (an alignment of `query` against `subject` under `sc`) under the Z-drop rule with Z = zdrop (0 to
// max_zdrop), best first: score descending, then in the order along the path. At most max_blocks; only the blocks
// returned are built, so a path through a long unrelated stretch, which holds many small positive stretches, costs
// little memory.
std::vector<alignment> zdrop_blocks(const alignment& a, std::span<const std::uint8_t> query,
                                    std::span<const std::uint8_t> subject, const scoring& sc, int zdrop,
                                    std::size_t max_blocks = std::numeric_limits<std::size_t>::max());

}  // namespace swgpu
