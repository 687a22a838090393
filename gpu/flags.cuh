// Flags between blocks, and between devices: the one home of the acquire/release operations every kernel that waits
// on another block uses (the scan's look-back, the tiled schedule, the SAT tiles, SOR's strips, levels, the sweeps,
// long pairs), and of the bounded spin.
//
// A writer makes its data visible (its stores, then __threadfence where other threads wrote too) and publishes with
// a release store of the flag; a reader polls with acquire loads and reads the data only after seeing the flag. Device
// scope (.gpu) between blocks of one GPU; system scope (.sys) between GPUs, through pinned host memory every device
// maps. A spin that outlives spin_deadline_ns traps instead of hanging the device: every legitimate wait is for a
// block that is already running and needs microseconds; 20 s leaves room for compute-sanitizer, which slows kernels
// down by orders of magnitude.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace swgpu::gpu {

#if defined(__CUDACC__)
inline constexpr std::uint64_t spin_deadline_ns = 20ull * 1000 * 1000 * 1000;

__device__ __forceinline__ std::uint64_t device_time_ns() {
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Device scope.
__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_release(unsigned* p, unsigned v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ int load_acquire(const int* p) {
    int v;
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_release(int* p, int v) {
    asm volatile("st.release.gpu.global.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned long long load_acquire(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_release(unsigned long long* p, unsigned long long v) {
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// Single-copy-atomic 64-bit accesses without ordering, device scope: a status and its value travel in one word.
__device__ __forceinline__ unsigned long long load_relaxed(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_relaxed(unsigned long long* p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// System scope: flags between devices.
__device__ __forceinline__ unsigned load_acquire_sys(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_release_sys(unsigned* p, unsigned v) {
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned long long load_acquire_sys(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_release_sys(unsigned long long* p, unsigned long long v) {
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
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
