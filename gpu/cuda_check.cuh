// Every CUDA runtime call and every kernel launch of the GPU backend goes through these checks. A failure becomes a
// swgpu::error: out_of_memory (exit code 4) for a failed allocation, runtime_failure (exit code 3) for anything else,
// with the call, the source line and CUDA's own words in the message. Kernels never wait forever: a spin-wait that
// outlives its deadline traps (see device_deadline below), which surfaces here as a launch failure.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace swgpu::gpu {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
    // Reset the last-error state (for errors that are not sticky) so a later check does not report this one again.
    (void)cudaGetLastError();
    std::string what = std::string(file) + ":" + std::to_string(line) + ": CUDA error in " + call + ": " +
                       cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
    if (status == cudaErrorMemoryAllocation)
        throw out_of_memory(what + "; the GPU has too little free memory for this problem, use a smaller one or "
                                   "--backend cpu");
    throw runtime_failure(what + "; the GPU backend cannot continue, rerun with --backend cpu if this persists");
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

namespace swgpu::gpu {

#if defined(__CUDACC__)
// A spin-wait on another block's flag ends in a trap after this many nanoseconds instead of hanging the device. Every
// legitimate wait in the engine is for a block that is already running and needs microseconds; 20 s leaves room for
// compute-sanitizer, which slows kernels down by orders of magnitude.
inline constexpr std::uint64_t spin_deadline_ns = 20ull * 1000 * 1000 * 1000;

__device__ __forceinline__ std::uint64_t device_time_ns() {
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Backs off while spinning and traps once the deadline has passed. `spins` and `since` start at 0 for each wait.
__device__ __forceinline__ void spin_backoff(unsigned& spins, std::uint64_t& since) {
    ++spins;
    if (spins < 32) return;
    __nanosleep(spins < 1024 ? 64 : 512);
    if ((spins & 255) != 0) return;
    const std::uint64_t now = device_time_ns();
    if (since == 0) since = now;
    else if (now - since > spin_deadline_ns) __trap();
}
#endif

}  // namespace swgpu::gpu
