// The GPU backend as the rest of the program sees it: no CUDA types, no CUDA headers. Built from the .cu files of this
// folder when a CUDA compiler is found, else from without_cuda.cpp, whose available() is false.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/align/alignment.hpp"
#include "core/align/long_pair/long_pair.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/simd/align_scored.hpp"

namespace swgpu::gpu {

struct device_info {
    int index = -1;
    std::string name;
    int multiprocessors = 0;
    int compute_major = 0, compute_minor = 0;
    std::size_t total_memory = 0, free_memory = 0;
};

// True when this build has the CUDA backend and at least one device can be used.
bool available();
// True when this build has the CUDA backend (whether or not a device can be used).
bool built_with_cuda();
// The usable devices (CUDA_VISIBLE_DEVICES honoured); empty without CUDA or devices.
std::vector<device_info> devices();
// The number of visible devices (0 without CUDA or devices); creates no context.
int device_count();
// Device `index`'s architecture as the tuning table names it ("sm_90"), "*" without CUDA or that device; creates no
// context and leaves the calling thread's device as it was.
std::string architecture(int index);
// Makes `index` the current device of the calling thread (every GPU call of that thread then goes to it).
void use_device(int index);
// Free memory of device `index` (the calling thread's current device stays what it was).
std::size_t free_memory(int index);
// Creates the device context of the current device and loads the kernels that run after the search (it otherwise
// happens inside the first search and the first align_scored), so that a caller can overlap it with other work.
// keep_align_memory: also maps device memory for align_scored now (2 GiB or an eighth of what is free, whichever is
// less) and keeps it in the device's memory pool, so that its allocations cost next to nothing later. Throws swgpu::error (runtime_failure) on device failure; no-op without CUDA.
void warm_up(bool keep_align_memory = false);
// warm_up in two steps: the context (what a search needs), then the alignments' kernels and, with
// keep_align_memory, their memory (what only the printed hits' alignments need, after the score pass).
void start_device();
void prepare_alignments(bool keep_align_memory);
// Creates the context of device `index` from the calling thread (whose current device becomes `index`), errors left
// for the device's first real use to report. Several GPUs: the driver starts them one after the other otherwise, each
// in the thread that first uses it; calling this from a thread per device at start-up overlaps that with other work.
void start_context(int index) noexcept;
// One line saying how the GPU backend was built ("CUDA 13.0, sm_90" or "built without CUDA").
std::string build_info();

// The database-search score pass on the GPU: the same contract and results as swgpu::search_cpu. Throws swgpu::error
// (runtime_failure, or out_of_memory after trying smaller batches) on device failure.
std::vector<std::vector<score_hit>> search(const sequence_set& queries, const sequence_set& db, const scoring& sc,
                                           const search_options& opt);

// The GPU score pass's work on a database chunk that can be done ahead, on another thread, while the previous chunk is
// searched: sorting and packing it, and copying it to the device when no memory budget is given (device_memory 0) and
// it takes at most an eighth of the free device memory. search() uses it when opt.prepared is its result for that
// chunk. nullptr when there is nothing to prepare (without CUDA, an unencoded or empty chunk).
std::unique_ptr<prepared_chunk> prepare_chunk(const sequence_set& db, const scoring& sc, std::size_t device_memory = 0);

// The alignments of printed hits on the GPU (gpu/align/hit_alignments.cu): out[k] is sw_align_scored(pairs[k]) (the alignment
// sw_align gives), or nullopt where the GPU did not align pairs[k]: its score is not the pair's best, its scores could
// overflow 32-bit cells, or its trace does not fit `device_memory` (0: what is free) on its own. The caller aligns those
// on the CPU, which also reports a wrong score. Throws swgpu::error on device failure.
// `timing`, when given, receives where the time went (for benchmarks).
struct align_timing {
    double total_s = 0;    // the whole call
    double prepare_s = 0;  // host work, allocations and uploads before the kernels
    double kernel_s = 0;   // the kernels, fill and traceback (CUDA events)
    std::size_t batches = 0, pairs = 0;
    double cells = 0;      // query x subject cells of the pairs aligned on the device
};
std::vector<std::optional<alignment>> align_scored(std::span<const scored_pair> pairs, const scoring& sc,
                                                   std::size_t device_memory = 0, align_timing* timing = nullptr);

// Long pairs (gpu/align/long_pair.cu): the rectangle operations of core/align/long_pair/long_pair.hpp on the current device, for one pair
// (query rows, subject columns, encoded with sc's matrix; both spans must outlive the backend). Grids stay in device
// memory; they may take a quarter of `device_memory` (0: what is free). Throws swgpu::error on device failure.
// With several `devices` (indices for use_device; one may repeat: logical devices, run one after the other), the
// forward pass of a large rectangle is split over them (gpu/align/long_pair_multi.cu: by rows into slabs, or by columns
// with the tuning key long.split=columns) and its grid gathered on the first; results are those of one device.
std::unique_ptr<long_pair::backend> long_pair_backend(std::span<const std::uint8_t> query,
                                                      std::span<const std::uint8_t> subject, const scoring& sc,
                                                      std::size_t device_memory = 0, std::vector<int> devices = {});

}  // namespace swgpu::gpu
