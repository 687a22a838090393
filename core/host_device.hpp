// One macro marks code that runs on host and device; empty when the compiler is not nvcc.
#pragma once
#if defined(__CUDACC__)
#define SWGPU_HD __host__ __device__ __forceinline__
#else
#define SWGPU_HD inline
#endif
