// The 3-D sweeps on the GPU (gpu/numerics/sweep3d.hpp) give the CPU's bits: the fmod sweep for odd sizes and both precisions,
// the diamond-difference sweep for several angle counts.
#include <cstring>
#include <string>
#include <vector>

#include "core/numerics/sweep3d.hpp"
#include "core/thread_pool.hpp"
#include "core/tuning.hpp"
#include "gpu/numerics/sweep3d.hpp"
#include "tests/gpu/harness.hpp"

namespace {

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

}  // namespace

GPU_TEST("sweep3d fmod: GPU tiles and hyperplanes (a launch per step or one grid-barrier launch) give the CPU's bits") {
    using namespace swgpu;
    thread_pool pool(4);
    for (const char* schedule : {"tiles", "launch", "grid"}) {
        const tuning::scoped_override forced(std::string("sweep.schedule=") + schedule);
        for (const sweep3d::index_t n : {1, 2, 3, 7, 8, 9, 17, 31, 64, 129, 257, 300}) {
            for (const int loops : {1, 10}) {
                const sweep3d::fmod_params p{n, loops, 1.0};
                gpu::sweep_report report;
                CHECK(same_bits(gpu::sweep3d_fmod<double>(p, &report), sweep3d::fmod_tiled<double>(p, pool, 16)));
                CHECK(std::strcmp(report.schedule, schedule) == 0);
                const sweep3d::index_t edge = std::strcmp(schedule, "tiles") != 0 ? 1 : n <= 256 ? 8 : 16;
                const sweep3d::index_t units = (n + edge - 1) / edge;  // hyperplanes run points, tiles run tiles
                CHECK_EQ(report.steps, static_cast<int>(3 * (units - 1) + 1));
                CHECK(same_bits(gpu::sweep3d_fmod<float>(p), sweep3d::fmod_tiled<float>(p, pool, 16)));
            }
        }
        const sweep3d::fmod_params p{77, 3, 3.75};
        CHECK(same_bits(gpu::sweep3d_fmod<double>(p), sweep3d::fmod_naive<double>(p)));
    }
}

GPU_TEST("sweep3d dd: GPU hyperplanes give the CPU's bits, a launch per step or one grid-barrier launch") {
    using namespace swgpu;
    thread_pool pool(4);
    for (const char* schedule : {"launch", "grid"}) {
        const tuning::scoped_override forced(std::string("sweep.schedule=") + schedule);
        for (const sweep3d::index_t n : {1, 7, 65}) {
            for (const int angles : {1, 4, 8}) {
                const sweep3d::dd_params p{n, angles, 0.9, 1.1};
                CHECK(same_bits(gpu::sweep3d_dd<double>(p), sweep3d::dd_tiled<double>(p, pool, 8)));
                CHECK(same_bits(gpu::sweep3d_dd<float>(p), sweep3d::dd_tiled<float>(p, pool, 8)));
            }
        }
    }
}
