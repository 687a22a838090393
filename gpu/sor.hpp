// SOR (core/sor.hpp) on the GPU (gpu/sor.cu), as the rest of the program sees it: no CUDA types.
//
//   lex, ssor   anti-diagonals i + j = t in order (reverse order for the backward sweep of ssor), one launch each:
//               the points of a diagonal need only the diagonals before and after it, so this is the lexicographic
//               sweep exactly (bit for bit the CPU's)
//   redblack    one launch per colour
// The residual is summed on the device after each sweep (its last digits may differ from the CPU's sum; the iterates
// do not). The history's seconds count from the first sweep (the copies to the device excluded). Throws swgpu::error on device failure; stubs without CUDA.
#pragma once

#include <vector>

#include "core/sor.hpp"

namespace swgpu::gpu {

struct sor_report {
    double sweeps_ms = 0;    // the sweeps' kernels (CUDA events)
    double residual_ms = 0;  // the residuals'
};

sor::solution sor_solve(const sor::problem& p, const sor::options& o, sor_report* report = nullptr);

// `sweeps` sweeps of a method from p.u, no residual (for tests and benchmarks).
std::vector<double> sor_sweeps(const sor::problem& p, sor::method m, double omega, int sweeps,
                               sor_report* report = nullptr);

}  // namespace swgpu::gpu
