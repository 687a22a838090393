// The strips schedule of summed-area tables (one lane) and integral histograms (up to 32 bins): two passes over the
// input, one over the table, no waiting between blocks.
//
// The image is cut into bands of band_rows rows and column blocks (1024 columns of a table, 4 per thread; 256 pixels
// of a histogram, 32 per warp); one block of 8 warps owns a (band, column block) cell. With T the table and I the
// input (for a histogram, the one-hot indicator of each pixel's bin, one lane per bin):
//   T[i][j] = T[i0-1][j] + Σ_{i0 <= i' <= i} Σ_{j' <= j} I[i'][j']        (i0 the first row of the band)
// A first pass (count) reads the input and writes, per cell, the column sums of its band (colc), the row sums of its
// block (rowc) and its total (blk); small scans turn them into what the table pass needs:
//   rowc[cb][i]  -> Σ of row i left of the block                      (exclusive over column blocks)
//   colc[k][j]   -> Σ of column j above the band                      (exclusive over bands)
//   blk[k][cb]   -> Σ of the rectangle above the band and left of the block  (exclusive over both)
// so that T[i0-1][j] = blk[k][cb] + Σ_{cb0 <= j' <= j} colc[k][j']. The table pass then walks down its band: a warp
// keeps T[i-1][j] of its columns in registers, forms row i's prefix over its columns (a warp scan of the threads'
// four-value prefixes, or for a histogram lane b counting bin b along the warp's 32 pixels), adds the row sums left
// of it (rowc, and the warps to its left through shared memory, a chunk of rows at a time) and writes row i once.
// Loads of a chunk are issued together, before any store (the compiler cannot move a load above a store it might
// alias), so each chunk waits for memory once.
//
// Traffic: the input is read twice, the table written once, the scratch is about 1/128 of the table. Integer sums are
// exact (wrapping as the CPU's); floating sums are re-associated within the bound of core/numerics/sat.hpp.
#pragma once

#include <cstdint>
#include <type_traits>

#include "gpu/numerics/sat_kernels.cuh"

namespace swgpu::gpu::strip_kernels {

using sat_kernels::load_cg;
using sat_kernels::load_cs;
using sat_kernels::load_nc;
using sat_kernels::shfl_up;
using sat_kernels::store_cs;

inline constexpr int threads = 256;
inline constexpr int warps = threads / 32;
inline constexpr int table_width = 4 * threads;   // columns of a table's column block (4 per thread)
inline constexpr int histogram_width = threads;   // pixels of a histogram's column block (32 per warp)
inline constexpr int band_rows = 128;
inline constexpr int max_bins = 32;


template <class Acc>
struct strip_state {
    index_t rows, cols;
    int lanes;      // 1 for a table, B for a histogram
    index_t width;  // columns of a column block: table_width or histogram_width
    index_t bands, blocks;
    Acc* rowc;  // [blocks][rows][lanes]
    Acc* colc;  // [bands][cols][lanes]
    Acc* blk;   // [bands][blocks][lanes]
};

// `width`: table_width for a table (lanes == 1), histogram_width for a histogram of `lanes` bins.
template <class Acc>
std::size_t strip_workspace_bytes(index_t rows, index_t cols, int lanes, index_t width) {
    const auto bands = static_cast<std::size_t>((rows + band_rows - 1) / band_rows);
    const auto blocks = static_cast<std::size_t>((cols + width - 1) / width);
    const auto L = static_cast<std::size_t>(lanes);
    return (blocks * static_cast<std::size_t>(rows) * L + bands * static_cast<std::size_t>(cols) * L + bands * blocks * L) *
               sizeof(Acc) + 3 * 256;
}

template <class Acc>
strip_state<Acc> make_strip_state(index_t rows, index_t cols, int lanes, index_t width, void* workspace) {
    strip_state<Acc> s{};
    s.rows = rows;
    s.cols = cols;
    s.lanes = lanes;
    s.width = width;
    s.bands = (rows + band_rows - 1) / band_rows;
    s.blocks = (cols + s.width - 1) / s.width;
    auto* p = static_cast<unsigned char*>(workspace);
    auto take = [&](std::size_t n) {
        auto* r = reinterpret_cast<Acc*>(p);
        p += (n * sizeof(Acc) + 255) / 256 * 256;
        return r;
    };
    s.rowc = take(static_cast<std::size_t>(s.blocks * rows * lanes));
    s.colc = take(static_cast<std::size_t>(s.bands * cols * lanes));
    s.blk = take(static_cast<std::size_t>(s.bands * s.blocks * lanes));
    return s;
}

template <class T>
__device__ __forceinline__ T warp_inclusive_sum(T v) {
    const int lane = static_cast<int>(threadIdx.x & 31);
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        const T y = shfl_up(v, static_cast<unsigned>(d));
        if (lane >= d) v += y;
    }
    return v;
}

// ---- first pass: sums of the cells ----------------------------------------------------------------------------------

// Four consecutive table values at p (16-byte aligned): streaming vector stores.
template <class Out>
__device__ __forceinline__ void store4(Out* p, const Out (&v)[4]) {
    if constexpr (std::is_same_v<Out, float>) {
        __stcs(reinterpret_cast<float4*>(p), make_float4(v[0], v[1], v[2], v[3]));
    } else if constexpr (std::is_same_v<Out, double>) {
        __stcs(reinterpret_cast<double2*>(p), make_double2(v[0], v[1]));
        __stcs(reinterpret_cast<double2*>(p) + 1, make_double2(v[2], v[3]));
    } else if constexpr (sizeof(Out) == 8) {
        using U = unsigned long long;
        __stcs(reinterpret_cast<ulonglong2*>(p), make_ulonglong2(static_cast<U>(v[0]), static_cast<U>(v[1])));
        __stcs(reinterpret_cast<ulonglong2*>(p) + 1, make_ulonglong2(static_cast<U>(v[2]), static_cast<U>(v[3])));
    } else {
#pragma unroll
        for (int q = 0; q < 4; ++q) store_cs(p + q, v[q]);
    }
}

// Four consecutive input values of a row, kept as their raw bytes (sizeof(In) 32-bit words) until they are used, so
// that a chunk of many rows of narrow pixels is in flight in few registers.
template <class In>
struct raw4 {
    unsigned w[sizeof(In)];
};

// Columns j..j+3 of row i (zero outside the image): one vector load when `vec` (rows of a multiple of 4 values, so
// j < cols means j + 3 < cols and 4·sizeof(In)-byte alignment), else four.
template <class In, class Local>
__device__ __forceinline__ raw4<In> load_raw4(const sat_kernels::pixel_loader<In, Local>& load, index_t i, index_t j,
                                              index_t cols, bool vec) {
    raw4<In> r;
    const In* p = load.in + i * load.row_len + j;
    if (vec) {
        if (j >= cols) {
#pragma unroll
            for (int q = 0; q < static_cast<int>(sizeof(In)); ++q) r.w[q] = 0u;
        } else if constexpr (sizeof(In) == 1) {
            r.w[0] = __ldcs(reinterpret_cast<const unsigned*>(p));
        } else if constexpr (sizeof(In) == 2) {
            const uint2 a = __ldcs(reinterpret_cast<const uint2*>(p));
            r.w[0] = a.x, r.w[1] = a.y;
        } else if constexpr (sizeof(In) == 4) {
            const uint4 a = __ldcs(reinterpret_cast<const uint4*>(p));
            r.w[0] = a.x, r.w[1] = a.y, r.w[2] = a.z, r.w[3] = a.w;
        } else {
            const uint4 a = __ldcs(reinterpret_cast<const uint4*>(p)), b = __ldcs(reinterpret_cast<const uint4*>(p) + 1);
            r.w[0] = a.x, r.w[1] = a.y, r.w[2] = a.z, r.w[3] = a.w, r.w[4] = b.x, r.w[5] = b.y, r.w[6] = b.z, r.w[7] = b.w;
        }
    } else {
        In v[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) v[q] = j + q < cols ? load_cs(p + q) : In(0);
        memcpy(r.w, v, sizeof v);
    }
    return r;
}

template <class In, class Local>
__device__ __forceinline__ void unpack(const raw4<In>& r, Local (&v)[4]) {
    In x[4];
    memcpy(x, r.w, sizeof x);
#pragma unroll
    for (int q = 0; q < 4; ++q) v[q] = static_cast<Local>(x[q]);
}

// The n rows of a chunk from row c0 (the rest of the CH zero), columns j..j+3: every load issued before any is used.
template <int CH, class In, class Local>
__device__ __forceinline__ void load_chunk(const sat_kernels::pixel_loader<In, Local>& load, index_t c0, int n, index_t j,
                                           index_t cols, bool vec, raw4<In> (&raw)[CH]) {
#pragma unroll
    for (int r = 0; r < CH; ++r) raw[r] = load_raw4(load, r < n ? c0 + r : c0, r < n ? j : cols, cols, vec);
}

// Rows per chunk: 32 words of raw input per thread in flight in the first pass; the table pass keeps a prefix per
// row besides, and its chunk is what fits 3 blocks per SM without spilling.
template <class In>
inline constexpr int count_chunk_rows = 32 / static_cast<int>(sizeof(In));
template <class In>
inline constexpr int pass_chunk_rows = sizeof(In) <= 4 ? 8 : 4;

template <class T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int d = 16; d >= 1; d /= 2) {
        if constexpr (std::is_integral_v<T> && sizeof(T) == 8)
            v += static_cast<T>(__shfl_xor_sync(0xffffffffu, static_cast<unsigned long long>(v), d));
        else
            v += __shfl_xor_sync(0xffffffffu, v, d);
    }
    return v;
}

// Thread t: columns cb·1024 + 4t ... + 3 of band k. Local is wide enough for the sum of 1024 input values; Acc the
// table type. `vec`: rows of a multiple of 4 values, read four at a time.
template <class Acc, class Local, class In>
__global__ void __launch_bounds__(threads, 4) table_count_kernel(strip_state<Acc> st, sat_kernels::pixel_loader<In, Local> load, bool vec) {
    constexpr int CH = count_chunk_rows<In>;
    __shared__ Local part[CH][warps];
    __shared__ Acc wsum[warps];
    const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
    const index_t cb = blockIdx.x, k = blockIdx.y, j = cb * table_width + 4 * tid;
    const index_t i_begin = k * band_rows, i_end = min(st.rows, i_begin + band_rows);
    Acc column[4] = {Acc(0), Acc(0), Acc(0), Acc(0)};
    for (index_t c0 = i_begin; c0 < i_end; c0 += CH) {
        const int n = static_cast<int>(min(static_cast<index_t>(CH), i_end - c0));
        raw4<In> raw[CH];
        load_chunk(load, c0, n, j, st.cols, vec, raw);
#pragma unroll
        for (int r = 0; r < CH; ++r) {
            Local v[4];
            unpack(raw[r], v);
#pragma unroll
            for (int q = 0; q < 4; ++q) column[q] += static_cast<Acc>(v[q]);
            const Local s = warp_sum(static_cast<Local>((v[0] + v[1]) + (v[2] + v[3])));
            if (lane == 0) part[r][warp] = s;
        }
        __syncthreads();
        if (tid < n) {
            Acc s = Acc(0);
#pragma unroll
            for (int w = 0; w < warps; ++w) s += static_cast<Acc>(part[tid][w]);
            st.rowc[cb * st.rows + c0 + tid] = s;
        }
        __syncthreads();
    }
    if (vec) {
        if (j < st.cols) store4(st.colc + k * st.cols + j, column);
    } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
            if (j + q < st.cols) st.colc[k * st.cols + j + q] = column[q];
    }
    const Acc total = warp_sum(static_cast<Acc>((column[0] + column[1]) + (column[2] + column[3])));
    if (lane == 0) wsum[warp] = total;
    __syncthreads();
    if (tid == 0) {
        Acc s = Acc(0);
        for (int w = 0; w < warps; ++w) s += wsum[w];
        st.blk[k * st.blocks + cb] = s;
    }
}

// Thread t: column cb·256 + t of band k, its B bin counts in shared memory (bin-major, so a thread's counters share
// one bank and never conflict); the rows' counts of the block by shared atomics.
__global__ void __launch_bounds__(threads) histogram_count_kernel(strip_state<std::uint32_t> st, const std::uint16_t* bin) {
    constexpr int CH = 32;
    __shared__ std::uint32_t col[max_bins * threads];  // [bin][thread]
    __shared__ std::uint32_t rowh[CH * 32];
    __shared__ std::uint32_t part[warps * 32];
    const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
    const int B = st.lanes;
    const index_t cb = blockIdx.x, k = blockIdx.y, j = cb * threads + tid;
    const bool jok = j < st.cols;
    for (int b = 0; b < max_bins; ++b) col[b * threads + tid] = 0;
    for (int e = tid; e < CH * 32; e += threads) rowh[e] = 0;
    __syncthreads();
    const index_t i_begin = k * band_rows, i_end = min(st.rows, i_begin + band_rows);
    for (index_t c0 = i_begin; c0 < i_end; c0 += CH) {
        const int n = static_cast<int>(min(static_cast<index_t>(CH), i_end - c0));
        unsigned chunk[CH];  // every load of the chunk in flight at once
#pragma unroll
        for (int r = 0; r < CH; ++r) chunk[r] = (jok && r < n) ? static_cast<unsigned>(load_nc(bin + (c0 + r) * st.cols + j)) : 0xffffu;
#pragma unroll
        for (int r = 0; r < CH; ++r) {
            const unsigned b = chunk[r];
            const bool in = b < static_cast<unsigned>(B);
            if (in) {
                col[static_cast<int>(b) * threads + tid] += 1;
                atomicAdd(&rowh[r * 32 + static_cast<int>(b)], 1u);
            }
        }
        __syncthreads();
        for (int e = tid; e < n * 32; e += threads) {
            const int r = e >> 5, b = e & 31;
            if (b < B) st.rowc[(cb * st.rows + c0 + r) * B + b] = rowh[e];
            rowh[e] = 0;
        }
        __syncthreads();
    }
    if (jok)
        for (int b = 0; b < B; ++b) st.colc[(k * st.cols + j) * B + b] = col[b * threads + tid];
    __syncthreads();
    std::uint32_t s = 0;  // warp w sums its 32 columns' counts of bin `lane`
    for (int jj = warp * 32; jj < warp * 32 + 32; ++jj) s += col[lane * threads + jj];
    part[warp * 32 + lane] = s;
    __syncthreads();
    if (tid < B) {
        std::uint32_t t = 0;
        for (int w = 0; w < warps; ++w) t += part[w * 32 + tid];
        st.blk[(k * st.blocks + cb) * B + tid] = t;
    }
}

// ---- the scans between the passes -------------------------------------------------------------------------------

// phase 0: rowc exclusive over column blocks (threads (i, b)), colc exclusive over bands (threads (j, b));
// phase 1: blk exclusive over bands (threads (cb, b)); phase 2: blk exclusive over column blocks (threads (k, b)).
template <class Acc>
__global__ void strip_scan_kernel(strip_state<Acc> st, int phase) {
    const index_t g = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const index_t L = st.lanes;
    Acc* p = nullptr;
    index_t steps = 0, stride = 0;
    if (phase == 0) {
        if (g < st.rows * L) {
            p = st.rowc + g;
            steps = st.blocks;
            stride = st.rows * L;
        } else if (g < (st.rows + st.cols) * L) {
            p = st.colc + (g - st.rows * L);
            steps = st.bands;
            stride = st.cols * L;
        }
    } else if (phase == 1) {
        if (g < st.blocks * L) {
            p = st.blk + g;
            steps = st.bands;
            stride = st.blocks * L;
        }
    } else if (g < st.bands * L) {
        p = st.blk + (g / L) * st.blocks * L + g % L;
        steps = st.blocks;
        stride = L;
    }
    if (!p) return;
    Acc run = Acc(0);
    for (index_t s = 0; s < steps; ++s) {
        const Acc v = p[s * stride];
        p[s * stride] = run;
        run += v;
    }
}

template <class Acc>
void launch_strip_scans(const strip_state<Acc>& st, cudaStream_t stream) {
    const index_t n0 = (st.rows + st.cols) * st.lanes, n1 = st.blocks * st.lanes, n2 = st.bands * st.lanes;
    strip_scan_kernel<Acc><<<static_cast<unsigned>((n0 + 255) / 256), 256, 0, stream>>>(st, 0);
    SWGPU_CUDA_CHECK_LAUNCH("strip_scan_kernel");
    strip_scan_kernel<Acc><<<static_cast<unsigned>((n1 + 255) / 256), 256, 0, stream>>>(st, 1);
    SWGPU_CUDA_CHECK_LAUNCH("strip_scan_kernel");
    strip_scan_kernel<Acc><<<static_cast<unsigned>((n2 + 255) / 256), 256, 0, stream>>>(st, 2);
    SWGPU_CUDA_CHECK_LAUNCH("strip_scan_kernel");
}

// ---- the table pass -------------------------------------------------------------------------------------------------

template <class Out, class Local, class In>
__global__ void __launch_bounds__(threads, 3) table_strip_kernel(strip_state<Out> st, sat_kernels::pixel_loader<In, Local> load,
                                                              Out* out, bool vec) {
    constexpr int CH = pass_chunk_rows<In>;
    __shared__ Local part[CH][warps];
    __shared__ Out left[CH];  // the row sums left of the block (read here once, not after every row's stores)
    __shared__ Out wsum[warps];
    const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
    const index_t cb = blockIdx.x, k = blockIdx.y, j = cb * table_width + 4 * tid;
    // T[i0-1][j + q]: the column sums above the band, summed along the row from the block's first column
    Out acc[4];
    Out run = Out(0);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        if (j + q < st.cols) run += load_cg(st.colc + k * st.cols + j + q);
        acc[q] = run;
    }
    const Out inclusive = warp_inclusive_sum(run);
    if (lane == 31) wsum[warp] = inclusive;
    Out before = shfl_up(inclusive, 1u);
    if (lane == 0) before = Out(0);
    __syncthreads();
    Out corner = load_cg(st.blk + k * st.blocks + cb);
    for (int w = 0; w < warp; ++w) corner += wsum[w];
    before += corner;
#pragma unroll
    for (int q = 0; q < 4; ++q) acc[q] += before;

    const index_t i_begin = k * band_rows, i_end = min(st.rows, i_begin + band_rows);
    for (index_t c0 = i_begin; c0 < i_end; c0 += CH) {
        const int n = static_cast<int>(min(static_cast<index_t>(CH), i_end - c0));
        raw4<In> raw[CH];
        Local exc[CH];  // the sum of the row over the warp's columns left of this thread
        load_chunk(load, c0, n, j, st.cols, vec, raw);
#pragma unroll
        for (int r = 0; r < CH; ++r) {
            Local v[4];
            unpack(raw[r], v);
            const Local inc = warp_inclusive_sum(static_cast<Local>((v[0] + v[1]) + (v[2] + v[3])));
            exc[r] = shfl_up(inc, 1u);
            if (lane == 0) exc[r] = Local(0);
            if (lane == 31) part[r][warp] = inc;
        }
        __syncthreads();
        if (tid < n) {  // exclusive over the warps, per row
            left[tid] = load_cg(st.rowc + cb * st.rows + c0 + tid);
            Local s = Local(0);
#pragma unroll
            for (int w = 0; w < warps; ++w) {
                const Local t = part[tid][w];
                part[tid][w] = s;
                s += t;
            }
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < CH; ++r) {
            if (r < n) {
                const index_t i = c0 + r;
                const Out l = left[r];
                const Local mid = static_cast<Local>(exc[r] + part[r][warp]);
                Local v[4];
                unpack(raw[r], v);
                v[1] += v[0];
                v[2] += v[1];
                v[3] += v[2];
#pragma unroll
                for (int q = 0; q < 4; ++q) acc[q] += l + static_cast<Out>(static_cast<Local>(v[q] + mid));
                if (vec) {
                    if (j < st.cols) store4(out + i * st.cols + j, acc);
                } else {
#pragma unroll
                    for (int q = 0; q < 4; ++q)
                        if (j + q < st.cols) store_cs(out + i * st.cols + j + q, acc[q]);
                }
            }
        }
        __syncthreads();
    }
}

// Warp w: the 32 pixels cb·256 + 32w ...; lane b: bin b, its 32 table values in registers.
__global__ void __launch_bounds__(threads, 3) histogram_strip_kernel(strip_state<std::uint32_t> st, const std::uint16_t* bin,
                                                                  std::uint32_t* out) {
    constexpr int CH = 16;
    __shared__ std::uint32_t h[CH * warps * 32];   // [row][warp][bin]
    __shared__ std::uint16_t px[CH * warps * 32];  // [row][warp][pixel]: the chunk's bins, read once
    __shared__ std::uint32_t wsum[warps * 32];
    const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
    const int B = st.lanes;
    const bool lane_bin = lane < B;
    const index_t cb = blockIdx.x, k = blockIdx.y, j0 = cb * threads + warp * 32;
    const bool full = j0 + 32 <= st.cols;
    // T[i0-1][j0 + t][lane]
    std::uint32_t acc[32];
    std::uint32_t run = 0;
#pragma unroll
    for (int t = 0; t < 32; ++t) {
        if (lane_bin && j0 + t < st.cols) run += load_cg(st.colc + (k * st.cols + j0 + t) * B + lane);
        acc[t] = run;
    }
    wsum[warp * 32 + lane] = run;
    __syncthreads();
    std::uint32_t before = lane_bin ? load_cg(st.blk + (k * st.blocks + cb) * B + lane) : 0u;
    for (int w = 0; w < warp; ++w) before += wsum[w * 32 + lane];
#pragma unroll
    for (int t = 0; t < 32; ++t) acc[t] += before;

    const index_t i_begin = k * band_rows, i_end = min(st.rows, i_begin + band_rows);
    const bool pixel_ok = j0 + lane < st.cols;
    for (index_t c0 = i_begin; c0 < i_end; c0 += CH) {
        const int n = static_cast<int>(min(static_cast<index_t>(CH), i_end - c0));
        // the bin counts of this warp's 32 pixels, row by row (every load of the chunk in flight at once)
        unsigned chunk[CH];
#pragma unroll
        for (int r = 0; r < CH; ++r)
            chunk[r] = (pixel_ok && r < n) ? static_cast<unsigned>(load_nc(bin + (c0 + r) * st.cols + j0 + lane)) : 0xffffu;
#pragma unroll
        for (int r = 0; r < CH; ++r) {
            const unsigned pb = chunk[r];
            px[(r * warps + warp) * 32 + lane] = static_cast<std::uint16_t>(pb);
            std::uint32_t* hr = h + (r * warps + warp) * 32;
            hr[lane] = 0;
            __syncwarp();
            const unsigned group = __match_any_sync(0xffffffffu, pb);
            if (pb < static_cast<unsigned>(B) && lane == __ffs(static_cast<int>(group)) - 1) hr[pb] = static_cast<unsigned>(__popc(group));
            __syncwarp();
        }
        __syncthreads();
        for (int e = tid; e < n * 32; e += threads) {  // exclusive over the warps, per (row, bin), from the counts left of the block
            const int r = e >> 5, b = e & 31;
            std::uint32_t s = b < B ? load_cg(st.rowc + (cb * st.rows + c0 + r) * B + b) : 0u;
#pragma unroll
            for (int w = 0; w < warps; ++w) {
                const std::uint32_t t = h[(r * warps + w) * 32 + b];
                h[(r * warps + w) * 32 + b] = s;
                s += t;
            }
        }
        __syncthreads();
        for (int r = 0; r < n; ++r) {
            const index_t i = c0 + r;
            const unsigned pb = px[(r * warps + warp) * 32 + lane];
            std::uint32_t c = h[(r * warps + warp) * 32 + lane];
            std::uint32_t* o = out + (i * st.cols + j0) * B + lane;
            if (full) {  // uniform over the warp: every lane reaches the same shuffles
#pragma unroll
                for (int t = 0; t < 32; ++t) {
                    c += __shfl_sync(0xffffffffu, pb, t) == static_cast<unsigned>(lane) ? 1u : 0u;
                    acc[t] += c;
                    if (lane_bin) store_cs(o + t * B, acc[t]);
                }
            } else {
#pragma unroll
                for (int t = 0; t < 32; ++t) {
                    c += __shfl_sync(0xffffffffu, pb, t) == static_cast<unsigned>(lane) ? 1u : 0u;
                    acc[t] += c;
                    if (lane_bin && j0 + t < st.cols) store_cs(o + t * B, acc[t]);
                }
            }
        }
        __syncthreads();
    }
}

// ---- launchers --------------------------------------------------------------------------------------------------

// The table of one lane: count, scans, table pass. Each step has its own launcher for the benchmark's breakdown.
template <class Out, class Local, class In>
void launch_table_count(const strip_state<Out>& st, const sat_kernels::pixel_loader<In, Local>& load, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>(st.blocks), static_cast<unsigned>(st.bands));
    table_count_kernel<Out, Local, In><<<grid, threads, 0, stream>>>(st, load, load.row_len % 4 == 0);
    SWGPU_CUDA_CHECK_LAUNCH("table_count_kernel");
}
template <class Out, class Local, class In>
void launch_table_pass(const strip_state<Out>& st, const sat_kernels::pixel_loader<In, Local>& load, Out* out, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>(st.blocks), static_cast<unsigned>(st.bands));
    table_strip_kernel<Out, Local, In><<<grid, threads, 0, stream>>>(st, load, out, load.row_len % 4 == 0);
    SWGPU_CUDA_CHECK_LAUNCH("table_strip_kernel");
}
template <class Out, class Local, class In>
void launch_table_strips(const strip_state<Out>& st, const sat_kernels::pixel_loader<In, Local>& load, Out* out, cudaStream_t stream) {
    launch_table_count(st, load, stream);
    launch_strip_scans(st, stream);
    launch_table_pass(st, load, out, stream);
}

inline void launch_histogram_count(const strip_state<std::uint32_t>& st, const std::uint16_t* bin, cudaStream_t stream) {
    histogram_count_kernel<<<dim3(static_cast<unsigned>(st.blocks), static_cast<unsigned>(st.bands)), threads, 0, stream>>>(st, bin);
    SWGPU_CUDA_CHECK_LAUNCH("histogram_count_kernel");
}
inline void launch_histogram_pass(const strip_state<std::uint32_t>& st, const std::uint16_t* bin, std::uint32_t* out, cudaStream_t stream) {
    histogram_strip_kernel<<<dim3(static_cast<unsigned>(st.blocks), static_cast<unsigned>(st.bands)), threads, 0, stream>>>(st, bin, out);
    SWGPU_CUDA_CHECK_LAUNCH("histogram_strip_kernel");
}
inline void launch_histogram_strips(const strip_state<std::uint32_t>& st, const std::uint16_t* bin, std::uint32_t* out,
                                    cudaStream_t stream) {
    launch_histogram_count(st, bin, stream);
    launch_strip_scans(st, stream);
    launch_histogram_pass(st, bin, out, stream);
}

}  // namespace swgpu::gpu::strip_kernels
