#include "core/align/letter_codes.hpp"

#include "core/align/simd/isa_target.hpp"

#if defined(SWGPU_X86_KERNELS)
#include <immintrin.h>
#endif

namespace swgpu {

letter_codes::letter_codes(const substitution_matrix& m) {
    for (int c = 0; c < 256; ++c) {
        const char letter = static_cast<char>(c);
        table[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(m.code(letter) | (m.known(letter) ? 0 : 0x80));
    }
}

namespace {

std::uint64_t encode_portable(const std::uint8_t* table, const std::uint8_t* in, std::uint8_t* out, std::size_t n) {
    std::uint64_t unknown = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint8_t c = table[in[i]];
        out[i] = c & 0x7f;
        unknown += c >> 7;
    }
    return unknown;
}

}  // namespace

#if defined(SWGPU_X86_KERNELS)
SWGPU_ISA_BEGIN(avx2)
namespace {

// The four 16-byte rows of the table for 0x40-0x7F, selected by bits 4 and 5 (moved to each byte's bit 7, which
// _mm256_blendv_epi8 reads); bytes outside the range are found first and left to the portable path.
std::uint64_t encode_avx2(const std::uint8_t* table, const std::uint8_t* in, std::uint8_t* out, std::size_t n) {
    const auto row = [&](int r) {
        return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 0x40 + 16 * r)));
    };
    const __m256i t0 = row(0), t1 = row(1), t2 = row(2), t3 = row(3);
    const __m256i range = _mm256_set1_epi8(static_cast<char>(0xc0)), letters = _mm256_set1_epi8(0x40);
    const __m256i low7 = _mm256_set1_epi8(0x7f);
    std::uint64_t unknown = 0;
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
        if (_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(x, range), letters)) != -1) {
            unknown += encode_portable(table, in + i, out + i, 32);
            continue;
        }
        const __m256i bit4 = _mm256_slli_epi16(x, 3), bit5 = _mm256_slli_epi16(x, 2);
        const __m256i lo = _mm256_blendv_epi8(_mm256_shuffle_epi8(t0, x), _mm256_shuffle_epi8(t1, x), bit4);
        const __m256i hi = _mm256_blendv_epi8(_mm256_shuffle_epi8(t2, x), _mm256_shuffle_epi8(t3, x), bit4);
        const __m256i c = _mm256_blendv_epi8(lo, hi, bit5);
        unknown += static_cast<std::uint64_t>(__builtin_popcount(static_cast<unsigned>(_mm256_movemask_epi8(c))));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_and_si256(c, low7));
    }
    return unknown + encode_portable(table, in + i, out + i, n - i);
}

}  // namespace
SWGPU_ISA_END(avx2)
#endif

std::uint64_t encode_letters(const letter_codes& codes, const std::uint8_t* in, std::uint8_t* out, std::size_t n,
                             simd::isa use) {
#if defined(SWGPU_X86_KERNELS)
    if (use >= simd::isa::avx2 && simd::cpu_supports(simd::isa::avx2)) return encode_avx2(codes.table.data(), in, out, n);
#endif
    (void)use;
    return encode_portable(codes.table.data(), in, out, n);
}

}  // namespace swgpu
