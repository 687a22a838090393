#include "core/align/placement.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/cancel.hpp"

namespace swgpu {

int best_apart(std::span<const std::uint8_t> query, std::span<const std::uint8_t> part, std::int64_t offset,
               const alignment& primary, const scoring& sc) {
    if (primary.score <= 0 || primary.query_begin < 0 || part.empty()) return 0;
    const auto from = static_cast<std::size_t>(primary.query_begin);
    if (from >= query.size()) return 0;
    query = query.subspan(from, std::min(query.size(), static_cast<std::size_t>(primary.query_end) + 1) - from);
    const std::size_t m = query.size();
    // The subject column the primary aligns each residue of the part with (-1: none): a residue is aligned once.
    std::vector<std::int64_t> paired(m, -1);
    {
        std::int64_t i = 0, j = primary.subject_begin;
        for (const auto& op : primary.ops)
            for (std::uint32_t k = 0; k < op.len; ++k) {
                if (op.op == 'M' && i >= 0 && static_cast<std::size_t>(i) < m) paired[static_cast<std::size_t>(i)] = j;
                if (op.op != 'D') ++i;
                if (op.op != 'I') ++j;
            }
    }
    // Column by column along the subject part (one column per subject residue), the query down the column: H and E
    // of the previous column, F carried down the current one.
    constexpr int neg_inf = std::numeric_limits<int>::min() / 4;
    const int oe = sc.gaps.open + sc.gaps.extend, ext = sc.gaps.extend;
    std::vector<int> h(m + 1, 0), e(m + 1, neg_inf);
    int best = 0;
    for (std::size_t j = 0; j < part.size(); ++j) {
        if ((j & 1023) == 0) check_cancelled();
        const std::int64_t column = offset + static_cast<std::int64_t>(j);
        const std::uint8_t s = part[j];
        int diag = 0, f = neg_inf, up = 0;  // H[i-1][j-1], F[i][j], H[i-1][j]
        for (std::size_t i = 1; i <= m; ++i) {
            const int left = h[i];  // H[i][j-1]
            e[i] = std::max(e[i] - ext, left - oe);
            f = std::max(f - ext, up - oe);
            const int d = paired[i - 1] == column ? neg_inf : diag + sc.matrix.score(query[i - 1], s);
            const int v = std::max({0, d, e[i], f});
            diag = left;
            h[i] = v;
            up = v;
            best = std::max(best, v);
        }
    }
    return best;
}

}  // namespace swgpu
