// Sparse triangular solves and generic indirect loops by levels on the GPU (gpu/numerics/levels.cu), as the rest of the
// program sees them: no CUDA types.
// The matrices, levels and solves are those of core/numerics/levels.hpp: the levels equal levels::triangular_levels exactly,
// and x equals levels::triangular_solve bit for bit (each row is levels::solve_row, the same operations in the same
// order, no fused multiply-add). Every function throws swgpu::error (runtime_failure, out_of_memory) on device failure;
// a build without CUDA has stubs that throw runtime_failure (gpu/without_cuda.cpp).
//
// Analysis (once per matrix, on the device; no host loop over rows):
//   1. levels, by one of two methods (device_triangular::analyze chooses by the matrix's size against the rows the
//      GPU holds resident):
//      sync-free pass: each warp takes the next 32 rows in dependence order from an atomic ticket, so every row it
//        waits for belongs to a warp already running; lane i publishes level[i] = 1 + max level[j] with a release
//        store once every dependence j has been published (acquire loads; dependences inside the warp through shared
//        memory), in warp-wide rounds so lanes never spin on each other;
//      frontiers (Kahn's algorithm): the dependents of every row (the pattern transposed by counting, a scan and a
//        scatter), then one cooperative launch that takes the rows of level L, counts down their dependents' open
//        dependences and appends those that reach zero as level L+1, a grid barrier between levels; past 2048
//        levels the sync-free pass finishes the rest;
//   2. rows sorted by (level, row) with CUB's radix sort (keys: levels), level widths with CUB's run-length encode.
// Solve schedules:
//   syncfree           the same sync-free pass computing x (ready flags tagged with a per-solve epoch, so nothing is
//                      reset between solves), rows in natural dependence order: one launch, no level barrier
//   syncfree_by_level  the same, rows taken in level order (a warp's rows never wait on each other)
//   level_sync         one launch per level over that level's rows (the classic level-set executor); levels of at
//                      most 32 blocks are chained to the one before (programmatic dependent launch)
//   level_grid         every level in one cooperative launch of one block per SM, a grid barrier between levels (each
//                      thread loads its next row's part of the matrix before the barrier)
//   level_p2p          every level in one launch without barriers: rows in level order, strided over the resident
//                      threads, each waiting only for its own dependences, x its own flag (x starts as an unset
//                      NaN pattern; a row polls x[j] until it is set). The default (docs/levels.md)
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/numerics/levels.hpp"

namespace swgpu::gpu {

enum class solve_schedule { syncfree, syncfree_by_level, level_sync, level_grid, level_p2p };
const char* solve_schedule_name(solve_schedule s);

class triangular_solver {
public:
    // Uploads T and runs the analysis. T must have passed levels::check_triangular. With first_b (T's row count), the
    // analysis also solves T x = first_b (in the same sync-free pass, or by level_p2p after the frontiers):
    // first_solution() returns that x, and analysis_ms() counts both.
    triangular_solver(const levels::csr_matrix& t, levels::triangle part, std::span<const double> first_b = {});
    ~triangular_solver();
    triangular_solver(const triangular_solver&) = delete;
    triangular_solver& operator=(const triangular_solver&) = delete;

    std::vector<levels::level_t> levels() const;  // per row
    std::vector<std::int64_t> widths() const;      // rows per level, level 1 first
    float analysis_ms() const;                     // device time of the analysis (CUDA events; upload excluded)
    const std::vector<double>& first_solution() const;  // x for first_b (empty without it)

    // x = T^-1 b; `ms`, when given, receives the device time of the solve (transfers excluded).
    std::vector<double> solve(std::span<const double> b, solve_schedule s = solve_schedule::level_p2p, float* ms = nullptr);

    // level_p2p with another launch shape (tests, measurements): `per_sm` blocks of `threads` (128 or 256) threads per
    // SM, as far as they stay resident, and a warp's sleep of `sleep_ns` after a round in which no lane advanced.
    struct p2p_launch {
        int per_sm = 1, threads = 256;
        unsigned sleep_ns = 0;
    };
    std::vector<double> solve_p2p(std::span<const double> b, p2p_launch l);

    struct state;

private:
    std::unique_ptr<state> s_;
};

// Generic indirect loops (core/numerics/levels.hpp) on the device. Inspector: the writes and the reads sorted by (location,
// iteration) (CUB radix sorts) and each location's range in both lists, so an iteration finds its dependences with
// short searches: the last writer before it of each location it reads (true), the previous writer of the location it
// writes (output), and the reads of that location in between (anti). Then one sync-free pass in iteration order
// (the protocol of gpu/numerics/levels_kernels.cuh) publishes every iteration's level and, when executing, runs the body as
// soon as its dependences are published: the inspection of later iterations overlaps the execution of earlier ones,
// and no level waits for a whole earlier level to finish.
struct loop_report {
    float upload_ms = 0;   // index arrays, A and the coefficients to the device
    float inspect_ms = 0;  // the sorts and location ranges
    float run_ms = 0;      // the sync-free pass (levels, and the body when executing)
    float download_ms = 0; // A (and the levels, when asked for) back
    std::vector<levels::level_t> levels;  // per iteration, when asked for
};

// The levels of the loop computed on the device: equal to levels::loop_levels. The loop must have passed
// levels::check_loop. `ms` receives the device time of the inspector (sorts, ranges and the pass).
std::vector<levels::level_t> loop_levels(const levels::indirect_loop& loop, float* ms = nullptr);

// The loop run on the device: the array levels::run_sequential leaves, bit for bit. `b` must fit the loop
// (levels::body_mismatch empty). With want_levels, report->levels receives the levels of the same pass.
std::vector<double> run_loop(const levels::indirect_loop& loop, const levels::body_spec& b, std::span<const double> a,
                             loop_report* report = nullptr, bool want_levels = false);

}  // namespace swgpu::gpu
