// The box filter (core/numerics/box_filter.cpp, docs/sat.md "Box filter") against references computed here, window by
// window: integer means from 128-bit window sums rounded by a quotient and remainder; float means from __float128
// window sums (exact for the data used, whose magnitudes and least units the tests check) with the output required to
// lie within one ulp on either side (A · nextafter bounds compared with the exact sum, all exact in __float128).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/align/simd/isa.hpp"
#include "core/error.hpp"
#include "core/numerics/box_filter_isa.hpp"
#include "core/numerics/sat.hpp"
#include "core/thread_pool.hpp"
#include "io/arrays/npy.hpp"
#include "tests/cli_support.hpp"

using namespace swgpu;
using sat::dtype;

namespace {

using f128 = __float128;

// OpenCV's borderInterpolate for BORDER_REFLECT_101, as OpenCV writes it.
index_t mirror(index_t p, index_t n) {
    if (n == 1) return 0;
    while (p < 0 || p >= n) p = p < 0 ? -p : 2 * (n - 1) - p;
    return p;
}

template <class T>
T& at(sat::array& a, index_t i, index_t j, index_t c) {
    return a.data<T>()[(i * a.cols + j) * a.lanes + c];
}
template <class T>
T at(const sat::array& a, index_t i, index_t j, index_t c) {
    return a.data<T>()[(i * a.cols + j) * a.lanes + c];
}

// The exact window sum at (i, j, c), summed directly in S.
template <class S, class T>
S window_sum(const sat::array& in, index_t i, index_t j, index_t c, index_t R) {
    S s = 0;
    for (index_t di = -R; di <= R; ++di)
        for (index_t dj = -R; dj <= R; ++dj) s += static_cast<S>(at<T>(in, mirror(i + di, in.rows), mirror(j + dj, in.cols), c));
    return s;
}

// Integer outputs: the window mean rounded to nearest, from the quotient and remainder of the exact sum.
template <class T>
std::size_t integer_mismatches(const sat::array& in, const sat::array& out, index_t R) {
    const __int128 A = (2 * R + 1) * (2 * R + 1);
    std::size_t bad = 0;
    for (index_t i = 0; i < in.rows; ++i)
        for (index_t j = 0; j < in.cols; ++j)
            for (index_t c = 0; c < in.lanes; ++c) {
                const __int128 s = window_sum<__int128, T>(in, i, j, c, R);
                __int128 q = s / A;
                const __int128 r = s - q * A;  // same sign as s
                if (2 * r > A) ++q;
                if (2 * r < -A) --q;
                if (static_cast<__int128>(at<T>(out, i, j, c)) != q) ++bad;
            }
    return bad;
}

// Float outputs: the exact mean s / A lies between the output's neighbours: A · prev <= s <= A · next.
template <class T>
std::size_t outside_one_ulp(const sat::array& in, const sat::array& out, index_t R, std::size_t* rounded_exactly = nullptr) {
    const f128 A = static_cast<f128>((2 * R + 1) * (2 * R + 1));
    std::size_t bad = 0, exact = 0;
    for (index_t i = 0; i < in.rows; ++i)
        for (index_t j = 0; j < in.cols; ++j)
            for (index_t c = 0; c < in.lanes; ++c) {
                const f128 s = window_sum<f128, T>(in, i, j, c, R);
                const T o = at<T>(out, i, j, c);
                const T lo = std::nextafter(o, -std::numeric_limits<T>::infinity());
                const T hi = std::nextafter(o, std::numeric_limits<T>::infinity());
                if (!(A * static_cast<f128>(lo) <= s && s <= A * static_cast<f128>(hi))) ++bad;
                // correctly rounded: within half an ulp on both sides
                const f128 half_lo = (static_cast<f128>(lo) + static_cast<f128>(o)) / 2, half_hi = (static_cast<f128>(o) + static_cast<f128>(hi)) / 2;
                if (A * half_lo <= s && s <= A * half_hi) ++exact;
            }
    if (rounded_exactly) *rounded_exactly = exact;
    return bad;
}

// The least binary exponent of the units of the nonzero values (a value is an integer multiple of 2^lsb), and the
// largest magnitude: the __float128 sums of the reference are exact when the window sums need at most 113 bits.
template <class T>
bool f128_sums_exact(const sat::array& a, index_t R) {
    int lsb = std::numeric_limits<int>::max();
    double top = 0;
    for (std::size_t k = 0; k < a.elements(); ++k) {
        const T v = a.data<T>()[k];
        if (v == 0) continue;
        int e;
        std::frexp(v, &e);
        lsb = std::min(lsb, e - std::numeric_limits<T>::digits);
        top = std::max(top, std::fabs(static_cast<double>(v)));
    }
    if (lsb == std::numeric_limits<int>::max()) return true;
    const double bits = std::log2(top) + 1 + std::log2(static_cast<double>((2 * R + 1) * (2 * R + 1))) - lsb;
    return bits <= 112;
}

sat::array filled(dtype t, index_t h, index_t w, index_t l) { return sat::array(t, h, w, l); }

}  // namespace

TEST_CASE("box filter: float64 and float32 within 1 ulp of the exact window mean", "[sat][box]") {
    std::mt19937_64 rng(21);
    thread_pool pool(2);
    std::uniform_real_distribution<double> unit(0.0, 1.0), sym(-1.0, 1.0);
    struct data_case {
        const char* name;
        index_t h, w, l;
        std::vector<index_t> radii;
    };
    // Values near 1000 in rows of 4096 (the case: a table of the padded image lost 4.4e-5 there, radius 0
    // included); mixed signs, which cancel; a colour image; one row and one column; radii larger than the image.
    for (const auto t : {dtype::f64, dtype::f32})
        for (const int kind : {0, 1, 2, 3, 4}) {
            sat::array in;
            std::vector<index_t> radii;
            switch (kind) {
                case 0: in = filled(t, 64, 4096, 1); radii = {1, 5}; break;
                case 1: in = filled(t, 37, 53, 1); radii = {1, 2, 8, 9, 30}; break;
                case 2: in = filled(t, 19, 23, 3); radii = {3, 11}; break;
                case 3: in = filled(t, 1, 41, 1); radii = {4, 50}; break;
                default: in = filled(t, 41, 1, 2); radii = {6}; break;
            }
            for (std::size_t k = 0; k < in.elements(); ++k) {
                const double v = kind == 0 ? 1000 + unit(rng) : 1000 * sym(rng);
                if (t == dtype::f64) in.data<double>()[k] = v;
                else in.data<float>()[k] = static_cast<float>(v);
            }
            for (const index_t R : radii) {
                INFO(sat::name_of(t) << " kind " << kind << " " << in.rows << "x" << in.cols << "x" << in.lanes << " R " << R);
                const auto out = sat::box_filter(in, R, pool);
                REQUIRE(out.type == t);
                std::size_t exact = 0;
                if (t == dtype::f64) {
                    REQUIRE(f128_sums_exact<double>(in, R));
                    CHECK(outside_one_ulp<double>(in, out, R, &exact) == 0);
                } else {
                    REQUIRE(f128_sums_exact<float>(in, R));
                    CHECK(outside_one_ulp<float>(in, out, R, &exact) == 0);
                }
                // Correct rounding is the rule; the bound allows the rare double rounding.
                CHECK(exact * 1000 >= in.elements() * 999);
            }
        }
}

TEST_CASE("box filter: float images of wide range, huge and subnormal values keep the 1 ulp bound", "[sat][box]") {
    std::mt19937_64 rng(22);
    thread_pool pool(2);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    // f64 spanning 2^-35..2^10 (more than the two-double split holds: 128-bit sums), values near 1e307 whose window
    // sums overflow a double, and subnormals; f32 spanning 2^-50..2^20 and subnormals.
    for (const int kind : {0, 1, 2, 3, 4}) {
        const dtype t = kind <= 2 ? dtype::f64 : dtype::f32;
        sat::array in(t, 23, 29, 1);
        for (std::size_t k = 0; k < in.elements(); ++k) {
            const double sign = (rng() & 1) ? 1 : -1;
            double v = 0;
            switch (kind) {
                case 0: v = sign * std::ldexp(1 + unit(rng), -35 + static_cast<int>(rng() % 45)); break;
                case 1: v = 1e307 * (1 + unit(rng)); break;
                case 2: v = sign * std::ldexp(unit(rng), -1040); break;
                case 3: v = sign * std::ldexp(1 + unit(rng), -50 + static_cast<int>(rng() % 70)); break;
                default: v = sign * std::ldexp(unit(rng), -130); break;
            }
            if (t == dtype::f64) in.data<double>()[k] = v;
            else in.data<float>()[k] = static_cast<float>(v);
        }
        for (const index_t R : {1, 2, 10}) {
            INFO("kind " << kind << " R " << R);
            const auto out = sat::box_filter(in, R, pool);
            if (t == dtype::f64) {
                REQUIRE(f128_sums_exact<double>(in, R));
                CHECK(outside_one_ulp<double>(in, out, R) == 0);
            } else {
                REQUIRE(f128_sums_exact<float>(in, R));
                CHECK(outside_one_ulp<float>(in, out, R) == 0);
            }
        }
    }
}

TEST_CASE("box filter: radius 0 is the identity, bit for bit, for every dtype", "[sat][box]") {
    std::mt19937_64 rng(23);
    thread_pool pool(2);
    for (const auto t : {dtype::u8, dtype::u16, dtype::u32, dtype::u64, dtype::i8, dtype::i16, dtype::i32, dtype::i64,
                         dtype::f32, dtype::f64}) {
        sat::array in(t, 9, 4096, 2);
        auto* bytes = static_cast<unsigned char*>(in.raw());
        for (std::size_t k = 0; k < in.bytes(); ++k) bytes[k] = static_cast<unsigned char>(rng());
        if (t == dtype::f32)  // finite values: random bits with the exponent field kept below all ones
            for (std::size_t k = 0; k < in.elements(); ++k) in.data<std::uint32_t>()[k] &= 0xbfffffffu;
        if (t == dtype::f64)
            for (std::size_t k = 0; k < in.elements(); ++k) in.data<std::uint64_t>()[k] &= 0xbfffffffffffffffull;
        if (t == dtype::f64)
            for (std::size_t k = 0; k < in.elements(); k += 7) in.data<double>()[k] = 1000 + 1e-9 * static_cast<double>(k);
        const auto out = sat::box_filter(in, 0, pool);
        INFO(sat::name_of(t));
        REQUIRE(out.bytes() == in.bytes());
        CHECK(std::memcmp(out.raw(), in.raw(), in.bytes()) == 0);
    }
}

TEST_CASE("box filter: every integer dtype equals the exactly rounded window mean, extremes included", "[sat][box]") {
    std::mt19937_64 rng(24);
    thread_pool pool(3);
    const auto fill = [&](sat::array& a, bool extremes) {
        auto* bytes = static_cast<unsigned char*>(a.raw());
        for (std::size_t k = 0; k < a.bytes(); ++k) bytes[k] = static_cast<unsigned char>(rng());
        if (!extremes) return;
        // Half the samples at the type's minimum or maximum: sums near the accumulator's limits.
        const std::size_t w = sat::size_of(a.type);
        const bool sgn = sat::is_signed(a.type);
        for (std::size_t k = 0; k < a.elements(); ++k) {
            if (rng() % 2) continue;
            const bool high = rng() % 2;
            for (std::size_t b = 0; b < w; ++b) {
                unsigned char v = high ? 0xff : 0x00;
                if (sgn && b == w - 1) v = high ? 0x7f : 0x80;
                bytes[k * w + b] = v;
            }
        }
    };
    for (const auto t : {dtype::u8, dtype::u16, dtype::u32, dtype::u64, dtype::i8, dtype::i16, dtype::i32, dtype::i64})
        for (const bool extremes : {false, true})
            for (const auto& [h, w, l] : std::vector<std::tuple<index_t, index_t, index_t>>{{29, 31, 1}, {7, 5, 3}, {1, 17, 1}, {3, 2, 2}})
                for (const index_t R : {1, 2, 8, 9, 13}) {
                    sat::array in(t, h, w, l);
                    fill(in, extremes);
                    INFO(sat::name_of(t) << " " << h << "x" << w << "x" << l << " R " << R << (extremes ? " extremes" : ""));
                    const auto out = sat::box_filter(in, R, pool);
                    REQUIRE(out.type == t);
                    std::size_t bad = 0;
                    switch (t) {
                        case dtype::u8: bad = integer_mismatches<std::uint8_t>(in, out, R); break;
                        case dtype::u16: bad = integer_mismatches<std::uint16_t>(in, out, R); break;
                        case dtype::u32: bad = integer_mismatches<std::uint32_t>(in, out, R); break;
                        case dtype::u64: bad = integer_mismatches<std::uint64_t>(in, out, R); break;
                        case dtype::i8: bad = integer_mismatches<std::int8_t>(in, out, R); break;
                        case dtype::i16: bad = integer_mismatches<std::int16_t>(in, out, R); break;
                        case dtype::i32: bad = integer_mismatches<std::int32_t>(in, out, R); break;
                        case dtype::i64: bad = integer_mismatches<std::int64_t>(in, out, R); break;
                        default: break;
                    }
                    CHECK(bad == 0);
                }
    // uint8 at radii where the rounding goes through float (R <= 44), double and, past 2^50, integer division.
    sat::array u8(dtype::u8, 3, 4, 1);
    fill(u8, true);
    for (const index_t R : {44, 45, 300})
        CHECK(integer_mismatches<std::uint8_t>(u8, sat::box_filter(u8, R, pool), R) == 0);
    sat::array wide(dtype::u8, 64, 4096, 1);
    fill(wide, false);
    CHECK(integer_mismatches<std::uint8_t>(wide, sat::box_filter(wide, 5, pool), 5) == 0);
}

TEST_CASE("box filter: one thread or many, AVX2 or AVX-512, the same bits", "[sat][box]") {
    std::mt19937_64 rng(25);
    thread_pool one(1), three(3);
    std::uniform_real_distribution<double> unit(-1000.0, 1000.0);
    for (const auto t : {dtype::u8, dtype::u16, dtype::i16, dtype::f32, dtype::f64}) {
        sat::array in(t, 57, 203, 3);
        for (std::size_t k = 0; k < in.elements(); ++k) {
            const double v = unit(rng);
            switch (t) {
                case dtype::u8: in.data<std::uint8_t>()[k] = static_cast<std::uint8_t>(rng()); break;
                case dtype::u16: in.data<std::uint16_t>()[k] = static_cast<std::uint16_t>(rng()); break;
                case dtype::i16: in.data<std::int16_t>()[k] = static_cast<std::int16_t>(rng()); break;
                case dtype::f32: in.data<float>()[k] = static_cast<float>(v); break;
                default: in.data<double>()[k] = v; break;
            }
        }
        for (const index_t R : {1, 5, 17}) {
            INFO(sat::name_of(t) << " R " << R);
            const auto a = sat::box_filter(in, R, one), b = sat::box_filter(in, R, three);
            CHECK(std::memcmp(a.raw(), b.raw(), a.bytes()) == 0);
#if defined(SWGPU_X86_KERNELS)
            for (const auto isa : {simd::isa::avx2, simd::isa::avx512bw}) {
                if (!simd::cpu_supports(isa)) continue;
                sat::array c = sat::array::uninitialized(t, in.rows, in.cols, in.lanes);
                if (isa == simd::isa::avx2) sat::box_filter_avx2(in, sat::box_output{c.raw(), nullptr}, R, three);
                else sat::box_filter_avx512(in, sat::box_output{c.raw(), nullptr}, R, three);
                CHECK(std::memcmp(a.raw(), c.raw(), a.bytes()) == 0);
            }
#endif
        }
    }
}

TEST_CASE("box filter: memory estimate counts the output and the row buffers, not a padded table", "[sat][box]") {
    const sat::array img(dtype::u8, 4096, 4096, 1);
    // Output 16 MiB; per thread (4096 + 2·5) + 4096 uint32 sums and 10 source offsets.
    CHECK(sat::box_filter_bytes(img, 5, 2) == 4096.0 * 4096 + 2 * ((2 * 4096 + 10) * 4.0 + 10 * 8));
    // A radius of 20000 on a 5 x 5 image: 40010 sums a row (uint64 past R = 2047 for uint8), not a 40005² table.
    const sat::array small(dtype::u8, 5, 5, 1);
    CHECK(sat::box_filter_bytes(small, 20000, 1) == 25 + ((2 * 5 + 40000) * 8.0 + 40000 * 8));
    const sat::array f(dtype::f32, 10, 10, 2);
    CHECK(sat::box_filter_bytes(f, 1, 4) == 800 + 4 * ((2 * 10 + 2) * 2 * 16.0 + 2 * 8));
}

namespace {

// Rows handed to a sink (sat::box_filter_rows), gathered into an array; how often each row came and the most rows a
// block held.
struct gathered {
    sat::array out;
    std::vector<int> seen;
    index_t largest_block = 0;
    std::mutex m;
    explicit gathered(const sat::array& like)
        : out(sat::array::uninitialized(like.type, like.rows, like.cols, like.lanes)), seen(static_cast<std::size_t>(like.rows)) {}
    sat::rows_sink sink() {
        return [this](index_t first, index_t count, const void* data) {
            const std::size_t row = out.bytes() / static_cast<std::size_t>(out.rows);
            std::lock_guard lock(m);
            REQUIRE(first >= 0);
            REQUIRE(count >= 1);
            REQUIRE(first + count <= out.rows);
            std::memcpy(static_cast<char*>(out.raw()) + static_cast<std::size_t>(first) * row, data, static_cast<std::size_t>(count) * row);
            for (index_t i = first; i < first + count; ++i) ++seen[static_cast<std::size_t>(i)];
            largest_block = std::max(largest_block, count);
        };
    }
    bool each_row_once() const {
        return std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; });
    }
};

sat::array random_image(dtype t, index_t rows, index_t cols, index_t lanes, std::mt19937_64& rng) {
    sat::array in(t, rows, cols, lanes);
    std::uniform_real_distribution<double> unit(-1000.0, 1000.0);
    for (std::size_t k = 0; k < in.elements(); ++k) {
        switch (t) {
            case dtype::u8: in.data<std::uint8_t>()[k] = static_cast<std::uint8_t>(rng()); break;
            case dtype::i16: in.data<std::int16_t>()[k] = static_cast<std::int16_t>(rng()); break;
            case dtype::u32: in.data<std::uint32_t>()[k] = static_cast<std::uint32_t>(rng()); break;
            case dtype::f32: in.data<float>()[k] = static_cast<float>(unit(rng)); break;
            default: in.data<double>()[k] = unit(rng) * std::ldexp(1.0, static_cast<int>(rng() % 80) - 40); break;
        }
    }
    return in;
}

}  // namespace

TEST_CASE("box filter: rows handed to a sink are box_filter's, each row once, in blocks", "[sat][box]") {
    std::mt19937_64 rng(31);
    thread_pool one(1), three(3);
    struct shape {
        index_t rows, cols, lanes;
    };
    // 300 x 1000 float64: 8000 bytes a row, blocks of 32 rows, bands of 100 rows on three threads (a partial block at
    // the end of each); one row; more threads than rows.
    for (const shape s : {shape{300, 1000, 1}, shape{57, 203, 3}, shape{1, 5000, 1}, shape{2, 7, 1}}) {
        for (const auto t : {dtype::u8, dtype::i16, dtype::u32, dtype::f32, dtype::f64}) {
            const sat::array in = random_image(t, s.rows, s.cols, s.lanes, rng);
            for (const index_t R : {0, 1, 5}) {
                INFO(sat::name_of(t) << " " << s.rows << " x " << s.cols << " x " << s.lanes << " R " << R);
                const auto whole = sat::box_filter(in, R, one);
                for (thread_pool* pool : {&one, &three}) {
                    gathered g(in);
                    sat::box_filter_rows(in, R, *pool, g.sink());
                    CHECK(g.each_row_once());
                    CHECK(std::memcmp(whole.raw(), g.out.raw(), whole.bytes()) == 0);
                    const std::size_t row = in.bytes() / static_cast<std::size_t>(in.rows);
                    if (R > 0) CHECK(static_cast<std::size_t>(g.largest_block) * row <= std::max<std::size_t>(row, 256 << 10));
                }
#if defined(SWGPU_X86_KERNELS)
                if (R == 0) continue;
                for (const auto isa : {simd::isa::avx2, simd::isa::avx512bw}) {
                    if (!simd::cpu_supports(isa)) continue;
                    gathered g(in);
                    const sat::rows_sink sink = g.sink();
                    if (isa == simd::isa::avx2) sat::box_filter_avx2(in, sat::box_output{nullptr, &sink}, R, three);
                    else sat::box_filter_avx512(in, sat::box_output{nullptr, &sink}, R, three);
                    CHECK(g.each_row_once());
                    CHECK(std::memcmp(whole.raw(), g.out.raw(), whole.bytes()) == 0);
                }
#endif
            }
        }
    }
    SECTION("an exception from the sink ends the filter and reaches the caller") {
        const sat::array in = random_image(dtype::f32, 300, 1000, 1, rng);
        const auto fail = [](index_t first, index_t, const void*) {
            if (first > 0) throw std::runtime_error("sink failed");
        };
        CHECK_THROWS_WITH(sat::box_filter_rows(in, 3, three, fail), "sink failed");
        CHECK_THROWS_WITH(sat::box_filter_rows(in, 3, one, fail), "sink failed");
    }
}

TEST_CASE("write_npy_rows: the same file as write_npy, into a file or a FIFO, a failed run leaves the earlier file",
          "[sat][box][output]") {
    std::mt19937_64 rng(37);
    thread_pool three(3);
    testing::temp_dir dir("swgpu-box");
    const auto files = [&] {
        std::vector<std::string> names;
        for (const auto& e : std::filesystem::directory_iterator(dir.path)) names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    };
    for (const auto t : {dtype::u8, dtype::f32, dtype::f64}) {
        for (const bool one_d : {false, true}) {
            sat::array in = random_image(t, one_d ? 1 : 300, 1000, one_d ? 1 : 2, rng);
            in.one_dimensional = one_d;
            INFO(sat::name_of(t) << (one_d ? " (W,)" : " (H, W, C)"));
            sat::array whole = sat::box_filter(in, 4, three);
            whole.one_dimensional = one_d;
            io::write_npy(whole, dir / "whole.npy");
            std::ofstream(dir / "rows.npy") << "an earlier file, replaced";
            io::write_npy_rows(in, dir / "rows.npy", [&](const sat::rows_sink& sink) { sat::box_filter_rows(in, 4, three, sink); });
            CHECK(testing::slurp(dir / "rows.npy") == testing::slurp(dir / "whole.npy"));
            CHECK(files() == std::vector<std::string>{"rows.npy", "whole.npy"});

            // A FIFO cannot be written out of order: the rows are gathered and written in order.
            const std::string fifo = dir / "fifo.npy";
            REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
            std::string got;
            std::thread reader([&] { got = testing::slurp(fifo); });
            io::write_npy_rows(in, fifo, [&](const sat::rows_sink& sink) { sat::box_filter_rows(in, 4, three, sink); });
            reader.join();
            CHECK(got == testing::slurp(dir / "whole.npy"));
            std::filesystem::remove(fifo);
        }
    }
    SECTION("rows computed, then a failure: the earlier file stays as it was, no temporary file is left") {
        const sat::array in = random_image(dtype::f32, 300, 1000, 1, rng);
        std::ofstream(dir / "out.npy") << "an earlier file";
        const auto failing = [&](const sat::rows_sink& sink) {
            sat::box_filter_rows(in, 2, three, [&](index_t first, index_t count, const void* data) {
                sink(first, count, data);  // into the temporary file
                if (first + count == in.rows) throw output_error(dir / "out.npy", "write failed (simulated)");
            });
        };
        try {
            io::write_npy_rows(in, dir / "out.npy", failing);
            FAIL("no error");
        } catch (const swgpu::error& e) {
            CHECK(e.code() == exit_code::output_failed);
        }
        CHECK(testing::slurp(dir / "out.npy") == "an earlier file");
        CHECK(files() == std::vector<std::string>{"out.npy", "rows.npy", "whole.npy"});  // no temporary file
    }
}

TEST_CASE("large arrays: huge-page blocks keep their contents when a vector grows past the threshold", "[sat][box]") {
    std::vector<std::uint64_t, sat::uninitialized_allocator<std::uint64_t>> v(1000);
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = k * 7;
    v.resize(sat::large_allocation / 8 + 12345);  // from an ordinary block into a large one
    for (std::size_t k = 0; k < 1000; ++k) REQUIRE(v[k] == k * 7);
    CHECK(reinterpret_cast<std::uintptr_t>(v.data()) % (std::uintptr_t(2) << 20) == 0);
    v.back() = 1;
    v.resize(10);
    v.shrink_to_fit();  // back to an ordinary block
    CHECK(v[9] == 63);
    const sat::array a = sat::array::uninitialized(dtype::f32, 4096, 4096, 1);
    const sat::array b = a;  // copies are large blocks too
    CHECK(b.bytes() == a.bytes());
}
