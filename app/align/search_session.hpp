// The machinery of a search, shared by the command line (align_run.hpp) and the library (app/swgpu/swgpu.hpp): the backend
// (every CPU thread, or the GPUs, started in the background as the session is made) composed for a scoring
// (core/align/search/search_backend.hpp: short queries against long subjects through windows; long pairs each on the
// whole backend in linear memory), the pipeline's options (hits kept, E-values), then searches of encoded queries
// against a stream of database chunks (core/align/search/pipeline.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "gpu/align/gpu_search.hpp"
#include "core/align/scoring.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/search/subject_windows.hpp"
#include "core/thread_pool.hpp"
#include "gpu/gpu.hpp"

namespace swgpu::long_pair {
class runner;
}

namespace swgpu {
class progress_line;
}

namespace swgpu::app {

// The scoring of a search: the matrix (a built-in name, or a file; empty: BLOSUM62 for protein, --match/--mismatch
// for DNA), the gap costs (the matrix's defaults where not given), checked, and with E-value parameters when
// `evalues` (else the usage error naming the supported pairs).
struct scoring_request {
    seq_type type = seq_type::protein;
    std::string matrix;
    std::optional<int> gap_open, gap_extend;
    int match = 2, mismatch = -3;
    bool evalues = true;
};
scoring make_scoring(const scoring_request& r);

class search_session {
public:
    struct options {
        bool use_gpu = false;
        gpu::gpu_search::options gpu;           // the GPUs, when use_gpu
        int threads = 0;                   // CPU threads (0: one per hardware thread)
        std::string mode = "auto";         // auto, search, pairwise: how pairs are scored (--mode)
        std::string long_policy = "auto";  // long pairs' score pass on the GPU (--long-policy)
        std::string gpu_align = "auto";    // where printed alignments are computed with the GPUs (--gpu-align)
        bool alignments = true;            // false: printed hits carry scores and E-values only
        std::size_t max_hits = 500;
        bool evalues = true;
        double max_evalue = 10;
        bool progress = false;                         // a progress line on stderr when it is a terminal
        std::function<void(const std::string&)> info;  // what was done (-v), may be empty
    };
    search_session(options opt, std::chrono::steady_clock::time_point started);
    ~search_session();
    search_session(const search_session&) = delete;
    search_session& operator=(const search_session&) = delete;

    // Composes the backend for `sc`, which must outlive the session; once, before the first search.
    void compose(const scoring& sc);
    // The pipeline's options as composed; a caller adds MPI's share (searched_here, combine) here.
    search_run_options& pipeline() { return run_; }

    // Searches `queries` (encoded, both strands as asked) against the chunks of `database`. `total_residues`, when
    // known (0: not), drives the progress bar.
    search_results search(const query_strands& queries, chunk_source& database, std::uint64_t total_residues);
    // The best score of another placement of the part of `query` that `primary` aligns on `subject` (the pair scored
    // `score`), sharing no aligned pair with it (core/align/placement.hpp; for SAM's and PAF's MAPQ): through the
    // score pass's windows when the pair went through them (exact from `floor` up: below it, the caller's answer
    // does not change), over the whole subject for a pair of at most placement_cells cells, nullopt otherwise (a long
    // pair). Thread-safe.
    std::optional<int> best_apart(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, int score,
                                  const alignment& primary, int floor = 0) const;
    static constexpr double placement_cells = double(1 << 26);
    // The backend as composed (windows and long pairs around the CPU's or the GPUs').
    search_backend& backend() { return *backend_; }

    thread_pool& pool() { return *pool_; }
    const gpu::gpu_search* gpus() const { return gpus_.get(); }
    const long_pair::runner& long_pairs() const { return *long_pairs_; }
    const gpu::align_timing& gpu_aligned() const { return gpu_aligned_; }

private:
    void compose_long_pairs(const scoring& sc);
    void info(const std::string& text) const {
        if (opt_.info) opt_.info(text);
    }

    options opt_;
    std::chrono::steady_clock::time_point started_;
    const scoring* sc_ = nullptr;
    std::unique_ptr<gpu::gpu_search> gpus_;
    std::unique_ptr<thread_pool> pool_;
    std::unique_ptr<progress_line> progress_;
    std::unique_ptr<search_backend> base_;  // the CPU's or the GPUs'
    std::unique_ptr<long_pair::runner> long_pairs_;
    std::unique_ptr<subject_windows> windows_;
    std::unique_ptr<windowed_backend> windowed_;
    std::unique_ptr<split_long_pairs> split_;
    search_backend* backend_ = nullptr;     // the outermost of the above
    search_run_options run_;
    gpu::align_timing gpu_aligned_;
};

}  // namespace swgpu::app
