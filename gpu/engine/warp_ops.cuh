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

// Inclusive weighted scan over the lanes of a warp (Hillis-Steele, five shuffle steps), N scans interleaved: lane l's
// c[n] becomes the composite of lanes 0..l's, where each lane's run has the weight `lanes[0]` and lanes[k] is the
// weight of 2^k lanes' runs; lanes below the distance keep their value. Unguarded (for an algebra whose combine of an
// element with itself gives it back, absorbs_self: the descending (max,+) scan, max(c + p, c) = c for p <= 0), the
// lanes below the distance combine with their own value (their shuffle returns it), which leaves it as it is, without
// the compare: the long-pair compensation kernel's choice. The warp level of the engine's block scan
// (block_scan.cuh) and of the long-pair compensation kernel's vertical gap (gpu/align/long_pair_kernels.cuh).
template <class Alg>
constexpr bool absorbs_self_of() {
    if constexpr (requires { Alg::absorbs_self; }) return Alg::absorbs_self;
    else return false;
}
template <class Alg>
inline constexpr bool absorbs_self = absorbs_self_of<Alg>();

template <class Alg, int N, bool Unguarded = false>
__device__ __forceinline__ void warp_inclusive_scan(const Alg& alg, typename Alg::elem (&c)[N],
                                                    const typename Alg::power (&lanes)[5], int lane) {
    static_assert(!Unguarded || absorbs_self<Alg>, "an unguarded warp scan needs combine(c, c, p) == c");
#pragma unroll
    for (int k = 0; k < 5; ++k) {
        const int d = 1 << k;
#pragma unroll
        for (int n = 0; n < N; ++n) {
            const typename Alg::elem up = scan_detail::shfl_up(c[n], d);
            if (Unguarded || lane >= d) c[n] = alg.combine(up, c[n], lanes[k]);
        }
    }
}

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
