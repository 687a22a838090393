// The box filter's engine (core/numerics/box_filter_kernel.hpp) compiled for AVX2 and for AVX-512, in
// box_filter_avx2.cpp and box_filter_avx512.cpp; box_filter (core/numerics/box_filter.cpp) calls the one the CPU runs
// (core/align/simd/isa.hpp), else the baseline copy. All three give the same bits: the sums are exact and every
// rounding is the same IEEE operation.
#pragma once

#include "core/align/simd/isa.hpp"
#include "core/numerics/sat.hpp"
#include "core/thread_pool.hpp"

namespace swgpu::sat {

// Where the filter's rows go: into `whole` (the output array's elements), or, when it is null, to `sink` in blocks of
// rows (box_filter_rows).
struct box_output {
    void* whole = nullptr;
    const rows_sink* sink = nullptr;
};

#if defined(SWGPU_X86_KERNELS)
void box_filter_avx2(const array& in, const box_output& out, index_t radius, thread_pool& pool);
void box_filter_avx512(const array& in, const box_output& out, index_t radius, thread_pool& pool);
#endif

}  // namespace swgpu::sat
