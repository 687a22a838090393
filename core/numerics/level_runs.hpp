// Runs of `swgpu levels` on the CPU, timed: a triangular solve --repeat times (by the sequential substitution, or by
// levels on threads where they are wide enough), and an indirect loop (sequentially, inspector then executor, or the
// two pipelined), with what each took. The GPU's runs are gpu/numerics/levels.hpp's; the command chooses.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/numerics/levels.hpp"

namespace swgpu::levels {

// What one solve run gave: the solution, the widths of the levels, the times, and how the CPU solved.
struct solve_run {
    std::vector<double> x;
    std::vector<std::int64_t> widths;
    double analysis_ms = 0;
    std::vector<double> solve_ms;
    bool on_gpu = false;
    bool cpu_sequential = false;  // the CPU chose the sequential substitution after the analysis
    unsigned threads = 1;
};

std::vector<std::int64_t> widths_of(const level_sets& s);
double ms_since(std::chrono::steady_clock::time_point t);

// The sequential substitution, `repeat` times (the reference: no levels).
solve_run solve_sequentially(const csr_matrix& t, triangle part, const std::vector<double>& b, long long repeat);
// By levels on `threads` threads (0: one per hardware thread), `repeat` times after one analysis; by the sequential
// substitution (the same bits) where the levels hold fewer rows on average than levels.cpu_sequential_width.
solve_run solve_on_cpu(const csr_matrix& t, triangle part, const std::vector<double>& b, long long repeat,
                       unsigned threads);

// An indirect loop on the CPU over `a`: sequentially (`sequential`), else the inspector then the executor on
// `threads` threads, or with `pipelined` (and more than one thread) the next chunk inspected while the threads run
// this one. Fills `widths` with the levels' widths (not sequentially); returns what it took, as the summary line says
// it.
std::string run_loop_on_cpu(const indirect_loop& loop, const body_spec& body, std::vector<double>& a, bool sequential,
                            bool pipelined, unsigned threads, std::vector<std::int64_t>& widths);

// The loop's body as `swgpu levels` names it: `name` (--body: sum, max, fmod, wsum or dot) and its coefficients'
// texts (--coefficients), each the double nearest its decimal (or hexadecimal) text, checked against the loop's
// `reads` per iteration. Throws usage_error.
body_spec body_of(const std::string& name, const std::vector<std::string>& coefficients, int reads);

}  // namespace swgpu::levels
