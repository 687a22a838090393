// sw_align_scored for AVX2: 32 lanes of 8 bits, 16 of 16 bits or 8 of 32 bits, the narrowest that holds the score
// (lanes_for). Built for AVX2 whatever the compiler flags; called only when the CPU reports it.
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
#include "core/align/simd/lanes_avx2.hpp"

// Everything the kernel header includes comes before the target region, which must cover only this file's own code.

SWGPU_ISA_BEGIN(avx2)

#include "core/align/simd/align_scored_kernel.hpp"

namespace swgpu::align_fast {
namespace {

// Lanes hold H - 128.
struct avx2_i8 : simd::avx2_i8 {
    static constexpr bool clamps_at_zero = true;
    static constexpr int neg_inf = SCHAR_MIN;    // E, F <= 0
    static constexpr int pad_score = SCHAR_MIN;  // padding stays below every real H (it never reaches the score)
    static elem encode(int h) { return static_cast<elem>(h - 128); }
    static int decode(elem x) { return x + 128; }
    static vec load(const elem* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
    static bool any_gt(vec a, vec b) { return _mm256_movemask_epi8(_mm256_cmpgt_epi8(a, b)) != 0; }
    static vec shift_zero(vec v) {
        const __m256i shifted = _mm256_alignr_epi8(v, _mm256_permute2x128_si256(v, v, 0x08), 15);
        return _mm256_or_si256(shifted, _mm256_setr_epi8(SCHAR_MIN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                         0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    }
    static vec shift_neg(vec v) { return shift_zero(v); }
    static vec shift_by(vec v, std::size_t d) {
        const __m256i low = _mm256_permute2x128_si256(v, v, 0x08);  // [0, lo]
        __m256i r;
        switch (d) {
            case 1: r = _mm256_alignr_epi8(v, low, 15); break;
            case 2: r = _mm256_alignr_epi8(v, low, 14); break;
            case 4: r = _mm256_alignr_epi8(v, low, 12); break;
            case 8: r = _mm256_alignr_epi8(v, low, 8); break;
            default: r = low; break;  // 16
        }
        return fill_below(r, d);
    }
    static vec fill_below(vec r, std::size_t d) {
        const __m256i lane = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                                              21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
        const __m256i below = _mm256_cmpgt_epi8(_mm256_set1_epi8(static_cast<char>(d)), lane);
        return _mm256_blendv_epi8(r, _mm256_set1_epi8(SCHAR_MIN), below);
    }
    static constexpr long max_sub = 127;
    static constexpr long dead_decay = 255;
};

// Lanes hold H - 32768.
struct avx2_i16 : simd::avx2_i16 {
    static constexpr bool clamps_at_zero = true;
    static constexpr int neg_inf = SHRT_MIN;    // E, F <= 0
    static constexpr int pad_score = SHRT_MIN;  // padding stays below every real H (it never reaches the score)
    static elem encode(int h) { return static_cast<elem>(h - 32768); }
    static int decode(elem x) { return x + 32768; }
    static vec load(const elem* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
    static bool any_gt(vec a, vec b) { return _mm256_movemask_epi8(_mm256_cmpgt_epi16(a, b)) != 0; }
    // [0, lo] then a byte shift across the halves: lane k takes lane k-1, lane 0 takes 0, then H = 0 in lane 0.
    static vec shift_zero(vec v) {
        const __m256i shifted = _mm256_alignr_epi8(v, _mm256_permute2x128_si256(v, v, 0x08), 14);
        return _mm256_or_si256(shifted, _mm256_setr_epi16(SHRT_MIN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    }
    static vec shift_neg(vec v) { return shift_zero(v); }
    static vec shift_by(vec v, std::size_t d) {
        const __m256i low = _mm256_permute2x128_si256(v, v, 0x08);  // [0, lo]
        __m256i r;
        switch (d) {
            case 1: r = _mm256_alignr_epi8(v, low, 14); break;
            case 2: r = _mm256_alignr_epi8(v, low, 12); break;
            case 4: r = _mm256_alignr_epi8(v, low, 8); break;
            default: r = low; break;  // 8
        }
        const __m256i lane = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        const __m256i below = _mm256_cmpgt_epi16(_mm256_set1_epi16(static_cast<short>(d)), lane);
        return _mm256_blendv_epi8(r, _mm256_set1_epi16(SHRT_MIN), below);
    }
    static constexpr long max_sub = 32767;
    static constexpr long dead_decay = 65535;
};

struct avx2_i32 {
    using vec = __m256i;
    using elem = std::int32_t;
    static constexpr std::size_t lanes = 8;
    static constexpr bool clamps_at_zero = false;
    // Not saturating: -inf is far enough below every score (< 2^30) and gap cost (<= 2000) that E - e, F - e and
    // H + pad never wrap (the lazy-F sweep clamps F at neg_inf).
    static constexpr int neg_inf = INT_MIN / 4;
    static constexpr int pad_score = INT_MIN / 4;
    static elem encode(int h) { return h; }
    static int decode(elem x) { return x; }
    static vec load(const elem* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
    static vec set1(int x) { return _mm256_set1_epi32(x); }
    static vec adds(vec a, vec b) { return _mm256_add_epi32(a, b); }
    static vec subs(vec a, vec b) { return _mm256_sub_epi32(a, b); }
    static vec max(vec a, vec b) { return _mm256_max_epi32(a, b); }
    static bool any_gt(vec a, vec b) { return _mm256_movemask_epi8(_mm256_cmpgt_epi32(a, b)) != 0; }
    static vec shift_up(vec v) { return _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6)); }
    static vec shift_zero(vec v) { return _mm256_blend_epi32(shift_up(v), _mm256_setzero_si256(), 1); }
    static vec shift_neg(vec v) { return _mm256_blend_epi32(shift_up(v), _mm256_set1_epi32(neg_inf), 1); }
    static vec shift_by(vec v, std::size_t d) {
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i from = _mm256_sub_epi32(lane, _mm256_set1_epi32(static_cast<int>(d)));
        const __m256i r = _mm256_permutevar8x32_epi32(v, from);  // lanes below d read garbage, replaced next
        return _mm256_blendv_epi8(r, _mm256_set1_epi32(neg_inf), _mm256_cmpgt_epi32(_mm256_setzero_si256(), from));
    }
    static constexpr long max_sub = 1L << 30;
    static constexpr long dead_decay = 1L << 30;  // scores are below 2^30
};

}  // namespace

std::optional<alignment> align_scored_avx2(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                           const scoring& sc, int score, const traceback_options& opt) {
    switch (lanes_for(sc, score)) {
        case lane_bits::b8: return scored_aligner<avx2_i8>(query, subject, sc).align(score, opt);
        case lane_bits::b16: return scored_aligner<avx2_i16>(query, subject, sc).align(score, opt);
        default: return scored_aligner<avx2_i32>(query, subject, sc).align(score, opt);
    }
}

std::optional<sw_end> score_wide_avx2(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                         const wide_table& t) {
    const score_source<std::int32_t> src{t.scores, t.max_score, t.gaps};
    if (narrow_fits(t))
        if (auto end = scored_aligner<avx2_i16, std::int32_t>(query, subject, src).best_end()) return end;
    return scored_aligner<avx2_i32, std::int32_t>(query, subject, src).best_end();
}

std::optional<alignment> align_wide_avx2(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                         const wide_table& t, int score, const traceback_options& opt) {
    const score_source<std::int32_t> src{t.scores, t.max_score, t.gaps};
    if (narrow_fits(t) && lanes_for(t.max_score, t.gaps, score) != lane_bits::b32)
        return scored_aligner<avx2_i16, std::int32_t>(query, subject, src).align(score, opt);
    return scored_aligner<avx2_i32, std::int32_t>(query, subject, src).align(score, opt);
}

}  // namespace swgpu::align_fast

SWGPU_ISA_END(avx2)

#endif
