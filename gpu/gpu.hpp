// The GPU backend as the rest of the program sees it: no CUDA types, no CUDA headers. Built from the .cu files of this
// folder when a CUDA compiler is found, else from without_cuda.cpp, whose available() is false.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/search.hpp"

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
// The usable devices (CUDA_VISIBLE_DEVICES honoured); empty without CUDA or devices.
std::vector<device_info> devices();
// Creates the device context of the current device now (it otherwise happens inside the first search), so that a
// caller can overlap it with other work. Throws swgpu::error (runtime_failure) on device failure; no-op without CUDA.
void warm_up();
// One line saying how the GPU backend was built ("CUDA 13.0, sm_90" or "built without CUDA").
std::string build_info();

// The database-search score pass on the GPU: the same contract and results as swgpu::search_cpu. Throws swgpu::error
// (runtime_failure, or out_of_memory after trying smaller batches) on device failure.
std::vector<std::vector<score_hit>> search(const sequence_set& queries, const sequence_set& db, const scoring& sc,
                                           const search_options& opt);

}  // namespace swgpu::gpu
