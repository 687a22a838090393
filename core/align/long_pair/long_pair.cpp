#include "core/align/long_pair/long_pair.hpp"

#include "core/align/long_pair/detail.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <optional>
#include <queue>
#include <limits>
#include <cstdio>
#include <string>
#include <string_view>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/tuning.hpp"
#include "core/align/simd/long_pair_rows.hpp"

namespace swgpu::long_pair {

namespace {

using detail::clock;
using detail::idx;
using detail::since;

void check_borders(const rect& a, const borders& b) {
    if (b.top_h.size() != idx(a.cols() + 1) || b.top_e.size() != idx(a.cols()) || b.left_h.size() != idx(a.rows()) ||
        b.left_f.size() != idx(a.rows()))
        throw runtime_failure("internal error: long-pair borders do not match their rectangle");
}

// The borders of the part [r0, r1') x [c0, c1') of a rectangle that starts where it does (a prefix of each border).
borders prefix(const borders& b, const rect& part) {
    borders p;
    const auto cols = idx(part.cols()), rows = idx(part.rows());
    p.top_h.assign(b.top_h.begin(), b.top_h.begin() + static_cast<std::ptrdiff_t>(cols + 1));
    p.top_e.assign(b.top_e.begin(), b.top_e.begin() + static_cast<std::ptrdiff_t>(cols));
    p.left_h.assign(b.left_h.begin(), b.left_h.begin() + static_cast<std::ptrdiff_t>(rows));
    p.left_f.assign(b.left_f.begin(), b.left_f.begin() + static_cast<std::ptrdiff_t>(rows));
    return p;
}

struct cell {
    std::int64_t i = -1, j = -1;
    bool found() const { return i >= 0; }
    bool before(const cell& o) const { return !o.found() || i < o.i || (i == o.i && j < o.j); }
};

// The walk's position: the cell it is at and the matrix (H, E or F) it is in.
struct walker {
    std::int64_t i = 0, j = 0;
    char state = 'H';
    bool stopped = false;
    std::vector<char> reversed_ops;
};

class driver {
public:
    driver(backend& be, const scoring& sc, timing* t) : be_(be), sc_(sc), oe_(sc.gaps.open + sc.gaps.extend), t_(t) {}

    // The grid of a recomputed block: leaf-sized blocks when that grid fits the budget (the walk then traces its
    // blocks in batches), coarser ones otherwise; always at least two blocks along the longer side.
    std::int64_t child_spacing(const rect& area) const {
        const auto side = static_cast<std::int64_t>(std::sqrt(be_.leaf_cells()));
        const auto longest = std::max(area.rows(), area.cols());
        const auto multiple = be_.spacing_multiple();
        const auto half = ((longest + 1) / 2 + multiple - 1) / multiple * multiple;
        return std::min(spacing_for(area, be_.grid_budget(), multiple, side), half);
    }

    void forward(const rect& area, const borders& b, std::int64_t K, grid& g, bool recomputed = true) {
        check_borders(area, b);
        const auto t0 = clock::now();
        be_.forward(area, b, K, g);
        if (recomputed && t_) {
            t_->cells_recomputed += area.cells();
            ++t_->forward_calls;
            t_->recompute_s += since(t0);
        }
    }
    void trace_rect(const rect& area, const borders& b, int target, trace& tr) {
        check_borders(area, b);
        const auto t0 = clock::now();
        be_.trace_rect(area, b, target, tr);
        if (t_) {
            t_->cells_recomputed += area.cells();
            ++t_->trace_calls;
            t_->trace_s += since(t0);
        }
    }

    // The first cell in row-major order of g's rectangle whose H is `target` (the largest value in it).
    cell first_hit(const grid& g, const borders& outer, int target) {
        for (std::int64_t a = 0; a < g.A; ++a) {
            cell best;
            for (std::int64_t b = 0; b < g.B; ++b) {
                if (g.block_max[idx(a * g.B + b)] != target) continue;
                const cell c = first_in(g.block(a, b), g.block_borders(a, b, outer), target);
                if (c.before(best)) best = c;
            }
            if (best.found()) return best;
        }
        return {};
    }
    cell first_in(const rect& area, const borders& b, int target) {
        if (area.cells() <= be_.leaf_cells()) {
            trace tr;
            trace_rect(area, b, target, tr);
            return {tr.hit_i, tr.hit_j};
        }
        grid g;
        forward(area, b, child_spacing(area), g);
        return first_hit(g, b, target);
    }

    // Walks from w's cell, inside `area`, until the walk leaves the rectangle through its top or left edge or stops.
    void walk(const rect& area, const borders& b, walker& w) {
        const rect part{area.r0, w.i + 1, area.c0, w.j + 1};  // nothing right of or below the walk matters
        const borders pb = prefix(b, part);
        if (part.cells() <= be_.leaf_cells()) {
            trace tr;
            trace_rect(part, pb, 0, tr);
            walk_trace(tr, pb, w);
            return;
        }
        grid g;
        forward(part, pb, child_spacing(part), g);
        walk_grid(g, pb, w);
    }
    void walk_grid(const grid& g, const borders& b, walker& w) {
        const rect& area = g.area;
        if (be_.trace_batch() > 1 && double(g.K) * double(g.K) <= be_.leaf_cells()) {
            walk_leaves(g, b, w);
            return;
        }
        while (!w.stopped && w.i >= area.r0 && w.j >= area.c0) {
            check_cancelled();
            const std::int64_t a = (w.i - area.r0) / g.K, bc = (w.j - area.c0) / g.K;
            const auto t0 = clock::now();
            const borders inner = g.block_borders(a, bc, b);
            if (t_) t_->borders_s += since(t0);
            walk(g.block(a, bc), inner, w);
        }
    }

    // A grid whose blocks are leaves, with a backend that traces many at once: on a block not traced yet, the block
    // and the next ones along the diagonal band the walk is likely to follow (up and left, within one block of the
    // diagonal) are traced together; blocks the walk has left behind (below or right of it) are dropped.
    void walk_leaves(const grid& g, const borders& b, walker& w) {
        const rect& area = g.area;
        std::map<std::pair<std::int64_t, std::int64_t>, trace> traced;
        const std::int64_t depth = static_cast<std::int64_t>(std::max<std::size_t>(be_.trace_batch() / 3, 1));
        while (!w.stopped && w.i >= area.r0 && w.j >= area.c0) {
            check_cancelled();
            const std::int64_t a = (w.i - area.r0) / g.K, bc = (w.j - area.c0) / g.K;
            auto it = traced.find({a, bc});
            if (it == traced.end()) {
                std::erase_if(traced, [&](const auto& kv) { return kv.first.first > a || kv.first.second > bc; });
                std::vector<std::pair<std::int64_t, std::int64_t>> want{{a, bc}};
                for (std::int64_t d = 0; d < depth && want.size() < be_.trace_batch(); ++d)
                    for (const auto& [da, db] : {std::pair<std::int64_t, std::int64_t>{d + 1, d + 1}, {d + 1, d},
                                                 {d, d + 1}}) {
                        const auto blk = std::pair{a - da, bc - db};
                        if (blk.first >= 0 && blk.second >= 0 && !traced.count(blk)) want.push_back(blk);
                    }
                std::vector<trace> got;
                const auto t0 = clock::now();
                be_.trace_blocks(g, b, want, got);
                if (t_) {
                    t_->trace_calls += want.size();
                    t_->trace_s += since(t0);
                    for (const auto& blk : want) t_->cells_recomputed += g.block(blk.first, blk.second).cells();
                }
                for (std::size_t k = 0; k < want.size(); ++k) traced[want[k]] = std::move(got[k]);
                it = traced.find({a, bc});
            }
            // The block's borders are read only if the walk leaves it in a gap (rare: they cost a device copy).
            std::optional<borders> inner;
            walk_trace(it->second, [&]() -> const borders& {
                if (!inner) {
                    const auto t0 = clock::now();
                    inner = g.block_borders(a, bc, b);
                    if (t_) t_->borders_s += since(t0);
                }
                return *inner;
            }, w);
        }
    }

    // The walk of sw_traceback over a traced rectangle.
    void walk_trace(const trace& tr, const borders& b, walker& w) {
        walk_trace(tr, [&]() -> const borders& { return b; }, w);
    }
    template <class Borders>
    void walk_trace(const trace& tr, const Borders& border_of, walker& w) {
        const rect& a = tr.area;
        while (!w.stopped && w.i >= a.r0 && w.j >= a.c0) {
            check_cancelled();
            const int nib = tr.at(w.i, w.j);
            if (w.state == 'H') {
                switch (nib & 3) {
                    case 0: w.stopped = true; break;
                    case 1:
                        w.reversed_ops.push_back('M');
                        --w.i, --w.j;
                        if (w.i < 0 || w.j < 0) w.stopped = true;
                        break;
                    case 2: w.state = 'E'; break;
                    default: w.state = 'F'; break;
                }
            } else if (w.state == 'E') {
                w.reversed_ops.push_back('I');
                const bool opens = w.i > a.r0 ? (tr.at(w.i - 1, w.j) & 4) != 0
                                              : border_of().top_e[idx(w.j - a.c0)] ==
                                                    border_of().top_h[idx(w.j - a.c0 + 1)] - oe_;
                if (opens) w.state = 'H';
                --w.i;
                if (w.i < 0) throw runtime_failure("internal error: long-pair traceback ran past the first row");
            } else {
                w.reversed_ops.push_back('D');
                const bool opens = w.j > a.c0 ? (tr.at(w.i, w.j - 1) & 8) != 0
                                              : border_of().left_f[idx(w.i - a.r0)] ==
                                                    border_of().left_h[idx(w.i - a.r0)] - oe_;
                if (opens) w.state = 'H';
                --w.j;
                if (w.j < 0) throw runtime_failure("internal error: long-pair traceback ran past the first column");
            }
        }
    }

    backend& be_;
    const scoring& sc_;
    int oe_;
    timing* t_;
};

struct scored_grid {
    grid g;
    borders edge;
    sw_end end;
};

// The end cell of a scored grid whose best score is `best`: the first cell in row-major order that reaches it.
void find_end(driver& d, scored_grid& s, int best) {
    if (best <= 0) return;
    const cell c = d.first_hit(s.g, s.edge, best);
    if (!c.found()) throw runtime_failure("internal error: the end cell of a long pair was not found");
    s.end = {best, c.i, c.j};
}

scored_grid score_with_grid(driver& d, backend& be, std::int64_t m, std::int64_t n, const scoring& sc, timing* t) {
    scored_grid out;
    const rect whole{0, m, 0, n};
    out.edge = borders::matrix_edge(whole, sc);
    const double side = std::sqrt(be.leaf_cells());
    const auto K = spacing_for(whole, be.grid_budget(), be.spacing_multiple(), static_cast<std::int64_t>(side));
    auto t0 = clock::now();
    d.forward(whole, out.edge, K, out.g, false);
    if (t) t->forward_s = since(t0);
    t0 = clock::now();
    find_end(d, out, out.g.best());
    if (t) t->end_s = since(t0);
    return out;
}

void check_sizes(std::int64_t m, std::int64_t n, const scoring& sc) {
    const double bound = double(std::min(m, n)) * std::max(1, sc.matrix.max_score());
    if (bound >= double(1 << 30))
        throw usage_error("sequences of " + std::to_string(m) + " and " + std::to_string(n) +
                          " residues could score beyond 2^30; such pairs are not supported");
}

}  // namespace

void backend::trace_blocks(const grid& g, const borders& outer,
                           std::span<const std::pair<std::int64_t, std::int64_t>> blocks, std::vector<trace>& out) {
    out.resize(blocks.size());
    for (std::size_t k = 0; k < blocks.size(); ++k)
        trace_rect(g.block(blocks[k].first, blocks[k].second),
                   g.block_borders(blocks[k].first, blocks[k].second, outer), 0, out[k]);
}

borders borders::matrix_edge(const rect& area, const scoring& sc) {
    const int oe = sc.gaps.open + sc.gaps.extend;
    borders b;
    b.top_h.assign(idx(area.cols() + 1), 0);
    b.top_e.assign(idx(area.cols()), -oe);
    b.left_h.assign(idx(area.rows()), 0);
    b.left_f.assign(idx(area.rows()), -oe);
    return b;
}

int grid::best() const {
    int b = 0;
    for (int v : block_max) b = std::max(b, v);
    return b;
}

rect grid::block(std::int64_t a, std::int64_t b) const {
    return {area.r0 + a * K, std::min(area.r0 + (a + 1) * K, area.r1), area.c0 + b * K,
            std::min(area.c0 + (b + 1) * K, area.c1)};
}

borders grid::block_borders(std::int64_t a, std::int64_t b, const borders& outer) const {
    const rect r = block(a, b);
    const auto jc = r.c0 - area.c0, ir = r.r0 - area.r0;
    const auto w = idx(r.cols()), h = idx(r.rows());
    borders out;
    out.top_h.resize(w + 1);
    out.top_e.resize(w);
    out.left_h.resize(h);
    out.left_f.resize(h);
    if (a == 0) {
        std::copy_n(outer.top_h.begin() + jc, w + 1, out.top_h.begin());
        std::copy_n(outer.top_e.begin() + jc, w, out.top_e.begin());
    } else if (b == 0) {
        // The corner H[r0-1][c0-1] is the rectangle's left border at the left edge.
        out.top_h[0] = outer.left_h[idx(ir - 1)];
        lines->row(a - 1, jc, std::int64_t(w), out.top_h.data() + 1, out.top_e.data());
    } else {
        int e_unused = 0;
        lines->row(a - 1, jc - 1, 1, out.top_h.data(), &e_unused);
        lines->row(a - 1, jc, std::int64_t(w), out.top_h.data() + 1, out.top_e.data());
    }
    if (b == 0) {
        std::copy_n(outer.left_h.begin() + ir, h, out.left_h.begin());
        std::copy_n(outer.left_f.begin() + ir, h, out.left_f.begin());
    } else {
        lines->col(b - 1, ir, std::int64_t(h), out.left_h.data(), out.left_f.data());
    }
    return out;
}

host_grid_lines::host_grid_lines(std::int64_t A, std::int64_t B, std::int64_t rows_, std::int64_t cols_, bool filled)
    : rows(rows_), cols(cols_) {
    const auto row_n = idx(std::max<std::int64_t>(A - 1, 0) * cols_), col_n = idx(std::max<std::int64_t>(B - 1, 0) * rows_);
    for (auto* v : {&row_h, &row_e}) filled ? v->assign(row_n, 0) : v->resize(row_n);
    for (auto* v : {&col_h, &col_f}) filled ? v->assign(col_n, 0) : v->resize(col_n);
}

void host_grid_lines::row(std::int64_t a, std::int64_t offset, std::int64_t count, int* h, int* e) const {
    std::copy_n(row_h.begin() + a * cols + offset, count, h);
    std::copy_n(row_e.begin() + a * cols + offset, count, e);
}
void host_grid_lines::col(std::int64_t b, std::int64_t offset, std::int64_t count, int* h, int* f) const {
    std::copy_n(col_h.begin() + b * rows + offset, count, h);
    std::copy_n(col_f.begin() + b * rows + offset, count, f);
}

extern const std::string_view policy_tsv;

policy fastest_policy(double cells) {
    double best_distance = 1e300;
    policy chosen = policy::antidiagonal;
    std::size_t at = 0;
    while (at < policy_tsv.size()) {
        std::size_t end = policy_tsv.find('\n', at);
        if (end == std::string_view::npos) end = policy_tsv.size();
        const std::string line(policy_tsv.substr(at, end - at));
        at = end + 1;
        if (line.empty() || line[0] == '#' || line.rfind("cells", 0) == 0) continue;
        double c = 0, anti = 0, comp = 0;  // "-" (not measured) stops the scan early: the row is skipped
        if (std::sscanf(line.c_str(), "%lf %lf %lf", &c, &anti, &comp) != 3 || c <= 0) continue;
        const double d = std::abs(std::log(c) - std::log(std::max(cells, 1.0)));
        if (d < best_distance) best_distance = d, chosen = comp > anti ? policy::compensation : policy::antidiagonal;
    }
    return chosen;
}

std::int64_t spacing_for(const rect& area, std::size_t budget, std::int64_t multiple, std::int64_t min_spacing) {
    // Checkpoint rows and columns take about 8·(rows·cols/K)·2 bytes; block maxima rows·cols/K²·4.
    const double need = 16.0 * area.cells() / std::max<double>(double(budget), 1.0);
    std::int64_t K = std::max<std::int64_t>({min_spacing, static_cast<std::int64_t>(std::ceil(need)), 1});
    K = (K + multiple - 1) / multiple * multiple;
    return K;
}

namespace {

// The traceback of a scored grid (align's second half).
// The grid lines of a matrix whose block rows from a0 on were computed again (`below`, over rows [split, ...)) while
// those above are `above`'s.
class stacked_grid_lines final : public grid_lines {
public:
    stacked_grid_lines(std::shared_ptr<const grid_lines> above, std::shared_ptr<const grid_lines> below, std::int64_t a0,
                       std::int64_t split)
        : above_(std::move(above)), below_(std::move(below)), a0_(a0), split_(split) {}
    void row(std::int64_t a, std::int64_t offset, std::int64_t count, int* h, int* e) const override {
        if (a < a0_) above_->row(a, offset, count, h, e);
        else below_->row(a - a0_, offset, count, h, e);
    }
    void col(std::int64_t b, std::int64_t offset, std::int64_t count, int* h, int* f) const override {
        const std::int64_t up = std::clamp<std::int64_t>(split_ - offset, 0, count);
        if (up > 0) above_->col(b, offset, up, h, f);
        if (count > up) below_->col(b, offset + up - split_, count - up, h + up, f + up);
    }

private:
    std::shared_ptr<const grid_lines> above_, below_;
    std::int64_t a0_, split_;
};

// The scored grid of the whole m x n matrix after cells from row `first_row` on changed (a diagonal step forbidden
// there): the block rows above the one holding first_row are `prev`'s, the rest is computed again from prev's
// checkpoint row above them. Exact, as H of a row depends only on the rows above it.
scored_grid score_below(driver& d, const scored_grid& prev, std::int64_t first_row, std::int64_t m, std::int64_t n,
                        const scoring& sc) {
    const std::int64_t K = prev.g.K, a0 = first_row / K;
    scored_grid out;
    out.edge = prev.edge;
    const rect below{a0 * K, m, 0, n};
    borders b = borders::matrix_edge(below, sc);  // the left edge; the top comes from the checkpoint row
    prev.g.lines->row(a0 - 1, 0, n, b.top_h.data() + 1, b.top_e.data());
    grid g;
    d.forward(below, b, K, g, false);
    out.g.area = prev.g.area;
    out.g.K = K;
    out.g.A = prev.g.A;
    out.g.B = prev.g.B;
    out.g.block_max.assign(prev.g.block_max.begin(), prev.g.block_max.begin() + static_cast<std::ptrdiff_t>(a0 * prev.g.B));
    out.g.block_max.insert(out.g.block_max.end(), g.block_max.begin(), g.block_max.end());
    out.g.lines = std::make_shared<stacked_grid_lines>(prev.g.lines, g.lines, a0, a0 * K);
    find_end(d, out, out.g.best());
    return out;
}

alignment align_from(driver& d, backend& be, const scored_grid& s, timing* t) {
    alignment a;
    if (s.end.score <= 0) return a;
    const auto t0 = clock::now();
    if (be.progress) be.progress(-1);
    walker w;
    w.i = s.end.query_end;
    w.j = s.end.subject_end;
    d.walk_grid(s.g, s.edge, w);
    if (!w.stopped) throw runtime_failure("internal error: the long-pair traceback left the matrix");
    a.score = s.end.score;
    a.query_end = s.end.query_end;
    a.subject_end = s.end.subject_end;
    a.query_begin = w.i + 1;
    a.subject_begin = w.j + 1;
    for (auto it = w.reversed_ops.rbegin(); it != w.reversed_ops.rend(); ++it) {
        if (!a.ops.empty() && a.ops.back().op == *it) ++a.ops.back().len;
        else a.ops.push_back({*it, 1});
    }
    if (t) t->traceback_s = since(t0);
    return a;
}

}  // namespace

sw_end score(backend& be, std::int64_t m, std::int64_t n, const scoring& sc, timing* t) {
    check_sizes(m, n, sc);
    if (m == 0 || n == 0) return {};
    driver d(be, sc, t);
    return score_with_grid(d, be, m, n, sc, t).end;
}

alignment align(backend& be, std::int64_t m, std::int64_t n, const scoring& sc, timing* t) {
    check_sizes(m, n, sc);
    alignment a;
    if (m == 0 || n == 0) return a;
    driver d(be, sc, t);
    return align_from(d, be, score_with_grid(d, be, m, n, sc, t), t);
}

std::vector<alignment> align_more(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                  const scoring& sc, thread_pool& pool, alignment first, int max_hsps, int min_score,
                                  std::size_t grid_budget, double leaf_cells, int lanes,
                                  const std::function<void(int k, double fraction)>& progress,
                                  const std::function<bool(const std::vector<alignment>& found)>& enough,
                                  const std::function<std::unique_ptr<backend>()>& make) {
    std::vector<alignment> out;
    if (max_hsps < 1 || first.score <= 0 || first.score < min_score) return out;
    const auto m = static_cast<std::int64_t>(query.size()), n = static_cast<std::int64_t>(subject.size());
    check_sizes(m, n, sc);
    auto forbidden = std::make_shared<forbidden_pairs>();
    out.push_back(std::move(first));
    // One backend for every pass where `make` gives one that forbids steps (declared before the grid below, which
    // may live on its device and goes first).
    std::unique_ptr<backend> given;
    if (make && max_hsps > 1) {
        given = make();
        if (given && !given->forbid(forbidden)) given.reset();
    }
    // The grid of the last pass: the next one computes again only the block rows from the one where the alignment
    // just found begins (nothing above its first row changed).
    std::optional<scored_grid> prev;
    while (static_cast<int>(out.size()) < max_hsps) {
        if (enough && enough(out)) break;
        forbidden->add(out.back());
        std::optional<cpu_backend> own;
        if (!given) {
            own.emplace(query, subject, sc, pool, grid_budget, leaf_cells, lanes);
            own->forbid(forbidden);
        }
        backend& be = given ? *given : static_cast<backend&>(*own);
        if (progress) be.progress = [&progress, k = static_cast<int>(out.size()) + 1](double f) { progress(k, f); };
        driver d(be, sc, nullptr);
        const std::int64_t changed = out.back().query_begin;
        scored_grid s = prev && changed >= prev->g.K ? score_below(d, *prev, changed, m, n, sc)
                                                     : score_with_grid(d, be, m, n, sc, nullptr);
        alignment a = align_from(d, be, s, nullptr);
        if (a.score <= 0 || a.score < min_score) break;
        out.push_back(std::move(a));
        prev = std::move(s);
    }
    return out;
}

namespace {

// run_batch in its steps: the pairs ordered, the first passes started as the device's share allows (side by side on
// threads of their own, or alone), then end cells and tracebacks one pair after the other.
class batch_runner {
public:
    batch_runner(std::span<const batch_pair> pairs, const scoring& sc, bool traceback)
        : pairs_(pairs), sc_(sc), traceback_(traceback), jobs_(pairs.size()),
          profile_(tuning::flag("long.profile")), start_(clock::now()) {
        for (const auto& p : pairs) {
            check_sizes(p.m, p.n, sc);
            batch_rows_ += p.m;
            all_cells_ += double(p.m) * double(p.n);
        }
    }

    std::vector<alignment> run() {
        for (const std::size_t k : largest_first()) {
            if (pairs_[k].m == 0 || pairs_[k].n == 0) continue;
            check_cancelled();
            if (has_failed()) break;
            make_backend(k);
            const rect whole{0, pairs_[k].m, 0, pairs_[k].n};
            const backend::share_shape shape = jobs_[k].be->sharing(whole, batch_rows_);
            const bool shares = shape.units > 0 && shape.capacity > 0 && shape.units <= shape.capacity;
            if (!(shares ? start_shared(k, shape) : run_alone(k))) break;
        }
        for (auto& t : threads_) t.join();
        if (failed_) std::rethrow_exception(failed_);
        check_cancelled();
        return finish();
    }

private:
    struct job {
        std::unique_ptr<backend> be;
        scored_grid s;  // destroyed before the backend
        int best = 0;
    };
    // The grid first: its lines may live on the backend's device, freed in the backend's stream.
    static void release(job& j) {
        j.s = scored_grid{};
        j.be.reset();
    }

    // Largest pairs first: the batch ends with the small ones filling the device's last gaps.
    std::vector<std::size_t> largest_first() const {
        std::vector<std::size_t> order(pairs_.size());
        for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return double(pairs_[a].m) * double(pairs_[a].n) > double(pairs_[b].m) * double(pairs_[b].n);
        });
        return order;
    }

    void make_backend(std::size_t k) {
        const double asked = since(start_);
        jobs_[k].be = pairs_[k].make();
        if (profile_)
            std::fprintf(stderr, "long pair batch: %lld x %lld backend made %.3f-%.3f s\n",
                         static_cast<long long>(pairs_[k].m), static_cast<long long>(pairs_[k].n), asked,
                         since(start_));
        if (budget_ == 0) budget_ = jobs_[k].be->grid_budget();
    }

    // The first forward pass of a pair: with traceback, a grid within its share (by cells) of the first backend's
    // budget, since every grid is kept until the tracebacks; without, one block (its maximum is the score).
    void first_pass(std::size_t k) {
        job& j = jobs_[k];
        const rect whole{0, pairs_[k].m, 0, pairs_[k].n};
        j.s.edge = borders::matrix_edge(whole, sc_);
        const std::int64_t multiple = j.be->spacing_multiple();
        std::int64_t K = 0;
        if (traceback_) {
            const auto mine = static_cast<std::size_t>(double(budget_) * whole.cells() / std::max(all_cells_, 1.0));
            K = spacing_for(whole, std::max<std::size_t>(mine, 1), multiple,
                            static_cast<std::int64_t>(std::sqrt(j.be->leaf_cells())));
        } else {
            K = (std::max(whole.rows(), whole.cols()) + multiple - 1) / multiple * multiple;
        }
        j.be->forward(whole, j.s.edge, K, j.s.g);
        j.best = j.s.g.best();
        if (!traceback_) release(j);
    }

    bool has_failed() {
        std::lock_guard<std::mutex> g(lock_);
        return failed_ != nullptr;
    }
    template <class Ready>
    void wait_until(const Ready& ready) {
        std::unique_lock<std::mutex> g(lock_);
        changed_.wait(g, [&] { return failed_ || ready(); });
    }

    // A backend that does not share: the pair alone on the device, after the passes running now. False: stop.
    bool run_alone(std::size_t k) {
        wait_until([&] { return running_ == 0; });
        if (has_failed()) return false;
        first_pass(k);
        return true;
    }

    // A pass beside the others, once its units fit beside theirs (and of their kind). False: stop.
    bool start_shared(std::size_t k, const backend::share_shape& shape) {
        wait_until([&] { return running_ == 0 || (kind_ == shape.kind && used_ + shape.units <= shape.capacity); });
        std::lock_guard<std::mutex> g(lock_);
        if (failed_) return false;
        used_ += shape.units;
        kind_ = shape.kind;
        ++running_;
        jobs_[k].be->share(shape.units, batch_rows_);
        threads_.emplace_back([this, k, shape] {
            std::exception_ptr err;
            try {
                const double began = since(start_);
                first_pass(k);  // releases the backend when no traceback follows
                if (profile_)
                    std::fprintf(stderr, "long pair batch: %lld x %lld, %zu of %zu units, pass %.3f-%.3f s\n",
                                 static_cast<long long>(pairs_[k].m), static_cast<long long>(pairs_[k].n),
                                 shape.units, shape.capacity, began, since(start_));
                if (jobs_[k].be) jobs_[k].be->share(0, 0);  // the traceback gets the whole device
            } catch (...) {
                err = std::current_exception();
            }
            std::lock_guard<std::mutex> g2(lock_);
            used_ -= shape.units;
            --running_;
            if (err && !failed_) failed_ = err;
            changed_.notify_all();
        });
        return true;
    }

    // End cells and tracebacks, largest pairs first, as many pairs at once as the backend allows
    // (concurrent_tracebacks: a traceback is mostly waits, for its small kernels and the host's walk, so several
    // overlap on one GPU), each backend with the whole device.
    std::vector<alignment> finish() {
        std::vector<alignment> out(pairs_.size());
        std::vector<std::size_t> to_trace;
        for (const std::size_t k : largest_first()) {
            if (pairs_[k].m == 0 || pairs_[k].n == 0) continue;
            if (traceback_) to_trace.push_back(k);
            else out[k].score = std::max(jobs_[k].best, 0);
        }
        if (to_trace.empty()) return out;
        const auto width = static_cast<unsigned>(
            std::clamp<std::size_t>(jobs_[to_trace[0]].be->concurrent_tracebacks(), 1, to_trace.size()));
        // A pool of `width` threads takes the pairs in order, each as a thread comes free; the first failure stops it.
        thread_pool tracers(width);
        tracers.parallel_for(to_trace.size(), [&](std::size_t at) {
            job& j = jobs_[to_trace[at]];
            if (width > 1) j.be->progress = nullptr;  // the batch's own message stays on the terminal
            driver d(*j.be, sc_, nullptr);
            find_end(d, j.s, j.best);
            out[to_trace[at]] = align_from(d, *j.be, j.s, nullptr);
            release(j);
        });
        return out;
    }

    std::span<const batch_pair> pairs_;
    const scoring& sc_;
    bool traceback_;
    std::vector<job> jobs_;
    bool profile_;
    clock::time_point start_;
    std::int64_t batch_rows_ = 0;
    double all_cells_ = 0;
    std::size_t budget_ = 0;
    std::mutex lock_;
    std::condition_variable changed_;
    std::size_t used_ = 0;
    long long kind_ = 0;
    int running_ = 0;
    std::exception_ptr failed_;
    std::vector<std::thread> threads_;
};

}  // namespace

std::vector<alignment> run_batch(std::span<const batch_pair> pairs, const scoring& sc, bool traceback) {
    return batch_runner(pairs, sc, traceback).run();
}

}  // namespace swgpu::long_pair
