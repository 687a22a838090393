// The GPU box filter (gpu/numerics/box_filter.hpp) against the CPU's (core/numerics/box_filter.cpp, itself tested
// against exact rational means in tests/numerics): the same bytes for every dtype, 1 and 3 channels, radii 0, 1, 5 and
// 40, odd sizes, images smaller than the radius and wider than a block (512 elements) or taller than a band (32 rows);
// float images whose exponents span enough to need 128-bit sums, or the CPU's rounding to multiples of 2^-s; NaN
// refused as on the CPU. A float difference is reported with its size in ulps.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/numerics/sat.hpp"
#include "core/thread_pool.hpp"
#include "gpu/numerics/box_filter.hpp"
#include "tests/gpu/harness.hpp"
#include "tests/numerics/sat_arrays.hpp"

namespace {

using namespace swgpu;
using sat::dtype;

// The distance in ulps of two floats of the same sign (or both zero); a large number otherwise.
template <class F>
double ulps(F a, F b) {
    if (a == b) return 0;
    if (std::signbit(a) != std::signbit(b)) return 1e30;
    return std::fabs(static_cast<double>(a) - static_cast<double>(b)) /
           static_cast<double>(std::nextafter(std::fabs(a), F(INFINITY)) - std::fabs(a));
}

// Empty when `g` and `c` hold the same bytes, else where and by how much they differ.
std::string compare(const sat::array& g, const sat::array& c) {
    if (g.type != c.type || g.rows != c.rows || g.cols != c.cols || g.lanes != c.lanes) return "shape or type differs";
    if (std::memcmp(g.raw(), c.raw(), g.bytes()) == 0) return "";
    const std::size_t s = sat::size_of(g.type);
    std::size_t bad = 0, first = 0;
    double worst = 0;
    for (std::size_t k = 0; k < g.elements(); ++k) {
        if (std::memcmp(static_cast<const char*>(g.raw()) + k * s, static_cast<const char*>(c.raw()) + k * s, s) == 0) continue;
        if (bad++ == 0) first = k;
        if (g.type == dtype::f32) worst = std::max(worst, ulps(g.data<float>()[k], c.data<float>()[k]));
        else if (g.type == dtype::f64) worst = std::max(worst, ulps(g.data<double>()[k], c.data<double>()[k]));
    }
    return std::to_string(bad) + " elements differ, the first at " + std::to_string(first) + " (gpu " +
           std::to_string(g.value(first)) + ", cpu " + std::to_string(c.value(first)) + ")" +
           (g.type == dtype::f32 || g.type == dtype::f64 ? ", at most " + std::to_string(worst) + " ulp" : "");
}

std::string describe(dtype t, index_t h, index_t w, index_t l, index_t r) {
    return std::string(sat::name_of(t)) + " " + std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(l) +
           " radius " + std::to_string(r);
}

void check_same(const sat::array& in, index_t r, thread_pool& pool, const char* file, int line) {
    const auto cpu = sat::box_filter(in, r, pool);
    const auto g = gpu::box_filter(in, r);
    const std::string d = compare(g, cpu);
    if (!d.empty()) ::swgpu::gputest::report(file, line, describe(in.type, in.rows, in.cols, in.lanes, r) + ": " + d);
}

const std::vector<std::pair<index_t, index_t>> sizes = {{1, 1},  {1, 37}, {37, 1},  {3, 2},    {5, 7},    {17, 33},
                                                         {32, 512}, {33, 513}, {70, 601}, {41, 1100}, {129, 257}};

}  // namespace

GPU_TEST("[sat] [box] box filter: every dtype equals the CPU byte for byte") {
    std::mt19937_64 rng(41);
    thread_pool pool;
    for (const auto t : {dtype::u8, dtype::u16, dtype::f32, dtype::f64, dtype::u32, dtype::u64, dtype::i8, dtype::i16,
                         dtype::i32, dtype::i64})
        for (const auto& [h, w] : sizes)
            for (const index_t lanes : {index_t(1), index_t(3)}) {
                const auto in = testing::random_array(t, h, w, lanes, rng);
                for (const index_t r : {index_t(0), index_t(1), index_t(5), index_t(40)}) check_same(in, r, pool, __FILE__, __LINE__);
            }
}

GPU_TEST("[sat] [box] box filter: a 1000 x 1500 image and the radii where the CPU changes its rounding") {
    std::mt19937_64 rng(42);
    thread_pool pool;
    // uint8: float reciprocal up to R = 44 ((M+1)·A <= 2^21), then double; uint16: double; R = 1500 reflects across
    // the whole image many times.
    for (const auto t : {dtype::u8, dtype::u16, dtype::f32, dtype::f64}) {
        const auto in = testing::random_array(t, 1000, 1500, 1, rng);
        for (const index_t r : {index_t(2), index_t(44), index_t(45), index_t(100)}) check_same(in, r, pool, __FILE__, __LINE__);
    }
    const auto rgb = testing::random_array(dtype::u8, 300, 200, 3, rng);
    check_same(rgb, 1500, pool, __FILE__, __LINE__);
}

GPU_TEST("[sat] [box] box filter: float images of wide exponent range (128-bit sums, rounded sums) equal the CPU") {
    std::mt19937_64 rng(43);
    thread_pool pool;
    // Magnitudes 2^lo .. 2^hi with random signs and zeros: spans of 8 (64-bit sums), 60 (128-bit), 200 / 1500 (the
    // CPU's rounding to multiples of 2^-s).
    const auto fill = [&](dtype t, int lo, int hi) {
        sat::array a(t, 67, 531, 1);
        std::uniform_real_distribution<double> mant(1, 2);
        std::uniform_int_distribution<int> ex(lo, hi);
        for (std::size_t k = 0; k < a.elements(); ++k) {
            const double v = rng() % 13 == 0 ? 0.0 : std::ldexp(mant(rng), ex(rng)) * (rng() % 2 ? -1 : 1);
            if (t == dtype::f32) a.data<float>()[k] = static_cast<float>(v);
            else a.data<double>()[k] = v;
        }
        return a;
    };
    for (const index_t r : {index_t(1), index_t(5), index_t(40)}) {
        check_same(fill(dtype::f32, -4, 4), r, pool, __FILE__, __LINE__);
        check_same(fill(dtype::f32, -30, 30), r, pool, __FILE__, __LINE__);
        check_same(fill(dtype::f32, -126, 100), r, pool, __FILE__, __LINE__);
        check_same(fill(dtype::f32, -149, -120), r, pool, __FILE__, __LINE__);  // subnormals
        check_same(fill(dtype::f64, -4, 4), r, pool, __FILE__, __LINE__);
        check_same(fill(dtype::f64, -40, 40), r, pool, __FILE__, __LINE__);
        check_same(fill(dtype::f64, -700, 800), r, pool, __FILE__, __LINE__);
        check_same(fill(dtype::f64, -1074, -1000), r, pool, __FILE__, __LINE__);  // subnormals
    }
}

GPU_TEST("[sat] [box] box filter: NaN is refused as on the CPU") {
    sat::array a(dtype::f32, 9, 9, 1);
    a.data<float>()[40] = NAN;
    bool refused = false;
    try {
        (void)gpu::box_filter(a, 2);
    } catch (const error& e) {
        refused = e.code() == exit_code::bad_input;
    }
    CHECK(refused);
}
