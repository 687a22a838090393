// sw_align_scored for AVX-512BW: 64 lanes of 8 bits, 32 of 16 bits or 16 of 32 bits, the narrowest that holds the score
// (lanes_for). Built for AVX-512BW whatever the compiler flags; called only when the CPU reports it.
#include "core/align/simd/align_scored.hpp"

#if defined(SWGPU_X86_KERNELS)

#include <immintrin.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/error.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/simd/isa_target.hpp"
#include "core/align/simd/lanes_avx512.hpp"

// Everything the kernel header includes comes before the target region, which must cover only this file's own code.

SWGPU_ISA_BEGIN(avx512bw)

#include "core/align/simd/align_scored_kernel.hpp"

namespace swgpu::align_fast {
namespace {

// [0, v0, v1, v2] in 128-bit blocks: with alignr, each block takes the top of the block below it.
inline __m512i blocks_up(__m512i v) { return _mm512_maskz_shuffle_i64x2(0xFC, v, v, _MM_SHUFFLE(2, 1, 0, 0)); }
// [0, 0, v0, v1].
inline __m512i blocks_up2(__m512i v) { return _mm512_maskz_shuffle_i64x2(0xF0, v, v, _MM_SHUFFLE(1, 0, 0, 0)); }

// v moved up by `bytes` (a power of two up to 32), zeros below.
inline __m512i bytes_up(__m512i v, std::size_t bytes) {
    switch (bytes) {
        case 1: return _mm512_alignr_epi8(v, blocks_up(v), 15);
        case 2: return _mm512_alignr_epi8(v, blocks_up(v), 14);
        case 4: return _mm512_alignr_epi8(v, blocks_up(v), 12);
        case 8: return _mm512_alignr_epi8(v, blocks_up(v), 8);
        case 16: return blocks_up(v);
        default: return blocks_up2(v);  // 32
    }
}

// Lanes hold H - 128.
struct avx512_i8 : simd::avx512_i8 {
    static constexpr bool clamps_at_zero = true;
    static constexpr int neg_inf = SCHAR_MIN;    // E, F <= 0
    static constexpr int pad_score = SCHAR_MIN;  // padding stays below every real H (it never reaches the score)
    static elem encode(int h) { return static_cast<elem>(h - 128); }
    static int decode(elem x) { return x + 128; }
    static vec load(const elem* p) { return _mm512_load_si512(p); }
    static bool any_gt(vec a, vec b) { return _mm512_cmpgt_epi8_mask(a, b) != 0; }
    static vec shift_zero(vec v) {
        return _mm512_mask_mov_epi8(_mm512_alignr_epi8(v, blocks_up(v), 15), 1, _mm512_set1_epi8(SCHAR_MIN));
    }
    static vec shift_neg(vec v) { return shift_zero(v); }
    static vec shift_by(vec v, std::size_t d) {
        return _mm512_mask_mov_epi8(bytes_up(v, d), (__mmask64(1) << d) - 1, _mm512_set1_epi8(SCHAR_MIN));
    }
    static constexpr long max_sub = 127;
    static constexpr long dead_decay = 255;
};

// Lanes hold H - 32768.
struct avx512_i16 : simd::avx512_i16 {
    static constexpr bool clamps_at_zero = true;
    static constexpr int neg_inf = SHRT_MIN;    // E, F <= 0
    static constexpr int pad_score = SHRT_MIN;  // padding stays below every real H (it never reaches the score)
    static elem encode(int h) { return static_cast<elem>(h - 32768); }
    static int decode(elem x) { return x + 32768; }
    static vec load(const elem* p) { return _mm512_load_si512(p); }
    static bool any_gt(vec a, vec b) { return _mm512_cmpgt_epi16_mask(a, b) != 0; }
    static vec shift_zero(vec v) {
        return _mm512_mask_mov_epi16(_mm512_alignr_epi8(v, blocks_up(v), 14), 1, _mm512_set1_epi16(SHRT_MIN));
    }
    static vec shift_neg(vec v) { return shift_zero(v); }
    static vec shift_by(vec v, std::size_t d) {
        return _mm512_mask_mov_epi16(bytes_up(v, 2 * d), (__mmask32(1) << d) - 1, _mm512_set1_epi16(SHRT_MIN));
    }
    static constexpr long max_sub = 32767;
    static constexpr long dead_decay = 65535;
};

struct avx512_i32 {
    using vec = __m512i;
    using elem = std::int32_t;
    static constexpr std::size_t lanes = 16;
    static constexpr bool clamps_at_zero = false;
    // Not saturating: -inf is far enough below every score (< 2^30) and gap cost (<= 2000) that E - e, F - e and
    // H + pad never wrap (the lazy-F sweep clamps F at neg_inf).
    static constexpr int neg_inf = INT_MIN / 4;
    static constexpr int pad_score = INT_MIN / 4;
    static elem encode(int h) { return h; }
    static int decode(elem x) { return x; }
    static vec load(const elem* p) { return _mm512_load_si512(p); }
    static vec set1(int x) { return _mm512_set1_epi32(x); }
    static vec adds(vec a, vec b) { return _mm512_add_epi32(a, b); }
    static vec subs(vec a, vec b) { return _mm512_sub_epi32(a, b); }
    static vec max(vec a, vec b) { return _mm512_max_epi32(a, b); }
    static bool any_gt(vec a, vec b) { return _mm512_cmpgt_epi32_mask(a, b) != 0; }
    static vec shift_zero(vec v) { return _mm512_alignr_epi32(v, _mm512_setzero_si512(), 15); }
    static vec shift_neg(vec v) { return _mm512_alignr_epi32(v, _mm512_set1_epi32(neg_inf), 15); }
    static vec shift_by(vec v, std::size_t d) {
        const __m512i below = _mm512_set1_epi32(neg_inf);
        switch (d) {
            case 1: return _mm512_alignr_epi32(v, below, 15);
            case 2: return _mm512_alignr_epi32(v, below, 14);
            case 4: return _mm512_alignr_epi32(v, below, 12);
            default: return _mm512_alignr_epi32(v, below, 8);  // 8
        }
    }
    static constexpr long max_sub = 1L << 30;
    static constexpr long dead_decay = 1L << 30;  // scores are below 2^30
};

}  // namespace

std::optional<alignment> align_scored_avx512bw(std::span<const std::uint8_t> query,
                                               std::span<const std::uint8_t> subject, const scoring& sc, int score,
                                               const traceback_options& opt) {
    switch (lanes_for(sc, score)) {
        case lane_bits::b8: return scored_aligner<avx512_i8>(query, subject, sc).align(score, opt);
        case lane_bits::b16: return scored_aligner<avx512_i16>(query, subject, sc).align(score, opt);
        default: return scored_aligner<avx512_i32>(query, subject, sc).align(score, opt);
    }
}

std::optional<sw_end> score_wide_avx512bw(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                         const wide_table& t) {
    const score_source<std::int32_t> src{t.scores, t.max_score, t.gaps};
    if (narrow_fits(t))
        if (auto end = scored_aligner<avx512_i16, std::int32_t>(query, subject, src).best_end()) return end;
    return scored_aligner<avx512_i32, std::int32_t>(query, subject, src).best_end();
}

std::optional<alignment> align_wide_avx512bw(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                         const wide_table& t, int score, const traceback_options& opt) {
    const score_source<std::int32_t> src{t.scores, t.max_score, t.gaps};
    if (narrow_fits(t) && lanes_for(t.max_score, t.gaps, score) != lane_bits::b32)
        return scored_aligner<avx512_i16, std::int32_t>(query, subject, src).align(score, opt);
    return scored_aligner<avx512_i32, std::int32_t>(query, subject, src).align(score, opt);
}

}  // namespace swgpu::align_fast

SWGPU_ISA_END(avx512bw)

#endif
