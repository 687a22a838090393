// Synthetic wavefront problems over each operator pair, for the engine's tests and benchmarks. Their inputs are hashes
// of (seed, i, j), so a problem of 2^30 cells costs no memory, and the same struct runs on the CPU executors (the
// reference) and on the GPU ones. The recurrence, with s(i, j) the hashed source term:
//   Ã[i][j] = (A[i-1][j] ∘ w_up) ◇ (A[i-1][j-1] ∘ w_diag) ◇ s(i, j)
//   A[i][j] = Ã[i][j] ◇ x_j,   x_{j+1} = A[i][j] ∘ w_left(i, j)       (x_0 = incoming(i))
// so the in-row map is m_j(x) = (x ∘ w_left) ◇ (Ã ∘ w_left) for a distributive pair, and m_j(x) = (x ∘ w_left) ◇ Ã
// when ∘ is ◇ (then (Ã ◇ x) ∘ w = x ∘ w ◇ Ã). With Varying = false, w_left depends only on the row (the weighted scan);
// with Varying = true it is hashed per cell (the general map scan).
//
// Value ranges keep every pair exact or bounded: (max,+) uses small integers (exact in int32 and in float), (+,·) over
// float uses weights summing to 0.8 and sources in [0, 1) (values stay below 5), integer (+,·) and (+,+) use uint32
// (wrapping arithmetic is exact modulo 2^32).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/host_device.hpp"
#include "core/engine/linear_map.hpp"
#include "core/engine/operator_pair.hpp"
#include "core/engine/wavefront.hpp"

namespace swgpu::gpu {

SWGPU_HD std::uint32_t synthetic_hash(std::uint64_t seed, std::int64_t i, std::int64_t j) {
    std::uint64_t x = seed ^ (static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ull) ^
                      (static_cast<std::uint64_t>(j) * 0xc2b2ae3d27d4eb4full);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return static_cast<std::uint32_t>(x >> 32);
}

template <operator_pair Op, bool Varying>
struct synthetic_problem {
    using op = Op;
    using value = typename Op::value;
    using cell = value;
    struct gathered {
        value tilde;
    };
    static constexpr bool constant_weight = !Varying;

    index_t m = 0, n = 0;
    std::uint64_t seed = 1;
    value* out = nullptr;  // optional row-major m × n store of every cell

    SWGPU_HD index_t rows() const { return m; }
    SWGPU_HD index_t cols() const { return n; }

    // A source-like value in the pair's range; `salt` separates the uses.
    SWGPU_HD value source(index_t i, index_t j, std::uint64_t salt) const {
        const std::uint32_t h = synthetic_hash(seed + salt, i, j);
        if constexpr (std::is_same_v<Op, max_plus<value>>) return value(static_cast<int>(h % 101) - 50);
        else if constexpr (std::is_floating_point_v<value>) return value(h >> 8) * value(1.0 / 16777216.0);
        else return value(h);
    }
    SWGPU_HD value w_up() const {
        if constexpr (std::is_same_v<Op, max_plus<value>>) return value(-2);
        else if constexpr (std::is_floating_point_v<value>) return value(0.3);
        else return value(5);
    }
    SWGPU_HD value w_diag() const {
        if constexpr (std::is_same_v<Op, max_plus<value>>) return value(1);
        else if constexpr (std::is_floating_point_v<value>) return value(0.2);
        else return value(7);
    }
    SWGPU_HD value w_left(index_t i, index_t j) const {
        const std::uint32_t h = synthetic_hash(seed + 99, i, Varying ? j : 0);
        if constexpr (std::is_same_v<Op, max_plus<value>>) return value(-1 - static_cast<int>(h % 3));
        else if constexpr (std::is_floating_point_v<value>) return value(0.1) + value(h >> 8) * value(0.2 / 16777216.0);
        else return value(h | 1u);
    }

    SWGPU_HD cell top(index_t j) const { return source(-1, j, 11); }
    SWGPU_HD cell left(index_t i) const { return source(i, -1, 13); }
    SWGPU_HD value incoming(index_t i) const { return source(i, -1, 17); }
    SWGPU_HD value weight(index_t i) const { return w_left(i, 0); }
    SWGPU_HD gathered gather(index_t i, index_t j, const cell& up, const cell& diag) const {
        return {Op::acc(Op::acc(Op::dist(up, w_up()), Op::dist(diag, w_diag())), source(i, j, 0))};
    }
    SWGPU_HD linear_map<Op> carry(index_t i, index_t j, const gathered& g) const {
        const value w = w_left(i, j);
        if constexpr (Op::dist_is_acc) return {w, g.tilde};
        else return {w, Op::dist(g.tilde, w)};
    }
    SWGPU_HD cell finish(index_t i, index_t j, const gathered& g, value x) {
        const value a = Op::acc(g.tilde, x);
        if (out) out[i * n + j] = a;
        return a;
    }
};

// The synthetic problems the GPU engine is compiled for (gpu/engine/engine.cu runs them; in a build without CUDA,
// gpu/without_cuda.cpp defines the same entry points to throw its "built without CUDA" error).
using synthetic_max_plus_i32 = synthetic_problem<max_plus<std::int32_t>, false>;
using synthetic_max_plus_f32 = synthetic_problem<max_plus<float>, false>;
using synthetic_plus_times_f32 = synthetic_problem<plus_times<float>, false>;
using synthetic_plus_times_u32 = synthetic_problem<plus_times<std::uint32_t>, false>;
using synthetic_plus_plus_u32 = synthetic_problem<plus_plus<std::uint32_t>, false>;
using synthetic_max_plus_i32_varying = synthetic_problem<max_plus<std::int32_t>, true>;
using synthetic_plus_times_f32_varying = synthetic_problem<plus_times<float>, true>;

// X(problem) for each of them.
#define SWGPU_FOR_EACH_SYNTHETIC_PROBLEM(X) \
    X(synthetic_max_plus_i32)               \
    X(synthetic_max_plus_f32)               \
    X(synthetic_plus_times_f32)             \
    X(synthetic_plus_times_u32)             \
    X(synthetic_plus_plus_u32)              \
    X(synthetic_max_plus_i32_varying)       \
    X(synthetic_plus_times_f32_varying)

}  // namespace swgpu::gpu
