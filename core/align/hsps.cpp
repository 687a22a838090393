#include "core/align/hsps.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/cancel.hpp"
#include "core/error.hpp"

namespace swgpu {

namespace {

constexpr int neg_inf = std::numeric_limits<int>::min() / 4;

// H, E, F over (m + 1) x (n + 1) cells (row 0 and column 0 the matrix's border) and the forbidden diagonal steps.
struct matrices {
    std::size_t m, n;
    std::vector<int> h, e, f;
    std::vector<std::uint8_t> forbidden;
    matrices(std::size_t rows, std::size_t cols)
        : m(rows), n(cols), h((m + 1) * (n + 1), 0), e(h.size(), neg_inf), f(h.size(), neg_inf),
          forbidden(h.size(), 0) {}
    std::size_t at(std::size_t i, std::size_t j) const { return i * (n + 1) + j; }
};

// σ and the gap costs: a substitution matrix's or a wide (composition-adjusted) one's.
struct scores {
    const substitution_matrix* matrix = nullptr;
    const wide_matrix* wide = nullptr;
    int open = 0, extend = 0;
    int operator()(std::uint8_t a, std::uint8_t b) const { return wide ? wide->at(a, b) : matrix->score(a, b); }
};

// Rows [first, m] from the row above them.
void fill_rows(matrices& x, std::span<const std::uint8_t> q, std::span<const std::uint8_t> s, const scores& sc,
               std::size_t first) {
    const int oe = sc.open + sc.extend, ext = sc.extend;
    for (std::size_t i = std::max<std::size_t>(first, 1); i <= x.m; ++i) {
        check_cancelled();
        for (std::size_t j = 1; j <= x.n; ++j) {
            const std::size_t c = x.at(i, j), up = x.at(i - 1, j), left = x.at(i, j - 1), diag = x.at(i - 1, j - 1);
            const int e = std::max(x.e[up] - ext, x.h[up] - oe);
            const int f = std::max(x.f[left] - ext, x.h[left] - oe);
            const int d = x.forbidden[c] ? neg_inf : x.h[diag] + sc(q[i - 1], s[j - 1]);
            x.e[c] = e;
            x.f[c] = f;
            x.h[c] = std::max({0, d, e, f});
        }
    }
}

// The walk of sw_traceback from end cell (i, j) (1-based), forbidden diagonal steps excluded.
alignment walk(const matrices& x, std::span<const std::uint8_t> q, std::span<const std::uint8_t> s, const scores& sc,
               std::size_t i, std::size_t j) {
    const int oe = sc.open + sc.extend;
    alignment a;
    a.score = x.h[x.at(i, j)];
    a.query_end = static_cast<std::int64_t>(i) - 1;
    a.subject_end = static_cast<std::int64_t>(j) - 1;
    std::string ops;
    char state = 'H';
    for (;;) {
        const std::size_t c = x.at(i, j);
        if (state == 'H') {
            if (x.h[c] == 0) break;
            if (!x.forbidden[c] && x.h[c] == x.h[x.at(i - 1, j - 1)] + sc(q[i - 1], s[j - 1])) {
                ops += 'M';
                --i, --j;
            } else if (x.h[c] == x.e[c]) {
                state = 'E';
            } else {
                state = 'F';
            }
        } else if (state == 'E') {
            ops += 'I';
            if (x.e[c] == x.h[x.at(i - 1, j)] - oe) state = 'H';
            --i;
        } else {
            ops += 'D';
            if (x.f[c] == x.h[x.at(i, j - 1)] - oe) state = 'H';
            --j;
        }
        if (state == 'H' && (i == 0 || j == 0)) break;
    }
    a.query_begin = static_cast<std::int64_t>(i);
    a.subject_begin = static_cast<std::int64_t>(j);
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
        if (!a.ops.empty() && a.ops.back().op == *it) ++a.ops.back().len;
        else a.ops.push_back({*it, 1});
    }
    return a;
}

std::vector<alignment> hsps_with(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                 const scores& sc, const hsp_options& opt) {
    std::vector<alignment> out;
    if (opt.max_hsps < 1 || query.empty() || subject.empty()) return out;
    if (double(query.size()) * double(subject.size()) > opt.max_cells)
        throw usage_error("several alignments per pair (--max-hsps) are computed for pairs of at most " +
                          std::to_string(static_cast<long long>(opt.max_cells)) + " cells; this pair has " +
                          std::to_string(query.size()) + " x " + std::to_string(subject.size()));
    matrices x(query.size(), subject.size());
    std::size_t first = 1;
    while (static_cast<int>(out.size()) < opt.max_hsps) {
        fill_rows(x, query, subject, sc, first);
        // The end cell: the first cell of the best H in row-major order.
        int best = 0;
        std::size_t bi = 0, bj = 0;
        for (std::size_t i = 1; i <= x.m; ++i)
            for (std::size_t j = 1; j <= x.n; ++j)
                if (x.h[x.at(i, j)] > best) best = x.h[x.at(i, j)], bi = i, bj = j;
        if (best <= 0 || best < opt.min_score) break;
        alignment a = walk(x, query, subject, sc, bi, bj);
        // Its aligned pairs become forbidden diagonal steps; the rows from the first of them on are recomputed.
        std::size_t i = static_cast<std::size_t>(a.query_begin) + 1, j = static_cast<std::size_t>(a.subject_begin) + 1;
        first = i;
        for (const auto& op : a.ops)
            for (std::uint32_t k = 0; k < op.len; ++k) {
                if (op.op == 'M') x.forbidden[x.at(i, j)] = 1;
                if (op.op != 'D') ++i;
                if (op.op != 'I') ++j;
            }
        out.push_back(std::move(a));
    }
    return out;
}

}  // namespace

std::vector<alignment> sw_align_hsps(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                     const scoring& sc, const hsp_options& opt) {
    return hsps_with(query, subject, scores{&sc.matrix, nullptr, sc.gaps.open, sc.gaps.extend}, opt);
}

std::vector<alignment> sw_align_hsps_wide(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                          const wide_matrix& m, int gap_open, int gap_extend, const hsp_options& opt) {
    return hsps_with(query, subject, scores{nullptr, &m, gap_open, gap_extend}, opt);
}

}  // namespace swgpu
