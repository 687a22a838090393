// The device weighted scan and map scan against a sequential CPU reference (the definition: x_{j+1} = m_j(x_j)).
// Integer pairs and small-integer float data must match exactly; (+,·) over floating point within the bound stated at
// check_bounded. Sizes cover warp, chunk and tile edges of every tuning entry, more than 32 tiles (the look-back
// window), and random sizes up to 2^24.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/engine/operator_pair.hpp"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/engine.hpp"
#include "gpu/engine/weighted_scan.cuh"
#include "tests/gpu/harness.hpp"

namespace {

using namespace swgpu;
using gpu::scan_kind;

// The sequential definition, in the pair's own arithmetic.
template <class Op>
std::vector<typename Op::value> reference_scan(const std::vector<typename Op::value>* a,
                                               const std::vector<typename Op::value>& b, typename Op::value w,
                                               typename Op::value x0, scan_kind kind) {
    std::vector<typename Op::value> out(b.size());
    auto x = x0;
    for (std::size_t j = 0; j < b.size(); ++j) {
        const auto after = Op::acc(Op::dist(x, a ? (*a)[j] : w), b[j]);
        out[j] = kind == scan_kind::inclusive ? after : x;
        x = after;
    }
    return out;
}

// The same in double, and of absolute values: the scale of the rounding error of any summation order.
struct float_reference {
    std::vector<double> value, magnitude;
};
template <class T>
float_reference reference_plus_times(const std::vector<T>* a, const std::vector<T>& b, T w, T x0, scan_kind kind) {
    float_reference r{std::vector<double>(b.size()), std::vector<double>(b.size())};
    double x = x0, m = std::fabs(double(x0));
    for (std::size_t j = 0; j < b.size(); ++j) {
        const double wj = a ? double((*a)[j]) : double(w);
        const double after = x * wj + double(b[j]);
        const double mafter = m * std::fabs(wj) + std::fabs(double(b[j]));
        r.value[j] = kind == scan_kind::inclusive ? after : x;
        r.magnitude[j] = kind == scan_kind::inclusive ? mafter : m;
        x = after;
        m = mafter;
    }
    return r;
}

constexpr std::int64_t large_size = (std::int64_t(1) << 24) + 5;

std::vector<std::int64_t> scan_sizes() {
    std::vector<std::int64_t> n{1, 2, 3, 31, 32, 33, 127, 128, 129, 1023, 1024, 1025};
    // The tuning entries' tiles; beyond 32 and 512 tiles: more than one look-back window; 600 tiles: more tiles than
    // blocks resident at once on an H100, so persistent blocks take several tiles and register tiles start as earlier
    // blocks end.
    for (int tile : {4096, 8192, 16384}) {
        for (std::int64_t t : {std::int64_t(tile) - 1, std::int64_t(tile), std::int64_t(tile) + 1, 2 * std::int64_t(tile) + 5,
                               33 * std::int64_t(tile) + 1, 70 * std::int64_t(tile) - 3, 600 * std::int64_t(tile) + 3})
            n.push_back(t);
    }
    std::mt19937_64 rng(2024);
    for (int k = 0; k < 3; ++k) n.push_back(std::int64_t(1) + std::int64_t(rng() % (std::uint64_t(1) << 24)));
    n.push_back(large_size);
    return n;
}

// Every entry at every size up to 2^23 and at large_size (persistent blocks then take several tiles each, the last one
// partial); only the default entries for large scans at the random sizes above 2^23.
bool tested(std::int64_t n, int entry) {
    return n <= (std::int64_t(1) << 23) || n == large_size || entry == gpu::default_scan_tuning_entry();
}

template <class T>
std::string mismatch(std::size_t n, std::size_t j, T got, T want, int entry, scan_kind kind) {
    return "n=" + std::to_string(n) + " j=" + std::to_string(j) + " got " + std::to_string(got) + " want " +
           std::to_string(want) + " entry " + std::to_string(entry) + (kind == scan_kind::inclusive ? " inclusive" : " exclusive");
}

// Exact pairs: every element equal.
template <class Op, class Gen>
void check_exact(const char* name, Gen gen_b, Gen gen_w, typename Op::value x0, bool maps) {
    using T = typename Op::value;
    std::mt19937_64 rng(7);
    for (const std::int64_t n : scan_sizes()) {
        if (n > (std::int64_t(1) << 23) && maps) continue;  // the map scan at 2^24: its own test below
        std::vector<T> b(static_cast<std::size_t>(n)), a;
        for (auto& v : b) v = gen_b(rng);
        const T w = gen_w(rng);
        if (maps) {
            a.resize(b.size());
            for (auto& v : a) v = gen_w(rng);
        }
        for (int entry = 0; entry < gpu::scan_tuning_entries(); ++entry) {
            if (!tested(n, entry)) continue;
            for (const auto kind : {scan_kind::exclusive, scan_kind::inclusive}) {
                const auto want = reference_scan<Op>(maps ? &a : nullptr, b, w, x0, kind);
                const auto got = maps ? gpu::map_scan<Op>(a, b, x0, kind, entry) : gpu::weighted_scan<Op>(b, w, x0, kind, entry);
                REQUIRE(got.size() == want.size());
                for (std::size_t j = 0; j < want.size(); ++j) {
                    if (got[j] != want[j]) {
                        ::swgpu::gputest::report(__FILE__, __LINE__,
                                                 std::string(name) + ": " + mismatch(b.size(), j, got[j], want[j], entry, kind));
                        break;
                    }
                }
            }
        }
    }
}

// (+,·) over floating point: |gpu - ref| <= tol · Σ_u |b_u|·|w|^(j-u) (+ |x0|·|w|^j), ref in double. tol = 1e-5 for
// float (about 100 ulps of the magnitude; a blocked scan of 2^24 elements rounds in about log2(2^24) + 4 steps per
// term) and 1e-13 for double.
template <class T>
void check_bounded(const char* name, bool maps, double tol) {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> val(-1.0, 1.0), weight(0.5, 0.999);
    for (const std::int64_t n : scan_sizes()) {
        if (n > (std::int64_t(1) << 23) && maps) continue;
        std::vector<T> b(static_cast<std::size_t>(n)), a;
        for (auto& v : b) v = T(val(rng));
        const T w = T(weight(rng));
        if (maps) {
            a.resize(b.size());
            for (auto& v : a) v = T(weight(rng)) * (rng() % 2 ? T(1) : T(-1));
        }
        const T x0 = T(0.5);
        for (int entry = 0; entry < gpu::scan_tuning_entries(); ++entry) {
            if (!tested(n, entry)) continue;
            for (const auto kind : {scan_kind::exclusive, scan_kind::inclusive}) {
                const auto ref = reference_plus_times<T>(maps ? &a : nullptr, b, w, x0, kind);
                const auto got = maps ? gpu::map_scan<plus_times<T>>(a, b, x0, kind, entry)
                                      : gpu::weighted_scan<plus_times<T>>(b, w, x0, kind, entry);
                REQUIRE(got.size() == b.size());
                double worst = 0;
                std::size_t at = 0;
                for (std::size_t j = 0; j < b.size(); ++j) {
                    const double err = std::fabs(double(got[j]) - ref.value[j]) / (ref.magnitude[j] + 1e-30);
                    if (!(err <= worst)) worst = err, at = j;  // NaN counts as worst
                }
                if (!(worst <= tol))
                    ::swgpu::gputest::report(__FILE__, __LINE__,
                                             std::string(name) + ": n=" + std::to_string(n) + " relative error " +
                                                 std::to_string(worst) + " at j=" + std::to_string(at) + " entry " +
                                                 std::to_string(entry));
            }
        }
    }
}

}  // namespace

GPU_TEST("weighted_scan (max,+) int32 exact") {
    auto b = [](std::mt19937_64& r) { return std::int32_t(r() % 2001) - 1000; };
    auto w = [](std::mt19937_64& r) { return -std::int32_t(r() % 4); };
    check_exact<max_plus<std::int32_t>>("max_plus<int32>", +b, +w, max_plus<std::int32_t>::identity(), false);
    check_exact<max_plus<std::int32_t>>("max_plus<int32> x0=7", +b, +w, 7, false);
}

GPU_TEST("weighted_scan (max,+) int32 exact at the edge of -inf, both signs of weight") {
    // Inputs around the identity (some below it) with ordinary ones: results that would fall below -inf are -inf,
    // on the device as in the sequential definition, for the descending fast path (w <= 0) and the general one.
    auto b = [](std::mt19937_64& r) {
        const std::int32_t inf = max_plus<std::int32_t>::identity();
        return r() % 4 == 0 ? std::int32_t(r() % 2001) - 1000 : inf + std::int32_t(r() % 41) - 20;
    };
    auto w_down = [](std::mt19937_64& r) { return -std::int32_t(r() % 4); };
    auto w_up = [](std::mt19937_64& r) { return std::int32_t(r() % 3) + 1; };
    check_exact<max_plus<std::int32_t>>("max_plus<int32> edge, w <= 0", +b, +w_down, max_plus<std::int32_t>::identity() + 3, false);
    check_exact<max_plus<std::int32_t>>("max_plus<int32> edge, w > 0", +b, +w_up, max_plus<std::int32_t>::identity(), false);
}

GPU_TEST("weighted_scan (max,+) float exact on integers") {
    auto b = [](std::mt19937_64& r) { return float(std::int32_t(r() % 2001) - 1000); };
    auto w = [](std::mt19937_64& r) { return -float(r() % 4); };
    check_exact<max_plus<float>>("max_plus<float>", +b, +w, -INFINITY, false);
}

GPU_TEST("weighted_scan (+,+) int32 and float exact") {
    auto b = [](std::mt19937_64& r) { return std::int32_t(r() % 7) - 3; };
    auto w = [](std::mt19937_64& r) { return std::int32_t(r() % 5) - 2; };
    check_exact<plus_plus<std::int32_t>>("plus_plus<int32>", +b, +w, 5, false);
    // Float sums of integers stay exact while below 2^24: values in 0..1, weight 0 or 1, n <= 2^24 / 2.
    auto bf = [](std::mt19937_64& r) { return float(r() % 2); };
    auto wf = [](std::mt19937_64& r) { return float(r() % 2) * 0.0f; };
    check_exact<plus_plus<float>>("plus_plus<float>", +bf, +wf, 0.0f, false);
}

GPU_TEST("weighted_scan (+,*) uint32 exact modulo 2^32") {
    auto b = [](std::mt19937_64& r) { return std::uint32_t(r()); };
    auto w = [](std::mt19937_64& r) { return std::uint32_t(r()) | 1u; };
    check_exact<plus_times<std::uint32_t>>("plus_times<uint32>", +b, +w, 12345u, false);
}

GPU_TEST("weighted_scan (+,*) float and double within bound") {
    check_bounded<float>("plus_times<float>", false, 1e-5);
    check_bounded<double>("plus_times<double>", false, 1e-13);
}

GPU_TEST("map_scan row-varying weights, every pair") {
    auto bi = [](std::mt19937_64& r) { return std::int32_t(r() % 2001) - 1000; };
    auto wi = [](std::mt19937_64& r) { return -std::int32_t(r() % 4); };
    check_exact<max_plus<std::int32_t>>("map max_plus<int32>", +bi, +wi, max_plus<std::int32_t>::identity(), true);
    auto bs = [](std::mt19937_64& r) { return std::int32_t(r() % 7) - 3; };
    auto ws = [](std::mt19937_64& r) { return std::int32_t(r() % 5) - 2; };
    check_exact<plus_plus<std::int32_t>>("map plus_plus<int32>", +bs, +ws, 5, true);
    auto bu = [](std::mt19937_64& r) { return std::uint32_t(r()); };
    auto wu = [](std::mt19937_64& r) { return std::uint32_t(r()); };
    check_exact<plus_times<std::uint32_t>>("map plus_times<uint32>", +bu, +wu, 3u, true);
    check_bounded<float>("map plus_times<float>", true, 1e-5);
    check_bounded<double>("map plus_times<double>", true, 1e-13);
}

GPU_TEST("map_scan at 2^24 elements") {
    std::mt19937_64 rng(5);
    const std::size_t n = std::size_t(1) << 24;
    std::vector<std::int32_t> a(n), b(n);
    for (std::size_t j = 0; j < n; ++j) a[j] = -std::int32_t(rng() % 4), b[j] = std::int32_t(rng() % 2001) - 1000;
    const auto want = reference_scan<max_plus<std::int32_t>>(&a, b, 0, 0, scan_kind::exclusive);
    const auto got = gpu::map_scan<max_plus<std::int32_t>>(a, b, 0, scan_kind::exclusive);
    CHECK(got == want);
}

// Scans launched back to back on one stream, each reading the previous one's output, cycling through every tuning
// entry: a chained launch (launch_chained) that touched memory before the previous kernel finished would read a stale
// or half-written input, or overwrite look-back status still in use.
GPU_TEST("chained scans read their predecessor's output") {
    using Alg = gpu::weighted_algebra<plus_plus<std::int32_t>>;
    for (const std::int64_t n : {std::int64_t(3) * 12288 + 5, (std::int64_t(1) << 20) + 7, std::int64_t(5) << 20}) {
        std::mt19937_64 rng(static_cast<std::uint64_t>(n));
        std::vector<std::int32_t> want(static_cast<std::size_t>(n));
        for (auto& v : want) v = std::int32_t(rng() % 7) - 3;
        gpu::cuda_stream stream;
        gpu::device_buffer<std::int32_t> ping(want.size()), pong(want.size());
        ping.upload(want, stream.get());
        gpu::lookback_workspace<std::int32_t> ws;
        const int scans = 3 * gpu::scan_tuning_entries();
        for (int k = 0; k < scans; ++k) {
            gpu::scan_arguments<Alg> args{};
            args.alg = Alg{1};
            args.b = k % 2 ? pong.data() : ping.data();
            args.out = k % 2 ? ping.data() : pong.data();
            args.n = n;
            args.x0 = k;
            args.inclusive = k % 3 != 0;
            gpu::launch_weighted_scan(k % gpu::scan_tuning_entries(), args, ws, stream.get());
            want = reference_scan<plus_plus<std::int32_t>>(nullptr, want, 1, k,
                                                          args.inclusive ? scan_kind::inclusive : scan_kind::exclusive);
        }
        const auto got = (scans % 2 ? pong : ping).download(want.size(), stream.get());
        std::size_t bad = 0;
        while (bad < want.size() && got[bad] == want[bad]) ++bad;
        if (bad < want.size())
            ::swgpu::gputest::report(__FILE__, __LINE__,
                                     "chained scans, n=" + std::to_string(n) + ": first difference at " + std::to_string(bad));
    }
}

GPU_TEST("scan rejects a tuning entry that does not exist") {
    const std::vector<float> b{1, 2, 3};
    bool threw = false;
    try {
        gpu::weighted_scan<plus_times<float>>(b, 0.5f, 0.0f, scan_kind::inclusive, gpu::scan_tuning_entries());
    } catch (const swgpu::error& e) {
        threw = e.code() == swgpu::exit_code::bad_command_line;
    }
    CHECK(threw);
}
