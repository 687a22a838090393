// Kernels of the summed-area table and the integral histogram (gpu/numerics/sat.hpp) and their launchers on device pointers
// (used by gpu/numerics/sat.cu and the benchmark).
//
// A table of L interleaved lanes is one problem of R rows and N = W·L "flattened" columns whose in-row scan has stride
// L: S[i][x] = Σ_{i' <= i} Σ_{x' <= x, x' ≡ x (mod L)} I[i'][x']. The value of flattened column x in row i comes from a
// Loader: the image itself (pixel_loader) or the one-hot bin indicator of the pixel (bin_loader).
//
// tiled_table_kernel: one block of 256 threads per tile of TH rows x 256 flattened columns, thread t owning column
// x0 + t and its TH values in registers. Inputs: the loader; outputs: the table (streaming stores) and the tile's
// aggregates. Each tile
//   1. loads its TH x 256 values, sums down its column (in registers), then along each row (strided warp scan with
//      shuffles, warp totals through shared memory): the tile's local table Lt;
//   2. horizontal look-back: publishes H = Lt's last column per (row, lane) with flag AGGREGATE, then walks the tiles
//      to its left (32 flags per step polled by one warp, the vectors summed by the whole block) adding their H
//      (AGGREGATE) until it meets an INCLUSIVE one, whose inclusive vector ends the walk: Left[r] = the sums over
//      rows i0..i0+r of all columns left of the tile; publishes Left + H with flag INCLUSIVE;
//   3. vertical look-back: publishes V = Lt's last row (local type) and X = Left[TH-1] (so V + X is the full row sum
//      over its tile row up to each column) with flag AGGREGATE, walks the tiles above adding V + X until an
//      INCLUSIVE one: Top[x] = S[i0-1][x]; publishes Top + V + X with flag INCLUSIVE;
//   4. writes S = Lt + Left[r] + Top[x].
// Protocol: every thread writes its part of a vector, then __threadfence(); __syncthreads(); thread 0 sets the flag with
// st.release.gpu. Readers poll flags with ld.acquire.gpu (one lane per predecessor), and after a __threadfence() read
// the vectors through L2 (ld.cg). Tiles are numbered by an atomic counter in row-major order, so every tile a block
// waits for was taken by a block that is already running: no deadlock, whatever the grid size. Flags and the counter
// are zeroed before each launch.
//
// Why these tiles keep a look-back of their own rather than the engine's (gpu/engine/lookback.cuh). The engine's
// tile status is one element per tile (packed with its flag in one 64-bit word up to 4 bytes, a flag and a value
// beyond), the composite of a 1-D scan; a tile here publishes a vector (TH row sums, then 256 column sums) that the
// whole block adds up while one warp polls 32 flags at a time. The flags themselves are the engine's (gpu/flags.cuh:
// st.release.gpu / ld.acquire.gpu and the bounded spin). The default schedule is not this one: the strips of
// sat_strip_kernels.cuh wait for no other block at all (two passes over the input, scans between them), and reach
// 63 % (uint8 -> uint64) and 54 % (float32) of the copy bound at 16384² on the H100 where these one-pass tiles, which
// wait for two look-backs between their loads and their stores, stay at 36-40 % (docs/performance.md).
#pragma once

#include <cub/block/block_scan.cuh>

#include <cstdint>
#include <type_traits>

#include "core/engine/wavefront.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/flags.cuh"

namespace swgpu::gpu::sat_kernels {

inline constexpr int block_threads = 256;  // = tile width in flattened columns
inline constexpr int warps = block_threads / 32;
inline constexpr int max_tiled_lanes = 32;
inline constexpr unsigned flag_aggregate = 1, flag_inclusive = 2;

// Rows per tile: the tile lives in registers, TH values of the local type per thread.
template <class Local>
inline constexpr int tile_rows = sizeof(Local) <= 4 ? 32 : 16;

// Loads and stores with cache hints for every element type (std::uint64_t is unsigned long, which the intrinsics do
// not all take: 8- and 4-byte integers travel as unsigned long long / unsigned int).
template <class T>
__device__ __forceinline__ auto as_hint_type(T* p) {
    if constexpr (std::is_integral_v<std::remove_const_t<T>> && sizeof(T) == 8)
        return reinterpret_cast<std::conditional_t<std::is_const_v<T>, const unsigned long long*, unsigned long long*>>(p);
    else if constexpr (std::is_integral_v<std::remove_const_t<T>> && sizeof(T) == 4)
        return reinterpret_cast<std::conditional_t<std::is_const_v<T>, const unsigned*, unsigned*>>(p);
    else
        return p;
}
template <class T>
__device__ __forceinline__ T load_cg(const T* p) { return static_cast<T>(__ldcg(as_hint_type(p))); }
template <class T>
__device__ __forceinline__ T load_cs(const T* p) { return static_cast<T>(__ldcs(as_hint_type(p))); }
template <class T>
__device__ __forceinline__ T load_nc(const T* p) { return static_cast<T>(__ldg(as_hint_type(p))); }
template <class T>
__device__ __forceinline__ void store_cs(T* p, T v) {
    using H = std::remove_pointer_t<decltype(as_hint_type(p))>;
    __stcs(as_hint_type(p), static_cast<H>(v));
}
template <class T>
__device__ __forceinline__ T shfl_up(T v, unsigned d) {
    if constexpr (std::is_integral_v<T> && sizeof(T) == 8)
        return static_cast<T>(__shfl_up_sync(0xffffffffu, static_cast<unsigned long long>(v), d));
    else
        return __shfl_up_sync(0xffffffffu, v, d);
}


template <class In, class Local>
struct pixel_loader {
    const In* in;
    index_t row_len;  // W·L
    __device__ __forceinline__ Local operator()(index_t i, index_t x) const { return static_cast<Local>(load_cs(in + i * row_len + x)); }
};

struct bin_loader {
    const std::uint16_t* bin;
    index_t cols;
    int bins;
    __device__ __forceinline__ std::uint32_t operator()(index_t i, index_t x) const {
        const index_t j = x / bins;
        return load_nc(bin + i * cols + j) == static_cast<std::uint16_t>(x - j * bins) ? 1u : 0u;
    }
};

template <class Out, class Local>
struct tiled_state {
    Out* out;
    index_t rows, row_len;  // R, N = W·L
    int lanes;
    index_t tiles_down, tiles_across;
    unsigned* counter;
    unsigned* hflag;
    unsigned* vflag;
    Out* h_agg;    // [tile][TH·L]
    Out* h_inc;    // [tile][TH·L]
    Local* v_loc;  // [tile][256]
    Out* x_agg;    // [tile][L]
    Out* v_inc;    // [tile][256]
};

// Bytes of workspace (everything but the table) for a problem; `flags_bytes` receives the part zeroed per launch.
template <class Out, class Local>
std::size_t tiled_workspace_bytes(index_t rows, index_t row_len, int lanes, std::size_t* flags_bytes = nullptr) {
    constexpr int TH = tile_rows<Local>;
    const auto tiles = static_cast<std::size_t>(((rows + TH - 1) / TH) * ((row_len + block_threads - 1) / block_threads));
    const std::size_t flags = (1 + 2 * tiles) * sizeof(unsigned);
    if (flags_bytes) *flags_bytes = (flags + 255) / 256 * 256;
    return (flags + 255) / 256 * 256 + tiles * (2 * TH * lanes * sizeof(Out) + block_threads * sizeof(Local) +
                                                lanes * sizeof(Out) + block_threads * sizeof(Out) + 64);
}

// Carves the workspace into a state; the caller zeroes the first flags_bytes before each launch.
template <class Out, class Local>
tiled_state<Out, Local> make_tiled_state(Out* out, index_t rows, index_t row_len, int lanes, void* workspace) {
    constexpr int TH = tile_rows<Local>;
    tiled_state<Out, Local> s{};
    s.out = out;
    s.rows = rows;
    s.row_len = row_len;
    s.lanes = lanes;
    s.tiles_down = (rows + TH - 1) / TH;
    s.tiles_across = (row_len + block_threads - 1) / block_threads;
    const auto tiles = static_cast<std::size_t>(s.tiles_down * s.tiles_across);
    auto* p = static_cast<unsigned char*>(workspace);
    s.counter = reinterpret_cast<unsigned*>(p);
    s.hflag = s.counter + 1;
    s.vflag = s.hflag + tiles;
    std::size_t flags_bytes = 0;
    tiled_workspace_bytes<Out, Local>(rows, row_len, lanes, &flags_bytes);
    p += flags_bytes;
    auto take = [&](std::size_t bytes) {
        void* r = p;
        p += (bytes + 63) / 64 * 64;
        return r;
    };
    s.h_agg = static_cast<Out*>(take(tiles * TH * lanes * sizeof(Out)));
    s.h_inc = static_cast<Out*>(take(tiles * TH * lanes * sizeof(Out)));
    s.v_inc = static_cast<Out*>(take(tiles * block_threads * sizeof(Out)));
    s.x_agg = static_cast<Out*>(take(tiles * lanes * sizeof(Out)));
    s.v_loc = static_cast<Local*>(take(tiles * block_threads * sizeof(Local)));
    return s;
}

template <class Out, class Local>
std::size_t tiled_shared_bytes(int lanes) {
    constexpr int TH = tile_rows<Local>;
    return static_cast<std::size_t>(TH) * lanes * (warps * sizeof(Local) + sizeof(Local) + sizeof(Out)) + 64;
}

// Polls the flags of predecessors p, p-1, ..., p-31 (lane l: predecessor p - l, tile id id_of(p - l)) until the nearest
// INCLUSIVE one and every AGGREGATE before it are published; returns its distance k (32: none in this window, all 32
// AGGREGATE). Called by one whole warp.
template <class IdOf>
__device__ __forceinline__ int look_back_window(const unsigned* flags, index_t p, IdOf id_of) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    unsigned spins = 0;
    std::uint64_t since = 0;
    for (;;) {
        const index_t q = p - lane;
        const unsigned f = q >= 0 ? load_acquire(flags + id_of(q)) : flag_inclusive;
        const unsigned inc = __ballot_sync(0xffffffffu, f == flag_inclusive);
        const unsigned zero = __ballot_sync(0xffffffffu, f == 0);
        const int k = inc ? __ffs(static_cast<int>(inc)) - 1 : 32;
        const unsigned upto = k >= 31 ? 0xffffffffu : ((2u << k) - 1u);
        if ((zero & upto) == 0) {
            __threadfence();
            return k;
        }
        spin_backoff(spins, since);
    }
}

template <class Out, class Local, int TH, class Loader>
__global__ void __launch_bounds__(block_threads) tiled_table_kernel(tiled_state<Out, Local> st, Loader load) {
    extern __shared__ __align__(16) unsigned char smem[];
    const int L = st.lanes;
    Out* left = reinterpret_cast<Out*>(smem);            // [TH][L]; Out is the widest type, so it goes first
    Local* wtot = reinterpret_cast<Local*>(left + TH * L);  // [TH][warps][L]
    Local* htot = wtot + TH * warps * L;                  // [TH][L]
    __shared__ unsigned s_tile;
    __shared__ int s_k;

    const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
    if (tid == 0) s_tile = atomicAdd(st.counter, 1u);
    __syncthreads();
    const index_t tile = s_tile;
    const index_t tr = tile / st.tiles_across, tc = tile - tr * st.tiles_across;
    const index_t i0 = tr * TH, x0 = tc * block_threads, x = x0 + tid;
    const bool col_ok = x < st.row_len;
    const int ch = static_cast<int>(x % L);
    const int nh = TH * L;

    // 1. the local table
    Local v[TH];
#pragma unroll
    for (int r = 0; r < TH; ++r) v[r] = (col_ok && i0 + r < st.rows) ? load(i0 + r, x) : Local(0);
#pragma unroll
    for (int r = 1; r < TH; ++r) v[r] += v[r - 1];
#pragma unroll
    for (int r = 0; r < TH; ++r) {
        for (int d = L; d < 32; d *= 2) {
            const Local y = shfl_up(v[r], static_cast<unsigned>(d));
            if (lane >= d) v[r] += y;
        }
        if (lane >= 32 - L) wtot[(r * warps + warp) * L + ch] = v[r];
    }
    __syncthreads();
    for (int e = tid; e < nh; e += block_threads) {  // exclusive prefix over warps, per (row, lane)
        const int r = e / L, c = e - r * L;
        Local run = 0;
        for (int w = 0; w < warps; ++w) {
            Local& t = wtot[(r * warps + w) * L + c];
            const Local tmp = t;
            t = run;
            run += tmp;
        }
        htot[e] = run;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < TH; ++r) v[r] += wtot[(r * warps + warp) * L + ch];

    // 2. horizontal look-back
    const index_t row_base = tr * st.tiles_across;
    if (tc == 0) {
        for (int e = tid; e < nh; e += block_threads) {
            left[e] = Out(0);
            st.h_inc[tile * nh + e] = static_cast<Out>(htot[e]);
        }
        __threadfence();
        __syncthreads();
        if (tid == 0) store_release(st.hflag + tile, flag_inclusive);
    } else {
        for (int e = tid; e < nh; e += block_threads) {
            left[e] = Out(0);
            st.h_agg[tile * nh + e] = static_cast<Out>(htot[e]);
        }
        __threadfence();
        __syncthreads();
        if (tid == 0) store_release(st.hflag + tile, flag_aggregate);
        // Warp 0 finds the window; the whole block sums it (TH·L values per tile: up to 1024 for 32 lanes).
        index_t p = tc - 1;
        for (;;) {
            if (warp == 0) {
                const int k = look_back_window(st.hflag, p, [&](index_t q) { return row_base + q; });
                if (lane == 0) s_k = k;
            }
            __syncthreads();
            const int k = s_k;
            const int last = k < 32 ? k : 31;
            for (int e = tid; e < nh; e += block_threads) {
                Out sum = left[e];
                for (int m = 0; m <= last; ++m) {
                    const index_t q = row_base + p - m;
                    sum += load_cg((m == k ? st.h_inc : st.h_agg) + q * nh + e);
                }
                left[e] = sum;
            }
            __syncthreads();  // s_k is rewritten by the next window; left is complete after the last one
            if (k < 32) break;
            p -= 32;
        }
        for (int e = tid; e < nh; e += block_threads) st.h_inc[tile * nh + e] = left[e] + static_cast<Out>(htot[e]);
        __threadfence();
        __syncthreads();
        if (tid == 0) store_release(st.hflag + tile, flag_inclusive);
    }

    // 3. vertical look-back
    const Out x_mine = left[(TH - 1) * L + ch];
    const Out bottom = static_cast<Out>(v[TH - 1]) + x_mine;  // S restricted to this tile row, at its last row
    Out top = Out(0);
    if (tr == 0) {
        st.v_inc[tile * block_threads + tid] = bottom;
        __threadfence();
        __syncthreads();
        if (tid == 0) store_release(st.vflag + tile, flag_inclusive);
    } else {
        st.v_loc[tile * block_threads + tid] = v[TH - 1];
        if (tid < L) st.x_agg[tile * L + tid] = left[(TH - 1) * L + tid];
        __threadfence();
        __syncthreads();
        if (tid == 0) store_release(st.vflag + tile, flag_aggregate);
        index_t p = tr - 1;
        for (;;) {
            if (warp == 0) {
                const int k = look_back_window(st.vflag, p, [&](index_t q) { return q * st.tiles_across + tc; });
                if (lane == 0) s_k = k;
            }
            __syncthreads();
            const int k = s_k;
            const int last = k < 32 ? k : 31;
            for (int m = 0; m <= last; ++m) {
                const index_t q = (p - m) * st.tiles_across + tc;
                if (m == k) top += load_cg(st.v_inc + q * block_threads + tid);
                else top += static_cast<Out>(load_cg(st.v_loc + q * block_threads + tid)) + load_cg(st.x_agg + q * L + ch);
            }
            __syncthreads();  // s_k is rewritten by the next window
            if (k < 32) break;
            p -= 32;
        }
        st.v_inc[tile * block_threads + tid] = top + bottom;
        __threadfence();
        __syncthreads();
        if (tid == 0) store_release(st.vflag + tile, flag_inclusive);
    }

    // 4. the table
    if (col_ok) {
#pragma unroll
        for (int r = 0; r < TH; ++r)
            if (i0 + r < st.rows) store_cs(st.out + (i0 + r) * st.row_len + x, static_cast<Out>(static_cast<Out>(v[r]) + left[r * L + ch] + top));
    }
}

template <class Out, class Local, class Loader>
void launch_tiled(const tiled_state<Out, Local>& st, Loader load, std::size_t flags_bytes, cudaStream_t stream) {
    constexpr int TH = tile_rows<Local>;
    SWGPU_CUDA_CHECK(cudaMemsetAsync(st.counter, 0, flags_bytes, stream));
    const auto blocks = static_cast<unsigned>(st.tiles_down * st.tiles_across);
    tiled_table_kernel<Out, Local, TH, Loader>
        <<<blocks, block_threads, tiled_shared_bytes<Out, Local>(st.lanes), stream>>>(st, load);
    SWGPU_CUDA_CHECK_LAUNCH("tiled_table_kernel");
}

// ---- row_sync: CUB along the rows, then down the columns ----------------------------------------------------------

// Block (i, c): lane c of row i, scanned in chunks of 256 pixels with a running carry.
template <class Out, class Loader>
__global__ void __launch_bounds__(block_threads) row_scan_kernel(Out* out, index_t cols, int lanes, Loader load) {
    using block_scan = cub::BlockScan<Out, block_threads>;
    __shared__ typename block_scan::TempStorage temp;
    const index_t i = blockIdx.x;
    const int c = static_cast<int>(blockIdx.y);
    Out carry = Out(0);
    for (index_t j0 = 0; j0 < cols; j0 += block_threads) {
        const index_t j = j0 + threadIdx.x;
        const Out v = j < cols ? static_cast<Out>(load(i, j * lanes + c)) : Out(0);
        Out incl, total;
        block_scan(temp).InclusiveSum(v, incl, total);
        __syncthreads();
        if (j < cols) out[(i * cols + j) * lanes + c] = carry + incl;
        carry += total;
    }
}

// Thread x: flattened column x, down all rows.
template <class Out>
__global__ void __launch_bounds__(block_threads) column_scan_kernel(Out* out, index_t rows, index_t row_len) {
    const index_t x = static_cast<index_t>(blockIdx.x) * block_threads + threadIdx.x;
    if (x >= row_len) return;
    Out acc = Out(0);
    index_t i = 0;
    for (; i + 4 <= rows; i += 4) {
        Out a[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) a[u] = out[(i + u) * row_len + x];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            acc += a[u];
            out[(i + u) * row_len + x] = acc;
        }
    }
    for (; i < rows; ++i) {
        acc += out[i * row_len + x];
        out[i * row_len + x] = acc;
    }
}

template <class Out, class Loader>
void launch_row_sync(Out* out, index_t rows, index_t cols, int lanes, Loader load, cudaStream_t stream) {
    row_scan_kernel<Out, Loader><<<dim3(static_cast<unsigned>(rows), static_cast<unsigned>(lanes)), block_threads, 0, stream>>>(
        out, cols, lanes, load);
    SWGPU_CUDA_CHECK_LAUNCH("row_scan_kernel");
    const index_t row_len = cols * lanes;
    column_scan_kernel<Out><<<static_cast<unsigned>((row_len + block_threads - 1) / block_threads), block_threads, 0, stream>>>(
        out, rows, row_len);
    SWGPU_CUDA_CHECK_LAUNCH("column_scan_kernel");
}

// ---- rectangle queries --------------------------------------------------------------------------------------------

struct device_rect {
    index_t top, left, bottom, right;
};

template <class T>
__device__ __forceinline__ T table_at(const T* t, index_t cols, int lanes, index_t i, index_t j, int c) {
    return (i < 0 || j < 0) ? T(0) : load_nc(t + (i * cols + j) * lanes + c);
}

// Thread (k, c): rectangle k, lane c; Word is the table type widened as sat::rect_sums returns it.
template <class T, class Word>
__global__ void rect_query_kernel(const T* table, index_t cols, int lanes, const device_rect* rects, index_t n, Word* out) {
    const index_t g = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (g >= n * lanes) return;
    const index_t k = g / lanes;
    const int c = static_cast<int>(g - k * lanes);
    const device_rect r = rects[k];
    const T a = table_at(table, cols, lanes, r.bottom, r.right, c), b = table_at(table, cols, lanes, r.top - 1, r.right, c);
    const T d = table_at(table, cols, lanes, r.bottom, r.left - 1, c), e = table_at(table, cols, lanes, r.top - 1, r.left - 1, c);
    if constexpr (std::is_floating_point_v<T>) {
        out[g] = (static_cast<Word>(a) - static_cast<Word>(b)) - (static_cast<Word>(d) - static_cast<Word>(e));
    } else {
        using U = std::make_unsigned_t<T>;  // wrapping: the exact difference of exact sums
        out[g] = static_cast<Word>(static_cast<U>(U(U(U(a) - U(b)) - U(d)) + U(e)));
    }
}

template <class T, class Word>
void launch_rect_queries(const T* table, index_t cols, int lanes, const device_rect* rects, index_t n, Word* out,
                         cudaStream_t stream) {
    if (n == 0) return;
    const index_t threads = n * lanes;
    rect_query_kernel<T, Word><<<static_cast<unsigned>((threads + 255) / 256), 256, 0, stream>>>(table, cols, lanes, rects, n, out);
    SWGPU_CUDA_CHECK_LAUNCH("rect_query_kernel");
}

}  // namespace swgpu::gpu::sat_kernels
