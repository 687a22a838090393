// The library face's choice of device for a call (internal to app/swgpu/*.cpp, not installed): backend::gpu without
// a usable GPU is an error; automatic takes the GPU where there is one.
#pragma once

#include <string>

#include "app/swgpu/common.hpp"
#include "core/error.hpp"
#include "gpu/gpu.hpp"

namespace swgpu::detail {

inline bool wants_gpu(backend where) {
    if (where == backend::gpu && !gpu::available())
        throw runtime_failure("backend::gpu: no usable GPU (" + gpu::build_info() + ")");
    return where == backend::gpu || (where == backend::automatic && gpu::available());
}

}  // namespace swgpu::detail
