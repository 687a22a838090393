// Long pairs on the GPU: the rectangle operations of core/align/long_pair/long_pair.hpp (forward with a grid, trace of a leaf) as one
// kernel of persistent warps, each warp a band of rows, bands handing their bottom rows to the next band through
// rings in L2 with per-warp progress counters (the engine's tiled P2P schedule with tiles of one band x 32 columns).
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
// Entries: forward kernels for R = 32, 16, 8 (bands of 1024, 512, 256 rows) and two cell codes; a rectangle takes
// bands of 1024 rows unless it has too few of them to fill the GPU (see forward_entry). Leaves of the traceback are
// traced many per launch (band_batch_kernel: each rectangle its own warps, rings and counters). A long forward pass
// counts its chunks in device memory, read by a copy on another stream while it runs (progress).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "core/align/long_pair/long_pair.hpp"
#include "core/tuning.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/flags.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/gpu.hpp"
#include "gpu/align/sw_cells.cuh"

namespace swgpu::gpu {

namespace {

constexpr int warp_size = 32;
constexpr int flag_stride = 16;        // 64-bit counters per 128-byte line
constexpr int pad_score = -(1 << 24);  // σ of rows below the rectangle (never read back)
constexpr int trace_rows = 4;          // R of the trace kernel: bands of 128 rows
constexpr int max_forward_rows = 32;   // grid spacings are multiples of every forward entry's band
constexpr int max_warps_per_block = 4;
constexpr long long ring_len = 1024;   // columns per ring (power of two)

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

template <int R>
constexpr int profile_words(int letters) {
    return letters * kernels::chunk_row_words(warp_size, R);
}
// Shared memory of one warp: its band's profile, then 32 staged inputs and 32 staged outputs (int2 each), then the
// 64 subject letters a chunk of 32 steps reads (columns k0 - 31 .. k0 + 32).
template <int R>
constexpr std::size_t warp_smem_words(int letters) {
    return static_cast<std::size_t>(profile_words<R>(letters)) + 4 * warp_size + 16;
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

// Kernel kinds: the forward pass with row_cells (6.5 instructions per cell) or row_cells_h (5.5), the trace, and the
// forward pass of one part of a pass split over devices (row_cells; waits for its left border and publishes its right
// border band by band: a kind of its own, so that the other kernels carry none of it).
enum band_kind : int { forward_x = 0, forward_h = 1, trace_kind = 2, forward_split = 3 };

// The bands of one rectangle, for the warp with index gw among p.warps (wib: its index in the block).
template <int R, int Kind>
__device__ __forceinline__ void run_bands(const band_params& p, int gw, int wib) {
    constexpr bool Trace = Kind == trace_kind;
    constexpr bool Split = Kind == forward_split;
    constexpr int S = warp_size * R;
    constexpr int stripe = kernels::chunk_stripe_words(R);
    constexpr int row_words = kernels::chunk_row_words(warp_size, R);
    extern __shared__ uint4 smem_storage[];
    const int lane = threadIdx.x & 31;
    std::uint32_t* prof = reinterpret_cast<std::uint32_t*>(smem_storage) + wib * warp_smem_words<R>(p.letters);
    int2* stage_in = reinterpret_cast<int2*>(prof + profile_words<R>(p.letters));
    int2* stage_out = stage_in + warp_size;
    std::uint8_t* stage_letters = reinterpret_cast<std::uint8_t*>(stage_out + warp_size);
    const long long rows = p.rows, cols = p.cols;
    const int oe = p.gap_oe, ext = p.gap_e;
    const std::uint32_t neg_oe = static_cast<std::uint32_t>(-oe), neg_e = static_cast<std::uint32_t>(-ext);

    long long gen = 0;
    for (long long band = gw; band < p.bands; band += p.warps, ++gen) {
        const long long row0 = band * S, my_row = row0 + lane * R;
        __syncwarp();
        for (int idx = lane; idx < p.letters * S; idx += warp_size) {
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
#pragma unroll
        for (int c = 0; c < R; ++c) {
            const long long row = my_row + c;
            h[c] = static_cast<cell_t>(row < rows ? p.left_h[row] : 0);
            f[c] = static_cast<cell_t>(row < rows ? p.left_f[row] : -oe);
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

        const long long steps = cols + warp_size - 1;
        for (long long k0 = 0; k0 < steps; k0 += warp_size) {
            __syncwarp();
            // The letters of this chunk's columns, so that no step waits on a global load.
            {
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
                    if constexpr (Trace) {
                        int ei = static_cast<int>(e);
                        const unsigned bits = trace_cells<R>(pr, static_cast<int>(diag), ei, h, f, oe, ext, p.target,
                                                             my_row, rows, j, p.first_hit);
                        e = static_cast<std::uint32_t>(ei);
                        const long long nib = j * p.stride + my_row;
                        static_assert(R == 4, "the trace kernel stores 4 nibbles per lane and step");
                        *reinterpret_cast<std::uint16_t*>(p.trace + (nib >> 1)) = static_cast<std::uint16_t>(bits);
                    } else {
                        if constexpr (Kind == forward_h) row_cells_h<R>(pr, diag, e, h, f, m, neg_oe, neg_e);
                        else kernels::row_cells<R, kernels::lanes_s32>(pr, diag, e, h, f, m, neg_oe, neg_e);
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
                    }
                }
                if (lane == warp_size - 1) stage_out[s] = make_int2(static_cast<int>(h[R - 1]), static_cast<int>(e));
                hin = __shfl_up_sync(0xffffffffu, static_cast<std::uint32_t>(h[R - 1]), 1);
                ein = __shfl_up_sync(0xffffffffu, e, 1);
            }
            // The chunk's bottom-row outputs: columns k0 - 31 .. k0.
            __syncwarp();
            const long long last = min(k0, cols - 1);
            if ((out_flag || ck_row >= 0 || to_slab) && last >= 0) {
                if (out_consumed && lane == 0 && out_base + last + 1 > static_cast<unsigned long long>(ring_len))
                    wait_at_least(out_consumed, out_base + last + 1 - ring_len, seen_consumed);
                __syncwarp();
                const long long jo = k0 - (warp_size - 1) + lane;
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

template <int R, int Kind>
__global__ void __launch_bounds__(max_warps_per_block * warp_size) band_kernel(const band_params p) {
    const int wib = threadIdx.x >> 5;
    const int gw = blockIdx.x * (blockDim.x / warp_size) + wib;
    if (gw < p.warps) run_bands<R, Kind>(p, gw, wib);
}

// Several rectangles in one launch (leaves of a traceback): rectangle l has warps [first[l], first[l] + warps), each
// with rings and counters of its own; one warp per block.
template <int R, int Kind>
__global__ void __launch_bounds__(warp_size) band_batch_kernel(const band_params* rects, const int* first, int count) {
    const int gw = blockIdx.x;
    int lo = 0, hi = count - 1;  // the last rectangle whose first warp is <= gw
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (first[mid] <= gw) lo = mid;
        else hi = mid - 1;
    }
    const band_params p = rects[lo];
    if (gw - first[lo] < p.warps) run_bands<R, Kind>(p, gw - first[lo], 0);
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

// Device memory from the stream-ordered pool (allocations after the first cost next to nothing).
template <class T>
class pooled {
public:
    pooled() = default;
    pooled(std::size_t count, cudaStream_t s) : stream_(s), count_(count) {
        if (count) SWGPU_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&ptr_), count * sizeof(T), s));
    }
    pooled(const pooled&) = delete;
    pooled& operator=(const pooled&) = delete;
    pooled(pooled&& o) noexcept { *this = std::move(o); }
    pooled& operator=(pooled&& o) noexcept {
        std::swap(ptr_, o.ptr_);
        std::swap(count_, o.count_);
        std::swap(stream_, o.stream_);
        return *this;
    }
    ~pooled() {
        if (ptr_) (void)cudaFreeAsync(ptr_, stream_);
    }
    T* data() const { return ptr_; }
    std::size_t size() const { return count_; }

private:
    T* ptr_ = nullptr;
    cudaStream_t stream_ = nullptr;
    std::size_t count_ = 0;
};

// The border between two parts of a forward pass split by columns: H of the left part's last column and F entering
// the right part's first, per row, and a flag per band; in pinned host memory that every device maps.
struct border_exchange {
    int* h = nullptr;
    int* f = nullptr;
    unsigned* ready = nullptr;
};
// The row between two slabs of a split by rows (H and E entering the slab below, every column), with the count of
// columns written, in memory both devices reach.
struct row_exchange {
    int* h = nullptr;
    int* e = nullptr;
    unsigned long long* ready = nullptr;
};

// A grid's checkpoint lines in device memory; the walk copies the few it needs.
class device_grid_lines final : public long_pair::grid_lines {
public:
    device_grid_lines(std::int64_t A, std::int64_t B, std::int64_t rows, std::int64_t cols, cudaStream_t s)
        : rows_(rows), cols_(cols), stream_(s),
          row_h(static_cast<std::size_t>(std::max<std::int64_t>(A - 1, 0) * cols), s),
          row_e(row_h.size(), s),
          col_h(static_cast<std::size_t>(std::max<std::int64_t>(B - 1, 0) * rows), s),
          col_f(col_h.size(), s) {}
    void row(std::int64_t a, std::int64_t offset, std::int64_t count, int* h, int* e) const override {
        copy(row_h.data() + a * cols_ + offset, h, count);
        copy(row_e.data() + a * cols_ + offset, e, count);
        SWGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    void col(std::int64_t b, std::int64_t offset, std::int64_t count, int* h, int* f) const override {
        copy(col_h.data() + b * rows_ + offset, h, count);
        copy(col_f.data() + b * rows_ + offset, f, count);
        SWGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }

private:
    void copy(const int* from, int* to, std::int64_t count) const {
        if (count > 0)
            SWGPU_CUDA_CHECK(cudaMemcpyAsync(to, from, static_cast<std::size_t>(count) * sizeof(int),
                                             cudaMemcpyDeviceToHost, stream_));
    }
    std::int64_t rows_, cols_;
    cudaStream_t stream_;

public:
    pooled<int> row_h, row_e, col_h, col_f;
};

class gpu_backend final : public long_pair::backend {
public:
    gpu_backend(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc,
                std::size_t device_memory)
        : oe_(sc.gaps.open + sc.gaps.extend), ext_(sc.gaps.extend) {
        int dev = 0;
        SWGPU_CUDA_CHECK(cudaGetDevice(&dev));
        SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, dev));
        // Keep freed pool memory mapped: the walk allocates and frees grids of similar sizes over and over.
        cudaMemPool_t pool;
        SWGPU_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
        std::uint64_t keep = UINT64_MAX;
        SWGPU_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
        std::size_t free_bytes = 0, total = 0;
        SWGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
        const std::size_t usable = device_memory ? std::min(device_memory, free_bytes) : free_bytes;
        budget_ = std::max<std::size_t>(usable / 4, std::size_t(16) << 20);

        // Compact subject letters: only those that occur get a profile row.
        std::vector<int> compact(substitution_matrix::max_letters, -1);
        std::vector<std::uint8_t> codes(subject.size());
        std::vector<int> letter_of;
        for (std::size_t k = 0; k < subject.size(); ++k) {
            int& c = compact[subject[k] & 31];
            if (c < 0) {
                c = static_cast<int>(letter_of.size());
                letter_of.push_back(subject[k] & 31);
            }
            codes[k] = static_cast<std::uint8_t>(c);
        }
        letters_ = std::max<int>(1, static_cast<int>(letter_of.size()));
        // sigma[q * 32 + x]: query code q (any of the 32 codes) against compact subject letter x.
        std::vector<int> sigma(32 * 32, 0);
        for (int q = 0; q < 32; ++q)
            for (int x = 0; x < static_cast<int>(letter_of.size()); ++x)
                sigma[static_cast<std::size_t>(q) * 32 + x] = sc.matrix.score(static_cast<std::uint8_t>(q),
                                                                               static_cast<std::uint8_t>(letter_of[x]));
        query_.upload(query.data(), query.size(), stream_.get());
        subject_.upload(codes.data(), codes.size(), stream_.get());
        sigma_.upload(sigma, stream_.get());
        stream_.synchronize();
        // Forward entries (rows per lane, cell code); the tuning key long.entry picks one for measurements.
        // The default is the first entry that fits (bands of 1024 rows were fastest on the H100: 1 Mbp x 1 Mbp,
        // bands of 1024/512/256 rows: 1.58/1.48/1.05 TCUPS; the cells of row_cells_h were no faster);
        // long.entry picks another one for measurements (-1, the table's default: none).
        forward_entries_ = {configure<32, forward_x>(), configure<16, forward_x>(), configure<8, forward_x>(),
                            configure<32, forward_h>(), configure<16, forward_h>(), configure<8, forward_h>()};
        split_entries_ = {configure<32, forward_split>(), configure<16, forward_split>(), configure<8, forward_split>()};
        for (const auto& e : forward_entries_)
            if (!fwd_.resident_warps && e.resident_warps) fwd_ = e;
        if (const std::int64_t k = tuning::integer("long.entry", device_arch()); k >= 0) {
            if (k < static_cast<std::int64_t>(forward_entries_.size()) && forward_entries_[k].resident_warps)
                fwd_ = forward_entries_[k], forced_entry_ = true;
        }
        // A leaf has few bands: one warp per block spreads them over as many SMs.
        trc_ = configure<trace_rows, trace_kind>(1);
        SWGPU_CUDA_CHECK(cudaFuncSetAttribute(&band_batch_kernel<trace_rows, trace_kind>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(trc_.smem)));
        if (!fwd_.resident_warps || !trc_.resident_warps)
            throw runtime_failure("the long-pair kernels do not fit in this GPU's shared memory");
    }

    std::int64_t spacing_multiple() const override { return warp_size * max_forward_rows; }
    double leaf_cells() const override { return double(1 << 20); }
    std::size_t grid_budget() const override { return budget_; }

    void forward(const long_pair::rect& area, const long_pair::borders& b, std::int64_t K,
                 long_pair::grid& g) override {
        forward_part(area, b, K, g, nullptr, nullptr);
    }

    // forward() of one part of a pass split by columns: its left border streamed from `left` (b's left border is
    // then ignored), its right border streamed to `right` (either may be null).
    // forward() of one slab of a pass split by rows: its top border (but the corner, b.top_h[0]) streamed from `top`,
    // its bottom row streamed to `bottom` (either may be null).
    void forward_part(const long_pair::rect& area, const long_pair::borders& b, std::int64_t K, long_pair::grid& g,
                      const border_exchange* left, const border_exchange* right, const row_exchange* top = nullptr,
                      const row_exchange* bottom = nullptr) {
        if (K <= 0 || K % spacing_multiple() != 0)
            throw runtime_failure("internal error: long-pair grid spacing is not a band multiple");
        const cudaStream_t s = stream_.get();
        g = long_pair::grid{};
        g.area = area;
        g.K = K;
        g.A = (area.rows() + K - 1) / K;
        g.B = (area.cols() + K - 1) / K;
        auto lines = std::make_shared<device_grid_lines>(g.A, g.B, area.rows(), area.cols(), s);
        pooled<int> block_max(static_cast<std::size_t>(g.A * g.B), s);
        SWGPU_CUDA_CHECK(cudaMemsetAsync(block_max.data(), 0, block_max.size() * sizeof(int), s));
        band_params p = common(area, b);
        p.K = K;
        p.B = g.B;
        p.row_h = lines->row_h.data();
        p.row_e = lines->row_e.data();
        p.col_h = lines->col_h.data();
        p.col_f = lines->col_f.data();
        p.block_max = block_max.data();
        if (left) {
            p.left_h = left->h;
            p.left_f = left->f;
            p.left_ready = left->ready;
        }
        if (right) {
            p.right_h = right->h;
            p.right_f = right->f;
            p.right_ready = right->ready;
        }
        if (top) {
            p.top_in_h = top->h;
            p.top_in_e = top->e;
            p.top_ready = top->ready;
        }
        if (bottom) {
            p.bottom_h = bottom->h;
            p.bottom_e = bottom->e;
            p.bottom_ready = bottom->ready;
        }
        const kernel_config* cfg = &forward_entry(area.rows());
        if (left || right || top || bottom) {  // the split kind with the same bands (every part numbers its bands alike)
            for (const auto& e : split_entries_)
                if (e.rows == cfg->rows && e.resident_warps) cfg = &e;
            if (cfg->kind != forward_split) throw runtime_failure("the split long-pair kernel does not fit on this GPU");
        }
        launch(*cfg, p, area);
        g.block_max.resize(block_max.size());
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(g.block_max.data(), block_max.data(), block_max.size() * sizeof(int),
                                         cudaMemcpyDeviceToHost, s));
        stream_.synchronize();
        g.lines = std::move(lines);
    }

    void trace_rect(const long_pair::rect& area, const long_pair::borders& b, int target,
                    long_pair::trace& out) override {
        const cudaStream_t s = stream_.get();
        out = long_pair::trace{};
        out.area = area;
        const long long S = warp_size * trace_rows;
        const long long bands = (area.rows() + S - 1) / S;
        out.stride = bands * S;
        const std::size_t bytes = static_cast<std::size_t>(out.stride * area.cols() / 2);
        pooled<std::uint8_t> nibbles(bytes, s);
        pooled<unsigned long long> hit(1, s);
        SWGPU_CUDA_CHECK(cudaMemsetAsync(hit.data(), 0xff, sizeof(unsigned long long), s));
        band_params p = common(area, b);
        p.trace = nibbles.data();
        p.stride = out.stride;
        p.target = target > 0 ? target : INT_MIN;
        p.first_hit = hit.data();
        launch(trc_, p, area);
        std::uint8_t* staged = pinned(bytes + sizeof(unsigned long long), 1);
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(staged, nibbles.data(), bytes, cudaMemcpyDeviceToHost, s));
        SWGPU_CUDA_CHECK(
            cudaMemcpyAsync(staged + bytes, hit.data(), sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
        stream_.synchronize();
        out.nibbles.assign(staged, staged + bytes);
        unsigned long long first = 0;
        std::memcpy(&first, staged + bytes, sizeof first);
        if (target > 0 && first != ~0ull) {
            out.hit_i = area.r0 + static_cast<std::int64_t>(first >> 32);
            out.hit_j = area.c0 + static_cast<std::int64_t>(first & 0xffffffffull);
        }
    }

    // Leaves per launch (1 Mbp pair, H100: 48/96/192/288 leaves gave 1.39/1.30/1.26/1.25x the score pass; 192 keeps
    // the pinned buffers at 96 MB): the tuning key long.batch.
    std::size_t trace_batch() const override { return batch_; }

    // Leaves traced in one launch: their borders are gathered on the device from the grid's lines (and the grid's own
    // borders, uploaded once), each leaf gets rings and counters of its own, and all nibbles come back in one copy.
    void trace_blocks(const long_pair::grid& g, const long_pair::borders& outer,
                      std::span<const std::pair<std::int64_t, std::int64_t>> blocks,
                      std::vector<long_pair::trace>& out) override {
        const auto* lines = dynamic_cast<const device_grid_lines*>(g.lines.get());
        if (!lines || blocks.empty()) {
            long_pair::backend::trace_blocks(g, outer, blocks, out);
            return;
        }
        const cudaStream_t s = stream_.get();
        const long long S = warp_size * trace_rows;
        const std::size_t rows = static_cast<std::size_t>(g.area.rows()), cols = static_cast<std::size_t>(g.area.cols());
        // The grid's own borders on the device: top_h (cols + 1), top_e, left_h, left_f.
        const std::size_t outer_words = 2 * (rows + cols) + 1;
        pooled<int> outer_d(outer_words, s);
        {
            int* h = reinterpret_cast<int*>(pinned(outer_words * sizeof(int), 0));
            std::copy(outer.top_h.begin(), outer.top_h.end(), h);
            std::copy(outer.top_e.begin(), outer.top_e.end(), h + cols + 1);
            std::copy(outer.left_h.begin(), outer.left_h.end(), h + 2 * cols + 1);
            std::copy(outer.left_f.begin(), outer.left_f.end(), h + 2 * cols + 1 + rows);
            SWGPU_CUDA_CHECK(cudaMemcpyAsync(outer_d.data(), h, outer_words * sizeof(int), cudaMemcpyHostToDevice, s));
        }
        const int* o_top_h = outer_d.data();
        const int* o_top_e = o_top_h + cols + 1;
        const int* o_left_h = o_top_h + 2 * cols + 1;
        const int* o_left_f = o_left_h + rows;

        std::vector<band_params> params(blocks.size());
        std::vector<int> first(blocks.size());
        std::vector<std::size_t> nibble_offset(blocks.size() + 1, 0), border_offset(blocks.size() + 1, 0);
        int warps = 0;
        out.assign(blocks.size(), {});
        for (std::size_t k = 0; k < blocks.size(); ++k) {
            const auto r = g.block(blocks[k].first, blocks[k].second);
            auto& tr = out[k];
            tr.area = r;
            tr.stride = (r.rows() + S - 1) / S * S;
            nibble_offset[k + 1] = nibble_offset[k] + static_cast<std::size_t>(tr.stride * r.cols() / 2);
            border_offset[k + 1] = border_offset[k] + static_cast<std::size_t>(2 * (r.rows() + r.cols()) + 1);
            first[k] = warps;
            warps += static_cast<int>(tr.stride / S);
        }
        if (warps > trc_.resident_warps) {  // more bands than fit at once: in smaller launches
            const std::size_t half = blocks.size() / 2;
            std::vector<long_pair::trace> tail;
            trace_blocks(g, outer, blocks.first(half), out);
            trace_blocks(g, outer, blocks.subspan(half), tail);
            for (auto& t : tail) out.push_back(std::move(t));
            return;
        }
        pooled<int> border_d(border_offset.back(), s);
        pooled<std::uint8_t> nibbles(nibble_offset.back(), s);
        pooled<int2> ring(static_cast<std::size_t>(warps) * ring_len, s);
        pooled<unsigned long long> flags(static_cast<std::size_t>(2 * warps) * flag_stride, s);
        SWGPU_CUDA_CHECK(cudaMemsetAsync(flags.data(), 0, flags.size() * sizeof(unsigned long long), s));
        // The borders' copies, done by one gather kernel (about six per leaf: as many cudaMemcpy calls cost more
        // than the leaves' kernel).
        std::vector<copy_desc> copies;
        auto d2d = [&](int* to, const int* from, std::int64_t count) {
            if (count > 0) copies.push_back({to, from, count});
        };
        for (std::size_t k = 0; k < blocks.size(); ++k) {
            const auto [a, b] = blocks[k];
            const auto r = out[k].area;
            const std::int64_t w = r.cols(), h = r.rows(), jc = r.c0 - g.area.c0, ir = r.r0 - g.area.r0;
            int* top_h = border_d.data() + border_offset[k];
            int* top_e = top_h + w + 1;
            int* left_h = top_e + w;
            int* left_f = left_h + h;
            // As grid::block_borders, on the device.
            if (a == 0) {
                d2d(top_h, o_top_h + jc, w + 1);
                d2d(top_e, o_top_e + jc, w);
            } else {
                const int* rh = lines->row_h.data() + (a - 1) * static_cast<std::int64_t>(cols);
                const int* re = lines->row_e.data() + (a - 1) * static_cast<std::int64_t>(cols);
                d2d(top_h, b == 0 ? o_left_h + ir - 1 : rh + jc - 1, 1);
                d2d(top_h + 1, rh + jc, w);
                d2d(top_e, re + jc, w);
            }
            if (b == 0) {
                d2d(left_h, o_left_h + ir, h);
                d2d(left_f, o_left_f + ir, h);
            } else {
                d2d(left_h, lines->col_h.data() + (b - 1) * static_cast<std::int64_t>(rows) + ir, h);
                d2d(left_f, lines->col_f.data() + (b - 1) * static_cast<std::int64_t>(rows) + ir, h);
            }
            band_params& p = params[k];
            p.query = query_.data() + r.r0;
            p.subject = subject_.data() + r.c0;
            p.rows = h;
            p.cols = w;
            p.top_h = top_h;
            p.top_e = top_e;
            p.left_h = left_h;
            p.left_f = left_f;
            p.sigma = sigma_.data();
            p.letters = letters_;
            p.gap_oe = oe_;
            p.gap_e = ext_;
            p.K = 1;
            p.bands = out[k].stride / S;
            p.warps = static_cast<int>(p.bands);
            p.ring = ring.data() + static_cast<std::size_t>(first[k]) * ring_len;
            p.produced = flags.data() + static_cast<std::size_t>(first[k]) * flag_stride;
            p.consumed = flags.data() + static_cast<std::size_t>(warps + first[k]) * flag_stride;
            p.row_buffer = nullptr;  // one generation of bands: the last band hands nothing on
            p.row_ready = nullptr;
            p.trace = nibbles.data() + nibble_offset[k];
            p.stride = out[k].stride;
            p.target = INT_MIN;
            p.first_hit = nullptr;
        }
        pooled<band_params> params_d(params.size(), s);
        pooled<int> first_d(first.size(), s);
        pooled<copy_desc> copies_d(copies.size(), s);
        // The pinned upload buffer holds the outer borders: wait for that copy before reusing it.
        stream_.synchronize();
        const std::size_t params_bytes = params.size() * sizeof(band_params), first_bytes = first.size() * sizeof(int),
                          copies_bytes = copies.size() * sizeof(copy_desc);
        auto* staged = pinned(params_bytes + copies_bytes + first_bytes, 0);  // copy_desc first: 8-byte aligned
        std::memcpy(staged, params.data(), params_bytes);
        std::memcpy(staged + params_bytes, copies.data(), copies_bytes);
        std::memcpy(staged + params_bytes + copies_bytes, first.data(), first_bytes);
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(params_d.data(), staged, params_bytes, cudaMemcpyHostToDevice, s));
        if (!copies.empty()) {
            SWGPU_CUDA_CHECK(cudaMemcpyAsync(copies_d.data(), staged + params_bytes, copies_bytes,
                                             cudaMemcpyHostToDevice, s));
            gather_copies<<<static_cast<unsigned>(copies.size()), 256, 0, s>>>(copies_d.data());
            SWGPU_CUDA_CHECK_LAUNCH("gather_copies");
        }
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(first_d.data(), staged + params_bytes + copies_bytes, first_bytes,
                                         cudaMemcpyHostToDevice, s));
        band_batch_kernel<trace_rows, trace_kind><<<warps, warp_size, trc_.smem / trc_.warps_per_block, s>>>(
            params_d.data(), first_d.data(), static_cast<int>(params.size()));
        SWGPU_CUDA_CHECK_LAUNCH("band_batch_kernel");
        // Into a pinned buffer of the batch pool that the traces share (no host copy; back to the pool when the walk
        // has dropped the last of them).
        std::shared_ptr<std::uint8_t> back = batch_buffer(nibble_offset.back());
        SWGPU_CUDA_CHECK(
            cudaMemcpyAsync(back.get(), nibbles.data(), nibble_offset.back(), cudaMemcpyDeviceToHost, s));
        stream_.synchronize();
        for (std::size_t k = 0; k < blocks.size(); ++k)
            out[k].shared = std::shared_ptr<const std::uint8_t>(back, back.get() + nibble_offset[k]);
    }

private:
    // Pinned host buffers for batches of traces, kept in a pool: a buffer returns to it when its last user is gone.
    struct pinned_pool {
        std::mutex lock;
        std::vector<std::pair<std::uint8_t*, std::size_t>> free;
        ~pinned_pool() {
            for (auto& [p, n] : free) (void)cudaFreeHost(p);
        }
    };
    std::shared_ptr<std::uint8_t> batch_buffer(std::size_t bytes) {
        std::uint8_t* p = nullptr;
        std::size_t size = 0;
        {
            std::lock_guard<std::mutex> g(pool_->lock);
            for (auto it = pool_->free.begin(); it != pool_->free.end(); ++it)
                if (it->second >= bytes) {
                    std::tie(p, size) = *it;
                    pool_->free.erase(it);
                    break;
                }
        }
        if (!p) {
            size = bytes;
            SWGPU_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&p), size));
        }
        return std::shared_ptr<std::uint8_t>(p, [pool = pool_, size](std::uint8_t* q) {
            std::lock_guard<std::mutex> g(pool->lock);
            pool->free.emplace_back(q, size);
        });
    }
    std::shared_ptr<pinned_pool> pool_ = std::make_shared<pinned_pool>();

    struct kernel_config {
        void (*kernel)(band_params) = nullptr;
        int rows = 0;  // R
        int kind = 0;
        int warps_per_block = 0;
        int resident_warps = 0;  // 0: does not fit (the profile of this many letters is too large)
        std::size_t smem = 0;
    };
    // The most warps per block (4, 2 or 1) whose profiles fit in shared memory.
    template <int R, int Kind>
    kernel_config configure(int most_warps = max_warps_per_block) {
        kernel_config cfg;
        cfg.kernel = &band_kernel<R, Kind>;
        cfg.rows = R;
        cfg.kind = Kind;
        int dev = 0, smem_max = 0;
        SWGPU_CUDA_CHECK(cudaGetDevice(&dev));
        SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        for (int w = most_warps; w >= 1; w /= 2) {
            const std::size_t smem = w * warp_smem_words<R>(letters_) * sizeof(std::uint32_t);
            if (smem > static_cast<std::size_t>(smem_max)) continue;
            SWGPU_CUDA_CHECK(cudaFuncSetAttribute(cfg.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  static_cast<int>(smem)));
            int blocks = 0;
            SWGPU_CUDA_CHECK(
                cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, cfg.kernel, w * warp_size, smem));
            if (blocks < 1) continue;
            cfg.warps_per_block = w;
            cfg.smem = smem;
            cfg.resident_warps = blocks * sms_ * w;
            break;
        }
        return cfg;
    }

public:
    // The generations of bands (bands over the warps that fit at once) of a part with `rows` rows in a pass split by
    // columns (the split kernel).
    long long split_generations(std::int64_t rows) const {
        const auto [S, warps] = split_shape(rows);
        if (!warps) return 0;
        const long long bands = (rows + S - 1) / S;
        return (bands + warps - 1) / warps;
    }
    // The rows of a band and the warps resident at once of the split kernel for a rectangle of `rows` rows.
    std::pair<long long, long long> split_shape(std::int64_t rows) const {
        const kernel_config* cfg = &forward_entry(rows);
        for (const auto& e : split_entries_)
            if (e.rows == cfg->rows && e.resident_warps) cfg = &e;
        return {static_cast<long long>(warp_size) * cfg->rows, cfg->resident_warps};
    }

private:
    // The forward entry for a rectangle of `rows` rows: the default (bands of 1024 rows) when it has at least half
    // as many bands as warps fit at once; else the entry with the largest bands that does (shorter rectangles, the
    // blocks the traceback recomputes, need more, thinner bands to fill the GPU); long.entry overrides.
    const kernel_config& forward_entry(std::int64_t rows) const {
        if (forced_entry_) return fwd_;
        const kernel_config* best = &fwd_;
        for (const auto& e : forward_entries_) {
            if (!e.resident_warps || e.kind != forward_x || e.rows > best->rows) continue;
            const std::int64_t bands = (rows + warp_size * e.rows - 1) / (warp_size * e.rows);
            if (2 * bands >= e.resident_warps) return e;
            best = &e;
        }
        return *best;
    }

    band_params common(const long_pair::rect& area, const long_pair::borders& b) {
        const cudaStream_t s = stream_.get();
        const std::size_t rows = static_cast<std::size_t>(area.rows()), cols = static_cast<std::size_t>(area.cols());
        const std::size_t words = 2 * (rows + cols) + 1;
        borders_ = pooled<int>(words, s);
        int* d = borders_.data();
        // One copy from pinned memory (the previous call's copy is done: every call ends with a synchronize).
        int* h = reinterpret_cast<int*>(pinned(words * sizeof(int), 0));
        std::copy(b.top_h.begin(), b.top_h.end(), h);
        std::copy(b.top_e.begin(), b.top_e.end(), h + cols + 1);
        std::copy(b.left_h.begin(), b.left_h.end(), h + 2 * cols + 1);
        std::copy(b.left_f.begin(), b.left_f.end(), h + 2 * cols + 1 + rows);
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(d, h, words * sizeof(int), cudaMemcpyHostToDevice, s));
        band_params p{};
        p.query = query_.data() + area.r0;
        p.subject = subject_.data() + area.c0;
        p.rows = area.rows();
        p.cols = area.cols();
        p.top_h = d;
        p.top_e = d + cols + 1;
        p.left_h = d + 2 * cols + 1;
        p.left_f = d + 2 * cols + 1 + rows;
        p.sigma = sigma_.data();
        p.letters = letters_;
        p.gap_oe = oe_;
        p.gap_e = ext_;
        p.K = 1;
        return p;
    }

    void launch(const kernel_config& cfg, band_params& p, const long_pair::rect& area) {
        const cudaStream_t s = stream_.get();
        const long long S = warp_size * cfg.rows;
        p.bands = (area.rows() + S - 1) / S;
        // As many warps as fit at once, spread so that every generation of bands is full.
        const long long generations = (p.bands + cfg.resident_warps - 1) / cfg.resident_warps;
        p.warps = static_cast<int>((p.bands + generations - 1) / generations);
        ring_ = pooled<int2>(static_cast<std::size_t>(p.warps) * ring_len, s);
        flags_ = pooled<unsigned long long>(static_cast<std::size_t>(2 * p.warps + 1) * flag_stride, s);
        row_buffer_ = pooled<int2>(static_cast<std::size_t>(area.cols()), s);
        SWGPU_CUDA_CHECK(cudaMemsetAsync(flags_.data(), 0, flags_.size() * sizeof(unsigned long long), s));
        p.ring = ring_.data();
        p.produced = flags_.data();
        p.consumed = flags_.data() + static_cast<std::size_t>(p.warps) * flag_stride;
        p.row_ready = flags_.data() + static_cast<std::size_t>(2 * p.warps) * flag_stride;
        p.row_buffer = row_buffer_.data();
        const int blocks = (p.warps + cfg.warps_per_block - 1) / cfg.warps_per_block;
        // Long forward passes report progress: the kernel counts chunks in device memory, read a few times a second
        // by a copy on a stream of its own while the kernel runs.
        const bool report = progress && cfg.kind != trace_kind && area.cells() >= 2e10;
        pooled<unsigned long long> done(report ? 1 : 0, s);
        if (report) SWGPU_CUDA_CHECK(cudaMemsetAsync(done.data(), 0, sizeof(unsigned long long), s));
        p.done_chunks = report ? done.data() : nullptr;
        if (profile_) profile_start_.record(s);
        cfg.kernel<<<blocks, cfg.warps_per_block * warp_size, cfg.smem, s>>>(p);
        SWGPU_CUDA_CHECK_LAUNCH("band_kernel");
        if (report) {
            const double total = double(p.bands) * double((area.cols() + 2 * warp_size - 2) / warp_size);
            cuda_event finished;
            finished.record(s);
            cuda_stream poll;
            auto* seen = reinterpret_cast<unsigned long long*>(pinned(sizeof(unsigned long long), 1));
            auto last = std::chrono::steady_clock::now();
            for (;;) {
                const cudaError_t state = cudaEventQuery(finished.get());
                if (state == cudaSuccess) break;
                if (state != cudaErrorNotReady) SWGPU_CUDA_CHECK(state);
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
                if (std::chrono::steady_clock::now() - last < std::chrono::milliseconds(250)) continue;
                last = std::chrono::steady_clock::now();
                SWGPU_CUDA_CHECK(cudaMemcpyAsync(seen, done.data(), sizeof *seen, cudaMemcpyDeviceToHost, poll.get()));
                poll.synchronize();
                progress(std::min(1.0, double(*seen) / total));
            }
        }
        if (profile_) {
            profile_end_.record(s);
            profile_end_.synchronize();
            (cfg.rows == trace_rows ? trace_kernel_ms_ : forward_kernel_ms_) += profile_end_.since(profile_start_);
        }
    }

    // Pinned host buffer `slot` (0: uploads, 1: downloads) of at least `bytes`, reused from call to call; every call
    // synchronizes its stream before it returns, so no copy from or to it is in flight when it is reused or resized.
    std::uint8_t* pinned(std::size_t bytes, int slot) {
        if (bytes > pinned_bytes_[slot]) {
            if (pinned_[slot]) (void)cudaFreeHost(pinned_[slot]);
            pinned_[slot] = nullptr;
            pinned_bytes_[slot] = 0;
            SWGPU_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned_[slot]), bytes));
            pinned_bytes_[slot] = bytes;
        }
        return pinned_[slot];
    }

public:
    // Checkpoint lines of an A x B grid over rows x cols on this backend's device (for a grid gathered here).
    std::shared_ptr<device_grid_lines> new_lines(std::int64_t A, std::int64_t B, std::int64_t rows, std::int64_t cols) {
        auto lines = std::make_shared<device_grid_lines>(A, B, rows, cols, stream_.get());
        stream_.synchronize();
        return lines;
    }

    ~gpu_backend() override {
        for (auto* p : pinned_)
            if (p) (void)cudaFreeHost(p);
        if (profile_)
            std::fprintf(stderr, "long_pair kernels: forward %.3f ms, trace %.3f ms\n", forward_kernel_ms_,
                         trace_kernel_ms_);
    }

private:
    // long.profile=1: kernel times (CUDA events) on stderr when the backend goes away, for benchmarks.
    bool profile_ = tuning::flag("long.profile", device_arch());
    cuda_event profile_start_, profile_end_;
    double forward_kernel_ms_ = 0, trace_kernel_ms_ = 0;
    std::uint8_t* pinned_[2] = {nullptr, nullptr};
    std::size_t pinned_bytes_[2] = {0, 0};
    int oe_, ext_;
    int sms_ = 0;
    int letters_ = 1;
    std::size_t budget_ = 0;
    cuda_stream stream_;
    device_buffer<std::uint8_t> query_, subject_;
    device_buffer<int> sigma_;
    pooled<int> borders_;
    pooled<int2> ring_;
    pooled<unsigned long long> flags_;
    pooled<int2> row_buffer_;
    std::vector<kernel_config> forward_entries_, split_entries_;
    bool forced_entry_ = false;
    std::size_t batch_ =
        static_cast<std::size_t>(std::max<std::int64_t>(3, tuning::integer("long.batch", device_arch())));
    kernel_config fwd_, trc_;
};

// Copies `height` rows of `width` bytes from memory of device `src_dev` to memory of device `dst_dev`. With `direct`,
// one copy through the peer mapping (the source's pool made accessible to the destination); otherwise staged through
// pinned host memory in pieces of at most 64 MiB, for devices that cannot reach each other's memory.
void copy_between_devices(int dst_dev, void* dst, std::size_t dpitch, int src_dev, const void* src, std::size_t spitch,
                          std::size_t width, std::size_t height, bool direct) {
    if (!width || !height) return;
    if (dst_dev == src_dev || direct) {
        if (height == 1) SWGPU_CUDA_CHECK(cudaMemcpy(dst, src, width, cudaMemcpyDefault));
        else SWGPU_CUDA_CHECK(cudaMemcpy2D(dst, dpitch, src, spitch, width, height, cudaMemcpyDefault));
        return;
    }
    const std::size_t cap = std::size_t(64) << 20;
    void* staging = nullptr;
    SWGPU_CUDA_CHECK(cudaMallocHost(&staging, std::min(cap, width * height)));
    const std::unique_ptr<void, void (*)(void*)> owner(staging, [](void* h) { (void)cudaFreeHost(h); });
    auto* to = static_cast<unsigned char*>(dst);
    const auto* from = static_cast<const unsigned char*>(src);
    const std::size_t piece = std::min(width, cap), rows_per = std::max<std::size_t>(1, cap / piece);
    for (std::size_t r = 0; r < height; r += rows_per) {
        const std::size_t n = std::min(rows_per, height - r);
        for (std::size_t off = 0; off < width; off += piece) {
            const std::size_t w = std::min(piece, width - off);
            use_device(src_dev);
            SWGPU_CUDA_CHECK(cudaMemcpy2D(staging, w, from + r * spitch + off, spitch, w, n, cudaMemcpyDeviceToHost));
            use_device(dst_dev);
            SWGPU_CUDA_CHECK(cudaMemcpy2D(to + r * dpitch + off, dpitch, staging, w, w, n, cudaMemcpyHostToDevice));
        }
    }
}

// Long pairs on several devices. The forward pass of a large rectangle (the whole matrix, first of all) is split by
// block columns, part i on device i; part i streams its right border to part i+1 band by band (border_exchange), so
// the parts run at once, each starting once the part to its left has swept its first band across its columns (see
// forward()). The parts' grids are then gathered into one grid on
// the first device (their right borders are the checkpoint columns between them), where everything else runs: the
// search for the end cell, the traceback and every smaller rectangle. Parts on one physical device (logical devices,
// a test option) run one after the other, in order: a persistent kernel waiting on a part that cannot get onto the
// GPU beside it would wait for ever. Output is the single device's: the grid is the same grid.
class multi_gpu_backend final : public long_pair::backend {
public:
    multi_gpu_backend(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc,
                      std::size_t device_memory, std::vector<int> devices)
        : devices_(std::move(devices)) {
        for (const int d : devices_) {
            use_device(d);
            parts_.push_back(std::make_unique<gpu_backend>(query, subject, sc, device_memory));
        }
        use_device(devices_[0]);
        std::vector<int> sorted = devices_;
        std::sort(sorted.begin(), sorted.end());
        concurrent_ = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
        // The parts' grids are gathered on the first device: directly where it can reach the other device's memory
        // (NVLink or PCIe peer access; memory from a device's stream-ordered pool is reachable from another device
        // only once the pool grants it access), else through host memory (always with long.peer=0: a test
        // option for that path on machines whose GPUs reach each other).
        const std::string arch = device_arch();
        for (const int d : devices_) {
            if (!tuning::flag("long.peer", arch)) break;
            if (d == devices_[0] || direct_.count(d)) continue;
            int can = 0;
            SWGPU_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, devices_[0], d));
            if (!can) continue;
            cudaMemPool_t pool;
            SWGPU_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, d));
            cudaMemAccessDesc access{};
            access.location.type = cudaMemLocationTypeDevice;
            access.location.id = devices_[0];
            access.flags = cudaMemAccessFlagsProtReadWrite;
            if (cudaMemPoolSetAccess(pool, &access, 1) == cudaSuccess) direct_.insert(d);
            else (void)cudaGetLastError();
        }
        split_cells_ = tuning::real("long.split_cells", arch);
        forced_split_ = tuning::flag("long.split_forced", arch);
        rows_split_ = tuning::text("long.split", arch) == "rows";
    }

    std::int64_t spacing_multiple() const override { return parts_[0]->spacing_multiple(); }
    double leaf_cells() const override { return parts_[0]->leaf_cells(); }
    std::size_t grid_budget() const override { return parts_[0]->grid_budget(); }
    std::size_t trace_batch() const override { return parts_[0]->trace_batch(); }
    void trace_rect(const long_pair::rect& area, const long_pair::borders& b, int target,
                    long_pair::trace& out) override {
        parts_[0]->trace_rect(area, b, target, out);
    }
    void trace_blocks(const long_pair::grid& g, const long_pair::borders& outer,
                      std::span<const std::pair<std::int64_t, std::int64_t>> blocks,
                      std::vector<long_pair::trace>& out) override {
        parts_[0]->trace_blocks(g, outer, blocks, out);
    }

    void forward(const long_pair::rect& area, const long_pair::borders& b, std::int64_t K,
                 long_pair::grid& g) override {
        const std::int64_t blocks = (area.cols() + K - 1) / K;
        const int n = static_cast<int>(std::min<std::int64_t>(static_cast<std::int64_t>(parts_.size()), blocks));
        parts_[0]->progress = progress;
        // A part's band b needs the left border of band b, which the part to its left has only once its band b has
        // crossed it: each part starts one band sweep after the one to its left, and n parts over G generations of
        // bands take (G + n - 1) / n of one device's time (measured, 2 GPUs, 10 Mbp: G = 5, 27.4 s against 45.4).
        // With one generation a split gains nothing (the blocks the traceback recomputes, say): those stay on the
        // first device, unless long.split_forced forces splits (tests).
        if (rows_split_ && parts_.size() >= 2 && area.cells() >= split_cells_) {
            forward_rows(area, b, K, g);
            return;
        }
        if (n < 2 || area.cells() < split_cells_ || (!forced_split_ && parts_[0]->split_generations(area.rows()) < 2)) {
            parts_[0]->forward(area, b, K, g);
            return;
        }
        const std::int64_t rows = area.rows(), cols = area.cols();
        std::vector<std::int64_t> cut(static_cast<std::size_t>(n) + 1);  // column cuts on block boundaries
        for (int i = 0; i < n; ++i) cut[static_cast<std::size_t>(i)] = area.c0 + blocks * i / n * K;
        cut[static_cast<std::size_t>(n)] = area.c1;
        // The exchanges, in mapped pinned memory: per border, H and F of every row and a flag per band (bands are at
        // least 256 rows).
        const std::size_t flags = static_cast<std::size_t>(rows / 256 + 2);
        const std::size_t per = 2 * static_cast<std::size_t>(rows) * sizeof(int) + flags * sizeof(unsigned);
        void* host = nullptr;
        SWGPU_CUDA_CHECK(cudaHostAlloc(&host, per * static_cast<std::size_t>(n - 1),
                                       cudaHostAllocMapped | cudaHostAllocPortable));
        std::unique_ptr<void, void (*)(void*)> owner(host, [](void* h) { (void)cudaFreeHost(h); });
        std::vector<border_exchange> ex(static_cast<std::size_t>(n - 1));
        for (int i = 0; i + 1 < n; ++i) {
            auto* base = static_cast<unsigned char*>(host) + per * static_cast<std::size_t>(i);
            auto& e = ex[static_cast<std::size_t>(i)];
            e.h = reinterpret_cast<int*>(base);
            e.f = e.h + rows;
            e.ready = reinterpret_cast<unsigned*>(e.f + rows);
            std::memset(e.ready, 0, flags * sizeof(unsigned));
        }
        std::vector<long_pair::grid> grids(static_cast<std::size_t>(n));
        const auto run = [&](int i) {
            const auto u = static_cast<std::size_t>(i);
            use_device(devices_[u]);
            const long_pair::rect a{area.r0, area.r1, cut[u], cut[u + 1]};
            const std::size_t off = static_cast<std::size_t>(cut[u] - area.c0), w = static_cast<std::size_t>(a.cols());
            long_pair::borders bi;
            bi.top_h.assign(b.top_h.begin() + static_cast<std::ptrdiff_t>(off), b.top_h.begin() + static_cast<std::ptrdiff_t>(off + w + 1));
            bi.top_e.assign(b.top_e.begin() + static_cast<std::ptrdiff_t>(off), b.top_e.begin() + static_cast<std::ptrdiff_t>(off + w));
            if (i == 0) {
                bi.left_h = b.left_h;
                bi.left_f = b.left_f;
            } else {
                bi.left_h.assign(static_cast<std::size_t>(rows), 0);  // streamed instead
                bi.left_f.assign(static_cast<std::size_t>(rows), 0);
            }
            parts_[u]->forward_part(a, bi, K, grids[u], i > 0 ? &ex[u - 1] : nullptr, i + 1 < n ? &ex[u] : nullptr);
        };
        if (concurrent_) {
            std::vector<std::exception_ptr> failed(static_cast<std::size_t>(n));
            std::vector<std::thread> threads;
            for (int i = 0; i < n; ++i)
                threads.emplace_back([&, i] {
                    try {
                        run(i);
                    } catch (...) {
                        failed[static_cast<std::size_t>(i)] = std::current_exception();
                    }
                });
            for (auto& t : threads) t.join();
            for (const auto& f : failed)
                if (f) std::rethrow_exception(f);
        } else {
            for (int i = 0; i < n; ++i) run(i);
        }
        // The grid, gathered on the first device.
        use_device(devices_[0]);
        g = long_pair::grid{};
        g.area = area;
        g.K = K;
        g.A = (rows + K - 1) / K;
        g.B = blocks;
        g.block_max.assign(static_cast<std::size_t>(g.A * g.B), 0);
        auto lines = parts_[0]->new_lines(g.A, g.B, rows, cols);
        for (int i = 0; i < n; ++i) {
            const auto u = static_cast<std::size_t>(i);
            const long_pair::grid& gi = grids[u];
            const std::int64_t boff = (cut[u] - area.c0) / K, wi = cut[u + 1] - cut[u];
            for (std::int64_t a = 0; a < g.A; ++a)
                for (std::int64_t bb = 0; bb < gi.B; ++bb)
                    g.block_max[static_cast<std::size_t>(a * g.B + boff + bb)] = gi.block_max[static_cast<std::size_t>(a * gi.B + bb)];
            const auto* li = dynamic_cast<const device_grid_lines*>(gi.lines.get());
            if (!li) throw runtime_failure("internal error: a long-pair part kept its grid off the device");
            const int dev = devices_[u], home = devices_[0];
            const bool direct = direct_.count(dev) > 0;
            if (g.A > 1) {
                for (auto [to, from] : {std::pair{lines->row_h.data(), li->row_h.data()}, std::pair{lines->row_e.data(), li->row_e.data()}})
                    copy_between_devices(home, to + (cut[u] - area.c0), static_cast<std::size_t>(cols) * sizeof(int), dev, from,
                                         static_cast<std::size_t>(wi) * sizeof(int), static_cast<std::size_t>(wi) * sizeof(int),
                                         static_cast<std::size_t>(g.A - 1), direct);
            }
            const std::size_t col_bytes = static_cast<std::size_t>((gi.B - 1) * rows) * sizeof(int);
            for (auto [to, from] : {std::pair{lines->col_h.data(), li->col_h.data()}, std::pair{lines->col_f.data(), li->col_f.data()}})
                copy_between_devices(home, to + boff * rows, col_bytes, dev, from, col_bytes, col_bytes, col_bytes ? 1 : 0, direct);
            use_device(home);
            if (i + 1 < n) {  // the border to the next part is the checkpoint column between them
                const std::int64_t b_line = boff + gi.B - 1;
                SWGPU_CUDA_CHECK(cudaMemcpy(lines->col_h.data() + b_line * rows, ex[u].h, static_cast<std::size_t>(rows) * sizeof(int), cudaMemcpyDefault));
                SWGPU_CUDA_CHECK(cudaMemcpy(lines->col_f.data() + b_line * rows, ex[u].f, static_cast<std::size_t>(rows) * sizeof(int), cudaMemcpyDefault));
            }
        }
        g.lines = std::move(lines);
        for (int i = 0; i < n; ++i) {  // each part's grid goes back to its own device's pool
            use_device(devices_[static_cast<std::size_t>(i)]);
            grids[static_cast<std::size_t>(i)] = long_pair::grid{};
        }
        use_device(devices_[0]);
    }

private:
    // The forward pass split by rows (long.split=rows, the default):
    // slabs of one generation of bands each (W bands of S rows, rounded down to whole block rows; K rows when splits
    // are forced, for tests), slab s on device s mod n. A slab's first band reads the slab above's bottom row as that
    // slab's last band writes it, chunk by chunk, through memory every device maps (row_exchange), so a device waits
    // for the first chunks of the slab above, not for a whole band sweep as in the column split. Each device runs its
    // slabs in order (one launch each); slab s waits only on slab s - 1, so no wait closes a cycle. The slabs' grids
    // are gathered on the first device; the row between two slabs is the checkpoint row between them.
    void forward_rows(const long_pair::rect& area, const long_pair::borders& b, std::int64_t K, long_pair::grid& g) {
        const std::int64_t rows = area.rows(), cols = area.cols();
        const auto [S, warps] = parts_[0]->split_shape(rows);
        std::int64_t height = forced_split_ ? K : std::max<std::int64_t>(K, S * warps / K * K);
        const std::int64_t slabs = (rows + height - 1) / height;
        if (slabs < 2) {
            parts_[0]->forward(area, b, K, g);
            return;
        }
        const std::size_t n = std::min(parts_.size(), static_cast<std::size_t>(slabs));
        // The exchanges, in mapped pinned memory: per boundary, H and E of every column and a counter on a line of its
        // own.
        const std::size_t per = (2 * static_cast<std::size_t>(cols) * sizeof(int) + 255) / 128 * 128;
        void* host = nullptr;
        SWGPU_CUDA_CHECK(cudaHostAlloc(&host, per * static_cast<std::size_t>(slabs - 1),
                                       cudaHostAllocMapped | cudaHostAllocPortable));
        std::unique_ptr<void, void (*)(void*)> owner(host, [](void* h) { (void)cudaFreeHost(h); });
        std::vector<row_exchange> ex(static_cast<std::size_t>(slabs - 1));
        for (std::size_t i = 0; i < ex.size(); ++i) {
            auto* base = static_cast<unsigned char*>(host) + per * i;
            ex[i].h = reinterpret_cast<int*>(base);
            ex[i].e = ex[i].h + cols;
            ex[i].ready = reinterpret_cast<unsigned long long*>(base + per - 128);
            *ex[i].ready = 0;
        }
        std::vector<long_pair::grid> grids(static_cast<std::size_t>(slabs));
        const auto run = [&](std::int64_t s) {
            const auto u = static_cast<std::size_t>(s);
            const std::size_t part = u % n;
            use_device(devices_[part]);
            const std::int64_t r0 = s * height, r1 = std::min(rows, r0 + height);
            const long_pair::rect a{area.r0 + r0, area.r0 + r1, area.c0, area.c1};
            long_pair::borders bi;
            if (s == 0) {
                bi.top_h = b.top_h;
                bi.top_e = b.top_e;
            } else {  // streamed but for the corner, H left of the row above
                bi.top_h.assign(static_cast<std::size_t>(cols) + 1, 0);
                bi.top_e.assign(static_cast<std::size_t>(cols), 0);
                bi.top_h[0] = b.left_h[static_cast<std::size_t>(r0 - 1)];
            }
            bi.left_h.assign(b.left_h.begin() + r0, b.left_h.begin() + r1);
            bi.left_f.assign(b.left_f.begin() + r0, b.left_f.begin() + r1);
            parts_[part]->forward_part(a, bi, K, grids[u], nullptr, nullptr, s > 0 ? &ex[u - 1] : nullptr,
                                       s + 1 < slabs ? &ex[u] : nullptr);
        };
        if (concurrent_) {
            std::vector<std::exception_ptr> failed(n);
            std::vector<std::thread> threads;
            for (std::size_t i = 0; i < n; ++i)
                threads.emplace_back([&, i] {
                    try {
                        for (std::int64_t s = static_cast<std::int64_t>(i); s < slabs; s += static_cast<std::int64_t>(n))
                            run(s);
                    } catch (...) {
                        failed[i] = std::current_exception();
                    }
                });
            for (auto& t : threads) t.join();
            for (const auto& f : failed)
                if (f) std::rethrow_exception(f);
        } else {
            for (std::int64_t s = 0; s < slabs; ++s) run(s);
        }
        // The grid, gathered on the first device.
        const int home = devices_[0];
        use_device(home);
        g = long_pair::grid{};
        g.area = area;
        g.K = K;
        g.A = (rows + K - 1) / K;
        g.B = (cols + K - 1) / K;
        g.block_max.assign(static_cast<std::size_t>(g.A * g.B), 0);
        auto lines = parts_[0]->new_lines(g.A, g.B, rows, cols);
        const std::size_t row_bytes = static_cast<std::size_t>(cols) * sizeof(int);
        for (std::int64_t s = 0; s < slabs; ++s) {
            const auto u = static_cast<std::size_t>(s);
            const int dev = devices_[u % n];
            const bool direct = direct_.count(dev) > 0;
            const long_pair::grid& gs = grids[u];
            const std::int64_t a0 = s * height / K, slab_rows = gs.area.rows();
            std::copy(gs.block_max.begin(), gs.block_max.end(),
                      g.block_max.begin() + static_cast<std::ptrdiff_t>(a0 * g.B));
            const auto* ls = dynamic_cast<const device_grid_lines*>(gs.lines.get());
            if (!ls) throw runtime_failure("internal error: a long-pair slab kept its grid off the device");
            if (gs.A > 1) {
                const std::size_t bytes = static_cast<std::size_t>(gs.A - 1) * row_bytes;
                copy_between_devices(home, lines->row_h.data() + a0 * cols, bytes, dev, ls->row_h.data(), bytes, bytes, 1,
                                     direct);
                copy_between_devices(home, lines->row_e.data() + a0 * cols, bytes, dev, ls->row_e.data(), bytes, bytes, 1,
                                     direct);
            }
            if (s + 1 < slabs) {  // the row handed to the slab below is the checkpoint row between them
                const std::int64_t line = a0 + gs.A - 1;
                use_device(home);
                SWGPU_CUDA_CHECK(cudaMemcpy(lines->row_h.data() + line * cols, ex[u].h, row_bytes, cudaMemcpyDefault));
                SWGPU_CUDA_CHECK(cudaMemcpy(lines->row_e.data() + line * cols, ex[u].e, row_bytes, cudaMemcpyDefault));
            }
            if (g.B > 1) {
                const std::size_t width = static_cast<std::size_t>(slab_rows) * sizeof(int);
                for (auto [to, from] : {std::pair{lines->col_h.data(), ls->col_h.data()}, std::pair{lines->col_f.data(), ls->col_f.data()}})
                    copy_between_devices(home, to + s * height, static_cast<std::size_t>(rows) * sizeof(int), dev, from,
                                         width, width, static_cast<std::size_t>(g.B - 1), direct);
            }
            use_device(home);
        }
        g.lines = std::move(lines);
        for (std::int64_t s = 0; s < slabs; ++s) {  // each slab's grid goes back to its own device's pool
            use_device(devices_[static_cast<std::size_t>(s) % n]);
            grids[static_cast<std::size_t>(s)] = long_pair::grid{};
        }
        use_device(home);
    }

    std::vector<int> devices_;
    std::vector<std::unique_ptr<gpu_backend>> parts_;
    std::set<int> direct_;  // devices whose memory the first device reaches directly
    bool concurrent_ = false;
    double split_cells_ = 1e9;  // smaller rectangles stay on the first device (long.split_cells)
    bool forced_split_ = false;  // long.split_forced (tests): split whatever the generations
    // By rows into slabs (forward_rows), unless long.split=columns asks for the split by columns (forward):
    // measured on 2 and 4 H100s for a 10 Mbp pair, the row split's forward pass took 27.3 and 15.9 s against the
    // column split's 29.1 and 19.0 s (data/tuning.tsv).
    bool rows_split_ = true;
};

}  // namespace

std::unique_ptr<long_pair::backend> long_pair_backend(std::span<const std::uint8_t> query,
                                                      std::span<const std::uint8_t> subject, const scoring& sc,
                                                      std::size_t device_memory, std::vector<int> devices) {
    if (devices.size() > 1) return std::make_unique<multi_gpu_backend>(query, subject, sc, device_memory, std::move(devices));
    return std::make_unique<gpu_backend>(query, subject, sc, device_memory);
}

}  // namespace swgpu::gpu
