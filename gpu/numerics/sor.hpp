// SOR (core/numerics/sor.hpp) on the GPU (gpu/numerics/sor.cu), as the rest of the program sees it: no CUDA types.
//
//   lex, ssor   the compensation method: each row's in-row recurrence x_{j+1} = (omega/4) x_j + b_j is a (+,·)
//               weighted scan, run by the engine's tiled P2P schedule (the backward half of ssor reads the grid in
//               reverse); its iterates are the lexicographic sweep's up to rounding. The tuning key sor.lex=rowsync
//               takes the engine's row-sync schedule, sor.lex=diagonal updates anti-diagonal after anti-diagonal (one
//               launch each), which is the lexicographic sweep bit for bit. The default column strips run
//               consecutive sweeps of one direction (lex's, each half of mlssor's) in batches per launch, each
//               sweep a few rows behind the one before (the key sor.batch caps a batch); a lex solve gets the
//               residuals inside a batch from the strips and reruns a batch that converged early up to that sweep
//   mlssor      K forward sweeps then K backward ones, each as lex or ssor's halves; with subdomains (options
//               sub_rows x sub_cols) the K-layer paper's parallel MLSSOR as the paper maps it: one thread per
//               subdomain, one launch per step of a half (four per half), each thread running its tile's K layers
//               in order with the CPU's code (sor::mlssor_tile), so the iterates are the CPU's bit for bit
//   redblack    one launch per sweep (redblack_sweep): red then black in one pass over the rows, from one grid
//               into the other, bit for bit the CPU's two colour passes; a solve runs its sweeps in batches with the
//               residuals inside a batch from the sweeps (as lex's strips); sor.lex=diagonal keeps one launch per
//               colour
// The residual is summed on the device after each sweep (its last digits may differ from the CPU's sum). The
// history's seconds count from the first sweep (the copies to the device excluded). Throws swgpu::error on device
// failure; stubs without CUDA.
#pragma once

#include <vector>

#include "core/numerics/sor.hpp"

namespace swgpu::gpu {

struct sor_report {
    double sweeps_ms = 0;    // the sweeps' kernels (CUDA events)
    double residual_ms = 0;  // the residuals'
};

sor::solution sor_solve(const sor::problem& p, const sor::options& o, sor_report* report = nullptr);

// `sweeps` sweeps of a method from p.u, no residual (for tests and benchmarks).
std::vector<double> sor_sweeps(const sor::problem& p, sor::method m, double omega, int sweeps,
                               sor_report* report = nullptr, int layers = 1);

}  // namespace swgpu::gpu
