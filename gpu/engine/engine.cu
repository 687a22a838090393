// The facade of gpu/engine/engine.hpp over the executors: resolves the schedule (the hybrid switch and the tuning tables),
// moves data, times the executor with CUDA events, and returns host results. The executors themselves are compiled in
// row_sync.cu and tiled_p2p.cu for the list in engine_instances.cuh; here they are only called.
#include <algorithm>
#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/engine.hpp"
#include "gpu/engine/engine_instances.cuh"
#include "gpu/engine/hybrid.hpp"

namespace swgpu::gpu {

SWGPU_ENGINE_INSTANCES(extern SWGPU_ROW_SYNC_INSTANCE)
SWGPU_ENGINE_INSTANCES(extern SWGPU_TILED_P2P_INSTANCE)

int tiled_tuning_entries() { return static_cast<int>(tiled_configs.size()); }

namespace {

std::string device_architecture() {
    int device = 0, major = 0, minor = 0;
    SWGPU_CUDA_CHECK(cudaGetDevice(&device));
    SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    return "sm_" + std::to_string(major) + std::to_string(minor);
}

template <class P>
const char* problem_class() {
    using op = typename P::op;
    using value = typename op::value;
    if constexpr (std::is_base_of_v<sw_problem<value>, P>) return "sw";
    else if constexpr (std::is_same_v<op, max_plus<value>>) return "max_plus";
    else if constexpr (std::is_same_v<op, plus_times<value>>) return "plus_times";
    else return "plus_plus";
}

schedule_choice resolve(const schedule_choice& asked, const char* cls, index_t rows, index_t cols) {
    if (asked.barrier > static_cast<int>(row_barrier::grid))
        throw usage_error("row barrier " + std::to_string(asked.barrier) + " does not exist (0 launch, 1 grid)");
    if (asked.tiled_entry >= tiled_tuning_entries())
        throw usage_error("tiled tuning entry " + std::to_string(asked.tiled_entry) + " does not exist (there are " +
                          std::to_string(tiled_tuning_entries()) + ")");
    return active_hybrid_switch().plan(device_architecture(), cls, rows, cols, asked);
}

// Runs `p` with the chosen schedule and scan algebra `Alg`, `repeats` times, each timed with CUDA events into
// report.ms, and leaves its last row (columns 0..cols-1) in last_row.
template <class P, class Alg>
void run_timed(const P& p, const schedule_choice& c, int repeats, row_sync_workspace<P, Alg>& rs,
               tiled_workspace<P>& tiled, cuda_stream& stream, run_report& report,
               std::vector<typename P::cell>& last_row) {
    cuda_event start, stop;
    for (int rep = 0; rep < std::max(1, repeats); ++rep) {
        start.record(stream.get());
        if (c.sched == schedule::row_sync) run_row_sync<P, Alg>(p, report.barrier, rs, stream.get());
        else run_tiled_p2p<P, Alg>(p, c.tiled_entry, c.tile_rows, tiled, stream.get());
        stop.record(stream.get());
        stop.synchronize();
        report.ms.push_back(stop.since(start));
    }
    const typename P::cell* last =
        c.sched == schedule::row_sync ? rs.rows[p.rows() % 2].data() + 1 : tiled.bottom.data();  // row_sync: slot j+1
    last_row.resize(static_cast<std::size_t>(p.cols()));
    SWGPU_CUDA_CHECK(cudaMemcpyAsync(last_row.data(), last, last_row.size() * sizeof(typename P::cell),
                                     cudaMemcpyDeviceToHost, stream.get()));
    stream.synchronize();
}

// Runs device problem `p` as `asked` says, `repeats` times, and leaves its last row (columns 0..cols-1) in last_row.
template <class P>
run_report run_engine(const P& p, const schedule_choice& asked, int repeats, std::vector<typename P::cell>& last_row) {
    const index_t rows = p.rows(), cols = p.cols();
    const schedule_choice c = resolve(asked, problem_class<P>(), rows, cols);
    run_report report;
    report.used = c.sched;
    report.barrier = static_cast<row_barrier>(c.barrier);
    report.tiled_entry = c.tiled_entry;
    report.tile_rows = c.tile_rows > 0 ? c.tile_rows : tiled_configs[static_cast<std::size_t>(c.tiled_entry)].tile_rows;
    report.tile_cols = c.sched == schedule::tiled_p2p ? tiled_configs[static_cast<std::size_t>(c.tiled_entry)].tile_cols()
                                                       : row_sync_tuning.tile();
    last_row.clear();
    if (rows <= 0 || cols <= 0) return report;

    const bool use_map = c.force_map_scan || !constant_weight_problem<P>;
    cuda_stream stream;
    tiled_workspace<P> tiled;
    if (use_map) {
        row_sync_workspace<P, map_of<P>> rs;
        run_timed(p, c, repeats, rs, tiled, stream, report, last_row);
    } else if constexpr (constant_weight_problem<P>) {
        if constexpr (may_descend<P>) {
            if (p.weights_descending()) {
                row_sync_workspace<P, descending_of<P>> rs;
                run_timed(p, c, repeats, rs, tiled, stream, report, last_row);
                return report;
            }
        }
        row_sync_workspace<P, weighted_of<P>> rs;
        run_timed(p, c, repeats, rs, tiled, stream, report, last_row);
    }
    return report;
}

}  // namespace

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
    result.report = run_engine(p, choice, repeats, result.last_row);
    if (keep_all_cells) result.all_cells = all.download(cells);
    return result;
}

#define SWGPU_SYNTHETIC_RUN(P) \
    template problem_result<P::cell> run_synthetic<P>(const P&, const schedule_choice&, bool, int);
SWGPU_FOR_EACH_SYNTHETIC_PROBLEM(SWGPU_SYNTHETIC_RUN)

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
        const run_report r = run_engine(p, choice, 1, last_row);
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
