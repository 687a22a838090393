// A consumer of one half of the face: <swgpu/numerics.hpp> alone gives the numerical calls (no alignment header).
#include <swgpu/numerics.hpp>

#include <cstdio>

int main() {
    auto image = swgpu::array::zeros<std::uint8_t>({2, 3});
    for (std::int64_t i = 0; i < 2; ++i)
        for (std::int64_t j = 0; j < 3; ++j) image.at<std::uint8_t>({i, j}) = static_cast<std::uint8_t>(i * 3 + j);
    const auto table = swgpu::summed_area_table(image, swgpu::backend::cpu);
    const bool ok = table.at<std::uint64_t>({1, 2}) == 15;
    std::printf("%s numerics alone: S[1][2] = %llu\n", ok ? "ok  " : "FAIL",
                static_cast<unsigned long long>(table.at<std::uint64_t>({1, 2})));
    return ok ? 0 : 1;
}
