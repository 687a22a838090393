// Smith-Waterman-Gotoh compiled for the engine's executors (tests/gpu/engine/sw_on_engine.hpp): the problem
// (sw_gpu_problem.cuh) with its three scan algebras, row_sync and tiled_p2p instantiated here, run through the
// engine's facade template (gpu/engine/run_engine.cuh).
#include <algorithm>
#include <vector>

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/engine_instances.cuh"
#include "gpu/engine/run_engine.cuh"
#include "tests/gpu/engine/sw_gpu_problem.cuh"
#include "tests/gpu/engine/sw_on_engine.hpp"

namespace swgpu::gpu {

using sw_gpu_problem_i32 = sw_gpu_problem<std::int32_t>;

#define SWGPU_SW_INSTANCES(X)                              \
    X(sw_gpu_problem_i32, weighted_of<sw_gpu_problem_i32>)   \
    X(sw_gpu_problem_i32, descending_of<sw_gpu_problem_i32>) \
    X(sw_gpu_problem_i32, map_of<sw_gpu_problem_i32>)
SWGPU_SW_INSTANCES(SWGPU_ROW_SYNC_INSTANCE)
SWGPU_SW_INSTANCES(SWGPU_TILED_P2P_INSTANCE)

sw_gpu_result sw_score(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc,
                       const schedule_choice& choice, int repeats) {
    sw_gpu_result result;
    if (query.empty() || subject.empty()) return result;
    device_buffer<std::uint8_t> q, s;
    device_buffer<std::int8_t> table;
    device_buffer<std::uint64_t> best(query.size());
    q.upload(query.data(), query.size());
    s.upload(subject.data(), subject.size());
    table.upload(sc.matrix.table().data(), sc.matrix.table().size());
    sw_gpu_problem_i32 p{};
    p.query = q.data();
    p.subject = s.data();
    p.m = static_cast<index_t>(query.size());
    p.n = static_cast<index_t>(subject.size());
    p.table = table.data();
    p.open_extend = sc.gaps.open + sc.gaps.extend;
    p.extend = sc.gaps.extend;
    p.row_best = best.data();
    SWGPU_CUDA_CHECK(cudaStreamSynchronize(nullptr));  // uploads on the default stream; the engine runs on its own
    std::vector<sw_gpu_problem_i32::cell> last_row;
    for (int rep = 0; rep < std::max(1, repeats); ++rep) {
        best.zero();
        SWGPU_CUDA_CHECK(cudaStreamSynchronize(nullptr));
        const run_report r = engine_run::run_engine(p, choice, 1, last_row);
        result.report.used = r.used;
        result.report.barrier = r.barrier;
        result.report.tiled_entry = r.tiled_entry;
        result.report.tile_rows = r.tile_rows;
        result.report.tile_cols = r.tile_cols;
        result.report.ms.push_back(r.ms.front());
    }
    const auto keys = best.download(query.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const auto score = sw_key_score(keys[i]);
        if (score > result.end.score)
            result.end = {static_cast<int>(score), static_cast<std::int64_t>(i), sw_key_col(keys[i])};
    }
    return result;
}

}  // namespace swgpu::gpu
