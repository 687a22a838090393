// Smith-Waterman-Gotoh through the generic wavefront engine (the engine's own problem list holds no alignment): the
// tests compare every schedule and algebra with the CPU's score and end cell, and bench_schedules times them. The
// product's long pairs run their own kernels (gpu/align/long_pair_kernels.cuh), which share the engine's (max,+)
// algebra and warp scan.
#pragma once

#include <cstdint>
#include <span>

#include "core/align/scoring.hpp"
#include "core/align/smith_waterman.hpp"
#include "gpu/engine/engine.hpp"

namespace swgpu::gpu {

// Score and end cell through the engine (32-bit scores; sw_problem over (max,+)), `repeats` times.
struct sw_gpu_result {
    sw_end end;
    run_report report;
};
sw_gpu_result sw_score(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc,
                       const schedule_choice& choice, int repeats = 1);

}  // namespace swgpu::gpu
