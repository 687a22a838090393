// Long pairs inside a search run (--mode pairwise, or auto for pairs past the backend's switch point: long.auto_cells,
// long.auto_min_side; on the CPU 2^24 cells, on the GPU 2^27, and a shorter side of at
// least 4096 residues): each scored on its own with the whole of a backend (every CPU thread, or the GPUs) in memory
// linear in the lengths (long_pair.hpp), instead of by the database-search pass.
//
// With alignments to print, the score pass of a long pair computes the alignment too and keeps it until the
// finishing step asks for it (keyed by the residues of both sequences and the score), so the pair's forward pass runs
// once. Without, the score alone is computed. The backend factory chooses the method (on the GPU, --long-policy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/align/alignment.hpp"
#include "core/align/long_pair/long_pair.hpp"
#include "core/align/scoring.hpp"
#include "core/align/search/pipeline.hpp"

namespace swgpu::long_pair {

class runner {
public:
    // A backend for one pair (a GPU's, or the CPU's over a thread pool), with its progress callback set.
    using backend_factory =
        std::function<std::unique_ptr<backend>(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject)>;
    runner(const scoring& sc, backend_factory make, bool keep_alignments);

    // Optional: told of each aligned pair ("long pair M x N: score S, forward pass ..."), and before each pair starts.
    std::function<void(const std::string&)> on_aligned;
    std::function<void(std::size_t query_length, std::size_t subject_length)> on_start;

    // Optional: told before a batch of pairs starts (their number and cells in all).
    std::function<void(std::size_t pairs, double cells)> on_batch;

    // The pair's best local score (split_score_pass's long_score).
    int score(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject);
    // The scores of several pairs (split_score_pass's long_scores): side by side where the backend shares its
    // device (long_pair::run_batch), in batches of at most `batch_pairs`; alignments kept as score() keeps them.
    using pair_view = std::pair<std::span<const std::uint8_t>, std::span<const std::uint8_t>>;
    std::vector<int> scores(std::span<const pair_view> pairs);
    static constexpr std::size_t batch_pairs = 256;
    // The pair's alignment (finish_options::long_aligner): the one kept by score() when there is one.
    alignment align(const scored_pair& pair);

    std::size_t pairs() const { return pairs_; }
    double cells() const { return cells_; }
    double seconds() const { return seconds_; }

private:
    alignment align_now(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject);
    const scoring& sc_;
    backend_factory make_;
    bool keep_;
    std::map<std::tuple<std::uint64_t, std::uint64_t, int>, alignment> kept_;
    std::size_t pairs_ = 0;
    double cells_ = 0, seconds_ = 0;
};

}  // namespace swgpu::long_pair
