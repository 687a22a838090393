// A read's other placements on the subject of its best hit (SAM's and PAF's MAPQ): the best local alignment of the
// part of the read that the primary alignment aligns, elsewhere on the subject, sharing no aligned pair of residues
// with the primary: the second alignment of Waterman and Eggert (core/align/hsps.hpp) of that part, computed here by
// score only, in linear memory, over a part of the subject. The read's part, not the whole read: another part of a
// chimeric read aligned elsewhere is not another placement of this one (as minimap2's MAPQ weighs only chains that
// overlap the primary on the read).
#pragma once

#include <cstdint>
#include <span>

#include "core/align/alignment.hpp"
#include "core/align/scoring.hpp"

namespace swgpu {

// The best score of a local alignment of query[primary.query_begin, primary.query_end] against `part` (residues
// [offset, offset + part.size()) of the subject `primary` refers to) whose M columns avoid every pair (i, j) that
// `primary` aligns; 0 when there is none. H takes max(0, E, F) at a forbidden pair, as in sw_align_hsps, so over the
// whole subject the value is the score of the second Waterman-Eggert alignment of the primary's part of the query.
// Two rows of int.
int best_apart(std::span<const std::uint8_t> query, std::span<const std::uint8_t> part, std::int64_t offset,
               const alignment& primary, const scoring& sc);

}  // namespace swgpu
