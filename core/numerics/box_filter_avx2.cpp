// The box filter's engine compiled for AVX2 whatever the compiler flags (core/numerics/box_filter_isa.hpp); called
// only when the CPU reports it.
#include "core/numerics/box_filter_isa.hpp"

#if defined(SWGPU_X86_KERNELS)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/align/simd/isa_target.hpp"
#include "core/error.hpp"
#include "core/numerics/sat.hpp"
#include "core/thread_pool.hpp"

SWGPU_ISA_BEGIN(avx2)

#include "core/numerics/box_filter_kernel.hpp"

namespace swgpu::sat {

void box_filter_avx2(const array& in, const box_output& out, index_t radius, thread_pool& pool) {
    box_filter_kernel(in, out, radius, pool);
}

}  // namespace swgpu::sat

SWGPU_ISA_END(avx2)

#endif
