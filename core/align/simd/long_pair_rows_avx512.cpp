// The CPU long-pair group kernel for AVX-512 (16 lanes of 32 bits), from core/align/simd/long_pair_rows.hpp; called
// only when the CPU reports AVX-512BW (simd::isa::avx512bw).
#include "core/align/simd/isa.hpp"  // SWGPU_X86_KERNELS

#if defined(SWGPU_X86_KERNELS)
// What the kernel header includes comes first: the target region covers only the kernel itself.
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "core/align/simd/isa_target.hpp"

SWGPU_ISA_BEGIN(avx512bw)

// Included inside the region, so that the kernel template is compiled for it.
#include "core/align/simd/long_pair_rows.hpp"

namespace swgpu::long_pair::rows {
int run_group_avx512(const group& g) { return run_group<16>(g); }
int run_group16_avx512(const group& g) { return run_group16<32>(g); }
}  // namespace swgpu::long_pair::rows

SWGPU_ISA_END(avx512bw)
#endif
