#include "core/numerics/finite.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "core/error.hpp"

namespace swgpu::numerics {

namespace {

// An element is NaN or infinite when its exponent bits are all ones.
template <class T, class Bits, Bits exponent>
nonfinite scan(std::span<const T> v) {
    std::size_t count = 0;
    for (const T x : v) count += (std::bit_cast<Bits>(x) & exponent) == exponent;
    nonfinite r;
    r.count = count;
    if (count == 0) return r;
    for (std::size_t k = 0; k < v.size(); ++k)
        if (!std::isfinite(v[k])) {
            r.first = k;
            r.value = static_cast<double>(v[k]);
            break;
        }
    return r;
}

}  // namespace

nonfinite find_nonfinite(std::span<const float> values) {
    return scan<float, std::uint32_t, 0x7f800000u>(values);
}

nonfinite find_nonfinite(std::span<const double> values) {
    return scan<double, std::uint64_t, 0x7ff0000000000000ull>(values);
}

std::string nonfinite_message(const nonfinite& bad, const std::string& position, const std::string& advice) {
    const char* value = std::isnan(bad.value) ? "nan" : bad.value > 0 ? "inf" : "-inf";
    return "holds " + std::to_string(bad.count) + (bad.count == 1 ? " value that is" : " values that are") +
           " not finite (NaN or infinity), the first (" + value + ") at " + position + "; " + advice;
}

namespace {
void refuse(const nonfinite& bad, const std::string& what, const std::string& advice, std::string (*where)(std::size_t)) {
    if (bad.count == 0) return;
    throw input_error(what, nonfinite_message(bad, where ? where(bad.first) : "index " + std::to_string(bad.first), advice));
}
}  // namespace

void refuse_nonfinite(std::span<const double> values, const std::string& what, const std::string& advice,
                      std::string (*where)(std::size_t)) {
    refuse(find_nonfinite(values), what, advice, where);
}
void refuse_nonfinite(std::span<const float> values, const std::string& what, const std::string& advice,
                      std::string (*where)(std::size_t)) {
    refuse(find_nonfinite(values), what, advice, where);
}

}  // namespace swgpu::numerics
