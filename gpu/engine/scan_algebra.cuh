// The algebras of the weighted scan (the layers of which gpu/engine/weighted_scan.cuh describes): what is carried
// and combined for a constant weight (weighted_algebra, descending_max_plus_algebra) and for row-varying weights
// (map_algebra).
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

namespace swgpu::gpu {

// ---------------------------------------------------------------------------------------------------------------------
// Algebras
// ---------------------------------------------------------------------------------------------------------------------

// w raised to the distance k. For integer (max,+) the product k·w can leave the type for long distances (k up to 2^28,
// 16-bit values); it is clamped to the identity, which ◇ then treats as -inf, exactly as the sequential recurrence
// saturates. Other pairs use their own power (wrapping integer arithmetic is exact modulo 2^bits).
template <operator_pair Op>
__host__ __device__ __forceinline__ typename Op::value scan_power(typename Op::value w, std::int64_t k) {
    using T = typename Op::value;
    if constexpr (std::is_same_v<Op, max_plus<T>> && std::is_integral_v<T>) {
        const std::int64_t p = static_cast<std::int64_t>(w) * k;
        const std::int64_t lo = static_cast<std::int64_t>(Op::identity());
        return static_cast<T>(p < lo ? lo : (p > -lo ? -lo : p));
    } else {
        return Op::power(w, k);
    }
}

// Both algebras take the weight of a run as a `power` (power(w, length) for the weighted scan, nothing for maps), so
// the powers a kernel needs are computed once, not in every combine. pow_sum(power(a), power(b)) = power(a + b).
template <theorem1_pair Op>
struct weighted_algebra {
    using op = Op;
    using value = typename Op::value;
    using elem = value;    // the B of a composite; its weight is power(w, length)
    using power = value;
    static constexpr bool is_map = false;
    static constexpr bool saturating = std::is_same_v<Op, max_plus<value>> && std::is_integral_v<value>;
    // Powers by squaring (a loop per power): kernels compute them while the kernel before them still runs. Measured on
    // the H100 for (+,·): 6 % at 2^20; the same for (max,+) (one multiply per power) cost registers and 2-60 %.
    static constexpr bool costly_powers = !std::is_same_v<Op, max_plus<value>> && !std::is_same_v<Op, plus_plus<value>>;
    value w;

    __host__ __device__ __forceinline__ static elem identity() { return Op::identity(); }
    __host__ __device__ __forceinline__ power pow(std::int64_t len) const { return scan_power<Op>(w, len); }
    __host__ __device__ __forceinline__ static power pow_sum(power a, power b) {
        if constexpr (saturating) {
            const std::int64_t p = static_cast<std::int64_t>(a) + static_cast<std::int64_t>(b);
            const std::int64_t lo = static_cast<std::int64_t>(Op::identity());
            return static_cast<value>(p < lo ? lo : p);
        } else {
            return Op::dist(a, b);
        }
    }
    // The composite of a run (`earlier`) followed by a run of weight p_later (`later`).
    __host__ __device__ __forceinline__ elem combine(elem earlier, elem later, power p_later) const {
        if constexpr (Op::dist_distributes) return Op::acc(Op::dist(earlier, p_later), later);
        else return Op::acc(earlier, later);
    }
    // The value leaving a run of weight p_len and composite c, entered with x.
    __host__ __device__ __forceinline__ value apply(elem c, value x, power p_len) const {
        return Op::acc(Op::dist(x, p_len), c);
    }
    __host__ __device__ __forceinline__ value step(elem c, value x) const { return Op::acc(Op::dist(x, w), c); }
    __host__ __device__ __forceinline__ static elem from_map(const linear_map<Op>& m) { return m.b; }
    // An input value as the scan carries it.
    __host__ __device__ __forceinline__ static elem input(value v) { return v; }
};

// Integer (max,+) with a weight w <= 0, the usual case (gap penalties): every power is then in [identity, 0], and once
// inputs are raised to the identity (input(): a value below it acts as the identity anyway, as max with a result of
// dist, which is never below it), every value the scan carries is at least the identity. Then
//   dist(x, p) = max(x + p, identity)  and  combine(x, c, p) = max(dist(x, p), c) = max(x + p, c),
// one add-and-max (a DPX instruction on sm_90 for 32 bits) where the general saturating step takes a compare, a
// select, an add and two maxes; results are bit-identical, and x + p >= 2·identity never wraps.
// launch_weighted_scan picks it for weighted_algebra<max_plus<T>> with w <= 0, the engine for problems whose
// weights_descending() says so (their values entering a row must be at least the identity, as -inf is).
template <class T>
struct descending_max_plus_algebra : weighted_algebra<max_plus<T>> {
    using base = weighted_algebra<max_plus<T>>;
    using typename base::elem;
    using typename base::power;
    using typename base::value;
    static_assert(std::is_integral_v<T> && std::is_signed_v<T>);
    // combine(c, c, p) = max(c + p, c) = c for every power p <= 0: a warp scan needs no guard (warp_ops.cuh).
    static constexpr bool absorbs_self = true;

    __host__ __device__ __forceinline__ static value add_max(value x, value p, value c) {
#if defined(__CUDA_ARCH__)
        if constexpr (sizeof(T) == 4) return __viaddmax_s32(x, p, c);
#endif
        const value s = value(x + p);
        return s > c ? s : c;
    }
    __host__ __device__ __forceinline__ elem combine(elem earlier, elem later, power p_later) const {
        return add_max(earlier, p_later, later);
    }
    __host__ __device__ __forceinline__ value apply(elem c, value x, power p_len) const { return add_max(x, p_len, c); }
    __host__ __device__ __forceinline__ value step(elem c, value x) const { return add_max(x, this->w, c); }
    __host__ __device__ __forceinline__ static elem input(value v) {
        return v < base::identity() ? base::identity() : v;
    }
    __host__ __device__ __forceinline__ static elem from_map(const linear_map<max_plus<T>>& m) { return input(m.b); }
};

template <theorem1_pair Op>
struct map_algebra {
    using op = Op;
    using value = typename Op::value;
    using elem = linear_map<Op>;
    struct power {};  // a composite map carries its own weight
    static constexpr bool is_map = true;
    static constexpr bool saturating = false;  // the weighted scan's saturating powers; a map carries its own weight
    static constexpr bool costly_powers = false;

    __host__ __device__ __forceinline__ static elem identity() { return elem::identity_map(); }
    __host__ __device__ __forceinline__ power pow(std::int64_t) const { return {}; }
    __host__ __device__ __forceinline__ static power pow_sum(power, power) { return {}; }
    __host__ __device__ __forceinline__ elem combine(const elem& earlier, const elem& later, power) const {
        return then(earlier, later);
    }
    __host__ __device__ __forceinline__ value apply(const elem& c, value x, power) const { return c(x); }
    __host__ __device__ __forceinline__ value step(const elem& c, value x) const { return c(x); }
    __host__ __device__ __forceinline__ static elem from_map(const linear_map<Op>& m) { return m; }
};

}  // namespace swgpu::gpu
