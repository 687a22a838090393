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

}  // namespace swgpu::numerics
