// The GPU backend of a build without CUDA: reports no devices. Everything else in the program works unchanged.
#include "gpu/gpu.hpp"

namespace swgpu::gpu {

bool available() { return false; }
std::vector<device_info> devices() { return {}; }
std::string build_info() { return "built without CUDA"; }
void warm_up() {}

}  // namespace swgpu::gpu

#include "core/error.hpp"

namespace swgpu::gpu {

std::vector<std::vector<score_hit>> search(const sequence_set&, const sequence_set&, const scoring&,
                                           const search_options&) {
    throw runtime_failure("this swgpu was built without CUDA; use --backend cpu");
}

}  // namespace swgpu::gpu
