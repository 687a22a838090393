#include "core/align/zdrop.hpp"

#include <algorithm>
#include <cstdlib>
#include <tuple>

namespace swgpu {

namespace {

// A place on the path between two steps: the operation run and the offset inside it (an aligned pair at a time in an
// M run; a gap run is one step, so its offset stays 0), and the cell (the next query and subject residues).
struct cursor {
    std::size_t op = 0;
    std::uint32_t off = 0;
    std::int64_t i = 0, j = 0;
};

// Walks the steps of an alignment: an aligned pair scores σ, a gap run of k scores −(o + k·e) (mm_test_zdrop's
// steps). Walking a gap run whole is the same as walking its cells: inside a run the drop grows by e a cell and
// e·|Δ| by at most e, so M − S − e·|Δ| never falls along a run (the run's end cuts whenever one of its cells would),
// and S only falls (it is at or below 0 at the end whenever at one of its cells).
class walker {
public:
    walker(const alignment& a, std::span<const std::uint8_t> q, std::span<const std::uint8_t> s, const scoring& sc)
        : a_(a), q_(q), s_(s), sc_(sc) {}

    cursor begin() const { return {0, 0, a_.query_begin, a_.subject_begin}; }
    bool at_end(const cursor& c) const { return c.op >= a_.ops.size(); }

    // The score of the step at c; c moves past it.
    int step(cursor& c) const {
        const cigar_op& o = a_.ops[c.op];
        if (o.op == 'M') {
            const int d = sc_.matrix.score(q_[static_cast<std::size_t>(c.i)], s_[static_cast<std::size_t>(c.j)]);
            ++c.i, ++c.j;
            if (++c.off == o.len) ++c.op, c.off = 0;
            return d;
        }
        (o.op == 'I' ? c.i : c.j) += o.len;
        ++c.op;
        return -(sc_.gaps.open + static_cast<int>(o.len) * sc_.gaps.extend);
    }

    // The part of the path from b to e as an alignment of score `score`.
    alignment between(const cursor& b, const cursor& e, int score) const {
        alignment out;
        out.score = score;
        out.query_begin = b.i, out.subject_begin = b.j;
        out.query_end = e.i - 1, out.subject_end = e.j - 1;
        for (std::size_t k = b.op; k <= e.op && k < a_.ops.size(); ++k) {
            const std::uint32_t from = k == b.op ? b.off : 0, to = k == e.op ? e.off : a_.ops[k].len;
            if (to > from) out.ops.push_back({a_.ops[k].op, to - from});
        }
        return out;
    }

private:
    const alignment& a_;
    std::span<const std::uint8_t> q_, s_;
    const scoring& sc_;
};

struct block_span {
    int score;
    std::size_t order;  // along the path
    cursor from, to;
};

// Best first: higher score, then earlier along the path.
bool before(const block_span& x, const block_span& y) {
    return x.score != y.score ? x.score > y.score : x.order < y.order;
}

}  // namespace

std::vector<alignment> zdrop_blocks(const alignment& a, std::span<const std::uint8_t> query,
                                    std::span<const std::uint8_t> subject, const scoring& sc, int zdrop,
                                    std::size_t max_blocks) {
    std::vector<alignment> out;
    if (a.ops.empty() || a.score <= 0 || max_blocks == 0) return out;
    const std::int64_t z = std::clamp(zdrop, 0, max_zdrop), e = sc.gaps.extend;
    const walker w(a, query, subject, sc);
    // The best max_blocks spans so far, as a heap whose top is the worst of them.
    std::vector<block_span> kept;
    std::size_t order = 0;
    const auto keep = [&](int score, const cursor& from, const cursor& to) {
        block_span b{score, order++, from, to};
        if (kept.size() < max_blocks) {
            kept.push_back(b);
            std::push_heap(kept.begin(), kept.end(), before);
        } else if (before(b, kept.front())) {
            std::pop_heap(kept.begin(), kept.end(), before);
            kept.back() = b;
            std::push_heap(kept.begin(), kept.end(), before);
        }
    };
    cursor c = w.begin();
    while (!w.at_end(c)) {
        // A walk from c: S the running score, M its best (0 before any), `top` the place right after the step where S
        // last reached M (the cell (i0, j0) follows it).
        const cursor from = c;
        cursor top = c;
        std::int64_t S = 0, M = 0;
        for (;;) {
            if (w.at_end(c)) {
                if (M > 0) keep(static_cast<int>(M), from, top);
                break;
            }
            S += w.step(c);
            if (S > 0 && S >= M) {
                M = S;
                top = c;
                continue;
            }
            const std::int64_t off_diagonal = std::llabs((c.i - top.i) - (c.j - top.j));
            if (S <= 0 || M - S > z + e * off_diagonal) {
                if (M > 0) {
                    keep(static_cast<int>(M), from, top);
                    c = top;  // the next walk starts right after this block's best cell
                }
                break;
            }
        }
    }
    std::sort(kept.begin(), kept.end(), before);
    out.reserve(kept.size());
    for (const auto& b : kept) out.push_back(w.between(b.from, b.to, b.score));
    return out;
}

}  // namespace swgpu
