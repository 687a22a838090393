// Warp and memory primitives of the weighted scan for any trivially copyable element: shuffles word by word, loads
// and stores through L2 (.cg). Flags and relaxed words are gpu/flags.cuh's.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/engine/linear_map.hpp"
#include "core/engine/operator_pair.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/flags.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/scan_algebra.cuh"

namespace swgpu::gpu {

// ---------------------------------------------------------------------------------------------------------------------
// Warp and memory primitives for any trivially copyable element
// ---------------------------------------------------------------------------------------------------------------------

namespace scan_detail {

inline constexpr unsigned full_mask = 0xffffffffu;

template <class T>
struct words {
    static constexpr int count = (sizeof(T) + 3) / 4;
    unsigned w[count];
};

// Moves a trivially copyable value between the lanes of a warp, one 32-bit word at a time: `shuffle(word)` is one of
// the __shfl*_sync intrinsics with its lane argument bound.
template <class T, class Shuffle>
__device__ __forceinline__ T shfl_words(const T& v, Shuffle shuffle) {
    static_assert(std::is_trivially_copyable_v<T>);
    words<T> x{};
    std::memcpy(x.w, &v, sizeof(T));
#pragma unroll
    for (int k = 0; k < words<T>::count; ++k) x.w[k] = shuffle(x.w[k]);
    T r;
    std::memcpy(&r, x.w, sizeof(T));
    return r;
}
template <class T>
__device__ __forceinline__ T shfl_up(const T& v, int delta) {
    return shfl_words(v, [delta](unsigned w) { return __shfl_up_sync(full_mask, w, delta); });
}
template <class T>
__device__ __forceinline__ T shfl_down(const T& v, int delta) {
    return shfl_words(v, [delta](unsigned w) { return __shfl_down_sync(full_mask, w, delta); });
}
template <class T>
__device__ __forceinline__ T shfl_idx(const T& v, int lane) {
    return shfl_words(v, [lane](unsigned w) { return __shfl_sync(full_mask, w, lane); });
}

// Loads and stores that bypass L1 (cached in L2 only), for data another block publishes during the same kernel: after
// the acquire that orders them they can never return a stale L1 line.
template <class T>
__device__ __forceinline__ T load_cg(const T* p) {
    static_assert(std::is_trivially_copyable_v<T>);
    T r;
    if constexpr (sizeof(T) % 4 == 0 && alignof(T) >= 4) {
        unsigned w[sizeof(T) / 4];
        const unsigned* src = reinterpret_cast<const unsigned*>(p);
#pragma unroll
        for (unsigned k = 0; k < sizeof(T) / 4; ++k) w[k] = __ldcg(src + k);
        std::memcpy(&r, w, sizeof(T));
    } else if constexpr (sizeof(T) == 2) {
        unsigned short w = __ldcg(reinterpret_cast<const unsigned short*>(p));
        std::memcpy(&r, &w, 2);
    } else {
        unsigned char b[sizeof(T)];
        const unsigned char* src = reinterpret_cast<const unsigned char*>(p);
#pragma unroll
        for (unsigned k = 0; k < sizeof(T); ++k) b[k] = __ldcg(src + k);
        std::memcpy(&r, b, sizeof(T));
    }
    return r;
}
template <class T>
__device__ __forceinline__ void store_cg(T* p, const T& v) {
    if constexpr (sizeof(T) % 4 == 0 && alignof(T) >= 4) {
        unsigned w[sizeof(T) / 4];
        std::memcpy(w, &v, sizeof(T));
        unsigned* dst = reinterpret_cast<unsigned*>(p);
#pragma unroll
        for (unsigned k = 0; k < sizeof(T) / 4; ++k) __stcg(dst + k, w[k]);
    } else if constexpr (sizeof(T) == 2) {
        unsigned short w;
        std::memcpy(&w, &v, 2);
        __stcg(reinterpret_cast<unsigned short*>(p), w);
    } else {
        unsigned char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        unsigned char* dst = reinterpret_cast<unsigned char*>(p);
#pragma unroll
        for (unsigned k = 0; k < sizeof(T); ++k) __stcg(dst + k, b[k]);
    }
}

}  // namespace scan_detail

// Inclusive scan of linear maps over the lanes of a warp (Hillis-Steele, five shuffle steps): lane l returns the
// composite x_0 then x_1 ... then x_l. The warp level of the engine's (+,·) and (max,+) scans of maps, for kernels
// that scan one row of maps per warp themselves (the SOR strips).
template <theorem1_pair Op>
__device__ __forceinline__ linear_map<Op> warp_scan_maps(linear_map<Op> t, int lane) {
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        const linear_map<Op> o = scan_detail::shfl_up(t, d);
        if (lane >= d) t = then(o, t);
    }
    return t;
}

}  // namespace swgpu::gpu
