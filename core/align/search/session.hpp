// One search session, the machinery every face of swgpu searches through (the command line's app/align/align_run,
// the C++ library's app/swgpu/align.cpp, and through it Python): the backend (every CPU thread, or the GPUs a face
// hands in as search_devices) composed for a scoring (search_backend.hpp: short queries against long subjects through
// windows; long pairs each on the whole backend in linear memory), the pipeline's options (hits kept, E-values), then
// searches of encoded queries against a stream of database chunks (pipeline.hpp) followed by the steps after the score
// pass in their one order (refinements.hpp, refine_results). core names no GPU: the GPUs come in through the
// search_devices interface, which gpu/align/gpu_search implements.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/align/composition.hpp"
#include "core/align/masking.hpp"
#include "core/align/scoring.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/search/refinements.hpp"
#include "core/align/search/search_backend.hpp"
#include "core/align/search/settings_check.hpp"
#include "core/align/search/subject_windows.hpp"
#include "core/thread_pool.hpp"

namespace swgpu::long_pair {
class runner;
}

namespace swgpu {

class progress_line;

// The GPUs a session searches on, started by the face before the session is made (so that their start-up overlaps
// with reading the inputs). gpu/align/gpu_search.hpp implements it.
class search_devices {
public:
    virtual ~search_devices() = default;
    struct backend_options {
        // Printed hits of at most search.align_max_cells cells aligned on the first GPU, the larger ones on the CPU
        // threads.
        bool align = true;
        // The CPU threads finish queries while the GPU searches the last chunk (the printed alignments on the CPU).
        bool overlap = false;
    };
    // The search backend for `sc` (which must outlive it): one GPU, or a spread over several.
    virtual std::unique_ptr<search_backend> backend(const scoring& sc, const backend_options& how) = 0;
    // "score pass spread over W workers (...)", empty for one GPU (after backend()).
    virtual const std::string& description() const = 0;
    // The first GPU's architecture as the tuning table names it ("sm_90"; "*" when unknown).
    virtual std::string architecture() const = 0;
    // Seconds from the session's start to every GPU's context (waits for the start-up).
    virtual double started_after() const = 0;
    // What the GPU's alignments of printed hits took so far.
    struct aligned_on_device {
        std::size_t pairs = 0;
        double total_s = 0, kernel_s = 0;
    };
    virtual aligned_on_device aligned() const = 0;
};

class search_session {
public:
    enum class pair_mode { automatic, search, pairwise };  // how pairs are scored: pairwise, each in linear memory
    enum class long_policy { automatic, antidiagonal, compensation };  // long pairs' forward kernels on a GPU
    struct options {
        std::unique_ptr<search_devices> devices;  // the GPUs; null: every CPU thread
        int threads = 0;                          // CPU threads (0: one per hardware thread)
        pair_mode mode = pair_mode::automatic;
        long_policy policy = long_policy::automatic;
        bool align_on_cpu = false;  // with GPUs: printed alignments on the CPU threads, beside the last searches
        bool alignments = true;     // false: printed hits carry scores and E-values only
        // What is kept and printed per query: the k best hits (at least `keep_at_least` kept for the steps after the
        // search: SAM's MAPQ reads a read's second hit), with E <= evalue unless !evalues (no statistics).
        std::size_t k = 500, keep_at_least = 0;
        double evalue = 10;
        bool evalues = true;
        bool composition = false;  // composition-based statistics (blastp -comp_based_stats 1; protein)
        int max_hsps = 1;          // alignments per (query, subject, strand)
        int zdrop = -1;            // DNA: alignments cut into collinear blocks by the Z-drop rule (core/align/zdrop.hpp)
        std::optional<masking> mask;  // the queries' low-complexity residues masked (SEG, DUST)
        bool placements = false;   // each query's best placement apart from its first hit (SAM's and PAF's MAPQ)
        bool progress = false;     // a progress line on stderr when it is a terminal
        std::function<void(const std::string&)> info;  // what was done (-v), may be empty
    };
    // What a face's settings, as its checks read them (settings_check.hpp), ask of the session: the hits kept and
    // printed, E-values, composition, further alignments, Z-drop and masking. The face adds the rest.
    static options options_of(const search_values& v);
    search_session(options opt, std::chrono::steady_clock::time_point started);
    ~search_session();
    search_session(const search_session&) = delete;
    search_session& operator=(const search_session&) = delete;

    // Composes the backend for `sc`, which must outlive the session; once, before the first search.
    void compose(const scoring& sc);
    // The pipeline's options as composed; a caller adds MPI's share (searched_here, combine) here.
    search_run_options& pipeline() { return run_; }

    // Masks `queries` (encoded with `m`, both strands as searched) as the options ask, keeping them as read in
    // `masking`. Returns the residues masked (0 when no masking is asked for). Before compose() too.
    std::uint64_t mask(query_strands& queries, query_masking& masking, const substitution_matrix& m) const;
    // Searches `queries` (encoded, masked by mask()) against the chunks of `database`, then, where this process
    // finishes, the steps after the score pass in their one order (refine_results). `total_residues`, when known (0:
    // not), drives the progress bar.
    search_results search(const query_strands& queries, const query_masking& masking, chunk_source& database,
                          std::uint64_t total_residues);
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
    const search_devices* devices() const { return opt_.devices.get(); }
    const long_pair::runner& long_pairs() const { return *long_pairs_; }

private:
    void compose_long_pairs(const scoring& sc);
    void refine(search_results& results, const query_strands& queries, const query_masking& masking) const;
    void add_placements(search_results& results, const query_strands& queries) const;
    void info(const std::string& text) const {
        if (opt_.info) opt_.info(text);
    }

    options opt_;
    std::chrono::steady_clock::time_point started_;
    const scoring* sc_ = nullptr;
    std::optional<composition_adjustment> composition_;
    std::unique_ptr<thread_pool> pool_;
    std::unique_ptr<progress_line> progress_;
    std::unique_ptr<search_backend> base_;  // the CPU's or the GPUs'
    std::unique_ptr<long_pair::runner> long_pairs_;
    std::unique_ptr<subject_windows> windows_;
    std::unique_ptr<windowed_backend> windowed_;
    std::unique_ptr<split_long_pairs> split_;
    search_backend* backend_ = nullptr;  // the outermost of the above
    search_run_options run_;
};

// Encoded records held in memory as one chunk the pipeline reads in place (no copy, no encoding per search), with the
// backend's preparation made at the first search and kept for the next ones (on a GPU: packed and copied to the device
// once): the library's databases.
class resident_records final : public chunk_source {
public:
    explicit resident_records(sequence_set encoded, std::uint64_t unknown = 0)
        : records_(std::move(encoded)), unknown_(unknown) {}
    const sequence_set& records() const { return records_; }
    void rewind() { given_ = false; }

    bool next(sequence_set&) override;
    bool exhausted() const override { return given_; }
    bool keeps_chunks() const override { return true; }
    kept_chunk next_kept(search_backend& backend) override;

private:
    sequence_set records_;
    std::uint64_t unknown_ = 0;
    bool given_ = false;
    const search_backend* prepared_for_ = nullptr;
    std::unique_ptr<prepared_chunk> prepared_;
};

}  // namespace swgpu
