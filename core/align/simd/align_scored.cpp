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

}  // namespace swgpu
