// Sparse triangular solves by levels on the GPU (gpu/levels.cu), as the rest of the program sees them: no CUDA types.
// The matrices, levels and solves are those of core/levels.hpp: the levels equal levels::triangular_levels exactly,
// and x equals levels::triangular_solve bit for bit (each row is levels::solve_row, the same operations in the same
// order, no fused multiply-add). Every function throws swgpu::error (runtime_failure, out_of_memory) on device failure;
// a build without CUDA has stubs that throw runtime_failure (gpu/without_cuda.cpp).
//
// Analysis (once per matrix, on the device; no host loop over rows):
//   1. levels: one sync-free pass; each warp takes the next 32 rows in dependence order from an atomic ticket, so
//      every row it waits for belongs to a warp already running; lane i publishes level[i] = 1 + max level[j] with a
//      release store once every dependence j has been published (acquire loads), in warp-wide rounds so lanes never
//      spin on each other;
//   2. rows sorted by (level, row) with CUB's radix sort (keys: levels), level widths with CUB's run-length encode.
// Solve schedules:
//   syncfree           the same sync-free pass computing x (ready flags tagged with a per-solve epoch, so nothing is
//                      reset between solves), rows in natural dependence order: one launch, no level barrier
//   syncfree_by_level  the same, rows taken in level order (a warp's rows never wait on each other)
//   level_sync         one launch per level over that level's rows (the classic level-set executor)
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/levels.hpp"

namespace swgpu::gpu {

enum class solve_schedule { syncfree, syncfree_by_level, level_sync };
const char* solve_schedule_name(solve_schedule s);

class triangular_solver {
public:
    // Uploads T and runs the analysis. T must have passed levels::check_triangular.
    triangular_solver(const levels::csr_matrix& t, levels::triangle part);
    ~triangular_solver();
    triangular_solver(const triangular_solver&) = delete;
    triangular_solver& operator=(const triangular_solver&) = delete;

    std::vector<levels::level_t> levels() const;  // per row
    std::vector<std::int64_t> widths() const;      // rows per level, level 1 first
    float analysis_ms() const;                     // device time of the analysis (CUDA events; upload excluded)

    // x = T^-1 b; `ms`, when given, receives the device time of the solve (transfers excluded).
    std::vector<double> solve(std::span<const double> b, solve_schedule s = solve_schedule::syncfree, float* ms = nullptr);

    struct state;

private:
    std::unique_ptr<state> s_;
};

// The levels of a generic indirect loop (core/levels.hpp) computed on the device: equal to levels::loop_levels.
// The loop must have passed levels::check_loop. `ms` receives the device time of the inspector.
std::vector<levels::level_t> loop_levels(const levels::indirect_loop& loop, float* ms = nullptr);

// The loop run on the device, level by level (one sync-free pass): the array levels::run_sequential leaves.
std::vector<double> run_loop(const levels::indirect_loop& loop, levels::loop_body b, std::span<const double> a,
                             float* ms = nullptr);

}  // namespace swgpu::gpu
