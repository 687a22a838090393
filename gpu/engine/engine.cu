// The facade of gpu/engine/engine.hpp over the executors: resolves the schedule (the hybrid switch and the tuning tables),
// moves data, times the executor with CUDA events, and returns host results (gpu/engine/run_engine.cuh). The executors
// themselves are compiled in row_sync.cu and tiled_p2p.cu for the list in engine_instances.cuh; here they are only
// called.
#include <algorithm>
#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/engine.hpp"
#include "gpu/engine/engine_instances.cuh"
#include "gpu/engine/hybrid.hpp"
#include "gpu/engine/run_engine.cuh"

namespace swgpu::gpu {

SWGPU_ENGINE_INSTANCES(extern SWGPU_ROW_SYNC_INSTANCE)
SWGPU_ENGINE_INSTANCES(extern SWGPU_TILED_P2P_INSTANCE)

int tiled_tuning_entries() { return static_cast<int>(tiled_configs.size()); }

namespace engine_run {

std::string device_architecture() {
    int device = 0, major = 0, minor = 0;
    SWGPU_CUDA_CHECK(cudaGetDevice(&device));
    SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    return "sm_" + std::to_string(major) + std::to_string(minor);
}

schedule_choice resolve(const schedule_choice& asked, const char* cls, index_t rows, index_t cols) {
    if (asked.barrier > static_cast<int>(row_barrier::grid))
        throw usage_error("row barrier " + std::to_string(asked.barrier) + " does not exist (0 launch, 1 grid)");
    if (asked.tiled_entry >= tiled_tuning_entries())
        throw usage_error("tiled tuning entry " + std::to_string(asked.tiled_entry) + " does not exist (there are " +
                          std::to_string(tiled_tuning_entries()) + ")");
    return active_hybrid_switch().plan(device_architecture(), cls, rows, cols, asked);
}

}  // namespace engine_run

template <class Problem>
problem_result<typename Problem::cell> run_synthetic(const Problem& host_problem, const schedule_choice& choice,
                                                     bool keep_all_cells, int repeats) {
    using cell = typename Problem::cell;
    problem_result<cell> result;
    Problem p = host_problem;
    device_buffer<cell> all;
    const std::size_t cells = static_cast<std::size_t>(std::max<index_t>(0, p.rows())) *
                              static_cast<std::size_t>(std::max<index_t>(0, p.cols()));
    if (keep_all_cells && cells > 0) {
        all.allocate(cells);
        p.out = all.data();
    } else {
        p.out = nullptr;
    }
    result.report = engine_run::run_engine(p, choice, repeats, result.last_row);
    if (keep_all_cells) result.all_cells = all.download(cells);
    return result;
}

#define SWGPU_SYNTHETIC_RUN(P) \
    template problem_result<P::cell> run_synthetic<P>(const P&, const schedule_choice&, bool, int);
SWGPU_FOR_EACH_SYNTHETIC_PROBLEM(SWGPU_SYNTHETIC_RUN)

}  // namespace swgpu::gpu
