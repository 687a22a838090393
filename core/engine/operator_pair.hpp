// Operator pairs of the wavefront engine (docs/engine.md).
//
// A wavefront recurrence A[i][j] = (A[i][j-1] ∘ b0) ◇ (A[i-1][j] ∘ b1) ◇ (A[i-1][j-1] ∘ b2) is written over a pair
// (◇ accumulation, ∘ distribution). The in-row step is the map  x ↦ (x ∘ a) ◇ b.  Theorem 1 of Hou et al. (IPDPS 2018)
// lets a row be computed by a scan over such maps when ◇ is associative and commutative and either ∘ distributes over
// ◇ or ∘ is ◇ itself. These conditions are compile-time traits here; `theorem1_pair` is the concept the compensation
// schedules require.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/host_device.hpp"

namespace swgpu {

// (max, +): Smith-Waterman, longest paths. The identity of max is "minus infinity"; for integers a sentinel far enough
// from the type's minimum that adding a few penalties cannot wrap.
template <class T>
struct max_plus {
    using value = T;
    static constexpr bool acc_associative = true;
    static constexpr bool acc_commutative = true;
    static constexpr bool dist_distributes = true;  // (x max y) + a == (x + a) max (y + a)
    static constexpr bool dist_is_acc = false;
    SWGPU_HD static constexpr T identity() {
        if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
        else return std::numeric_limits<T>::min() / 2;
    }
    SWGPU_HD static constexpr T dist_identity() { return T(0); }
    SWGPU_HD static constexpr T acc(T x, T y) { return x > y ? x : y; }
    // Integers: -inf (the identity) stays -inf, and a result below it is -inf too (the identity), so values never
    // leave [identity, max] and adding a weight of at least the identity never wraps.
    SWGPU_HD static constexpr T dist(T x, T w) {
        if constexpr (std::is_floating_point_v<T>) {
            return x + w;
        } else {
            if (x <= identity()) return identity();
            const T r = T(x + w);
            return r < identity() ? identity() : r;
        }
    }
    // w ∘ w ∘ ... (k times)
    SWGPU_HD static constexpr T power(T w, std::int64_t k) { return T(w * T(k)); }
};

// (+, ·): SOR, summed-area tables, linear filters.
template <class T>
struct plus_times {
    using value = T;
    static constexpr bool acc_associative = true;  // exactly for integers; up to rounding for floats
    static constexpr bool acc_commutative = true;
    static constexpr bool dist_distributes = true;  // (x + y)·a == x·a + y·a
    static constexpr bool dist_is_acc = false;
    SWGPU_HD static constexpr T identity() { return T(0); }
    SWGPU_HD static constexpr T dist_identity() { return T(1); }
    SWGPU_HD static constexpr T acc(T x, T y) { return x + y; }
    SWGPU_HD static constexpr T dist(T x, T w) { return x * w; }
    SWGPU_HD static constexpr T power(T w, std::int64_t k) {
        T r = T(1), b = w;
        for (; k > 0; k >>= 1) {  // square-and-multiply: O(log k)
            if (k & 1) r = r * b;
            b = b * b;
        }
        return r;
    }
};

// (+, +): accumulation and distribution are the same operator (Theorem 1's second case): prefix sums with a constant
// per-step increment, counting paths by length.
template <class T>
struct plus_plus {
    using value = T;
    static constexpr bool acc_associative = true;
    static constexpr bool acc_commutative = true;
    static constexpr bool dist_distributes = false;  // (x + y) + a != (x + a) + (y + a)
    static constexpr bool dist_is_acc = true;
    SWGPU_HD static constexpr T identity() { return T(0); }
    SWGPU_HD static constexpr T dist_identity() { return T(0); }
    SWGPU_HD static constexpr T acc(T x, T y) { return x + y; }
    SWGPU_HD static constexpr T dist(T x, T w) { return x + w; }
    SWGPU_HD static constexpr T power(T w, std::int64_t k) { return T(w * T(k)); }
};

// A pair that satisfies none of Theorem 1's conditions: accumulation is a remainder of a sum (the 3-D sweep's fmod
// recurrence). Over floats, fmod(fmod(x + y, m) + z, m) depends on rounding order, so no re-association is allowed;
// only the dependency-preserving schedules accept it.
template <class T>
struct fmod_plus {
    using value = T;
    static constexpr T modulus = T(1024);
    static constexpr bool acc_associative = false;
    static constexpr bool acc_commutative = true;
    static constexpr bool dist_distributes = false;
    static constexpr bool dist_is_acc = false;
    SWGPU_HD static constexpr T identity() { return T(0); }
    SWGPU_HD static constexpr T dist_identity() { return T(0); }
    SWGPU_HD static T acc(T x, T y) {
        T s = x + y;
        return s - modulus * T(static_cast<long long>(s / modulus));
    }
    SWGPU_HD static constexpr T dist(T x, T w) { return x + w; }
    SWGPU_HD static constexpr T power(T w, std::int64_t k) { return T(w * T(k)); }
};

// Any pair: names its value, both operators, the identity of ◇ and how a weight is raised to a distance.
template <class Op>
concept operator_pair = requires(typename Op::value x, std::int64_t k) {
    typename Op::value;
    { Op::identity() } -> std::convertible_to<typename Op::value>;
    { Op::dist_identity() } -> std::convertible_to<typename Op::value>;
    { Op::acc(x, x) } -> std::convertible_to<typename Op::value>;
    { Op::dist(x, x) } -> std::convertible_to<typename Op::value>;
    { Op::power(x, k) } -> std::convertible_to<typename Op::value>;
    { Op::acc_associative } -> std::convertible_to<bool>;
    { Op::acc_commutative } -> std::convertible_to<bool>;
    { Op::dist_distributes } -> std::convertible_to<bool>;
    { Op::dist_is_acc } -> std::convertible_to<bool>;
};

// Theorem 1: ◇ associative and commutative, and ∘ distributes over ◇ or ∘ = ◇. Schedules that ignore the in-row
// dependency and repair it by a scan are constrained on this concept; a pair that fails it is rejected at compile time
// with this concept named in the diagnostic.
template <class Op>
concept theorem1_pair = operator_pair<Op> && Op::acc_associative && Op::acc_commutative &&
                        (Op::dist_distributes || Op::dist_is_acc);

}  // namespace swgpu
