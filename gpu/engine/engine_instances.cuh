// The problems the GPU executors are compiled for, with the scan algebra of each: the weighted scan for constant-weight
// problems (and the map scan, which schedule_choice::force_map_scan selects), the map scan for row-varying weights.
// row_sync.cu and tiled_p2p.cu instantiate the executors for this list; engine.cu declares them extern and dispatches.
// The engine's own list holds its synthetic problems only; a domain's problem is compiled in a .cu of its own with the
// macros below (Smith-Waterman: tests/gpu/engine/sw_on_engine.cu).
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "core/engine/operator_pair.hpp"
#include "gpu/engine/row_sync.cuh"
#include "gpu/engine/synthetic_problems.hpp"
#include "gpu/engine/tiled_p2p.cuh"
#include "gpu/engine/weighted_scan.cuh"

namespace swgpu::gpu {

template <class P>
using weighted_of = weighted_algebra<typename P::op>;
template <class P>
using map_of = map_algebra<typename P::op>;
// Problems that can say their weights are all at most 0 (weights_descending()) and have integer (max,+) also run
// with descending_max_plus_algebra when they do; for the others this is weighted_of<P>.
template <class P>
concept may_descend = std::is_integral_v<typename P::op::value> &&
                      std::is_same_v<typename P::op, max_plus<typename P::op::value>> &&
                      requires(const P& p) { { p.weights_descending() } -> std::convertible_to<bool>; };
template <class P>
using descending_of = std::conditional_t<may_descend<P>, descending_max_plus_algebra<typename P::op::value>, weighted_of<P>>;

// X(problem, algebra) for every compiled pair.
#define SWGPU_ENGINE_INSTANCES(X)                                              \
    X(synthetic_max_plus_i32, weighted_of<synthetic_max_plus_i32>)             \
    X(synthetic_max_plus_i32, map_of<synthetic_max_plus_i32>)                  \
    X(synthetic_max_plus_f32, weighted_of<synthetic_max_plus_f32>)             \
    X(synthetic_max_plus_f32, map_of<synthetic_max_plus_f32>)                  \
    X(synthetic_plus_times_f32, weighted_of<synthetic_plus_times_f32>)         \
    X(synthetic_plus_times_f32, map_of<synthetic_plus_times_f32>)              \
    X(synthetic_plus_times_u32, weighted_of<synthetic_plus_times_u32>)         \
    X(synthetic_plus_times_u32, map_of<synthetic_plus_times_u32>)              \
    X(synthetic_plus_plus_u32, weighted_of<synthetic_plus_plus_u32>)           \
    X(synthetic_plus_plus_u32, map_of<synthetic_plus_plus_u32>)                \
    X(synthetic_max_plus_i32_varying, map_of<synthetic_max_plus_i32_varying>)  \
    X(synthetic_plus_times_f32_varying, map_of<synthetic_plus_times_f32_varying>)

#define SWGPU_ROW_SYNC_INSTANCE(P, A) \
    template void run_row_sync<P, A>(const P&, row_barrier, row_sync_workspace<P, A>&, cudaStream_t);
#define SWGPU_TILED_P2P_INSTANCE(P, A) \
    template void run_tiled_p2p<P, A>(const P&, int, std::int64_t, tiled_workspace<P>&, cudaStream_t);

}  // namespace swgpu::gpu
