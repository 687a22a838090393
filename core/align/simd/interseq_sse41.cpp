// Inter-sequence kernels for SSE4.1 (16 lanes of 8 bits, 8 lanes of 16 bits): the fallback for any x86-64 CPU from
// about 2008 on. Built for SSE4.1 whatever the compiler flags; called only when the CPU reports it.
#include "core/align/simd/interseq.hpp"

#if defined(SWGPU_X86_KERNELS)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/align/simd/isa_target.hpp"

SWGPU_ISA_BEGIN(sse41)

#include "core/align/simd/interseq_kernel.hpp"

namespace swgpu::interseq {
namespace {

// Look-up of a 32-entry byte table row with pshufb, which indexes 16 bytes by the low 4 bits and yields 0 where the
// index has its top bit set: `low` is valid (top bit clear) exactly for codes 0..15, `high` for codes 16..31.
struct sse_index {
    __m128i low, high;
};
inline sse_index sse_index_of(__m128i codes) {
    return {_mm_adds_epu8(codes, _mm_set1_epi8(0x70)), _mm_sub_epi8(codes, _mm_set1_epi8(16))};
}
inline __m128i sse_lookup(const sse_index& x, const std::int8_t* row32) {
    const auto* row = reinterpret_cast<const __m128i*>(row32);
    return _mm_or_si128(_mm_shuffle_epi8(_mm_load_si128(row), x.low), _mm_shuffle_epi8(_mm_load_si128(row + 1), x.high));
}

// Lanes hold H - 128.
struct sse41_i8 {
    using vec = __m128i;
    static constexpr unsigned lanes = 16;
    struct consts {
        vec open_extend, extend;
    };
    static consts make_consts(const score_tables& t) {
        return {_mm_set1_epi8(static_cast<char>(t.gap_open_extend8)), _mm_set1_epi8(static_cast<char>(t.gap_extend8))};
    }
    static int limit(const score_tables& t) { return t.limit8; }
    using column_index = sse_index;
    static column_index index_column(const std::uint8_t* r) {
        return sse_index_of(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r)));
    }
    static vec lookup(const column_index& x, const score_tables& t, int a) {
        return sse_lookup(x, t.raw.data() + a * table_width);
    }
    static vec zero() { return _mm_set1_epi8(-128); }
    static vec max(vec a, vec b) { return _mm_max_epi8(a, b); }
    static vec adds(vec a, vec b) { return _mm_adds_epi8(a, b); }
    static vec subs(vec a, vec b) { return _mm_subs_epi8(a, b); }
    using reset_mask = __m128i;
    static reset_mask load_starts(const std::uint8_t* s) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)); }
    static bool any(reset_mask m) { return _mm_movemask_epi8(m) != 0; }
    static vec reset(vec x, reset_mask m, vec zero) { return _mm_blendv_epi8(x, zero, m); }
    static void store_values(vec v, int* out) {
        alignas(16) std::int8_t b[lanes];
        _mm_store_si128(reinterpret_cast<__m128i*>(b), v);
        for (unsigned l = 0; l < lanes; ++l) out[l] = b[l] + 128;
    }
};

// Lanes hold H - 32768.
struct sse41_i16 {
    using vec = __m128i;
    static constexpr unsigned lanes = 8;
    struct consts {
        vec open_extend, extend;
    };
    static consts make_consts(const score_tables& t) {
        return {_mm_set1_epi16(static_cast<short>(t.gap_open_extend16)),
                _mm_set1_epi16(static_cast<short>(t.gap_extend16))};
    }
    static int limit(const score_tables& t) { return t.limit16; }
    using column_index = sse_index;
    static column_index index_column(const std::uint8_t* r) {
        return sse_index_of(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r)));
    }
    static vec lookup(const column_index& x, const score_tables& t, int a) {
        return _mm_cvtepi8_epi16(sse_lookup(x, t.raw.data() + a * table_width));
    }
    static vec zero() { return _mm_set1_epi16(-32768); }
    static vec max(vec a, vec b) { return _mm_max_epi16(a, b); }
    static vec adds(vec a, vec b) { return _mm_adds_epi16(a, b); }
    static vec subs(vec a, vec b) { return _mm_subs_epi16(a, b); }
    using reset_mask = __m128i;
    static reset_mask load_starts(const std::uint8_t* s) {
        return _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s)));
    }
    static bool any(reset_mask m) { return _mm_movemask_epi8(m) != 0; }
    static vec reset(vec x, reset_mask m, vec zero) { return _mm_blendv_epi8(x, zero, m); }
    static void store_values(vec v, int* out) {
        alignas(16) std::int16_t b[lanes];
        _mm_store_si128(reinterpret_cast<__m128i*>(b), v);
        for (unsigned l = 0; l < lanes; ++l) out[l] = b[l] + 32768;
    }
};

}  // namespace
}  // namespace swgpu::interseq

SWGPU_ISA_END(sse41)

namespace swgpu::interseq {

const kernel_set* sse41_kernel_set() {
    static const kernel_set set{simd::isa::sse41, sse41_i8::lanes, sse41_i16::lanes, 4, &score_batch<sse41_i8, 4>,
                                &score_batch<sse41_i16, 4>};
    return &set;
}

}  // namespace swgpu::interseq

#else

namespace swgpu::interseq {
const kernel_set* sse41_kernel_set() { return nullptr; }
}  // namespace swgpu::interseq

#endif
