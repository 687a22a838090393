// Smith-Waterman-Gotoh scored through the wavefront engine, with a 16-bit first try and an exact 32-bit recomputation
// when the 16-bit pass could have overflowed.
#pragma once

#include <cstdint>
#include <span>

#include "core/align/scoring.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/thread_pool.hpp"

namespace swgpu {

enum class cpu_schedule { naive, rowscan, rowscan_map, tiled };

struct sw_engine_result {
    sw_end end;
    bool recomputed_wide = false;  // the 16-bit pass saturated and the 32-bit pass gave the answer
};

// pool is used by the tiled schedule only (may be null otherwise).
sw_engine_result sw_score_engine(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                 const scoring& sc, cpu_schedule schedule, thread_pool* pool = nullptr,
                                 bool force_wide = false);

}  // namespace swgpu
