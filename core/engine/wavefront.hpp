// The contract between a wavefront problem and the executors that schedule it (docs/engine.md).
//
// A problem is a small copyable struct of scalars and non-owning views. The executor owns the order of evaluation and
// the buffers of finished cells; the problem owns the math:
//   gather(i, j, up, diag)  everything cell (i, j) needs from finished rows: up = cell (i-1, j), diag = cell (i-1, j-1)
//   carry(i, j, g)          the in-row map m_j: the value entering cell j+1 is m_j(value entering cell j)
//   finish(i, j, g, x)      the cell, given x = the value entering it from the left; may record outputs
// plus the boundary: top(j) is the cell of row -1 (j = -1 .. cols-1), left(i) the cell of column -1, incoming(i) the
// value entering column 0 of row i.
//
// Rules the executors rely on: gather and carry are pure; finish for the cells of one row is never called by two
// threads at once, and outputs it records must be order-independent across rows (a max over keys, a per-cell store).
//
// A problem whose in-row weight is the same along a row declares `static constexpr bool constant_weight = true` and
// `weight(i)`; then carry(i, j, g).a == weight(i) for every j and the compensation schedules use the weighted scan,
// which carries only values and distances instead of maps. Such a problem over integer (max,+) may also declare
// `bool weights_descending() const`: when it returns true, every weight(i) is at most 0 and incoming(i) is -inf (the
// identity), and the GPU engine scans its rows with one add-and-max per step (descending_max_plus_algebra).
#pragma once

#include <concepts>
#include <cstdint>

#include "core/engine/linear_map.hpp"
#include "core/engine/operator_pair.hpp"

namespace swgpu {

using index_t = std::int64_t;

template <class P>
concept wavefront_problem = requires(P& p, const P& cp, index_t i, index_t j, const typename P::cell& c,
                                     const typename P::gathered& g, typename P::op::value x) {
    requires operator_pair<typename P::op>;
    typename P::cell;
    typename P::gathered;
    { cp.rows() } -> std::convertible_to<index_t>;
    { cp.cols() } -> std::convertible_to<index_t>;
    { cp.top(j) } -> std::convertible_to<typename P::cell>;
    { cp.left(i) } -> std::convertible_to<typename P::cell>;
    { cp.incoming(i) } -> std::convertible_to<typename P::op::value>;
    { cp.gather(i, j, c, c) } -> std::convertible_to<typename P::gathered>;
    { cp.carry(i, j, g) } -> std::convertible_to<linear_map<typename P::op>>;
    { p.finish(i, j, g, x) } -> std::convertible_to<typename P::cell>;
};

template <class P>
concept constant_weight_problem = wavefront_problem<P> && P::constant_weight && requires(const P& cp, index_t i) {
    { cp.weight(i) } -> std::convertible_to<typename P::op::value>;
};

// A problem whose rows may be re-associated into a scan (Theorem 1).
template <class P>
concept compensable_problem = wavefront_problem<P> && theorem1_pair<typename P::op>;

}  // namespace swgpu
