// Textbook Smith-Waterman-Gotoh with full matrices, 1-based, written for the tests only: the oracle that core's
// score pass, traceback and engine are checked against. Deliberately plain: three (m+1) x (n+1) matrices, the
// recurrences exactly as in Gotoh (1982) with BLAST's gap convention (a gap of length k costs open + k * extend):
//   E(i,j) = max(E(i-1,j), H(i-1,j) - open) - extend        (query residue against a gap)
//   F(i,j) = max(F(i,j-1), H(i,j-1) - open) - extend        (subject residue against a gap)
//   H(i,j) = max(0, H(i-1,j-1) + s(q_i, s_j), E(i,j), F(i,j))
// End cell: maximal H, first in row-major order. Traceback rules (docs/conventions.md): diagonal before E before F; inside a
// gap, return to H (open) before staying in the gap (extend); stop at H == 0.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace swgpu::reference {

struct gotoh_result {
    long score = 0;
    long qbeg = -1, qend = -1, sbeg = -1, send = -1;  // 0-based inclusive
    std::string ops;                                   // one letter per column: M, I, D
    long cells_with_max = 0;                           // how many cells reach the maximum (ties)
};

template <class Score>
gotoh_result textbook_gotoh(const std::vector<std::uint8_t>& q, const std::vector<std::uint8_t>& s, Score score,
                            long open, long extend) {
    const long m = static_cast<long>(q.size()), n = static_cast<long>(s.size());
    const long NEG = std::numeric_limits<long>::min() / 4;
    std::vector<std::vector<long>> H(m + 1, std::vector<long>(n + 1, 0)), E(m + 1, std::vector<long>(n + 1, NEG)),
        F(m + 1, std::vector<long>(n + 1, NEG));
    gotoh_result r;
    long bi = 0, bj = 0;
    for (long i = 1; i <= m; ++i)
        for (long j = 1; j <= n; ++j) {
            E[i][j] = std::max(E[i - 1][j], H[i - 1][j] - open) - extend;
            F[i][j] = std::max(F[i][j - 1], H[i][j - 1] - open) - extend;
            long h = H[i - 1][j - 1] + score(q[i - 1], s[j - 1]);
            h = std::max({0L, h, E[i][j], F[i][j]});
            H[i][j] = h;
            if (h > r.score) {
                r.score = h;
                bi = i;
                bj = j;
                r.cells_with_max = 1;
            } else if (h == r.score && h > 0) {
                ++r.cells_with_max;
            }
        }
    if (r.score == 0) return r;
    r.qend = bi - 1;
    r.send = bj - 1;
    long i = bi, j = bj;
    char state = 'H';
    std::string rev;
    for (;;) {
        if (state == 'H') {
            if (i == 0 || j == 0 || H[i][j] == 0) break;
            if (H[i][j] == H[i - 1][j - 1] + score(q[i - 1], s[j - 1])) {
                rev += 'M';
                --i;
                --j;
            } else if (H[i][j] == E[i][j]) {
                state = 'E';
            } else {
                state = 'F';
            }
        } else if (state == 'E') {
            rev += 'I';
            if (E[i][j] == H[i - 1][j] - open - extend) state = 'H';
            --i;
        } else {
            rev += 'D';
            if (F[i][j] == H[i][j - 1] - open - extend) state = 'H';
            --j;
        }
    }
    r.qbeg = i;
    r.sbeg = j;
    r.ops.assign(rev.rbegin(), rev.rend());
    return r;
}

}  // namespace swgpu::reference
