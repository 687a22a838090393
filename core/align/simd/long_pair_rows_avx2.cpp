// The CPU long-pair group kernel for AVX2 (8 lanes of 32 bits), from core/align/simd/long_pair_rows.hpp; called
// only when the CPU reports AVX2 (simd::isa::avx2).
#include "core/align/simd/isa.hpp"  // SWGPU_X86_KERNELS

#if defined(SWGPU_X86_KERNELS)
// What the kernel header includes comes first: the target region covers only the kernel itself.
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "core/align/simd/isa_target.hpp"

SWGPU_ISA_BEGIN(avx2)

// Included inside the region, so that the kernel template is compiled for it.
#include "core/align/simd/long_pair_rows.hpp"

namespace swgpu::long_pair::rows {
int run_group_avx2(const group& g) { return run_group<8>(g); }
int run_group16_avx2(const group& g) { return run_group16<16>(g); }
}  // namespace swgpu::long_pair::rows

SWGPU_ISA_END(avx2)
#endif
