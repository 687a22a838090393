// Inter-sequence kernels for AVX-512BW (64 lanes of 8 bits, 32 lanes of 16 bits). Built for AVX-512BW whatever the
// compiler flags; called only when the CPU (and the OS) report it.
#include "core/align/simd/interseq.hpp"

#if defined(SWGPU_X86_KERNELS)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <span>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,avx512f,avx512bw"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,avx512f,avx512bw")
// GCC 12 warns about the deliberately undefined upper lanes inside _mm512_broadcast_i32x4.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "core/align/simd/interseq_kernel.hpp"

namespace swgpu::interseq {
namespace {

// Look-up of a 32-entry byte table row with pshufb, which indexes 16 bytes (per 128-bit quarter) by the low 4 bits
// and yields 0 where the index has its top bit set: `low` is valid exactly for codes 0..15, `high` for codes 16..31.
struct avx512_index {
    __m512i low, high;
};

// Lanes hold H - 128.
struct avx512_i8 {
    using vec = __m512i;
    static constexpr unsigned lanes = 64;
    struct consts {
        vec open_extend, extend;
    };
    static consts make_consts(const score_tables& t) {
        return {_mm512_set1_epi8(static_cast<char>(t.gap_open_extend8)),
                _mm512_set1_epi8(static_cast<char>(t.gap_extend8))};
    }
    static int limit(const score_tables& t) { return t.limit8; }
    using column_index = avx512_index;
    static column_index index_column(const std::uint8_t* r) {
        const __m512i codes = _mm512_loadu_si512(r);
        return {_mm512_adds_epu8(codes, _mm512_set1_epi8(0x70)), _mm512_sub_epi8(codes, _mm512_set1_epi8(16))};
    }
    static vec lookup(const column_index& x, const score_tables& t, int a) {
        const auto* row = reinterpret_cast<const __m128i*>(t.raw.data() + a * table_width);
        return _mm512_or_si512(_mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_load_si128(row)), x.low),
                               _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_load_si128(row + 1)), x.high));
    }
    static vec zero() { return _mm512_set1_epi8(-128); }
    static vec max(vec a, vec b) { return _mm512_max_epi8(a, b); }
    static vec sub(vec a, vec b) { return _mm512_subs_epi8(a, b); }
    static vec add(vec a, vec b) { return _mm512_adds_epi8(a, b); }
    using reset_mask = __mmask64;
    static reset_mask load_starts(const std::uint8_t* s) { return _mm512_movepi8_mask(_mm512_loadu_si512(s)); }
    static bool any(reset_mask m) { return m != 0; }
    static vec reset(vec x, reset_mask m, vec zero) { return _mm512_mask_mov_epi8(x, m, zero); }
    static void store_values(vec v, int* out) {
        alignas(64) std::int8_t b[lanes];
        _mm512_store_si512(b, v);
        for (unsigned l = 0; l < lanes; ++l) out[l] = b[l] + 128;
    }
};

// Lanes hold H - 32768. Scores are looked up directly in a 32-entry row of 16-bit scores (vpermw).
struct avx512_i16 {
    using vec = __m512i;
    static constexpr unsigned lanes = 32;
    struct consts {
        vec open_extend, extend;
    };
    static consts make_consts(const score_tables& t) {
        return {_mm512_set1_epi16(static_cast<short>(t.gap_open_extend16)),
                _mm512_set1_epi16(static_cast<short>(t.gap_extend16))};
    }
    static int limit(const score_tables& t) { return t.limit16; }
    using column_index = __m512i;
    static column_index index_column(const std::uint8_t* r) {
        return _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r)));
    }
    static vec lookup(const column_index& x, const score_tables& t, int a) {
        return _mm512_permutexvar_epi16(x, _mm512_load_si512(t.raw16.data() + a * table_width));
    }
    static vec zero() { return _mm512_set1_epi16(-32768); }
    static vec max(vec a, vec b) { return _mm512_max_epi16(a, b); }
    static vec sub(vec a, vec b) { return _mm512_subs_epi16(a, b); }
    static vec add(vec a, vec b) { return _mm512_adds_epi16(a, b); }
    using reset_mask = __mmask32;
    static reset_mask load_starts(const std::uint8_t* s) {
        return static_cast<__mmask32>(_mm256_movemask_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s))));
    }
    static bool any(reset_mask m) { return m != 0; }
    static vec reset(vec x, reset_mask m, vec zero) { return _mm512_mask_mov_epi16(x, m, zero); }
    static void store_values(vec v, int* out) {
        alignas(64) std::int16_t b[lanes];
        _mm512_store_si512(b, v);
        for (unsigned l = 0; l < lanes; ++l) out[l] = b[l] + 32768;
    }
};

}  // namespace
}  // namespace swgpu::interseq

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

namespace swgpu::interseq {

const kernel_set* avx512bw_kernel_set() {
    static const kernel_set set{"avx512bw", avx512_i8::lanes, avx512_i16::lanes, 4, &score_batch<avx512_i8, 4>,
                                &score_batch<avx512_i16, 4>};
    return &set;
}

}  // namespace swgpu::interseq

#else

namespace swgpu::interseq {
const kernel_set* avx512bw_kernel_set() { return nullptr; }
}  // namespace swgpu::interseq

#endif
