// Many short queries against long subjects (reads against a genome): the subject cut into overlapping windows, so that
// the database-search pass gives every (query, window) pair a thread group of its own instead of streaming a whole
// genome through one group per query.
//
// Why it is exact. With L the longest query, σmax the largest substitution score and o/e the gap costs, a local
// alignment of a query of at most L residues covers fewer than V = L + L·σmax/e + 2 subject residues: every subject
// residue past the first L is a gap column costing at least e, and the score stays positive. Windows of W residues
// starting every W − V residues therefore hold every local alignment whole, and a window's cells never score more than
// the subject's (fewer paths reach them). So:
//   - the best score against the subject is the best score of its windows;
//   - the cells that reach it are the cells that reach it in some window, so the end cell (the first such cell in
//     row-major order) is the first of the windows' end cells, among the windows that reach the score;
//   - H, E and F of a cell at least V columns right of a window's start equal the subject's, so the traceback from
//     the end cell over the part [end − 2V, end] of the subject takes the subject's path.
// The score pass keeps, for each (query, long subject) hit, the windows that reach its score (the 16 best windows are
// asked for; if all 16 tie, the list may be incomplete and the alignment falls back to the whole subject).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "core/align/alignment.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/scoring.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/sequence.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/simd/align_scored.hpp"

namespace swgpu {

class subject_windows {
public:
    explicit subject_windows(const scoring& sc) : sc_(sc) {}

    // Window length and overlap for queries of at most `longest_query` residues.
    std::size_t overlap(std::size_t longest_query) const;
    std::size_t window(std::size_t longest_query) const;
    // Whether a subject of this length is searched through windows.
    bool windowed(std::size_t subject_length, std::size_t longest_query) const {
        return subject_length >= 4 * window(longest_query);
    }

    // The score pass `inner` (contract of search_cpu) with long subjects cut into windows; the same result. Early
    // delivery (on_final) is passed on only when no subject is cut.
    std::vector<std::vector<score_hit>> search(const sequence_set& queries, const sequence_set& db,
                                               const search_options& opt, const score_pass& inner);

    // sw_align_scored(query, subject, score) for a pair the score pass scored through windows; nullopt for any other
    // pair (or when the windows that reach the score were not all kept). Thread-safe.
    std::optional<alignment> align(const scored_pair& p, const traceback_options& opt = {}) const;

    // For a pair the score pass scored through windows: core/align/placement.hpp's best_apart over the subject,
    // taken window by window among the kept windows, best first, skipping those that score below `floor` (callers
    // for whom such scores change nothing) or below the best found. Exact at and above `floor`: an alignment is
    // shorter than the overlap, so it lies whole in some window and scores no more than that window; at most two
    // windows meet the primary, and a window not kept scores no more than every kept one. A window apart from the
    // primary counts with its own score when the primary aligns the whole query. nullopt for a pair not scored
    // through windows.
    std::optional<int> best_apart(const scored_pair& p, const alignment& primary, int floor = 0) const;

    static constexpr std::size_t kept_windows = 16;

private:
    using key = std::tuple<std::uint64_t, std::uint64_t, std::size_t, int>;  // query, subject sample, length, score
    struct entry {
        std::vector<std::uint64_t> starts;  // windows reaching the score, ascending
        std::vector<std::pair<std::uint64_t, int>> scored;  // every kept window: start and score
        bool complete = true;
        std::size_t window = 0, overlap = 0;
    };
    static key key_of(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, int score);

    const scoring& sc_;
    mutable std::mutex lock_;
    std::map<key, entry> kept_;
};

// The score pass of `inner` with long subjects cut into windows (subject_windows::search), and the alignments of the
// pairs it scored through windows computed through them too (align_here); `windows` must outlive it.
class windowed_backend final : public search_backend_decorator {
public:
    windowed_backend(search_backend& inner, subject_windows& windows)
        : search_backend_decorator(inner), windows_(windows) {}
    std::vector<std::vector<score_hit>> score(const sequence_set& queries, const sequence_set& db,
                                              const search_options& opt) override {
        return windows_.search(queries, db, opt, [this](const sequence_set& q, const sequence_set& d,
                                                        const search_options& o) { return inner_.score(q, d, o); });
    }
    std::optional<alignment> align_here(const scored_pair& pair) const override {
        if (auto aln = windows_.align(pair)) return aln;
        return inner_.align_here(pair);
    }

private:
    subject_windows& windows_;
};

}  // namespace swgpu
