// The CPU kernels of the 3-D sweeps (core/numerics/sweep3d_kernel.hpp), compiled for the baseline in sweep3d.cpp and,
// on x86, for AVX2 with FMA (sweep3d_avx2.cpp) and AVX-512 (sweep3d_avx512.cpp); sweep3d.cpp calls the copy the CPU
// runs. Every copy gives the same bits: each addition, product, division and remainder is the same IEEE operation
// in the same order, only more of them run at once.
#pragma once

#include <cstddef>

#include "core/align/simd/isa.hpp"
#include "core/numerics/sweep3d.hpp"

namespace swgpu::sweep3d::detail {

// One 3-D tile [i0, i1) x [j0, j1) x [k0, k1) of the grid.
struct box {
    index_t i0, i1, j0, j1, k0, k1;
};

// The fmod sweep: the grid (row-major, N^3), L, C and fl(1/C) (the exact fmod's reciprocal), and the ten initial
// values d / 10.
template <class T>
struct fmod_job {
    T* a;
    index_t n;
    int loops;
    T c, inverse;
    T values[10];
};

// The diamond-difference sweep: the scalar flux, the face fluxes laid out [plane position][angle] (angle innermost),
// the coefficients per angle, the source and the weight 1/A.
template <class T>
struct dd_job {
    T* phi;
    T *fx, *fy, *fz;
    const T *cx, *cy, *cz, *denominator;
    index_t n;
    int angles;
    T source, weight;
};

#if defined(SWGPU_X86_KERNELS)
#define SWGPU_SWEEP3D_ISA_DECLARE(isa)                                                                    \
    void fmod_block_##isa(const fmod_job<float>& job, const box& b);                                      \
    void fmod_block_##isa(const fmod_job<double>& job, const box& b);                                     \
    void dd_block_##isa(const dd_job<float>& job, const box& b);                                          \
    void dd_block_##isa(const dd_job<double>& job, const box& b);                                         \
    bool fmod_array_##isa(const float* x, float* r, std::size_t count, float c, float inverse);            \
    bool fmod_array_##isa(const double* x, double* r, std::size_t count, double c, double inverse);       \
    float fmod_chain_##isa(float x, float step, std::size_t count, float c, float inverse);               \
    double fmod_chain_##isa(double x, double step, std::size_t count, double c, double inverse);
SWGPU_SWEEP3D_ISA_DECLARE(avx2)
SWGPU_SWEEP3D_ISA_DECLARE(avx512)
#undef SWGPU_SWEEP3D_ISA_DECLARE
#endif

}  // namespace swgpu::sweep3d::detail
