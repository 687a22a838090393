// One database chunk searched by several workers at once: one per GPU (or per logical device, several on one GPU).
//
// The chunk is cut into runs of consecutive subjects with about equal residues (the work of a score pass is queries x
// residues, so residues balance it, not the count of subjects); worker k searches run k on its own thread, and the
// runs' hits are merged by merge_hits, whose order (score, then subject index) does not depend on which worker found a
// hit: the result is the one a single worker gives, byte for byte. Early delivery (on_final) is passed on for a query
// once every worker has delivered it, its runs' hits merged.
//
// A spread_backend also prepares chunks for its workers (prepare(): the runs cut and each prepared by its worker's
// preparer on the reader thread), so that the GPU's packing and copying of every run is done ahead too.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/align/search/pipeline.hpp"
#include "core/align/search/search_backend.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/sequence.hpp"

namespace swgpu {

struct subject_run {
    std::size_t first = 0, count = 0;
};

// Cuts db into at most `parts` runs of consecutive subjects of about equal residues, none empty (fewer runs when db
// has fewer subjects). Deterministic.
std::vector<subject_run> spread_runs(const sequence_set& db, std::size_t parts);

// The runs of a chunk as sets of their own, each prepared for its worker.
struct spread_chunk final : prepared_chunk {
    std::vector<subject_run> runs;
    std::vector<sequence_set> sets;
    std::vector<std::unique_ptr<prepared_chunk>> parts;
};

// Scores a chunk with every worker at once, each on a thread of its own (it selects its device itself); prepares a
// chunk by cutting its runs and preparing each with its worker, a thread each. Everything else (alignments, long
// pairs) is the first worker's: the device that finishes the search.
class spread_backend final : public search_backend {
public:
    explicit spread_backend(std::vector<std::unique_ptr<search_backend>> workers);

    std::size_t workers() const { return workers_.size(); }
    std::vector<std::vector<score_hit>> score(const sequence_set& queries, const sequence_set& db,
                                              const search_options& opt) override;
    std::unique_ptr<prepared_chunk> prepare(const sequence_set& chunk) override;
    std::vector<std::optional<alignment>> align(std::span<const scored_pair> pairs) override {
        return workers_[0]->align(pairs);
    }
    double batch_align_cells() const override { return workers_[0]->batch_align_cells(); }
    std::optional<alignment> align_here(const scored_pair& pair) const override { return workers_[0]->align_here(pair); }
    bool is_long_pair(std::size_t query_length, std::size_t subject_length) const override {
        return workers_[0]->is_long_pair(query_length, subject_length);
    }
    alignment align_long_pair(const scored_pair& pair) override { return workers_[0]->align_long_pair(pair); }
    std::unique_ptr<long_pair::backend> long_pair_backend(std::span<const std::uint8_t> query,
                                                          std::span<const std::uint8_t> subject) override;
    bool leaves_threads_idle() const override { return workers_[0]->leaves_threads_idle(); }

private:
    std::vector<std::unique_ptr<search_backend>> workers_;
};

}  // namespace swgpu
