#include "core/search.hpp"

#include <algorithm>

#include "core/smith_waterman.hpp"

namespace swgpu {

std::vector<std::vector<score_hit>> search_cpu(const sequence_set& queries, const sequence_set& db, const scoring& sc,
                                               const search_options& opt, thread_pool& pool) {
    std::vector<std::vector<score_hit>> out(queries.size());
    pool.parallel_for(queries.size(), [&](std::size_t q) {
        auto& hits = out[q];
        for (std::size_t s = 0; s < db.size(); ++s) {
            const int score = sw_score(queries[q], db[s], sc).score;
            if (score >= std::max(1, opt.min_score))
                hits.push_back({score, static_cast<std::uint32_t>(s) + opt.subject_offset});
        }
        std::sort(hits.begin(), hits.end(), better);
        if (hits.size() > opt.max_hits) hits.resize(opt.max_hits);
    });
    return out;
}

void merge_hits(std::vector<std::vector<score_hit>>& into, const std::vector<std::vector<score_hit>>& chunk,
                std::size_t max_hits) {
    if (into.size() < chunk.size()) into.resize(chunk.size());
    for (std::size_t q = 0; q < chunk.size(); ++q) {
        auto& v = into[q];
        v.insert(v.end(), chunk[q].begin(), chunk[q].end());
        std::sort(v.begin(), v.end(), better);
        if (v.size() > max_hits) v.resize(max_hits);
    }
}

}  // namespace swgpu
