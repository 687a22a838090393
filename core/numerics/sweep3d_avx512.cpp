// The 3-D sweeps' CPU kernels compiled for AVX-512 (F, BW) with FMA whatever the compiler flags
// (core/numerics/sweep3d_isa.hpp); called only when the CPU reports it (sweep3d::kernel_isas).
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

#define SWGPU_SWEEP3D_VECTOR 512
SWGPU_ISA_BEGIN(avx512fma)

#include "core/numerics/sweep3d_kernel.hpp"

namespace swgpu::sweep3d::detail {

// The fmod sweep on 512-bit vectors (on a 2-core AMD EPYC at N = 160, 16^3 tiles: 10-30 % faster than 256-bit ones,
// whose fewer idle lanes at the tile's wavefront edges do not make up for half the width); the dd sweep on 256-bit
// vectors where a cell's angles fit in one (8 angles in single: 1.4 times faster than a half-masked 512-bit one).
namespace {
template <class T>
void fmod_block_512(const fmod_job<T>& job, const box& b) {
    fmod_block_kernel<T, 512>(job, b);
}
template <class T>
void dd_block_512(const dd_job<T>& job, const box& b) {
    if (static_cast<std::size_t>(job.angles) * sizeof(T) <= 32) dd_block_kernel<T, 256>(job, b);
    else dd_block_kernel<T, 512>(job, b);
}
}  // namespace

void fmod_block_avx512(const fmod_job<float>& job, const box& b) { fmod_block_512(job, b); }
void fmod_block_avx512(const fmod_job<double>& job, const box& b) { fmod_block_512(job, b); }
void dd_block_avx512(const dd_job<float>& job, const box& b) { dd_block_512(job, b); }
void dd_block_avx512(const dd_job<double>& job, const box& b) { dd_block_512(job, b); }
bool fmod_array_avx512(const float* x, float* r, std::size_t count, float c, float inverse) {
    return fmod_array_kernel<float>(x, r, count, c, inverse);
}
bool fmod_array_avx512(const double* x, double* r, std::size_t count, double c, double inverse) {
    return fmod_array_kernel<double>(x, r, count, c, inverse);
}
float fmod_chain_avx512(float x, float step, std::size_t count, float c, float inverse) {
    return fmod_chain_kernel<float, true>(x, step, count, c, inverse);
}
double fmod_chain_avx512(double x, double step, std::size_t count, double c, double inverse) {
    return fmod_chain_kernel<double, true>(x, step, count, c, inverse);
}

}  // namespace swgpu::sweep3d::detail

SWGPU_ISA_END(avx512fma)

#endif
