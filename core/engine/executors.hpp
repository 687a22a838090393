// CPU executors of the wavefront engine (docs/engine.md).
//
//   run_naive        the oracle: rows top to bottom, cells left to right, each map applied to the value on its left.
//                    Any operator pair.
//   run_rowscan      the compensation order, sequentially: for each row, gather every cell first (ignoring the in-row
//                    dependency), then recover the values entering each cell by a blocked scan over the row's maps
//                    (the weighted scan when the problem's weight is constant), then finish. Theorem 1 pairs only.
//   run_tiled        tiles in anti-diagonal waves on a thread pool; inside a tile, lexicographic. Any operator pair.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/engine/linear_map.hpp"
#include "core/thread_pool.hpp"
#include "core/engine/wavefront.hpp"

namespace swgpu {

template <wavefront_problem P>
void run_naive(P& p) {
    using cell = typename P::cell;
    const index_t rows = p.rows(), cols = p.cols();
    if (rows <= 0 || cols <= 0) return;
    // Slot j+1 holds column j; slot 0 is column -1.
    std::vector<cell> up(static_cast<std::size_t>(cols) + 1), cur(static_cast<std::size_t>(cols) + 1);
    for (index_t j = -1; j < cols; ++j) up[static_cast<std::size_t>(j + 1)] = p.top(j);
    for (index_t i = 0; i < rows; ++i) {
        cur[0] = p.left(i);
        auto x = p.incoming(i);
        for (index_t j = 0; j < cols; ++j) {
            const auto s = static_cast<std::size_t>(j);
            const auto g = p.gather(i, j, up[s + 1], up[s]);
            cur[s + 1] = p.finish(i, j, g, x);
            x = p.carry(i, j, g)(x);
        }
        std::swap(up, cur);
    }
}

struct rowscan_options {
    index_t block = 64;          // cells per scan block (the CPU stand-in for a warp or thread block)
    bool force_map_scan = false;  // use the general map scan even when the problem has a constant weight
};

namespace detail {

// Exclusive scan of maps m_0..m_{n-1} applied to x0: out[j] = (m_{j-1} ∘ ... ∘ m_0)(x0). Blocked: Hillis-Steele inside
// each block, then a sequential carry across blocks, so the composition is re-associated the way a GPU scan does it.
template <theorem1_pair Op>
void map_scan(const std::vector<linear_map<Op>>& m, typename Op::value x0, index_t block,
              std::vector<typename Op::value>& out) {
    const index_t n = static_cast<index_t>(m.size());
    out.resize(m.size());
    std::vector<linear_map<Op>> s(m.size()), t(m.size());
    auto carry_in = x0;
    for (index_t b0 = 0; b0 < n; b0 += block) {
        const index_t b1 = std::min(n, b0 + block);
        for (index_t k = b0; k < b1; ++k) s[k] = m[k];
        for (index_t d = 1; d < b1 - b0; d *= 2) {  // inclusive Hillis-Steele: s[k] = m[b0..k] composed
            for (index_t k = b0; k < b1; ++k) t[k] = (k - b0 >= d) ? then(s[k - d], s[k]) : s[k];
            std::swap(s, t);
        }
        for (index_t k = b0; k < b1; ++k) out[k] = (k == b0) ? carry_in : s[k - 1](carry_in);
        carry_in = s[b1 - 1](carry_in);
    }
}

// The same scan when every map has weight w: only the b parts are scanned, the weights come from distances.
template <theorem1_pair Op>
void weighted_scan(const std::vector<typename Op::value>& b, typename Op::value w, typename Op::value x0, index_t block,
                   std::vector<typename Op::value>& out) {
    using value = typename Op::value;
    const index_t n = static_cast<index_t>(b.size());
    out.resize(b.size());
    std::vector<value> s(b.size()), t(b.size());
    value carry_b = Op::identity();  // composite b of all maps before the current block
    for (index_t b0 = 0; b0 < n; b0 += block) {
        const index_t b1 = std::min(n, b0 + block);
        for (index_t k = b0; k < b1; ++k) s[k] = b[k];
        for (index_t d = 1; d < b1 - b0; d *= 2) {
            for (index_t k = b0; k < b1; ++k) t[k] = (k - b0 >= d) ? then_weighted<Op>(s[k - d], w, d, s[k]) : s[k];
            std::swap(s, t);
        }
        for (index_t k = b0; k < b1; ++k) {
            const value before = (k == b0) ? carry_b : then_weighted<Op>(carry_b, w, k - b0, s[k - 1]);
            out[k] = linear_map<Op>{Op::power(w, k), before}(x0);
        }
        carry_b = then_weighted<Op>(carry_b, w, b1 - b0, s[b1 - 1]);
    }
}

}  // namespace detail

template <compensable_problem P>
void run_rowscan(P& p, rowscan_options opt = {}) {
    using cell = typename P::cell;
    using op = typename P::op;
    using value = typename op::value;
    const index_t rows = p.rows(), cols = p.cols();
    if (rows <= 0 || cols <= 0) return;
    const auto n = static_cast<std::size_t>(cols);
    std::vector<cell> up(n + 1), cur(n + 1);
    std::vector<typename P::gathered> g(n);
    std::vector<linear_map<op>> maps(n);
    std::vector<value> bs(n), x(n);
    for (index_t j = -1; j < cols; ++j) up[static_cast<std::size_t>(j + 1)] = p.top(j);
    for (index_t i = 0; i < rows; ++i) {
        for (std::size_t j = 0; j < n; ++j) {  // step 1: no in-row dependency
            g[j] = p.gather(i, static_cast<index_t>(j), up[j + 1], up[j]);
            maps[j] = p.carry(i, static_cast<index_t>(j), g[j]);
        }
        bool weighted = false;  // step 2: the values entering each cell
        if constexpr (constant_weight_problem<P>) {
            if (!opt.force_map_scan) {
                for (std::size_t j = 0; j < n; ++j) bs[j] = maps[j].b;
                detail::weighted_scan<op>(bs, p.weight(i), p.incoming(i), opt.block, x);
                weighted = true;
            }
        }
        if (!weighted) detail::map_scan<op>(maps, p.incoming(i), opt.block, x);
        cur[0] = p.left(i);  // step 3: finish
        for (std::size_t j = 0; j < n; ++j) cur[j + 1] = p.finish(i, static_cast<index_t>(j), g[j], x[j]);
        std::swap(up, cur);
    }
}

struct tiled_options {
    index_t tile_rows = 64;
    index_t tile_cols = 256;
};

// Tiles of tile_rows x tile_cols; wave d holds the tiles (ti, tj) with ti + tj == d, run in parallel. Boundaries travel
// through three rotating buffers per direction: tile (ti, tj) reads the bottom row of tile row ti-1 from hbuf[(ti-1)%3]
// and the right column (cells and outgoing values) of tile column tj-1 from vbuf[(tj-1)%3], the corner cell included
// (row i0-1 of that column). The only tiles that write the buffer a running tile reads are in tile rows/columns three
// apart, hence in waves at least one later; the wave barrier orders everything else.
template <wavefront_problem P>
void run_tiled(P& p, thread_pool& pool, tiled_options opt = {}) {
    using cell = typename P::cell;
    using value = typename P::op::value;
    const index_t rows = p.rows(), cols = p.cols();
    if (rows <= 0 || cols <= 0) return;
    const index_t tr = std::max<index_t>(1, opt.tile_rows), tc = std::max<index_t>(1, opt.tile_cols);
    const index_t nti = (rows + tr - 1) / tr, ntj = (cols + tc - 1) / tc;
    std::vector<cell> hbuf[3];
    std::vector<cell> vcell[3];
    std::vector<value> vx[3];
    for (int k = 0; k < 3; ++k) {
        hbuf[k].resize(static_cast<std::size_t>(cols));
        vcell[k].resize(static_cast<std::size_t>(rows));
        vx[k].resize(static_cast<std::size_t>(rows));
    }
    auto tile = [&](index_t ti, index_t tj) {
        const index_t i0 = ti * tr, i1 = std::min(rows, i0 + tr);
        const index_t j0 = tj * tc, j1 = std::min(cols, j0 + tc);
        const auto w = static_cast<std::size_t>(j1 - j0);
        std::vector<cell> up(w + 1), cur(w + 1);
        // corner: cell (i0-1, j0-1)
        if (ti == 0) up[0] = p.top(j0 - 1);
        else if (tj == 0) up[0] = p.left(i0 - 1);
        else up[0] = vcell[(tj - 1) % 3][static_cast<std::size_t>(i0 - 1)];
        for (index_t j = j0; j < j1; ++j)
            up[static_cast<std::size_t>(j - j0 + 1)] = ti == 0 ? p.top(j) : hbuf[(ti - 1) % 3][static_cast<std::size_t>(j)];
        for (index_t i = i0; i < i1; ++i) {
            const auto si = static_cast<std::size_t>(i);
            value x;
            if (tj == 0) {
                cur[0] = p.left(i);
                x = p.incoming(i);
            } else {
                cur[0] = vcell[(tj - 1) % 3][si];
                x = vx[(tj - 1) % 3][si];
            }
            for (index_t j = j0; j < j1; ++j) {
                const auto s = static_cast<std::size_t>(j - j0);
                const auto g = p.gather(i, j, up[s + 1], up[s]);
                cur[s + 1] = p.finish(i, j, g, x);
                x = p.carry(i, j, g)(x);
            }
            vcell[tj % 3][si] = cur[w];
            vx[tj % 3][si] = x;
            std::swap(up, cur);
        }
        for (index_t j = j0; j < j1; ++j) hbuf[ti % 3][static_cast<std::size_t>(j)] = up[static_cast<std::size_t>(j - j0 + 1)];
    };
    for (index_t d = 0; d < nti + ntj - 1; ++d) {
        const index_t ti_lo = std::max<index_t>(0, d - (ntj - 1)), ti_hi = std::min(nti - 1, d);
        pool.parallel_for(static_cast<std::size_t>(ti_hi - ti_lo + 1),
                          [&](std::size_t k) { tile(ti_lo + static_cast<index_t>(k), d - ti_lo - static_cast<index_t>(k)); });
    }
}

}  // namespace swgpu
