// Kernels of the GPU levels (gpu/numerics/levels.hpp): the sync-free pass over a dependence order, the level-by-level solve,
// and the generic loop's inspector. Shared by gpu/numerics/levels.cu and the benchmark program.
//
// Synchronization protocol of every sync-free pass (levels, solve, loop):
//   * Work is a sequence of positions p = 0..n-1 in which every dependence of p has a smaller position. Each warp takes
//     the next 32 positions from an atomic ticket; a position only waits on positions of smaller tickets, held by warps
//     that are already running, so the pass cannot deadlock whatever the block scheduling.
//   * A finished position writes its results (x[i], A[W[i]]), then publishes with st.release.gpu: level[i] (> 0) or
//     flag[i] = epoch. A waiting lane checks with ld.acquire.gpu, and reads the results only after seeing the flag.
//   * Lanes of one warp advance in rounds (check what is ready, finish what can be finished, __syncwarp), so a lane
//     never spins on a lane of its own warp; a round in which no lane advanced backs off (spin_backoff: a trap after
//     20 s instead of a hang).
#pragma once

#include <cuda_runtime.h>

#include <cooperative_groups.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_run_length_encode.cuh>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/numerics/levels.hpp"
#include "core/tuning.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/flags.cuh"
#include "gpu/device_buffer.cuh"

namespace swgpu::gpu::levels_kernels {

namespace cg = cooperative_groups;

// The end of one round of a warp's sync-free loop: true when every lane is done; else the warp backs off when no
// lane advanced this round (and starts the deadline over when one did).
__device__ __forceinline__ bool warp_round_over(bool done, bool advanced, unsigned& spins, std::uint64_t& since) {
    if (__all_sync(0xffffffffu, done)) return true;
    if (__any_sync(0xffffffffu, advanced)) {
        spins = 0;
        since = 0;
    } else {
        spin_backoff(spins, since);
    }
    __syncwarp();
    return false;
}


struct csr_view {
    int n = 0;
    bool upper = false;
    const std::int64_t* row_ptr = nullptr;
    const std::int32_t* col = nullptr;
    const double* val = nullptr;
};

// One sync-free pass over the rows of a triangular matrix.
//   Levels: publishes level[row] (the readiness flag is the level itself, 0 = not yet); Solve: x[row].
//   Solve without Levels: readiness is flag[row] == epoch (flags of earlier solves hold smaller epochs).
// order: the row at each position, or null for the natural dependence order (ascending rows, descending for upper).
struct syncfree_args {
    csr_view m;
    const std::int32_t* order = nullptr;
    int* level = nullptr;
    int* flag = nullptr;
    int epoch = 1;
    const double* b = nullptr;
    double* x = nullptr;
    unsigned* ticket = nullptr;
};

template <bool Levels, bool Solve>
__global__ void __launch_bounds__(256) syncfree_rows(syncfree_args a) {
    // A row's dependences on rows of its own warp (in the natural order: the rows just before it, as in every banded
    // or stencil matrix) are met through shared memory: a lane that finishes leaves its level and x there, and the
    // warp goes round again at once, so a chain of rows inside a warp costs a shared-memory read per link instead of
    // an acquire load through L2 (about 0.6 µs). Dependences on other warps' rows go through global memory.
    __shared__ int warp_level[8][32];
    __shared__ double warp_x[Solve ? 8 : 1][32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    unsigned t = 0;
    if (lane == 0) t = atomicAdd(a.ticket, 1u);
    t = __shfl_sync(0xffffffffu, t, 0);
    const std::int64_t base = static_cast<std::int64_t>(t) * 32, p = base + lane;
    bool done = p >= a.m.n;
    int row = 0;
    std::int64_t k = 0, end = 0, diag = 0;
    double s = 0;
    int lvl = 0;
    int* ready = Levels ? a.level : a.flag;
    if (!done) {
        row = a.order ? a.order[p] : (a.m.upper ? a.m.n - 1 - static_cast<int>(p) : static_cast<int>(p));
        k = a.m.row_ptr[row];
        end = a.m.row_ptr[row + 1];
        diag = a.m.upper ? k++ : --end;
        if (Solve) s = a.b[row];
        if (Levels && !Solve && a.level[row] != 0) {  // placed by the frontiers before this pass (see analyze)
            warp_level[warp][lane] = a.level[row];
            done = true;
        }
    }
    // The lane holding row j, or -1 (in the level order, rows are not placed by index: every dependence is global).
    const auto lane_of = [&](int j) -> int {
        if (a.order) return -1;
        const std::int64_t d = (a.m.upper ? a.m.n - 1 - static_cast<std::int64_t>(j) : j) - base;
        return d >= 0 && d < 32 ? static_cast<int>(d) : -1;
    };
    unsigned finished = __ballot_sync(0xffffffffu, done);  // lanes past the last row count as finished
    unsigned spins = 0;
    std::uint64_t since = 0;
    for (;;) {
        bool advanced = false;
        if (!done) {
            while (k < end) {
                const int j = __ldg(a.m.col + k);
                const int l = lane_of(j);
                int r;
                double xj = 0;
                if (l >= 0) {
                    if (!((finished >> l) & 1u)) break;
                    r = warp_level[warp][l];
                    if (Solve) xj = warp_x[Solve ? warp : 0][l];
                } else {
                    r = load_acquire(ready + j);
                    if (Levels ? r == 0 : r != a.epoch) break;
                    if (Solve) xj = a.x[j];
                }
                if (Levels) lvl = r > lvl ? r : lvl;
                if (Solve) s = levels::mul_sub(s, __ldg(a.m.val + k), xj);
                ++k;
                advanced = true;
            }
            if (k == end) {
                double xr = 0;
                if (Solve) {
                    xr = s / __ldg(a.m.val + diag);
                    a.x[row] = xr;
                    warp_x[Solve ? warp : 0][lane] = xr;
                }
                warp_level[warp][lane] = lvl + 1;
                store_release(ready + row, Levels ? lvl + 1 : a.epoch);
                done = advanced = true;
            }
        }
        __syncwarp();
        const unsigned now = __ballot_sync(0xffffffffu, done);
        if (now == 0xffffffffu) break;
        if (now != finished) {  // a lane of this warp finished: its dependents here go on at once
            finished = now;
            spins = 0;
            since = 0;
            continue;
        }
        if (warp_round_over(false, advanced, spins, since)) break;
    }
}

// The rows order[begin..end) of one level: every row they read is final (earlier launches).
__global__ void __launch_bounds__(256) solve_level(csr_view m, const std::int32_t* order, std::int64_t begin,
                                                   std::int64_t end, const double* b, double* x) {
    const std::int64_t p = begin + blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
    if (p >= end) return;
    const int row = order[p];
    x[row] = levels::solve_row(m.row_ptr, m.col, m.val, x, b[row], row, m.upper);
}

// The same, launched chained after the previous level (launch_chained): a thread loads its row's part of the matrix
// and b, which no kernel of a solve writes, before it waits for the previous level; only x is read after the wait
// (entries of up to `prefetch` per row are held in registers; longer rows read the rest after the wait). The sums and
// their order are those of levels::solve_row.
constexpr int prefetch = 8;
__global__ void __launch_bounds__(256) solve_level_chained(csr_view m, const std::int32_t* order, std::int64_t begin,
                                                           std::int64_t end, const double* b, double* x) {
    allow_next_grid();
    const std::int64_t p = begin + blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
    if (p >= end) return;
    const int row = __ldg(order + p);
    std::int64_t k = __ldg(m.row_ptr + row), stop = __ldg(m.row_ptr + row + 1);
    const std::int64_t diag = m.upper ? k++ : --stop;
    const double d = __ldg(m.val + diag);
    double s = __ldg(b + row);
    int c[prefetch];
    double v[prefetch];
#pragma unroll
    for (int q = 0; q < prefetch; ++q) {
        c[q] = k + q < stop ? __ldg(m.col + k + q) : 0;
        v[q] = k + q < stop ? __ldg(m.val + k + q) : 0.0;
    }
    wait_for_previous_grids();
#pragma unroll
    for (int q = 0; q < prefetch; ++q)
        if (k + q < stop) s = levels::mul_sub(s, v[q], __ldcg(x + c[q]));  // through L2: x is being written
    for (std::int64_t kk = k + prefetch; kk < stop; ++kk)
        s = levels::mul_sub(s, __ldg(m.val + kk), __ldcg(x + __ldg(m.col + kk)));
    x[row] = s / d;
}

// Every level in one kernel: the grid takes a level's rows (strided over all threads), then waits at a grid barrier
// (cooperative launch) before the next level, instead of one launch per level. A thread loads its first row of the
// next level (order, row extent, b, and up to `prefetch` entries) before the barrier, since nothing in a solve writes
// them; x is read through L2 after it. The sums and their order are those of levels::solve_row.
__global__ void __launch_bounds__(256) solve_levels_grid(csr_view m, const std::int32_t* order,
                                                         const std::int64_t* offsets, int levels, const double* b,
                                                         double* x) {
    cg::grid_group grid = cg::this_grid();
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    struct staged {
        int row = -1;
        std::int64_t k = 0, stop = 0;
        double d = 1, s = 0;
        int c[prefetch];
        double v[prefetch];
    };
    const auto stage = [&](std::int64_t p, std::int64_t end, staged& r) {
        r.row = -1;
        if (p >= end) return;
        r.row = __ldg(order + p);
        r.k = __ldg(m.row_ptr + r.row);
        r.stop = __ldg(m.row_ptr + r.row + 1);
        const std::int64_t diag = m.upper ? r.k++ : --r.stop;
        r.d = __ldg(m.val + diag);
        r.s = __ldg(b + r.row);
#pragma unroll
        for (int q = 0; q < prefetch; ++q) {
            r.c[q] = r.k + q < r.stop ? __ldg(m.col + r.k + q) : 0;
            r.v[q] = r.k + q < r.stop ? __ldg(m.val + r.k + q) : 0.0;
        }
    };
    const auto finish = [&](const staged& r) {
        double s = r.s;
#pragma unroll
        for (int q = 0; q < prefetch; ++q)
            if (r.k + q < r.stop) s = levels::mul_sub(s, r.v[q], __ldcg(x + r.c[q]));
        for (std::int64_t kk = r.k + prefetch; kk < r.stop; ++kk)
            s = levels::mul_sub(s, __ldg(m.val + kk), __ldcg(x + __ldg(m.col + kk)));
        x[r.row] = s / r.d;
    };
    staged next;
    stage(offsets[0] + first, offsets[1], next);
    for (int l = 0; l < levels; ++l) {
        const std::int64_t begin = offsets[l], end = offsets[l + 1];
        if (next.row >= 0) finish(next);
        for (std::int64_t p = begin + first + stride; p < end; p += stride) {
            staged r;
            stage(p, end, r);
            finish(r);
        }
        if (l + 1 < levels) {
            stage(end + first, offsets[l + 2], next);
            grid.sync();
        }
    }
}

// Every level in one launch without a barrier between levels: rows in level order, position p taken by thread
// p mod T (T threads, all resident: a cooperative launch), and each row waits only for its own dependences. x is its
// own flag: the solve starts with every x[j] = x_unset (all bits set, a NaN that no division returns: a quotient
// with those bits is stored as the canonical NaN instead), a row stores x[row] with one 64-bit relaxed store, and a
// dependent polls x[j] with relaxed 64-bit loads (single-copy atomic) until it is set: no fence, no flag, no
// barrier; a link of the critical path costs the store's trip to L2 and the poll's. Deadlock-free: the thread
// holding the smallest unfinished position has finished its earlier positions (smaller ones), and every dependence
// of that position has a smaller one. Lanes advance in rounds (poll what is missing, finish what can be finished,
// never wait inside a round), so a lane never spins on a lane of its own warp. A thread loads its next row's part
// of the matrix (order, extent, b, diagonal, up to p2p_prefetch entries: three dependent loads, one a round) while
// it waits for its current row's dependences. The sums and their order are those of levels::solve_row.
constexpr unsigned long long x_unset = ~0ull;
constexpr int p2p_prefetch = 4;

__global__ void __launch_bounds__(256) solve_levels_p2p(csr_view m, const std::int32_t* order, const double* b,
                                                        double* x, unsigned sleep_ns) {
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    const auto* xb = reinterpret_cast<const unsigned long long*>(x);
    // A row on its way in: phase 0 its position known, 1 its row, 2 its extent, 3 its entries, b and diagonal (the
    // loads of one phase are used in the next round, so they overlap the polls of the row before), 4 waiting for
    // its dependences; -1 past the end.
    struct staged {
        int phase = 0;
        int row = 0;
        std::int64_t pos = 0, k = 0, stop = 0;
        double d = 1, s = 0;
        int c[p2p_prefetch];
        double v[p2p_prefetch];
    };
    const auto step = [&](staged& r) {
        if (r.phase == 0) {
            if (r.pos < m.n) {
                r.row = __ldg(order + r.pos);
                r.phase = 1;
            } else {
                r.phase = -1;
            }
        } else if (r.phase == 1) {
            r.k = __ldg(m.row_ptr + r.row);
            r.stop = __ldg(m.row_ptr + r.row + 1);
            r.phase = 2;
        } else if (r.phase == 2) {
            const std::int64_t diag = m.upper ? r.k++ : --r.stop;
            r.d = __ldg(m.val + diag);
            r.s = __ldg(b + r.row);
#pragma unroll
            for (int q = 0; q < p2p_prefetch; ++q) {
                r.c[q] = r.k + q < r.stop ? __ldg(m.col + r.k + q) : 0;
                r.v[q] = r.k + q < r.stop ? __ldg(m.val + r.k + q) : 0.0;
            }
            r.phase = 3;
        }
    };
    staged cur, next;
    cur.pos = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    next.pos = cur.pos + stride;
    // The current row's entries still missing (bit q: entry k + q) and their values; past the staged entries, the
    // cursor `tail` takes the rest one at a time, in order, once the staged ones are summed.
    unsigned pending = 0;
    std::int64_t tail = 0;
    bool summed = false;
    double xv[p2p_prefetch];
#pragma unroll
    for (int q = 0; q < p2p_prefetch; ++q) xv[q] = 0;
    unsigned idle = 0;
    std::uint64_t since = 0;
    while (__any_sync(0xffffffffu, cur.phase >= 0)) {
        bool advanced = false;
        if (cur.phase == 3) {
            const std::int64_t e = cur.stop - cur.k;
            pending = e >= p2p_prefetch ? (1u << p2p_prefetch) - 1u : (1u << e) - 1u;
            tail = cur.k + p2p_prefetch;
            summed = false;
            cur.phase = 4;
        }
        if (cur.phase == 4) {
#pragma unroll
            for (int q = 0; q < p2p_prefetch; ++q)
                if ((pending >> q) & 1u) {
                    const unsigned long long u = load_relaxed(xb + cur.c[q]);
                    if (u != x_unset) {
                        xv[q] = __longlong_as_double(static_cast<long long>(u));
                        pending &= ~(1u << q);
                        advanced = true;
                    }
                }
            if (pending == 0) {
                if (!summed) {
#pragma unroll
                    for (int q = 0; q < p2p_prefetch; ++q)
                        if (cur.k + q < cur.stop) cur.s = levels::mul_sub(cur.s, cur.v[q], xv[q]);
                    summed = true;
                }
                while (tail < cur.stop) {
                    const unsigned long long u = load_relaxed(xb + __ldg(m.col + tail));
                    if (u == x_unset) break;
                    cur.s = levels::mul_sub(cur.s, __ldg(m.val + tail), __longlong_as_double(static_cast<long long>(u)));
                    ++tail;
                    advanced = true;
                }
                if (tail >= cur.stop) {
                    unsigned long long r = static_cast<unsigned long long>(__double_as_longlong(cur.s / cur.d));
                    if (r == x_unset) r = 0x7fffffffffffffffull;
                    store_relaxed(reinterpret_cast<unsigned long long*>(x) + cur.row, r);
                    advanced = true;
                    cur = next;
                    next.phase = 0;
                    next.pos = cur.pos + stride;
                }
            }
        } else if (cur.phase >= 0) {
            step(cur);
            advanced = true;
        }
        if (next.phase >= 0 && next.phase < 3) step(next);
        // No lane advanced: the warp sleeps sleep_ns (fewer polls of rows far from done, which load L2 for everyone)
        // and counts the round; past the deadline (checked every 4096 idle rounds), trap.
        if (__any_sync(0xffffffffu, advanced)) {
            idle = 0;
            since = 0;
        } else if (sleep_ns > 0 && (__nanosleep(sleep_ns), (++idle & 4095u) == 0)) {
            const std::uint64_t now = device_time_ns();
            if (since == 0) since = now;
            else if (now - since > spin_deadline_ns) __trap();
        } else if (sleep_ns == 0 && (++idle & 4095u) == 0) {
            const std::uint64_t now = device_time_ns();
            if (since == 0) since = now;
            else if (now - since > spin_deadline_ns) __trap();
        }
    }
}

__global__ void iota(std::int32_t* out, std::int64_t n) {
    for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < n;
         k += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
        out[k] = static_cast<std::int32_t>(k);
}

// ---- the analysis by frontiers --------------------------------------------------------------------------------------
//
// Kahn's algorithm, level by level: the rows without dependences form level 1; a row joins level L+1 when the last of
// its dependences (all in levels <= L) is taken off, which a countdown of its open dependences (atomicSub) tells.
// One cooperative launch runs every level with a grid barrier between levels, and the rows of each level are appended
// to one queue (warp-aggregated atomicAdd on its tail), so the queue holds the rows level after level. Every row is
// touched once and every dependence once, whatever the level widths, where the sync-free pass's resident window
// (about 270k rows on the H100) sees only the few rows of a wide level that fall inside it. Each level costs a grid
// barrier, so a matrix of many narrow levels stops after `level_cap` levels and the sync-free pass finishes it.

// The off-diagonal entries of row i: [k, end).
__device__ __forceinline__ void off_diagonal(const csr_view& m, int i, std::int64_t& k, std::int64_t& end) {
    k = m.row_ptr[i];
    end = m.row_ptr[i + 1];
    if (m.upper) ++k;
    else --end;
}

// open[i] = the dependences of row i; count[j] += the rows that depend on row j.
__global__ void count_dependences(csr_view m, int* open, unsigned long long* count) {
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < m.n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        std::int64_t k, end;
        off_diagonal(m, static_cast<int>(i), k, end);
        open[i] = static_cast<int>(end - k);
        for (; k < end; ++k) atomicAdd(count + __ldg(m.col + k), 1ull);
    }
}

// dependents[cursor[j]++] = i for every row i that depends on row j (the order within a row's list is the atomics').
__global__ void scatter_dependents(csr_view m, unsigned long long* cursor, int* dependents) {
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < m.n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        std::int64_t k, end;
        off_diagonal(m, static_cast<int>(i), k, end);
        for (; k < end; ++k) dependents[atomicAdd(cursor + __ldg(m.col + k), 1ull)] = static_cast<int>(i);
    }
}

struct frontier_args {
    int n = 0;
    const unsigned long long* first = nullptr;  // row j's dependents: dependents[first[j] .. first[j+1])
    const int* dependents = nullptr;
    int* open = nullptr;      // counted down
    int* level = nullptr;     // written for every row reached
    int* queue = nullptr;     // the rows, level after level
    unsigned* tail = nullptr; // zeroed
    int level_cap = 0;
    int* status = nullptr;    // out: levels done, rows placed, 1 when every row is placed
};

__global__ void __launch_bounds__(256) frontier_levels(frontier_args a) {
    cg::grid_group grid = cg::this_grid();
    const unsigned lane = threadIdx.x & 31u;
    const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
    const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) >> 5;
    const auto append = [&](bool want, int row, int lvl) {
        const unsigned who = __ballot_sync(0xffffffffu, want);
        if (who == 0) return;
        const int leader = __ffs(who) - 1;
        unsigned at = 0;
        if (static_cast<int>(lane) == leader) at = atomicAdd(a.tail, static_cast<unsigned>(__popc(who)));
        at = __shfl_sync(0xffffffffu, at, leader);
        if (want) {
            a.queue[at + __popc(who & ((1u << lane) - 1u))] = row;
            a.level[row] = lvl;
        }
    };
    for (std::int64_t base = warp * 32; base < a.n; base += warps * 32) {
        const std::int64_t i = base + lane;
        append(i < a.n && a.open[i] == 0, static_cast<int>(i), 1);
    }
    grid.sync();
    unsigned begin = 0;
    for (int l = 1;; ++l) {
        const unsigned end = __ldcg(a.tail);  // the same for every thread: the barrier came after the appends
        if (begin == end || l > a.level_cap) {
            if (blockIdx.x == 0 && threadIdx.x == 0) {
                a.status[0] = l - 1;
                a.status[1] = static_cast<int>(end);
                a.status[2] = begin == end ? 1 : 0;
            }
            return;
        }
        for (std::int64_t base = begin + warp * 32; base < end; base += warps * 32) {
            const std::int64_t p = base + lane;
            std::uint64_t k = 0, stop = 0;
            if (p < end) {
                const int row = __ldcg(a.queue + p);
                k = __ldg(a.first + row);
                stop = __ldg(a.first + row + 1);
            }
            while (__any_sync(0xffffffffu, k < stop)) {
                bool ready = false;
                int d = 0;
                if (k < stop) {
                    d = __ldg(a.dependents + k);
                    ready = atomicSub(a.open + d, 1) == 1;
                    ++k;
                }
                append(ready, d, l + 1);
            }
        }
        grid.sync();
        begin = end;
    }
}

// ---- generic loops ------------------------------------------------------------------------------------------------

// Iteration i of `A[W[i]] = f(A[R[i][0..k)])`, with the writers and readers of every location as sorted lists:
// wloc/witer (all writes sorted by (location, iteration)), rloc/riter (all reads, likewise), and each location's
// range in both lists ([wbeg, wend), [rbeg, rend); empty for a location never written or never read). Its
// dependences, all on smaller iterations: the last writer before i of each location it reads (true), the previous
// writer of W[i] (output), and every reader of W[i] between that writer and i (anti); each read belongs to the anti
// range of only one writer, so the pass reads every list once in total, and every search stays within one location.
struct loop_args {
    int n = 0, k = 0;
    const std::int32_t* w = nullptr;  // W[i]
    const std::int32_t* r = nullptr;  // R[i][j] at i * k + j
    const std::int32_t* wloc = nullptr;
    const std::int32_t* witer = nullptr;
    const std::int32_t* rloc = nullptr;
    const std::int32_t* riter = nullptr;
    const std::int32_t* wbeg = nullptr;  // per location
    const std::int32_t* wend = nullptr;
    const std::int64_t* rbeg = nullptr;
    const std::int64_t* rend = nullptr;
    std::int64_t reads = 0;  // n * k
    int* level = nullptr;
    unsigned* ticket = nullptr;
    levels::loop_body body = levels::loop_body::sum;
    const double* coef = nullptr;  // the body's coefficients
    double* a = nullptr;           // executed when not null
};

// First index in [lo, hi) of ascending vals where val >= v (every key in the range is the same location).
__device__ __forceinline__ std::int64_t lower_val(const std::int32_t* val, std::int64_t lo, std::int64_t hi, int v) {
    while (lo < hi) {
        const std::int64_t mid = (lo + hi) >> 1;
        if (val[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// The location ranges of a sorted key list: beg[key] and end[key] at the first and one past the last position of
// each key present (beg and end zeroed beforehand, so absent keys have an empty range).
template <class Pos>
__global__ void mark_ranges(const std::int32_t* sorted, std::int64_t count, Pos* beg, Pos* end) {
    for (std::int64_t p = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; p < count;
         p += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const int key = sorted[p];
        if (p == 0 || sorted[p - 1] != key) beg[key] = static_cast<Pos>(p);
        if (p == count - 1 || sorted[p + 1] != key) end[key] = static_cast<Pos>(p + 1);
    }
}

// The iteration of every read: position p of R belongs to iteration p / k.
__global__ void read_iterations(std::int32_t* out, std::int64_t reads, int k) {
    for (std::int64_t p = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; p < reads;
         p += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
        out[p] = static_cast<std::int32_t>(p / k);
}

template <bool Execute>
__global__ void __launch_bounds__(256) syncfree_loop(loop_args a) {
    const unsigned lane = threadIdx.x & 31u;
    unsigned t = 0;
    if (lane == 0) t = atomicAdd(a.ticket, 1u);
    t = __shfl_sync(0xffffffffu, t, 0);
    const std::int64_t i64 = static_cast<std::int64_t>(t) * 32 + lane;
    bool done = i64 >= a.n;
    const int i = static_cast<int>(i64);
    // Dependences are enumerated by d: 0..k-1 the reads' last writers, k the previous writer, then the anti range.
    std::int64_t d = 0, total = 0, anti_begin = 0;
    int lvl = 0;
    int prev_writer = -1;
    if (!done) {
        const int w = a.w[i];
        const std::int64_t wb = a.wbeg[w];
        const std::int64_t pos = lower_val(a.witer, wb, a.wend[w], i);  // this write's place among the writes of w
        prev_writer = pos > wb ? a.witer[pos - 1] : -1;
        anti_begin = lower_val(a.riter, a.rbeg[w], a.rend[w], prev_writer + 1);
        const std::int64_t anti_end = lower_val(a.riter, anti_begin, a.rend[w], i);
        total = a.k + 1 + (anti_end - anti_begin);
    }
    const auto target = [&](std::int64_t dd) -> int {
        if (dd < a.k) {
            const int loc = a.r[static_cast<std::int64_t>(i) * a.k + dd];
            const std::int64_t wb = a.wbeg[loc];
            const std::int64_t q = lower_val(a.witer, wb, a.wend[loc], i);
            return q > wb ? a.witer[q - 1] : -1;
        }
        if (dd == a.k) return prev_writer;
        return a.riter[anti_begin + (dd - a.k - 1)];
    };
    int cur = done ? -1 : (total > 0 ? target(0) : -1);
    unsigned spins = 0;
    std::uint64_t since = 0;
    for (;;) {
        bool advanced = false;
        if (!done) {
            while (d < total) {
                if (cur >= 0) {
                    const int r = load_acquire(a.level + cur);
                    if (r == 0) break;
                    lvl = r > lvl ? r : lvl;
                }
                ++d;
                advanced = true;
                if (d < total) cur = target(d);
            }
            if (d == total) {
                if (Execute) {
                    const std::int32_t* rr = a.r + static_cast<std::int64_t>(i) * a.k;
                    double* const arr = a.a;  // not read-only: other iterations write it during the pass
                    a.a[a.w[i]] = levels::apply_body(a.body, a.coef, a.k, [rr, arr](int j) { return arr[rr[j]]; });
                }
                store_release(a.level + i, lvl + 1);
                done = advanced = true;
            }
        }
        if (warp_round_over(done, advanced, spins, since)) break;
    }
}

// ---- host side: a triangular system on the device ------------------------------------------------------------------

// Blocks per SM of the cooperative launches: the tuning key `key` (one; others for measurements).
inline int blocks_per_sm(const char* key) {
    return static_cast<int>(std::max<std::int64_t>(1, tuning::integer(key, device_arch())));
}

inline int bits_for(std::int64_t v) {
    int b = 1;
    while (b < 31 && (std::int64_t{1} << b) <= v) ++b;
    return b;
}

// The matrix, its analysis (levels, rows by level, widths) and the solve buffers, on one stream.
struct device_triangular {
    csr_view m;
    device_buffer<std::int64_t> row_ptr;
    device_buffer<std::int32_t> col, order, rows_iota;
    device_buffer<double> val, b, x;
    device_buffer<int> level, sorted_level, flag, widths, runs;
    device_buffer<unsigned> ticket;
    device_buffer<unsigned char> temp;
    std::vector<std::int64_t> offsets;  // host copy of the level offsets (after analyze(..., true))
    int epoch = 0;

    std::int64_t nonzeros = 0;

    device_triangular(const levels::csr_matrix& t, levels::triangle part, cudaStream_t s) {
        m.n = static_cast<int>(t.rows);
        nonzeros = t.nonzeros();
        m.upper = part == levels::triangle::upper;
        row_ptr.upload(t.row_ptr, s);
        col.upload(t.col, s);
        val.upload(t.val, s);
        m.row_ptr = row_ptr.data();
        m.col = col.data();
        m.val = val.data();
        const auto n = static_cast<std::size_t>(m.n);
        order.allocate(n);
        rows_iota.allocate(n);
        level.allocate(n);
        sorted_level.allocate(n);
        flag.allocate(n);
        flag.zero(s);
        widths.allocate(n);
        runs.allocate(2 + n);  // number of runs, then the unique levels
        b.allocate(n);
        x.allocate(n);
        ticket.allocate(1);
        std::size_t sort_bytes = 0, rle_bytes = 0;
        SWGPU_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, level.data(), sorted_level.data(),
                                                         rows_iota.data(), order.data(), m.n, 0, bits_for(m.n), s));
        SWGPU_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, rle_bytes, sorted_level.data(), runs.data() + 2,
                                                            widths.data(), runs.data(), m.n, s));
        temp.allocate(std::max(sort_bytes, rle_bytes));
    }

    unsigned blocks() const { return static_cast<unsigned>((static_cast<std::int64_t>(m.n) + 255) / 256); }

    // One sync-free pass; Levels and/or Solve (see syncfree_rows). by_level: rows in level order (after analyze).
    // keep_levels (levels only): rows whose level is already set keep it (the frontiers' rows).
    template <bool Levels, bool Solve>
    void pass(bool by_level, cudaStream_t s, bool keep_levels = false) {
        ticket.zero(s);
        if (Levels && !keep_levels) level.zero(s);
        syncfree_args a;
        a.m = m;
        a.order = by_level ? order.data() : nullptr;
        a.level = level.data();
        a.flag = flag.data();
        a.epoch = ++epoch;
        a.b = b.data();
        a.x = x.data();
        a.ticket = ticket.data();
        syncfree_rows<Levels, Solve><<<blocks(), 256, 0, s>>>(a);
        SWGPU_CUDA_CHECK_LAUNCH("syncfree_rows");
    }

    // Rows sorted by level and the level widths, from `level` (at most max_level, when known).
    void group(cudaStream_t s, std::int64_t max_level = 0) {
        iota<<<std::min(blocks(), 4096u), 256, 0, s>>>(rows_iota.data(), m.n);
        SWGPU_CUDA_CHECK_LAUNCH("iota");
        std::size_t bytes = temp.size();
        const int bits = bits_for(max_level > 0 ? max_level : m.n);
        SWGPU_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, level.data(), sorted_level.data(),
                                                         rows_iota.data(), order.data(), m.n, 0, bits, s));
        bytes = temp.size();
        SWGPU_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(temp.data(), bytes, sorted_level.data(), runs.data() + 2,
                                                            widths.data(), runs.data(), m.n, s));
    }

    // The analysis: levels, then rows by level and widths. Levels by the sync-free pass while the matrix is at most
    // window_multiple times the rows the GPU holds resident (there the pass sees enough of every level: H100, lap3d
    // IC(0), sync-free against frontiers: 1.47 / 1.75 ms at 10^6 rows, 3.35 / 2.51 ms at 2.2·10^6, 6.68 / 3.42 ms at
    // 4.1·10^6, 18.2 / 5.65 ms at 10^7), by frontiers above, the
    // sync-free pass finishing a matrix of more than the tuning key levels.frontier_cap levels. The key
    // levels.analysis=syncfree|frontiers chooses (tests, measurements). Synchronizes the stream when the frontiers
    // run (their level count decides what follows).
    static constexpr std::int64_t window_multiple = 5;  // 1.35·10^6 rows on the H100
    device_buffer<unsigned long long> dep_first, dep_cursor;
    device_buffer<int> dependents, open, queue, status;
    // solve: x for the right-hand side in b comes with the analysis: the fused sync-free pass, or after the frontiers
    // the level_p2p solve (H100, 10^7 rows: 7.67 ms with it, 8.41 with level_grid; solving each row as the frontiers
    // take it was slower: 9.05 against 8.45 ms, with level_grid).
    void analyze(cudaStream_t s, bool solve = false) {
        static const std::int64_t resident_rows = [] {
            int device = 0, sms = 0, threads = 0;
            SWGPU_CUDA_CHECK(cudaGetDevice(&device));
            SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
            SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
            return static_cast<std::int64_t>(sms) * threads;
        }();
        const std::string arch = device_arch();
        const std::string how = tuning::text("levels.analysis", arch);  // read at each analysis: the tests change it
        const bool syncfree_only = how != "auto" ? how == "syncfree" : m.n <= window_multiple * resident_rows;
        if (syncfree_only || m.n == 0) {
            if (solve) pass<true, true>(false, s);
            else pass<true, false>(false, s);
            group(s);
            return;
        }
        const std::int64_t cap_asked = tuning::integer("levels.frontier_cap", arch);
        const int cap = static_cast<int>(std::clamp<std::int64_t>(cap_asked, 1, std::numeric_limits<int>::max()));
        const auto n = static_cast<std::size_t>(m.n);
        const auto nnz = static_cast<std::size_t>(nonzeros);
        dep_first.reserve(n + 1);
        dep_cursor.reserve(n + 1);
        dependents.reserve(std::max<std::size_t>(1, nnz - n));
        open.reserve(n);
        queue.reserve(n);
        status.reserve(3);
        ticket.zero(s);
        SWGPU_CUDA_CHECK(cudaMemsetAsync(dep_first.data(), 0, (n + 1) * sizeof(unsigned long long), s));
        const unsigned grid = std::min(blocks(), 4096u);
        count_dependences<<<grid, 256, 0, s>>>(m, open.data(), dep_first.data());
        SWGPU_CUDA_CHECK_LAUNCH("count_dependences");
        std::size_t bytes = 0;
        SWGPU_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, dep_first.data(), dep_cursor.data(), m.n + 1, s));
        if (bytes > temp.size()) temp.allocate(bytes);
        bytes = temp.size();
        SWGPU_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, dep_first.data(), dep_cursor.data(), m.n + 1, s));
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(dep_first.data(), dep_cursor.data(), (n + 1) * sizeof(unsigned long long),
                                         cudaMemcpyDeviceToDevice, s));
        scatter_dependents<<<grid, 256, 0, s>>>(m, dep_cursor.data(), dependents.data());
        SWGPU_CUDA_CHECK_LAUNCH("scatter_dependents");
        level.zero(s);
        // levels.frontier_blocks is read at the first analysis.
        static const int frontier_blocks =
            resident_blocks(frontier_levels, 256, blocks_per_sm("levels.frontier_blocks"));
        frontier_args fa;
        fa.n = m.n;
        fa.first = dep_first.data();
        fa.dependents = dependents.data();
        fa.open = open.data();
        fa.level = level.data();
        fa.queue = queue.data();
        fa.tail = ticket.data();
        fa.level_cap = cap;
        fa.status = status.data();
        void* args[] = {&fa};
        SWGPU_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(frontier_levels),
                                                     dim3(frontier_blocks), dim3(256), args, 0, s));
        const auto st = status.download(3, s);
        if (st[2] == 1) {
            group(s, st[0]);
        } else {
            pass<true, false>(false, s, true);
            group(s);
        }
        if (solve) solve_by_levels_p2p(s);
    }

    // Level offsets on the host (for level_sync); synchronizes the stream.
    const std::vector<std::int64_t>& level_offsets(cudaStream_t s) {
        if (!offsets.empty()) return offsets;
        const int count = runs.download(1, s)[0];
        const std::vector<int> w = widths.download(static_cast<std::size_t>(count), s);
        offsets.assign(1, 0);
        for (const int c : w) offsets.push_back(offsets.back() + c);
        return offsets;
    }

    // Every level in one cooperative launch of solve_levels_grid, one block per SM: the barrier costs more with more
    // blocks (H100, lap3d IC(0), README: 1.03 / 1.17 / 1.35 ms at 10^6 rows with 1 / 2 / 4 blocks per SM, 2.78 /
    // 2.81 / 3.45 ms at 10^7). The tuning key levels.grid_blocks=B, read at the first solve, asks for B per SM (as
    // far as they stay resident).
    device_buffer<std::int64_t> offsets_dev;  // level_offsets on the device, once uploaded
    void solve_by_levels_grid(cudaStream_t s) {
        const auto& off = level_offsets(s);
        if (offsets_dev.size() == 0) offsets_dev.upload(off, s);
        static const int blocks = resident_blocks(solve_levels_grid, 256, blocks_per_sm("levels.grid_blocks"));
        csr_view mv = m;
        const std::int32_t* ord = order.data();
        const std::int64_t* offp = offsets_dev.data();
        int levels = static_cast<int>(off.size()) - 1;
        const double* bp = b.data();
        double* xp = x.data();
        if (levels <= 0) return;
        void* args[] = {&mv, &ord, &offp, &levels, &bp, &xp};
        SWGPU_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(solve_levels_grid), dim3(blocks),
                                                     dim3(256), args, 0, s));
    }

    // Every level in one cooperative launch of solve_levels_p2p: x set to x_unset, then the rows in level order over
    // `per_sm` blocks of `threads` (128 or 256) per SM (0: p2p_blocks_per_sm; at most as many as stay resident), a warp
    // sleeping sleep_ns after a round without progress. The cooperative launch is for its guarantee that every block
    // is resident at once, not for a grid barrier. Defaults (H100, lap3d IC(0), bench_levels): 1, 2 and 4 blocks of
    // 256 per SM took 0.63 / 0.75 / 1.01 ms at 10^6 rows and 2.07 / 2.20 / 2.86 ms at 10^7; 128 threads 0.65 and
    // 2.96 ms; sleeps of 100-500 ns changed nothing measurable.
    static constexpr int p2p_blocks_per_sm = 1, p2p_threads = 256;
    static constexpr unsigned p2p_sleep_ns = 0;
    void solve_by_levels_p2p(cudaStream_t s, int per_sm = 0, int threads = p2p_threads, unsigned sleep_ns = p2p_sleep_ns) {
        if (m.n == 0) return;
        (void)level_offsets(s);  // the rows in level order (order) come with the analysis
        static int blocks_for[9][2] = {};  // by blocks per SM asked for and 128/256 threads (occupancy query once)
        const int asked = std::clamp(per_sm > 0 ? per_sm : p2p_blocks_per_sm, 1, 8);
        const int t = threads == 128 ? 128 : 256;
        int& blocks = blocks_for[asked][t == 256];
        if (blocks == 0) blocks = resident_blocks(solve_levels_p2p, t, asked);
        SWGPU_CUDA_CHECK(cudaMemsetAsync(x.data(), 0xff, static_cast<std::size_t>(m.n) * sizeof(double), s));
        csr_view mv = m;
        const std::int32_t* ord = order.data();
        const double* bp = b.data();
        double* xp = x.data();
        void* args[] = {&mv, &ord, &bp, &xp, &sleep_ns};
        SWGPU_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(solve_levels_p2p), dim3(blocks),
                                                     dim3(t), args, 0, s));
    }

    // One launch per level. A narrow level (at most chain_blocks blocks) is chained (programmatic dependent launch):
    // its launch and its loads of the matrix overlap the level before it. Measured on the H100 (README): chaining
    // every level took the 10^6-row solve from 1.90 to 1.32 ms but the 10^7-row one, whose levels are 4.6x wider,
    // from 4.61 to 4.97 ms. The tuning key levels.chained=0 launches every level the plain way (measurements).
    static constexpr std::int64_t chain_blocks = 32;
    void solve_by_levels(cudaStream_t s) {
        const auto& off = level_offsets(s);
        const bool plain = !tuning::flag("levels.chained", device_arch());
        for (std::size_t l = 1; l < off.size(); ++l) {
            const std::int64_t width = off[l] - off[l - 1];
            const dim3 grid(static_cast<unsigned>((width + 255) / 256));
            // The first level follows copies, not a kernel: a plain launch.
            if (plain || l == 1 || grid.x > chain_blocks) {
                solve_level<<<grid, 256, 0, s>>>(m, order.data(), off[l - 1], off[l], b.data(), x.data());
                SWGPU_CUDA_CHECK_LAUNCH("solve_level");
            } else {
                launch_chained("solve_level_chained", solve_level_chained, grid, dim3(256), 0, s, m,
                               static_cast<const std::int32_t*>(order.data()), off[l - 1], off[l],
                               static_cast<const double*>(b.data()), x.data());
            }
        }
    }
};

}  // namespace swgpu::gpu::levels_kernels
