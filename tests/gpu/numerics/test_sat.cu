// GPU summed-area tables and integral histograms (gpu/numerics/sat.hpp) against the CPU backend (core/numerics/sat.hpp, itself tested
// against the textbook recurrence in tests/numerics/test_sat.cpp): integer tables byte-identical for every schedule, on the
// sizes where tiles begin and end; floating tables byte-identical through the default (ordered) schedule and within
// the stated error bound through the others; queries answered on the device equal the CPU's.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/numerics/sat.hpp"
#include "tests/numerics/sat_arrays.hpp"
#include "core/thread_pool.hpp"
#include "gpu/numerics/sat.hpp"
#include "tests/gpu/harness.hpp"

namespace {

using namespace swgpu;
using sat::dtype;

sat::array random_image(dtype t, index_t h, index_t w, index_t l, std::mt19937_64& rng) {
    return testing::random_array(t, h, w, l, rng, 1);
}

bool same_bytes(const sat::array& a, const sat::array& b) {
    return a.type == b.type && a.rows == b.rows && a.cols == b.cols && a.lanes == b.lanes &&
           std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
}

// |gpu - cpu| <= 2 (i + j + 2 + 64) u Σ|I|: both are within the bound of the exact table.
std::size_t float_mismatches(const sat::array& g, const sat::array& c, const sat::array& in) {
    double total = 0;
    for (std::size_t k = 0; k < in.elements(); ++k) total += std::fabs(in.value(k));
    const double u = g.type == dtype::f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53);
    std::size_t bad = 0;
    for (index_t i = 0; i < in.rows; ++i)
        for (index_t j = 0; j < in.cols; ++j)
            for (index_t l = 0; l < in.lanes; ++l) {
                const auto k = static_cast<std::size_t>((i * in.cols + j) * in.lanes + l);
                if (std::fabs(g.value(k) - c.value(k)) > 2.0 * static_cast<double>(i + j + 66) * u * total + 1e-300) ++bad;
            }
    return bad;
}

const std::vector<std::pair<index_t, index_t>> sizes = {{1, 1},   {1, 1000}, {1000, 1},  {15, 255}, {16, 256}, {17, 257},
                                                         {31, 255}, {32, 256}, {33, 257}, {100, 3001}, {127, 511},
                                                         {128, 512}, {129, 513}, {257, 1025}, {4097, 3001}};
const gpu::table_schedule schedules[] = {gpu::table_schedule::tiled_p2p, gpu::table_schedule::strips, gpu::table_schedule::row_sync,
                                         gpu::table_schedule::ordered};

// The strips take one-channel tables and histograms of up to 32 bins; the tiles up to 32 lanes.
bool applies(gpu::table_schedule s, index_t lanes, bool histogram) {
    if (s == gpu::table_schedule::ordered) return !histogram;
    if (s == gpu::table_schedule::strips) return histogram ? lanes <= 32 : lanes == 1;
    if (s == gpu::table_schedule::tiled_p2p) return lanes <= 32;
    return true;
}

}  // namespace

GPU_TEST("[sat] integer tables: every schedule equals the CPU byte for byte") {
    std::mt19937_64 rng(14);
    thread_pool pool;
    for (const auto t : {dtype::u8, dtype::u16, dtype::u32, dtype::u64, dtype::i16, dtype::i64})
        for (const auto& [h, w] : sizes)
            for (const index_t lanes : {index_t(1), index_t(3), index_t(32)}) {
                if (h * w * lanes > (index_t(1) << 22) && !(t == dtype::u8 && lanes == 1)) continue;
                const auto in = random_image(t, h, w, lanes, rng);
                const dtype table = sat::table_type(t, sat::precision::automatic);
                const auto cpu = sat::summed_area_table(in, table, pool);
                for (const auto s : schedules) {
                    if (!applies(s, lanes, false)) continue;
                    gpu::table_report rep;
                    const auto g = gpu::summed_area_table(in, table, s, &rep);
                    if (!same_bytes(g, cpu))
                        ::swgpu::gputest::report(__FILE__, __LINE__, std::string(sat::name_of(t)) + " " + std::to_string(h) + "x" + std::to_string(w) + "x" +
                                                       std::to_string(lanes) + " " + gpu::table_schedule_name(rep.used) + " differs from the CPU");
                }
            }
}

GPU_TEST("[sat] floating tables: the default (ordered) equals the CPU byte for byte, the others are within the bound") {
    std::mt19937_64 rng(15);
    thread_pool pool;
    for (const auto t : {dtype::u8, dtype::f32, dtype::f64})
        for (const dtype table : {dtype::f32, dtype::f64})
            for (const auto& [h, w] : sizes) {
                if (h * w > (index_t(1) << 22)) continue;
                for (const index_t lanes : {index_t(1), index_t(3)}) {
                    const auto in = random_image(t, h, w, lanes, rng);
                    const auto cpu = sat::summed_area_table(in, table, pool);
                    const std::string what = std::string(sat::name_of(t)) + "->" + sat::name_of(table) + " " + std::to_string(h) +
                                             "x" + std::to_string(w) + "x" + std::to_string(lanes);
                    gpu::table_report rep;
                    if (!same_bytes(gpu::summed_area_table(in, table, gpu::table_schedule::hybrid, &rep), cpu) ||
                        rep.used != gpu::table_schedule::ordered)
                        ::swgpu::gputest::report(__FILE__, __LINE__, what + ": the default schedule differs from the CPU");
                    for (const auto s : schedules) {
                        if (!applies(s, lanes, false) || s == gpu::table_schedule::ordered) continue;
                        const auto g = gpu::summed_area_table(in, table, s);
                        const auto bad = float_mismatches(g, cpu, in);
                        if (bad)
                            ::swgpu::gputest::report(__FILE__, __LINE__, std::string(sat::name_of(t)) + "->" + sat::name_of(table) + " " + std::to_string(h) + "x" +
                                                           std::to_string(w) + "x" + std::to_string(lanes) + ": " + std::to_string(bad) + " cells off");
                    }
                }
            }
}

GPU_TEST("[sat] all-255 16384 x 16384 table past 2^32 equals the closed form") {
    const index_t n = 16384;
    sat::array white(dtype::u8, n, n, 1);
    std::memset(white.raw(), 255, white.bytes());
    const auto g = gpu::summed_area_table(white, dtype::u64);
    const auto* s = g.data<std::uint64_t>();
    std::size_t bad = 0;
    for (index_t i = 0; i < n; i += 97)
        for (index_t j = 0; j < n; j += 89)
            if (s[i * n + j] != 255ull * static_cast<std::uint64_t>((i + 1) * (j + 1))) ++bad;
    CHECK_EQ(bad, std::size_t(0));
    CHECK_EQ(s[n * n - 1], 255ull * static_cast<std::uint64_t>(n * n));
}

GPU_TEST("[sat] integral histograms: every schedule equals the CPU") {
    std::mt19937_64 rng(16);
    thread_pool pool;
    for (const auto& [h, w] : sizes) {
        if (h * w > (index_t(1) << 20)) continue;
        const auto in = random_image(dtype::u8, h, w, 1, rng);
        for (const int bins : {1, 3, 32, 33, 256}) {
            const auto bin = sat::bin_indices(in, {bins, {}});
            const auto cpu = sat::integral_histogram(bin, h, w, bins, pool);
            for (const auto s : schedules) {
                if (!applies(s, bins, true)) continue;
                gpu::table_report rep;
                const auto g = gpu::integral_histogram(bin, h, w, bins, s, &rep);
                if (!same_bytes(g, cpu))
                    ::swgpu::gputest::report(__FILE__, __LINE__, std::to_string(h) + "x" + std::to_string(w) + " bins " + std::to_string(bins) + " " +
                                                   gpu::table_schedule_name(rep.used) + " differs from the CPU");
            }
            const auto hybrid = gpu::integral_histogram(bin, h, w, bins);
            CHECK(same_bytes(hybrid, cpu));
        }
    }
    // Values outside explicit edges are in no bin.
    const auto in = random_image(dtype::u8, 300, 200, 1, rng);
    const auto bin = sat::bin_indices(in, {4, {10, 50, 100, 150, 200}});
    CHECK(same_bytes(gpu::integral_histogram(bin, 300, 200, 4), sat::integral_histogram(bin, 300, 200, 4, pool)));
}

GPU_TEST("[sat] a schedule asked for where it does not apply is a usage error") {
    std::mt19937_64 rng(18);
    const auto colour = random_image(dtype::u8, 20, 30, 3, rng);
    bool refused = false;
    try {
        (void)gpu::summed_area_table(colour, dtype::u64, gpu::table_schedule::strips);
    } catch (const error& e) {
        refused = e.code() == exit_code::bad_command_line;
    }
    CHECK(refused);
    const auto grey = random_image(dtype::u8, 20, 30, 1, rng);
    const auto bin = sat::bin_indices(grey, {40, {}});
    refused = false;
    try {
        (void)gpu::integral_histogram(bin, 20, 30, 40, gpu::table_schedule::strips);
    } catch (const error& e) {
        refused = e.code() == exit_code::bad_command_line;
    }
    CHECK(refused);
}

GPU_TEST("[sat] rectangle queries on the device equal the CPU's") {
    std::mt19937_64 rng(17);
    thread_pool pool;
    const index_t h = 513, w = 771;
    std::vector<sat::rect> rects;
    for (int k = 0; k < 5000; ++k) {
        const index_t t = static_cast<index_t>(rng() % h), b = t + static_cast<index_t>(rng() % static_cast<std::uint64_t>(h - t));
        const index_t l = static_cast<index_t>(rng() % w), r = l + static_cast<index_t>(rng() % static_cast<std::uint64_t>(w - l));
        rects.push_back({t, l, b, r});
    }
    for (const auto t : {dtype::u8, dtype::i16, dtype::f32}) {
        const auto in = random_image(t, h, w, 3, rng);
        const dtype table = sat::table_type(t, sat::precision::automatic);
        const auto cpu = sat::rect_sums(sat::summed_area_table(in, table, pool), rects);
        const auto g = gpu::summed_area_queries(in, table, rects);
        if (sat::is_float(table)) {
            std::size_t bad = 0;
            for (std::size_t k = 0; k < cpu.size(); ++k) {
                double a, b;
                std::memcpy(&a, &cpu[k], 8);
                std::memcpy(&b, &g[k], 8);
                if (std::fabs(a - b) > 1e-6 * (1 + std::fabs(a))) ++bad;
            }
            CHECK_EQ(bad, std::size_t(0));
        } else {
            CHECK(g == cpu);
        }
    }
    const auto in = random_image(dtype::u8, h, w, 1, rng);
    const auto bin = sat::bin_indices(in, {32, {}});
    CHECK(gpu::integral_histogram_queries(bin, h, w, 32, rects) ==
          sat::rect_counts(sat::integral_histogram(bin, h, w, 32, pool), rects));
}
