// The weighted scan of the wavefront engine on the GPU (docs/engine.md; Hou et al., IPDPS 2018, Alg. 2), in
// layers: thread (a chunk of consecutive cells, sequentially) -> warp (shuffles) -> block (warp totals through shared
// memory) -> device (one launch, decoupled look-back between tiles, each tile's status in a line of its own). The same
// layers serve the row executors.
//
// What is scanned. A row of cells j = 0..n-1 carries maps m_j(x) = (x ∘ a_j) ◇ b_j. With x0 the value entering cell 0,
//   exclusive:  out[j] = (m_{j-1} after ... after m_0)(x0)    the value entering cell j
//   inclusive:  out[j] = (m_j after ... after m_0)(x0)        the value leaving cell j
// Two algebras carry the composites:
//   weighted_algebra  constant weight a_j = w: the composite of L consecutive maps is {power(w, L), B}, and only B is
//                     carried; the weight comes from the distance L (the paper's weighted scan, one value per cell).
//   map_algebra       row-varying weights: composites are full maps {a, b} (the general linear-map scan).
// Both offer combine(earlier, later, later_len) (the composite of a run followed by the next run) and
// apply(composite, x, len) (the value leaving a run of len cells entered with x).
//
// The layers live in scan_algebra.cuh, warp_ops.cuh, block_scan.cuh and lookback.cuh; this file holds the tile loop,
// the kernels and their dispatch.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/engine/linear_map.hpp"
#include "core/engine/operator_pair.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/flags.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/lookback.cuh"

namespace swgpu::gpu {

// ---------------------------------------------------------------------------------------------------------------------
// The stand-alone device scan over arrays
// ---------------------------------------------------------------------------------------------------------------------

template <class Alg>
struct scan_arguments {
    using value = typename Alg::value;
    const value* a;  // map_algebra only: the weights
    const value* b;
    value* out;
    std::int64_t n;
    value x0;
    bool inclusive;
    bool vectorized;  // a, b and out are aligned to CPT·sizeof(value)
    Alg alg;
    lookback_view<typename Alg::elem> status;
    unsigned epoch;
    long long pace_cycles;     // the first wave's tile t starts loading t·pace_cycles after the wait (pace_first_wave)
    std::int64_t paced_tiles;  // the tiles of the first wave (blocks resident at once); later ones start as blocks end
};

// Pacing of a one-pass scan's first wave. All its blocks leave the wait for the previous kernel at once; if they all
// load at once, the tiles' data arrives in no particular order, and almost every tile, needing all earlier tiles, can
// store only after the last byte has arrived: the stores follow the loads instead of overlapping them. Tile t of the
// first wave therefore waits t·pace_cycles (SM clock) before it loads, so loads are issued in tile order at about the
// rate memory delivers them, tiles learn their prefixes in order, and their stores overlap later tiles' loads.
// Measured on the H100 (2026-11-22, statuses then 16 to a line): 7 % less time at 2^20 (6.84 -> 6.36 us, (max,+)
// fp32, persistent kernel), 5-7 % at 2^21.
template <class Alg>
__device__ __forceinline__ void pace_first_wave(const scan_arguments<Alg>& args, std::int64_t tile) {
    if (args.pace_cycles <= 0 || tile >= args.paced_tiles) return;
    const long long start = clock64();
    while (clock64() - start < tile * args.pace_cycles) {
    }
}

// The alignment of a chunk of N values: the largest power of two that divides its size, at most 16 (so consecutive
// chunks of an aligned array are all aligned).
template <class T, int N>
inline constexpr std::size_t chunk_alignment = [] {
    std::size_t a = 16;
    while ((sizeof(T) * N) % a != 0) a /= 2;
    return a < alignof(T) ? alignof(T) : a;
}();

template <class T, int N>
struct alignas(chunk_alignment<T, N>) vec_chunk {
    T v[N];
};

// Streaming loads and stores of a chunk (evict-first: the data is touched once), 16 bytes per instruction when the
// chunk is a whole number of 16-byte pieces.
template <class T, int N>
inline constexpr bool whole_vectors = (sizeof(T) * N) % 16 == 0;

template <class T, int N>
__device__ __forceinline__ vec_chunk<T, N> load_chunk(const T* p) {
    if constexpr (whole_vectors<T, N>) {
        constexpr int pieces = int(sizeof(T) * N / 16);
        int4 raw[pieces];
#pragma unroll
        for (int k = 0; k < pieces; ++k) raw[k] = __ldcs(reinterpret_cast<const int4*>(p) + k);
        vec_chunk<T, N> c;
        std::memcpy(&c, raw, sizeof(c));
        return c;
    } else {
        return *reinterpret_cast<const vec_chunk<T, N>*>(p);
    }
}
template <class T, int N>
__device__ __forceinline__ void store_chunk(T* p, const vec_chunk<T, N>& c) {
    if constexpr (whole_vectors<T, N>) {
        constexpr int pieces = int(sizeof(T) * N / 16);
        int4 raw[pieces];
        std::memcpy(raw, &c, sizeof(c));
#pragma unroll
        for (int k = 0; k < pieces; ++k) __stcs(reinterpret_cast<int4*>(p) + k, raw[k]);
    } else {
        *reinterpret_cast<vec_chunk<T, N>*>(p) = c;
    }
}

// One tile of the stand-alone scan: loading, and the output once the tile's prefix is known.
template <class Alg, int THREADS, int CPT, int SUBS>
struct scan_tile {
    using bs = block_scan<Alg, THREADS, CPT, SUBS>;
    using elem = typename Alg::elem;
    using value = typename Alg::value;

    struct storage {
        typename bs::storage scan;
        lookback_storage<elem, THREADS> lookback;
    };

    // Cells past the end get the identity; they only follow real cells, so they change no output.
    __device__ __forceinline__ static void load(const scan_arguments<Alg>& args, unsigned tile, elem (&el)[SUBS][CPT]) {
        const std::int64_t start = std::int64_t(tile) * bs::tile;
        if (start + bs::tile <= args.n && args.vectorized) {
#pragma unroll
            for (int s = 0; s < SUBS; ++s) {
                const std::int64_t j = start + bs::offset(s, 0);
                const auto vb = load_chunk<value, CPT>(args.b + j);
                if constexpr (Alg::is_map) {
                    const auto va = load_chunk<value, CPT>(args.a + j);
#pragma unroll
                    for (int e = 0; e < CPT; ++e) el[s][e] = elem{va.v[e], vb.v[e]};
                } else {
#pragma unroll
                    for (int e = 0; e < CPT; ++e) el[s][e] = Alg::input(vb.v[e]);
                }
            }
        } else {
#pragma unroll
            for (int s = 0; s < SUBS; ++s)
#pragma unroll
                for (int e = 0; e < CPT; ++e) {
                    const std::int64_t j = start + bs::offset(s, e);
                    if (j < args.n) {
                        if constexpr (Alg::is_map) el[s][e] = elem{args.a[j], args.b[j]};
                        else el[s][e] = Alg::input(args.b[j]);
                    } else {
                        el[s][e] = Alg::identity();
                    }
                }
        }
    }

    // The outputs of the tile, given the value entering it.
    __device__ __forceinline__ static void store(const scan_arguments<Alg>& args, unsigned tile,
                                                 const typename bs::powers& pw, const elem (&el)[SUBS][CPT],
                                                 const elem (&before)[SUBS], value entering_tile) {
        const std::int64_t start = std::int64_t(tile) * bs::tile;
        const bool full = start + bs::tile <= args.n && args.vectorized;
        with_kind(args, [&]<bool Inclusive>() {
            typename Alg::power off = pw.first;  // the weight of offset(s, 0) cells
#pragma unroll
            for (int s = 0; s < SUBS; ++s) {
                const value x = args.alg.apply(before[s], entering_tile, off);
                off = Alg::pow_sum(off, pw.sub);
                put_chunk(args, start + bs::offset(s, 0), full, chunk_outputs<Inclusive>(args.alg, el[s], x));
            }
        });
    }

    // Calls body.template operator()<Inclusive>() with the scan's kind as a constant.
    template <class Body>
    __device__ __forceinline__ static void with_kind(const scan_arguments<Alg>& args, Body&& body) {
        if (args.inclusive) body.template operator()<true>();
        else body.template operator()<false>();
    }

    // The outputs of the chunk of cells `el` entered with x.
    template <bool Inclusive>
    __device__ __forceinline__ static vec_chunk<value, CPT> chunk_outputs(const Alg& alg, const elem (&el)[CPT], value x) {
        vec_chunk<value, CPT> o;
#pragma unroll
        for (int e = 0; e < CPT; ++e) {
            const value after = alg.step(el[e], x);
            o.v[e] = Inclusive ? after : x;
            x = after;
        }
        return o;
    }

    // Stores the outputs of the chunk starting at cell j: vector stores in a whole tile (`full`), else cell by cell.
    __device__ __forceinline__ static void put_chunk(const scan_arguments<Alg>& args, std::int64_t j, bool full,
                                                     const vec_chunk<value, CPT>& o) {
        if (full) {
            store_chunk<value, CPT>(args.out + j, o);
        } else {
#pragma unroll
            for (int e = 0; e < CPT; ++e)
                if (j + e < args.n) args.out[j + e] = o.v[e];
        }
    }

    // The weights a tile's kernel needs: the block scan's powers, one tile's, and that of the `before` cells before it.
    struct weights {
        typename bs::powers pw;
        typename Alg::power tile, start;
    };
    __device__ __forceinline__ static weights weights_for(const Alg& alg, std::int64_t before) {
        weights w;
        w.pw = bs::make_powers(alg);
        w.tile = tile_power(w.pw);
        w.start = alg.pow(before);
        return w;
    }

    // The weight of a whole tile.
    __device__ __forceinline__ static typename Alg::power tile_power(const typename bs::powers& pw) {
        auto p = pw.warp;
#pragma unroll
        for (int w = 1; w < bs::warps; ++w) p = Alg::pow_sum(p, pw.warp);
        return p;
    }
};

// Inputs: b (and a for maps) of n cells. Output: out, exclusive or inclusive. One tile per block; each tile finds its
// prefix by look-back (protocol at lookback_view). Tile order: blockIdx.x, which relies on the hardware starting blocks
// in increasing index order, as CUB's single-pass scan does (the spin deadline turns a violation into an error, never
// a hang). Reads each input once and writes each output once.
template <class Alg, int THREADS, int CPT, int SUBS, int MinBlocks>
__global__ void __launch_bounds__(THREADS, MinBlocks) weighted_scan_kernel(const scan_arguments<Alg> args) {
    using st = scan_tile<Alg, THREADS, CPT, SUBS>;
    using elem = typename Alg::elem;
    __shared__ typename st::storage sm;
    const unsigned tile = blockIdx.x;
    typename st::weights w{};
    if constexpr (Alg::costly_powers) w = st::weights_for(args.alg, std::int64_t(tile) * st::bs::tile);
    wait_for_previous_grids();
    allow_next_grid();
    pace_first_wave(args, tile);
    elem el[SUBS][CPT];
    st::load(args, tile, el);
    if constexpr (!Alg::costly_powers) w = st::weights_for(args.alg, std::int64_t(tile) * st::bs::tile);
    elem before[SUBS];
    const elem total = st::bs::scan(args.alg, w.pw, el, before, sm.scan);
    const elem prefix = tile_prefix<Alg, THREADS>(args.alg, args.status, tile, args.epoch, total, w.tile, sm.lookback);
    st::store(args, tile, w.pw, el, before, args.alg.apply(prefix, args.x0, w.start));
}

// The same with persistent blocks: block b takes tiles b, b + G, b + 2G, ... (G = gridDim.x, at most as many blocks as
// fit on the device at once, so every block is resident), and loads its next tile into registers before it looks back
// for the current one, so the memory system stays busy during the look-back. A tile waits only on smaller tiles, which
// belong to resident blocks at the same or an earlier step.
template <class Alg, int THREADS, int CPT, int SUBS>
__global__ void __launch_bounds__(THREADS) weighted_scan_persistent_kernel(const scan_arguments<Alg> args) {
    using st = scan_tile<Alg, THREADS, CPT, SUBS>;
    using elem = typename Alg::elem;
    __shared__ typename st::storage sm;
    const std::int64_t tiles = (args.n + st::bs::tile - 1) / st::bs::tile;
    std::int64_t tile = blockIdx.x;
    typename st::weights w{};  // w.start: the weight of everything before the current tile
    if constexpr (Alg::costly_powers) w = st::weights_for(args.alg, tile * st::bs::tile);
    wait_for_previous_grids();
    allow_next_grid();
    if (tile >= tiles) return;
    pace_first_wave(args, tile);
    elem cur[SUBS][CPT];
    st::load(args, static_cast<unsigned>(tile), cur);
    if constexpr (!Alg::costly_powers) w = st::weights_for(args.alg, tile * st::bs::tile);
    const auto& pw = w.pw;
    const auto tile_pw = w.tile;
    auto start_pw = w.start;
    const auto stride_pw = args.alg.pow(std::int64_t(gridDim.x) * st::bs::tile);
    for (; tile < tiles; tile += gridDim.x) {
        elem before[SUBS];
        const elem total = st::bs::scan(args.alg, pw, cur, before, sm.scan);
        elem next[SUBS][CPT];
        const std::int64_t next_tile = tile + gridDim.x;
        if (next_tile < tiles) st::load(args, static_cast<unsigned>(next_tile), next);
        const elem prefix = tile_prefix<Alg, THREADS>(args.alg, args.status, static_cast<unsigned>(tile), args.epoch,
                                                      total, tile_pw, sm.lookback);
        st::store(args, static_cast<unsigned>(tile), pw, cur, before, args.alg.apply(prefix, args.x0, start_pw));
        start_pw = Alg::pow_sum(start_pw, stride_pw);
#pragma unroll
        for (int s = 0; s < SUBS; ++s)
#pragma unroll
            for (int e = 0; e < CPT; ++e) cur[s][e] = next[s][e];
        __syncthreads();  // shared memory of this tile read by all before the next tile rewrites it (tile 0 has no look-back barrier)
    }
}

// Tuning entries of the device scan: the kernel (one tile per block with the tile in registers, or persistent blocks
// with register double buffering), block threads, cells per chunk, chunks per thread and the blocks per SM the
// compiler must make room for. Outputs are always stored with the streaming (evict-first) policy. A table, chosen by
// index; bench_weighted_scan measures every entry. Kept: the entries that are the fastest at some size on the H100
// (2026-11-22, statuses a line apart). Measured and dropped (H100, 2026-11-22, % of a d2d copy):
// - each tile read twice, reduced by one block and scanned by a block one generation later from L2 (bulk copies with
//   L2 hints, a look-back warp per block): with statuses 16 to a line the default from 2^23 (92-97 %), 5-8 points
//   above every one-pass kernel; with statuses a line apart the register tiles below beat it at every size (2^23-2^28:
//   95-96 % against 91-94 %), and it was removed;
// - one tile per block staged in shared memory by a bulk copy (tiles of 8192-12288 cells, 4-6 blocks per SM; with or
//   without a look-back warp that starts while the tile loads): 84-89 % from 2^23 (statuses 16 to a line);
// - at 2^20-2^23 with statuses a line apart: persistent tiles of 4096 cells (256 or 512 threads; (max,+) fp32 at 2^20
//   1-2 % ahead of entry 2, integer (max,+) with the general saturating step 17 % behind entry 0), register tiles
//   of 8192 cells at 2 blocks per SM or 128 threads at 4 (5-30 % behind), chunks of 8 cells (2-30 % behind);
// - persistent blocks with a ring of 2-4 bulk-copied stages (64-73 % at 2^28: a tile waits on every lower block's
//   tile of the same round, so the grid advances in lock step);
// - tiles of 2048 cells (45-77 % at 2^28: more tiles per look-back and more per-tile overhead);
// - outputs written back by bulk copies from shared memory (84-85 %, no gain); 512-thread tiles, staged (84 %) or in
//   registers (worse at every size, 2^20-2^23);
// - register tiles with a look-back warp of their own (0-10 points below the same tiles looking back after their
//   reduction);
// - chunks of 12 or 16 consecutive cells per thread (fewer warp-scan steps): 57-74 %, as their global stores are
//   strided by 48-64 bytes per lane.
enum class scan_kernel { registers, persistent };
struct scan_config {
    scan_kernel kernel;
    int threads, cells_per_chunk, chunks;
    int min_blocks;
    constexpr int tile() const { return threads * cells_per_chunk * chunks; }
};
inline constexpr std::array<scan_config, 3> scan_configs{{
    {scan_kernel::persistent, 256, 4, 8, 1},  // 0
    {scan_kernel::registers, 256, 4, 16, 2},  // 1
    {scan_kernel::registers, 256, 4, 4, 2},   // 2
}};

// The entry used unless one is asked for, by problem size: rows sorted by min_log2; the last row with
// n >= 2^min_log2 applies. Fitted to bench_weighted_scan on the H100 (2026-11-22, launches chained, first waves
// paced, statuses a line apart): up to 2^20 register tiles of 4096 cells (two waves of small tiles), 2^21-2^22 the
// persistent kernel (tiles of 8192 cells, about one wave), from 2^23 register tiles of 16384 cells (two blocks per SM,
// so one block's loads are in flight while the other waits for its prefix). The same for integer (max,+) with a weight
// <= 0 (descending_max_plus_algebra).
struct scan_default {
    int min_log2;
    int entry;
};
inline constexpr std::array<scan_default, 3> scan_default_entries{{{0, 2}, {21, 0}, {23, 1}}};
// Integer (max,+) with a weight > 0, whose general saturating step takes a compare, a select, an add and two maxes on
// the integer pipes: the persistent kernel up to 2^22 (measured with this step for every weight, before the
// descending path existed: at 2^20, 4096-cell tiles were 17-20 % behind it, where fp32 ones were 4-6 % ahead).
inline constexpr std::array<scan_default, 2> saturating_scan_default_entries{{{0, 0}, {23, 1}}};

// The entry for scans with algebra `alg` over n cells.
template <class Alg>
constexpr int default_scan_entry_for([[maybe_unused]] const Alg& alg, std::int64_t n) {
    const auto pick = [n](const auto& table) {
        int entry = table.front().entry;
        for (const scan_default& d : table)
            if (d.min_log2 < 63 && n >= (std::int64_t(1) << d.min_log2)) entry = d.entry;
        return entry;
    };
    if constexpr (Alg::saturating)
        if (alg.w > 0) return pick(saturating_scan_default_entries);
    return pick(scan_default_entries);
}

namespace scan_detail {

// Blocks of `Kernel` that fit on the current device at once; the device
// does not change within a process.
template <auto Kernel>
std::int64_t resident_blocks(int threads) {
    static std::int64_t resident = 0;
    if (resident == 0) {
        int device = 0, sms = 0, per_sm = 0;
        SWGPU_CUDA_CHECK(cudaGetDevice(&device));
        SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        SWGPU_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, threads, 0));
        if (per_sm < 1) throw runtime_failure("weighted scan: a scan kernel does not fit on this GPU");
        resident = std::int64_t(per_sm) * sms;
    }
    return resident;
}


}  // namespace scan_detail

// Launches entry `Entry` for the arguments (status, epoch and alignment already set), chained to the kernel before it
// in the stream (launch_chained: every scan kernel waits for it before touching memory).
// The rate at which a one-pass scan's first wave issues its tiles' loads (pace_first_wave), in input bytes per SM clock
// cycle: 2 KiB per cycle is 3.6 TB/s at 1.755 GHz, about the H100's DRAM bandwidth.
inline constexpr long long scan_pace_bytes_per_cycle = 2048;

template <class Alg, int Entry>
void launch_weighted_scan_kernel(scan_arguments<Alg> args, std::int64_t tiles, cudaStream_t stream) {
    constexpr scan_config c = scan_configs[Entry];
    constexpr std::size_t tile_bytes = std::size_t(c.tile()) * sizeof(typename Alg::value) * (Alg::is_map ? 2 : 1);
    args.pace_cycles = std::max<long long>(1, static_cast<long long>(tile_bytes) / scan_pace_bytes_per_cycle);
    if constexpr (c.kernel == scan_kernel::persistent) {
        constexpr auto kernel = &weighted_scan_persistent_kernel<Alg, c.threads, c.cells_per_chunk, c.chunks>;
        const std::int64_t grid = std::min<std::int64_t>(tiles, scan_detail::resident_blocks<kernel>(c.threads));
        args.paced_tiles = grid;
        launch_chained("weighted_scan_persistent_kernel", kernel, dim3(static_cast<unsigned>(grid)), dim3(c.threads), 0,
                       stream, args);
    } else {
        constexpr auto kernel = &weighted_scan_kernel<Alg, c.threads, c.cells_per_chunk, c.chunks, c.min_blocks>;
        args.paced_tiles = scan_detail::resident_blocks<kernel>(c.threads);
        launch_chained("weighted_scan_kernel", kernel, dim3(static_cast<unsigned>(tiles)), dim3(c.threads), 0, stream, args);
    }
}

template <class Alg, int Entry>
void launch_weighted_scan_entry(scan_arguments<Alg> args, lookback_workspace<typename Alg::elem>& ws,
                                cudaStream_t stream) {
    constexpr scan_config c = scan_configs[Entry];
    const std::int64_t tiles = (args.n + c.tile() - 1) / c.tile();
    args.epoch = ws.begin(static_cast<std::size_t>(tiles), 1, stream);
    args.status = ws.view();
    constexpr std::uintptr_t align = 16;  // vector chunks need at most chunk_alignment <= 16
    auto aligned = [&](const void* p) { return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % align == 0; };
    args.vectorized = aligned(args.a) && aligned(args.b) && aligned(args.out);
    launch_weighted_scan_kernel<Alg, Entry>(args, tiles, stream);
}

// Runs the scan described by `args` (a, b, out, n, x0, inclusive, alg) on `stream` with tuning entry `entry`.
template <class Alg>
void launch_weighted_scan(int entry, scan_arguments<Alg> args, lookback_workspace<typename Alg::elem>& ws,
                          cudaStream_t stream) {
    if (args.n <= 0) return;
    if constexpr (Alg::saturating && !std::is_same_v<Alg, descending_max_plus_algebra<typename Alg::value>>) {
        if (args.alg.w <= 0) {  // the common case, one add-and-max per step (descending_max_plus_algebra)
            using fast = descending_max_plus_algebra<typename Alg::value>;
            scan_arguments<fast> f{};
            f.b = args.b;
            f.out = args.out;
            f.n = args.n;
            f.x0 = fast::input(args.x0);  // x0 below the identity enters as the identity, as dist treats it
            f.inclusive = args.inclusive;
            f.alg.w = args.alg.w;
            launch_weighted_scan(entry, f, ws, stream);
            return;
        }
    }
    using fn = void (*)(scan_arguments<Alg>, lookback_workspace<typename Alg::elem>&, cudaStream_t);
    static constexpr auto table = []<std::size_t... K>(std::index_sequence<K...>) {
        return std::array<fn, sizeof...(K)>{&launch_weighted_scan_entry<Alg, static_cast<int>(K)>...};
    }(std::make_index_sequence<scan_configs.size()>{});
    table[static_cast<std::size_t>(entry)](args, ws, stream);
}

}  // namespace swgpu::gpu
