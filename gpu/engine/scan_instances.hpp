// The operator pairs the GPU weighted scan and map scan of gpu/engine/engine.hpp exist for: gpu/engine/weighted_scan.cu compiles
// them, gpu/without_cuda.cpp defines the same set in a build without CUDA. No CUDA in here.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/engine/operator_pair.hpp"
#include "gpu/engine/engine.hpp"

// X(OP) for every pair.
#define SWGPU_FOR_EACH_SCAN_PAIR(X)                                                                   \
    X(max_plus<std::int32_t>) X(max_plus<float>) X(plus_times<float>) X(plus_times<double>) \
        X(plus_times<std::uint32_t>) X(plus_plus<std::int32_t>) X(plus_plus<float>)

// The explicit instantiations of weighted_scan and map_scan for one pair (inside namespace swgpu::gpu).
#define SWGPU_SCAN_INSTANCE(OP)                                                                                     \
    template std::vector<OP::value> weighted_scan<OP>(std::span<const OP::value>, OP::value, OP::value, scan_kind, \
                                                      int);                                                        \
    template std::vector<OP::value> map_scan<OP>(std::span<const OP::value>, std::span<const OP::value>, OP::value, \
                                                 scan_kind, int);
