// Lane operations on AVX-512BW vectors that more than one kernel family uses (interseq_avx512.cpp,
// align_scored_avx512.cpp): the base of each family's lane type, which adds the operations of its own. Compiled for
// AVX-512BW here, in a region of its own (core/align/simd/isa_target.hpp), with internal linkage: include it before
// the family's region.
#pragma once

#include "core/align/simd/isa.hpp"

#if defined(SWGPU_X86_KERNELS)

#include <immintrin.h>

#include <cstdint>

#include "core/align/simd/isa_target.hpp"

SWGPU_ISA_BEGIN(avx512bw)

namespace swgpu::simd {
namespace {

// 64 lanes of 8 bits, saturating.
struct avx512_i8 {
    using vec = __m512i;
    using elem = std::int8_t;
    static constexpr unsigned lanes = 64;
    static vec set1(int x) { return _mm512_set1_epi8(static_cast<char>(x)); }
    static vec max(vec a, vec b) { return _mm512_max_epi8(a, b); }
    static vec adds(vec a, vec b) { return _mm512_adds_epi8(a, b); }
    static vec subs(vec a, vec b) { return _mm512_subs_epi8(a, b); }
};

// 32 lanes of 16 bits, saturating.
struct avx512_i16 {
    using vec = __m512i;
    using elem = std::int16_t;
    static constexpr unsigned lanes = 32;
    static vec set1(int x) { return _mm512_set1_epi16(static_cast<short>(x)); }
    static vec max(vec a, vec b) { return _mm512_max_epi16(a, b); }
    static vec adds(vec a, vec b) { return _mm512_adds_epi16(a, b); }
    static vec subs(vec a, vec b) { return _mm512_subs_epi16(a, b); }
};

}  // namespace
}  // namespace swgpu::simd

SWGPU_ISA_END(avx512bw)

#endif
