// The 3-D sweeps (core/numerics/sweep3d.hpp): the tiled CPU executor gives the bits of a textbook triple loop written here, for
// odd sizes, tile edges and both precisions; the fmod pair is refused by the compensation schedules at compile time;
// the diamond-difference sweep equals a plain sweep written here; `swgpu sweep3d` writes the grid and refuses bad input.
#include <catch2/catch.hpp>


#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/engine/executors.hpp"
#include "core/engine/operator_pair.hpp"
#include "core/numerics/sweep3d.hpp"
#include "core/thread_pool.hpp"
#include "core/engine/wavefront.hpp"
#include "io/arrays/npy.hpp"
#include "tests/cli_support.hpp"

namespace {

using namespace swgpu;
using sweep3d::index_t;

// The recurrence as the issue states it, in the most direct form.
template <class T>
std::vector<T> textbook_fmod(index_t n, int loops, T c) {
    std::vector<T> a(static_cast<std::size_t>(n * n * n));
    auto at = [&](index_t i, index_t j, index_t k) -> T& { return a[static_cast<std::size_t>((i * n + j) * n + k)]; };
    for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < n; ++j)
            for (index_t k = 0; k < n; ++k) {
                T r = T((i + 2 * j + 3 * k) % 10) / T(10);
                for (int l = 0; l < loops; ++l) {
                    T s = r;
                    s = s + (i > 0 ? at(i - 1, j, k) : T(0));
                    s = s + (j > 0 ? at(i, j - 1, k) : T(0));
                    s = s + (k > 0 ? at(i, j, k - 1) : T(0));
                    r = std::fmod(s, c);
                }
                at(i, j, k) = r;
            }
    return a;
}

// Diamond difference for one angle at a time, with full face arrays: the plain sweep.
template <class T>
std::vector<T> plain_dd(const sweep3d::dd_params& p) {
    const index_t n = p.n;
    std::vector<T> phi(static_cast<std::size_t>(n * n * n), T(0));
    std::vector<std::vector<T>> psi_all;
    for (int a = 0; a < p.angles; ++a) {
        const auto c = sweep3d::dd_coefficients<T>(p, a);
        // outgoing faces of every cell
        std::vector<T> ox(phi.size()), oy(phi.size()), oz(phi.size()), psi(phi.size());
        auto id = [&](index_t i, index_t j, index_t k) { return static_cast<std::size_t>((i * n + j) * n + k); };
        for (index_t i = 0; i < n; ++i)
            for (index_t j = 0; j < n; ++j)
                for (index_t k = 0; k < n; ++k) {
                    const T ix = i > 0 ? ox[id(i - 1, j, k)] : T(0);
                    const T iy = j > 0 ? oy[id(i, j - 1, k)] : T(0);
                    const T iz = k > 0 ? oz[id(i, j, k - 1)] : T(0);
                    const T num = T(p.source) + c.cx * ix + c.cy * iy + c.cz * iz;  // left to right, as stated
                    const T v = num / c.denominator;
                    psi[id(i, j, k)] = v;
                    ox[id(i, j, k)] = (v + v) - ix;
                    oy[id(i, j, k)] = (v + v) - iy;
                    oz[id(i, j, k)] = (v + v) - iz;
                }
        psi_all.push_back(std::move(psi));
    }
    const T w = T(1) / T(p.angles);
    for (std::size_t x = 0; x < phi.size(); ++x) {
        T s = T(0);
        for (const auto& psi : psi_all) s = s + psi[x] * w;
        phi[x] = s;
    }
    return phi;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

}  // namespace

// The compensation schedules accept Theorem 1 pairs only: the sweep's pair is refused when the program is compiled.
static_assert(!theorem1_pair<fmod_plus<double>>);
static_assert(!theorem1_pair<fmod_plus<float>>);
static_assert(theorem1_pair<plus_plus<double>>);

TEST_CASE("sweep3d fmod: tiles in wavefront order on threads give the textbook loop's bits", "[sweep3d]") {
    thread_pool pool(3);
    for (const index_t n : {index_t(1), index_t(2), index_t(7), index_t(16), index_t(17), index_t(33)}) {
        for (const int loops : {1, 5}) {
            INFO("n " << n << ", loops " << loops);
            const sweep3d::fmod_params p{n, loops, 1.0};
            const auto want_d = textbook_fmod<double>(n, loops, 1.0);
            const auto want_f = textbook_fmod<float>(n, loops, 1.0f);
            CHECK(same_bits(sweep3d::fmod_naive<double>(p), want_d));
            CHECK(same_bits(sweep3d::fmod_naive<float>(p), want_f));
            for (const index_t tile : {index_t(1), index_t(4), index_t(16), index_t(64)}) {
                CHECK(same_bits(sweep3d::fmod_tiled<double>(p, pool, tile), want_d));
                CHECK(same_bits(sweep3d::fmod_tiled<float>(p, pool, tile), want_f));
            }
        }
    }
    // another modulus, values beyond 1
    const sweep3d::fmod_params p{12, 3, 2.5};
    CHECK(same_bits(sweep3d::fmod_tiled<double>(p, pool, 5), textbook_fmod<double>(12, 3, 2.5)));
}

// The vectorised kernels of every instruction set this CPU runs (sweep3d::kernel_isas) against the naive sweeps, bit
// for bit: sizes around the vector widths, tile edges below, at and above them, several moduli and thread counts.
TEST_CASE("sweep3d fmod: every kernel, tile, modulus and thread count gives the naive sweep's bits", "[sweep3d]") {
    for (const unsigned threads : {1u, 2u, 3u}) {
        thread_pool pool(threads);
        for (const index_t n : {index_t(1), index_t(2), index_t(7), index_t(8), index_t(9), index_t(17), index_t(33),
                                index_t(64)}) {
            for (const int loops : {1, 3}) {
                for (const double c : {1.0, 0.3, 7.5}) {
                    if (n == 64 && (threads != 2 || c != 0.3)) continue;  // the largest size once per kernel and tile
                    const sweep3d::fmod_params p{n, loops, c};
                    const auto want_d = sweep3d::fmod_naive<double>(p);
                    const auto want_f = sweep3d::fmod_naive<float>(p);
                    for (const simd::isa isa : sweep3d::kernel_isas())
                        for (const index_t tile : {index_t(1), index_t(3), index_t(8), index_t(16), index_t(64)}) {
                            INFO("threads " << threads << ", n " << n << ", loops " << loops << ", c " << c << ", "
                                            << simd::isa_name(isa) << ", tile " << tile);
                            CHECK(same_bits(sweep3d::fmod_tiled<double>(p, pool, tile, isa), want_d));
                            CHECK(same_bits(sweep3d::fmod_tiled<float>(p, pool, tile, isa), want_f));
                        }
                }
            }
        }
    }
    // into a grid the caller allocated, whatever it held
    {
        thread_pool two(2);
        const sweep3d::fmod_params p{19, 2, 0.3};
        std::vector<float> grid(5, 42.0f);
        sweep3d::fmod_tiled_into(p, two, 8, grid);
        CHECK(same_bits(grid, sweep3d::fmod_naive<float>(p)));
        const sweep3d::dd_params d{19, 8, 0.7, 1.3};
        std::vector<double> phi(19 * 19 * 19, -1.0);
        sweep3d::dd_tiled_into(d, two, 8, phi);
        CHECK(same_bits(phi, sweep3d::dd_naive<double>(d)));
    }
    // a modulus with large quotients (sums up to about 4 / 1e-7: the exact fmod's lanes go to the library), and one
    // too small for the reciprocal (the whole sweep on the library's fmod)
    thread_pool pool(2);
    for (const double c : {1e-7, 1e-300}) {
        const sweep3d::fmod_params p{13, 2, c};
        const auto want_d = sweep3d::fmod_naive<double>(p);
        const auto want_f = sweep3d::fmod_naive<float>(p);
        for (const simd::isa isa : sweep3d::kernel_isas()) {
            INFO(simd::isa_name(isa) << ", c " << c);
            CHECK(same_bits(sweep3d::fmod_tiled<double>(p, pool, 8, isa), want_d));
            CHECK(same_bits(sweep3d::fmod_tiled<float>(p, pool, 8, isa), want_f));
        }
    }
}

namespace {

// The exact fmod (scalar and each kernel's vectors) against std::fmod on x and c of one precision, bit for bit.
template <class T>
void check_exact_fmod(const std::vector<T>& xs, T c) {
    std::vector<T> want(xs.size()), got(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) want[i] = std::fmod(xs[i], c);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const T r = sweep3d::exact_fmod(xs[i], c);
        if (std::memcmp(&r, &want[i], sizeof(T)) != 0 && ++wrong <= 3)
            FAIL_CHECK("exact_fmod(" << xs[i] << ", " << c << ") = " << r << ", std::fmod " << want[i]);
    }
    for (const simd::isa isa : sweep3d::kernel_isas()) {
        sweep3d::exact_fmod_array(xs.data(), got.data(), xs.size(), c, isa);
        for (std::size_t i = 0; i < xs.size(); ++i)
            if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0 && ++wrong <= 6)
                FAIL_CHECK(simd::isa_name(isa) << ": fmod(" << xs[i] << ", " << c << ") = " << got[i] << ", std::fmod "
                                               << want[i]);
    }
    CHECK(wrong == 0);
}

template <class T>
void exact_fmod_cases(std::uint64_t seed) {
    using lim = std::numeric_limits<T>;
    std::mt19937_64 rng(seed);
    std::vector<T> moduli{T(1), T(0.3), T(7.5), T(0.1), T(3), lim::min(), lim::min() * 4, lim::denorm_min(), lim::max(),
                          lim::max() / 3, T(1e-30), T(1e30), lim::epsilon(), T(1) + lim::epsilon(), T(-2.5)};
    for (int r = 0; r < 12; ++r) moduli.push_back(std::ldexp(std::uniform_real_distribution<T>(1, 2)(rng),
                                                             std::uniform_int_distribution<int>(-60, 60)(rng)));
    for (const T c : moduli) {
        std::vector<T> xs{T(0), -T(0), c, -c, T(2) * c, std::nextafter(c, T(0)), std::nextafter(c, lim::infinity()),
                          lim::infinity(), -lim::infinity(), lim::quiet_NaN(), lim::denorm_min(), lim::min(),
                          lim::max(), -lim::max(), T(1), T(-1)};
        // exact multiples of c and their neighbours, quotients up to and beyond 2^20 and 2^24
        for (const double q : {1.0, 2.0, 3.0, 10.0, 1023.0, 65537.0, 1048575.0, 1048576.0, 1048577.0, 16777215.0,
                               16777216.0, 1e9}) {
            const T x = T(double(c) * q);
            xs.insert(xs.end(), {x, std::nextafter(x, T(0)), std::nextafter(x, lim::infinity()), -x});
        }
        // random: quotients spread from below 1 to about 2^30, and uniform below small multiples
        for (int r = 0; r < 400; ++r) {
            const T u = std::uniform_real_distribution<T>(0, 1)(rng);
            const int e = std::uniform_int_distribution<int>(-30, 30)(rng);
            const T x = T(double(std::fabs(c)) * std::ldexp(double(u), e));
            xs.push_back(r % 5 == 0 ? -x : x);
        }
        // subnormal dividends
        for (int r = 0; r < 20; ++r)
            xs.push_back(lim::denorm_min() * T(std::uniform_int_distribution<int>(1, 1 << 20)(rng)));
        INFO("c " << c);
        check_exact_fmod(xs, c);
    }
    // the sweep's own values: sums of four values below c, for its moduli
    for (const T c : {T(1), T(0.3), T(7.5)}) {
        std::vector<T> xs;
        for (int r = 0; r < 4000; ++r) {
            T x = T(0);
            for (int t = 0; t < 4; ++t) x = x + std::fmod(std::uniform_real_distribution<T>(0, 4 * c)(rng), c);
            xs.push_back(x);
        }
        check_exact_fmod(xs, c);
    }
}

}  // namespace

TEST_CASE("sweep3d: the exact inline fmod gives std::fmod's bits", "[sweep3d]") {
    exact_fmod_cases<float>(17);
    exact_fmod_cases<double>(29);
}

TEST_CASE("sweep3d dd: the octant sweep equals a plain sweep angle by angle", "[sweep3d]") {
    thread_pool pool(2);
    for (const index_t n : {index_t(1), index_t(5), index_t(19)}) {
        for (const int angles : {1, 3, 8}) {
            INFO("n " << n << ", angles " << angles);
            const sweep3d::dd_params p{n, angles, 0.7, 1.3};
            const auto want = plain_dd<double>(p);
            CHECK(same_bits(sweep3d::dd_naive<double>(p), want));
            CHECK(same_bits(sweep3d::dd_tiled<double>(p, pool, 4), want));
            CHECK(same_bits(sweep3d::dd_tiled<float>(p, pool, 7), plain_dd<float>(p)));
        }
    }
    // every kernel, tile and thread count, angle counts around the vector widths
    for (const unsigned threads : {1u, 3u}) {
        thread_pool many(threads);
        for (const index_t n : {index_t(1), index_t(2), index_t(7), index_t(9), index_t(17), index_t(33)})
            for (const int angles : {1, 3, 4, 5, 8, 9, 16, 17, 64}) {
                if (n == 33 && angles > 8) continue;
                const sweep3d::dd_params p{n, angles, 0.7, 1.3};
                const auto want_d = sweep3d::dd_naive<double>(p);
                const auto want_f = sweep3d::dd_naive<float>(p);
                for (const simd::isa isa : sweep3d::kernel_isas())
                    for (const index_t tile : {index_t(1), index_t(3), index_t(8), index_t(16), index_t(64)}) {
                        INFO("threads " << threads << ", n " << n << ", angles " << angles << ", "
                                        << simd::isa_name(isa) << ", tile " << tile);
                        CHECK(same_bits(sweep3d::dd_tiled<double>(p, many, tile, isa), want_d));
                        CHECK(same_bits(sweep3d::dd_tiled<float>(p, many, tile, isa), want_f));
                    }
            }
    }
    // physics: no inflow, so the flux is lowest in the inflow corner and, far from it, reaches the infinite-medium
    // value source / sigma (diamond difference may overshoot it on the way, but stays positive here)
    const sweep3d::dd_params p{24, 4, 1.0, 1.0};
    const auto phi = sweep3d::dd_naive<double>(p);
    CHECK(phi.back() == Approx(1.0).epsilon(1e-3));
    double lowest = phi[0];
    for (const double v : phi) lowest = std::min(lowest, v);
    CHECK(lowest == phi[0]);
    CHECK(lowest > 0);
}

TEST_CASE("sweep3d: bad parameters are refused", "[sweep3d]") {
    CHECK_THROWS_AS(sweep3d::check(sweep3d::fmod_params{0, 1, 1.0}), error);
    CHECK_THROWS_AS(sweep3d::check(sweep3d::fmod_params{4, 0, 1.0}), error);
    CHECK_THROWS_AS(sweep3d::check(sweep3d::fmod_params{4, 1, 0.0}), error);
    CHECK_THROWS_AS(sweep3d::check(sweep3d::fmod_params{4, 1, std::nan("")}), error);
    CHECK_THROWS_AS(sweep3d::check(sweep3d::dd_params{4, 0, 1.0, 1.0}), error);
    CHECK_THROWS_AS(sweep3d::check(sweep3d::dd_params{4, 2, -1.0, 1.0}), error);
}

TEST_CASE("swgpu sweep3d: the grid as .npy, the checksum, errors with their exit codes", "[sweep3d][cli]") {
    namespace fs = std::filesystem;
    const testing::temp_dir tmp("swgpu-sweep3d");
    const fs::path dir = tmp.path;
    auto run = [&](const std::string& args, std::string* out = nullptr) {
        const auto r = testing::run_program("sweep3d " + args + " --backend cpu");
        if (out) *out = r.out;
        return r.code;
    };
    std::string printed;
    REQUIRE(run("--n 9 --loops 2 -o '" + (dir / "g.npy").string() + "'", &printed) == 0);
    const auto a = io::read_npy((dir / "g.npy").string());
    CHECK(a.type == sat::dtype::f64);
    CHECK((a.rows == 9 && a.cols == 9 && a.lanes == 9));
    const auto want = textbook_fmod<double>(9, 2, 1.0);
    REQUIRE(a.bytes() == want.size() * sizeof(double));
    CHECK(std::memcmp(a.raw(), want.data(), a.bytes()) == 0);
    double sum = 0;
    for (const double v : want) sum += v;
    char expect[64];
    std::snprintf(expect, sizeof expect, "checksum %.17g ", sum);
    CHECK(printed.rfind(expect, 0) == 0);
    REQUIRE(run("--n 5 --precision single -o '" + (dir / "s.npy").string() + "'") == 0);
    CHECK(io::read_npy((dir / "s.npy").string()).type == sat::dtype::f32);
    REQUIRE(run("--n 6 --kernel dd --angles 3") == 0);
    CHECK(run("--n 0") == 2);
    CHECK(run("--n 4 --loops 0") == 2);
    CHECK(run("--n 4 --c -1") == 2);
    CHECK(run("--n 4 --precision half") == 2);
    CHECK(run("--n 4 -o '" + (dir / "no-such-dir" / "g.npy").string() + "'") == 5);
    CHECK(!fs::exists(dir / "no-such-dir"));
    // Grids past the memory: refused before anything is taken (exit 4, one line saying what to change), no output.
    const auto too_large = testing::run_program("sweep3d --n 4096 --backend cpu -o '" + (dir / "big.npy").string() + "'");
    CHECK(too_large.code == 4);
    CHECK(testing::one_error_line(too_large.err));
    CHECK(too_large.err.find("--n 4096 is a 4096 x 4096 x 4096 grid of float64, held twice for -o (1.10 TB)") !=
          std::string::npos);
    CHECK(too_large.err.find("use a smaller --n or --precision single") != std::string::npos);
    const auto small = testing::run_program("sweep3d --n 300 --kernel dd --angles 8 --backend cpu -o '" +
                                                (dir / "dd.npy").string() + "'",
                                            "SWGPU_TUNE=host.memory_mib=64");
    CHECK(small.code == 4);
    CHECK(testing::one_error_line(small.err));
    CHECK(small.err.find("grid of float64, held twice for -o, with the angular fluxes of its faces (449 MB); the memory "
                         "allowed (host.memory_mib) is 67.1 MB: use a smaller --n or --precision single") !=
          std::string::npos);
    CHECK(!fs::exists(dir / "big.npy"));
    CHECK(!fs::exists(dir / "dd.npy"));
}
