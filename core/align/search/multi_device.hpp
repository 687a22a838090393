// One database chunk searched by several workers at once: one per GPU (or per logical device, several on one GPU).
//
// The chunk is cut into runs of consecutive subjects with about equal residues (the work of a score pass is queries x
// residues, so residues balance it, not the count of subjects); worker k searches run k on its own thread, and the
// runs' hits are merged by merge_hits, whose order (score, then subject index) does not depend on which worker found a
// hit: the result is the one a single worker gives, byte for byte. Early delivery (on_final) is passed on for a query
// once every worker has delivered it, its runs' hits merged.
//
// A spread_pass also prepares chunks for its workers (prepare(): the runs cut and each prepared by its worker's
// preparer on the reader thread), so that the GPU's packing and copying of every run is done ahead too.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/align/search/pipeline.hpp"
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

class spread_pass {
public:
    // workers[k] searches run k (from the thread the spread pass gives it; it selects its device itself);
    // preparers, when not empty, has one preparer (possibly empty) per worker.
    explicit spread_pass(std::vector<score_pass> workers, std::vector<chunk_preparer> preparers = {});

    std::size_t workers() const { return workers_.size(); }
    std::vector<std::vector<score_hit>> operator()(const sequence_set& queries, const sequence_set& db,
                                                   const search_options& opt) const;
    std::unique_ptr<prepared_chunk> prepare(const sequence_set& chunk) const;

private:
    std::vector<score_pass> workers_;
    std::vector<chunk_preparer> preparers_;
};

}  // namespace swgpu
