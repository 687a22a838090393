// Lane operations on AVX2 vectors that more than one kernel family uses (interseq_avx2.cpp, align_scored_avx2.cpp):
// the base of each family's lane type, which adds the operations of its own. Compiled for AVX2 here, in a region of
// its own (core/align/simd/isa_target.hpp), with internal linkage: include it before the family's region.
#pragma once

#include "core/align/simd/isa.hpp"

#if defined(SWGPU_X86_KERNELS)

#include <immintrin.h>

#include <cstdint>

#include "core/align/simd/isa_target.hpp"

SWGPU_ISA_BEGIN(avx2)

namespace swgpu::simd {
namespace {

// 32 lanes of 8 bits, saturating.
struct avx2_i8 {
    using vec = __m256i;
    using elem = std::int8_t;
    static constexpr unsigned lanes = 32;
    static vec set1(int x) { return _mm256_set1_epi8(static_cast<char>(x)); }
    static vec max(vec a, vec b) { return _mm256_max_epi8(a, b); }
    static vec adds(vec a, vec b) { return _mm256_adds_epi8(a, b); }
    static vec subs(vec a, vec b) { return _mm256_subs_epi8(a, b); }
};

// 16 lanes of 16 bits, saturating.
struct avx2_i16 {
    using vec = __m256i;
    using elem = std::int16_t;
    static constexpr unsigned lanes = 16;
    static vec set1(int x) { return _mm256_set1_epi16(static_cast<short>(x)); }
    static vec max(vec a, vec b) { return _mm256_max_epi16(a, b); }
    static vec adds(vec a, vec b) { return _mm256_adds_epi16(a, b); }
    static vec subs(vec a, vec b) { return _mm256_subs_epi16(a, b); }
};

}  // namespace
}  // namespace swgpu::simd

SWGPU_ISA_END(avx2)

#endif
