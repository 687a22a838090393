// A read's other placements on the subject of its best hit (SAM's and PAF's MAPQ): the best local alignment of the
// same pair that shares no aligned pair of residues with the primary one, which is the second alignment of
// Waterman and Eggert (core/align/hsps.hpp), computed here by score only, in linear memory, over a part of the subject.
#pragma once

#include <cstdint>
#include <span>

#include "core/align/alignment.hpp"
#include "core/align/scoring.hpp"

namespace swgpu {

// The best score of a local alignment of `query` against `part` (residues [offset, offset + part.size()) of the
// subject `primary` refers to) whose M columns avoid every pair (i, j) that `primary` aligns; 0 when there is none.
// H takes max(0, E, F) at a forbidden pair, as in sw_align_hsps, so the value is exactly the score of that pair's
// second Waterman-Eggert alignment when `part` is the whole subject. Two rows of int, query.size() + 1 each.
int best_apart(std::span<const std::uint8_t> query, std::span<const std::uint8_t> part, std::int64_t offset,
               const alignment& primary, const scoring& sc);

}  // namespace swgpu
