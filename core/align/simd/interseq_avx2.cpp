// Inter-sequence kernels for AVX2 (32 lanes of 8 bits, 16 lanes of 16 bits). Built for AVX2 whatever the compiler
// flags; called only when the CPU reports it.
#include "core/align/simd/interseq.hpp"

#if defined(SWGPU_X86_KERNELS)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/align/simd/isa_target.hpp"
#include "core/align/simd/lanes_avx2.hpp"

SWGPU_ISA_BEGIN(avx2)

#include "core/align/simd/interseq_kernel.hpp"

namespace swgpu::interseq {
namespace {

// Look-up of a 32-entry byte table row with pshufb, which indexes 16 bytes (per 128-bit half) by the low 4 bits and
// yields 0 where the index has its top bit set: `low` is valid exactly for codes 0..15, `high` for codes 16..31.
struct byte_index256 {
    __m256i low, high;
};
struct byte_index128 {
    __m128i low, high;
};
inline byte_index256 index_of(__m256i codes) {
    return {_mm256_adds_epu8(codes, _mm256_set1_epi8(0x70)), _mm256_sub_epi8(codes, _mm256_set1_epi8(16))};
}
inline byte_index128 index_of(__m128i codes) {
    return {_mm_adds_epu8(codes, _mm_set1_epi8(0x70)), _mm_sub_epi8(codes, _mm_set1_epi8(16))};
}
inline __m256i lookup_row(const byte_index256& x, const std::int8_t* row32) {
    const auto* row = reinterpret_cast<const __m128i*>(row32);
    return _mm256_or_si256(_mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_load_si128(row)), x.low),
                           _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_load_si128(row + 1)), x.high));
}
inline __m128i lookup_row(const byte_index128& x, const std::int8_t* row32) {
    const auto* row = reinterpret_cast<const __m128i*>(row32);
    return _mm_or_si128(_mm_shuffle_epi8(_mm_load_si128(row), x.low), _mm_shuffle_epi8(_mm_load_si128(row + 1), x.high));
}

// Lanes hold H - 128.
struct avx2_i8 : simd::avx2_i8 {
    struct consts {
        vec open_extend, extend;
    };
    static consts make_consts(const score_tables& t) {
        return {set1(t.gap_open_extend8), set1(t.gap_extend8)};
    }
    static int limit(const score_tables& t) { return t.limit8; }
    using column_index = byte_index256;
    static column_index index_column(const std::uint8_t* r) {
        return index_of(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r)));
    }
    static vec lookup(const column_index& x, const score_tables& t, int a) {
        return lookup_row(x, t.raw.data() + a * table_width);
    }
    static vec zero() { return set1(-128); }
    using reset_mask = __m256i;
    static reset_mask load_starts(const std::uint8_t* s) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
    }
    static bool any(reset_mask m) { return _mm256_movemask_epi8(m) != 0; }
    static vec reset(vec x, reset_mask m, vec zero) { return _mm256_blendv_epi8(x, zero, m); }
    static void store_values(vec v, int* out) {
        alignas(32) std::int8_t b[lanes];
        _mm256_store_si256(reinterpret_cast<__m256i*>(b), v);
        for (unsigned l = 0; l < lanes; ++l) out[l] = b[l] + 128;
    }
};

// Lanes hold H - 32768.
struct avx2_i16 : simd::avx2_i16 {
    struct consts {
        vec open_extend, extend;
    };
    static consts make_consts(const score_tables& t) {
        return {set1(t.gap_open_extend16), set1(t.gap_extend16)};
    }
    static int limit(const score_tables& t) { return t.limit16; }
    using column_index = byte_index128;
    static column_index index_column(const std::uint8_t* r) {
        return index_of(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r)));
    }
    static vec lookup(const column_index& x, const score_tables& t, int a) {
        return _mm256_cvtepi8_epi16(lookup_row(x, t.raw.data() + a * table_width));
    }
    static vec zero() { return set1(-32768); }
    using reset_mask = __m256i;
    static reset_mask load_starts(const std::uint8_t* s) {
        return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
    }
    static bool any(reset_mask m) { return _mm256_movemask_epi8(m) != 0; }
    static vec reset(vec x, reset_mask m, vec zero) { return _mm256_blendv_epi8(x, zero, m); }
    static void store_values(vec v, int* out) {
        alignas(32) std::int16_t b[lanes];
        _mm256_store_si256(reinterpret_cast<__m256i*>(b), v);
        for (unsigned l = 0; l < lanes; ++l) out[l] = b[l] + 32768;
    }
};

}  // namespace
}  // namespace swgpu::interseq

SWGPU_ISA_END(avx2)

namespace swgpu::interseq {

const kernel_set* avx2_kernel_set() {
    static const kernel_set set{simd::isa::avx2, avx2_i8::lanes, avx2_i16::lanes, 4, &score_batch<avx2_i8, 4>,
                                &score_batch<avx2_i16, 4>};
    return &set;
}

}  // namespace swgpu::interseq

#else

namespace swgpu::interseq {
const kernel_set* avx2_kernel_set() { return nullptr; }
}  // namespace swgpu::interseq

#endif
