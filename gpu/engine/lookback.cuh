// The device level of the weighted scan: decoupled look-back between the tiles of one row, each tile's status in a
// 128-byte line of its own (the tile-status primitive of the engine).
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
#include "gpu/engine/block_scan.cuh"

namespace swgpu::gpu {

// ---------------------------------------------------------------------------------------------------------------------
// Device level: decoupled look-back between the tiles of one row
// ---------------------------------------------------------------------------------------------------------------------

// Status of each tile of a row: "aggregate" (the composite of the tile alone) or "inclusive" (the composite of tiles
// 0..t), stamped with an epoch; a status of another epoch means "not yet". Epochs make the status reusable without
// clearing: each pass over a row (each scan call, each row of a row schedule) uses a new one.
//
// Protocol, elements of at most 4 bytes: status and value share one 64-bit word, (epoch << 2 | kind) << 32 | value,
// written with one st.relaxed.gpu and read with one ld.relaxed.gpu; the word is single-copy atomic, so a reader sees a
// status together with its own value and no fence is needed on either side.
// Protocol, larger elements: the writer stores the value (st.global.cg) into aggregate[] or inclusive[], then
// st.release.gpu the flag (epoch << 2 | kind); the reader ld.acquire.gpu's the flag and only then loads the value
// (ld.global.cg).
// Tiles only ever wait on tiles with smaller indices, which are running or done (see each kernel for why).
// Each tile's status (flag, values or packed word) sits in a 128-byte line of its own, the L2's line: with statuses
// packed 16 to a line, every tile's aggregate and inclusive stores and every look-back's polls of 16 neighbours queued
// on one line. Measured on the H100 (2026-11-22, bench_weighted_scan): a line per status took (max,+) fp32 from 84-90
// to 93-94 % of copy at 2^20, 91-93 to 97-98 % at 2^21 and 87-88 to 98-99.6 % at 2^22 (register tiles).
inline constexpr std::size_t status_line_bytes = 128;
template <class T>
inline constexpr std::size_t status_stride = (status_line_bytes + sizeof(T) - 1) / sizeof(T);

template <class Elem>
struct lookback_view {
    unsigned* flags;
    Elem* aggregate;
    Elem* inclusive;
    unsigned long long* packed;

    __device__ __forceinline__ unsigned* flag_of(long long tile) const { return flags + tile * status_stride<unsigned>; }
    __device__ __forceinline__ Elem* aggregate_of(long long tile) const { return aggregate + tile * status_stride<Elem>; }
    __device__ __forceinline__ Elem* inclusive_of(long long tile) const { return inclusive + tile * status_stride<Elem>; }
    __device__ __forceinline__ unsigned long long* packed_of(long long tile) const {
        return packed + tile * status_stride<unsigned long long>;
    }
};

inline constexpr unsigned lookback_aggregate = 1, lookback_inclusive = 2;
inline constexpr unsigned lookback_epoch_limit = (1u << 30) - 1;

template <class Elem>
inline constexpr bool packed_status = sizeof(Elem) <= 4 && std::is_trivially_copyable_v<Elem>;

namespace scan_detail {

// Publishes tile `tile`'s status. With Racing, two blocks may publish the same tile (its aggregate and its inclusive
// composite, in either order): the status word only ever grows (atomic max; inclusive > aggregate within an epoch), so
// a late aggregate never hides an inclusive composite; the value travels in the same word, or (larger elements) sits
// in its own array, stored and fenced before the flag's atomic max.
template <bool Racing = false, class Elem>
__device__ __forceinline__ void publish(const lookback_view<Elem>& v, unsigned tile, unsigned epoch, unsigned kind,
                                        const Elem& value) {
    if constexpr (packed_status<Elem>) {
        unsigned bits = 0;
        std::memcpy(&bits, &value, sizeof(Elem));
        const unsigned long long word = (static_cast<unsigned long long>((epoch << 2) | kind) << 32) | bits;
        if constexpr (Racing) atomicMax(v.packed_of(tile), word);
        else store_relaxed(v.packed_of(tile), word);
    } else {
        store_cg(kind == lookback_inclusive ? v.inclusive_of(tile) : v.aggregate_of(tile), value);
        if constexpr (Racing) {
            __threadfence();
            atomicMax(v.flag_of(tile), (epoch << 2) | kind);
        } else {
            store_release(v.flag_of(tile), (epoch << 2) | kind);
        }
    }
}

// Reads tile `pred`'s status; false while it has none of this epoch.
template <class Elem>
__device__ __forceinline__ bool read_status(const lookback_view<Elem>& v, long long pred, unsigned epoch,
                                            bool& inclusive, Elem& value) {
    if constexpr (packed_status<Elem>) {
        const unsigned long long w = load_relaxed(v.packed_of(pred));
        if (static_cast<unsigned>(w >> 34) != epoch) return false;
        inclusive = ((w >> 32) & 3u) == lookback_inclusive;
        const unsigned bits = static_cast<unsigned>(w);
        std::memcpy(&value, &bits, sizeof(Elem));
        return true;
    } else {
        const unsigned f = load_acquire(v.flag_of(pred));
        if ((f >> 2) != epoch) return false;
        inclusive = (f & 3u) == lookback_inclusive;
        value = inclusive ? load_cg(v.inclusive_of(pred)) : load_cg(v.aggregate_of(pred));
        return true;
    }
}

}  // namespace scan_detail

template <class Elem, int THREADS>
struct lookback_storage {
    Elem warp_value[THREADS / 32];
    int warp_stop[THREADS / 32];
    Elem first_window;
    int first_found;
};

namespace scan_detail {

// The composite of the tiles seen by the lanes of one warp, lane 0 being the latest tile, up to and including the
// lowest lane whose status is inclusive (all lanes when none is). `val` holds each lane's tile composite, `tile_pw` the
// weight of one tile. Returns the composite in lane 0 (other lanes: partial results).
template <class Alg>
__device__ __forceinline__ typename Alg::elem warp_window(const Alg& alg, typename Alg::elem val, unsigned inclusive_lanes,
                                                          typename Alg::power tile_pw) {
    const int lane = threadIdx.x & 31;
    const int stop = inclusive_lanes ? __ffs(inclusive_lanes) - 1 : 31;
    if (lane > stop) val = Alg::identity();  // identity as the earlier part of a combine is neutral
    // Tree: lane l (a multiple of 2d) holds lanes [l, l+d); the higher lanes are the earlier part.
    typename Alg::power pd = tile_pw;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        const auto farther = shfl_down(val, d);
        if (lane + d < 32) val = alg.combine(farther, val, pd);
        pd = Alg::pow_sum(pd, pd);
    }
    return val;
}

template <class Alg>
__device__ __forceinline__ void read_window(const lookback_view<typename Alg::elem>& v, long long pred, unsigned epoch,
                                            bool& inclusive, typename Alg::elem& val) {
    // Below tile 0 counts as an inclusive identity, so every walk ends.
    inclusive = true;
    val = Alg::identity();
    if (pred < 0) return;
    unsigned spins = 0;
    std::uint64_t since = 0;
    while (!read_status(v, pred, epoch, inclusive, val)) spin_backoff(spins, since);
}

}  // namespace scan_detail

// Called by all THREADS threads of the block of tile `tile` (> 0) after its aggregate was published. Returns (in every
// thread) the composite of all tiles before `tile`; tile_pw is the weight of one tile. The block reads windows of
// THREADS predecessors per round trip (thread k: tile - 1 - k, then THREADS further back, ...) until one holds an
// inclusive status. With WarpFirst, warp 0 alone first reads the 32 nearest (fewer instructions when that suffices,
// but the frontier of inclusive statuses then advances by at most 32 tiles per round trip while tiles wait on it).
// Barriers: three per block window, plus one with WarpFirst.
template <class Alg, int THREADS, bool WarpFirst>
__device__ __forceinline__ typename Alg::elem lookback_prefix(const Alg& alg, const lookback_view<typename Alg::elem>& v,
                                                              unsigned tile, unsigned epoch, typename Alg::power tile_pw,
                                                              lookback_storage<typename Alg::elem, THREADS>& sm) {
    using namespace scan_detail;
    using elem = typename Alg::elem;
    using power = typename Alg::power;
    constexpr int warps = THREADS / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    power p32 = tile_pw;  // the weight of 32 tiles
#pragma unroll
    for (int k = 0; k < 5; ++k) p32 = Alg::pow_sum(p32, p32);
    elem running = Alg::identity();  // composite of tiles [window_end, tile)
    power covered = alg.pow(0);      // the weight of `running`
    long long window_end = static_cast<long long>(tile);
    if constexpr (WarpFirst) {
        if (warp == 0) {
            bool inclusive;
            elem val;
            read_window<Alg>(v, static_cast<long long>(tile) - 1 - lane, epoch, inclusive, val);
            const unsigned inclusive_lanes = __ballot_sync(full_mask, inclusive);
            val = warp_window(alg, val, inclusive_lanes, tile_pw);
            if (lane == 0) {
                sm.first_window = val;
                sm.first_found = inclusive_lanes != 0;
            }
        }
        __syncthreads();
        running = sm.first_window;
        if (sm.first_found) return running;
        covered = p32;
        window_end -= 32;
    }
    power window_pw = p32;  // the weight of THREADS tiles
#pragma unroll
    for (int w = 1; w < warps; ++w) window_pw = Alg::pow_sum(window_pw, p32);
    for (;;) {
        bool inclusive;
        elem val;
        read_window<Alg>(v, window_end - 1 - static_cast<long long>(threadIdx.x), epoch, inclusive, val);
        const unsigned ballot = __ballot_sync(full_mask, inclusive);
        if (lane == 0) sm.warp_stop[warp] = ballot ? warp * 32 + __ffs(ballot) - 1 : THREADS;
        __syncthreads();
        int stop = THREADS;
#pragma unroll
        for (int w = 0; w < warps; ++w) stop = min(stop, sm.warp_stop[w]);
        // A warp past the stop contributes the identity; the warp holding it stops at its own lowest inclusive lane.
        const unsigned lanes = warp * 32 > stop ? 0xffffffffu : ballot;
        val = warp * 32 > stop ? Alg::identity() : val;
        val = warp_window(alg, val, lanes, tile_pw);
        if (lane == 0) sm.warp_value[warp] = val;
        __syncthreads();
        elem window = sm.warp_value[warps - 1];
#pragma unroll
        for (int w = warps - 2; w >= 0; --w) window = alg.combine(window, sm.warp_value[w], p32);
        running = alg.combine(window, running, covered);
        if (stop < THREADS) return running;
        covered = Alg::pow_sum(covered, window_pw);
        window_end -= THREADS;
        __syncthreads();  // the window's shared memory is read by everyone before the next window rewrites it
    }
}

// The composite of all tiles before `tile`: publishes the tile's aggregate, looks back, publishes its inclusive
// composite. All threads of the block call it and get the same result.
template <class Alg, int THREADS, bool WarpFirst = false>
__device__ __forceinline__ typename Alg::elem tile_prefix(const Alg& alg, const lookback_view<typename Alg::elem>& v,
                                                          unsigned tile, unsigned epoch,
                                                          const typename Alg::elem& tile_total,
                                                          typename Alg::power tile_pw,
                                                          lookback_storage<typename Alg::elem, THREADS>& sm) {
    using namespace scan_detail;
    if (tile == 0) {
        if (threadIdx.x == 0) publish(v, 0, epoch, lookback_inclusive, tile_total);
        return Alg::identity();
    }
    if (threadIdx.x == 0) publish(v, tile, epoch, lookback_aggregate, tile_total);
    const auto prefix = lookback_prefix<Alg, THREADS, WarpFirst>(alg, v, tile, epoch, tile_pw, sm);
    if (threadIdx.x == 0) publish(v, tile, epoch, lookback_inclusive, alg.combine(prefix, tile_total, tile_pw));
    return prefix;
}

// Everything a row pass needs to publish and find tile prefixes: per-tile status, a tile counter that hands out tile
// indices in block start order, and the epoch / counter bookkeeping that lets consecutive passes reuse them without
// clearing.
template <class Elem>
class lookback_workspace {
public:
    // Makes room for `tiles` tiles per pass and reserves `passes` consecutive epochs; returns the first.
    unsigned begin(std::size_t tiles, unsigned passes, cudaStream_t stream) {
        bool fresh;
        if constexpr (packed_status<Elem>) {
            fresh = packed_.reserve(tiles * status_stride<unsigned long long>);
        } else {
            fresh = flags_.reserve(tiles * status_stride<unsigned>);
            aggregate_.reserve(tiles * status_stride<Elem>);
            inclusive_.reserve(tiles * status_stride<Elem>);
        }
        if (counter_.size() == 0) {
            counter_.allocate(1);
            counter_.zero(stream);
            counter_base_ = 0;
        }
        if (fresh || next_epoch_ + passes >= lookback_epoch_limit) {
            flags_.zero(stream);
            packed_.zero(stream);
            next_epoch_ = 1;
        }
        const unsigned first = next_epoch_;
        next_epoch_ += passes;
        return first;
    }
    lookback_view<Elem> view() { return {flags_.data(), aggregate_.data(), inclusive_.data(), packed_.data()}; }
    unsigned* counter() { return counter_.data(); }
    // The counter value at which the next launch's tiles start; records that `tiles` tiles will be taken.
    unsigned take(std::size_t tiles) {
        const unsigned base = counter_base_;
        counter_base_ += static_cast<unsigned>(tiles);
        return base;
    }

private:
    device_buffer<unsigned> flags_;
    device_buffer<Elem> aggregate_, inclusive_;
    device_buffer<unsigned long long> packed_;
    device_buffer<unsigned> counter_;
    unsigned next_epoch_ = 1;
    unsigned counter_base_ = 0;
};

// Hands out tile indices in the order blocks start: thread 0 takes a ticket, everyone reads it after the barrier. A
// block that holds a ticket is running, so a tile never waits on a tile whose block has not started.
__device__ __forceinline__ unsigned take_tile(unsigned* counter, unsigned base, unsigned* shared_slot) {
    if (threadIdx.x == 0) *shared_slot = atomicAdd(counter, 1u) - base;
    __syncthreads();
    return *shared_slot;
}

}  // namespace swgpu::gpu
