// The two passes of sw_align_scored (core/sw_align_fast.hpp), written once over an instruction set's lane operations.
//
// Included only by core/sw_align_fast_<isa>.cpp after the pragma that compiles the rest of that file for its target.
// Everything here is in an anonymous namespace, and so are the lane types each file defines: every function has
// internal linkage, so code built for AVX-512 cannot be picked by the linker for a caller on another path.
//
// A lane type V provides: vec, elem, lanes; encode(int) / decode(elem) between scores and lane values (8-bit lanes
// hold H - 128 and 16-bit lanes H - 32768, so that H = 0 is the type's minimum and a saturating add computes
// max(0, H + σ)); clamps_at_zero (the lanes cannot hold values below H = 0); neg_inf (the lane value of E and F
// outside the matrix); pad_score (σ of the padding columns); load, set1 (a raw lane value), adds / subs (saturating where the
// type is narrow), max, any_gt, shift_zero / shift_neg (lane k takes lane k-1, lane 0 takes H = 0 / neg_inf),
// shift_by(v, d) (lane k takes lane k-d, lanes below d take neg_inf; d a power of two below lanes), max_sub (the
// largest constant subs takes), dead_decay (a decay that takes every lane value to H <= 0).
//
// Lane values at or below H = 0 are interchangeable for E and F: H >= 0 hides them, and whatever grows from them stays
// <= 0 (a positive E or F comes from a positive H through positive values only). So lanes that clamp E and F at 0
// give exact H, and a traceback never visits an E or F state whose value is <= 0.
//
// Striped layout (Farrar 2007) of a row of width W: seg = ceil(W / lanes) vectors; column j is lane j / seg of vector
// j % seg. Columns W.. (padding, the end of the last lanes) score pad_score against everything; no real column depends
// on them (they all lie to the right of column W - 1).
//
// One row, i = query residue, from the row above (hp: H[i-1], ein: E[i]) to hc: H[i], eout: E[i+1]:
//   main sweep over the vectors, F carried inside each lane from vector s-1 to s, starting at -inf in vector 0;
//   F across lanes: the F entering vector 0 of every lane (what the lanes to its left opened, decayed by e a column) by
//   a prefix maximum over the lanes in log2(lanes) steps, then one sweep pushing it along while in some lane it
//   exceeds both H - (o + e) and 0 (only then can it change an H, an E of the next row, or a positive F after it),
//   raising H and E. (Farrar's lazy-F loop instead passes F one lane per sweep: up to `lanes` sweeps per row in the
//   shadow of a high-scoring alignment, where F stays positive for score/e columns.)
// The prefix maximum is exact because F opened from an H that is itself F, F - (o + e), never beats F - e: the F
// leaving lane k is the larger of what lane k opened in the main sweep and what entered it, seg·e lower.
// After a row, H and E are exact. F is stored (when asked) as the main sweep's value raised by the second sweep; it
// can be lower than the true F only at cells where F <= H - (o + e) or F <= 0, and the traceback is never in the F
// state there (entering F needs F == H > 0; staying in F from the cell to the right needs F > 0 and F > H - (o + e),
// or that cell's F would have been opened from this H, and opening is preferred).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/alignment.hpp"
#include "core/error.hpp"
#include "core/scoring.hpp"
#include "core/smith_waterman.hpp"

namespace swgpu::align_fast {
// Internal linkage for everything here: each instruction set's file has its own copy, compiled for its target only.
namespace {

// The narrowest pass-1 lanes that hold every H of a pair whose best score is `score` exactly, with H + σ and the gap
// costs: 8 bits (H - 128 up to 127), 16 bits (H - 32768), else 32 bits.
enum class lane_bits { b8, b16, b32 };
inline lane_bits lanes_for(const scoring& sc, int score) {
    const int top = score + std::max(sc.matrix.max_score(), 0), oe = sc.gaps.first();
    if (top < 255 && oe <= 127) return lane_bits::b8;
    if (top < 65535 && oe <= 32767) return lane_bits::b16;
    return lane_bits::b32;
}

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
    scratch prof1, rows1, saved, prof2, h2, e2, f2;
    // Buffers beyond this many bytes in all are given back after the call that needed them.
    static constexpr std::size_t kept_bytes = std::size_t(16) << 20;
    void trim() {
        std::size_t total = 0;
        for (auto* b : {&prof1, &rows1, &saved, &prof2, &h2, &e2, &f2}) total += b->capacity();
        if (total > kept_bytes)
            for (auto* b : {&prof1, &rows1, &saved, &prof2, &h2, &e2, &f2}) b->release();
    }
};

// One lane type's share of the work: the profile and the rows.
template <class V>
struct striped {
    using vec = typename V::vec;
    using T = typename V::elem;
    static constexpr std::size_t L = V::lanes;

    vec zero, neg_inf, open_extend, extend;
    int extend_cost;

    explicit striped(const scoring& sc)
        : zero(V::set1(V::encode(0))), neg_inf(V::set1(V::neg_inf)), open_extend(V::set1(sc.gaps.first())),
          extend(V::set1(sc.gaps.extend)), extend_cost(sc.gaps.extend) {}

    static std::size_t segments(std::size_t width) { return (width + L - 1) / L; }

    // prof[a * seg + v] = σ(a, subject columns of vector v), for the letters a marked in `used`.
    static void build_profile(std::span<const std::uint8_t> subject, std::size_t width, std::size_t seg,
                              const scoring& sc, const bool* used, vec* prof) {
        alignas(64) T lane[L];
        const std::int8_t* table = sc.matrix.table().data();
        for (std::size_t a = 0; a < substitution_matrix::max_letters; ++a) {
            if (!used[a]) continue;
            const std::int8_t* row = table + a * substitution_matrix::max_letters;
            for (std::size_t v = 0; v < seg; ++v) {
                for (std::size_t k = 0; k < L; ++k) {
                    const std::size_t j = k * seg + v;
                    lane[k] = j < width ? static_cast<T>(row[subject[j]]) : static_cast<T>(V::pad_score);
                }
                prof[a * seg + v] = V::load(lane);
            }
        }
    }

    // One row (see the file comment). ein may equal eout when f is null. Returns the lane-wise maximum of H when
    // Max is set.
    template <bool Max>
    vec row(const vec* prof, std::size_t seg, const vec* hp, vec* hc, const vec* ein, vec* eout, vec* f) const {
        vec vf = neg_inf, vmax = zero;
        vec vh = V::shift_zero(hp[seg - 1]);  // H[i-1][j-1] for vector 0
        for (std::size_t v = 0; v < seg; ++v) {
            vh = V::adds(vh, prof[v]);
            if constexpr (!V::clamps_at_zero) vh = V::max(vh, zero);
            const vec e = ein[v];
            vh = V::max(vh, V::max(e, vf));
            if constexpr (Max) vmax = V::max(vmax, vh);
            hc[v] = vh;
            if (f) f[v] = vf;
            const vec opened = V::subs(vh, open_extend);
            eout[v] = V::max(V::subs(e, extend), opened);
            vf = V::max(V::subs(vf, extend), opened);
            vh = hp[v];
        }
        // The F entering vector 0 of lane k is the F leaving lane k-1: the larger of what lane k-1 opened (vf after
        // the main sweep) and what entered lane k-1, seg·e lower. First the common case: with only lane k-1's own F,
        // no lane's F matters at vector 0; then none does anywhere (by induction over the lanes).
        vf = V::shift_neg(vf);
        if (!V::any_gt(vf, matters(hc[0]))) return vmax;
        // Otherwise the exact entering F of every lane, a prefix maximum over the lanes with decay (Hillis-Steele:
        // after the step of distance d, lane k has seen lanes k-2d+1..k-1), then one sweep that stops where no lane's
        // F matters any more (past that point, no F behind it does either).
        for (std::size_t d = 1; d < L; d *= 2) {
            const long decay = static_cast<long>(d * seg) * static_cast<long>(extend_cost);
            if (decay >= V::dead_decay) break;  // lanes d or more away bring F <= 0 only
            vf = V::max(vf, sub_wide(V::shift_by(vf, d), decay));
        }
        for (std::size_t v = 0; v < seg; ++v) {
            vec h = hc[v];
            if (!V::any_gt(vf, matters(h))) break;
            h = V::max(h, vf);
            hc[v] = h;
            if constexpr (Max) vmax = V::max(vmax, h);
            eout[v] = V::max(eout[v], V::subs(h, open_extend));
            if (f) f[v] = V::max(f[v], vf);
            vf = V::max(V::subs(vf, extend), neg_inf);
        }
        return vmax;
    }

    // An F at or below H - (o + e), or at or below 0, changes nothing from here on.
    vec matters(vec h) const {
        const vec opened = V::subs(h, open_extend);
        if constexpr (V::clamps_at_zero) return opened;
        else return V::max(opened, zero);
    }

    // x - decay for a decay below V::dead_decay, which may exceed what one saturating subtraction takes.
    static vec sub_wide(vec x, long decay) {
        if (decay > V::max_sub) {
            x = V::subs(x, V::set1(static_cast<int>(V::max_sub)));
            decay -= V::max_sub;
        }
        return V::subs(x, V::set1(static_cast<int>(decay)));
    }
};

// Pass 1 with lane type V1, pass 2 with V2 (the same width here; kept apart so a pass could use other lanes).
template <class V1, class V2>
class scored_aligner {
public:
    static constexpr std::size_t block_rows = 32;  // rows between checkpoints (more when the budget asks)

    scored_aligner(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc)
        : q_(query), s_(subject), sc_(sc), p1_(sc), p2_(sc) {
        for (const auto a : q_) used_[a] = true;
    }

    std::optional<alignment> align(int score, const traceback_options& opt) const {
        using vec1 = typename V1::vec;
        using T1 = typename V1::elem;
        constexpr std::size_t L1 = V1::lanes;
        const std::size_t m = q_.size(), n = s_.size();
        const std::size_t seg1 = p1_.segments(n), row1 = seg1 * L1;

        thread_local workspace ws;
        struct trim_on_return {
            workspace& w;
            ~trim_on_return() { w.trim(); }
        } trim{ws};

        // Pass 1: rows until the first that reaches `score`, checkpoints every K rows.
        auto* prof1 = reinterpret_cast<vec1*>(ws.prof1.get<T1>(substitution_matrix::max_letters * row1));
        p1_.build_profile(s_, n, seg1, sc_, used_, prof1);
        T1* hp = ws.rows1.get<T1>(3 * row1);
        T1* hc = hp + row1;
        T1* e1 = hc + row1;
        std::fill(hp, hp + row1, V1::encode(0));
        std::fill(e1, e1 + row1, static_cast<T1>(V1::neg_inf));

        // K rows per block: the checkpoints (2 rows each) and one block's H, E and F within the budget.
        const std::size_t row2 = striped<V2>::segments(n) * V2::lanes;
        const auto footprint = [&](std::size_t k) {
            return (m / k) * 2 * row1 * sizeof(T1) + 3 * (k + 1) * row2 * sizeof(typename V2::elem);
        };
        std::size_t K = std::min(block_rows, m);
        while (K < m && footprint(K) > opt.memory_budget) K = std::min(2 * K, m);
        const bool checkpoints = footprint(K) <= opt.memory_budget;
        // Checkpoint c: H of row (c+1)K-1, then E of row (c+1)K.
        T1* const saved = checkpoints ? ws.saved.get<T1>(m / K * 2 * row1) : nullptr;
        std::size_t n_saved = 0;

        sw_end end;
        const vec1 target = V1::set1(V1::encode(score - 1));
        std::size_t to_checkpoint = K;  // rows to the next checkpoint (a division per row costs like a short row)
        for (std::size_t i = 0; i < m; ++i) {
            auto* e = reinterpret_cast<vec1*>(e1);
            const vec1 vmax = p1_.template row<true>(prof1 + q_[i] * seg1, seg1, reinterpret_cast<const vec1*>(hp),
                                                     reinterpret_cast<vec1*>(hc), e, e, nullptr);
            if (V1::any_gt(vmax, target)) {
                std::size_t best = n;
                for (std::size_t x = 0; x < row1; ++x) {
                    const int h = V1::decode(hc[x]);
                    if (h > score) return std::nullopt;
                    if (h == score) best = std::min(best, (x % L1) * seg1 + x / L1);
                }
                if (best >= n) return std::nullopt;
                end = {score, static_cast<std::int64_t>(i), static_cast<std::int64_t>(best)};
                break;
            }
            if (--to_checkpoint == 0) {
                to_checkpoint = K;
                if (checkpoints) {
                    std::copy(hc, hc + row1, saved + n_saved * 2 * row1);
                    std::copy(e1, e1 + row1, saved + n_saved * 2 * row1 + row1);
                    ++n_saved;
                }
            }
            std::swap(hp, hc);
        }
        if (end.score != score) return std::nullopt;
        if (!checkpoints) return sw_traceback(q_, s_, sc_, end, opt);
        return traceback(end, K, saved, seg1, ws);
    }

private:
    // Pass 2: blocks from the end cell's upwards. Each block's rows are recomputed over columns 0..j (the walk's
    // column when it enters the block) from the checkpoint above, keeping every row's H, E and F; the walk then reads
    // the values it compares, as sw_traceback does.
    alignment traceback(const sw_end& end, std::size_t K, const typename V1::elem* saved, std::size_t seg1,
                        workspace& ws) const {
        using vec = typename V2::vec;
        using T = typename V2::elem;
        constexpr std::size_t L = V2::lanes;
        const std::size_t row1 = seg1 * V1::lanes;
        const int oe = sc_.gaps.first();
        std::int64_t i = end.query_end, j = end.subject_end;
        char state = 'H';
        bool stopped = false;
        std::vector<char> rev;
        std::size_t width = 0, seg = 0, rowb = 0;
        // hb: H of rows r0-1..r1; eb: E of rows r0..r1+1; fb: F of rows r0..r1.
        vec* prof = nullptr;
        T *hb = nullptr, *eb = nullptr, *fb = nullptr;
        while (!stopped) {
            const auto r0 = static_cast<std::size_t>(i) / K * K, r1 = static_cast<std::size_t>(i);
            const auto need = static_cast<std::size_t>(j) + 1;
            if (width == 0 || 4 * need <= 3 * width) {  // narrower by a quarter: restripe to the new width
                width = need;
                seg = p2_.segments(width);
                rowb = seg * L;
                prof = reinterpret_cast<vec*>(ws.prof2.get<T>(substitution_matrix::max_letters * rowb));
                p2_.build_profile(s_, width, seg, sc_, used_, prof);
                hb = ws.h2.get<T>((K + 1) * rowb);
                eb = ws.e2.get<T>((K + 1) * rowb);
                fb = ws.f2.get<T>(K * rowb);
            }
            if (r0 == 0) {
                std::fill(hb, hb + rowb, V2::encode(0));
                std::fill(eb, eb + rowb, static_cast<T>(V2::neg_inf));
            } else {
                const auto* cp = saved + (r0 / K - 1) * 2 * row1;
                restripe(cp, seg1, hb, width, seg, V2::encode(0));
                restripe(cp + row1, seg1, eb, width, seg, static_cast<T>(V2::neg_inf));
            }
            vec* hv = reinterpret_cast<vec*>(hb);
            vec* ev = reinterpret_cast<vec*>(eb);
            vec* fv = reinterpret_cast<vec*>(fb);
            for (std::size_t r = r0; r <= r1; ++r) {
                const std::size_t k = r - r0;
                p2_.template row<false>(prof + q_[r] * seg, seg, hv + k * seg, hv + (k + 1) * seg,
                                        ev + k * seg, ev + (k + 1) * seg, fv + k * seg);
            }

            // Row i's H is row i - r0 + 1 of hb (row 0: the row above the block); column -1 is H = 0.
            const auto top = static_cast<std::int64_t>(r0);
            const auto cell = [&](std::int64_t row, std::int64_t col) {
                const auto c = static_cast<std::size_t>(col);
                return static_cast<std::size_t>(row) * rowb + (c % seg) * L + c / seg;
            };
            const auto H = [&](std::int64_t row, std::int64_t col) {
                return col < 0 ? 0 : V2::decode(hb[cell(row - top + 1, col)]);
            };
            while (i >= top) {
                if (state == 'H') {
                    const int h = H(i, j);
                    if (h == 0) {
                        stopped = true;
                        break;
                    }
                    const auto qi = q_[static_cast<std::size_t>(i)], sj = s_[static_cast<std::size_t>(j)];
                    if (h == H(i - 1, j - 1) + sc_.matrix.score(qi, sj)) {
                        rev.push_back('M');
                        --i;
                        --j;
                        if (i < 0 || j < 0) {
                            stopped = true;
                            break;
                        }
                    } else {
                        state = h == V2::decode(eb[cell(i - top, j)]) ? 'E' : 'F';
                    }
                } else if (state == 'E') {
                    rev.push_back('I');
                    if (V2::decode(eb[cell(i - top, j)]) == H(i - 1, j) - oe) state = 'H';
                    if (--i < 0) throw runtime_failure("internal error: traceback ran past the first row");
                } else {
                    rev.push_back('D');
                    if (V2::decode(fb[cell(i - top, j)]) == H(i, j - 1) - oe) state = 'H';
                    if (--j < 0) throw runtime_failure("internal error: traceback ran past the first column");
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

    // A pass-1 row (seg_from vectors of V1) as a pass-2 row of width w_to (seg_to vectors of V2), padded with fill.
    // Values at or below H = 0 may come out as 0 where V1 clamps them, which changes nothing (see the file comment).
    static void restripe(const typename V1::elem* from, std::size_t seg_from, typename V2::elem* to, std::size_t w_to,
                         std::size_t seg_to, typename V2::elem fill) {
        for (std::size_t v = 0; v < seg_to; ++v)
            for (std::size_t k = 0; k < V2::lanes; ++k) {
                const std::size_t j = k * seg_to + v;
                to[v * V2::lanes + k] =
                    j < w_to ? V2::encode(V1::decode(from[(j % seg_from) * V1::lanes + j / seg_from])) : fill;
            }
    }

    std::span<const std::uint8_t> q_, s_;
    const scoring& sc_;
    striped<V1> p1_;
    striped<V2> p2_;
    bool used_[substitution_matrix::max_letters] = {};
};

}  // namespace
}  // namespace swgpu::align_fast
