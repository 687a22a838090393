// A local alignment: score, coordinates and edit operations.
//
// Coordinates are 0-based inclusive here and printed 1-based. Operations read left to right along the alignment, with
// the query as the "read" (SAM's view): M = a query residue against a subject residue, I = a query residue against a
// gap in the subject, D = a subject residue against a gap in the query.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/align/scoring.hpp"

namespace swgpu {

struct cigar_op {
    char op;             // 'M', 'I' or 'D'
    std::uint32_t len;
    bool operator==(const cigar_op&) const = default;
};

struct alignment {
    int score = 0;
    std::int64_t query_begin = -1, query_end = -1;      // 0-based inclusive; -1 when score is 0
    std::int64_t subject_begin = -1, subject_end = -1;
    std::vector<cigar_op> ops;
    bool operator==(const alignment&) const = default;
};

// Column statistics of an alignment, as BLAST reports them.
struct alignment_stats {
    std::int64_t columns = 0;     // alignment length, gap columns included
    std::int64_t identities = 0;
    std::int64_t positives = 0;   // columns with a positive substitution score
    std::int64_t mismatches = 0;  // M columns that are not identities
    std::int64_t gap_opens = 0;   // gap runs
    std::int64_t gaps = 0;        // gap columns
};

std::string cigar_string(std::span<const cigar_op> ops);

// Score of the alignment recomputed from its operations (independent of how it was found).
int rescore(const alignment& a, std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
            const scoring& sc);

alignment_stats stats_of(const alignment& a, std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                         const substitution_matrix& m);

// The aligned segments with '-' for gaps (BLAST's qseq/sseq).
std::pair<std::string, std::string> aligned_rows(const alignment& a, std::span<const std::uint8_t> query,
                                                 std::span<const std::uint8_t> subject, const substitution_matrix& m);

}  // namespace swgpu
