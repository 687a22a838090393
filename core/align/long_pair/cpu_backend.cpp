// The CPU backend of the long-pair aligner (core/align/long_pair/long_pair.hpp): the forward pass over tiles of row
// groups on the thread pool (waves or dataflow), the traceback of a rectangle, forbidden pairs of earlier alignments.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <queue>
#include <thread>

#include "core/align/long_pair/detail.hpp"
#include "core/align/long_pair/long_pair.hpp"
#include "core/align/simd/long_pair_rows.hpp"
#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/tuning.hpp"

namespace swgpu::long_pair {

using detail::clock;
using detail::idx;
using detail::since;

// ---- The CPU backend ----------------------------------------------------------------------------------------------

cpu_backend::cpu_backend(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc,
                         thread_pool& pool, std::size_t grid_budget, double leaf_cells, int lanes,
                         std::size_t trace_batch)
    // Leaves of less than one tile cannot be reached (grid spacings are tile multiples): the walk would split forever.
    : q_(query), s_(subject), sc_(sc), pool_(pool), budget_(grid_budget),
      leaf_(std::max(leaf_cells, double(tile) * double(tile))), lanes_(lanes),
      batch_(trace_batch ? trace_batch : pool.size() >= 4 ? pool.size() : 1) {
    // A subject of few letters (DNA; protein in 16-bit cells) gets compact codes, so that the vector kernel picks σ by
    // comparisons.
    std::vector<int> code(substitution_matrix::max_letters, -1);
    std::vector<std::uint8_t> compact(subject.size()), letters;
    for (std::size_t k = 0; k < subject.size(); ++k) {
        int& c = code[subject[k] & 31];
        if (c < 0) {
            if (letters.size() == static_cast<std::size_t>(rows::max_select_letters16)) return;
            c = static_cast<int>(letters.size());
            letters.push_back(subject[k] & 31);
        }
        compact[k] = static_cast<std::uint8_t>(c);
    }
    compact_ = std::move(compact);
    letter_code_ = std::move(letters);
    compact_rev_.assign(compact_.size() + 2 * rev_pad, 255);
    std::copy(compact_.rbegin(), compact_.rend(), compact_rev_.begin() + rev_pad);
    compact_rev16_.assign(compact_rev_.begin(), compact_rev_.end());
    // σ of two values on the letters that meet (DNA under --match/--mismatch): one comparison per step.
    std::vector<bool> in_query(substitution_matrix::max_letters, false);
    for (const auto c : query) in_query[c & 31] = true;
    std::optional<int> match, mismatch;
    bool two = true;
    for (int a = 0; a < substitution_matrix::max_letters && two; ++a) {
        if (!in_query[static_cast<std::size_t>(a)]) continue;
        for (const auto b : letter_code_) {
            const int v = sc.matrix.score(static_cast<std::uint8_t>(a), b);
            auto& want = a == b ? match : mismatch;
            if (!want) want = v;
            two = two && *want == v;
        }
    }
    if (!two) return;
    match_ = match.value_or(0);
    mismatch_ = mismatch.value_or(0);
    row_code_.assign(substitution_matrix::max_letters, -1);
    for (std::size_t x = 0; x < letter_code_.size(); ++x) row_code_[letter_code_[x]] = static_cast<int>(x);
}

rows::group cpu_backend::start_group(std::vector<int>& profile, std::vector<int>& codes, std::int64_t row0, int rows,
                                     int lanes) const {
    rows::group grp;
    grp.rows = rows;
    grp.oe = sc_.gaps.open + sc_.gaps.extend;
    grp.ext = sc_.gaps.extend;
    grp.profile = profile.data();
    if (!compact_.empty()) {
        grp.letter_code = letter_code_.data();
        grp.letters = static_cast<int>(letter_code_.size());
    }
    if (!row_code_.empty()) {  // σ of two values: the kernel compares letters and reads no profile
        for (int k = 0; k < rows; ++k) codes[static_cast<std::size_t>(k)] = row_code_[q_[idx(row0 + k)] & 31];
        grp.row_code = codes.data();
        grp.match = match_;
        grp.mismatch = mismatch_;
        return grp;
    }
    const auto& table = sc_.matrix.table();
    for (int k = 0; k < lanes; ++k) {
        const auto row = static_cast<std::size_t>(k) * 32;
        const int letter = k < rows ? q_[idx(row0 + k)] & 31 : -1;
        const auto value = [&](int x) { return letter < 0 ? -(1 << 24) : int(table[idx(letter) * 32 + idx(x)]); };
        if (compact_.empty()) {
            for (int x = 0; x < 32; ++x) profile[row + idx(x)] = value(x);
        } else {  // the kernel reads the subject's letters only
            for (const auto x : letter_code_) profile[row + x] = value(x);
        }
    }
    return grp;
}

rows::kernel_choice cpu_backend::kernel() const {
    rows::kernel_choice chosen = rows::best_kernel();
    for (const auto& k : rows::available_kernels())
        if (k.lanes == lanes_) chosen = k;
    return chosen;
}

// Gathering σ lane by lane into 16-bit lanes made protein slower (12 kbp, one thread: 0.6-0.7 against 0.9-1.1 GCUPS),
// hence compact codes (σ by comparisons) are required.
int cpu_backend::narrow_lanes(const rows::kernel_choice& k, int width) const {
    if (!k.run16 || compact_.empty() || (forbidden_ && !forbidden_->paths.empty()) ||
        tuning::integer("long.cpu_narrow") == 0)
        return 0;
    int sigma_max = 0;  // the largest score, at least 0
    for (const auto v : sc_.matrix.table()) sigma_max = std::max(sigma_max, static_cast<int>(v));
    return rows::narrow_fits(k.lanes16, width, sigma_max, sc_.gaps.open + sc_.gaps.extend) ? k.lanes16 : 0;
}

void cpu_backend::at_column(rows::group& grp, std::int64_t col0) const {
    grp.subject = s_.data() + col0;
    if (!compact_.empty()) {
        grp.compact = compact_.data() + col0;
        // compact_rev_[rev_pad + S − 1 − p] holds the code of subject position p.
        grp.compact_rev = compact_rev_.data() + rev_pad + (static_cast<std::int64_t>(compact_.size()) - 1 - col0);
        grp.compact_rev16 = compact_rev16_.data() + rev_pad + (static_cast<std::int64_t>(compact_.size()) - 1 - col0);
    }
}

void forbidden_pairs::add(const alignment& a) {
    path p;
    p.first_row = a.query_begin;
    p.col.assign(static_cast<std::size_t>(a.query_end - a.query_begin + 1), -1);
    std::int64_t i = a.query_begin, j = a.subject_begin;
    for (const auto& op : a.ops)
        for (std::uint32_t k = 0; k < op.len; ++k) {
            if (op.op == 'M') p.col[idx(i - p.first_row)] = j;
            if (op.op != 'D') ++i;
            if (op.op != 'I') ++j;
        }
    paths.push_back(std::move(p));
}

void cpu_backend::mark_forbidden(rows::group& grp, std::vector<int>& buf, std::int64_t row0, std::int64_t col0,
                                 int lanes) const {
    grp.forbidden_count = 0;
    if (!forbidden_ || forbidden_->paths.empty()) return;
    const auto L = static_cast<std::size_t>(lanes);
    buf.assign(forbidden_->paths.size() * L, -1);
    bool any = false;
    for (std::size_t x = 0; x < forbidden_->paths.size(); ++x) {
        const auto& p = forbidden_->paths[x];
        const std::int64_t last = p.first_row + static_cast<std::int64_t>(p.col.size());
        for (int k = 0; k < grp.rows; ++k) {
            const std::int64_t i = row0 + k;
            if (i < p.first_row || i >= last) continue;
            const std::int64_t j = p.col[idx(i - p.first_row)];
            if (j >= col0 && j < col0 + grp.w) {
                buf[x * L + static_cast<std::size_t>(k)] = static_cast<int>(j - col0);
                any = true;
            }
        }
    }
    if (!any) return;
    grp.forbidden = buf.data();
    grp.forbidden_count = static_cast<int>(forbidden_->paths.size());
}

// One forward pass: its rectangle, the running borders, the grid it fills and the kernel it runs.
struct cpu_backend::forward_state {
    rect area;
    const borders& b;
    std::int64_t K, rows, cols;
    std::int64_t nti, ntj;  // tiles per side
    std::int64_t s, nI;     // tiles per side of a task, task rows
    grid& g;
    std::shared_ptr<host_grid_lines> lines;
    std::vector<std::atomic<int>> block_max;
    // Running borders: the bottom row of the last tile computed in each column, and the right column of the last
    // tile computed in each row. A wave's tasks have distinct tile rows and tile columns, so they touch disjoint parts.
    std::vector<int> row_h, row_e, col_h, col_f;
    // corner_in[I]: H above and left of the first cell of the next task in task row I (task (I, J + 1) once (I, J)
    // has started): (I, J) saves it from row_h at its start, before its tiles overwrite the row above. Only task row I
    // writes and reads it, one task after the other, so any order that keeps each task after the one above it and
    // the one to its left (the waves, the dataflow schedule) reads the right value.
    std::vector<int> corner_in;
    rows::kernel_choice kernel;
    // Groups of `lanes16` rows in 16-bit cells where a tile has that many rows left (0: none; narrow_lanes), else
    // groups of kernel.lanes rows in 32-bit cells.
    int lanes16 = 0;
    // long.profile: the threads' time inside tasks, summed, printed with the pass's wall time when it ends.
    bool profile = false;
    std::atomic<std::int64_t> task_ns{0};
};

void cpu_backend::forward_tile(forward_state& st, std::int64_t ti, std::int64_t tj, int diag_first) const {
    const std::int64_t i0 = ti * tile, i1 = std::min(i0 + tile, st.rows);
    const std::int64_t j0 = tj * tile, j1 = std::min(j0 + tile, st.cols);
    int* hr = st.row_h.data() + j0;
    int* er = st.row_e.data() + j0;
    const int w = static_cast<int>(j1 - j0);
    int best = 0;
    // Groups of `lanes` rows, one row per vector lane (core/align/simd/long_pair_rows.hpp); of lanes16 rows in
    // 16-bit cells while the tile has that many rows left.
    const int lanes = st.kernel.lanes, lanes16 = st.lanes16;
    const auto most = static_cast<std::size_t>(std::max(lanes, lanes16));
    std::vector<int> profile(most * 32), row_code(most, -1);
    std::vector<int> forbidden_cols;
    for (std::int64_t g0 = i0; g0 < i1;) {
        const bool narrow = lanes16 > 0 && i1 - g0 >= lanes16;
        const int n = narrow ? lanes16 : lanes;
        const int rows = static_cast<int>(std::min<std::int64_t>(n, i1 - g0));
        rows::group grp = start_group(profile, row_code, st.area.r0 + g0, rows, n);
        at_column(grp, st.area.c0 + j0);
        grp.w = w;
        grp.top_h = hr;
        grp.top_e = er;
        grp.corner = diag_first;
        grp.left_h = st.col_h.data() + g0;
        grp.left_f = st.col_f.data() + g0;
        if (!narrow) mark_forbidden(grp, forbidden_cols, st.area.r0 + g0, st.area.c0 + j0, lanes);
        diag_first = st.col_h[idx(g0 + rows - 1)];  // H[last row of the group][j0 - 1]: the next group's corner
        best = std::max(best, narrow ? st.kernel.run16(grp) : st.kernel.run(grp));
        g0 += rows;
    }
    // Checkpoints on the grid's lines (tile borders, as K is a multiple of the tile).
    const std::int64_t K = st.K, cols = st.cols;
    if (i1 % K == 0 && i1 < st.rows) {
        const auto a = idx(i1 / K - 1);
        std::copy_n(hr, w, st.lines->row_h.data() + a * idx(cols) + idx(j0));
        std::copy_n(er, w, st.lines->row_e.data() + a * idx(cols) + idx(j0));
    }
    if (j1 % K == 0 && j1 < cols) {
        const auto at = static_cast<std::ptrdiff_t>(idx(j1 / K - 1) * idx(st.rows) + idx(i0));
        std::copy(st.col_h.begin() + i0, st.col_h.begin() + i1, st.lines->col_h.begin() + at);
        std::copy(st.col_f.begin() + i0, st.col_f.begin() + i1, st.lines->col_f.begin() + at);
    }
    auto& slot = st.block_max[idx((i0 / K) * st.g.B + j0 / K)];
    int seen = slot.load(std::memory_order_relaxed);
    while (best > seen && !slot.compare_exchange_weak(seen, best, std::memory_order_relaxed)) {
    }
}

void cpu_backend::forward_task(forward_state& st, std::int64_t I, std::int64_t J) const {
    const auto t0 = st.profile ? clock::now() : clock::time_point{};
    forward_task_tiles(st, I, J);
    if (st.profile)
        st.task_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - t0).count(),
                             std::memory_order_relaxed);
}

void cpu_backend::forward_task_tiles(forward_state& st, std::int64_t I, std::int64_t J) const {
    const std::int64_t s = st.s, ti0 = I * s, ti1 = std::min(ti0 + s, st.nti), tj0 = J * s, tj1 = std::min(tj0 + s, st.ntj);
    // The corner of each tile: from outside the task for its first row and column (read before the tile to its
    // left, or above, overwrites the border holding it), else the bottom-right cell of the tile up and left.
    std::array<int, max_task_tiles> first_row{}, first_col{}, up_left{}, here{};
    const int task_corner = ti0 == 0 ? st.b.top_h[idx(tj0 * tile)]
                            : tj0 == 0 ? st.b.left_h[idx(ti0 * tile - 1)]
                                       : st.corner_in[idx(I)];
    if (ti0 > 0) st.corner_in[idx(I)] = st.row_h[idx(std::min(tj1 * tile, st.cols) - 1)];
    for (std::int64_t ti = ti0; ti < ti1; ++ti, std::swap(up_left, here))
        for (std::int64_t tj = tj0; tj < tj1; ++tj) {
            const std::int64_t i0 = ti * tile, j0 = tj * tile;
            const auto a = idx(ti - ti0), c = idx(tj - tj0);
            int diag;
            if (ti == ti0 && tj == tj0)
                diag = task_corner;
            else if (ti == ti0)
                diag = first_row[c];
            else if (tj == tj0)
                diag = first_col[a];
            else
                diag = up_left[c - 1];
            const std::int64_t i1 = std::min(i0 + tile, st.rows), j1 = std::min(j0 + tile, st.cols);
            if (ti == ti0 && tj + 1 < tj1) first_row[c + 1] = st.row_h[idx(j1 - 1)];
            if (tj == tj0 && ti + 1 < ti1) first_col[a + 1] = st.col_h[idx(i1 - 1)];
            forward_tile(st, ti, tj, diag);
            here[c] = st.row_h[idx(j1 - 1)];
        }
}

// A task is a square of s × s tiles (fewer at the edges), its tiles in row-major order; the tasks run in anti-diagonal
// waves or as they become ready (forward_dataflow). Every task reads its top and left borders from the cores that
// wrote them (and every wave ends at a barrier), so larger tasks cost less per cell (16 threads, waves, s = 2 against 1:
// 6 % faster at 20 kbp, 12 % at 200 kbp, 18 % at 1 Mbp; data/tuning.tsv), while the widest anti-diagonal must still
// keep the threads busy.
std::int64_t cpu_backend::task_tiles(std::int64_t nti, std::int64_t ntj) {
    const auto threads_n = static_cast<std::int64_t>(threads().size());
    std::int64_t s = std::clamp<std::int64_t>(tuning::integer("long.cpu_task_tiles"), 1, max_task_tiles);
    while (s > 1 && std::min(nti, ntj) / s < 2 * threads_n) --s;
    return s;
}

void cpu_backend::forward(const rect& area, const borders& b, std::int64_t K, grid& g) {
    if (K <= 0 || K % tile != 0) throw runtime_failure("internal error: long-pair grid spacing is not a tile multiple");
    const std::int64_t rows = area.rows(), cols = area.cols();
    g = grid{};
    g.area = area;
    g.K = K;
    g.A = (rows + K - 1) / K;
    g.B = (cols + K - 1) / K;
    const std::int64_t nti = (rows + tile - 1) / tile, ntj = (cols + tile - 1) / tile, s = task_tiles(nti, ntj);
    const std::int64_t nI = (nti + s - 1) / s, nJ = (ntj + s - 1) / s;
    forward_state st{area,
                     b,
                     K,
                     rows,
                     cols,
                     nti,
                     ntj,
                     s,
                     nI,
                     g,
                     std::make_shared<host_grid_lines>(g.A, g.B, rows, cols, false),
                     std::vector<std::atomic<int>>(idx(g.A * g.B)),
                     std::vector<int>(b.top_h.begin() + 1, b.top_h.end()),
                     b.top_e,
                     b.left_h,
                     b.left_f,
                     std::vector<int>(idx(nI)),
                     kernel()};
    for (auto& v : st.block_max) v.store(0, std::memory_order_relaxed);
    st.lanes16 = narrow_lanes(st.kernel, static_cast<int>(tile));
    st.profile = tuning::flag("long.profile");
    const auto started = clock::now();

    if (threads().size() > 1 && nI * nJ > 1 && tuning::text("long.cpu_schedule") == "dataflow") {
        forward_dataflow(st);
    } else {  // anti-diagonal waves of tasks
        std::int64_t tasks_done = 0;
        auto last_report = clock::now();
        for (std::int64_t d = 0; d < nI + nJ - 1; ++d) {
            check_cancelled();
            const std::int64_t lo = std::max<std::int64_t>(0, d - (nJ - 1)), hi = std::min(d, nI - 1);
            threads().parallel_for(idx(hi - lo + 1), [&](std::size_t k) {
                const std::int64_t I = lo + static_cast<std::int64_t>(k);
                forward_task(st, I, d - I);
            });
            tasks_done += hi - lo + 1;
            if (progress && !own_pool_ && since(last_report) > 0.25) {
                progress(double(tasks_done) / double(nI * nJ));
                last_report = clock::now();
            }
        }
    }
    if (st.profile) {
        const double wall = since(started), busy = double(st.task_ns.load()) * 1e-9;
        const auto n = threads().size();
        std::fprintf(stderr,
                     "long-pair profile: cpu forward %lld x %lld, %lld x %lld tasks of %lld tiles, %zu threads: %.4f s, "
                     "in tasks %.4f s (%.0f %% of the threads' time), %.1f us per task\n",
                     static_cast<long long>(rows), static_cast<long long>(cols), static_cast<long long>(nI),
                     static_cast<long long>(nJ), static_cast<long long>(s), static_cast<std::size_t>(n), wall, busy,
                     100.0 * busy / (wall * double(n)), 1e6 * busy / double(nI * nJ));
    }
    g.lines = std::move(st.lines);
    g.block_max.resize(st.block_max.size());
    for (std::size_t k = 0; k < st.block_max.size(); ++k) g.block_max[k] = st.block_max[k].load();
}

// The tasks without waves: each task becomes ready once the task above it and the one to its left are done, and the
// pool's threads take ready tasks, lowest anti-diagonal first, until all are done; no thread waits for a wave's
// slowest task (long.cpu_schedule=dataflow). A thread whose task makes the task to its right ready runs that one next
// itself, so that a task row tends to stay on one core.
void cpu_backend::forward_dataflow(forward_state& st) {
    const std::int64_t nI = st.nI, nJ = (st.ntj + st.s - 1) / st.s, total = nI * nJ;
    std::vector<std::atomic<std::uint8_t>> waiting(idx(total));  // tasks above and to the left not yet done
    for (std::int64_t I = 0; I < nI; ++I)
        for (std::int64_t J = 0; J < nJ; ++J)
            waiting[idx(I * nJ + J)].store(static_cast<std::uint8_t>((I > 0) + (J > 0)), std::memory_order_relaxed);
    using item = std::pair<std::int64_t, std::int64_t>;  // (I + J, I)
    std::priority_queue<item, std::vector<item>, std::greater<item>> ready;
    std::mutex ready_m, report_m;
    std::condition_variable wake;  // a task became ready, or the pass is over
    std::atomic<std::int64_t> done{0};
    std::atomic<bool> failed{false};
    auto last_report = clock::now();
    ready.push({0, 0});
    // A task's writes reach the task it makes ready: the last decrement (acq_rel) orders both predecessors' writes
    // before the push, and the mutex orders the push before the pop.
    const auto last_wait = [&](std::int64_t I, std::int64_t J) {
        return waiting[idx(I * nJ + J)].fetch_sub(1, std::memory_order_acq_rel) == 1;
    };
    const auto make_ready = [&](std::int64_t I, std::int64_t J) {
        {
            std::lock_guard lock(ready_m);
            ready.push({I + J, I});
        }
        wake.notify_one();
    };
    // The end (or a failure) wakes every waiting thread; taking the lock after the change means no thread can have
    // checked the condition before it and wait after the notification.
    const auto wake_all = [&] {
        { std::lock_guard lock(ready_m); }
        wake.notify_all();
    };
    threads().parallel_for(threads().size(), [&](std::size_t) {
        try {
            for (;;) {
                item t;
                {
                    std::unique_lock lock(ready_m);
                    wake.wait(lock, [&] {
                        return !ready.empty() || failed.load() || done.load(std::memory_order_acquire) == total;
                    });
                    if (ready.empty() || failed.load()) return;
                    t = ready.top();
                    ready.pop();
                }
                // Along the task row while the task to the right becomes ready with this one: the borders it reads
                // on its left are then still in this thread's cache; the task below goes to the queue.
                for (std::int64_t I = t.second, J = t.first - t.second;;) {
                    check_cancelled();
                    forward_task(st, I, J);
                    if (I + 1 < nI && last_wait(I + 1, J)) make_ready(I + 1, J);
                    const bool right = J + 1 < nJ && last_wait(I, J + 1);
                    const std::int64_t finished = done.fetch_add(1, std::memory_order_acq_rel) + 1;
                    if (finished == total) wake_all();
                    if (progress && !own_pool_) {
                        std::unique_lock lock(report_m, std::try_to_lock);
                        if (lock && since(last_report) > 0.25) {
                            progress(double(finished) / double(total));
                            last_report = clock::now();
                        }
                    }
                    if (!right) break;
                    ++J;
                }
            }
        } catch (...) {
            failed.store(true);  // the other threads leave; the pool rethrows the first exception
            wake_all();
            throw;
        }
    });
}

backend::share_shape cpu_backend::sharing(const rect& area, std::int64_t) const {
    if (pool_.size() < 2) return {};
    const std::int64_t widest = std::min((area.rows() + tile - 1) / tile, (area.cols() + tile - 1) / tile);
    return {static_cast<std::size_t>(std::clamp<std::int64_t>(widest, 1, pool_.size())), pool_.size(), 1};
}

void cpu_backend::share(std::size_t units, std::int64_t) {
    own_pool_.reset();
    if (units > 0) own_pool_ = std::make_unique<thread_pool>(static_cast<unsigned>(units));
}

void cpu_backend::trace_blocks(const grid& g, const borders& outer,
                               std::span<const std::pair<std::int64_t, std::int64_t>> blocks, std::vector<trace>& out) {
    out.resize(blocks.size());
    std::vector<borders> inner(blocks.size());
    for (std::size_t k = 0; k < blocks.size(); ++k)
        inner[k] = g.block_borders(blocks[k].first, blocks[k].second, outer);
    threads().parallel_for(blocks.size(), [&](std::size_t k) {
        trace_rect(g.block(blocks[k].first, blocks[k].second), inner[k], 0, out[k]);
    });
}

void cpu_backend::trace_rect(const rect& area, const borders& b, int target, trace& out) {
    // The forward pass's group kernel over the rectangle (groups of `lanes` rows, in strips of at most `strip`
    // columns so that its buffers stay small whatever the shape), each step's nibbles written to a buffer and moved
    // into the trace's columns after each strip.
    const std::int64_t rows = area.rows(), cols = area.cols();
    out = trace{};
    out.area = area;
    out.stride = (rows + 1) / 2 * 2;
    out.nibbles.assign(idx(out.stride * cols / 2 + 1), 0);
    if (rows == 0 || cols == 0) return;
    const rows::kernel_choice kernel = this->kernel();
    // Groups of lanes16 rows in 16-bit cells (as forward(), in strips of at most strip16 columns, which the bound
    // allows for common scorings) while that many rows are left, else of `lanes` rows in 32-bit cells.
    constexpr std::int64_t strip32 = 2048, strip16 = 512;
    const int lanes16 = narrow_lanes(kernel, static_cast<int>(strip16));
    const auto most = static_cast<std::size_t>(std::max(kernel.lanes, lanes16));
    const std::size_t width = idx(std::min(cols, strip32)) + most;
    std::vector<int> hr(b.top_h.begin() + 1, b.top_h.end()), er(b.top_e), col_h(b.left_h), col_f(b.left_f);
    std::vector<int> profile(most * 32), hit_col(most, -1), row_code(most, -1), forbidden_cols;
    std::vector<std::uint8_t> steps(width * most);
    int diag_first = b.top_h[0];
    for (std::int64_t g0 = 0; g0 < rows;) {
        const bool narrow = lanes16 > 0 && rows - g0 >= lanes16;
        const int lanes = narrow ? lanes16 : kernel.lanes;
        const auto L = static_cast<std::size_t>(lanes);
        const std::int64_t strip = narrow ? strip16 : strip32;
        const int n = static_cast<int>(std::min<std::int64_t>(lanes, rows - g0));
        const rows::group rows_here = start_group(profile, row_code, area.r0 + g0, n, lanes);
        const int target_here = out.hit_i < 0 ? target : 0;
        std::int64_t first_hit_row = -1, first_hit_col = -1;  // in this group, over the strips
        int corner = diag_first;
        diag_first = col_h[idx(g0 + n - 1)];  // H[the group's last row][c0 - 1]: the next group's corner
        for (std::int64_t j0 = 0; j0 < cols; j0 += strip) {
            const std::int64_t w = std::min(strip, cols - j0);
            rows::group grp = rows_here;
            at_column(grp, area.c0 + j0);
            grp.w = static_cast<int>(w);
            grp.top_h = hr.data() + j0;
            grp.top_e = er.data() + j0;
            grp.corner = corner;
            grp.left_h = col_h.data() + g0;  // in: H left of the strip; out: H of its last column
            grp.left_f = col_f.data() + g0;
            grp.steps_out = steps.data();
            grp.target = target_here;
            grp.hit_col = hit_col.data();
            if (!narrow) mark_forbidden(grp, forbidden_cols, area.r0 + g0, area.c0 + j0, lanes);
            corner = hr[idx(j0 + w - 1)];  // H[g0 - 1][last column of the strip], before the kernel overwrites it
            if (narrow) kernel.run16(grp);
            else kernel.run(grp);
            // Cell (g0 + k, j0 + j) was computed at step j + k. g0 and the stride are even: rows k and k + 1 share
            // a byte.
            for (std::int64_t j = 0; j < w; ++j) {
                std::uint8_t* col = out.nibbles.data() + idx(((j0 + j) * out.stride + g0) / 2);
                const std::uint8_t* at = steps.data() + idx(j) * L;  // step j, lane 0
                for (int k = 0; k < n; k += 2) {
                    const std::size_t s0 = static_cast<std::size_t>(k) * (L + 1);  // step j + k, lane k
                    const std::uint8_t hi = k + 1 < n ? at[s0 + L + 1] : 0;
                    col[k / 2] = static_cast<std::uint8_t>(at[s0] | (hi << 4));
                }
            }
            if (target_here > 0)  // the first row of the group holding the target; the first column in that row
                for (int k = 0; k < n; ++k)
                    if (hit_col[idx(k)] >= 0) {
                        if (first_hit_row < 0 || k < first_hit_row) first_hit_row = k, first_hit_col = j0 + hit_col[idx(k)];
                        break;
                    }
        }
        if (first_hit_row >= 0) {
            out.hit_i = area.r0 + g0 + first_hit_row;
            out.hit_j = area.c0 + first_hit_col;
        }
        g0 += n;
    }
}

}  // namespace swgpu::long_pair
