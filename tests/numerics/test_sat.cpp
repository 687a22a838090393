// Summed-area tables and integral histograms (core/numerics/sat.hpp), their file formats (io/arrays/npy.hpp, io/arrays/image.hpp) and the
// `swgpu sat` / `swgpu ihist` commands. Every table is checked against references written here (direct loops, closed
// forms), never against values taken from the code under test; PNG and TIFF files are also made and read here with
// libpng and libtiff directly.
#include <catch2/catch.hpp>

#include <png.h>
#include <sys/wait.h>
#include <tiffio.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "tests/lying_tiff.hpp"
#include "core/error.hpp"
#include "core/engine/executors.hpp"
#include "core/numerics/sat.hpp"
#include "tests/numerics/sat_arrays.hpp"
#include "core/thread_pool.hpp"
#include "core/tuning.hpp"
#include "io/arrays/image.hpp"
#include "io/arrays/npy.hpp"
#include "tests/cli_support.hpp"
#include "io/arrays/rectangles.hpp"

namespace fs = std::filesystem;
using namespace swgpu;
using sat::dtype;

namespace {

// ---- references ---------------------------------------------------------------------------------------------------

// S by the textbook recurrence in long double (exact for the integer sizes used here) or wrapping uint64/int64.
template <class T>
std::vector<T> reference_table(const sat::array& in) {
    const index_t H = in.rows, W = in.cols, L = in.lanes;
    std::vector<T> s(static_cast<std::size_t>(H * W * L));
    auto at = [&](index_t i, index_t j, index_t c) -> T { return (i < 0 || j < 0) ? T(0) : s[static_cast<std::size_t>((i * W + j) * L + c)]; };
    for (index_t i = 0; i < H; ++i)
        for (index_t j = 0; j < W; ++j)
            for (index_t c = 0; c < L; ++c) {
                const auto k = static_cast<std::size_t>((i * W + j) * L + c);
                T v;
                if constexpr (std::is_floating_point_v<T>) v = static_cast<T>(in.value(k));
                else if (sat::is_float(in.type)) v = static_cast<T>(in.value(k));
                else {
                    // integers of any width, through their own type
                    switch (in.type) {
                        case dtype::u8: v = static_cast<T>(in.data<std::uint8_t>()[k]); break;
                        case dtype::u16: v = static_cast<T>(in.data<std::uint16_t>()[k]); break;
                        case dtype::u32: v = static_cast<T>(in.data<std::uint32_t>()[k]); break;
                        case dtype::u64: v = static_cast<T>(in.data<std::uint64_t>()[k]); break;
                        case dtype::i8: v = static_cast<T>(in.data<std::int8_t>()[k]); break;
                        case dtype::i16: v = static_cast<T>(in.data<std::int16_t>()[k]); break;
                        case dtype::i32: v = static_cast<T>(in.data<std::int32_t>()[k]); break;
                        default: v = static_cast<T>(in.data<std::int64_t>()[k]); break;
                    }
                }
                s[k] = static_cast<T>(v + at(i - 1, j, c) + at(i, j - 1, c) - at(i - 1, j - 1, c));
            }
    return s;
}

template <class T>
std::vector<T> values_of(const sat::array& a) {
    return std::vector<T>(a.data<T>(), a.data<T>() + a.elements());
}

sat::array random_array(dtype t, index_t h, index_t w, index_t l, std::mt19937_64& rng) {
    return testing::random_array(t, h, w, l, rng, 100);
}

// Checks an integer table equals the reference exactly, a floating one within the stated bound
// (i + j + 2 + bands) · u · Σ|I| over the rectangle (bounded here by the whole image's Σ|I|).
void check_table(const sat::array& got, const sat::array& in, unsigned extra_depth = 64) {
    REQUIRE(got.rows == in.rows);
    REQUIRE(got.cols == in.cols);
    REQUIRE(got.lanes == in.lanes);
    if (got.type == dtype::u64) {
        CHECK(values_of<std::uint64_t>(got) == reference_table<std::uint64_t>(in));
    } else if (got.type == dtype::i64) {
        CHECK(values_of<std::int64_t>(got) == reference_table<std::int64_t>(in));
    } else {
        const auto ref = reference_table<long double>(in);
        long double total = 0;
        for (std::size_t k = 0; k < in.elements(); ++k) total += std::fabs(static_cast<long double>(in.value(k)));
        const long double u = got.type == dtype::f32 ? std::ldexp(1.0L, -24) : std::ldexp(1.0L, -53);
        std::size_t bad = 0;
        for (index_t i = 0; i < in.rows; ++i)
            for (index_t j = 0; j < in.cols; ++j)
                for (index_t c = 0; c < in.lanes; ++c) {
                    const auto k = static_cast<std::size_t>((i * in.cols + j) * in.lanes + c);
                    const long double bound = static_cast<long double>(i + j + 2 + extra_depth) * u * total + 1e-30L;
                    if (std::fabs(static_cast<long double>(got.value(k)) - ref[k]) > bound) ++bad;
                }
        CHECK(bad == 0);
    }
}

// One-lane uint64 table through an engine executor (core/engine/executors.hpp).
template <class Run>
std::vector<std::uint64_t> executor_table(const sat::array& in, Run run) {
    std::vector<std::uint64_t> conv(in.elements()), out(in.elements());
    for (std::size_t k = 0; k < in.elements(); ++k) conv[k] = static_cast<std::uint64_t>(in.value(k));
    sat::sat_problem<std::uint64_t, std::uint64_t> p{conv.data(), out.data(), in.rows, in.cols, 1, 0};
    run(p);
    return out;
}

// ---- files --------------------------------------------------------------------------------------------------------

struct temp_dir : testing::temp_dir {
    temp_dir() : testing::temp_dir("swgpu-sat") {}
};
using testing::slurp;

void put(const std::string& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

// A PNG written with libpng's simplified API (independent of io/arrays/image.cpp's writer).
void make_png(const std::string& path, const std::vector<std::uint8_t>& bytes, png_uint_32 w, png_uint_32 h, png_uint_32 format) {
    png_image img;
    std::memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = w;
    img.height = h;
    img.format = format;
    REQUIRE(png_image_write_to_file(&img, path.c_str(), 0, bytes.data(), 0, nullptr) != 0);
}

// A TIFF written with libtiff directly.
void make_tiff(const std::string& path, const void* data, std::uint32_t w, std::uint32_t h, std::uint16_t spp,
               std::uint16_t bps, std::uint16_t format) {
    TIFF* t = TIFFOpen(path.c_str(), "w");
    REQUIRE(t != nullptr);
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, h);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, spp);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, bps);
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, format);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 2u);
    const std::size_t stride = (static_cast<std::size_t>(w) * spp * bps + 7) / 8;
    for (std::uint32_t r = 0; r < h; ++r)
        REQUIRE(TIFFWriteScanline(t, static_cast<unsigned char*>(const_cast<void*>(data)) + r * stride, r, 0) >= 0);
    TIFFClose(t);
}

template <class F>
swgpu::error caught(F&& f) {
    try {
        f();
    } catch (const swgpu::error& e) {
        return e;
    }
    FAIL("no swgpu::error thrown");
    return swgpu::error(exit_code::success, "");
}

// ---- the program --------------------------------------------------------------------------------------------------

using testing::run_program;
testing::program_result run_swgpu(const std::string& args) { return run_program(args); }

using testing::one_error_line;

}  // namespace

// ---- tables -------------------------------------------------------------------------------------------------------

TEST_CASE("every CPU path of the summed-area table equals the textbook recurrence", "[sat]") {
    std::mt19937_64 rng(14);
    thread_pool pool3(3);
    const std::vector<std::pair<index_t, index_t>> sizes = {{1, 1}, {1, 301}, {301, 1}, {31, 255}, {32, 256}, {33, 257}, {7, 1000}};
    for (const auto t : {dtype::u8, dtype::u16, dtype::u32, dtype::u64, dtype::i8, dtype::i16, dtype::i32, dtype::i64, dtype::f32, dtype::f64})
        for (const auto& [h, w] : sizes)
            for (const index_t lanes : {index_t(1), index_t(3)}) {
                INFO(sat::name_of(t) << " " << h << "x" << w << "x" << lanes);
                const auto in = random_array(t, h, w, lanes, rng);
                const dtype table = sat::table_type(t, sat::precision::automatic);
                sat::check_table_fits(in, table, "test");
                check_table(sat::summed_area_table_naive(in, table), in);
                check_table(sat::summed_area_table(in, table, pool3), in);
                if (sat::is_float(t) || t == dtype::u8) {
                    check_table(sat::summed_area_table(in, dtype::f32, pool3), in);
                    check_table(sat::summed_area_table(in, dtype::f64, pool3), in);
                }
            }
}

TEST_CASE("the engine's executors run the table as a wavefront problem", "[sat]") {
    std::mt19937_64 rng(5);
    thread_pool pool(3);
    for (const auto& [h, w] : std::vector<std::pair<index_t, index_t>>{{1, 1}, {1, 77}, {77, 1}, {63, 255}, {64, 256}, {65, 257}}) {
        INFO(h << "x" << w);
        const auto in = random_array(dtype::u16, h, w, 1, rng);
        const auto ref = reference_table<std::uint64_t>(in);
        CHECK(executor_table(in, [](auto& p) { run_naive(p); }) == ref);
        CHECK(executor_table(in, [](auto& p) { run_rowscan(p, {.block = 16}); }) == ref);
        CHECK(executor_table(in, [](auto& p) { run_rowscan(p, {.block = 64, .force_map_scan = true}); }) == ref);
        CHECK(executor_table(in, [&](auto& p) { run_tiled(p, pool, {.tile_rows = 16, .tile_cols = 32}); }) == ref);
    }
}

TEST_CASE("a 4097 x 3001 table is exact on any number of threads", "[sat]") {
    std::mt19937_64 rng(4097);
    const auto in = random_array(dtype::u8, 4097, 3001, 1, rng);
    const auto ref = reference_table<std::uint64_t>(in);
    for (unsigned threads : {1u, 2u, 7u}) {
        thread_pool pool(threads);
        CHECK(values_of<std::uint64_t>(sat::summed_area_table(in, dtype::u64, pool)) == ref);
    }
    CHECK(values_of<std::uint64_t>(sat::summed_area_table_naive(in, dtype::u64)) == ref);
}

// The float table in the documented order: along each row (lane) left to right, then down each column, the first
// element of each taken as it is (NumPy's a.cumsum(1).cumsum(0)); written as two plain passes.
template <class T>
std::vector<T> rows_then_columns(const sat::array& in) {
    const auto H = static_cast<std::size_t>(in.rows), N = static_cast<std::size_t>(in.cols * in.lanes),
               L = static_cast<std::size_t>(in.lanes);
    std::vector<T> s(H * N);
    for (std::size_t i = 0; i < H; ++i)
        for (std::size_t x = 0; x < N; ++x) {
            const T v = static_cast<T>(in.value(i * N + x));
            s[i * N + x] = x < L ? v : static_cast<T>(s[i * N + x - L] + v);
        }
    for (std::size_t i = 1; i < H; ++i)
        for (std::size_t x = 0; x < N; ++x) s[i * N + x] = static_cast<T>(s[(i - 1) * N + x] + s[i * N + x]);
    return s;
}

TEST_CASE("float tables are summed rows first, then columns, bit for bit on any number of threads", "[sat]") {
    std::mt19937_64 rng(2718);
    std::uniform_real_distribution<double> value(-1000.0, 1000.0);
    for (const auto& [h, w] : std::vector<std::pair<index_t, index_t>>{{1, 1}, {1, 700}, {700, 1}, {33, 1025}, {300, 4001}, {1500, 1700}})
        for (const index_t lanes : {index_t(1), index_t(3)}) {
            sat::array in(dtype::f64, h, w, lanes);
            for (std::size_t k = 0; k < in.elements(); ++k) in.data<double>()[k] = value(rng) * std::ldexp(1.0, static_cast<int>(k % 40) - 20);
            in.data<double>()[0] = -0.0;  // a negative zero first in its row and column keeps its sign
            const auto ref64 = rows_then_columns<double>(in);
            const auto ref32 = rows_then_columns<float>(in);
            for (unsigned threads : {1u, 2u, 5u}) {
                INFO(h << "x" << w << "x" << lanes << " -t " << threads);
                thread_pool pool(threads);
                const auto t64 = sat::summed_area_table(in, dtype::f64, pool);
                const auto t32 = sat::summed_area_table(in, dtype::f32, pool);
                CHECK(std::memcmp(t64.raw(), ref64.data(), t64.bytes()) == 0);
                CHECK(std::memcmp(t32.raw(), ref32.data(), t32.bytes()) == 0);
            }
        }
}

TEST_CASE("tables past 2^32 are exact, and tables past 2^64 are refused", "[sat]") {
    thread_pool pool(2);
    sat::array white(dtype::u8, 4200, 4200, 1);  // 255 · 4200² > 2^32
    std::memset(white.raw(), 255, white.bytes());
    sat::check_table_fits(white, dtype::u64, "white");
    const auto t = sat::summed_area_table(white, dtype::u64, pool);
    const auto* s = t.data<std::uint64_t>();
    CHECK(s[white.elements() - 1] == 255ull * 4200 * 4200);
    CHECK(s[static_cast<std::size_t>(2999 * 4200 + 4100)] == 255ull * 3000 * 4101);
    CHECK(s[white.elements() - 1] > (1ull << 32));

    sat::array big(dtype::u64, 1, 3, 1);
    big.data<std::uint64_t>()[0] = std::numeric_limits<std::uint64_t>::max() - 5;
    big.data<std::uint64_t>()[1] = 5;
    CHECK_NOTHROW(sat::check_table_fits(big, dtype::u64, "big"));
    CHECK(sat::summed_area_table(big, dtype::u64, pool).data<std::uint64_t>()[2] == std::numeric_limits<std::uint64_t>::max());
    big.data<std::uint64_t>()[2] = 1;
    CHECK(caught([&] { sat::check_table_fits(big, dtype::u64, "big"); }).code() == exit_code::bad_input);
    sat::array neg(dtype::i64, 2, 1, 1);
    neg.data<std::int64_t>()[0] = std::numeric_limits<std::int64_t>::min();
    neg.data<std::int64_t>()[1] = -1;
    CHECK(caught([&] { sat::check_table_fits(neg, dtype::i64, "neg"); }).code() == exit_code::bad_input);
    CHECK(caught([&] { sat::check_table_fits(sat::array(dtype::u8, 0, 0, 1), dtype::u64, "empty"); }).code() == exit_code::bad_input);
}

// ---- integral histograms ------------------------------------------------------------------------------------------

TEST_CASE("integral histograms equal direct counts", "[sat]") {
    std::mt19937_64 rng(32);
    thread_pool pool(3);
    for (const auto& [h, w] : std::vector<std::pair<index_t, index_t>>{{1, 1}, {1, 200}, {200, 1}, {31, 255}, {33, 257}})
        for (const int bins : {1, 3, 32, 256}) {
            INFO(h << "x" << w << " bins " << bins);
            const auto in = random_array(dtype::u8, h, w, 1, rng);
            const auto bin = sat::bin_indices(in, {bins, {}});
            // reference: per bin, the recurrence over the indicator v·B/256 == b, computed here
            std::vector<std::uint32_t> ref(static_cast<std::size_t>(h * w * bins));
            for (int b = 0; b < bins; ++b)
                for (index_t i = 0; i < h; ++i)
                    for (index_t j = 0; j < w; ++j) {
                        auto at = [&](index_t a, index_t c) -> std::uint32_t { return (a < 0 || c < 0) ? 0u : ref[static_cast<std::size_t>((a * w + c) * bins + b)]; };
                        const unsigned v = in.data<std::uint8_t>()[i * w + j];
                        ref[static_cast<std::size_t>((i * w + j) * bins + b)] =
                            (v * static_cast<unsigned>(bins) / 256 == static_cast<unsigned>(b) ? 1u : 0u) + at(i - 1, j) + at(i, j - 1) - at(i - 1, j - 1);
                    }
            CHECK(values_of<std::uint32_t>(sat::integral_histogram_naive(bin, h, w, bins)) == ref);
            CHECK(values_of<std::uint32_t>(sat::integral_histogram(bin, h, w, bins, pool)) == ref);
        }
}

TEST_CASE("bins: uniform 8- and 16-bit, range of the data, explicit edges", "[sat]") {
    sat::array u8(dtype::u8, 1, 4, 1);
    const std::uint8_t v8[] = {0, 127, 128, 255};
    std::memcpy(u8.raw(), v8, 4);
    CHECK(sat::bin_indices(u8, {2, {}}) == std::vector<std::uint16_t>{0, 0, 1, 1});
    CHECK(sat::bin_indices(u8, {3, {}}) == std::vector<std::uint16_t>{0, 1, 1, 2});
    sat::array u16(dtype::u16, 1, 3, 1);
    const std::uint16_t v16[] = {0, 32768, 65535};
    std::memcpy(u16.raw(), v16, sizeof v16);
    CHECK(sat::bin_indices(u16, {4, {}}) == std::vector<std::uint16_t>{0, 2, 3});
    sat::array f(dtype::f32, 1, 5, 1);
    const float vf[] = {-1.0f, 0.0f, 0.49f, 1.0f, NAN};
    std::memcpy(f.raw(), vf, sizeof vf);
    // Equal-width bins over [min, max] of data holding NaN or an infinity are impossible: refused, naming --edges.
    const auto nan_range = caught([&] { sat::bin_indices(f, {4, {}}); });
    CHECK(nan_range.code() == exit_code::bad_input);
    CHECK(std::string(nan_range.what()).find("--edges") != std::string::npos);
    CHECK(sat::bin_indices(f, {2, {0.0, 0.5, 1.0}}) == std::vector<std::uint16_t>{2, 0, 0, 1, 2});
    f.data<float>()[4] = INFINITY;
    CHECK(caught([&] { sat::bin_indices(f, {4, {}}); }).code() == exit_code::bad_input);
    f.data<float>()[4] = 1.0f;
    CHECK(sat::bin_indices(f, {4, {}}) == std::vector<std::uint16_t>{0, 2, 2, 3, 3});
    CHECK(caught([&] { sat::bin_indices(f, {2, {0.0, 1.0}}); }).code() == exit_code::bad_command_line);
    CHECK(caught([&] { sat::bin_indices(f, {2, {0.0, 1.0, 1.0}}); }).code() == exit_code::bad_command_line);
    CHECK(caught([&] { sat::bin_indices(f, {0, {}}); }).code() == exit_code::bad_command_line);
}

// ---- queries and the box filter -----------------------------------------------------------------------------------

TEST_CASE("rectangle sums equal direct sums, rectangles outside are refused", "[sat]") {
    std::mt19937_64 rng(9);
    thread_pool pool(2);
    const auto in = random_array(dtype::i16, 40, 50, 2, rng);
    const auto table = sat::summed_area_table(in, dtype::i64, pool);
    std::vector<sat::rect> rects;
    for (int k = 0; k < 200; ++k) {
        const index_t t = static_cast<index_t>(rng() % 40), b = t + static_cast<index_t>(rng() % static_cast<std::uint64_t>(40 - t));
        const index_t l = static_cast<index_t>(rng() % 50), r = l + static_cast<index_t>(rng() % static_cast<std::uint64_t>(50 - l));
        rects.push_back({t, l, b, r});
    }
    rects.push_back({0, 0, 39, 49});
    sat::check_rects(rects, 40, 50, "rects");
    const auto words = sat::rect_sums(table, rects);
    for (std::size_t k = 0; k < rects.size(); ++k)
        for (int c = 0; c < 2; ++c) {
            std::int64_t direct = 0;
            for (index_t i = rects[k].top; i <= rects[k].bottom; ++i)
                for (index_t j = rects[k].left; j <= rects[k].right; ++j) direct += in.data<std::int16_t>()[(i * 50 + j) * 2 + c];
            CHECK(static_cast<std::int64_t>(words[k * 2 + static_cast<std::size_t>(c)]) == direct);
        }
    const std::vector<sat::rect> outside = {{0, 0, 1, 1}, {0, 0, 40, 3}};
    const std::vector<std::size_t> lines = {3, 7};
    const auto e = caught([&] { sat::check_rects(outside, 40, 50, "q.tsv", lines); });
    CHECK(e.code() == exit_code::bad_input);
    CHECK(std::string(e.what()).rfind("q.tsv:7: ", 0) == 0);
    CHECK(caught([&] { sat::check_rects(std::vector<sat::rect>{{5, 5, 4, 6}}, 40, 50, "q"); }).code() == exit_code::bad_input);
    CHECK(caught([&] { io::parse_rects("0 0 1\n", "q"); }).code() == exit_code::bad_input);
    CHECK(caught([&] { io::parse_rects("0 0 1 x\n", "q"); }).code() == exit_code::bad_input);
    const auto parsed = io::parse_rects("# top left bottom right\n\n1\t2\t3\t4\n 5 6  7 8\n", "q");
    REQUIRE(parsed.rects.size() == 2);
    CHECK(parsed.lines == std::vector<std::size_t>{3, 4});
    CHECK(parsed.rects[1].right == 8);
}

namespace {

// OpenCV's borderInterpolate for BORDER_REFLECT_101, written as OpenCV writes it.
index_t mirror(index_t p, index_t n) {
    if (n == 1) return 0;
    while (p < 0 || p >= n) p = p < 0 ? -p : 2 * (n - 1) - p;
    return p;
}

}  // namespace

TEST_CASE("box filter equals a direct window mean with BORDER_REFLECT_101", "[sat]") {
    std::mt19937_64 rng(3);
    thread_pool pool(2);
    for (const auto t : {dtype::u8, dtype::u16, dtype::f32})
        for (const auto& [h, w, l] : std::vector<std::tuple<index_t, index_t, index_t>>{{1, 1, 1}, {5, 4, 3}, {17, 23, 1}, {1, 9, 1}})
            for (const index_t R : {0, 1, 2, 7}) {
                INFO(sat::name_of(t) << " " << h << "x" << w << "x" << l << " R " << R);
                const auto in = random_array(t, h, w, l, rng);
                const auto out = sat::box_filter(in, R, pool);
                REQUIRE(out.type == t);
                std::size_t bad = 0;
                for (index_t i = 0; i < h; ++i)
                    for (index_t j = 0; j < w; ++j)
                        for (index_t c = 0; c < l; ++c) {
                            long double sum = 0;
                            for (index_t di = -R; di <= R; ++di)
                                for (index_t dj = -R; dj <= R; ++dj)
                                    sum += static_cast<long double>(in.value(static_cast<std::size_t>((mirror(i + di, h) * w + mirror(j + dj, w)) * l + c)));
                            const long double mean = sum / static_cast<long double>((2 * R + 1) * (2 * R + 1));
                            const auto k = static_cast<std::size_t>((i * w + j) * l + c);
                            if (t == dtype::f32) {
                                if (std::fabs(static_cast<long double>(out.value(k)) - mean) > 1e-5L) ++bad;
                            } else if (out.value(k) != static_cast<double>(std::llround(mean))) {
                                ++bad;
                            }
                        }
                CHECK(bad == 0);
            }
    CHECK(sat::reflect101(-1, 5) == 1);
    CHECK(sat::reflect101(5, 5) == 3);
    CHECK(sat::reflect101(-9, 5) == 1);
}

// ---- file formats -------------------------------------------------------------------------------------------------

TEST_CASE(".npy: every dtype round-trips, version 2.0 reads, Fortran order and foreign dtypes are refused", "[sat]") {
    temp_dir dir;
    std::mt19937_64 rng(1);
    for (const auto t : {dtype::u8, dtype::u16, dtype::u32, dtype::u64, dtype::i8, dtype::i16, dtype::i32, dtype::i64, dtype::f32, dtype::f64}) {
        const auto a = random_array(t, 3, 5, t == dtype::f32 ? 2 : 1, rng);
        io::write_npy(a, dir / "a.npy");
        const auto b = io::read_npy(dir / "a.npy");
        CHECK(b.type == t);
        CHECK(b.rows == 3);
        CHECK(b.cols == 5);
        CHECK(b.lanes == a.lanes);
        CHECK(std::memcmp(a.raw(), b.raw(), a.bytes()) == 0);
        const std::string bytes = slurp(dir / "a.npy");
        CHECK((bytes.size() - a.bytes()) % 64 == 0);  // header padded to 64 bytes
    }
    // A header written here, as NumPy writes version 2.0.
    const std::string dict = "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 2), }";
    std::string v2 = std::string("\x93NUMPY\x02\x00", 8);
    const std::uint32_t len = static_cast<std::uint32_t>(dict.size() + 1);
    v2.append(reinterpret_cast<const char*>(&len), 4);
    v2 += dict + "\n";
    const std::uint16_t px[4] = {1, 2, 3, 65535};
    v2.append(reinterpret_cast<const char*>(px), 8);
    const auto a2 = io::parse_npy(v2, "v2.npy");
    CHECK(a2.type == dtype::u16);
    CHECK(a2.data<std::uint16_t>()[3] == 65535);
    auto header = [](const std::string& d) {
        std::string h = std::string("\x93NUMPY\x01\x00", 8);
        const auto n = static_cast<std::uint16_t>(d.size() + 1);
        h.append(reinterpret_cast<const char*>(&n), 2);
        return h + d + "\n" + std::string(64, '\0');
    };
    CHECK(caught([&] { io::parse_npy(header("{'descr': '<u1', 'fortran_order': True, 'shape': (2, 2), }"), "f.npy"); }).code() == exit_code::bad_input);
    CHECK(caught([&] { io::parse_npy(header("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 2), }"), "c.npy"); }).code() == exit_code::bad_input);
    CHECK(caught([&] { io::parse_npy(header("{'descr': '<u1', 'fortran_order': False, 'shape': (0, 0), }"), "e.npy"); }).code() == exit_code::bad_input);
    CHECK(caught([&] { io::parse_npy(header("{'descr': '<f8', 'fortran_order': False, 'shape': (9, 9), }"), "t.npy"); }).code() == exit_code::bad_input);
    CHECK(caught([&] { io::parse_npy(header("{'descr': '<u1', 'fortran_order': False, 'shape': (2, 2, 2, 2), }"), "d.npy"); }).code() == exit_code::bad_input);
}

TEST_CASE(".npy: big-endian arrays ('>' and '!') read as the same values as little-endian ones, in every dtype", "[sat]") {
    std::mt19937_64 rng(77);
    const std::pair<dtype, const char*> kinds[] = {{dtype::u8, "u1"},  {dtype::i8, "i1"},  {dtype::u16, "u2"},
                                                   {dtype::i16, "i2"}, {dtype::u32, "u4"}, {dtype::i32, "i4"},
                                                   {dtype::u64, "u8"}, {dtype::i64, "i8"}, {dtype::f32, "f4"},
                                                   {dtype::f64, "f8"}};
    for (const auto& [t, code] : kinds) {
        for (const char* order : {">", "!"}) {
            INFO(order << code);
            const sat::array a = random_array(t, 3, 5, 2, rng);
            // The same values stored most significant byte first, as NumPy writes dtype('>' + code).
            std::string body(static_cast<const char*>(a.raw()), a.bytes());
            const std::size_t size = sat::size_of(t);
            for (std::size_t k = 0; k < body.size(); k += size) std::reverse(body.begin() + k, body.begin() + k + size);
            const std::string dict = std::string("{'descr': '") + order + code + "', 'fortran_order': False, 'shape': (3, 5, 2), }";
            std::string file = std::string("\x93NUMPY\x01\x00", 8);
            const auto n = static_cast<std::uint16_t>(dict.size() + 1);
            file.append(reinterpret_cast<const char*>(&n), 2);
            file += dict + "\n" + body;
            const auto b = io::parse_npy(file, "big.npy");
            CHECK(b.type == t);
            CHECK(b.rows == 3);
            CHECK(b.cols == 5);
            CHECK(b.lanes == 2);
            CHECK(std::memcmp(a.raw(), b.raw(), a.bytes()) == 0);
            temp_dir dir;
            put(dir / "big.npy", file);
            const auto c = io::read_npy(dir / "big.npy");
            CHECK(std::memcmp(a.raw(), c.raw(), a.bytes()) == 0);
        }
    }
}

TEST_CASE("PNG: 8/16-bit grey and colour round-trip, files made by libpng read, bad files are refused", "[sat]") {
    temp_dir dir;
    std::mt19937_64 rng(2);
    for (const auto t : {dtype::u8, dtype::u16})
        for (const index_t l : {1, 2, 3, 4}) {
            const auto a = random_array(t, 7, 9, l, rng);
            io::write_png(a, dir / "a.png");
            const auto b = io::read_array(dir / "a.png");
            CHECK(b.type == t);
            CHECK(b.lanes == l);
            CHECK(std::memcmp(a.raw(), b.raw(), a.bytes()) == 0);
        }
    // Made by libpng's simplified writer: RGB 8-bit and 16-bit linear grey.
    std::vector<std::uint8_t> rgb(3 * 4 * 2);
    for (std::size_t k = 0; k < rgb.size(); ++k) rgb[k] = static_cast<std::uint8_t>(k * 9);
    make_png(dir / "rgb.png", rgb, 4, 2, PNG_FORMAT_RGB);
    const auto c = io::read_array(dir / "rgb.png");
    CHECK(c.type == dtype::u8);
    CHECK(c.lanes == 3);
    CHECK(std::memcmp(c.raw(), rgb.data(), rgb.size()) == 0);
    // Written by io::write_png, read by libpng's simplified reader.
    const auto g = random_array(dtype::u8, 5, 6, 1, rng);
    io::write_png(g, dir / "g.png");
    png_image img;
    std::memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    REQUIRE(png_image_begin_read_from_file(&img, (dir / "g.png").c_str()) != 0);
    img.format = PNG_FORMAT_GRAY;
    std::vector<std::uint8_t> back(PNG_IMAGE_SIZE(img));
    REQUIRE(png_image_finish_read(&img, nullptr, back.data(), 0, nullptr) != 0);
    CHECK(std::memcmp(back.data(), g.raw(), back.size()) == 0);
    // Truncated: half the file.
    const std::string full = slurp(dir / "a.png");
    put(dir / "cut.png", full.substr(0, full.size() / 2));
    const auto e = caught([&] { io::read_array(dir / "cut.png"); });
    CHECK(e.code() == exit_code::bad_input);
    CHECK(std::string(e.what()).find("cut.png") != std::string::npos);
    CHECK(caught([&] { io::write_png(random_array(dtype::f32, 2, 2, 1, rng), dir / "f.png"); }).code() == exit_code::bad_command_line);
}

TEST_CASE("TIFF: 8/16-bit and float32 round-trip, files made by libtiff read, unsupported depths are refused", "[sat]") {
    temp_dir dir;
    std::mt19937_64 rng(3);
    for (const auto t : {dtype::u8, dtype::u16, dtype::f32})
        for (const index_t l : {1, 3}) {
            const auto a = random_array(t, 6, 11, l, rng);
            io::write_tiff(a, dir / "a.tif");
            const auto b = io::read_array(dir / "a.tif");
            CHECK(b.type == t);
            CHECK(b.lanes == l);
            CHECK(std::memcmp(a.raw(), b.raw(), a.bytes()) == 0);
        }
    std::vector<std::uint16_t> px(5 * 3);
    for (std::size_t k = 0; k < px.size(); ++k) px[k] = static_cast<std::uint16_t>(k * 4000);
    make_tiff(dir / "m.tif", px.data(), 5, 3, 1, 16, SAMPLEFORMAT_UINT);
    const auto m = io::read_array(dir / "m.tif");
    CHECK(m.type == dtype::u16);
    CHECK(std::memcmp(m.raw(), px.data(), px.size() * 2) == 0);
    std::vector<std::uint8_t> nib(4, 0x5a);
    make_tiff(dir / "n.tif", nib.data(), 4, 2, 1, 4, SAMPLEFORMAT_UINT);
    const auto e = caught([&] { io::read_array(dir / "n.tif"); });
    CHECK(e.code() == exit_code::bad_input);
    CHECK(std::string(e.what()).find("bit depth 4") != std::string::npos);
}

TEST_CASE("PGM/PPM: P5 8/16-bit and P6 read, empty and truncated ones are refused", "[sat]") {
    const auto g = io::parse_pnm(std::string("P5\n# c\n3 2\n255\n") + std::string("\x01\x02\x03\x04\x05\xff", 6), "g.pgm");
    CHECK(g.type == dtype::u8);
    CHECK(g.rows == 2);
    CHECK(g.cols == 3);
    CHECK(g.data<std::uint8_t>()[5] == 255);
    const auto w = io::parse_pnm(std::string("P5 2 1 65535\n") + std::string("\x01\x02\xff\xfe", 4), "w.pgm");
    CHECK(w.type == dtype::u16);
    CHECK(w.data<std::uint16_t>()[0] == 0x0102);
    CHECK(w.data<std::uint16_t>()[1] == 0xfffe);
    const auto c = io::parse_pnm(std::string("P6\n1 1\n255\n") + "abc", "c.ppm");
    CHECK(c.lanes == 3);
    CHECK(caught([&] { io::parse_pnm("P5\n0 0\n255\n", "z.pgm"); }).code() == exit_code::bad_input);
    CHECK(caught([&] { io::parse_pnm("P5\n4 4\n255\n\x01\x02", "t.pgm"); }).code() == exit_code::bad_input);
    CHECK(caught([&] { io::parse_pnm("P5\n4 4\n70000\n", "m.pgm"); }).code() == exit_code::bad_input);
    temp_dir dir;
    put(dir / "x.bin", "hello");
    CHECK(caught([&] { io::read_array(dir / "x.bin"); }).code() == exit_code::bad_input);
    CHECK(caught([&] { io::read_array(dir / "missing.png"); }).code() == exit_code::bad_input);
}

// ---- the commands -------------------------------------------------------------------------------------------------

TEST_CASE("swgpu sat and ihist: tables, queries, box filter, exact interface", "[sat][cli]") {
    temp_dir dir;
    std::mt19937_64 rng(11);
    const auto img = random_array(dtype::u8, 37, 41, 1, rng);
    io::write_png(img, dir / "img.png");
    auto r = run_swgpu("sat " + (dir / "img.png") + " -o " + (dir / "t.npy") + " --backend cpu");
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    const auto t = io::read_npy(dir / "t.npy");
    CHECK(t.type == dtype::u64);
    CHECK(slurp(dir / "t.npy").find("'descr': '<u8', 'fortran_order': False, 'shape': (37, 41), }") != std::string::npos);
    CHECK(values_of<std::uint64_t>(t) == reference_table<std::uint64_t>(img));

    r = run_swgpu("sat " + (dir / "img.png") + " -o " + (dir / "f.npy") + " --type float32 --backend cpu");
    REQUIRE(r.code == 0);
    CHECK(io::read_npy(dir / "f.npy").type == dtype::f32);

    put(dir / "q.tsv", "# rects\n0\t0\t36\t40\n2 3 2 3\n");
    r = run_swgpu("sat " + (dir / "img.png") + " --query " + (dir / "q.tsv") + " --backend cpu");
    REQUIRE(r.code == 0);
    std::uint64_t total = 0;
    for (std::size_t k = 0; k < img.elements(); ++k) total += img.data<std::uint8_t>()[k];
    const unsigned px = img.data<std::uint8_t>()[2 * 41 + 3];
    std::istringstream lines(r.out);
    std::string l1, l2;
    std::getline(lines, l1);
    std::getline(lines, l2);
    CHECK(l1.rfind("0\t0\t36\t40\t1517\t" + std::to_string(total) + "\t", 0) == 0);
    CHECK(l2 == "2\t3\t2\t3\t1\t" + std::to_string(px) + "\t" + std::to_string(px));

    r = run_swgpu("sat " + (dir / "img.png") + " --box-filter 2 -o " + (dir / "box.png") + " --backend cpu");
    REQUIRE(r.code == 0);
    thread_pool pool(1);
    const auto box = io::read_array(dir / "box.png");
    CHECK(std::memcmp(box.raw(), sat::box_filter(img, 2, pool).raw(), box.bytes()) == 0);

    r = run_swgpu("ihist " + (dir / "img.png") + " --bins 32 -o " + (dir / "h.npy") + " --backend cpu");
    REQUIRE(r.code == 0);
    const auto h = io::read_npy(dir / "h.npy");
    CHECK(h.type == dtype::u32);
    CHECK(h.lanes == 32);
    CHECK(slurp(dir / "h.npy").find("'shape': (37, 41, 32)") != std::string::npos);
    CHECK(h.data<std::uint32_t>()[(36 * 41 + 40) * 32 + img.data<std::uint8_t>()[0] / 8] >= 1);
    r = run_swgpu("ihist " + (dir / "img.png") + " --bins 4 --query " + (dir / "q.tsv") + " --backend cpu");
    REQUIRE(r.code == 0);
    std::istringstream hl(r.out);
    std::getline(hl, l1);
    std::getline(hl, l2);
    unsigned counts[4] = {};
    for (std::size_t k = 0; k < img.elements(); ++k) ++counts[img.data<std::uint8_t>()[k] * 4 / 256];
    CHECK(l1 == "0\t0\t36\t40\t" + std::to_string(counts[0]) + "\t" + std::to_string(counts[1]) + "\t" +
                    std::to_string(counts[2]) + "\t" + std::to_string(counts[3]));
    r = run_swgpu("ihist " + (dir / "img.png") + " --edges 0,128,256 --query " + (dir / "q.tsv") + " --backend cpu");
    REQUIRE(r.code == 0);
    CHECK(r.out.rfind("0\t0\t36\t40\t" + std::to_string(counts[0] + counts[1]) + "\t" + std::to_string(counts[2] + counts[3]) + "\n", 0) == 0);
}

TEST_CASE("swgpu sat and ihist: bad inputs give one error line, the documented exit code and no output file", "[sat][cli]") {
    temp_dir dir;
    std::mt19937_64 rng(12);
    io::write_png(random_array(dtype::u8, 20, 20, 1, rng), dir / "ok.png");
    const std::string full = slurp(dir / "ok.png");
    put(dir / "cut.png", full.substr(0, full.size() - 30));
    put(dir / "empty.pgm", "P5\n0 0\n255\n");
    std::string fortran = std::string("\x93NUMPY\x01\x00", 8);
    const std::string d = "{'descr': '<u1', 'fortran_order': True, 'shape': (2, 2), }";
    const auto n = static_cast<std::uint16_t>(d.size() + 1);
    fortran.append(reinterpret_cast<const char*>(&n), 2);
    put(dir / "fortran.npy", fortran + d + "\n" + "abcd");
    std::string foreign = std::string("\x93NUMPY\x01\x00", 8);
    const std::string d2 = "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 2), }";
    const auto n2 = static_cast<std::uint16_t>(d2.size() + 1);
    foreign.append(reinterpret_cast<const char*>(&n2), 2);
    put(dir / "foreign.npy", foreign + d2 + "\n" + std::string(64, 'x'));
    std::vector<std::uint8_t> nib(4, 0x5a);
    make_tiff(dir / "nibble.tif", nib.data(), 4, 2, 1, 4, SAMPLEFORMAT_UINT);
    std::vector<std::uint8_t> bits(2, 0xa5);  // 1 bit a pixel, 8 x 2
    make_tiff(dir / "bilevel.tif", bits.data(), 8, 2, 1, 1, SAMPLEFORMAT_UINT);
    // An object .npy, as numpy.save writes it ('|O' holds pickled objects).
    const auto npy = [&](const std::string& name, const std::string& dict, const std::string& body) {
        std::string b = std::string("\x93NUMPY\x01\x00", 8);
        const auto len = static_cast<std::uint16_t>(dict.size() + 1);
        b.append(reinterpret_cast<const char*>(&len), 2);
        put(dir / name, b + dict + "\n" + body);
    };
    npy("object.npy", "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", std::string(40, 'p'));
    put(dir / "out.tsv", "0 0 25 3\n");
    struct bad_case {
        std::string args;
        int code;
        std::string says = "";
    };
    const std::vector<bad_case> cases = {
        {"sat " + (dir / "cut.png") + " -o " + (dir / "o.npy"), 1},
        {"sat " + (dir / "empty.pgm") + " -o " + (dir / "o.npy"), 1},
        {"sat " + (dir / "fortran.npy") + " -o " + (dir / "o.npy"), 1},
        {"sat " + (dir / "foreign.npy") + " -o " + (dir / "o.npy"), 1},
        {"sat " + (dir / "nibble.tif") + " -o " + (dir / "o.npy"), 1},
        {"sat " + (dir / "bilevel.tif") + " -o " + (dir / "o.npy"), 1, "bit depth 1"},
        {"ihist " + (dir / "bilevel.tif") + " --bins 2 -o " + (dir / "o.npy"), 1, "bit depth 1"},
        {"sat " + (dir / "object.npy") + " -o " + (dir / "o.npy"), 1, "unsupported .npy dtype '|O'"},
        {"ihist " + (dir / "object.npy") + " --bins 4 -o " + (dir / "o.npy"), 1, "unsupported .npy dtype '|O'"},
        {"sat " + (dir / "ok.png") + " -o " + (dir / "o.npy") + " --query " + (dir / "out.tsv") + " --query-out " + (dir / "o.tsv"), 1},
        {"sat " + (dir / "missing.png") + " -o " + (dir / "o.npy"), 1},
        {"sat " + (dir / "ok.png") + " -o " + (dir / "o.png"), 2},
        {"sat " + (dir / "ok.png") + " -o " + (dir / "o.npy") + " --type int8", 2},
        {"sat " + (dir / "ok.png"), 2},
        {"ihist " + (dir / "ok.png") + " -o " + (dir / "o.npy"), 2},
        {"ihist " + (dir / "ok.png") + " --bins 4 --edges 0,1,2 -o " + (dir / "o.npy"), 2},
        {"ihist " + (dir / "cut.png") + " --bins 4 -o " + (dir / "o.npy"), 1},
        {"ihist " + (dir / "ok.png") + " --bins 4 --query " + (dir / "out.tsv") + " --query-out " + (dir / "o.tsv"), 1},
        {"sat " + (dir / "ok.png") + " -o " + (dir / "no-such-dir/o.npy"), 5},
    };
    const std::size_t files_before = dir.count();
    for (const auto& c : cases) {
        INFO(c.args);
        const auto r = run_swgpu(c.args + " --backend cpu");
        CHECK(r.code == c.code);
        CHECK(one_error_line(r.err));
        if (!c.says.empty()) CHECK_THAT(r.err, Catch::Contains(c.says));
        CHECK(dir.count() == files_before);  // no output, no temporary file
    }
}

TEST_CASE("swgpu sat --box-filter to .npy: the filter's rows go into the file as computed, the same bytes, atomically",
          "[sat][box][cli]") {
    temp_dir dir;
    std::mt19937_64 rng(41);
    thread_pool pool(2);
    for (const auto t : {dtype::u8, dtype::u16, dtype::f32, dtype::f64}) {
        sat::array img = random_array(t, 203, 517, t == dtype::u8 ? 3 : 1, rng);
        io::write_npy(img, dir / "in.npy");
        put(dir / "box.npy", "an earlier file");
        for (const char* threads : {"1", "3"}) {
            INFO(sat::name_of(t) << " -t " << threads);
            const auto r = run_swgpu("sat " + (dir / "in.npy") + " --box-filter 4 -o " + (dir / "box.npy") +
                                     " --backend cpu -t " + threads);
            REQUIRE(r.code == 0);
            sat::array want = sat::box_filter(img, 4, pool);
            io::write_npy(want, dir / "want.npy");
            CHECK(slurp(dir / "box.npy") == slurp(dir / "want.npy"));
            CHECK(dir.count() == 3);  // in, box, want: no temporary file
        }
    }
    // An unwritable destination: exit 5, nothing written, an earlier file of that name untouched.
    std::filesystem::create_directory(dir / "ro");
    put(dir / "ro/box.npy", "an earlier file");
    std::filesystem::permissions(dir / "ro", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    if (::access((dir / "ro").c_str(), W_OK) != 0) {  // (root may write anyway)
        const auto r = run_swgpu("sat " + (dir / "in.npy") + " --box-filter 2 -o " + (dir / "ro/box.npy") + " --backend cpu");
        CHECK(r.code == 5);
        CHECK(one_error_line(r.err));
        CHECK(slurp(dir / "ro/box.npy") == "an earlier file");
    }
    std::filesystem::permissions(dir / "ro", std::filesystem::perms::owner_all);
}

// ---- non-finite values and memory ---------------------------------------------------------------------------------

TEST_CASE("check_finite counts NaN and infinities and names the first one's position", "[sat]") {
    sat::array f(dtype::f32, 4, 5, 1);
    CHECK_NOTHROW(sat::check_finite(f, "f"));
    f.data<float>()[2 * 5 + 3] = NAN;
    f.data<float>()[3 * 5 + 4] = INFINITY;
    const auto e = caught([&] { sat::check_finite(f, "f.tif"); });
    CHECK(e.code() == exit_code::bad_input);
    CHECK(std::string(e.what()) ==
          "f.tif: holds 2 values that are not finite (NaN or infinity), the first (nan) at row 2, column 3; replace "
          "them with finite values");
    sat::array c(dtype::f64, 2, 3, 3);
    c.data<double>()[(1 * 3 + 2) * 3 + 1] = -INFINITY;
    CHECK(std::string(caught([&] { sat::check_finite(c, "c"); }).what()).find("1 value that is not finite (NaN or infinity), the first (-inf) at row 1, column 2, channel 1") != std::string::npos);
    sat::array v(dtype::f64, 1, 9, 1);
    v.data<double>()[6] = NAN;
    CHECK(std::string(caught([&] { sat::check_finite(v, "v"); }).what()).find("at index 6") != std::string::npos);
    // Every element position is scanned, the last one too, and integers pass without a look.
    sat::array big(dtype::f64, 37, 41, 1);
    big.data<double>()[big.elements() - 1] = INFINITY;
    CHECK(std::string(caught([&] { sat::check_finite(big, "b"); }).what()).find("(inf) at row 36, column 40") != std::string::npos);
    CHECK_NOTHROW(sat::check_finite(sat::array(dtype::u16, 3, 3, 1), "u"));
}

TEST_CASE("swgpu sat and ihist refuse NaN and infinite inputs: one line naming the file, the first and the count", "[sat][cli]") {
    temp_dir dir;
    // A 512 x 512 float32 TIFF with one NaN at (3, 7) and one +Inf at (100, 200): once 253,009 box-filter outputs
    // and rectangle sums away from both printed nan.
    std::vector<float> px(512 * 512, 0.25f);
    px[3 * 512 + 7] = NAN;
    px[100 * 512 + 200] = INFINITY;
    make_tiff(dir / "bad.tif", px.data(), 512, 512, 1, 32, SAMPLEFORMAT_IEEEFP);
    sat::array npy(dtype::f64, 6, 8, 1);
    npy.data<double>()[5 * 8 + 2] = INFINITY;
    io::write_npy(npy, dir / "inf.npy");
    put(dir / "q.tsv", "0 0 1 1\n");
    const std::vector<std::string> bad_tif = {
        "sat " + (dir / "bad.tif") + " -o " + (dir / "o.npy"),
        "sat " + (dir / "bad.tif") + " --box-filter 3 -o " + (dir / "o.tif"),
        "sat " + (dir / "bad.tif") + " --query " + (dir / "q.tsv") + " --query-out " + (dir / "o.tsv"),
        "ihist " + (dir / "bad.tif") + " --bins 8 -o " + (dir / "o.npy"),
        "ihist " + (dir / "bad.tif") + " --edges 0,0.5,1 --query " + (dir / "q.tsv") + " --query-out " + (dir / "o.tsv"),
    };
    const std::size_t files_before = dir.count();
    for (const auto& args : bad_tif) {
        INFO(args);
        const auto r = run_swgpu(args + " --backend cpu");
        CHECK(r.code == 1);
        CHECK(one_error_line(r.err));
        CHECK(r.err.find(dir / "bad.tif") != std::string::npos);
        CHECK(r.err.find("holds 2 values that are not finite (NaN or infinity), the first (nan) at row 3, column 7") !=
              std::string::npos);
        CHECK(dir.count() == files_before);
    }
    const auto r = run_swgpu("ihist " + (dir / "inf.npy") + " --bins 4 -o " + (dir / "o.npy") + " --backend cpu");
    CHECK(r.code == 1);
    CHECK(one_error_line(r.err));
    CHECK(r.err.find("holds 1 value that is not finite (NaN or infinity), the first (inf) at row 5, column 2") != std::string::npos);
    CHECK(r.err.find("--edges") != std::string::npos);
    CHECK(run_swgpu("sat " + (dir / "inf.npy") + " -o " + (dir / "o.npy") + " --backend cpu").code == 1);
    CHECK(dir.count() == files_before);
}

TEST_CASE("swgpu sat and ihist refuse, before allocating, what would not fit the memory available", "[sat][cli]") {
    temp_dir dir;
    std::mt19937_64 rng(13);
    io::write_png(random_array(dtype::u8, 5, 5, 1, rng), dir / "small.png");
    io::write_npy(random_array(dtype::f32, 5, 5, 1, rng), dir / "small.npy");
    const std::size_t files_before = dir.count();
    const std::string small_memory = "SWGPU_TUNE=host.memory_mib=1024";
    // --box-filter keeps the output and, per thread, rows of window sums: a radius of 20000 on a 5 x 5 image takes
    // rows of 40010 sums (a table of the padded image would have been 40005 x 40005, 25.6 GB), so it runs in 1 GiB.
    auto r = testing::run_program("sat " + (dir / "small.png") + " --box-filter 20000 -o " + (dir / "o.png") + " --backend cpu", small_memory);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    fs::remove(dir / "o.png");
    // An output larger than the memory allowed is refused before it is allocated.
    io::write_npy(random_array(dtype::f32, 600, 500, 1, rng), dir / "f.npy");  // 1.2 MB out
    r = testing::run_program("sat " + (dir / "f.npy") + " --box-filter 3 -o " + (dir / "o.npy") + " --backend cpu -t 2",
                             "SWGPU_TUNE=host.memory_mib=1");
    CHECK(r.code == 4);
    CHECK(one_error_line(r.err));
    CHECK(r.err.find("--box-filter 3 of a 600 x 500 float32 image takes its output and, per thread, rows of 506 window "
                     "sums (1.23 MB); the memory allowed (host.memory_mib) is 1.05 MB: use a smaller image or radius") !=
          std::string::npos);
    // 5 x 5 pixels with 65535 bins fit; a limit of 1 MiB does not hold the histogram of a 300 x 300 image in 65535.
    io::write_png(random_array(dtype::u8, 300, 300, 1, rng), dir / "mid.png");
    r = testing::run_program("ihist " + (dir / "mid.png") + " --bins 65535 -o " + (dir / "o.npy") + " --backend cpu",
                             "SWGPU_TUNE=host.memory_mib=1");
    CHECK(r.code == 4);
    CHECK(one_error_line(r.err));
    CHECK(r.err.find("use fewer --bins or a smaller image") != std::string::npos);
    r = testing::run_program("sat " + (dir / "mid.png") + " -o " + (dir / "o.npy") + " --backend cpu", "SWGPU_TUNE=host.memory_mib=1");
    CHECK(r.code == 0);  // 300 x 300 x 8 bytes: 0.72 MB
    CHECK(dir.count() == files_before + 3);  // f.npy, mid.png and o.npy; no temporary file of the refused runs
    fs::remove(dir / "o.npy");
    r = testing::run_program("sat " + (dir / "small.png") + " --box-filter 2 -o " + (dir / "o.png") + " --backend cpu", small_memory);
    CHECK(r.code == 0);
}

TEST_CASE("an image header announcing more pixels than the memory holds is refused before decoding", "[sat]") {
    temp_dir dir;
    // A TIFF whose header says 100000 x 100000 grey pixels (10 GB decoded), with one row of data.
    REQUIRE(write_lying_tiff(dir / "huge.tif"));
    const tuning::scoped_override small("host.memory_mib=64");
    const auto e = caught([&] { io::read_array(dir / "huge.tif"); });
    CHECK(e.code() == exit_code::out_of_memory);
    CHECK(std::string(e.what()).find("huge.tif: the header announces a 100000 x 100000 image of 1 channel (8-bit), "
                                     "decoded (10.0 GB); the memory allowed (host.memory_mib) is 67.1 MB: use a "
                                     "smaller image") != std::string::npos);
}

TEST_CASE("float tables are the same bytes whatever the thread count", "[sat][threads]") {
    // With bands of rows per thread (4ca0f02) a 1500 x 1700 float64 table differed between -t 1 and -t 2 in 1.1 M
    // entries from row 750 on; the order of additions is now fixed. Every thread count gives the bytes one thread gives.
    std::mt19937_64 rng(17);
    for (const auto t : {sat::dtype::f64, sat::dtype::f32}) {
        const sat::array in = testing::random_array(t, 1500, 1700, 1, rng, 1000);
        const sat::dtype table = sat::table_type(t, sat::precision::automatic);
        thread_pool one(1);
        const sat::array base = sat::summed_area_table(in, table, one);
        for (const unsigned threads : {2u, 3u, 7u, 16u}) {
            INFO(threads << " threads, " << sat::name_of(t));
            thread_pool pool(threads);
            const sat::array got = sat::summed_area_table(in, table, pool);
            CHECK(std::memcmp(got.data<std::uint8_t>(), base.data<std::uint8_t>(), base.bytes()) == 0);
        }
    }
}
