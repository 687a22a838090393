// Non-finite values (NaN, +-infinity) in floating inputs: the numerical commands refuse them (docs/conventions.md,
// "Non-finite values"). A sum, a mean, a bin or a solution that one of them touches is not a number a user can read,
// and a summed-area table spreads one of them to every entry below and right of it, so they are found once per input,
// before any work, and named: how many there are and where the first is.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace swgpu::numerics {

// How many elements are NaN or infinite, the first one's index and its value.
struct nonfinite {
    std::size_t count = 0;
    std::size_t first = 0;
    double value = 0;
};

// One pass over the exponent bits (vectorisable), a second one to the first bad element only when there is one.
nonfinite find_nonfinite(std::span<const float> values);
nonfinite find_nonfinite(std::span<const double> values);

// "holds 2 values that are not finite (NaN or infinity), the first (nan) at POSITION; ADVICE": the text of the
// input_error that refuses such an input (`position` e.g. "row 3, column 7").
std::string nonfinite_message(const nonfinite& bad, const std::string& position,
                              const std::string& advice = "replace them with finite values");

// A result (a solution vector, a grid, a table) that overflowed to infinity or became NaN is refused before it is
// written, as an input is (exit 1): "WHAT: holds N values that are not finite ..., the first (inf) at index K (POSITION
// given by `where`); ADVICE". `where` turns the first bad index into words (default "index K").
void refuse_nonfinite(std::span<const double> values, const std::string& what, const std::string& advice,
                      std::string (*where)(std::size_t) = nullptr);
void refuse_nonfinite(std::span<const float> values, const std::string& what, const std::string& advice,
                      std::string (*where)(std::size_t) = nullptr);

}  // namespace swgpu::numerics
