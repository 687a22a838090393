// The CPU long-pair group kernel for AVX2 (8 lanes of 32 bits), from core/align/simd/long_pair_rows.hpp; called only when the
// CPU reports AVX2.
#include "core/align/simd/interseq.hpp"  // SWGPU_X86_KERNELS

#if defined(SWGPU_X86_KERNELS)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

// Included after the target pragma, so that the kernel template is compiled for it.
#include "core/align/simd/long_pair_rows.hpp"

namespace swgpu::long_pair::rows {
int run_group_avx2(const group& g) { return run_group<8>(g); }
}  // namespace swgpu::long_pair::rows

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
