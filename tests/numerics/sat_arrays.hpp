// Random arrays of every dtype of core/numerics/sat.hpp, for the table tests on the CPU and the GPU.
#pragma once

#include <cstdint>
#include <random>

#include "core/numerics/sat.hpp"

namespace swgpu::testing {

// Integers over most of their type's range (64-bit ones below 2^40, so that tables of them fit); floats uniform in
// [-1, 1), float64 scaled to [-f64_scale, f64_scale).
inline sat::array random_array(sat::dtype t, index_t h, index_t w, index_t l, std::mt19937_64& rng,
                               double f64_scale = 1) {
    using sat::dtype;
    sat::array a(t, h, w, l);
    for (std::size_t k = 0; k < a.elements(); ++k) {
        const std::uint64_t r = rng();
        const double unit = static_cast<double>(r >> 11) / 9007199254740992.0 * 2 - 1;
        switch (t) {
            case dtype::u8: a.data<std::uint8_t>()[k] = static_cast<std::uint8_t>(r); break;
            case dtype::u16: a.data<std::uint16_t>()[k] = static_cast<std::uint16_t>(r); break;
            case dtype::u32: a.data<std::uint32_t>()[k] = static_cast<std::uint32_t>(r); break;
            case dtype::u64: a.data<std::uint64_t>()[k] = r >> 24; break;
            case dtype::i8: a.data<std::int8_t>()[k] = static_cast<std::int8_t>(r); break;
            case dtype::i16: a.data<std::int16_t>()[k] = static_cast<std::int16_t>(r); break;
            case dtype::i32: a.data<std::int32_t>()[k] = static_cast<std::int32_t>(r); break;
            case dtype::i64: a.data<std::int64_t>()[k] = static_cast<std::int64_t>(r) >> 24; break;
            case dtype::f32: a.data<float>()[k] = static_cast<float>(unit); break;
            case dtype::f64: a.data<double>()[k] = unit * f64_scale; break;
        }
    }
    return a;
}

}  // namespace swgpu::testing
