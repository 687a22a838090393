#include "core/align/sw_engine.hpp"

#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/engine/executors.hpp"
#include "core/align/sw_problem.hpp"

namespace swgpu {

namespace {

template <class T>
sw_end run(std::span<const std::uint8_t> q, std::span<const std::uint8_t> s, const scoring& sc, cpu_schedule schedule,
           thread_pool* pool) {
    std::vector<std::uint64_t> best(q.size(), 0);
    sw_problem<T> p{q.data(), s.data(), static_cast<index_t>(q.size()), static_cast<index_t>(s.size()),
                    sc.matrix.table().data(), static_cast<T>(sc.gaps.open + sc.gaps.extend),
                    static_cast<T>(sc.gaps.extend), best.data()};
    switch (schedule) {
        case cpu_schedule::naive: run_naive(p); break;
        case cpu_schedule::rowscan: run_rowscan(p); break;
        case cpu_schedule::rowscan_map: run_rowscan(p, {.block = 64, .force_map_scan = true}); break;
        case cpu_schedule::tiled:
            if (!pool) throw runtime_failure("internal error: tiled schedule needs a thread pool");
            run_tiled(p, *pool);
            break;
    }
    sw_end end;
    for (std::size_t i = 0; i < best.size(); ++i) {
        const auto score = sw_key_score(best[i]);
        if (score > end.score) end = {static_cast<int>(score), static_cast<std::int64_t>(i), sw_key_col(best[i])};
    }
    return end;
}

}  // namespace

sw_engine_result sw_score_engine(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                 const scoring& sc, cpu_schedule schedule, thread_pool* pool, bool force_wide) {
    // 16 bits are exact while every H stays below the saturation limit: H grows by at most max σ per cell, so a best
    // score below 32767 - max σ proves no cell overflowed.
    if (!force_wide) {
        const int limit = std::numeric_limits<std::int16_t>::max() - sc.matrix.max_score();
        if (sc.gaps.open + sc.gaps.extend < 16000) {
            auto e = run<std::int16_t>(query, subject, sc, schedule, pool);
            if (e.score < limit) return {e, false};
        }
    }
    return {run<std::int32_t>(query, subject, sc, schedule, pool), true};
}

}  // namespace swgpu
