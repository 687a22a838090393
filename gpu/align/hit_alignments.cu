// Alignments of pairs whose best local score is known (gpu.hpp: align_scored): the alignment sw_align gives, computed
// on the GPU for many pairs at once, so that printing alignments costs the CPU next to nothing.
//
// Recurrence, end cell and traceback preferences are those of core/align/smith_waterman.hpp. One kernel per batch, blocks
// of 8 warps; a pair is filled by a group of 1, 2, 4 or 8 warps of one block (about two strips per warp), then walked.
//
//   fill   The query is cut into strips of 32 x R rows (R = 4); strip t goes to warp t % width of the pair's group.
//          Lane l holds rows l·R .. l·R + R - 1 of the strip and sweeps the subject one column per step, lane l at
//          column step - l (a wavefront down the lanes): H and E go down the lanes by shuffle, and between strips
//          through the border row of the warp that computed the strip above (protocol at fill_kernel). σ comes from
//          a per-warp profile in shared memory: one word per (subject letter, lane) holding the lane's R scores. Every
//          cell gets 4 trace bits (8 columns per 32-bit word; a lane's R words side by side, one 16-byte store):
//            bit 0     H == H[i-1][j-1] + σ (the diagonal, the traceback's first preference);
//            bit 1     H == E (its second; else H == F);
//            bit 2     E opened here (E == H[i-1][j] - o - e), else extended from the cell above;
//            bit 3     F opened here (F == H[i][j-1] - o - e), else extended from the cell to the left.
//          After each strip the warp looks for the end cell, the first cell in row-major order with H == score; the
//          first strip with one ends the pair. A cell above the score in the rows up to the end cell's means the
//          score is not the pair's best: the pair is reported as not aligned (status not_best), as sw_align_scored
//          reports it, and the caller's CPU check then says what is wrong.
//   walk   After the block's barrier one thread per pair walks the bits from the end cell, as sw_traceback walks H, E
//          and F, tracking the value of its state so that it knows where H is 0. It writes the operations as runs
//          (op << 30 | length, last run first) into its scratch, then copies them into one packed array at an offset
//          taken with atomicAdd, so that only what was produced comes back. The walks of early blocks overlap the
//          fill of later ones.
//
// Memory per pair: the trace (whole strips by ceil(n / 8) words), a border row per warp (n int2), the scratch (m + n
// words) and the packed runs, all in one allocation from the device's stream-ordered pool; pairs are taken in
// batches that fit the budget, largest first. Scores are exact 32-bit integers; pairs whose scores could come near
// 2^27 (far beyond any real pair) are left to the caller.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/gpu.hpp"

namespace swgpu::gpu {
namespace {

constexpr int rows_per_lane = 4;                  // R (a lane stores its R trace words as one uint4)
constexpr int strip_rows = 32 * rows_per_lane;
constexpr int fill_warps = 8;                     // warps per block of the fill kernel
constexpr int minus_infinity = -(1 << 28);        // E and F outside the matrix; - e per column stays far from INT_MIN
constexpr unsigned full_mask = 0xffffffffu;

struct pair_job {
    std::uint64_t query = 0, subject = 0;  // offsets into the residue buffer
    std::uint64_t trace = 0;               // offset of the trace in words (see trace_word)
    std::uint64_t border = 0;              // offset of the border row (n entries)
    std::uint64_t scratch = 0;             // offset of the run scratch (m + n words)
    std::uint32_t m = 0, n = 0;
    int score = 0;
};

enum : int { aligned = 0, not_best = 1, lost = 2 };

// Trace layout, per strip of strip_rows rows: for each group of 8 columns, for each lane, the words of its R rows side
// by side (so that a lane stores them at once). The first of the R words of (strip, column j, lane).
__host__ __device__ __forceinline__ std::size_t trace_word(std::size_t strip, std::size_t j, std::size_t lane,
                                                           std::size_t stride) {
    return strip * stride * strip_rows + ((j >> 3) * 32 + lane) * rows_per_lane;
}
// Words of a pair's trace: whole strips by ceil(n / 8) column groups.
__host__ __device__ __forceinline__ std::size_t trace_words_of(std::size_t m, std::size_t n) {
    return (m + strip_rows - 1) / strip_rows * strip_rows * ((n + 7) / 8);
}

struct pair_result {
    int status = lost;
    int end_i = -1, end_j = -1;
    int begin_i = -1, begin_j = -1;
    std::uint32_t runs = 0, offset = 0;
};

// Appends one operation to the runs being built (op codes: 0 = M, 1 = I, 2 = D; a run is op << 30 | length).
__device__ __forceinline__ void emit(std::uint32_t* runs, std::uint32_t& count, std::uint32_t& op, std::uint32_t& len,
                                     std::uint32_t next) {
    if (next == op) {
        ++len;
        return;
    }
    if (len) runs[count++] = op << 30 | len;
    op = next;
    len = 1;
}

// The traceback of one pair from its end cell (res.end_i, res.end_j), by one thread. The walk knows the value of the
// state it is in (H at the end cell is the score; a diagonal step subtracts σ, leaving a gap adds o + e when it was
// opened there, e when extended), so H == 0, where the alignment starts, needs no bit.
__device__ void walk(const pair_job& job, const std::uint32_t* __restrict__ trace,
                     const std::uint8_t* __restrict__ residues, const int* sigma, int open_extend, int extend,
                     pair_result& res, std::uint32_t* __restrict__ scratch, std::uint32_t* __restrict__ packed,
                     unsigned* __restrict__ packed_used) {
    const std::uint8_t* q = residues + job.query;
    const std::uint8_t* s = residues + job.subject;
    const std::size_t stride = (job.n + 7) / 8;
    const std::uint32_t* tr = trace + job.trace;
    std::uint32_t* runs = scratch + job.scratch;
    std::uint32_t n_runs = 0, op = 3, len = 0;
    int i = res.end_i, j = res.end_j, state = 0;  // 0: H, 1: E, 2: F
    int value = job.score;
    for (;;) {
        if (value < 0 || (state != 0 && value == 0)) {  // only a broken trace gets here
            res.status = lost;
            break;
        }
        if (state == 0 && value == 0) break;
        const std::uint32_t cell =
            (tr[trace_word(i / strip_rows, j, (i % strip_rows) / rows_per_lane, stride) + i % rows_per_lane] >>
             ((j & 7) * 4)) &
            15u;
        if (state == 0) {
            if (cell & 1u) {
                emit(runs, n_runs, op, len, 0);
                value -= sigma[q[i] * 32 + s[j]];
                --i;
                --j;
                if (i < 0 || j < 0) break;
            } else {
                state = cell & 2u ? 1 : 2;
            }
        } else if (state == 1) {
            emit(runs, n_runs, op, len, 1);
            value += cell & 4u ? open_extend : extend;
            if (cell & 4u) state = 0;
            if (--i < 0) {
                res.status = lost;
                break;
            }
        } else {
            emit(runs, n_runs, op, len, 2);
            value += cell & 8u ? open_extend : extend;
            if (cell & 8u) state = 0;
            if (--j < 0) {
                res.status = lost;
                break;
            }
        }
    }
    if (len) runs[n_runs++] = op << 30 | len;
    if (res.status == aligned) {
        res.begin_i = i + 1;
        res.begin_j = j + 1;
        res.runs = n_runs;
        res.offset = atomicAdd(packed_used, n_runs);
        for (std::uint32_t k = 0; k < n_runs; ++k) packed[res.offset + k] = runs[k];
    }
}

// The warps of a fill block: warp_task[block * block_warps + warp]. A pair's strips go round its `width` warps (rank r
// takes strips r, r + width, ...); job < 0: an idle warp.
struct warp_task {
    int job = -1;
    int rank = 0, width = 1;
};

// The flags warps exchange in shared memory, read and written atomically.
__device__ __forceinline__ int load_flag(int* p) { return atomicOr(p, 0); }

// Synchronization protocol of the warps of one pair (width > 1). Strip t is computed by warp t % width of the group
// from the border row that warp (t - 1) % width, its producer, writes for strip t - 1 (each warp writes its own row of
// n entries, in global memory). The producer's lane 31 writes column j of its row, and after every 32 columns (and
// the last) fences the block and raises progress[producer] to k·n + columns written, k counting that warp's strips;
// the consumer, before each 32-column chunk, waits until that counter covers the chunk, fences, and reads the chunk
// past L1. A producer never overwrites a column its consumer has yet to read: writing column j of strip t + width
// needs column j of strip t + width - 1, which transitively needs the consumer's column j of strip t + 1, computed
// after reading it. The first strip with an event (the end cell found, or a cell above the score) is recorded in
// event_strip[group] by atomicMin; strips finish in order, and a warp gives up a strip beyond a recorded event, also
// while it waits (its producer may have stopped), so no warp waits forever.
__global__ void __launch_bounds__(32 * fill_warps, 4)
    fill_kernel(const pair_job* __restrict__ jobs, const warp_task* __restrict__ tasks,
                const std::uint8_t* __restrict__ residues, const std::int8_t* __restrict__ matrix, int open_extend,
                int extend, std::uint32_t* __restrict__ trace, int2* __restrict__ border,
                pair_result* __restrict__ results, std::uint32_t* __restrict__ scratch,
                std::uint32_t* __restrict__ packed, unsigned* __restrict__ packed_used) {
    __shared__ int sigma[32 * 32];
    // Per warp, its lanes' query profile for the strip: profile[warp][letter][lane] = σ(query row, letter) of the
    // lane's R rows, one signed byte each (rows past the query score -128: no H there can reach the score, see
    // below), so a step reads one conflict-free word.
    __shared__ std::uint32_t profile[fill_warps][32][32];
    __shared__ int progress[fill_warps];
    __shared__ int event_strip[fill_warps];  // indexed by the group's first warp
    __shared__ int event_kind[fill_warps], event_row[fill_warps], event_col[fill_warps];
    const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31);
    for (int k = threadIdx.x; k < 32 * 32; k += blockDim.x) sigma[k] = matrix[k];
    if (lane == 0) {
        progress[warp] = 0;
        event_strip[warp] = INT_MAX;
    }
    __syncthreads();
    const warp_task task = tasks[blockIdx.x * fill_warps + warp];
    const int group = warp - task.rank, width = task.width;
    if (task.job >= 0) {
        const pair_job job = jobs[task.job];
        const std::uint8_t* q = residues + job.query;
        const std::uint8_t* s = residues + job.subject;
        const int m = static_cast<int>(job.m), n = static_cast<int>(job.n), score = job.score;
        const std::size_t stride = (job.n + 7) / 8;
        std::uint32_t* tr = trace + job.trace;
        const int producer_rank = (task.rank + width - 1) % width;
        int2* own = border + job.border + static_cast<std::size_t>(task.rank) * job.n;
        const int2* from = border + job.border + static_cast<std::size_t>(producer_rank) * job.n;
        const int strips = (m + strip_rows - 1) / strip_rows;
        for (int t = task.rank, k_own = 0; t < strips; t += width, ++k_own) {
            if (__shfl_sync(full_mask, lane == 0 ? load_flag(&event_strip[group]) : 0, 0) < t) break;
            const int i0 = t * strip_rows, my0 = i0 + lane * rows_per_lane;
            const bool last_strip = t == strips - 1;
            const int k_from = (t - 1) / width;  // the producer's count of strips before strip t - 1
            std::uint32_t* const strip_trace = tr + trace_word(t, 0, lane, stride);
            int diag[rows_per_lane], left[rows_per_lane], f[rows_per_lane], first[rows_per_lane], top[rows_per_lane];
            std::uint32_t word[rows_per_lane];
            __syncwarp();  // the previous strip's profile is no longer read
            {
                int qrow[rows_per_lane];
#pragma unroll
                for (int r = 0; r < rows_per_lane; ++r) qrow[r] = my0 + r < m ? q[my0 + r] * 32 : -1;
                for (int a = 0; a < 32; ++a) {
                    std::uint32_t packed = 0;
#pragma unroll
                    for (int r = 0; r < rows_per_lane; ++r) {
                        const int v = qrow[r] < 0 ? -128 : sigma[qrow[r] + a];
                        packed |= (static_cast<std::uint32_t>(v) & 0xffu) << (8 * r);
                    }
                    profile[warp][a][lane] = packed;
                }
            }
            __syncwarp();
#pragma unroll
            for (int r = 0; r < rows_per_lane; ++r) {
                diag[r] = 0;
                left[r] = 0;
                f[r] = minus_infinity;
                first[r] = INT_MAX;
                top[r] = 0;
                word[r] = 0;
            }
            int in_h = 0, in_e = minus_infinity, chunk_h = 0, chunk_e = minus_infinity;
            bool gave_up = false;
            int next_code = lane == 0 ? s[0] : 0;  // the subject letter of the lane's next column, loaded a step ahead
            for (int step = 0; step < n + 31; ++step) {
                if ((step & 31) == 0 && step < n && t > 0) {  // lane 0 enters the next 32 columns: fetch them
                    if (width > 1) {
                        const int need = k_from * n + min(step + 32, n);
                        for (unsigned spins = 0;; ++spins) {
                            const int have = __shfl_sync(full_mask, lane == 0 ? load_flag(&progress[group + producer_rank]) : 0, 0);
                            if (have >= need) break;
                            const int stop = __shfl_sync(full_mask, lane == 0 ? load_flag(&event_strip[group]) : 0, 0);
                            if (stop < t) {
                                gave_up = true;
                                break;
                            }
                            if (spins > 4) __nanosleep(64);
                        }
                        if (gave_up) break;
                        __threadfence_block();
                    }
                    if (step + lane < n) {
                        const int2 b = __ldcg(from + step + lane);
                        chunk_h = b.x;
                        chunk_e = b.y;
                    }
                }
                const int top_h = __shfl_sync(full_mask, chunk_h, step & 31);
                const int top_e = __shfl_sync(full_mask, chunk_e, step & 31);
                if (lane == 0 && t > 0) {
                    in_h = top_h;
                    in_e = top_e;
                }
                const int j = step - lane;
                const int code = next_code;
                if (j + 1 >= 0 && j + 1 < n) next_code = s[j + 1];
                int out_h = 0, out_e = minus_infinity;
                if (j >= 0 && j < n) {
                    const std::uint32_t row_scores = profile[warp][code][lane];
                    int up = in_h, e = in_e;
                    bool e_opened = e == up - open_extend;  // E of the first row, from the lane above
                    const bool store = (j & 7) == 7 || j == n - 1;
                    const int shift = (j & 7) * 4;
#pragma unroll
                    for (int r = 0; r < rows_per_lane; ++r) {
                        const int hd = diag[r] + static_cast<int>(static_cast<std::int8_t>(row_scores >> (8 * r)));
                        const int f_open = left[r] - open_extend, f_extend = f[r] - extend;
                        f[r] = max(f_extend, f_open);
                        const int h = max(e, max(max(hd, 0), f[r]));  // e last: it is the chain down the rows
                        const std::uint32_t bits = (h == hd ? 1u : 0u) | (h == e ? 2u : 0u) | (e_opened ? 4u : 0u) |
                                                   (f_open >= f_extend ? 8u : 0u);
                        word[r] |= bits << shift;
                        // Rows past the query (σ = -128) never reach the score unless a real row above or to
                        // the left exceeded it first: their H, E and F all derive from smaller real values.
                        first[r] = min(first[r], h == score ? j : INT_MAX);
                        top[r] = max(top[r], h);
                        diag[r] = up;
                        left[r] = h;
                        const int e_open = h - open_extend, e_extend = e - extend;
                        e = max(e_extend, e_open);
                        e_opened = e_open >= e_extend;
                        up = h;
                    }
                    if (store) {  // the lane's R words of this column group side by side: one 16-byte store
                        *reinterpret_cast<uint4*>(strip_trace + (j >> 3) * (32 * rows_per_lane)) =
                            make_uint4(word[0], word[1], word[2], word[3]);
#pragma unroll
                        for (int r = 0; r < rows_per_lane; ++r) word[r] = 0;
                    }
                    out_h = up;
                    out_e = e;
                    if (lane == 31 && !last_strip) {
                        own[j] = make_int2(out_h, out_e);
                        if (width > 1 && ((j & 31) == 31 || j == n - 1)) {
                            __threadfence_block();
                            atomicExch(&progress[warp], k_own * n + j + 1);
                        }
                    }
                }
                in_h = __shfl_up_sync(full_mask, out_h, 1);
                in_e = __shfl_up_sync(full_mask, out_e, 1);
                if (lane == 0) {
                    in_h = 0;
                    in_e = minus_infinity;
                }
            }
            if (gave_up) break;
            __syncwarp();  // with width 1, lane 31's border row is read by lane 0 in the next strip
            // The end cell: the first row of the strip with H == score, at its first such column.
            int found_row = INT_MAX, found_col = 0, bad = INT_MAX;  // bad: the first row with H > score
#pragma unroll
            for (int r = rows_per_lane - 1; r >= 0; --r) {
                if (first[r] != INT_MAX) {
                    found_row = my0 + r;
                    found_col = first[r];
                }
                if (top[r] > score) bad = my0 + r;
            }
            const int row = static_cast<int>(__reduce_min_sync(full_mask, static_cast<unsigned>(found_row)));
            const int worst = static_cast<int>(__reduce_min_sync(full_mask, static_cast<unsigned>(bad)));
            const bool bad_first = worst != INT_MAX && worst <= row;
            if (bad_first || row != INT_MAX) {
                const int col = row == INT_MAX ? 0 : __shfl_sync(full_mask, found_col, ((row - i0) / rows_per_lane) & 31);
                if (lane == 0) {
                    event_kind[warp] = bad_first ? not_best : aligned;
                    event_row[warp] = row;
                    event_col[warp] = col;
                    __threadfence_block();
                    atomicMin(&event_strip[group], t);
                }
                break;
            }
        }
    }
    __syncthreads();
    if (task.job >= 0 && task.rank == 0 && lane == 0) {
        pair_result res;
        res.status = not_best;
        const int e = event_strip[group];
        if (e != INT_MAX) {
            const int w = group + e % width;
            res.status = event_kind[w];
            if (res.status == aligned) {
                res.end_i = event_row[w];
                res.end_j = event_col[w];
            }
        }
        // The traceback, here: the barrier above made the group's trace visible, and the walks of early blocks
        // overlap the fill of later ones.
        if (res.status == aligned)
            walk(jobs[task.job], trace, residues, sigma, open_extend, extend, res, scratch, packed, packed_used);
        results[task.job] = res;
    }
}

// The warps that share a pair of m rows: enough that each takes about two strips, at most a block.
int warps_for(std::size_t m) {
    const std::size_t strips = (m + strip_rows - 1) / strip_rows;
    int w = 1;
    while (w < fill_warps && strips > std::size_t(2 * w)) w *= 2;
    return w;
}

// Steps (columns) the warps of a pair sweep, first to last: its rounds of strips plus the lag of each warp behind the
// one before (a chunk of 32 columns and the 32 lanes).
double pair_steps(const pair_job& job) {
    const int w = warps_for(job.m);
    const double strips = (job.m + strip_rows - 1) / strip_rows;
    return std::ceil(strips / w) * (job.n + 31.0) + (w - 1) * 64.0;
}

// Warps of the fill kernel, fill_warps per block: the pairs of the widest groups first, each group's pairs longest
// first, blocks then ordered by their longest pair so that the longest start first.
std::vector<warp_task> plan_warps(const std::vector<pair_job>& jobs) {
    std::vector<int> order(jobs.size()), width(jobs.size());
    std::vector<double> steps(jobs.size());
    for (std::size_t k = 0; k < jobs.size(); ++k) {
        width[k] = warps_for(jobs[k].m);
        steps[k] = pair_steps(jobs[k]);
    }
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return width[a] != width[b] ? width[a] > width[b] : steps[a] > steps[b];
    });
    std::vector<warp_task> tasks;
    std::vector<double> block_steps;
    for (const int k : order) {
        const int w = width[k];
        if (tasks.size() % fill_warps == 0) block_steps.push_back(0);
        // widths are powers of two taken widest first: a group never straddles two blocks
        for (int r = 0; r < w; ++r) tasks.push_back({k, r, w});
        block_steps.back() = std::max(block_steps.back(), steps[k]);
    }
    while (tasks.size() % fill_warps) tasks.push_back({});
    std::vector<int> blocks(tasks.size() / fill_warps);
    std::iota(blocks.begin(), blocks.end(), 0);
    std::stable_sort(blocks.begin(), blocks.end(), [&](int a, int b) { return block_steps[a] > block_steps[b]; });
    std::vector<warp_task> ordered;
    ordered.reserve(tasks.size());
    for (const int b : blocks) ordered.insert(ordered.end(), tasks.begin() + b * fill_warps, tasks.begin() + (b + 1) * fill_warps);
    return ordered;
}

// Bytes of device memory one pair needs.
std::size_t pair_bytes(std::size_t m, std::size_t n) {
    return trace_words_of(m, n) * 4 + warps_for(m) * n * sizeof(int2) + 2 * (m + n) * 4 + m + n + sizeof(pair_job) +
           sizeof(pair_result) + fill_warps * sizeof(warp_task);
}

// Waits for the stream without spinning a CPU core (the CPU threads align other pairs meanwhile).
void wait_blocking(cudaStream_t stream) {
    cudaEvent_t done;
    SWGPU_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventBlockingSync | cudaEventDisableTiming));
    const cudaError_t recorded = cudaEventRecord(done, stream);
    const cudaError_t waited = recorded == cudaSuccess ? cudaEventSynchronize(done) : recorded;
    (void)cudaEventDestroy(done);
    SWGPU_CUDA_CHECK(waited);
}

// Offsets of the buffers of a batch inside one allocation, each aligned to 256 bytes.
struct device_layout {
    std::size_t bytes = 0;
    template <class T>
    std::size_t add(std::size_t count) {
        const std::size_t at = bytes;
        bytes += (count * sizeof(T) + 255) / 256 * 256;
        return at;
    }
};

// Device memory from the stream-ordered pool, given back to it (not to the system) when the stream gets there.
class stream_allocation {
public:
    stream_allocation(std::size_t bytes, cudaStream_t stream) : stream_(stream) {
        SWGPU_CUDA_CHECK(cudaMallocAsync(&ptr_, std::max<std::size_t>(bytes, 256), stream));
    }
    stream_allocation(const stream_allocation&) = delete;
    stream_allocation& operator=(const stream_allocation&) = delete;
    ~stream_allocation() { (void)cudaFreeAsync(ptr_, stream_); }
    void* get() const { return ptr_; }

private:
    void* ptr_ = nullptr;
    cudaStream_t stream_;
};

// The pairs of a batch as the kernels see them: each sequence once in the residue buffer (a query is shared by its
// hits), and where each pair's trace, border columns and scratch go.
struct batch_plan {
    std::vector<pair_job> jobs;
    std::vector<std::span<const std::uint8_t>> sequences;  // in the residue buffer's order
    std::uint64_t residue_bytes = 0, trace_words = 0, border = 0, scratch = 0;
};

batch_plan plan_batch(std::span<const scored_pair> pairs, std::span<const std::size_t> batch) {
    batch_plan p;
    p.jobs.resize(batch.size());
    std::unordered_map<const std::uint8_t*, std::uint64_t> placed;
    placed.reserve(2 * batch.size());
    const auto place = [&](std::span<const std::uint8_t> seq) {
        const auto [it, fresh] = placed.try_emplace(seq.data(), p.residue_bytes);
        if (fresh) {
            p.sequences.push_back(seq);
            p.residue_bytes += seq.size();
        }
        return it->second;
    };
    for (std::size_t k = 0; k < batch.size(); ++k) {
        const scored_pair& pr = pairs[batch[k]];
        pair_job& job = p.jobs[k];
        job.m = static_cast<std::uint32_t>(pr.query.size());
        job.n = static_cast<std::uint32_t>(pr.subject.size());
        job.score = pr.score;
        job.query = place(pr.query);
        job.subject = place(pr.subject);
        job.trace = p.trace_words;
        p.trace_words += trace_words_of(job.m, job.n);
        job.border = p.border;
        p.border += std::uint64_t(warps_for(job.m)) * job.n;
        job.scratch = p.scratch;
        p.scratch += job.m + job.n;
    }
    return p;
}

// Offsets of a batch's buffers in its one device allocation: the inputs first (staged in one host buffer and copied
// with one call), then what the kernel writes.
struct batch_layout {
    device_layout layout;
    std::size_t jobs = 0, tasks = 0, matrix = 0, residues = 0, inputs = 0;
    std::size_t results = 0, border = 0, trace = 0, scratch = 0, packed = 0;
    batch_layout(const batch_plan& p, std::size_t task_count) {
        jobs = layout.add<pair_job>(p.jobs.size());
        tasks = layout.add<warp_task>(task_count);
        matrix = layout.add<std::int8_t>(32 * 32);
        residues = layout.add<std::uint8_t>(p.residue_bytes);
        inputs = layout.bytes;
        results = layout.add<pair_result>(p.jobs.size());
        border = layout.add<int2>(p.border);
        trace = layout.add<std::uint32_t>(p.trace_words);
        scratch = layout.add<std::uint32_t>(p.scratch);
        packed = layout.add<std::uint32_t>(p.scratch + 1);
    }
};

// The host buffer of a batch's inputs, laid out as on the device (not zeroed).
std::unique_ptr<unsigned char[]> stage_inputs(const batch_plan& p, const std::vector<warp_task>& tasks,
                                              const batch_layout& at, const scoring& sc) {
    std::unique_ptr<unsigned char[]> staged(new unsigned char[at.inputs]);
    std::memcpy(staged.get() + at.jobs, p.jobs.data(), p.jobs.size() * sizeof(pair_job));
    std::memcpy(staged.get() + at.tasks, tasks.data(), tasks.size() * sizeof(warp_task));
    std::memcpy(staged.get() + at.matrix, sc.matrix.table().data(), 32 * 32);
    for (std::size_t k = 0, o = at.residues; k < p.sequences.size(); o += p.sequences[k].size(), ++k)
        std::memcpy(staged.get() + o, p.sequences[k].data(), p.sequences[k].size());
    return staged;
}

// The alignments the kernel found (status aligned), from its results and the packed runs of operations; the others
// are left to the caller.
void unpack_alignments(const batch_plan& p, const std::vector<pair_result>& results,
                       const std::vector<std::uint32_t>& packed, std::span<const std::size_t> batch,
                       std::vector<std::optional<alignment>>& out) {
    static constexpr char ops[] = {'M', 'I', 'D'};
    for (std::size_t k = 0; k < batch.size(); ++k) {
        const pair_result& r = results[k];
        if (r.status != aligned) continue;  // left to the caller
        alignment a;
        a.score = p.jobs[k].score;
        a.query_begin = r.begin_i;
        a.query_end = r.end_i;
        a.subject_begin = r.begin_j;
        a.subject_end = r.end_j;
        a.ops.reserve(r.runs);
        for (std::uint32_t x = r.runs; x-- > 0;) {
            const std::uint32_t run = packed[r.offset + x];
            const std::uint32_t code = run >> 30;
            if (code > 2) throw runtime_failure("internal error: the GPU traceback wrote an unknown operation");
            a.ops.push_back({ops[code], run & ((1u << 30) - 1)});
        }
        out[batch[k]] = std::move(a);
    }
}

// One batch: pairs[k] for k in `batch` (indices into pairs), results into out.
void align_batch(std::span<const scored_pair> pairs, std::span<const std::size_t> batch, const scoring& sc,
                 std::vector<std::optional<alignment>>& out, cudaStream_t stream, align_timing* timing) {
    const auto start = std::chrono::steady_clock::now();
    const batch_plan plan = plan_batch(pairs, batch);
    const std::vector<warp_task> tasks = plan_warps(plan.jobs);
    // One device allocation from the stream's memory pool (reserve_align_memory keeps it mapped) for everything.
    const batch_layout lay(plan, tasks.size());
    const std::unique_ptr<unsigned char[]> staged = stage_inputs(plan, tasks, lay, sc);
    const stream_allocation memory(lay.layout.bytes, stream);
    const auto at = [&](std::size_t offset) { return static_cast<unsigned char*>(memory.get()) + offset; };
    auto* d_results = reinterpret_cast<pair_result*>(at(lay.results));
    auto* d_packed = reinterpret_cast<std::uint32_t*>(at(lay.packed));
    SWGPU_CUDA_CHECK(cudaMemcpyAsync(memory.get(), staged.get(), lay.inputs, cudaMemcpyHostToDevice, stream));
    SWGPU_CUDA_CHECK(cudaMemsetAsync(d_packed, 0, sizeof(std::uint32_t), stream));  // the used count
    cuda_event before_fill, after_fill;
    if (timing) {
        timing->prepare_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        before_fill.record(stream);
    }
    fill_kernel<<<static_cast<unsigned>(tasks.size() / fill_warps), 32 * fill_warps, 0, stream>>>(
        reinterpret_cast<const pair_job*>(at(lay.jobs)), reinterpret_cast<const warp_task*>(at(lay.tasks)),
        reinterpret_cast<const std::uint8_t*>(at(lay.residues)), reinterpret_cast<const std::int8_t*>(at(lay.matrix)),
        sc.gaps.first(), sc.gaps.extend, reinterpret_cast<std::uint32_t*>(at(lay.trace)),
        reinterpret_cast<int2*>(at(lay.border)), d_results, reinterpret_cast<std::uint32_t*>(at(lay.scratch)),
        d_packed + 1, d_packed);
    SWGPU_CUDA_CHECK_LAUNCH("fill_kernel");
    if (timing) after_fill.record(stream);
    std::vector<pair_result> results(batch.size());
    std::uint32_t used = 0;
    SWGPU_CUDA_CHECK(cudaMemcpyAsync(results.data(), d_results, results.size() * sizeof(pair_result),
                                     cudaMemcpyDeviceToHost, stream));
    SWGPU_CUDA_CHECK(cudaMemcpyAsync(&used, d_packed, sizeof used, cudaMemcpyDeviceToHost, stream));
    wait_blocking(stream);
    if (timing) {
        timing->kernel_s += after_fill.since(before_fill) / 1e3;
        ++timing->batches;
        timing->pairs += batch.size();
        for (const auto& job : plan.jobs) timing->cells += double(job.m) * double(job.n);
    }
    std::vector<std::uint32_t> packed(used);
    if (used) {
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(packed.data(), d_packed + 1, used * sizeof(std::uint32_t),
                                         cudaMemcpyDeviceToHost, stream));
        wait_blocking(stream);
    }
    unpack_alignments(plan, results, packed, batch, out);
}

}  // namespace

namespace detail {
void load_align_kernels() {
    cudaFuncAttributes attributes;
    SWGPU_CUDA_CHECK(cudaFuncGetAttributes(&attributes, fill_kernel));
}

void reserve_align_memory(std::size_t bytes) {
    int device = 0;
    SWGPU_CUDA_CHECK(cudaGetDevice(&device));
    cudaMemPool_t pool;
    SWGPU_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    std::uint64_t keep = bytes;
    SWGPU_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    if (bytes == 0) return;
    cuda_stream stream;
    const stream_allocation mapped(bytes, stream.get());
    (void)mapped;
}
}  // namespace detail

std::vector<std::optional<alignment>> align_scored(std::span<const scored_pair> pairs, const scoring& sc,
                                                   std::size_t device_memory, align_timing* timing) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::optional<alignment>> out(pairs.size());
    std::size_t budget = device_memory;
    if (budget == 0) {
        std::size_t free_bytes = 0, total_bytes = 0;
        SWGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        budget = free_bytes - std::min(free_bytes / 8, std::size_t(1) << 30);
    }
    // The pairs the kernels take, largest first (their warps start first and finish last).
    std::vector<std::size_t> order;
    const int max_sigma = std::max(1, sc.matrix.max_score());
    for (std::size_t k = 0; k < pairs.size(); ++k) {
        const scored_pair& pr = pairs[k];
        if (pr.score == 0) {
            out[k] = alignment{};
            continue;
        }
        const std::size_t m = pr.query.size(), n = pr.subject.size();
        if (pr.score < 0 || m == 0 || n == 0) continue;
        const double bound = static_cast<double>(std::min(m, n)) * max_sigma;
        if (bound >= double(1 << 27) || m > INT_MAX / 2 || n > INT_MAX / 2 || pair_bytes(m, n) > budget) continue;
        order.push_back(k);
    }
    const auto cells = [&](std::size_t k) { return double(pairs[k].query.size()) * double(pairs[k].subject.size()); };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cells(a) > cells(b); });
    if (order.empty()) return out;
    // Batches within the budget, largest pairs first. Out of device memory, the rest goes again with half the budget
    // (three times), then is left to the caller, as is a pair that does not fit the budget on its own.
    cuda_stream stream;
    int retries = 0;
    for (std::size_t first = 0; first < order.size();) {
        std::vector<std::size_t> batch;
        std::size_t last = first, bytes = 0;
        for (; last < order.size(); ++last) {
            const auto& pr = pairs[order[last]];
            const std::size_t b = pair_bytes(pr.query.size(), pr.subject.size());
            if (b > budget) continue;  // left to the caller
            if (!batch.empty() && bytes + b > budget) break;
            bytes += b;
            batch.push_back(order[last]);
        }
        try {
            if (!batch.empty()) align_batch(pairs, batch, sc, out, stream.get(), timing);
        } catch (const error& e) {
            if (e.code() != exit_code::out_of_memory) throw;
            (void)cudaGetLastError();
            if (retries++ == 3) break;  // the rest is left to the caller's CPU threads
            budget /= 2;
            continue;
        }
        first = last;
    }
    if (timing) timing->total_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

}  // namespace swgpu::gpu
