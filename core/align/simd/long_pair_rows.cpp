// The long-pair group kernels of each instruction set (core/align/simd/long_pair_rows.hpp), and the portable one,
// compiled here for the compiler's baseline.
#include "core/align/simd/long_pair_rows.hpp"

#include <vector>

namespace swgpu::long_pair::rows {

#if defined(SWGPU_X86_KERNELS)
// core/align/simd/long_pair_rows_avx2.cpp and long_pair_rows_avx512.cpp.
int run_group_avx2(const group& g);
int run_group_avx512(const group& g);
int run_group16_avx2(const group& g);
int run_group16_avx512(const group& g);
#endif

kernel_choice kernel_for(simd::isa target) {
    switch (target) {
        case simd::isa::portable: return {target, 4, &run_group<4>, 8, &run_group16<8>};
#if defined(SWGPU_X86_KERNELS)
        case simd::isa::avx2: return {target, 8, &run_group_avx2, 16, &run_group16_avx2};
        case simd::isa::avx512bw: return {target, 16, &run_group_avx512, 32, &run_group16_avx512};
#endif
        default: return {target, 0, nullptr};
    }
}

std::span<const kernel_choice> available_kernels() {
    static const std::vector<kernel_choice> kernels = [] {
        std::vector<kernel_choice> v;
        for (const auto target : simd::available_isas())
            if (const kernel_choice k = kernel_for(target); k.run) v.push_back(k);
        return v;
    }();
    return kernels;
}

kernel_choice best_kernel() { return available_kernels().back(); }

}  // namespace swgpu::long_pair::rows
