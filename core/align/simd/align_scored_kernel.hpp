// The two passes of sw_align_scored (core/align/simd/align_scored.hpp), written once over an instruction set's lane operations.
//
// Included only by core/align/simd/align_scored_<isa>.cpp, inside the region that compiles that file for its target.
// Everything here is in an anonymous namespace, and so are the lane types each file defines: every function has
// internal linkage, so code built for AVX-512 cannot be picked by the linker for a caller on another path.
//
// A lane type V provides (vec, elem, lanes, set1, adds, subs and max from core/align/simd/lanes_<isa>.hpp, which the
// inter-sequence kernels share): vec, elem, lanes; encode(int) / decode(elem) between scores and lane values (8-bit lanes
// hold H - 128 and 16-bit lanes H - 32768, so that H = 0 is the type's minimum and a saturating add computes
// max(0, H + σ)); clamps_at_zero (the lanes cannot hold values below H = 0); neg_inf (the lane value of E and F
// outside the matrix); pad_score (σ of the padding columns); load, set1 (a raw lane value), adds / subs (saturating
// where the type is narrow), max, any_gt, shift_zero / shift_neg (lane k takes lane k-1, lane 0 takes H = 0 /
// neg_inf), shift_by(v, d) (lane k takes lane k-d, lanes below d take neg_inf; d a power of two below lanes), max_sub
// (the largest constant subs takes), dead_decay (a decay that takes every lane value to H <= 0).
//
// Lane values at or below H = 0 are interchangeable for E and F: H >= 0 hides them, and whatever grows from them stays
// <= 0 (a positive E or F comes from a positive H through positive values only). So lanes that clamp E and F at 0
// give exact H, and a traceback never visits an E or F state whose value is <= 0.
//
// Striped layout (Farrar 2007) of a row of n columns: seg = ceil(n / lanes) vectors; column j is lane j / seg of
// vector j % seg. Columns n.. (padding, the end of the last lanes) score pad_score against everything; no real column
// depends on them (they all lie to the right of column n - 1), and they never reach the score.
//
// A row of pass 1, i = query residue, from the row above (hp: H[i-1], E[i] in place) to hc: H[i] and E[i+1]:
//   main sweep over the vectors, F carried inside each lane from vector v-1 to v, starting at -inf in vector 0;
//   F across lanes: the F entering vector 0 of every lane (what the lanes to its left opened, decayed by e a column)
//   by a prefix maximum over the lanes in log2(lanes) steps, then one sweep pushing it along while in some lane it
//   exceeds both H - (o + e) and 0 (only then can it change an H, an E of the next row, or a positive F after it),
//   raising H and E. (Farrar's lazy-F loop instead passes F one lane per sweep: up to `lanes` sweeps per row in the
//   shadow of a high-scoring alignment, where F stays positive for score/e columns.)
// The prefix maximum is exact because F opened from an H that is itself F, F - (o + e), never beats F - e: the F
// leaving lane k is the larger of what lane k opened in the main sweep and what entered it, seg·e lower.
// After a row, H and E are exact. The F kept at column checkpoints is the main sweep's value raised by the second
// sweep; it can be lower than the true F only where F <= H - (o + e) or F <= 0. A tile of pass 2 that starts from it
// can then have such an F too, and the H, E and positive F it computes are still exact: the F that entered is
// overtaken by the F opened from H at the next column, or never positive. The traceback is never in the F state at
// such a cell (entering F needs F == H > 0; staying in F from the cell to the right needs F > 0 and F > H - (o + e),
// or that cell's F would have been opened from this H, and opening is preferred).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/align/alignment.hpp"
#include "core/error.hpp"
#include "core/align/scoring.hpp"
#include "core/align/simd/align_scored.hpp"
#include "core/align/smith_waterman.hpp"

namespace swgpu::align_fast {
// Internal linkage for everything here: each instruction set's file has its own copy, compiled for its target only.
namespace {

// The narrowest lanes that hold every H of a pair whose best score is `score` exactly, with H + σ and the gap costs:
// 8 bits (H - 128 up to 127), 16 bits (H - 32768), else 32 bits. Both passes use them.
enum class lane_bits { b8, b16, b32 };
inline lane_bits lanes_for(int max_score, const gap_costs& gaps, int score) {
    const int top = score + std::max(max_score, 0), oe = gaps.first();
    if (top < 255 && oe <= 127) return lane_bits::b8;
    if (top < 65535 && oe <= 32767) return lane_bits::b16;
    return lane_bits::b32;
}
inline lane_bits lanes_for(const scoring& sc, int score) { return lanes_for(sc.matrix.max_score(), sc.gaps, score); }

// Whether 16-bit lanes hold a 32-bit table's scores and gap costs (the scores themselves are checked by lanes_for or
// by best_end's saturation test).
inline bool narrow_fits(const wide_table& t) {
    return t.min_score > -32768 && t.max_score < 32768 && t.gaps.first() <= 32767;
}

// The scores the passes read: a table of max_letters x max_letters substitution scores, row-major (a
// substitution_matrix's 8-bit table, or the 32-bit table of a composition-adjusted matrix, core/align/composition.hpp),
// its largest entry and the gap costs.
template <class S>
struct score_source {
    const S* table = nullptr;
    int max_score = 0;
    gap_costs gaps;
    int at(std::uint8_t a, std::uint8_t b) const { return table[a * substitution_matrix::max_letters + b]; }
};

// Uninitialised bytes that stay with the thread between calls: finishing aligns many hits per thread, and fresh
// pages for every hit (a page fault each) cost about as much as a small hit's work.
class scratch {
public:
    template <class T>
    T* get(std::size_t elems) {
        const std::size_t bytes = elems * sizeof(T) + 64;
        if (bytes > capacity_) {
            store_.reset(new unsigned char[bytes]);  // default-initialised: pages are touched only when written
            capacity_ = bytes;
        }
        return reinterpret_cast<T*>((reinterpret_cast<std::uintptr_t>(store_.get()) + 63) & ~std::uintptr_t(63));
    }
    std::size_t capacity() const { return capacity_; }
    void release() {
        store_.reset();
        capacity_ = 0;
    }

private:
    std::unique_ptr<unsigned char[]> store_;
    std::size_t capacity_ = 0;
};

struct workspace {
    scratch prof, rows, saved, columns, tile;
    // Trims the workspace when a call that used it returns (by value or by an exception).
    struct trimmed {
        workspace& w;
        ~trimmed() { w.trim(); }
    };
    // Buffers beyond this many bytes in all are given back after the call that needed them.
    static constexpr std::size_t kept_bytes = std::size_t(16) << 20;
    void trim() {
        std::size_t total = 0;
        for (auto* b : {&prof, &rows, &saved, &columns, &tile}) total += b->capacity();
        if (total > kept_bytes)
            for (auto* b : {&prof, &rows, &saved, &columns, &tile}) b->release();
    }
};

// Both passes over one lane type V, for scores of type S (score_source).
template <class V, class S = std::int8_t>
class scored_aligner {
public:
    using vec = typename V::vec;
    using T = typename V::elem;
    static constexpr std::size_t L = V::lanes;

    // A substitution_matrix's scores; pairs whose checkpoints do not fit go to sw_traceback.
    scored_aligner(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc)
        : scored_aligner(query, subject, score_source<S>{sc.matrix.table().data(), sc.matrix.max_score(), sc.gaps}) {
        sc_ = &sc;
    }
    // Any table; align() returns nullopt for pairs whose checkpoints do not fit (the caller aligns them otherwise).
    scored_aligner(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, score_source<S> scores)
        : q_(query), s_(subject), src_(scores), zero_(V::set1(V::encode(0))), neg_inf_(V::set1(V::neg_inf)),
          open_extend_(V::set1(scores.gaps.first())), extend_(V::set1(scores.gaps.extend)),
          extend_cost_(scores.gaps.extend) {
        for (const auto a : q_) used_[a] = true;
    }

    // The score pass alone: the best score and its end cell (the first cell in row-major order that has it), as
    // sw_score gives them; rows are pass 1's rows without checkpoints. nullopt when narrow lanes could have saturated
    // (the best reached the type's top, which a saturated addition leaves in the lane maximum): run wider lanes.
    std::optional<sw_end> best_end() const {
        const std::size_t m = q_.size(), n = s_.size();
        const std::size_t seg = (n + L - 1) / L, row = seg * L;
        thread_local workspace ws;
        const workspace::trimmed trim{ws};
        auto [prof, hp, hc, e] = first_rows(ws, n, seg);
        sw_end end;
        vec best = zero_;
        for (std::size_t i = 0; i < m; ++i) {
            const vec vmax = end_row(prof + q_[i] * seg, seg, reinterpret_cast<const vec*>(hp),
                                     reinterpret_cast<vec*>(hc), reinterpret_cast<vec*>(e), seg, nullptr, nullptr);
            if (V::any_gt(vmax, best)) {  // a higher score in this row: the row's best and its first column
                int top = end.score;
                std::size_t at = n;
                for (std::size_t x = 0; x < row; ++x) {
                    const std::size_t j = (x % L) * seg + x / L;
                    const int h = V::decode(hc[x]);
                    if (j < n && (h > top || (h == top && j < at && h > end.score))) top = h, at = j;
                }
                if (at < n) {  // always: padding columns stay below the real ones they come from
                    end = {top, static_cast<std::int64_t>(i), static_cast<std::int64_t>(at)};
                    best = V::set1(V::encode(top));
                }
            }
            std::swap(hp, hc);
        }
        if constexpr (V::clamps_at_zero) {
            if (end.score >= V::decode(std::numeric_limits<T>::max())) return std::nullopt;
        }
        return end;
    }

    std::optional<alignment> align(int score, const traceback_options& opt) const {
        const std::size_t m = q_.size(), n = s_.size();
        const std::size_t seg = (n + L - 1) / L, row = seg * L;

        // Row checkpoints every K rows, column checkpoints every `chunk` vectors of every row, and one tile, within
        // the budget: both spacings double until they fit (or the pair goes to sw_traceback).
        std::size_t K = 32, chunk = 16;
        const auto footprint = [&](std::size_t k, std::size_t c) {
            const std::size_t columns = (seg + c - 1) / c;
            return ((m / k) * 2 * row + m * 2 * columns * L + 3 * (k + 1) * (k + c) * L) * sizeof(T);
        };
        while (footprint(K, chunk) > opt.memory_budget && (K < m || chunk < seg)) {
            K *= 2;
            chunk *= 2;
        }
        const bool checkpoints = footprint(K, chunk) <= opt.memory_budget;
        const std::size_t columns = (seg + chunk - 1) / chunk;

        thread_local workspace ws;
        const workspace::trimmed trim{ws};

        // Pass 1: rows until the first that reaches `score`.
        auto [prof, hp, hc, e] = first_rows(ws, n, seg);
        // Row checkpoint c: H of row (c+1)K-1, then E of row (c+1)K. Column checkpoints of row i: `columns` vectors
        // of H left of each chunk's first vector, then `columns` vectors of F at it.
        T* const rows_saved = checkpoints ? ws.saved.get<T>(m / K * 2 * row) : nullptr;
        vec* const cols_saved = checkpoints ? reinterpret_cast<vec*>(ws.columns.get<T>(m * 2 * columns * L)) : nullptr;
        std::size_t n_saved = 0;

        sw_end end;
        const vec target = V::set1(V::encode(score - 1));
        std::size_t to_checkpoint = K;  // rows to the next checkpoint (a division per row costs like a short row)
        for (std::size_t i = 0; i < m; ++i) {
            vec* col = checkpoints ? cols_saved + i * 2 * columns : nullptr;
            const vec vmax = end_row(prof + q_[i] * seg, seg, reinterpret_cast<const vec*>(hp),
                                     reinterpret_cast<vec*>(hc), reinterpret_cast<vec*>(e), chunk, col,
                                     col ? col + columns : nullptr);
            if (V::any_gt(vmax, target)) {
                std::size_t best = n;
                for (std::size_t x = 0; x < row; ++x) {
                    const int h = V::decode(hc[x]);
                    if (h > score) return std::nullopt;
                    if (h == score) best = std::min(best, (x % L) * seg + x / L);
                }
                if (best >= n) return std::nullopt;
                end = {score, static_cast<std::int64_t>(i), static_cast<std::int64_t>(best)};
                break;
            }
            if (--to_checkpoint == 0) {
                to_checkpoint = K;
                if (checkpoints) {
                    std::copy(hc, hc + row, rows_saved + n_saved * 2 * row);
                    std::copy(e, e + row, rows_saved + n_saved * 2 * row + row);
                    ++n_saved;
                }
            }
            std::swap(hp, hc);
        }
        if (end.score != score) return std::nullopt;
        if (!checkpoints) {
            if (sc_) return sw_traceback(q_, s_, *sc_, end, opt);
            return std::nullopt;
        }
        return traceback(end, {prof, seg, K, chunk, columns, rows_saved, cols_saved}, ws);
    }

private:
    // prof[a * seg + v] = σ(a, subject columns of vector v), for the query's letters a.
    // The query profile and pass 1's three rows (H above, H of the row, E) in `ws`, H = 0 and E = -inf above row 0.
    struct pass_rows {
        vec* prof;
        T *hp, *hc, *e;
    };
    pass_rows first_rows(workspace& ws, std::size_t n, std::size_t seg) const {
        const std::size_t row = seg * L;
        vec* prof = reinterpret_cast<vec*>(ws.prof.get<T>(substitution_matrix::max_letters * row));
        build_profile(n, seg, prof);
        T* hp = ws.rows.get<T>(3 * row);
        std::fill(hp, hp + row, V::encode(0));
        std::fill(hp + 2 * row, hp + 3 * row, static_cast<T>(V::neg_inf));
        return {prof, hp, hp + row, hp + 2 * row};
    }

    void build_profile(std::size_t width, std::size_t seg, vec* prof) const {
        alignas(64) T lane[L];
        for (std::size_t a = 0; a < substitution_matrix::max_letters; ++a) {
            if (!used_[a]) continue;
            const S* row = src_.table + a * substitution_matrix::max_letters;
            for (std::size_t v = 0; v < seg; ++v) {
                for (std::size_t k = 0; k < L; ++k) {
                    const std::size_t j = k * seg + v;
                    lane[k] = j < width ? static_cast<T>(row[s_[j]]) : static_cast<T>(V::pad_score);
                }
                prof[a * seg + v] = V::load(lane);
            }
        }
    }

    // One row of pass 1 (see the file comment); ein == eout. Returns the lane-wise maximum of H. When col_h is not
    // null, also the row's column checkpoints: for chunk c (vectors c·chunk..), col_f[c] = F at its first vector and
    // col_h[c] = H left of it (the vector before, or for c = 0 the last vector one lane up, H = 0 entering lane 0).
    vec end_row(const vec* prof, std::size_t seg, const vec* hp, vec* hc, vec* e_io, std::size_t chunk, vec* col_h,
                vec* col_f) const {
        vec vf = neg_inf_, vmax = zero_;
        vec vh = V::shift_zero(hp[seg - 1]);  // H[i-1][j-1] for vector 0
        for (std::size_t v0 = 0, c = 0; v0 < seg; v0 += chunk, ++c) {
            if (col_f && c > 0) col_f[c] = vf;
            const std::size_t v1 = std::min(v0 + chunk, seg);
            for (std::size_t v = v0; v < v1; ++v) {
                vh = V::adds(vh, prof[v]);
                if constexpr (!V::clamps_at_zero) vh = V::max(vh, zero_);
                const vec e = e_io[v];
                vh = V::max(vh, V::max(e, vf));
                vmax = V::max(vmax, vh);
                hc[v] = vh;
                const vec opened = V::subs(vh, open_extend_);
                e_io[v] = V::max(V::subs(e, extend_), opened);
                vf = V::max(V::subs(vf, extend_), opened);
                vh = hp[v];
            }
        }
        // The F entering vector 0 of lane k is the F leaving lane k-1: the larger of what lane k-1 opened (vf after
        // the main sweep) and what entered lane k-1, seg·e lower. First the common case: with only lane k-1's own F,
        // no lane's F matters at vector 0; then none does anywhere (by induction over the lanes).
        vf = V::shift_neg(vf);
        if (V::any_gt(vf, matters(hc[0]))) {
            // Otherwise the exact entering F of every lane, a prefix maximum over the lanes with decay (Hillis-Steele:
            // after the step of distance d, lane k has seen lanes k-2d+1..k-1), then one sweep that stops where no
            // lane's F matters any more (past that point, no F behind it does either).
            for (std::size_t d = 1; d < L; d *= 2) {
                const long decay = static_cast<long>(d * seg) * extend_cost_;
                if (decay >= V::dead_decay) break;  // lanes d or more away bring F <= 0 only
                vf = V::max(vf, sub_wide(V::shift_by(vf, d), decay));
            }
            const vec entering = vf;
            std::size_t swept = 0;
            for (; swept < seg; ++swept) {
                vec h = hc[swept];
                if (!V::any_gt(vf, matters(h))) break;
                h = V::max(h, vf);
                hc[swept] = h;
                vmax = V::max(vmax, h);
                e_io[swept] = V::max(e_io[swept], V::subs(h, open_extend_));
                vf = V::max(V::subs(vf, extend_), neg_inf_);
            }
            vf = entering;
            // F at the chunks' first vectors that the sweep reached: raised by what entered, v·e lower.
            for (std::size_t c = 1; col_f && c * chunk < swept; ++c) {
                const long decay = static_cast<long>(c * chunk) * extend_cost_;
                if (decay >= V::dead_decay) break;
                col_f[c] = V::max(col_f[c], sub_wide(entering, decay));
            }
        }
        if (col_h) {
            col_f[0] = vf;
            col_h[0] = V::shift_zero(hc[seg - 1]);
            for (std::size_t c = 1; c * chunk < seg; ++c) col_h[c] = hc[c * chunk - 1];
        }
        return vmax;
    }

    // One row of a tile of pass 2: vectors v0..v0+nv-1 of the pass-1 layout, all lanes, each lane entered from the
    // left with the column checkpoint (diag: H of the row above, left of v0; vf: F at v0), so no F crosses lanes.
    void tile_row(const vec* prof, std::size_t nv, vec diag, vec vf, const vec* hp, vec* hc, const vec* ein,
                  vec* eout, vec* f) const {
        for (std::size_t v = 0; v < nv; ++v) {
            vec vh = V::adds(diag, prof[v]);
            if constexpr (!V::clamps_at_zero) vh = V::max(vh, zero_);
            const vec e = ein[v];
            vh = V::max(vh, V::max(e, vf));
            hc[v] = vh;
            f[v] = vf;
            const vec opened = V::subs(vh, open_extend_);
            eout[v] = V::max(V::subs(e, extend_), opened);
            vf = V::max(V::subs(vf, extend_), opened);
            diag = hp[v];
        }
    }

    // An F at or below H - (o + e), or at or below 0, changes nothing from here on.
    vec matters(vec h) const {
        const vec opened = V::subs(h, open_extend_);
        if constexpr (V::clamps_at_zero) return opened;
        else return V::max(opened, zero_);
    }

    // x - decay for a decay below V::dead_decay, which may exceed what one saturating subtraction takes.
    static vec sub_wide(vec x, long decay) {
        if (decay > V::max_sub) {
            x = V::subs(x, V::set1(static_cast<int>(V::max_sub)));
            decay -= V::max_sub;
        }
        return V::subs(x, V::set1(static_cast<int>(decay)));
    }

    struct pass1_result {
        const vec* prof;
        std::size_t seg, K, chunk, columns;
        const T* rows_saved;
        const vec* cols_saved;
    };

    // Pass 2: tiles from the end cell's upwards and leftwards. A tile is rows r0..r1 (r0 a multiple of K, r1 the
    // walk's row) by vectors v0..v1 of the pass-1 layout (v0 a multiple of chunk, v1 the walk's vector), all lanes;
    // its top comes from the row checkpoint above (or the matrix edge), its left from the column checkpoints. It keeps
    // H, E and F of every cell; the walk reads the values it compares, as sw_traceback does, and a new tile starts
    // where the walk leaves this one (upwards, or leftwards out of v0..v1 in its lane).
    alignment traceback(const sw_end& end, const pass1_result& p, workspace& ws) const {
        const int oe = src_.gaps.first();
        const std::size_t seg = p.seg, row = seg * L;
        std::int64_t i = end.query_end, j = end.subject_end;
        std::size_t lane = static_cast<std::size_t>(j) / seg, v = static_cast<std::size_t>(j) % seg;
        char state = 'H';
        bool stopped = false;
        std::vector<char> rev;
        const std::size_t max_nv = p.K + p.chunk;
        vec* th = reinterpret_cast<vec*>(ws.tile.get<T>(3 * (p.K + 1) * max_nv * L));
        vec* te = th + (p.K + 1) * max_nv;
        vec* tf = te + (p.K + 1) * max_nv;
        const auto lane_value = [&](const vec* x) {  // memcpy: x may be a vector object, not an array of T
            T value;
            std::memcpy(&value, reinterpret_cast<const unsigned char*>(x) + lane * sizeof(T), sizeof(T));
            return V::decode(value);
        };
        while (!stopped) {
            const std::size_t r0 = static_cast<std::size_t>(i) / p.K * p.K, r1 = static_cast<std::size_t>(i);
            // Wide enough for about a diagonal walk from (i, v) to r0.
            const std::size_t rows = r1 - r0;
            const std::size_t c0 = (v > rows ? v - rows : 0) / p.chunk, v0 = c0 * p.chunk, v1 = v, nv = v1 - v0 + 1;
            // (Plain loops: std::fill and std::copy on vectors would be instantiated outside this file's target.)
            const auto* saved =
                r0 == 0 ? nullptr : reinterpret_cast<const vec*>(p.rows_saved + (r0 / p.K - 1) * 2 * row);
            for (std::size_t x = 0; x < nv; ++x) {
                th[x] = saved ? saved[v0 + x] : zero_;
                te[x] = saved ? saved[seg + v0 + x] : neg_inf_;
            }
            // The column checkpoint of chunk c0 in row r: H left of v0, F at v0.
            const auto col_h = [&](std::size_t r) { return p.cols_saved[r * 2 * p.columns + c0]; };
            const auto col_f = [&](std::size_t r) { return p.cols_saved[r * 2 * p.columns + p.columns + c0]; };
            for (std::size_t r = r0; r <= r1; ++r) {
                const std::size_t k = r - r0;
                tile_row(p.prof + q_[r] * seg + v0, nv, r == 0 ? zero_ : col_h(r - 1), col_f(r), th + k * nv,
                         th + (k + 1) * nv, te + k * nv, te + (k + 1) * nv, tf + k * nv);
            }

            // Row i's H is row i - r0 + 1 of th (row 0: the row above the tile); column v0 - 1 is the checkpoint.
            const auto top = static_cast<std::int64_t>(r0);
            const auto H = [&](std::int64_t row_i, std::size_t at) -> int {  // at: vector, >= v0 - 1
                if (row_i < 0) return 0;
                if (at + 1 == v0) {
                    const vec left = col_h(static_cast<std::size_t>(row_i));
                    return lane_value(&left);
                }
                return lane_value(th + static_cast<std::size_t>(row_i - top + 1) * nv + (at - v0));
            };
            while (i >= top && v >= v0 && v <= v1) {
                const std::size_t at = static_cast<std::size_t>(i - top) * nv + (v - v0);
                if (state == 'H') {
                    const int h = H(i, v);
                    if (h == 0) {
                        stopped = true;
                        break;
                    }
                    const auto qi = q_[static_cast<std::size_t>(i)], sj = s_[static_cast<std::size_t>(j)];
                    if (h == H(i - 1, v - 1) + src_.at(qi, sj)) {
                        rev.push_back('M');
                        --i;
                        if (!step_left(j, lane, v, seg) || i < 0) {
                            stopped = true;
                            break;
                        }
                    } else {
                        state = h == lane_value(te + at) ? 'E' : 'F';
                    }
                } else if (state == 'E') {
                    rev.push_back('I');
                    if (lane_value(te + at) == H(i - 1, v) - oe) state = 'H';
                    if (--i < 0) throw runtime_failure("internal error: traceback ran past the first row");
                } else {
                    rev.push_back('D');
                    if (lane_value(tf + at) == H(i, v - 1) - oe) state = 'H';
                    if (!step_left(j, lane, v, seg))
                        throw runtime_failure("internal error: traceback ran past the first column");
                }
            }
        }

        alignment a;
        a.score = end.score;
        a.query_end = end.query_end;
        a.subject_end = end.subject_end;
        a.query_begin = i + 1;
        a.subject_begin = j + 1;
        for (auto it = rev.rbegin(); it != rev.rend(); ++it) {
            if (!a.ops.empty() && a.ops.back().op == *it) ++a.ops.back().len;
            else a.ops.push_back({*it, 1});
        }
        return a;
    }

    // Column j - 1 in the striped layout; false (j = -1) when j was 0.
    static bool step_left(std::int64_t& j, std::size_t& lane, std::size_t& v, std::size_t seg) {
        --j;
        if (j < 0) return false;
        if (v > 0) {
            --v;
        } else {
            --lane;
            v = seg - 1;
        }
        return true;
    }

    std::span<const std::uint8_t> q_, s_;
    score_source<S> src_;
    const scoring* sc_ = nullptr;  // for sw_traceback, when the scores are a substitution_matrix's
    vec zero_, neg_inf_, open_extend_, extend_;
    long extend_cost_;
    bool used_[substitution_matrix::max_letters] = {};
};

}  // namespace
}  // namespace swgpu::align_fast
