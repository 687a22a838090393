// Inter-sequence kernels for AVX-512BW (64 lanes of 8 bits, 32 lanes of 16 bits). Built for AVX-512BW whatever the
// compiler flags; called only when the CPU (and the OS) report it.
#include "core/align/simd/interseq.hpp"

#if defined(SWGPU_X86_KERNELS)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/align/simd/isa_target.hpp"
#include "core/align/simd/lanes_avx512.hpp"

SWGPU_ISA_BEGIN(avx512bw)

#include "core/align/simd/interseq_kernel.hpp"

namespace swgpu::interseq {
namespace {

// Look-up of a 32-entry byte table row with pshufb, which indexes 16 bytes (per 128-bit quarter) by the low 4 bits
// and yields 0 where the index has its top bit set: `low` is valid exactly for codes 0..15, `high` for codes 16..31.
struct avx512_index {
    __m512i low, high;
};

// Lanes hold H - 128.
struct avx512_i8 : simd::avx512_i8 {
    struct consts {
        vec open_extend, extend;
    };
    static consts make_consts(const score_tables& t) {
        return {set1(t.gap_open_extend8), set1(t.gap_extend8)};
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
    static vec zero() { return set1(-128); }
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
struct avx512_i16 : simd::avx512_i16 {
    struct consts {
        vec open_extend, extend;
    };
    static consts make_consts(const score_tables& t) {
        return {set1(t.gap_open_extend16), set1(t.gap_extend16)};
    }
    static int limit(const score_tables& t) { return t.limit16; }
    using column_index = __m512i;
    static column_index index_column(const std::uint8_t* r) {
        return _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r)));
    }
    static vec lookup(const column_index& x, const score_tables& t, int a) {
        return _mm512_permutexvar_epi16(x, _mm512_load_si512(t.raw16.data() + a * table_width));
    }
    static vec zero() { return set1(-32768); }
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

SWGPU_ISA_END(avx512bw)

namespace swgpu::interseq {

const kernel_set* avx512bw_kernel_set() {
    static const kernel_set set{simd::isa::avx512bw, avx512_i8::lanes, avx512_i16::lanes, 4,
                                &score_batch<avx512_i8, 4>, &score_batch<avx512_i16, 4>};
    return &set;
}

}  // namespace swgpu::interseq

#else

namespace swgpu::interseq {
const kernel_set* avx512bw_kernel_set() { return nullptr; }
}  // namespace swgpu::interseq

#endif
