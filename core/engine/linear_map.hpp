// The in-row step of a wavefront problem as a map  m(x) = (x ∘ a) ◇ b  over an operator pair.
//
// Maps compose associatively but not commutatively: (m1 then m2)(x) = m2(m1(x)). For a distributive pair
//   m2(m1(x)) = (x ∘ (a1 ∘ a2)) ◇ ((b1 ∘ a2) ◇ b2),
// and when ∘ is ◇ itself (with ◇ commutative)
//   m2(m1(x)) = x ◇ (a1 ◇ a2) ◇ (b1 ◇ b2).
// Either way the composite is again a map of the same shape, so a row is a scan over maps. When the weight a is the
// same for every cell of a row, the composite of L consecutive maps has a = power(a, L): only b needs to be carried
// (the weighted scan of the paper).
#pragma once

#include <cstdint>

#include "core/host_device.hpp"
#include "core/engine/operator_pair.hpp"

namespace swgpu {

template <operator_pair Op>
struct linear_map {
    using value = typename Op::value;
    value a;  // weight applied to the incoming value
    value b;  // value accumulated after it

    SWGPU_HD static constexpr linear_map identity_map() { return {Op::dist_identity(), Op::identity()}; }
    SWGPU_HD constexpr value operator()(value x) const { return Op::acc(Op::dist(x, a), b); }
};

// first then second. Only defined for pairs where the composite is again a linear_map.
template <theorem1_pair Op>
SWGPU_HD constexpr linear_map<Op> then(const linear_map<Op>& first, const linear_map<Op>& second) {
    if constexpr (Op::dist_distributes) {
        return {Op::dist(first.a, second.a), Op::acc(Op::dist(first.b, second.a), second.b)};
    } else {
        return {Op::acc(first.a, second.a), Op::acc(first.b, second.b)};
    }
}

// Constant-weight fast path: the b of a run of maps that all carry weight w, extended by `len` more maps of weight w
// whose composite b is `next_b`. Equivalent to then({power(w,?), prev_b}, {power(w,len), next_b}).b.
template <theorem1_pair Op>
SWGPU_HD constexpr typename Op::value then_weighted(typename Op::value prev_b, typename Op::value w, std::int64_t len,
                                                    typename Op::value next_b) {
    if constexpr (Op::dist_distributes) return Op::acc(Op::dist(prev_b, Op::power(w, len)), next_b);
    else return Op::acc(prev_b, next_b);
}

}  // namespace swgpu
