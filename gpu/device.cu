// Device discovery for the facade in gpu.hpp.
#include <cuda_runtime.h>

#include "core/error.hpp"
#include "gpu/gpu.hpp"

namespace swgpu::gpu {

bool available() {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

std::vector<device_info> devices() {
    std::vector<device_info> out;
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) return out;
    for (int d = 0; d < n; ++d) {
        cudaDeviceProp p{};
        if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
        device_info info;
        info.index = d;
        info.name = p.name;
        info.multiprocessors = p.multiProcessorCount;
        info.compute_major = p.major;
        info.compute_minor = p.minor;
        info.total_memory = p.totalGlobalMem;
        if (cudaSetDevice(d) == cudaSuccess) {
            size_t f = 0, t = 0;
            if (cudaMemGetInfo(&f, &t) == cudaSuccess) info.free_memory = f;
        }
        out.push_back(info);
    }
    return out;
}

void warm_up() {
    const cudaError_t e = cudaFree(nullptr);
    if (e != cudaSuccess) throw runtime_failure(std::string("starting the GPU failed: ") + cudaGetErrorString(e));
}

std::string build_info() {
    int rt = 0;
    cudaRuntimeGetVersion(&rt);
    return "CUDA runtime " + std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10) + ", built for sm_" +
           std::string(SWGPU_CUDA_ARCHS);
}

}  // namespace swgpu::gpu
