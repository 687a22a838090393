// Additions and products rounded one at a time on the host and on the GPU: the GPU compiler may not fuse them into a
// multiply-add, so a computation written with these gives the same bits on both (the 3-D sweeps, SOR).
#pragma once

#include "core/host_device.hpp"

namespace swgpu {

template <class T>
SWGPU_HD T add_rn(T a, T b) {
#ifdef __CUDA_ARCH__
    if constexpr (sizeof(T) == 4) return __fadd_rn(a, b);
    else return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

template <class T>
SWGPU_HD T mul_rn(T a, T b) {
#ifdef __CUDA_ARCH__
    if constexpr (sizeof(T) == 4) return __fmul_rn(a, b);
    else return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

}  // namespace swgpu
