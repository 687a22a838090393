// Long pairs: the exact Smith-Waterman-Gotoh alignment of two long sequences (up to chromosomes) in memory linear in
// their lengths, on any backend that can compute a rectangle of the matrix from its borders.
//
// Recurrence, end cell and traceback are those of core/align/smith_waterman.hpp (rows i = query, columns j = subject):
//   E[i][j] = max(E[i-1][j] - e, H[i-1][j] - oe)     F[i][j] = max(F[i][j-1] - e, H[i][j-1] - oe)
//   H[i][j] = max(0, H[i-1][j-1] + σ(q_i, s_j), E[i][j], F[i][j])
// The end cell is the first cell in row-major order whose H is the best score; the traceback from it prefers the
// diagonal over E over F, and closing a gap over extending it. The alignment found here is the one sw_align finds.
//
// The method (docs/long-pairs.md): everything is built from one backend operation, `forward`, which computes a
// rectangle from its borders and keeps a *grid*: every K-th row (H, and E of the row below) and every K-th column
// (H, and F of the column to the right), plus the maximum of each K x K block. Any block of the grid can then be
// recomputed on its own from the grid's rows and columns around it. A second operation, `trace`, computes a small
// rectangle completely and keeps a 4-bit trace per cell.
//   1. Score and end cell. forward() over the whole matrix with K chosen from the memory budget; the best score is
//      the largest block maximum. The end cell lies in the first block row holding a block whose maximum is the best
//      score; each such block is searched the same way, recursively (forward with a finer grid, or trace() once it is
//      small), and the first cell in row-major order wins.
//   2. Traceback. The walk starts at the end cell in the block that holds it. A block too large for trace() is
//      recomputed with a finer grid (only the part above and left of where the walk enters it: nothing right or
//      below can be on the path), and the walk goes through its sub-blocks; a small block is traced and walked. When
//      the walk leaves a block through its top or left edge it enters the neighbouring block in the same state (in a
//      diagonal run, a vertical gap or a horizontal gap), whose borders come from the same grid.
// Memory: the top grid holds about 16·m·n/K bytes (K from the budget); every finer level is bounded the same way.
// Work: the forward pass (m·n cells) plus, for the traceback, about K cells per path column at each level.
//
// Border conventions of a rectangle [r0, r1) x [c0, c1) (all values exact 32-bit integers):
//   top_h[j - c0 + 1] = H[r0-1][j] for j in [c0-1, c1)   (top_h[0] is the corner H[r0-1][c0-1])
//   top_e[j - c0]     = E[r0][j]   for j in [c0, c1)     (the vertical gap entering the first row)
//   left_h[i - r0]    = H[i][c0-1] for i in [r0, r1)
//   left_f[i - r0]    = F[i][c0]   for i in [r0, r1)     (the horizontal gap entering the first column)
// Outside the matrix H = 0, so the matrix's own borders are H = 0, E[0][j] = F[i][0] = -(o + e).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <span>
#include <utility>
#include <vector>

#include "core/uninitialized_allocator.hpp"
#include "core/align/alignment.hpp"
#include "core/align/scoring.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/thread_pool.hpp"

namespace swgpu::long_pair {

struct rect {
    std::int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
    std::int64_t rows() const { return r1 - r0; }
    std::int64_t cols() const { return c1 - c0; }
    double cells() const { return double(rows()) * double(cols()); }
};

struct borders {
    std::vector<int> top_h, top_e, left_h, left_f;  // sizes cols + 1, cols, rows, rows
    // The matrix's own borders for `area` (which must start at row 0 and column 0).
    static borders matrix_edge(const rect& area, const scoring& sc);
};

// The checkpoint rows and columns of a grid, wherever the backend keeps them (host or device memory).
//   row a (a < A-1), the last row of block row a:     H[row][j], E[row+1][j] for j in [c0, c1)
//   column b (b < B-1), the last column of column b:  H[i][col], F[i][col+1] for i in [r0, r1)
// Offsets are relative to the rectangle (j - c0, i - r0).
class grid_lines {
public:
    virtual ~grid_lines() = default;
    virtual void row(std::int64_t a, std::int64_t offset, std::int64_t count, int* h, int* e) const = 0;
    virtual void col(std::int64_t b, std::int64_t offset, std::int64_t count, int* h, int* f) const = 0;
};

// The same in host memory: x cols and (B-1) x rows arrays. Zero-filled, or with `filled` false left
// uninitialised for a writer that fills every line (the CPU's forward pass: its tiles write every line in parallel,
// where filling them first took one thread 0.28 s of a 200 kbp pair's 0.95 s on 16 threads).
class host_grid_lines final : public grid_lines {
public:
    host_grid_lines(std::int64_t A, std::int64_t B, std::int64_t rows, std::int64_t cols, bool filled = true);
    void row(std::int64_t a, std::int64_t offset, std::int64_t count, int* h, int* e) const override;
    void col(std::int64_t b, std::int64_t offset, std::int64_t count, int* h, int* f) const override;
    std::int64_t rows, cols;
    using line_vector = std::vector<int, uninitialized_allocator<int>>;
    line_vector row_h, row_e, col_h, col_f;
};

// What forward() keeps of a rectangle. Block (a, b) covers rows [r0 + a·K, min(r0 + (a+1)·K, r1)) and columns
// likewise; checkpoint row a (a < A-1) is the last row of block row a, checkpoint column b the last column of block
// column b.
struct grid {
    rect area;
    std::int64_t K = 0;
    std::int64_t A = 0, B = 0;           // block rows and columns
    std::shared_ptr<const grid_lines> lines;
    std::vector<int> block_max;          // A x B: the largest H of each block (0 when none is positive)
    int best() const;
    rect block(std::int64_t a, std::int64_t b) const;
    // The borders of block (a, b), from the grid and the rectangle's own borders.
    borders block_borders(std::int64_t a, std::int64_t b, const borders& outer) const;
};

// The 4-bit trace of a small rectangle, per cell (i, j):
//   bits 0-1  where H[i][j] comes from: 0 it is 0 (the walk stops), 1 the diagonal, 2 E, 3 F (first that matches)
//   bit 2     E[i+1][j] == H[i][j] - oe   (the vertical gap below opens here)
//   bit 3     F[i][j+1] == H[i][j] - oe   (the horizontal gap to the right opens here)
// stored column by column: cell (i, j) is nibble (j - c0)·stride + (i - r0), low nibble first in each byte.
struct trace {
    rect area;
    std::int64_t stride = 0;             // nibbles per column (even, >= rows)
    std::vector<std::uint8_t> nibbles;   // the nibbles, or empty when `shared` holds them
    // Nibbles in memory shared with other traces (a backend's batch buffer, released when the last trace goes).
    std::shared_ptr<const std::uint8_t> shared;
    const std::uint8_t* data() const { return nibbles.empty() ? shared.get() : nibbles.data(); }
    // With a target score: the first cell in row-major order whose H equals it, or (-1, -1).
    std::int64_t hit_i = -1, hit_j = -1;
    int at(std::int64_t i, std::int64_t j) const {
        const std::int64_t k = (j - area.c0) * stride + (i - area.r0);
        return (data()[static_cast<std::size_t>(k >> 1)] >> ((k & 1) * 4)) & 15;
    }
};

// How the forward passes of a long pair run on the GPU (--long-policy): bands of rows in a warp's registers with the
// cells along anti-diagonals inside each 32-column tile (the default), or the compensation method at warp level (a
// warp's lanes share each column; the vertical gap is a (max,+) weighted scan across the lanes, repaired per column).
// Both write the same grid, so the end cell and the traceback are the same (gpu/align/long_pair_kernels.cuh).
enum class policy { antidiagonal, compensation };

struct forbidden_pairs;

// A backend computes rectangles of one pair (query rows, subject columns) under one scoring.
class backend {
public:
    virtual ~backend() = default;
    // The grid of `area` from its borders, with spacing K (a multiple of spacing_multiple()).
    virtual void forward(const rect& area, const borders& b, std::int64_t K, grid& out) = 0;
    // The trace of `area` (at most leaf_cells() cells); target > 0 also finds the first cell scoring target.
    virtual void trace_rect(const rect& area, const borders& b, int target, trace& out) = 0;
    // The traces of whole blocks (a, b) of g (each at most leaf_cells() cells), their borders from g and `outer`
    // (the borders of g's rectangle). The walk asks for the block it needs and for the blocks it is likely to need
    // next, up to trace_batch() at once; this default traces them one by one.
    virtual void trace_blocks(const grid& g, const borders& outer,
                              std::span<const std::pair<std::int64_t, std::int64_t>> blocks, std::vector<trace>& out);
    virtual std::size_t trace_batch() const { return 1; }
    virtual std::int64_t spacing_multiple() const = 0;
    virtual double leaf_cells() const = 0;
    // Bytes the grids of one level may take.
    virtual std::size_t grid_budget() const = 0;
    // Optional: called from the calling thread with the fraction done (0..1) of a long forward pass, a few times a
    // second, and by align() with a fraction of -1 when the forward pass is over and the traceback starts.
    std::function<void(double fraction)> progress;

    // Sharing the device with other pairs' forward passes (run_batch). A backend that can share tells what a forward
    // pass over `area` takes in a batch of pairs with `batch_rows` query rows in all: `units` of the device's
    // `capacity`, in a `kind`. Passes of one kind run side by side while their units add up to at most the capacity,
    // and then always fit on the device together (on a GPU: blocks of one kernel shape, all resident at once);
    // passes of different kinds never run side by side. units == 0: the backend does not share its device.
    struct share_shape {
        std::size_t units = 0, capacity = 0;
        long long kind = 0;
    };
    virtual share_shape sharing(const rect& /*area*/, std::int64_t /*batch_rows*/) const { return {}; }
    // The next forward passes take at most `units` of the shape sharing(area, batch_rows) gave; share(0, 0) gives
    // the backend the whole device again.
    virtual void share(std::size_t /*units*/, std::int64_t /*batch_rows*/) {}
    // The method of the next forward passes, where the backend has more than one (the GPU's); the CPU has one.
    virtual void use_policy(policy /*p*/) {}
    // How many pairs' end cells and tracebacks run_batch may run at once on backends like this one (each pair on a
    // thread of its own, each backend with the whole device); the CPU's share one thread pool: one.
    virtual std::size_t concurrent_tracebacks() const { return 1; }
    // Forward passes and traces from now on take no diagonal step into a cell of `f` (nullptr: none), where the
    // backend can (several alignments per pair, align_more); false where it cannot.
    virtual bool forbid(std::shared_ptr<const forbidden_pairs> /*f*/) { return false; }
};

namespace rows {
struct group;          // core/align/simd/long_pair_rows.hpp
struct kernel_choice;
}

// Cells whose H may not come from the diagonal (several alignments per pair, align_more): the residue pairs that
// earlier alignments aligned, a path each. A path aligns each of its rows with at most one column.
struct forbidden_pairs {
    struct path {
        std::int64_t first_row = 0;
        std::vector<std::int64_t> col;  // col[i - first_row]: the column row i is aligned with, -1 where none
    };
    std::vector<path> paths;
    // The aligned pairs ('M' steps) of `a`.
    void add(const alignment& a);
};

// The CPU backend: squares of tiles (long.cpu_task_tiles per side), each as soon as the one above and the one to its
// left are done (long.cpu_schedule: or in anti-diagonal waves) on the pool's threads, rows of a tile in vector lanes
// (core/align/simd/long_pair_rows.hpp). lanes: 16, 8 or 4 forces that kernel where the CPU runs it (0: the widest). Leaves are
// traced by the same kernel; trace_batch: how many leaves the walk traces at once, a thread each (the one it needs
// and the next ones along its likely path, traced whole rather than the part the walk can reach: about 2.7 times
// the cells for a 30 kbp pair), 1 for one at a time; 0 picks the pool's size from 4 threads up, else 1.
class cpu_backend final : public backend {
public:
    cpu_backend(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc,
                thread_pool& pool, std::size_t grid_budget = std::size_t(1) << 30, double leaf_cells = double(1 << 20),
                int lanes = 0, std::size_t trace_batch = 0);
    void forward(const rect& area, const borders& b, std::int64_t K, grid& out) override;
    void trace_rect(const rect& area, const borders& b, int target, trace& out) override;
    // Leaves traced a thread each: the one the walk needs and the next ones along its likely path (one per thread).
    void trace_blocks(const grid& g, const borders& outer,
                      std::span<const std::pair<std::int64_t, std::int64_t>> blocks, std::vector<trace>& out) override;
    std::size_t trace_batch() const override { return batch_; }
    std::int64_t spacing_multiple() const override { return tile; }
    double leaf_cells() const override { return leaf_; }
    std::size_t grid_budget() const override { return budget_; }
    // In a batch (run_batch), a pass takes as many of the pool's threads as its widest wave of tiles can use, on a
    // pool of its own: pairs whose shorter side is a few tiles run side by side instead of leaving threads idle.
    share_shape sharing(const rect& area, std::int64_t batch_rows) const override;
    void share(std::size_t units, std::int64_t batch_rows) override;
    // Forward passes and traces from now on take no diagonal step into a cell of `f` (nullptr: none).
    bool forbid(std::shared_ptr<const forbidden_pairs> f) override {
        forbidden_ = std::move(f);
        return true;
    }
    static constexpr std::int64_t tile = 256;
    // The most tiles per side of one task of the forward pass (long.cpu_task_tiles).
    static constexpr std::int64_t max_task_tiles = 16;
    // The padding at each end of compact_rev_ and compact_rev16_: the most lanes of a group kernel.
    static constexpr std::int64_t rev_pad = 32;

private:
    // Points grp (rows [row0, row0 + grp.rows), columns [col0, col0 + grp.w)) at the forbidden cells among them,
    // listed in `buf`: lanes entries per path; none when no path crosses the group there.
    void mark_forbidden(rows::group& grp, std::vector<int>& buf, std::int64_t row0, std::int64_t col0, int lanes) const;
    // The forward pass in named steps (long_pair.cpp): its state, one tile given its corner, one task of tiles, and
    // how many tiles per side a task takes.
    struct forward_state;
    void forward_tile(forward_state& st, std::int64_t ti, std::int64_t tj, int corner) const;
    void forward_task(forward_state& st, std::int64_t I, std::int64_t J) const;
    void forward_task_tiles(forward_state& st, std::int64_t I, std::int64_t J) const;
    void forward_dataflow(forward_state& st);
    std::int64_t task_tiles(std::int64_t nti, std::int64_t ntj);
    std::shared_ptr<const forbidden_pairs> forbidden_;
    // A group of the query rows [row0, row0 + rows): how σ is found (the rows' letter codes where σ takes two values,
    // else `profile` filled for them, lanes x 32, rows past `rows` padded), the gaps and the row count; at_column
    // points it at the subject from column col0. The caller sets the rest.
    rows::group start_group(std::vector<int>& profile, std::vector<int>& codes, std::int64_t row0, int rows,
                            int lanes) const;
    void at_column(rows::group& grp, std::int64_t col0) const;
    // The group kernel of `lanes_` rows (else the best this CPU runs), and the rows of its 16-bit groups for groups of
    // up to `width` columns: kernel.lanes16 where 16-bit cells are exact and worth it (σ by comparisons: a subject of
    // compact codes; no forbidden cells; rows::narrow_fits; long.cpu_narrow), else 0.
    rows::kernel_choice kernel() const;
    int narrow_lanes(const rows::kernel_choice& kernel, int width) const;
    std::span<const std::uint8_t> q_, s_;
    // The subject in compact codes, when it has at most rows::max_select_letters16 letters.
    std::vector<std::uint8_t> compact_, letter_code_;
    std::vector<int> compact_rev_;  // the same reversed, 32 bits each, with rev_pad codes of padding at both ends (rows::group)
    std::vector<std::int16_t> compact_rev16_;  // the same, 16 bits each (the 16-bit cells)
    // With compact codes, when σ on the query's and the subject's letters is match on equal letters and mismatch
    // elsewhere: each query letter's compact code (-1: not a subject letter), indexed by letter; else empty.
    std::vector<int> row_code_;
    int match_ = 0, mismatch_ = 0;
    const scoring& sc_;
    thread_pool& pool_;
    std::unique_ptr<thread_pool> own_pool_;  // while shared
    thread_pool& threads() { return own_pool_ ? *own_pool_ : pool_; }
    std::size_t budget_;
    double leaf_;
    int lanes_;
    std::size_t batch_;
};

// Where the time of align() went (for -v and benchmarks).
struct timing {
    double forward_s = 0;     // the first forward pass over the whole matrix
    double end_s = 0;         // finding the end cell in the blocks that hold the best score
    double traceback_s = 0;
    double cells_recomputed = 0;  // cells of forward() and trace() calls after the first
    std::size_t forward_calls = 0, trace_calls = 0;  // after the first forward pass
    double recompute_s = 0, trace_s = 0, borders_s = 0;  // in those calls, and fetching block borders
};

// Score and end cell (the same as sw_score).
sw_end score(backend& be, std::int64_t m, std::int64_t n, const scoring& sc, timing* t = nullptr);
// The alignment sw_align gives.
alignment align(backend& be, std::int64_t m, std::int64_t n, const scoring& sc, timing* t = nullptr);

// Several local alignments of one pair in linear memory (`--max-hsps` for pairs too large for core/align/hsps.hpp's
// matrices): after `first` (the pair's best alignment, as align() finds it), the best alignment that aligns no residue
// pair an earlier one aligned, and so on, while they score at least min_score, at most max_hsps in all (first
// included). Each is align()'s with the earlier alignments' pairs as forbidden diagonal steps, so it equals
// sw_align_hsps's (core/align/hsps.hpp) exactly. Cost: a forward pass and a traceback per further alignment, from the
// third on over the rows from where the last one found begins. progress(k, fraction): the search for alignment k
// (1-based) with its forward pass's fraction done, -1 when it traces back. enough(found): called with the alignments
// found so far (first included) before each further search; true stops there. `make`, when given, makes the backend
// of those passes (one for all of them: a GPU's); where it gives none or one that cannot forbid steps, the CPU's
// over `pool` (a new one per alignment, with grid_budget, leaf_cells and lanes).
std::vector<alignment> align_more(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                  const scoring& sc, thread_pool& pool, alignment first, int max_hsps, int min_score,
                                  std::size_t grid_budget = std::size_t(1) << 30, double leaf_cells = double(1 << 20),
                                  int lanes = 0, const std::function<void(int k, double fraction)>& progress = {},
                                  const std::function<bool(const std::vector<alignment>& found)>& enough = {},
                                  const std::function<std::unique_ptr<backend>()>& make = {});

// Several pairs at once (contigs or genes against a genome, both strands of a pair): the first forward pass of each
// pair (its m·n cells) runs side by side with the others' where the backends share their device (backend::sharing:
// a pair whose shorter side is a few thousand residues has too few bands to fill a GPU on its own), each on a part
// of the device, largest pairs first; the end cells and tracebacks then run one pair after the other with the whole
// device. Backends that do not share run their pairs one after the other. Each result is the one align() gives
// (with `traceback`), or score() (its score field alone, without). A pair's backend is made when its pass starts
// (`make`) and, without traceback, released when it ends.
struct batch_pair {
    std::function<std::unique_ptr<backend>()> make;
    std::int64_t m = 0, n = 0;
};
std::vector<alignment> run_batch(std::span<const batch_pair> pairs, const scoring& sc, bool traceback);

// The faster policy for a pair of `cells` cells by the measurements in data/long_pair_policy.tsv (compiled in): the
// row nearest to `cells` (on a log scale) with both policies measured; antidiagonal when there is none.
policy fastest_policy(double cells);

// Spacing of a grid over `area` that fits `budget` bytes: a multiple of `multiple`, at least `min_spacing`.
std::int64_t spacing_for(const rect& area, std::size_t budget, std::int64_t multiple, std::int64_t min_spacing);

}  // namespace swgpu::long_pair
