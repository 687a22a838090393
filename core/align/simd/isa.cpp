#include "core/align/simd/isa.hpp"

#include <array>
#include <vector>

namespace swgpu::simd {

namespace {
constexpr std::array<isa, 4> all_isas{isa::portable, isa::sse41, isa::avx2, isa::avx512bw};
}

bool cpu_supports(isa target) {
    static const std::array<bool, all_isas.size()> runs = [] {
        std::array<bool, all_isas.size()> r{};
        r[static_cast<std::size_t>(isa::portable)] = true;
#if defined(__x86_64__) || defined(__i386__)
        // GCC's and Clang's probe (cpuid, and xgetbv for the registers the OS saves).
        __builtin_cpu_init();
        const bool avx2 = __builtin_cpu_supports("avx2");
        r[static_cast<std::size_t>(isa::sse41)] = __builtin_cpu_supports("sse4.1");
        r[static_cast<std::size_t>(isa::avx2)] = avx2;
        r[static_cast<std::size_t>(isa::avx512bw)] =
            avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
#endif
        return r;
    }();
    return runs[static_cast<std::size_t>(target)];
}

const char* isa_name(isa target) {
    switch (target) {
        case isa::sse41: return "sse41";
        case isa::avx2: return "avx2";
        case isa::avx512bw: return "avx512bw";
        default: return "portable";
    }
}

std::span<const isa> available_isas() {
    static const std::vector<isa> isas = [] {
        std::vector<isa> v{isa::portable};
#if defined(SWGPU_X86_KERNELS)
        for (const isa x : all_isas)
            if (x != isa::portable && cpu_supports(x)) v.push_back(x);
#endif
        return v;
    }();
    return isas;
}

isa best_isa() { return available_isas().back(); }

}  // namespace swgpu::simd
