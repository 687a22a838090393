#include "core/align/simd/align_scored.hpp"

#include <algorithm>

namespace swgpu {

#if defined(SWGPU_X86_KERNELS)
namespace align_fast {
// core/align/simd/align_scored_avx2.cpp (compiled for AVX2; call only when the CPU supports it).
std::optional<alignment> align_scored_avx2(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                           const scoring& sc, int score, const traceback_options& opt);
// core/align/simd/align_scored_avx512.cpp (compiled for AVX-512BW).
std::optional<alignment> align_scored_avx512bw(std::span<const std::uint8_t> query,
                                               std::span<const std::uint8_t> subject, const scoring& sc, int score,
                                               const traceback_options& opt);
std::optional<sw_end> score_wide_avx2(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                      const wide_table& t);
std::optional<alignment> align_wide_avx2(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                         const wide_table& t, int score, const traceback_options& opt);
std::optional<sw_end> score_wide_avx512bw(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                          const wide_table& t);
std::optional<alignment> align_wide_avx512bw(std::span<const std::uint8_t> query,
                                             std::span<const std::uint8_t> subject, const wide_table& t, int score,
                                             const traceback_options& opt);
}  // namespace align_fast
#endif

std::span<const simd::isa> align_scored_isas() {
    static const std::vector<simd::isa> isas = [] {
        std::vector<simd::isa> v;
        for (const auto target : simd::available_isas())
            if (target != simd::isa::sse41) v.push_back(target);
        return v;
    }();
    return isas;
}

std::optional<alignment> sw_align_scored(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                         const scoring& sc, int score, const traceback_options& opt, simd::isa target) {
    if (score < 0) return std::nullopt;
    if (score == 0) return alignment{};
    if (query.empty() || subject.empty()) return std::nullopt;
    // Pairs that could score beyond 2^30 are refused by the scalar code with its usage error.
    const double bound = static_cast<double>(std::min(query.size(), subject.size())) *
                         std::max(1, sc.matrix.max_score());
#if defined(SWGPU_X86_KERNELS)
    if (simd::cpu_supports(target) && bound < double(1 << 30)) {
        if (target == simd::isa::avx512bw) return align_fast::align_scored_avx512bw(query, subject, sc, score, opt);
        if (target == simd::isa::avx2) return align_fast::align_scored_avx2(query, subject, sc, score, opt);
    }
#else
    (void)target;
    (void)bound;
#endif
    // Portable: the full score pass (which also proves no cell exceeds `score`), then the scalar traceback.
    const sw_end end = sw_score(query, subject, sc);
    if (end.score != score) return std::nullopt;
    return sw_traceback(query, subject, sc, end, opt);
}

namespace {

// Whether the SIMD passes are exact for this pair: every H below 2^30 (the 32-bit lanes' bound).
bool wide_in_range(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const wide_table& t) {
    return !query.empty() && !subject.empty() && t.gaps.first() <= 1 << 20 &&
           double(std::min(query.size(), subject.size())) * std::max(1, t.max_score) < double(1 << 30);
}

}  // namespace

std::optional<sw_end> sw_score_wide_simd(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                         const wide_table& table, simd::isa target) {
#if defined(SWGPU_X86_KERNELS)
    if (simd::cpu_supports(target) && wide_in_range(query, subject, table)) {
        if (target == simd::isa::avx512bw) return align_fast::score_wide_avx512bw(query, subject, table);
        if (target == simd::isa::avx2) return align_fast::score_wide_avx2(query, subject, table);
    }
#else
    (void)query, (void)subject, (void)table, (void)target;
#endif
    return std::nullopt;
}

std::optional<alignment> sw_align_wide_scored(std::span<const std::uint8_t> query,
                                              std::span<const std::uint8_t> subject, const wide_table& table, int score,
                                              const traceback_options& opt, simd::isa target) {
    if (score <= 0) return std::nullopt;
#if defined(SWGPU_X86_KERNELS)
    if (simd::cpu_supports(target) && wide_in_range(query, subject, table)) {
        if (target == simd::isa::avx512bw) return align_fast::align_wide_avx512bw(query, subject, table, score, opt);
        if (target == simd::isa::avx2) return align_fast::align_wide_avx2(query, subject, table, score, opt);
    }
#else
    (void)query, (void)subject, (void)table, (void)opt, (void)target;
#endif
    return std::nullopt;
}

}  // namespace swgpu
