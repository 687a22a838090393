// Runs of `swgpu levels` on the GPU, timed, as core/numerics/level_runs.hpp's on the CPU: a triangular solve --repeat
// times, and an indirect loop, with what each took. Host code over gpu/numerics/levels.hpp (no CUDA), built without
// CUDA too, where its calls fail as that header's stubs do (gpu/without_cuda.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/numerics/level_runs.hpp"
#include "core/numerics/levels.hpp"

namespace swgpu::gpu {

// The first solve comes with the analysis (fused); the further ones of `repeat` reuse it with `schedule`, named as
// solve_schedule_name names it (any other name: syncfree).
levels::solve_run solve_on_gpu(const levels::csr_matrix& t, levels::triangle part, const std::vector<double>& b,
                               long long repeat, const std::string& schedule);

// The loop run on the device over `a`; with `keep_levels`, `widths` receives the widths of its levels. Returns what it
// took, as the summary line says it (device times, and the call's own with the host's conversions).
std::string run_loop_on_gpu(const levels::indirect_loop& loop, const levels::body_spec& body, std::vector<double>& a,
                            bool keep_levels, std::vector<std::int64_t>& widths);

}  // namespace swgpu::gpu
