#include "core/align/search/search_backend.hpp"

#include "core/error.hpp"
#include "core/align/long_pair/long_pair.hpp"
#include "core/align/long_pair/runner.hpp"
#include "core/align/search/pipeline.hpp"

namespace swgpu {

alignment search_backend::align_long_pair(const scored_pair&) {
    throw runtime_failure("internal error: a long pair was handed to a backend that takes none");
}

std::unique_ptr<long_pair::backend> search_backend_decorator::long_pair_backend(std::span<const std::uint8_t> query,
                                                                                std::span<const std::uint8_t> subject) {
    return inner_.long_pair_backend(query, subject);
}

std::unique_ptr<long_pair::backend> cpu_search_backend::long_pair_backend(std::span<const std::uint8_t> query,
                                                                          std::span<const std::uint8_t> subject) {
    return std::make_unique<long_pair::cpu_backend>(query, subject, sc_, pool_);
}

std::vector<std::vector<score_hit>> split_long_pairs::score(const sequence_set& queries, const sequence_set& db,
                                                            const search_options& opt) {
    long_pair_split split;
    split.long_pair = is_long_;
    split.long_score = [this](const sequence_set& qset, std::size_t q, const sequence_set& dset, std::size_t s) {
        return runner_.score(qset[q], dset[s]);
    };
    split.long_scores = [this](const sequence_set& qset, const sequence_set& dset,
                               std::span<const std::pair<std::size_t, std::size_t>> pairs) {
        std::vector<long_pair::runner::pair_view> views;
        views.reserve(pairs.size());
        for (const auto& [q, s] : pairs) views.emplace_back(qset[q], dset[s]);
        return runner_.scores(views);
    };
    const score_pass inner = [this](const sequence_set& q, const sequence_set& d, const search_options& o) {
        return inner_.score(q, d, o);
    };
    return split_score_pass(queries, db, opt, inner, split);
}

alignment split_long_pairs::align_long_pair(const scored_pair& pair) { return runner_.align(pair); }

std::unique_ptr<long_pair::backend> function_backend::long_pair_backend(std::span<const std::uint8_t>,
                                                                        std::span<const std::uint8_t>) {
    throw runtime_failure("internal error: this backend aligns no long pairs");
}

}  // namespace swgpu
