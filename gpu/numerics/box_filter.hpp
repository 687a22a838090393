// The box filter on the GPU (gpu/numerics/box_filter.cu), as the rest of the program sees it: no CUDA types. The same
// filter as sat::box_filter (core/numerics/box_filter.cpp: the mean of every (2R+1)² window under BORDER_REFLECT_101)
// and the same bits for every dtype:
//   integers  exact window sums in 32-, 64- or 128-bit words (the width the CPU picks), the mean rounded to nearest:
//             the exactly rounded mean, which is what the CPU writes;
//   floats    exact window sums too, as fixed-point integers (x · 2^s, s from the least exponent of the image, int64
//             or 128-bit as the exponent range needs; the CPU's plan, so images whose magnitudes span too much for
//             127 bits are rounded to multiples of 2^-s exactly as there), then the CPU's final rounding reproduced:
//             float32 through the same double operations, float64 by emulating the CPU's long double steps (64-bit
//             significand) in integer arithmetic. So within 1 ulp of the exact mean, and equal to the CPU's bits.
// A block takes 512 consecutive elements of a band of 32 rows: the vertical window sums of its columns (and a halo of
// R pixels either side, reflected) are kept in shared memory and moved down one row at a time, each output is the
// horizontal sum of 2R+1 of them. Input read about once, output written once.
// A build without CUDA has stubs that throw runtime_failure (gpu/without_cuda.cpp).
#pragma once

#include <cstddef>

#include "core/numerics/sat.hpp"

namespace swgpu::gpu {

// Whether the GPU filter takes this shape and radius (the halo of R pixels of sums must fit shared memory; rows of
// fewer than 2^31 elements).
bool box_filter_supported(sat::dtype type, index_t rows, index_t cols, index_t lanes, index_t radius);

// The filtered image, as sat::box_filter(in, radius, ...) (same errors: usage_error for R < 0, input_error for an
// empty image or NaN/infinite values); `kernel_ms`, when given, receives the device time of the filter (CUDA events,
// transfers excluded).
sat::array box_filter(const sat::array& in, index_t radius, float* kernel_ms = nullptr);

// Device-resident: `in` and `out` are device memory of rows x cols x lanes elements of `type`, `workspace` device
// memory of box_filter_workspace_bytes(), `stream` a cudaStream_t (nullptr: the default stream). Nothing is
// synchronised; float images are checked for NaN and infinities on the device (the output is then left unwritten),
// and box_filter_input_was_finite reads that verdict afterwards (it synchronises the stream).
std::size_t box_filter_workspace_bytes();
void box_filter_device(sat::dtype type, const void* in, void* out, index_t rows, index_t cols, index_t lanes, index_t radius,
                       void* workspace, void* stream = nullptr);
bool box_filter_input_was_finite(sat::dtype type, const void* workspace, void* stream = nullptr);

}  // namespace swgpu::gpu
