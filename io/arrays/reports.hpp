// What the numerical commands write and read besides their arrays: a vector as .npy (levels' b, A0 and x), the level
// widths as TSV (levels --stats), one line of a rectangle's sums (sat --query), the residual history as SVG
// (sor --plot).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

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
// The residual against sweeps (left) and against seconds (right), log scale, with the tolerance: `sor --plot`.
std::string history_svg(const sor::solution& s, int per, double tol, const std::string& title);

}  // namespace swgpu::io
