// Compiling part of a translation unit for one instruction set of core/align/simd/isa.hpp, whatever the compiler
// flags:
//
//     #include <immintrin.h>, and every other header the region needs (the region covers only this file's own code)
//     SWGPU_ISA_BEGIN(avx2)
//     ... kernels, in an anonymous namespace (see below) ...
//     SWGPU_ISA_END(avx2)
//
// with sse41, avx2 or avx512bw. GCC: push_options, target(features) ... pop_options; Clang: the target attribute
// pushed onto every function declared in the region. Code of the region is called only where simd::cpu_supports says
// the CPU runs it. Whatever a region defines that is inline or a template must have internal linkage (an anonymous
// namespace), or the linker could pick the copy built for one instruction set for a caller on another path.
#pragma once

#define SWGPU_ISA_PRAGMA(text) _Pragma(#text)

// The target features of each instruction set.
#define SWGPU_ISA_FEATURES_sse41 "sse4.1"
#define SWGPU_ISA_FEATURES_avx2 "avx2"
#define SWGPU_ISA_FEATURES_avx512bw "avx2,avx512f,avx512bw"
// With fused multiply-add (the exact fmod of core/numerics/sweep3d_kernel.hpp); the caller checks the CPU's "fma".
#define SWGPU_ISA_FEATURES_avx2fma "avx2,fma"
#define SWGPU_ISA_FEATURES_avx512fma "avx2,fma,avx512f,avx512bw"

#if defined(__clang__)
#define SWGPU_ISA_TARGET_PUSH(features) \
    SWGPU_ISA_PRAGMA(clang attribute push(__attribute__((target(features))), apply_to = function))
#define SWGPU_ISA_TARGET_POP SWGPU_ISA_PRAGMA(clang attribute pop)
#define SWGPU_ISA_WARNINGS_PUSH_sse41
#define SWGPU_ISA_WARNINGS_PUSH_avx2
#define SWGPU_ISA_WARNINGS_PUSH_avx512bw
#define SWGPU_ISA_WARNINGS_PUSH_avx2fma
#define SWGPU_ISA_WARNINGS_PUSH_avx512fma
#define SWGPU_ISA_WARNINGS_POP_sse41
#define SWGPU_ISA_WARNINGS_POP_avx2
#define SWGPU_ISA_WARNINGS_POP_avx512bw
#define SWGPU_ISA_WARNINGS_POP_avx2fma
#define SWGPU_ISA_WARNINGS_POP_avx512fma
#else
#define SWGPU_ISA_TARGET_PUSH(features) SWGPU_ISA_PRAGMA(GCC push_options) SWGPU_ISA_PRAGMA(GCC target(features))
#define SWGPU_ISA_TARGET_POP SWGPU_ISA_PRAGMA(GCC pop_options)
#define SWGPU_ISA_WARNINGS_PUSH_sse41
#define SWGPU_ISA_WARNINGS_PUSH_avx2
#define SWGPU_ISA_WARNINGS_PUSH_avx2fma
// GCC 12 warns about the deliberately undefined lanes inside the AVX-512 set1, broadcast and mask intrinsics.
#define SWGPU_ISA_WARNINGS_PUSH_avx512bw \
    SWGPU_ISA_PRAGMA(GCC diagnostic push) SWGPU_ISA_PRAGMA(GCC diagnostic ignored "-Wmaybe-uninitialized")
#define SWGPU_ISA_WARNINGS_PUSH_avx512fma SWGPU_ISA_WARNINGS_PUSH_avx512bw
#define SWGPU_ISA_WARNINGS_POP_sse41
#define SWGPU_ISA_WARNINGS_POP_avx2
#define SWGPU_ISA_WARNINGS_POP_avx2fma
#define SWGPU_ISA_WARNINGS_POP_avx512bw SWGPU_ISA_PRAGMA(GCC diagnostic pop)
#define SWGPU_ISA_WARNINGS_POP_avx512fma SWGPU_ISA_WARNINGS_POP_avx512bw
#endif

#define SWGPU_ISA_BEGIN(name) SWGPU_ISA_TARGET_PUSH(SWGPU_ISA_FEATURES_##name) SWGPU_ISA_WARNINGS_PUSH_##name
#define SWGPU_ISA_END(name) SWGPU_ISA_WARNINGS_POP_##name SWGPU_ISA_TARGET_POP
