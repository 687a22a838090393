#include "core/align/simd/align_scored.hpp"

#include <algorithm>

namespace swgpu {

#if (defined(__x86_64__) || defined(__i386__)) && !defined(SWGPU_NO_X86_KERNELS)
#define SWGPU_ALIGN_FAST_X86 1
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

std::vector<align_isa> available_align_isas() {
    static const std::vector<align_isa> isas = [] {
        std::vector<align_isa> v{align_isa::portable};
#if defined(SWGPU_ALIGN_FAST_X86)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2")) {
            v.push_back(align_isa::avx2);
            if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
                v.push_back(align_isa::avx512bw);
        }
#endif
        return v;
    }();
    return isas;
}

align_isa best_align_isa() { return available_align_isas().back(); }

const char* align_isa_name(align_isa isa) {
    switch (isa) {
        case align_isa::avx2: return "avx2";
        case align_isa::avx512bw: return "avx512bw";
        default: return "portable";
    }
}

std::optional<alignment> sw_align_scored(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                         const scoring& sc, int score, const traceback_options& opt, align_isa isa) {
    if (score < 0) return std::nullopt;
    if (score == 0) return alignment{};
    if (query.empty() || subject.empty()) return std::nullopt;
    // Pairs that could score beyond 2^30 are refused by the scalar code with its usage error.
    const double bound = static_cast<double>(std::min(query.size(), subject.size())) *
                         std::max(1, sc.matrix.max_score());
    const auto isas = available_align_isas();
    const bool runs = std::find(isas.begin(), isas.end(), isa) != isas.end();
#if defined(SWGPU_ALIGN_FAST_X86)
    if (runs && bound < double(1 << 30)) {
        if (isa == align_isa::avx512bw) return align_fast::align_scored_avx512bw(query, subject, sc, score, opt);
        if (isa == align_isa::avx2) return align_fast::align_scored_avx2(query, subject, sc, score, opt);
    }
#else
    (void)runs;
    (void)bound;
#endif
    // Portable: the full score pass (which also proves no cell exceeds `score`), then the scalar traceback.
    const sw_end end = sw_score(query, subject, sc);
    if (end.score != score) return std::nullopt;
    return sw_traceback(query, subject, sc, end, opt);
}

}  // namespace swgpu
