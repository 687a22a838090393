// Every CUDA runtime call and every kernel launch of the GPU backend goes through these checks. A failure becomes a
// swgpu::device_failure with exit code out_of_memory (4) for a failed allocation, runtime_failure (3) for anything
// else, with the call, the source line and CUDA's own words in the message. Kernels never wait forever: a spin-wait that
// outlives its deadline traps (gpu/flags.cuh), which surfaces here as a launch failure.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace swgpu::gpu {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
    // Reset the last-error state (for errors that are not sticky) so a later check does not report this one again.
    (void)cudaGetLastError();
    std::string what = std::string(file) + ":" + std::to_string(line) + ": CUDA error in " + call + ": " +
                       cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
    if (status == cudaErrorMemoryAllocation)
        throw device_failure(exit_code::out_of_memory,
                             what + "; the GPU has too little free memory for this problem, use a smaller one or "
                                    "--backend cpu");
    throw device_failure(exit_code::runtime_failure,
                         what + "; the GPU backend cannot continue, rerun with --backend cpu if this persists");
}

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
    if (status != cudaSuccess) throw_cuda_error(status, call, file, line);
}

}  // namespace swgpu::gpu

// Checks a runtime call: SWGPU_CUDA_CHECK(cudaMalloc(&p, n)).
#define SWGPU_CUDA_CHECK(call) ::swgpu::gpu::check_cuda((call), #call, __FILE__, __LINE__)
// Checks the launch just made (configuration errors appear here; errors while the kernel runs appear at the next
// synchronizing call, which is checked too).
#define SWGPU_CUDA_CHECK_LAUNCH(kernel_name) \
    ::swgpu::gpu::check_cuda(cudaGetLastError(), "launch of " kernel_name, __FILE__, __LINE__)

// The blocks of `threads` threads that the GPU keeps resident for `kernel`: at most `per_sm` per SM (0: as many as
// fit), at least one per SM. For kernels whose blocks wait for each other (cooperative launches, flags between blocks).
template <class Kernel>
int resident_blocks(Kernel kernel, int threads, int per_sm = 0) {
    int device = 0, sms = 0, fit = 0;
    SWGPU_CUDA_CHECK(cudaGetDevice(&device));
    SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    SWGPU_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, threads, 0));
    if (per_sm > 0 && per_sm < fit) fit = per_sm;
    return sms * (fit > 1 ? fit : 1);
}

namespace swgpu::gpu {

// The current device's architecture as the tuning table names it ("sm_90"): the `arch` of core/tuning.hpp lookups.
inline std::string device_arch() {
    int device = 0, major = 0, minor = 0;
    SWGPU_CUDA_CHECK(cudaGetDevice(&device));
    SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    return "sm_" + std::to_string(major) + std::to_string(minor);
}

#if defined(__CUDACC__)
// Programmatic dependent launch (sm_90). A kernel launched by launch_chained may start while the kernel before it in
// the stream is still running; it must call wait_for_previous_grids() before its first access to global memory, which
// returns once that kernel has finished and its writes are visible. Whatever a thread does before the wait touches
// only registers and shared memory. allow_next_grid() lets the next chained kernel start once every block of this
// grid has called it (or exited); it changes nothing about memory visibility. Both are no-ops on a kernel launched the
// ordinary way, and before sm_90.
__device__ __forceinline__ void wait_for_previous_grids() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_next_grid() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Launches kernel<<<grid, block, smem, stream>>>(args...) with programmatic stream serialization allowed (see
// wait_for_previous_grids): the launch latency and the block start-up overlap the end of the kernel before it.
template <class... Params, class... Args>
void launch_chained(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
                    cudaStream_t stream, Args&&... args) {
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    config.attrs = attribute;
    config.numAttrs = 1;
    check_cuda(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...), name, __FILE__, __LINE__);
}
#endif

}  // namespace swgpu::gpu
