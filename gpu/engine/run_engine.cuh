// How the engine's facade runs a device problem, as a template any problem can be compiled with: the schedule
// resolved (the hybrid switch and the tuning tables), the executor timed with CUDA events, the last row copied back.
// gpu/engine/engine.cu runs the synthetic problems with it; a domain instantiates it for its own problem in a .cu of
// its own, with the executors (run_row_sync, run_tiled_p2p) for that problem and its algebras (engine_instances.cuh's
// macros; tests/gpu/engine/sw_on_engine.cu does so for Smith-Waterman).
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/engine.hpp"
#include "gpu/engine/engine_instances.cuh"
#include "gpu/engine/hybrid.hpp"

namespace swgpu::gpu::engine_run {

// The current device's architecture, "sm_XY".
std::string device_architecture();

// The problem class the hybrid switch's table is keyed by (data/hybrid_switch.tsv): a problem's own `engine_class`
// where it names one (Smith-Waterman: "sw"), else its operator pair.
template <class P>
const char* problem_class() {
    using op = typename P::op;
    using value = typename op::value;
    if constexpr (requires { P::engine_class; }) return P::engine_class;
    else if constexpr (std::is_same_v<op, max_plus<value>>) return "max_plus";
    else if constexpr (std::is_same_v<op, plus_times<value>>) return "plus_times";
    else return "plus_plus";
}

// The schedule `asked` resolves to for a problem of class `cls` and this shape; usage errors for entries that do
// not exist.
schedule_choice resolve(const schedule_choice& asked, const char* cls, index_t rows, index_t cols);

// Runs `p` with the chosen schedule and scan algebra `Alg`, `repeats` times, each timed with CUDA events into
// report.ms, and leaves its last row (columns 0..cols-1) in last_row.
template <class P, class Alg>
inline void run_timed(const P& p, const schedule_choice& c, int repeats, row_sync_workspace<P, Alg>& rs,
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


}  // namespace swgpu::gpu::engine_run
