// What the numerical commands write and read besides their arrays: a vector as .npy (levels' b, A0 and x), the level
// widths as TSV (levels --stats), one line of a rectangle's sums (sat --query), the residual history as SVG
// (sor --plot), and their summary lines (levels' after a solve, sor's history, its line on stdout, why it stopped).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/numerics/level_runs.hpp"
#include "core/numerics/sat.hpp"
#include "core/numerics/sor.hpp"
#include "io/output_file.hpp"

namespace swgpu::io {

// A float vector of .npy shape (n,), (n, 1) or (1, n), of n elements when n >= 0, finite; as double.
std::vector<double> read_vector(const std::string& path, std::int64_t n);
// `x` as a float64 .npy of shape (n,).
void write_vector(output_file& out, std::span<const double> x);
// "level<TAB>width" lines under a header of names, closed by a '#' comment saying `what` (np.genfromtxt and np.loadtxt
// read it).
void write_stats(output_file& out, const std::vector<std::int64_t>& widths, std::int64_t n, const std::string& what);
// top, left, bottom, right, area, then each lane's sum and mean: one line of `sat --query`'s output.
void write_query_line(output_file& out, const sat::rect& r, std::span<const std::uint64_t> words, sat::dtype table);
// top, left, bottom, right, then the count of each bin: one line of `ihist --query`'s output.
void write_histogram_line(output_file& out, const sat::rect& r, std::span<const std::uint32_t> counts);
// `sat --query`'s and `ihist --query`'s output: a line for each of `rects`, with its `lanes` words (its `bins` counts)
// in turn.
void write_query_lines(output_file& out, std::span<const sat::rect> rects, std::span<const std::uint64_t> words,
                       std::size_t lanes, sat::dtype table);
void write_histogram_lines(output_file& out, std::span<const sat::rect> rects, std::span<const std::uint32_t> counts,
                           std::size_t bins);
// The residual against sweeps (left) and against seconds (right), log scale, with the tolerance: `sor --plot`.
std::string history_svg(const sor::solution& s, int per, double tol, const std::string& title);

// An (N, N) float64 .npy without NaN or infinities (sor's --rhs and --boundary); N in `n`.
std::vector<double> read_square_f64(const std::string& path, sor::index_t& n);
// `u` (n x n values) as an (N, N) float64 .npy: sor's U.
void write_square_f64(output_file& out, const std::vector<double>& u, sor::index_t n);
// sor's line on stdout: method, omega, n, sweeps, iterations, residual, whether it converged, time, and the layers,
// subdomain and threads where they apply.
std::string sor_summary(sor::index_t n, const sor::options& o, const sor::solution& s, bool gpu, unsigned cpu_threads);
// sor --history: sweep, iteration, residual, seconds under a header line of names, no comments
// (np.genfromtxt(H, names=True) and np.loadtxt(H, skiprows=1) read it).
std::string sor_history_tsv(const sor::solution& s, int per);
// Why a run that did not converge stopped: stagnated (where its smallest residual was), or --max-sweeps reached.
std::string sor_not_converged(const sor::solution& s, const sor::options& o);

// "N iterations, L levels (widest W, mean M)".
std::string levels_summary(std::int64_t n, const std::vector<std::int64_t>& widths);
// What `swgpu levels` says of a solve of the `upper` or lower triangle of `matrix` (t), run as `run` says: the
// sequential substitution (`sequential`), on the GPU (`schedule` for --repeat's further solves), or on the CPU.
std::string solve_report(const std::string& matrix, bool upper, const levels::csr_matrix& t,
                         const levels::solve_run& run, bool sequential, long long repeat, const std::string& schedule);

}  // namespace swgpu::io
