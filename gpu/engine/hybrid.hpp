// The hybrid switch between the GPU schedules (docs/engine.md): a multinomial logistic model over the schedule
// configurations (gpu_row_sync with each row barrier, gpu_tiled_p2p with each tuning entry), fitted offline by
// tests/bench/bench_schedules over measured shapes and stored as data (data/hybrid_switch.tsv, compiled in). For a
// shape of `rows` × `cols` cells, with
//   size = (log2(rows) + log2(cols) - 30) / 4,   aspect = (log2(rows) - log2(cols)) / 8,
// each candidate configuration scores  c0 + c_size·size + c_aspect·aspect + c_aspect2·aspect²  and the highest score
// runs. The candidates of one (device architecture, problem class) form a group; the most specific group that matches
// is used, "*" matching anything. CUDA-free.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/engine/engine.hpp"

namespace swgpu::gpu {

struct hybrid_candidate {
    std::string device = "*";         // "sm_90", or "*"
    std::string problem_class = "*";  // "sw", "max_plus", "plus_times", "plus_plus", or "*"
    schedule sched = schedule::row_sync;
    row_barrier barrier = row_barrier::launch;
    int tiled_entry = 0;
    std::int64_t tile_rows = 0;  // 0: the tuning entry's
    double c0 = 0, c_size = 0, c_aspect = 0, c_aspect2 = 0;

    double score(std::int64_t rows, std::int64_t cols) const;
    schedule_choice choice() const;
};

class hybrid_switch {
public:
    // Parses the TSV text (comment lines start with '#'; columns as written by to_tsv). `source` names it in errors.
    static hybrid_switch parse(std::string_view tsv, const std::string& source);
    std::string to_tsv(const std::string& header_comment) const;

    // The concrete schedule for a shape: the best-scoring candidate of the most specific matching group; fields the
    // caller set in `asked` (schedule, barrier, tiled entry, tile rows, force_map_scan) are kept. Without any matching
    // candidate: row_sync with the launch barrier, tiled entry 0.
    schedule_choice plan(const std::string& device, const std::string& problem_class, std::int64_t rows,
                         std::int64_t cols, const schedule_choice& asked) const;

    std::vector<hybrid_candidate> candidates;
};

// The switch the engine uses: the compiled-in data/hybrid_switch.tsv unless replaced (bench_schedules installs the one
// it just fitted, to measure it).
const hybrid_switch& active_hybrid_switch();
void install_hybrid_switch(hybrid_switch s);

// One measured shape: the device time of every candidate configuration, in the order of `configs` below.
struct hybrid_sample {
    std::int64_t rows, cols;
    std::vector<double> ms;
};

// Fits the coefficients of `configs` (their schedule fields set; coefficients are overwritten): multinomial logistic
// regression on soft labels that favour the configurations within a few percent of the fastest at each shape (see
// hybrid.cpp). Returns, for each sample, the slowdown (time / fastest time) of the configuration the model picks.
std::vector<double> fit_hybrid(std::vector<hybrid_candidate>& configs, const std::vector<hybrid_sample>& samples);

}  // namespace swgpu::gpu
