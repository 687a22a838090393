// The 3-D sweeps of core/numerics/sweep3d.hpp on the GPU (gpu/numerics/sweep3d.cu), as the rest of the program sees them: no CUDA types.
//
// Schedules. The fmod sweep: 3-D tiles (8^3 up to N = 256, else 16^3) in wavefront order, a launch per diagonal of
// tiles, each tile sweeping its hyperplanes in shared memory with its inflow faces read from the grid. The dd sweep
// (whose faces are per angle) and, on request (the tuning key sweep.schedule), the fmod sweep: hyperplanes. Step t computes the points with i + j + k == t, one thread per (j, k) slot; the points of
// plane t - 1 that a point needs, (i-1, j, k), (i, j-1, k) and (i, j, k-1), sit in slots (j, k), (j-1, k) and
// (j, k-1) of a plane buffer, so the reads of a step are coalesced along k (two plane buffers alternate; the fmod
// sweep keeps one value per slot, the diamond-difference sweep three faces per angle). Each point also goes to its
// place in the grid. Large grids launch a kernel per step; grids up to N = 384, whose steps are short, run all
// steps in one cooperative launch with a grid barrier between steps. Results are bit for bit the CPU's. Throws
// swgpu::error on device failure; stubs without CUDA.
#pragma once

#include <span>
#include <vector>

#include "core/numerics/sweep3d.hpp"

namespace swgpu::gpu {

struct sweep_report {
    double kernel_ms = 0;  // the steps (CUDA events), copies excluded
    int steps = 0;         // hyperplanes, or diagonals of tiles
    const char* schedule = "";  // "tiles", "grid" (one cooperative launch) or "launch" (a launch per hyperplane)
};

template <class T>
std::vector<T> sweep3d_fmod(const sweep3d::fmod_params& p, sweep_report* report = nullptr);
// The same into host memory the caller owns, exactly N^3 values (the library's result: the grid held once on the host).
template <class T>
void sweep3d_fmod_into(const sweep3d::fmod_params& p, std::span<T> grid, sweep_report* report = nullptr);
template <class T>
std::vector<T> sweep3d_dd(const sweep3d::dd_params& p, sweep_report* report = nullptr);

}  // namespace swgpu::gpu
