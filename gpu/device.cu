// Device discovery for the facade in gpu.hpp.
#include <cuda_runtime.h>

#include <algorithm>

#include "core/error.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/gpu.hpp"

namespace swgpu::gpu {

namespace detail {
// gpu/align/hit_alignments.cu: loads the alignment kernels now (modules load lazily, at first launch, otherwise).
void load_align_kernels();
// gpu/align/hit_alignments.cu: maps `bytes` of the device's memory pool now and keeps them mapped in the pool (release threshold)
// for align_scored's allocations.
void reserve_align_memory(std::size_t bytes);
}  // namespace detail

bool available() {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

bool built_with_cuda() { return true; }

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

std::string architecture(int index) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, index) != cudaSuccess) return "*";
    return "sm_" + std::to_string(p.major) + std::to_string(p.minor);
}

int device_count() {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

void use_device(int index) { SWGPU_CUDA_CHECK(cudaSetDevice(index)); }

std::size_t free_memory(int index) {
    int current = 0;
    SWGPU_CUDA_CHECK(cudaGetDevice(&current));
    SWGPU_CUDA_CHECK(cudaSetDevice(index));
    std::size_t f = 0, t = 0;
    const cudaError_t e = cudaMemGetInfo(&f, &t);
    SWGPU_CUDA_CHECK(cudaSetDevice(current));
    SWGPU_CUDA_CHECK(e);
    return f;
}

void start_device() {
    const cudaError_t e = cudaFree(nullptr);
    if (e != cudaSuccess) throw runtime_failure(std::string("starting the GPU failed: ") + cudaGetErrorString(e));
}

void prepare_alignments(bool keep_align_memory) {
    detail::load_align_kernels();
    if (keep_align_memory) {
        std::size_t free_bytes = 0, total_bytes = 0;
        SWGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        detail::reserve_align_memory(std::min(std::size_t(2) << 30, free_bytes / 8));
    }
}

void warm_up(bool keep_align_memory) {
    start_device();
    prepare_alignments(keep_align_memory);
}

void start_context(int index) noexcept {
    if (cudaSetDevice(index) == cudaSuccess && cudaFree(nullptr) == cudaSuccess) return;
    (void)cudaGetLastError();  // the device's first real use reports what is wrong with it
}

std::string build_info() {
    int rt = 0;
    cudaRuntimeGetVersion(&rt);
    return "CUDA runtime " + std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10) + ", built for sm_" +
           std::string(SWGPU_CUDA_ARCHS);
}

}  // namespace swgpu::gpu
