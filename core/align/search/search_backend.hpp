// What the search pipeline (pipeline.hpp) asks of the hardware that searches: one interface, with the shape of
// long_pair::backend, implemented by the CPU (cpu_search_backend, below) and by the GPUs (gpu/align/gpu_search.hpp),
// and decorated by the ways a search is cut before it reaches them:
//
//   split_long_pairs   (this file)            long pairs taken out of the score pass, each scored and aligned with the
//                                             whole of the backend in linear memory (core/align/long_pair/runner.hpp)
//   windowed_backend   (subject_windows.hpp)  short queries against long subjects, scored through windows
//   spread_backend     (multi_device.hpp)     one chunk spread over several devices, one worker each
//
// A search is then one object: e.g. split_long_pairs(windowed_backend(spread_backend(gpu, gpu, ...))). Every
// decorator passes on what it does not change, so the pipeline sees the whole composition through this interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/align/alignment.hpp"
#include "core/align/scoring.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/sequence.hpp"
#include "core/align/simd/align_scored.hpp"
#include "core/thread_pool.hpp"

namespace swgpu {

namespace long_pair {
class backend;
class runner;
}  // namespace long_pair

class search_backend {
public:
    virtual ~search_backend() = default;

    // Scores a chunk: for each query, its best hits in db (the contract of search_cpu, core/align/search/score_pass.hpp).
    virtual std::vector<std::vector<score_hit>> score(const sequence_set& queries, const sequence_set& db,
                                                      const search_options& opt) = 0;
    // Work on a chunk ahead of its score pass, on the pipeline's reader thread while the chunk before is scored
    // (prepared_chunk); null: nothing to prepare.
    virtual std::unique_ptr<prepared_chunk> prepare(const sequence_set& chunk) { (void)chunk; return nullptr; }

    // Alignments of scored hits, computed elsewhere than on the CPU threads that finish the search (on a GPU): for
    // each pair, sw_align_scored's alignment, or nullopt for a pair it leaves to those threads. The pipeline offers
    // the pairs of at most batch_align_cells() cells (0: none), from a thread of its own, while the CPU threads
    // align the larger ones.
    virtual std::vector<std::optional<alignment>> align(std::span<const scored_pair> pairs) {
        return std::vector<std::optional<alignment>>(pairs.size());
    }
    virtual double batch_align_cells() const { return 0; }
    // Tried first for each pair the CPU threads align (thread-safe): an alignment found a cheaper way (through
    // windows), or nullopt.
    virtual std::optional<alignment> align_here(const scored_pair& pair) const { (void)pair; return std::nullopt; }

    // Long pairs: whether a pair of these lengths is one (it must stay one when either length grows), and its
    // alignment, one pair at a time with the whole backend (called on the pipeline's thread).
    virtual bool is_long_pair(std::size_t query_length, std::size_t subject_length) const {
        (void)query_length, (void)subject_length;
        return false;
    }
    virtual alignment align_long_pair(const scored_pair& pair);
    // A backend computing rectangles of one long pair (core/align/long_pair/long_pair.hpp).
    virtual std::unique_ptr<long_pair::backend> long_pair_backend(std::span<const std::uint8_t> query,
                                                                  std::span<const std::uint8_t> subject) = 0;

    // True when the score pass leaves the CPU threads idle (a device searches) and may deliver queries early
    // (search_options::on_final): the pipeline then aligns those queries' hits while the last chunk is searched.
    virtual bool leaves_threads_idle() const { return false; }
};

// Passes every call on to `inner` (which must outlive it); a decorator overrides what it changes.
class search_backend_decorator : public search_backend {
public:
    explicit search_backend_decorator(search_backend& inner) : inner_(inner) {}
    std::vector<std::vector<score_hit>> score(const sequence_set& queries, const sequence_set& db,
                                              const search_options& opt) override {
        return inner_.score(queries, db, opt);
    }
    std::unique_ptr<prepared_chunk> prepare(const sequence_set& chunk) override { return inner_.prepare(chunk); }
    std::vector<std::optional<alignment>> align(std::span<const scored_pair> pairs) override {
        return inner_.align(pairs);
    }
    double batch_align_cells() const override { return inner_.batch_align_cells(); }
    std::optional<alignment> align_here(const scored_pair& pair) const override { return inner_.align_here(pair); }
    bool is_long_pair(std::size_t query_length, std::size_t subject_length) const override {
        return inner_.is_long_pair(query_length, subject_length);
    }
    alignment align_long_pair(const scored_pair& pair) override { return inner_.align_long_pair(pair); }
    std::unique_ptr<long_pair::backend> long_pair_backend(std::span<const std::uint8_t> query,
                                                          std::span<const std::uint8_t> subject) override;
    bool leaves_threads_idle() const override { return inner_.leaves_threads_idle(); }

protected:
    search_backend& inner_;
};

// Every CPU thread of a pool: search_cpu's score pass; long pairs on long_pair::cpu_backend.
class cpu_search_backend final : public search_backend {
public:
    cpu_search_backend(const scoring& sc, thread_pool& pool) : sc_(sc), pool_(pool) {}
    std::vector<std::vector<score_hit>> score(const sequence_set& queries, const sequence_set& db,
                                              const search_options& opt) override {
        return search_cpu(queries, db, sc_, opt, pool_);
    }
    std::unique_ptr<long_pair::backend> long_pair_backend(std::span<const std::uint8_t> query,
                                                          std::span<const std::uint8_t> subject) override;

private:
    const scoring& sc_;
    thread_pool& pool_;
};

// The score pass of `inner` with long pairs taken out (split_score_pass, pipeline.hpp): is_long(query length, subject
// length) says which pairs are long; each is scored, and later aligned, by `runner` (which keeps the alignment it
// found while scoring). The same hits as `inner` alone.
class split_long_pairs final : public search_backend_decorator {
public:
    using predicate = std::function<bool(std::size_t query_length, std::size_t subject_length)>;
    split_long_pairs(search_backend& inner, predicate is_long, long_pair::runner& runner)
        : search_backend_decorator(inner), is_long_(std::move(is_long)), runner_(runner) {}
    std::vector<std::vector<score_hit>> score(const sequence_set& queries, const sequence_set& db,
                                              const search_options& opt) override;
    bool is_long_pair(std::size_t query_length, std::size_t subject_length) const override {
        return is_long_(query_length, subject_length);
    }
    alignment align_long_pair(const scored_pair& pair) override;

private:
    predicate is_long_;
    long_pair::runner& runner_;
};

// A backend made of functions: a score pass with the contract of search_cpu and, optionally, a chunk preparer and a
// batch aligner. For callers with a score pass of their own (the tests' stand-ins for a device); it offers no long
// pairs (long_pair_backend throws).
class function_backend final : public search_backend {
public:
    using score_fn = std::function<std::vector<std::vector<score_hit>>(const sequence_set& queries,
                                                                       const sequence_set& db, const search_options&)>;
    explicit function_backend(score_fn score) : score_(std::move(score)) {}
    std::function<std::unique_ptr<prepared_chunk>(const sequence_set& chunk)> preparer;
    std::function<std::vector<std::optional<alignment>>(std::span<const scored_pair>)> aligner;
    double aligner_cells = 0;       // batch_align_cells() when there is an aligner
    bool threads_idle = false;      // leaves_threads_idle()

    std::vector<std::vector<score_hit>> score(const sequence_set& queries, const sequence_set& db,
                                              const search_options& opt) override {
        return score_(queries, db, opt);
    }
    std::unique_ptr<prepared_chunk> prepare(const sequence_set& chunk) override {
        return preparer ? preparer(chunk) : nullptr;
    }
    std::vector<std::optional<alignment>> align(std::span<const scored_pair> pairs) override {
        return aligner ? aligner(pairs) : search_backend::align(pairs);
    }
    double batch_align_cells() const override { return aligner ? aligner_cells : 0; }
    bool leaves_threads_idle() const override { return threads_idle; }
    std::unique_ptr<long_pair::backend> long_pair_backend(std::span<const std::uint8_t> query,
                                                          std::span<const std::uint8_t> subject) override;

private:
    score_fn score_;
};

}  // namespace swgpu
