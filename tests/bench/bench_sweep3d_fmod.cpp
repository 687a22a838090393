// bench_sweep3d_fmod [COUNT]: the cost of one fmod as the 3-D sweep takes it (core/numerics/sweep3d_kernel.hpp), per
// precision: the library's fmod and the exact inline one, in a chain (x = fmod(x + step, C), each waiting on the one
// before: the latency, with one addition) and over an array of independent values (the throughput; the inline one
// by the vectors of each instruction set this CPU runs). The values are those of the sweep: below 4C, C = 1. Prints
// nanoseconds per value, the best of five; the results agree bit for bit (checked).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "core/align/simd/isa.hpp"
#include "core/numerics/sweep3d.hpp"

namespace {

using namespace swgpu;
using clock_type = std::chrono::steady_clock;

template <class F>
double best_ns(std::size_t count, F&& f) {
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
        const auto t0 = clock_type::now();
        f();
        best = std::min(best, std::chrono::duration<double, std::nano>(clock_type::now() - t0).count());
    }
    return best / static_cast<double>(count);
}

template <class T>
int run(const char* name, std::size_t count) {
    const T c = T(1), step = T(0.7);
    int failures = 0;
    // chain: latency
    T lib = T(0), in = T(0);
    const double chain_lib =
        best_ns(count, [&] { lib = sweep3d::fmod_chain<T>(T(0.1), step, count, c, false, simd::isa::portable); });
    std::printf("%s chain  library fmod       %7.2f ns\n", name, chain_lib);
    for (const simd::isa isa : sweep3d::kernel_isas()) {
        const double t = best_ns(count, [&] { in = sweep3d::fmod_chain<T>(T(0.1), step, count, c, true, isa); });
        std::printf("%s chain  inline (%-9s) %7.2f ns\n", name, simd::isa_name(isa), t);
        if (std::memcmp(&in, &lib, sizeof(T)) != 0) ++failures;
    }
    // array: throughput
    std::mt19937_64 rng(5);
    std::vector<T> x(count), want(count), got(count);
    for (auto& v : x) v = std::uniform_real_distribution<T>(0, 4 * c)(rng);
    const double array_lib = best_ns(count, [&] {
        for (std::size_t i = 0; i < count; ++i) want[i] = std::fmod(x[i], c);
    });
    std::printf("%s array  library fmod       %7.2f ns\n", name, array_lib);
    for (const simd::isa isa : sweep3d::kernel_isas()) {
        const double t = best_ns(count, [&] { sweep3d::exact_fmod_array(x.data(), got.data(), count, c, isa); });
        std::printf("%s array  inline (%-9s) %7.2f ns\n", name, simd::isa_name(isa), t);
        if (std::memcmp(got.data(), want.data(), count * sizeof(T)) != 0) ++failures;
    }
    return failures;
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 4'000'000;
    int failures = run<float>("single", count) + run<double>("double", count);
    if (failures) std::printf("DIFFERENT results: %d\n", failures);
    return failures ? 1 : 0;
}
