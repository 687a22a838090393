// The 3-D sweeps' CPU kernels compiled for AVX2 with FMA whatever the compiler flags (core/numerics/sweep3d_isa.hpp);
// called only when the CPU reports it (sweep3d::kernel_isas).
#include "core/numerics/sweep3d_isa.hpp"

#if defined(SWGPU_X86_KERNELS)

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/align/simd/isa_target.hpp"
#include "core/numerics/sweep3d.hpp"

#define SWGPU_SWEEP3D_VECTOR 256
SWGPU_ISA_BEGIN(avx2fma)

#include "core/numerics/sweep3d_kernel.hpp"

namespace swgpu::sweep3d::detail {

void fmod_block_avx2(const fmod_job<float>& job, const box& b) { fmod_block_kernel<float, 256>(job, b); }
void fmod_block_avx2(const fmod_job<double>& job, const box& b) { fmod_block_kernel<double, 256>(job, b); }
void dd_block_avx2(const dd_job<float>& job, const box& b) { dd_block_kernel<float, 256>(job, b); }
void dd_block_avx2(const dd_job<double>& job, const box& b) { dd_block_kernel<double, 256>(job, b); }
bool fmod_array_avx2(const float* x, float* r, std::size_t count, float c, float inverse) {
    return fmod_array_kernel<float>(x, r, count, c, inverse);
}
bool fmod_array_avx2(const double* x, double* r, std::size_t count, double c, double inverse) {
    return fmod_array_kernel<double>(x, r, count, c, inverse);
}
float fmod_chain_avx2(float x, float step, std::size_t count, float c, float inverse) {
    return fmod_chain_kernel<float, true>(x, step, count, c, inverse);
}
double fmod_chain_avx2(double x, double step, std::size_t count, double c, double inverse) {
    return fmod_chain_kernel<double, true>(x, step, count, c, inverse);
}

}  // namespace swgpu::sweep3d::detail

SWGPU_ISA_END(avx2fma)

#endif
