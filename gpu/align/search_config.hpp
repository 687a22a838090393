// The GPU score pass with its knobs and timings exposed, for tests and benchmark programs. gpu::search (gpu/gpu.hpp)
// is this with the default configuration. CUDA-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/align/search/score_pass.hpp"

namespace swgpu::gpu::detail {

enum class score_kernel {
    dpx16,     // two alignments per word in 16-bit lanes, overflowing ones recomputed in 32 bits (the default)
    dpx32,     // the same kernel with one alignment per word in 32 bits
    simple32,  // the reference: one thread per (query, subject), 32-bit
};

// One launch of the score kernel (one length class and columns-per-thread count), for search_config::launch_log.
struct launch_record {
    int length_class = 0, regs = 0;
    std::size_t tasks = 0, blocks = 0;
    double cells = 0;  // real cells of its tasks
    double ms = 0;
};

struct search_config {
    score_kernel kernel = score_kernel::dpx16;
    std::size_t score_matrix_bytes = std::size_t(1) << 30;  // queries per batch: this / (4 x subjects + 8 x hits kept)
    std::size_t boundary_bytes = std::size_t(2) << 30;      // cap on the inter-pass boundary slots (the budgeted
                                                            // search takes the tuning key search.boundary_mib)
    int blocks_per_sm = 0;                                  // 0: as many as fit
    // When set, the launches run one after another on one stream and each is timed and recorded here.
    std::vector<launch_record>* launch_log = nullptr;
};

struct search_timing {
    double pack_ms = 0;      // sort and pack the database, pair the queries, plan the tasks (host)
    double upload_ms = 0;    // host to device copies, profile building
    double score_ms = 0;     // the score kernels (device time, CUDA events), 32-bit recomputation included
    double rescore_ms = 0;   // of which the 32-bit recomputation of overflowing lanes
    double select_ms = 0;    // copy scores back and select the top hits (host)
    double total_ms = 0;     // the whole call
    std::uint64_t cells = 0;             // sum over queries of query length x database residues
    std::uint64_t overflow_lanes = 0;    // 16-bit lanes recomputed in 32 bits
    int batches = 0;
    int blocks = 0;                      // persistent blocks of the score kernel
};

std::vector<std::vector<score_hit>> search(const sequence_set& queries, const sequence_set& db, const scoring& sc,
                                           const search_options& opt, const search_config& cfg,
                                           search_timing* timing = nullptr);

}  // namespace swgpu::gpu::detail
