// Smith-Waterman-Gotoh (core/align/sw_problem.hpp) adapted to the GPU executors (compiled by sw_on_engine.cu). The engine contract allows finish of one
// row to run on many threads at once; sw_problem keeps the row's best end cell with a plain read-compare-write, which
// is a race there. This wrapper keeps every hook of sw_problem and records the best key with an atomic max instead
// (the key orders score descending, then column ascending, so the result is the same in any order).
//
// Each GPU thread works on its own copy of the problem, so the copy remembers the best key it has already sent for
// the row it is on: only improvements are sent, with a fire-and-forget atomic (no load waits on the row's critical
// path). The device value is the maximum over all threads' improvements, which is the maximum over all cells.
#pragma once

#include <cstdint>

#include "core/align/sw_problem.hpp"

namespace swgpu::gpu {

template <class T>
struct sw_gpu_problem : sw_problem<T> {
    using base = sw_problem<T>;
    using typename base::cell;
    using typename base::gathered;
    using typename base::op;

    // The hybrid switch's class of this problem (data/hybrid_switch.tsv).
    static constexpr const char* engine_class = "sw";

    index_t sent_row = -1;       // the row of sent_key
    std::uint64_t sent_key = 0;  // the best key this copy has sent for sent_row

    SWGPU_HD cell finish(index_t i, index_t j, const gathered& g, T x) {
        const T h = op::acc(g.ht, x);
        if (h > 0) {
            const std::uint64_t key = sw_row_key(h, j);
#if defined(__CUDA_ARCH__)
            if (i != sent_row) sent_row = i, sent_key = 0;
            if (key > sent_key) {
                sent_key = key;
                atomicMax(reinterpret_cast<unsigned long long*>(this->row_best + i), key);
            }
#else
            if (key > this->row_best[i]) this->row_best[i] = key;
#endif
        }
        return {h, g.e};
    }
};

}  // namespace swgpu::gpu
