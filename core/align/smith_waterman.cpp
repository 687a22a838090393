#include "core/align/smith_waterman.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/error.hpp"

namespace swgpu {

namespace {

constexpr int neg_inf = std::numeric_limits<int>::min() / 4;

void check_length(std::size_t m, std::size_t n, const scoring& sc) {
    const double bound = static_cast<double>(std::min(m, n)) * std::max(1, sc.matrix.max_score());
    if (bound >= double(1 << 30))
        throw usage_error("sequences of " + std::to_string(m) + " and " + std::to_string(n) +
                          " residues could score beyond 2^30; such pairs are not supported");
}

// Rows r0..r1 (inclusive) and columns 0..J of H, E, F, computed from the boundary row r0-1 (bh, be over 0..J).
struct block {
    std::int64_t r0 = 0, r1 = -1, J = -1;
    std::vector<int> h, e, f;
    std::size_t at(std::int64_t i, std::int64_t j) const { return static_cast<std::size_t>((i - r0) * (J + 1) + j); }
};

class tracer {
public:
    tracer(std::span<const std::uint8_t> q, std::span<const std::uint8_t> s, const scoring& sc, std::size_t budget)
        : q_(q), s_(s), sc_(sc), oe_(sc.gaps.open + sc.gaps.extend), e_(sc.gaps.extend),
          budget_cells_(std::max<std::size_t>(budget / sizeof(int), 64)) {}

    // Advances one row: from H/E of row i-1 (columns 0..J) to row i. f_out receives F when not null.
    void step_row(std::int64_t i, std::int64_t J, const int* ph, const int* pe, int* h, int* e, int* f_out) const {
        const auto* row = sc_.matrix.table().data() + q_[static_cast<std::size_t>(i)] * substitution_matrix::max_letters;
        int diag = 0, left = 0, f = neg_inf;
        for (std::int64_t j = 0; j <= J; ++j) {
            const int ev = std::max(pe[j] - e_, ph[j] - oe_);
            f = std::max(f - e_, left - oe_);
            int hv = std::max(0, diag + row[s_[static_cast<std::size_t>(j)]]);
            hv = std::max(hv, std::max(ev, f));
            diag = ph[j];
            h[j] = hv;
            e[j] = ev;
            if (f_out) f_out[j] = f;
            left = hv;
        }
    }

    // Traces rows r0..r1 (columns 0..J) given the boundary row r0-1. On return, either stopped_ is set, or i_ < r0.
    void trace(std::int64_t r0, std::int64_t r1, std::int64_t J, const std::vector<int>& bh, const std::vector<int>& be) {
        const auto width = static_cast<std::size_t>(J + 1);
        const auto rows = static_cast<std::size_t>(r1 - r0 + 1);
        if (rows == 1 || rows * width * 3 <= budget_cells_) {
            trace_full(r0, r1, J, bh, be);
            return;
        }
        // Checkpoint the last row of each segment but the last, then trace segments from the bottom up.
        std::size_t segs = std::clamp<std::size_t>(budget_cells_ / (2 * width), 2, rows);
        segs = std::min(segs, rows);
        std::vector<std::int64_t> seg_end(segs);
        for (std::size_t k = 0; k < segs; ++k)
            seg_end[k] = r0 + static_cast<std::int64_t>((rows * (k + 1)) / segs) - 1;
        std::vector<std::vector<int>> ckh(segs - 1), cke(segs - 1);
        std::vector<int> ph = bh, pe = be, h(width), e(width);
        std::size_t next = 0;
        for (std::int64_t i = r0; i <= seg_end[segs - 2]; ++i) {
            step_row(i, J, ph.data(), pe.data(), h.data(), e.data(), nullptr);
            std::swap(ph, h);
            std::swap(pe, e);
            if (i == seg_end[next]) {
                ckh[next] = ph;
                cke[next] = pe;
                ++next;
            }
        }
        for (std::size_t k = segs; k-- > 0;) {
            const std::int64_t s0 = k == 0 ? r0 : seg_end[k - 1] + 1, s1 = seg_end[k];
            if (i_ > s1) continue;
            const auto& sh = k == 0 ? bh : ckh[k - 1];
            const auto& se = k == 0 ? be : cke[k - 1];
            // Only columns up to the current one matter from here on.
            std::vector<int> th(sh.begin(), sh.begin() + j_ + 1), te(se.begin(), se.begin() + j_ + 1);
            trace(s0, s1, j_, th, te);
            if (stopped_ || i_ < r0) return;
        }
    }

    void start(const sw_end& end) {
        i_ = end.query_end;
        j_ = end.subject_end;
        state_ = 'H';
    }
    std::vector<cigar_op> take_ops() {
        std::vector<cigar_op> out;
        for (auto it = rev_.rbegin(); it != rev_.rend(); ++it) {
            if (!out.empty() && out.back().op == *it) ++out.back().len;
            else out.push_back({*it, 1});
        }
        return out;
    }
    std::int64_t i_ = -1, j_ = -1;
    bool stopped_ = false;

private:
    void trace_full(std::int64_t r0, std::int64_t r1, std::int64_t J, const std::vector<int>& bh,
                    const std::vector<int>& be) {
        const auto width = static_cast<std::size_t>(J + 1);
        block b;
        b.r0 = r0;
        b.r1 = r1;
        b.J = J;
        const auto cells = static_cast<std::size_t>(r1 - r0 + 1) * width;
        b.h.resize(cells);
        b.e.resize(cells);
        b.f.resize(cells);
        const int* ph = bh.data();
        const int* pe = be.data();
        for (std::int64_t i = r0; i <= r1; ++i) {
            const auto o = b.at(i, 0);
            step_row(i, J, ph, pe, b.h.data() + o, b.e.data() + o, b.f.data() + o);
            ph = b.h.data() + o;
            pe = b.e.data() + o;
        }
        auto H = [&](std::int64_t i, std::int64_t j) -> int {
            if (j < 0 || i < 0) return 0;
            if (i < r0) return bh[static_cast<std::size_t>(j)];
            return b.h[b.at(i, j)];
        };
        while (!stopped_ && i_ >= r0) {
            const auto i = i_, j = j_;
            if (state_ == 'H') {
                const int h = b.h[b.at(i, j)];
                if (h == 0) {
                    stopped_ = true;
                    break;
                }
                const int sigma = sc_.matrix.score(q_[static_cast<std::size_t>(i)], s_[static_cast<std::size_t>(j)]);
                if (h == H(i - 1, j - 1) + sigma) {
                    rev_.push_back('M');
                    --i_;
                    --j_;
                    if (i_ < 0 || j_ < 0) stopped_ = true;
                } else if (h == b.e[b.at(i, j)]) {
                    state_ = 'E';
                } else if (h == b.f[b.at(i, j)]) {
                    state_ = 'F';
                } else {
                    throw runtime_failure("internal error: traceback lost its path");
                }
            } else if (state_ == 'E') {
                rev_.push_back('I');
                if (b.e[b.at(i, j)] == H(i - 1, j) - oe_) state_ = 'H';
                --i_;
                if (i_ < 0) throw runtime_failure("internal error: traceback ran past the first row");
            } else {
                rev_.push_back('D');
                if (b.f[b.at(i, j)] == H(i, j - 1) - oe_) state_ = 'H';
                --j_;
                if (j_ < 0) throw runtime_failure("internal error: traceback ran past the first column");
            }
        }
    }

    std::span<const std::uint8_t> q_, s_;
    const scoring& sc_;
    int oe_, e_;
    std::size_t budget_cells_;
    char state_ = 'H';
    std::vector<char> rev_;
};

}  // namespace

sw_end sw_score(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc) {
    check_length(query.size(), subject.size(), sc);
    const auto n = subject.size();
    const int oe = sc.gaps.open + sc.gaps.extend, ext = sc.gaps.extend;
    std::vector<int> H(n + 1, 0), E(n + 1, neg_inf);
    sw_end best;
    for (std::size_t i = 0; i < query.size(); ++i) {
        const auto* row = sc.matrix.table().data() + query[i] * substitution_matrix::max_letters;
        int diag = 0, left = 0, f = neg_inf;
        for (std::size_t j = 0; j < n; ++j) {
            const int e = std::max(E[j + 1] - ext, H[j + 1] - oe);
            f = std::max(f - ext, left - oe);
            const int h = std::max(std::max(0, diag + row[subject[j]]), std::max(e, f));
            diag = H[j + 1];
            H[j + 1] = h;
            E[j + 1] = e;
            left = h;
            if (h > best.score) best = {h, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)};
        }
    }
    return best;
}

alignment sw_traceback(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc,
                       const sw_end& end, const traceback_options& opt) {
    alignment a;
    if (end.score <= 0) return a;
    check_length(query.size(), subject.size(), sc);
    tracer t(query, subject, sc, opt.memory_budget);
    t.start(end);
    const auto width = static_cast<std::size_t>(end.subject_end + 1);
    std::vector<int> bh(width, 0), be(width, neg_inf);
    t.trace(0, end.query_end, end.subject_end, bh, be);
    a.score = end.score;
    a.query_end = end.query_end;
    a.subject_end = end.subject_end;
    a.query_begin = t.i_ + 1;
    a.subject_begin = t.j_ + 1;
    a.ops = t.take_ops();
    return a;
}

alignment sw_align(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc,
                   const traceback_options& opt) {
    return sw_traceback(query, subject, sc, sw_score(query, subject, sc), opt);
}

}  // namespace swgpu
