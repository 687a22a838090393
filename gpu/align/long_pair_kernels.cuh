// Long pairs on the GPU: the rectangle operations of core/align/long_pair/long_pair.hpp (forward with a grid, trace of a leaf) as one
// kernel of persistent warps, each warp a band of rows, bands handing their bottom rows to the next band through
// rings in L2 with per-warp progress counters (the engine's tiled P2P schedule with tiles of one band x 32 columns).
//
// Why the default keeps the anti-diagonal method rather than the engine's weighted scan (gpu/engine/weighted_scan.cuh):
// the engine's tiled P2P with the compensation (max,+) scan of the horizontal gap makes two passes over every row of a
// tile with a block-wide scan per row where these bands make one pass with one shuffle per 32 cells per lane: on the
// H100 it ran at 21.1 / 53.6 / 96.0 GCUPS against 94.4 / 300.2 / 752.8 for the bands (32 k, 100 k and 300 kbp pairs,
// score pass, docs/performance.md). The compensation method at warp level is a kind of this kernel (forward_comp,
// column_cells_comp: the lanes of a band on one column, the vertical gap by a shuffle scan; --long-policy
// compensation, entries 6-8 of long.entry): 1.43 against 2.05 TCUPS at 1 Mbp on the H200, 0.56-0.63x at 32-300 kbp,
// so `auto` takes the bands (two bands per warp, measured for both kinds, was slower: docs/performance.md). What the
// kernels share with the engine: the compensation kind's vertical gap is the engine's descending (max,+) algebra
// (gpu/engine/scan_algebra.cuh) and its warp scan (warp_inclusive_scan, gpu/engine/warp_ops.cuh, the warp level of
// the engine's block scan); the flags (gpu/flags.cuh: acquire/release counters and the bounded spin)
// and the counters a 128-byte line apart (as the look-back's statuses).
//
// Orientation and cells (as the database kernels, gpu/align/search_kernels.cuh; the cell code is theirs, gpu/align/sw_cells.cuh): rows i are
// query residues, columns j subject residues. A band is S = 32·R consecutive rows; lane t of the warp holds rows
// [band·S + t·R, +R) in registers (H and F of each) and at step k computes column j = k - t, so lane t is one column
// behind lane t-1 (skew 1). Between lanes, H of the last row and E entering the next row move by warp shuffle every
// step. A step of a lane is R cells: 6.5 DPX instructions each in the forward kernel (row_cells).
//
// Between bands. Warp w of NW persistent warps takes bands w, w + NW, w + 2·NW, ... (generation g = band / NW). Band b
// reads its top border (H of the row above, E entering its first row) for every column from
//   - the rectangle's top border (band 0),
//   - row_buffer (warp 0 in generation g > 0: written by warp NW-1 in generation g-1, one full row),
//   - ring[w-1] (any other warp: written by warp w-1 in the same generation, ring_len columns deep),
// and writes its bottom row the same way for band b + 1. Columns are numbered across generations (sequence number
// g·cols + j), so a ring slot is s mod ring_len and every counter only grows.
//
// Synchronization protocol (per 32-column chunk, lane 0 of each warp does the waiting and publishing):
//   consumer: waits until produced[w-1] (or row_ready) >= base + end of the chunk (ld.acquire.gpu); the warp loads
//             the chunk's 32 inputs into shared memory; __syncwarp; every 8th chunk and at the band's end lane 0
//             st.release consumed[w-1] = base + end (the ring is 32 chunks deep, so handing slots back late costs no
//             wait).
//   producer: lane 31's outputs of the chunk's steps are staged in shared memory; lane 0 waits until consumed[w]
//             shows the slots are free (s - ring_len consumed); the warp stores the 32 entries (st.global.cg);
//             __syncwarp (which orders the lanes' stores before lane 0's next operations); lane 0 st.release
//             produced[w] = base + columns written (release is cumulative: it publishes the other lanes' stores).
//   Lane 0 keeps the last value it read of each counter and reads again only when that value does not suffice.
// Every counter sits in a 128-byte line of its own. Waits are bounded (spin_backoff traps after 20 s). All NW warps
// are resident at once (NW is the occupancy bound or less), and every wait is for a warp of an earlier band, or, for
// ring space, for the next band, which depends only on earlier bands: no wait can close a cycle.
//
// Outputs. forward: checkpoint row a (the last row of block row a) is the bottom row of the band that ends there
// (K is a multiple of S) and is stored while it is handed on; checkpoint column b is stored by each lane when it
// passes column (b+1)·K - 1 (H, and F of the next column, of its R rows); each lane folds the maximum of its cells
// into block_max with one atomicMax per block column. trace: each lane stores the R nibbles of its column per step;
// a cell scoring `target` lowers first_hit = (row << 32 | column) with atomicMin (row-major order).
//
// Entries: forward kernels for R = 32, 16, 8 (bands of 1024, 512, 256 rows) and two cell codes, the compensation
// method's (6-8) and 16-bit cells (9: narrow_cells, bands of 1024 rows, 0.91x the 32-bit cells on the H100, so not the
// default there); a rectangle takes bands of 1024 rows unless it has too few of them to fill the GPU (see
// forward_entry). Leaves of the traceback are
// traced many per launch (band_batch_kernel: each rectangle its own warps, rings and counters). A long forward pass
// counts its chunks in device memory, read by a copy on another stream while it runs (progress).
//
// This header is the kernels' and device functions' home, included by gpu/align/long_pair.cu alone (they sit in that
// file's anonymous namespace); the backends on one and several devices are gpu/align/long_pair.cu and
// gpu/align/long_pair_multi.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gpu/flags.cuh"
#include "gpu/align/sw_cells.cuh"
#include "gpu/engine/scan_algebra.cuh"
#include "gpu/engine/warp_ops.cuh"

namespace swgpu::gpu {

namespace {

constexpr int warp_size = 32;
constexpr int flag_stride = 16;        // 64-bit counters per 128-byte line
constexpr int pad_score = -(1 << 24);  // σ of rows below the rectangle (never read back)
constexpr int trace_rows = 4;          // R of the trace kernel: bands of 128 rows
constexpr int max_forward_rows = 32;   // grid spacings are multiples of every forward entry's band
constexpr int max_warps_per_block = 4;
constexpr long long ring_len = 1024;   // columns per ring (power of two)
constexpr int forbid_score = -(1 << 29);  // σ of a forbidden diagonal step: H takes max(0, E, F) there

struct band_params {
    const std::uint8_t* query;    // codes of rows r0 .. r1-1
    const std::uint8_t* subject;  // compact codes of columns c0 .. c1-1
    long long rows, cols;
    const int* top_h;             // cols + 1 (corner first)
    const int* top_e;             // cols
    const int* left_h;            // rows
    const int* left_f;            // rows
    const int* sigma;             // [query code * 32 + compact subject letter]
    int letters;
    int gap_oe, gap_e;
    int comp_level[5], comp_decay[5];  // the compensation method: -2^k·e, -2^d·R·e (R: rows per lane)
    long long bands;
    int warps;                    // NW
    int2* ring;                   // NW x ring_len
    unsigned long long* produced; // NW lines
    unsigned long long* consumed; // NW lines
    int2* row_buffer;             // cols
    unsigned long long* row_ready;
    // forward
    long long K, B;
    int* row_h;
    int* row_e;
    int* col_h;
    int* col_f;
    int* block_max;
    unsigned long long* done_chunks;  // optional: chunks of 32 columns done, over all bands (progress)
    // trace
    std::uint8_t* trace;
    long long stride;             // nibbles per column
    int target;
    unsigned long long* first_hit;
    // A forward pass split by columns over devices (multi_gpu_backend): the left border comes from the part to the
    // left band by band (left_h/left_f in memory every device reaches; left_ready[band] != 0 once that band's rows are
    // there), and this part's right border (H of its last column, F entering the next) goes out the same way.
    const unsigned* left_ready;
    int* right_h;
    int* right_f;
    unsigned* right_ready;
    // A forward pass split by rows into slabs (multi_gpu_backend::forward_rows): band 0's top border (H and E of the
    // row above, for every column) streams in from the slab above, top_ready counting the columns there, and the last
    // band's bottom row streams out the same way to the slab below (memory every device reaches, system scope).
    const int* top_in_h;
    const int* top_in_e;
    const unsigned long long* top_ready;
    int* bottom_h;
    int* bottom_e;
    unsigned long long* bottom_ready;
    // Forbidden diagonal steps (further alignments of a pair, long_pair::align_more: the residue pairs earlier
    // alignments aligned), the kernels' Forbid kinds only: the lane holding rows [g·R, g·R + R) of the rectangle (g =
    // its row / R over every band's 32 lanes) finds its cells as events forbid_events[forbid_first[g] ..
    // forbid_first[g + 1]): (column, mask of its R rows), in increasing columns.
    const long long* forbid_first;
    const int2* forbid_events;
};

__device__ __forceinline__ void wait_flag_sys(const unsigned* p) {
    unsigned spins = 0;
    std::uint64_t since = 0;
    while (load_acquire_sys(p) == 0) spin_backoff(spins, since);
}

// Waits until *p >= need, reading it with `load` (an acquire at device or system scope). `seen` caches the last value
// read: a counter only grows, so a wait that the cached value already satisfies costs no load (the acquire that read
// it ordered everything up to that value).
template <class Load>
__device__ __forceinline__ void wait_until(const unsigned long long* p, unsigned long long need,
                                           unsigned long long& seen, Load load) {
    if (seen >= need) return;
    unsigned spins = 0;
    std::uint64_t since = 0;
    while ((seen = load(p)) < need) spin_backoff(spins, since);
}
__device__ __forceinline__ void wait_at_least(const unsigned long long* p, unsigned long long need,
                                              unsigned long long& seen) {
    wait_until(p, need, seen, [](const unsigned long long* q) { return load_acquire(q); });
}
// The same on a counter another device raises.
__device__ __forceinline__ void wait_at_least_sys(const unsigned long long* p, unsigned long long need,
                                                  unsigned long long& seen) {
    wait_until(p, need, seen, [](const unsigned long long* q) { return load_acquire_sys(q); });
}

// Kernel kinds: the forward pass with row_cells (6.5 instructions per cell) or row_cells_h (5.5), the trace, the
// forward pass of one part of a pass split over devices (row_cells; waits for its left border and publishes its right
// border band by band: a kind of its own, so that the other kernels carry none of it), the forward pass by the
// compensation method (column_cells_comp: the lanes of a band on one column, the vertical gap by a warp scan), and the
// forward pass in 16-bit cells (narrow_cells: two cells per word, see below).
enum band_kind : int { forward_x = 0, forward_h = 1, trace_kind = 2, forward_split = 3, forward_comp = 4,
                       forward_narrow = 5 };

// Columns from a band's first cell to its last at one step: lane t computes column k - t at step k (the 16-bit kind:
// 64 virtual lanes; the compensation method: every lane on column k). The kernels' skew and the host's progress count.
constexpr int band_lag(int kind) {
    return kind == forward_comp ? 0 : kind == forward_narrow ? 2 * warp_size - 1 : warp_size - 1;
}

// The 16-bit kind keeps σ in registers: no profile in shared memory.
template <int R, int Kind = forward_x>
constexpr int profile_words(int letters) {
    return Kind == forward_narrow ? 0 : letters * kernels::chunk_row_words(warp_size, R);
}
// Shared memory of one warp: its band's profile, then 32 staged inputs and 32 staged outputs (int2 each), then the
// 64 subject letters a chunk of 32 steps reads (columns k0 - 31 .. k0 + 32; the 16-bit kind: 96, from k0 - 63, then
// the 64 byte-permutation selectors of its steps).
template <int R, int Kind = forward_x>
constexpr std::size_t warp_smem_words(int letters) {
    return static_cast<std::size_t>(profile_words<R, Kind>(letters)) + 4 * warp_size +
           (Kind == forward_narrow ? 24 + 2 * warp_size : 16);
}

// One step of a lane in the trace kernel: R cells of column j, with their nibbles (see core/align/long_pair/long_pair.hpp).
template <int R>
__device__ __forceinline__ unsigned trace_cells(const std::uint32_t* prof, int diag, int& e, int (&h)[R], int (&f)[R],
                                                int oe, int ext, int target, long long row_first, long long rows,
                                                long long j, unsigned long long* first_hit) {
    unsigned bits = 0;
#pragma unroll
    for (int c = 0; c < R; ++c) {
        const int d = diag + static_cast<int>(prof[c]);
        diag = h[c];
        const int hv = max(max(d, 0), max(e, f[c]));
        const int src = hv == 0 ? 0 : hv == d ? 1 : hv == e ? 2 : 3;
        const int en = max(e - ext, hv - oe), fn = max(f[c] - ext, hv - oe);
        bits |= static_cast<unsigned>(src | (en == hv - oe ? 4 : 0) | (fn == hv - oe ? 8 : 0)) << (4 * c);
        if (hv == target && row_first + c < rows)
            atomicMin(first_hit, (static_cast<unsigned long long>(row_first + c) << 32) |
                                     static_cast<unsigned long long>(j));
        h[c] = hv;
        e = en;
        f[c] = fn;
    }
    return bits;
}

// The forward step with H feeding both gaps (5.5 DPX instructions per cell instead of row_cells' 6.5, at the price
// of a longer dependency from one row to the next: E -> H -> H - oe -> E'):
//   x = max(H[i-1][j-1] + σ, F, 0); H = max(x, E); g = H - oe; E' = max(E - e, g); F' = max(F - e, g).
template <int R>
__device__ __forceinline__ void row_cells_h(const std::uint32_t* __restrict__ prof, std::uint32_t diag, std::uint32_t& e,
                                            std::uint32_t (&h)[R], std::uint32_t (&f)[R], std::uint32_t& m,
                                            std::uint32_t neg_oe, std::uint32_t neg_e) {
    using L = kernels::lanes_s32;
    std::uint32_t sc[R];
#pragma unroll
    for (int c4 = 0; c4 < R; c4 += 4) {
        const uint4 v = *reinterpret_cast<const uint4*>(prof + c4);
        sc[c4] = v.x, sc[c4 + 1] = v.y, sc[c4 + 2] = v.z, sc[c4 + 3] = v.w;
    }
    std::uint32_t previous = 0;
#pragma unroll
    for (int c = 0; c < R; ++c) {
        const std::uint32_t x = static_cast<std::uint32_t>(__viaddmax_s32_relu(
            static_cast<int>(diag), static_cast<int>(sc[c]), static_cast<int>(f[c])));
        diag = h[c];
        const std::uint32_t hv = L::max2(x, e);
        const std::uint32_t g = L::add(hv, neg_oe);
        e = L::addmax(e, neg_e, g);
        f[c] = L::addmax(f[c], neg_e, g);
        h[c] = hv;
        if (c & 1) m = L::max3(m, previous, x);
        else if (c == R - 1) m = L::max2(m, x);
        previous = x;
    }
}

// One column of a band by the compensation method: every lane on the same column j (no skew between lanes), the
// vertical gap's recurrence down the band's 32·R rows solved as a (max,+) weighted scan instead of a chain through the
// lanes. With E'' = E + oe, the recurrence E[r+1] = max(E[r] - e, H[r] - oe), H[r] = max(x[r], E[r]) is
//   E''[r+1] = max(E''[r] - e, x[r])       (E'' - oe <= E'' - e, so H's gap term drops out),
// a (max,+) map with the same weight -e in every row, so any run of w rows composes to "decay w·e, then max with the
// run's own E''" (its E'' leaving with nothing entering: max over its rows r of x[r] - (rows after r)·e).
//   pass 1: x = max(diag + σ, F, 0) per cell (one VIADDMNMX.RELU), then the runs' own E'' by a tree over the lane's R
//           cells (R - 1 VIADDMNMX, depth log2 R; runs of 8 are kept);
//   scan:   the lanes' maps by 5 shuffles and VIADDMNMX with decays R·e·2^d: E'' entering each lane;
//   pass 2: E'' entering each run of 8 from the runs before it (one VIADDMNMX a run), then per cell H = max(E'' - oe,
//           x) and E'' on (one VIADDMNMX each), F' = max(F - e, H - oe) (an add and a VIADDMNMX) and the running
//           maximum of x (half a VIMNMX3), in R/8 independent chains of 8.
// 6.5 DPX instructions per cell as row_cells, plus about 12 per lane and column for the scan and the shuffles (the
// bands: 2 shuffles); the longest chain per column is about 5 + 10 + R/8 + 8·2 instructions instead of the bands' R.
// `diag` enters as H of the row above the lane's first row at column j - 1; `e` as E entering the band's first row at
// column j (lane 0's), and leaves as E entering the row below the lane's last row. The cells are row_cells' (same H,
// E, F): the grids are the bands' bit for bit. `level[k]` = -2^k·e, `decay[d]` = -2^d·R·e.
template <int R>
__device__ __forceinline__ void column_cells_comp(const std::uint32_t* __restrict__ prof, std::uint32_t diag,
                                                  std::uint32_t& e, std::uint32_t (&h)[R], std::uint32_t (&f)[R],
                                                  std::uint32_t& m, int oe, const int (&level)[5], const int (&decay)[5],
                                                  int lane) {
    static_assert(R % 8 == 0, "runs of 8 cells");
    constexpr int runs = R / 8;
    // The engine's descending (max,+) algebra (gpu/engine/scan_algebra.cuh): combine(a, b, p) = max(a + p, b), one
    // VIADDMNMX, with the weight -e of one row.
    using algebra = descending_max_plus_algebra<int>;
    algebra alg{};
    alg.w = level[0];
    std::uint32_t sc[R];
#pragma unroll
    for (int c4 = 0; c4 < R; c4 += 4) {
        const uint4 v = *reinterpret_cast<const uint4*>(prof + c4);
        sc[c4] = v.x, sc[c4 + 1] = v.y, sc[c4 + 2] = v.z, sc[c4 + 3] = v.w;
    }
    int x[R], t[R];
#pragma unroll
    for (int c = 0; c < R; ++c) {
        x[c] = __viaddmax_s32_relu(static_cast<int>(diag), static_cast<int>(sc[c]), static_cast<int>(f[c]));
        diag = h[c];
        t[c] = x[c];
    }
    int run_own[runs];  // own E'' of each run of 8 cells
#pragma unroll
    for (int k = 0, w = 1; w < R; ++k, w *= 2) {
#pragma unroll
        for (int c = 0; c < R; c += 2 * w) t[c] = alg.combine(t[c], t[c + w], level[k]);
        if (2 * w == 8) {
#pragma unroll
            for (int r = 0; r < runs; ++r) run_own[r] = t[8 * r];
        }
    }
    const int top = static_cast<int>(e) + oe;
    int wv[1] = {lane == 0 ? alg.combine(top, t[0], decay[0]) : t[0]};  // lane 0's run entered from above the band
    warp_inclusive_scan<algebra, 1, true>(alg, wv, decay, lane);          // the engine's warp scan
    const int up = scan_detail::shfl_up(wv[0], 1);
    int en[runs];
    en[0] = lane == 0 ? top : up;
#pragma unroll
    for (int r = 1; r < runs; ++r) en[r] = alg.combine(en[r - 1], run_own[r - 1], level[3]);
    int mi = static_cast<int>(m);
#pragma unroll
    for (int r = 0; r < runs; ++r) {
        int ev = en[r];
#pragma unroll
        for (int c = 8 * r; c < 8 * r + 8; ++c) {
            const int hv = __viaddmax_s32(ev, -oe, x[c]);
            ev = alg.step(x[c], ev);  // E'' one row on
            f[c] = static_cast<std::uint32_t>(__viaddmax_s32(static_cast<int>(f[c]), level[0], hv - oe));
            h[c] = static_cast<std::uint32_t>(hv);
            if (c & 1) mi = __vimax3_s32(mi, x[c - 1], x[c]);
        }
        if (r == runs - 1) e = static_cast<std::uint32_t>(ev - oe);
    }
    m = static_cast<std::uint32_t>(mi);
}

// The forward pass in 16-bit cells (forward_narrow; section 3 of the design: past 32 bits of work per cell). Each word
// holds two cells (s16x2 DPX instructions), so a lane computes 32 cells per step with the instructions row_cells
// spends on 16. The two halves of a word must be independent: lane t holds rows [t·16, +16) of the band in the low
// halves ("virtual lane" t) and rows [512 + t·16, +16) in the high halves (virtual lane t + 32), so a warp is 64
// virtual lanes of 16 rows, skewed by one column each (virtual lane v computes column k - v at step k): a band of
// 1024 rows, as the 32-bit entry 0, but 63 columns from its first cell to its last. Virtual lane 32 reads from virtual
// lane 31 (lane 31's low halves, rotated into lane 0's high halves by the same shuffle that moves the rest).
//
// Exact in 16 bits: values are stored relative to a base per virtual lane. Neighbouring H differ by at most
// δ = max(σ) + oe (H ≥ E ≥ H above - oe, and by induction over the columns H - H above ≤ σmax + oe; the same across),
// and E, F lie between the neighbouring H - oe and H. At the start of every chunk of 32 steps each virtual lane moves
// its base to H of its first row (its h[0]) less 16384, or to 0 where that is negative, so everything it touches in
// the chunk (17 rows, 33 columns, within about 50·δ + oe of that H) lies in [-oe, 16384 + 50·δ + oe] relative to the
// base, and H >= 0 is H_rel >= 0 either way (base 0: the same; base > 0: every H of the chunk is positive): the floor
// is the DPX instructions' RELU. The bases of neighbouring virtual lanes lie within about 17·δ of each other: values
// cross from one virtual lane to the next with the difference of their bases added (one VIADD.16x2 per value and
// step). The host takes this kind only where 80·δ + 2·oe + 256 < 16384 and the subject has at most 4 letters: σ of a
// word is one PRMT from two registers holding the 4 scores (bytes: the scoring allows -127..127) of the two rows'
// query letters. Conversions from absolute values (borders) saturate at -32768, exact for a value below all it meets.
// Rows past the rectangle (the last band) get σ = -128 and stay out of the running maximum.
constexpr int narrow_rows = 16;       // rows per virtual lane (R / 2 of its entry, R = 32)
constexpr int narrow_offset = 16384;  // a base is H of the virtual lane's first row less this, or 0

__device__ __forceinline__ int half_lo(std::uint32_t w) { return static_cast<int>(static_cast<std::int16_t>(w & 0xffffu)); }
__device__ __forceinline__ int half_hi(std::uint32_t w) { return static_cast<int>(w) >> 16; }
__device__ __forceinline__ std::uint32_t halves(int lo, int hi) {
    return (static_cast<std::uint32_t>(lo) & 0xffffu) | (static_cast<std::uint32_t>(hi) << 16);
}
__device__ __forceinline__ int clamp16(int v) { return min(max(v, -32768), 32767); }
// PRMT in its default mode: a selector nibble with bit 3 set replicates the sign of the byte it names.
__device__ __forceinline__ std::uint32_t byte_perm_signed(std::uint32_t a, std::uint32_t b, std::uint32_t sel) {
    std::uint32_t d;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
    return d;
}

// One step of a lane in 16-bit cells: two cells per word, in the order of row_cells_h with E carried as
// E2 = E + oe (whose update is then one VIADDMNMX, as in column_cells_comp):
//   x = max(H↖ + σ, F, 0); H = max(E2 - oe, x); F' = max(F - e, H - oe); E2' = max(E2 - e, x).
// Values are relative to bases chosen so that H >= 0 is H_rel >= 0 (see above): RELU is the floor.
// sa[c] holds σ of row c's low-half query letter against subject letters 0-3 (a byte each), sb[c] the high half's;
// `sel` picks the step's two subject letters with sign extension (PRMT). With Edge, halves outside the rectangle's
// columns (cm: 0xffff per valid half) keep their H and F, and rows past the rectangle (c >= nv_lo / nv_hi) stay out
// of the running maximum. Per word: a PRMT, 4.5 DPX instructions and one add (3 per cell).
template <int NR, bool Edge>
__device__ __forceinline__ void narrow_cells(const std::uint32_t (&sa)[NR], const std::uint32_t (&sb)[NR],
                                             std::uint32_t sel, std::uint32_t diag, std::uint32_t& e2,
                                             std::uint32_t (&h)[NR], std::uint32_t (&f)[NR],
                                             std::uint32_t& m, std::uint32_t neg_oe, std::uint32_t neg_e,
                                             std::uint32_t cm, int nv_lo, int nv_hi) {
    std::uint32_t previous = 0;
#pragma unroll
    for (int c = 0; c < NR; ++c) {
        const std::uint32_t sigma = byte_perm_signed(sa[c], sb[c], sel);
        std::uint32_t x = __viaddmax_s16x2_relu(diag, sigma, f[c]);
        diag = h[c];
        const std::uint32_t hv = __viaddmax_s16x2(e2, neg_oe, x);
        e2 = __viaddmax_s16x2(e2, neg_e, x);
        const std::uint32_t fv = __viaddmax_s16x2(f[c], neg_e, __vadd2(hv, neg_oe));
        if constexpr (Edge) {
            const std::uint32_t keep = cm & ((c < nv_lo ? 0xffffu : 0u) | (c < nv_hi ? 0xffff0000u : 0u));
            h[c] = (hv & cm) | (h[c] & ~cm);
            f[c] = (fv & cm) | (f[c] & ~cm);
            x = (x & keep) | (0x80008000u & ~keep);
        } else {
            h[c] = hv;
            f[c] = fv;
        }
        if (c & 1) m = __vimax3_s16x2(m, previous, x);
        previous = x;
    }
}

// The bands of one rectangle, for the warp with index gw among p.warps (wib: its index in the block). Forbid (the
// forward and trace kinds only): the cells of p.forbid_events take no diagonal step; a step that holds one computes
// its cells from a copy of the profile with forbid_score in those rows (the other steps are the kind's own).
template <int R, int Kind, bool Forbid = false>
__device__ __forceinline__ void run_bands(const band_params& p, int gw, int wib) {
    constexpr bool Trace = Kind == trace_kind;
    constexpr bool Split = Kind == forward_split;
    constexpr bool Comp = Kind == forward_comp;
    constexpr bool Narrow = Kind == forward_narrow;
    // The default kind's chunk loop (forward_x without forbidden steps): the subject letters of a chunk loaded during
    // the chunk before, and chunks whose columns need no check (inside the rectangle, no checkpoint or block end)
    // stepped without any; with 8 rows per lane also each step's substitution scores loaded one step ahead (with 32
    // rows the registers, 128 -> 198, cost more warps than the loads save). docs/performance.md has the numbers.
    constexpr bool Ahead = Kind == forward_x && !Forbid;
    constexpr bool ScoresAhead = Ahead && R == 8;
    static_assert(!Forbid || Kind == forward_x || Kind == trace_kind, "forbidden steps: the forward and trace kinds");
    constexpr int lag = band_lag(Kind);
    constexpr int S = warp_size * R;
    constexpr int stripe = kernels::chunk_stripe_words(R);
    constexpr int row_words = kernels::chunk_row_words(warp_size, R);
    extern __shared__ uint4 smem_storage[];
    const int lane = threadIdx.x & 31;
    std::uint32_t* prof = reinterpret_cast<std::uint32_t*>(smem_storage) + wib * warp_smem_words<R, Kind>(p.letters);
    int2* stage_in = reinterpret_cast<int2*>(prof + profile_words<R, Kind>(p.letters));
    int2* stage_out = stage_in + warp_size;
    std::uint8_t* stage_letters = reinterpret_cast<std::uint8_t*>(stage_out + warp_size);
    const long long rows = p.rows, cols = p.cols;
    const int oe = p.gap_oe, ext = p.gap_e;
    const std::uint32_t neg_oe = static_cast<std::uint32_t>(-oe), neg_e = static_cast<std::uint32_t>(-ext);
    // The compensation method's weights (runs of 2^k rows, 2^d lanes of R rows) come from the host: computed here as
    // multiples of ext, the compiler split each max(a - 2^k·ext, b) of the tree and the scan into a multiply-add and
    // a max (about 25 instructions more per lane and column at R = 32, docs/performance.md).
    int level[5], decay[5];
#pragma unroll
    for (int d = 0; d < 5; ++d) level[d] = p.comp_level[d], decay[d] = p.comp_decay[d];

    long long gen = 0;
    for (long long band = gw; band < p.bands; band += p.warps, ++gen) {
        const long long row0 = band * S, my_row = row0 + lane * R;
        __syncwarp();
        for (int idx = lane; !Narrow && idx < p.letters * S; idx += warp_size) {
            const int x = idx / S, r = idx - x * S;
            const long long row = row0 + r;
            prof[x * row_words + (r / R) * stripe + (r % R)] =
                static_cast<std::uint32_t>(row < rows ? p.sigma[p.query[row] * 32 + x] : pad_score);
        }
        __syncwarp();

        // Where the top border comes from and where the bottom row goes.
        const bool from_top = band == 0, from_row = !from_top && gw == 0;
        const int2* in_ring = !from_top && !from_row ? p.ring + (gw - 1) * ring_len : nullptr;
        const unsigned long long* in_flag =
            from_row ? p.row_ready : in_ring ? p.produced + (gw - 1) * flag_stride : nullptr;
        unsigned long long* in_consumed = in_ring ? p.consumed + (gw - 1) * flag_stride : nullptr;
        const unsigned long long base = static_cast<unsigned long long>(gen) * cols;
        const bool has_next = band + 1 < p.bands;
        const bool to_row = has_next && gw == p.warps - 1;
        int2* out_ring = has_next && !to_row ? p.ring + gw * ring_len : nullptr;
        unsigned long long* out_flag = to_row ? p.row_ready : out_ring ? p.produced + gw * flag_stride : nullptr;
        const unsigned long long* out_consumed = out_ring ? p.consumed + gw * flag_stride : nullptr;
        const unsigned long long out_base = to_row ? base + cols : base;
        // Slabs of a split by rows: band 0 reads the slab above's bottom row as it comes, the last band hands its own
        // to the slab below.
        const bool top_streamed = Split && from_top && p.top_ready != nullptr;
        const bool to_slab = Split && !has_next && p.bottom_ready != nullptr;
        long long ck_row = -1;
        if (!Trace && (row0 + S) % p.K == 0 && row0 + S < rows) ck_row = (row0 + S) / p.K - 1;

        using cell_t = std::conditional_t<Trace, int, std::uint32_t>;
        cell_t h[R], f[R];
        // A left border streamed from the part to the left is read once that part has finished this band and the one
        // above (whose last row is this band's corner): lane 0's system-scope acquire, then __syncwarp, orders every
        // lane's reads after the other device's writes (and no line of it was read before: none is stale).
        if constexpr (Split) {
            if (p.left_ready) {  // not on the first part
                if (lane == 0) {
                    wait_flag_sys(p.left_ready + band);
                    if (band > 0) wait_flag_sys(p.left_ready + band - 1);
                }
                __syncwarp();
            }
        }
        if constexpr (!Narrow) {
#pragma unroll
            for (int c = 0; c < R; ++c) {
                const long long row = my_row + c;
                h[c] = static_cast<cell_t>(row < rows ? p.left_h[row] : 0);
                f[c] = static_cast<cell_t>(row < rows ? p.left_f[row] : -oe);
            }
        }
        // hdiag: H above-left of the lane's first row for its next column; hin/ein: its input for this step.
        // Lane t > 0 starts with H[first row - 1][c0 - 1] in hin, which becomes its diagonal at its first column.
        std::uint32_t hdiag = 0, hin = 0, ein = neg_oe;
        if (lane == 0) hdiag = static_cast<std::uint32_t>(from_top ? p.top_h[0] : p.left_h[row0 - 1]);
        else if (my_row - 1 < rows) hin = static_cast<std::uint32_t>(p.left_h[my_row - 1]);
        std::uint32_t m = 0;
        unsigned long long seen_produced = 0, seen_consumed = 0;  // lane 0's last reads of the two counters
        long long next_line = Trace ? LLONG_MAX : p.K - 1;  // the lane's next checkpoint column
        const long long block_row = Trace ? 0 : row0 / p.K;

        if constexpr (Comp) hdiag = lane == 0 ? hdiag : hin;  // H above-left of the lane's first row, every lane

        // Forbid: the lane's next event (fb_col: its column, INT_MAX when none is left).
        [[maybe_unused]] long long fb_next = 0, fb_end = 0;
        [[maybe_unused]] int fb_col = INT_MAX;
        if constexpr (Forbid) {
            const long long g = my_row / R;
            fb_next = p.forbid_first[g];
            fb_end = p.forbid_first[g + 1];
            fb_col = fb_next < fb_end ? p.forbid_events[fb_next].x : INT_MAX;
        }

        // The 16-bit kind's state (see narrow_cells): rows my_lo + c in the low halves, my_hi + c in the high halves,
        // each half relative to its base (b_lo, b_hi); m_lo/m_hi: the running maxima folded at each move of a base.
        constexpr int NR = R / 2;
        [[maybe_unused]] std::uint32_t nh[NR], nf[NR], nsa[NR], nsb[NR];
        [[maybe_unused]] std::uint32_t nhdiag = 0, nhin = 0, nein = 0, nm = 0x80008000u, ndelta = 0;
        [[maybe_unused]] int b_lo = 0, b_hi = 0, m_lo = 0, m_hi = 0, nv_lo = 0, nv_hi = 0;
        [[maybe_unused]] long long due_lo = 0, due_hi = 0, next_lo = p.K - 1, next_hi = p.K - 1, event = 0;
        [[maybe_unused]] const long long my_lo = row0 + lane * NR, my_hi = my_lo + warp_size * NR;
        const auto narrow_bases = [&] {  // the differences of the bases across virtual lanes
            const int pl = __shfl_sync(0xffffffffu, b_lo, (lane + warp_size - 1) & 31);
            const int ph = __shfl_sync(0xffffffffu, b_hi, (lane + warp_size - 1) & 31);
            ndelta = halves(pl - b_lo, (lane == 0 ? pl : ph) - b_hi);
        };
        const auto narrow_event = [&] {  // the step of the lane's next block end or checkpoint column
            event = min(due_lo + lane, due_hi + lane + warp_size);
        };
        if constexpr (Narrow) {
            nv_lo = static_cast<int>(max(0LL, min(static_cast<long long>(NR), rows - my_lo)));
            nv_hi = static_cast<int>(max(0LL, min(static_cast<long long>(NR), rows - my_hi)));
            b_lo = nv_lo ? max(0, p.left_h[my_lo] - narrow_offset) : 0;
            b_hi = nv_hi ? max(0, p.left_h[my_hi] - narrow_offset) : 0;
#pragma unroll
            for (int c = 0; c < NR; ++c) {
                int hl = 0, fl = -oe, hh = 0, fh = -oe;
                std::uint32_t sl = 0x80808080u, sh = 0x80808080u;
                const auto scores = [&](long long row) {
                    std::uint32_t w = 0;
                    const int q = p.query[row];
                    for (int x = 0; x < 4; ++x)
                        w |= (static_cast<std::uint32_t>(x < p.letters ? p.sigma[q * 32 + x] : 0) & 0xffu) << (8 * x);
                    return w;
                };
                if (c < nv_lo) {
                    hl = clamp16(p.left_h[my_lo + c] - b_lo), fl = clamp16(p.left_f[my_lo + c] - b_lo);
                    sl = scores(my_lo + c);
                }
                if (c < nv_hi) {
                    hh = clamp16(p.left_h[my_hi + c] - b_hi), fh = clamp16(p.left_f[my_hi + c] - b_hi);
                    sh = scores(my_hi + c);
                }
                nh[c] = halves(hl, hh), nf[c] = halves(fl, fh), nsa[c] = sl, nsb[c] = sh;
            }
            const int corner = from_top ? p.top_h[0] : (row0 > 0 ? p.left_h[row0 - 1] : 0);
            nhdiag = halves(lane == 0 ? clamp16(corner - b_lo) : 0, 0);
            nhin = halves(lane > 0 && my_lo - 1 < rows ? clamp16(p.left_h[my_lo - 1] - b_lo) : 0,
                          my_hi - 1 < rows ? clamp16(p.left_h[my_hi - 1] - b_hi) : 0);
            nein = halves(clamp16(-b_lo), clamp16(-b_hi));  // E + oe of E = -oe
            narrow_bases();
            due_lo = min(next_lo, cols - 1), due_hi = due_lo;
            narrow_event();
        }
        const long long steps = cols + lag;
        // Ahead: the subject letters of the next chunk's columns k0 - 31 + lane and k0 + 1 + lane.
        [[maybe_unused]] std::uint8_t letter_lo = 0, letter_hi = 0;
        if constexpr (Ahead) {
            letter_lo = lane == warp_size - 1 && cols > 0 ? p.subject[0] : 0;
            letter_hi = 1 + lane < cols ? p.subject[1 + lane] : 0;
        }
        for (long long k0 = 0; k0 < steps; k0 += warp_size) {
            __syncwarp();
            // The letters of this chunk's columns, so that no step waits on a global load.
            if constexpr (Narrow) {  // columns k0 - 63 .. k0 + 32
#pragma unroll
                for (int i = lane; i < 3 * warp_size; i += warp_size) {
                    const long long j = k0 - lag + i;
                    stage_letters[i] = j >= 0 && j < cols ? p.subject[j] : 0;
                }
            } else if constexpr (Ahead) {  // columns k0 - 31 .. k0 + 32, the upper half loaded during the last chunk
                stage_letters[lane] = letter_lo;
                stage_letters[warp_size + lane] = letter_hi;
                letter_lo = letter_hi;
                const long long j2 = k0 + warp_size + 1 + lane;
                letter_hi = j2 < cols ? p.subject[j2] : 0;
            } else {
                const long long j0 = k0 - (warp_size - 1) + lane, j1 = k0 + 1 + lane;
                stage_letters[lane] = j0 >= 0 && j0 < cols ? p.subject[j0] : 0;
                stage_letters[warp_size + lane] = j1 < cols ? p.subject[j1] : 0;
            }
            __syncwarp();
            if (k0 < cols) {
                const long long end = min(k0 + warp_size, cols);
                if (in_flag) {
                    if (lane == 0) wait_at_least(in_flag, base + end, seen_produced);
                    __syncwarp();
                } else if (top_streamed) {  // lane 0's system-scope acquire, then __syncwarp, orders the reads
                    if (lane == 0) wait_at_least_sys(p.top_ready, static_cast<unsigned long long>(end), seen_produced);
                    __syncwarp();
                }
                const long long j = k0 + lane;
                if (j < cols) {
                    int2 v;
                    if (top_streamed) v = make_int2(__ldcv(p.top_in_h + j), __ldcv(p.top_in_e + j));
                    else if (from_top) v = make_int2(p.top_h[j + 1], p.top_e[j]);
                    else if (from_row) v = __ldcg(p.row_buffer + j);
                    else v = __ldcg(in_ring + ((base + j) & (ring_len - 1)));
                    stage_in[lane] = v;
                }
                __syncwarp();
                // Slots are handed back every 8 chunks (the ring is 32 chunks deep) and at the end of the band.
                if (in_consumed && lane == 0 && ((k0 / warp_size) % 8 == 7 || end == cols))
                    store_release(in_consumed, base + end);
            }
            // After a forward step of column j: the block's maximum at the block's last column, the checkpoint column.
            const auto finish_column = [&](long long j) {
                if (j == next_line || j == cols - 1) {
                    atomicMax(p.block_max + block_row * p.B + j / p.K, static_cast<int>(m));
                    m = 0;
                    if (j == next_line && j + 1 < cols) {
                        const long long b = j / p.K;
#pragma unroll
                        for (int c = 0; c < R; ++c) {
                            if (my_row + c < rows) {
                                p.col_h[b * rows + my_row + c] = static_cast<int>(h[c]);
                                p.col_f[b * rows + my_row + c] = static_cast<int>(f[c]);
                            }
                        }
                    }
                    next_line += p.K;
                }
            };
            if constexpr (Narrow) {
                // Each virtual lane moves its base to H of its first row less narrow_offset, or 0 (rows past the
                // rectangle keep theirs).
                {
                    const int dl = nv_lo ? max(0, b_lo + half_lo(nh[0]) - narrow_offset) - b_lo : 0;
                    const int dh = nv_hi ? max(0, b_hi + half_hi(nh[0]) - narrow_offset) - b_hi : 0;
                    const std::uint32_t D = halves(dl, dh);
                    if (half_lo(nm) != -32768) m_lo = max(m_lo, half_lo(nm) + b_lo);
                    if (half_hi(nm) != -32768) m_hi = max(m_hi, half_hi(nm) + b_hi);
                    nm = 0x80008000u;
                    b_lo += dl, b_hi += dh;
#pragma unroll
                    for (int c = 0; c < NR; ++c) nh[c] = __vsub2(nh[c], D), nf[c] = __vsub2(nf[c], D);
                    nhdiag = __vsub2(nhdiag, D), nhin = __vsub2(nhin, D), nein = __vsub2(nein, D);
                    narrow_bases();
                }
                const std::uint32_t neg_oe2 = kernels::lanes_s16x2::splat(-oe), neg_e2 = kernels::lanes_s16x2::splat(-ext);
                // Per chunk, so that a step reads one word: the selectors of the steps (lane t at step s reads entry
                // s - t + 31: its low half's letter at stage_letters[entry + 32], its high half's at [entry]), and the
                // chunk's top inputs as two 16-bit values relative to lane 0's low base (entry .x).
                std::uint32_t* sel_of = reinterpret_cast<std::uint32_t*>(stage_letters + 3 * warp_size);
#pragma unroll
                for (int i = lane; i < 2 * warp_size; i += warp_size) {
                    const std::uint32_t xl = stage_letters[i + warp_size], xh = stage_letters[i];
                    sel_of[i] = xl | ((8u | xl) << 4) | ((4u + xh) << 8) | ((12u + xh) << 12);
                }
                {
                    const int b0 = __shfl_sync(0xffffffffu, b_lo, 0);
                    if (k0 + lane < cols) {
                        const int2 v = stage_in[lane];
                        stage_in[lane].x = static_cast<int>(halves(clamp16(v.x - b0), clamp16(v.y + oe - b0)));
                    }
                }
                __syncwarp();
                int event_step = -1;  // the step of this chunk at which `event` falls, else -1
                const auto chunk_event = [&] {
                    const long long d = event - k0;
                    event_step = d >= 0 && d < warp_size ? static_cast<int>(d) : -1;
                };
                chunk_event();
                // A block's maximum at its last column (or the rectangle's), the checkpoint column: one half at a time.
                const auto finish_half = [&](bool high, long long j) {
                    int& mabs = high ? m_hi : m_lo;
                    const int b = high ? b_hi : b_lo, rel = high ? half_hi(nm) : half_lo(nm);
                    atomicMax(p.block_max + block_row * p.B + j / p.K, rel != -32768 ? max(mabs, rel + b) : mabs);
                    mabs = 0;
                    nm = high ? (nm & 0xffffu) | 0x80000000u : (nm & 0xffff0000u) | 0x8000u;
                    long long& next = high ? next_hi : next_lo;
                    const long long first = high ? my_hi : my_lo;
                    if (j == next && j + 1 < cols) {
                        const long long bc = j / p.K;
#pragma unroll
                        for (int c = 0; c < NR; ++c) {
                            if (first + c < rows) {
                                p.col_h[bc * rows + first + c] = (high ? half_hi(nh[c]) : half_lo(nh[c])) + b;
                                p.col_f[bc * rows + first + c] = (high ? half_hi(nf[c]) : half_lo(nf[c])) + b;
                            }
                        }
                    }
                    long long& due = high ? due_hi : due_lo;
                    if (j == cols - 1) due = LLONG_MAX / 4;
                    else next += p.K, due = min(next, cols - 1);
                };
                const auto chunk = [&](auto edge_tag) {
                    constexpr bool Edge = decltype(edge_tag)::value;
#pragma unroll 1
                    for (int s = 0; s < warp_size; ++s) {
                        const long long k = k0 + s;
                        if (lane == 0) {  // the band's top input: lane 0's low halves
                            const std::uint32_t w = static_cast<std::uint32_t>(stage_in[s].x);
                            nhin = __byte_perm(w, nhin, 0x7610);
                            nein = __byte_perm(w, nein, 0x7632);
                        }
                        const std::uint32_t diag = nhdiag;
                        nhdiag = nhin;
                        std::uint32_t e = nein;
                        const std::uint32_t sel = sel_of[s - lane + warp_size - 1];
                        std::uint32_t cm = 0xffffffffu;
                        if constexpr (Edge) {
                            const long long jl = k - lane, jh = jl - warp_size;
                            cm = (jl >= 0 && jl < cols ? 0xffffu : 0u) | (jh >= 0 && jh < cols ? 0xffff0000u : 0u);
                        }
                        narrow_cells<NR, Edge>(nsa, nsb, sel, diag, e, nh, nf, nm, neg_oe2, neg_e2, cm, nv_lo, nv_hi);
                        if (lane == warp_size - 1)
                            stage_out[s] = make_int2(half_hi(nh[NR - 1]) + b_hi, half_hi(e) + b_hi - oe);
                        std::uint32_t hs = __shfl_sync(0xffffffffu, nh[NR - 1], (lane + warp_size - 1) & 31);
                        std::uint32_t es = __shfl_sync(0xffffffffu, e, (lane + warp_size - 1) & 31);
                        if (lane == 0) hs <<= 16, es <<= 16;  // virtual lane 31's low halves into virtual lane 32
                        nhin = __vadd2(hs, ndelta);
                        nein = __vadd2(es, ndelta);
                        if (s == event_step) {
                            const long long jl = k - lane;
                            if (jl == due_lo) finish_half(false, jl);
                            if (jl - warp_size == due_hi) finish_half(true, jl - warp_size);
                            narrow_event();
                            chunk_event();
                        }
                    }
                };
                // Warp-uniform: the first two chunks, the last ones, and a band with rows past the rectangle.
                if (k0 < 2 * warp_size || k0 + warp_size > cols || row0 + S > rows) chunk(std::true_type{});
                else chunk(std::false_type{});
            } else if constexpr (Comp) {
                const int n = static_cast<int>(min(static_cast<long long>(warp_size), cols - k0));
#pragma unroll 1
                for (int s = 0; s < n; ++s) {
                    const long long j = k0 + s;
                    const int2 v = stage_in[s];
                    const std::uint32_t* pr = prof + stage_letters[s + warp_size - 1] * row_words + lane * stripe;
                    std::uint32_t e = static_cast<std::uint32_t>(v.y);
                    column_cells_comp<R>(pr, hdiag, e, h, f, m, oe, level, decay, lane);
                    const std::uint32_t up = __shfl_up_sync(0xffffffffu, h[R - 1], 1);
                    hdiag = lane == 0 ? static_cast<std::uint32_t>(v.x) : up;
                    if (lane == warp_size - 1) stage_out[s] = make_int2(static_cast<int>(h[R - 1]), static_cast<int>(e));
                    finish_column(j);
                }
            } else if constexpr (Ahead) {
                // ScoresAhead: the step's substitution scores are loaded one step ahead (two buffers, steps in pairs),
                // so that a step does not start with two dependent shared-memory loads (its letter, its profile words).
                std::uint32_t sc_a[R], sc_b[R];
                if constexpr (ScoresAhead)
                    kernels::load_scores<R>(prof + stage_letters[warp_size - 1 - lane] * row_words + lane * stripe, sc_a);
                // Plain (warp-uniform): every lane's columns of this chunk lie inside the rectangle, before its last
                // column, and hold none of its checkpoint or block-end columns: no step checks its column.
                const auto step = [&](auto plain_tag, int s, std::uint32_t(&cur)[R], std::uint32_t(&nxt)[R]) {
                    constexpr bool Plain = decltype(plain_tag)::value;
                    const long long k = k0 + s, j = k - lane;
                    if (lane == 0) {
                        const int2 v = stage_in[s];
                        hin = static_cast<std::uint32_t>(v.x);
                        ein = static_cast<std::uint32_t>(v.y);
                    }
                    const std::uint32_t diag = hdiag;
                    hdiag = hin;
                    std::uint32_t e = ein;
                    if constexpr (!ScoresAhead)
                        kernels::load_scores<R>(prof + stage_letters[s - lane + warp_size - 1] * row_words + lane * stripe, cur);
                    else if (s + 1 < warp_size)
                        kernels::load_scores<R>(prof + stage_letters[s - lane + warp_size] * row_words + lane * stripe, nxt);
                    if (Plain || (j >= 0 && j < cols)) {
                        kernels::scored_cells<R, kernels::lanes_s32>(cur, diag, e, h, f, m, neg_oe, neg_e);
                        if constexpr (!Plain) finish_column(j);
                    }
                    if (lane == warp_size - 1) stage_out[s] = make_int2(static_cast<int>(h[R - 1]), static_cast<int>(e));
                    hin = __shfl_up_sync(0xffffffffu, static_cast<std::uint32_t>(h[R - 1]), 1);
                    ein = __shfl_up_sync(0xffffffffu, e, 1);
                };
                const auto chunk = [&](auto plain_tag) {
                    if constexpr (ScoresAhead) {
#pragma unroll 1
                        for (int s = 0; s < warp_size; s += 2) {
                            step(plain_tag, s, sc_a, sc_b);
                            step(plain_tag, s + 1, sc_b, sc_a);
                        }
                    } else {
#pragma unroll 1
                        for (int s = 0; s < warp_size; ++s) step(plain_tag, s, sc_a, sc_b);
                    }
                };
                const bool plain = k0 >= warp_size - 1 && k0 + warp_size < cols &&
                                   !__any_sync(0xffffffffu, next_line >= k0 - lane && next_line <= k0 + warp_size - 1 - lane);
                if (plain) chunk(std::true_type{});
                else chunk(std::false_type{});
            } else {
#pragma unroll 1
                for (int s = 0; s < warp_size; ++s) {
                    const long long k = k0 + s, j = k - lane;
                    if (lane == 0) {
                        const int2 v = stage_in[s];
                        hin = static_cast<std::uint32_t>(v.x);
                        ein = static_cast<std::uint32_t>(v.y);
                    }
                    const std::uint32_t diag = hdiag;
                    hdiag = hin;
                    std::uint32_t e = ein;
                    if (j >= 0 && j < cols) {
                        const int x = stage_letters[s - lane + warp_size - 1];
                        const std::uint32_t* pr = prof + x * row_words + lane * stripe;
                        const auto cells = [&](const std::uint32_t* prow) {
                            if constexpr (Trace) {
                                int ei = static_cast<int>(e);
                                const unsigned bits = trace_cells<R>(prow, static_cast<int>(diag), ei, h, f, oe, ext,
                                                                     p.target, my_row, rows, j, p.first_hit);
                                e = static_cast<std::uint32_t>(ei);
                                const long long nib = j * p.stride + my_row;
                                static_assert(R == 4, "the trace kernel stores 4 nibbles per lane and step");
                                *reinterpret_cast<std::uint16_t*>(p.trace + (nib >> 1)) =
                                    static_cast<std::uint16_t>(bits);
                            } else {
                                if constexpr (Kind == forward_h) row_cells_h<R>(prow, diag, e, h, f, m, neg_oe, neg_e);
                                else kernels::row_cells<R, kernels::lanes_s32>(prow, diag, e, h, f, m, neg_oe, neg_e);
                                finish_column(j);
                            }
                        };
                        if constexpr (Forbid) {
                            if (j == fb_col) {  // a forbidden cell in the lane's rows at this column
                                const unsigned mask = static_cast<unsigned>(p.forbid_events[fb_next].y);
                                alignas(16) std::uint32_t forbidden_prof[R];
#pragma unroll
                                for (int c = 0; c < R; ++c)
                                    forbidden_prof[c] = (mask >> c) & 1u ? static_cast<std::uint32_t>(forbid_score) : pr[c];
                                ++fb_next;
                                fb_col = fb_next < fb_end ? p.forbid_events[fb_next].x : INT_MAX;
                                cells(forbidden_prof);
                            } else {
                                cells(pr);
                            }
                        } else {
                            cells(pr);
                        }
                    }
                    if (lane == warp_size - 1) stage_out[s] = make_int2(static_cast<int>(h[R - 1]), static_cast<int>(e));
                    hin = __shfl_up_sync(0xffffffffu, static_cast<std::uint32_t>(h[R - 1]), 1);
                    ein = __shfl_up_sync(0xffffffffu, e, 1);
                }
            }
            // The chunk's bottom-row outputs: columns k0 - 31 .. k0 (skewed), k0 .. k0 + 31 (the compensation method),
            // k0 - 63 .. k0 - 32 (16-bit cells).
            __syncwarp();
            const long long last = min(k0 + warp_size - 1 - lag, cols - 1);
            if ((out_flag || ck_row >= 0 || to_slab) && last >= 0) {
                if (out_consumed && lane == 0 && out_base + last + 1 > static_cast<unsigned long long>(ring_len))
                    wait_at_least(out_consumed, out_base + last + 1 - ring_len, seen_consumed);
                __syncwarp();
                const long long jo = k0 - lag + lane;
                if (jo >= 0 && jo < cols) {
                    const int2 v = stage_out[lane];
                    if (out_ring) __stcg(out_ring + ((out_base + jo) & (ring_len - 1)), v);
                    else if (to_row) __stcg(p.row_buffer + jo, v);
                    if (to_slab) {
                        p.bottom_h[jo] = v.x;
                        p.bottom_e[jo] = v.y;
                    }
                    if (ck_row >= 0) {
                        p.row_h[ck_row * cols + jo] = v.x;
                        p.row_e[ck_row * cols + jo] = v.y;
                    }
                }
                if (to_slab) __threadfence_system();
                __syncwarp();
                // The release store makes every lane's ring stores (ordered before it by the __syncwarp) visible
                // to the consumer's acquire.
                if (out_flag && lane == 0) store_release(out_flag, out_base + last + 1);
                if (to_slab && lane == 0) store_release_sys(p.bottom_ready, static_cast<unsigned long long>(last + 1));
            }
            if (p.done_chunks && lane == 0) {
                const long long chunk = k0 / warp_size;
                if (chunk % 32 == 31) atomicAdd(p.done_chunks, 32ull);
                else if (k0 + warp_size >= steps) atomicAdd(p.done_chunks, static_cast<unsigned long long>(chunk % 32 + 1));
            }
        }
        if (Split && p.right_ready) {
            // The right border for the part to the right: after its last column a lane still holds H of that column
            // and F entering the next; every lane's stores, then the band's flag.
#pragma unroll
            for (int c = 0; c < R; ++c) {
                if (my_row + c < rows) {
                    p.right_h[my_row + c] = static_cast<int>(h[c]);
                    p.right_f[my_row + c] = static_cast<int>(f[c]);
                }
            }
            __threadfence_system();
            __syncwarp();
            if (lane == 0) store_release_sys(p.right_ready + band, 1u);
        }
    }
}

template <int R, int Kind, bool Forbid = false>
__global__ void __launch_bounds__(max_warps_per_block * warp_size) band_kernel(const band_params p) {
    const int wib = threadIdx.x >> 5;
    const int gw = blockIdx.x * (blockDim.x / warp_size) + wib;
    if (gw < p.warps) run_bands<R, Kind, Forbid>(p, gw, wib);
}

// Several rectangles in one launch (leaves of a traceback): rectangle l has warps [first[l], first[l] + warps), each
// with rings and counters of its own; one warp per block.
template <int R, int Kind, bool Forbid = false>
__global__ void __launch_bounds__(warp_size) band_batch_kernel(const band_params* rects, const int* first, int count) {
    const int gw = blockIdx.x;
    int lo = 0, hi = count - 1;  // the last rectangle whose first warp is <= gw
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (first[mid] <= gw) lo = mid;
        else hi = mid - 1;
    }
    const band_params p = rects[lo];
    if (gw - first[lo] < p.warps) run_bands<R, Kind, Forbid>(p, gw - first[lo], 0);
}

// Copies of int ranges on the device, one block per range (the borders of a batch of leaves).
struct copy_desc {
    int* to;
    const int* from;
    long long count;
};
__global__ void gather_copies(const copy_desc* copies) {
    const copy_desc c = copies[blockIdx.x];
    for (long long k = threadIdx.x; k < c.count; k += blockDim.x) c.to[k] = c.from[k];
}

}  // namespace

}  // namespace swgpu::gpu
