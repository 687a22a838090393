// The GPU wavefront engine as the rest of the program sees it: no CUDA types, no CUDA headers (docs/engine.md).
// Every function here copies host data to the device, runs, copies the results back and throws swgpu::error
// (runtime_failure, or out_of_memory) on any device failure. They exist in CUDA builds only.
//
// Schedules:
//   row_sync    one row at a time across the whole GPU: gather, weighted scan with look-back between blocks, finish;
//               a global barrier between rows (a kernel launch per row, or grid-wide sync in one cooperative launch)
//   tiled_p2p   persistent blocks take tiles in anti-diagonal order; inside a tile each row is gathered, scanned and
//               finished by the block; tiles signal each other through per-tile-row ready counters
//   hybrid      the fitted switch (gpu/engine/hybrid.hpp, data/hybrid_switch.tsv) picks one of the two for the shape
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/engine/linear_map.hpp"
#include "core/engine/operator_pair.hpp"
#include "core/engine/wavefront.hpp"
#include "gpu/engine/synthetic_problems.hpp"

namespace swgpu::gpu {

// ---- weighted scan on host vectors (tests, benchmarks) -------------------------------------------------------------

enum class scan_kind { exclusive, inclusive };

// Number of tuning entries of the device scan; entry -1 means the default for the scan's size and pair.
int scan_tuning_entries();
// The default entry for large scans.
int default_scan_tuning_entry();

// out[j] = value entering (exclusive) or leaving (inclusive) cell j of the row of maps m_j(x) = (x ∘ w) ◇ b[j], with
// x0 entering cell 0. One pass on the device.
template <theorem1_pair Op>
std::vector<typename Op::value> weighted_scan(std::span<const typename Op::value> b, typename Op::value w,
                                              typename Op::value x0, scan_kind kind, int tuning_entry = -1);

// The same for row-varying weights: m_j(x) = (x ∘ a[j]) ◇ b[j].
template <theorem1_pair Op>
std::vector<typename Op::value> map_scan(std::span<const typename Op::value> a, std::span<const typename Op::value> b,
                                         typename Op::value x0, scan_kind kind, int tuning_entry = -1);

// ---- executors ------------------------------------------------------------------------------------------------------

enum class schedule { row_sync, tiled_p2p, hybrid };
enum class row_barrier { launch, grid };

inline const char* schedule_name(schedule s) {
    switch (s) {
        case schedule::row_sync: return "row_sync";
        case schedule::tiled_p2p: return "tiled_p2p";
        case schedule::hybrid: return "hybrid";
    }
    return "?";
}
inline const char* row_barrier_name(row_barrier b) { return b == row_barrier::grid ? "grid" : "launch"; }

// What to run. Defaults: the hybrid picks the schedule, the tuning tables pick the rest.
struct schedule_choice {
    schedule sched = schedule::hybrid;
    int barrier = -1;          // -1 default, else a row_barrier
    int tiled_entry = -1;      // -1 default, else an index into the tiled tuning table
    std::int64_t tile_rows = 0;  // 0 default (the tuning entry's), else rows per tile of tiled_p2p
    bool force_map_scan = false;  // use the general map scan even for constant-weight problems
};

int tiled_tuning_entries();

// What ran, and how long the executor took on the device (CUDA events around it, one value per repeat; the first
// call of a process includes module loading, so benchmarks warm up first).
struct run_report {
    schedule used = schedule::row_sync;
    row_barrier barrier = row_barrier::launch;
    int tiled_entry = 0;
    std::int64_t tile_rows = 0;
    std::int64_t tile_cols = 0;
    std::vector<float> ms;
};

template <class Cell>
struct problem_result {
    std::vector<Cell> last_row;   // cells (rows-1, j), j = 0..cols-1
    std::vector<Cell> all_cells;  // row-major rows × cols, when asked for
    run_report report;
};

// Runs a synthetic problem (gpu/engine/synthetic_problems.hpp) `repeats` times; the result is from the last run.
template <class Problem>
problem_result<typename Problem::cell> run_synthetic(const Problem& p, const schedule_choice& choice,
                                                     bool keep_all_cells, int repeats = 1);

}  // namespace swgpu::gpu
