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

namespace swgpu::gpu {

// ---------------------------------------------------------------------------------------------------------------------
// Algebras
// ---------------------------------------------------------------------------------------------------------------------

// w raised to the distance k. For integer (max,+) the product k·w can leave the type for long distances (k up to 2^28,
// 16-bit values); it is clamped to the identity, which ◇ then treats as -inf, exactly as the sequential recurrence
// saturates. Other pairs use their own power (wrapping integer arithmetic is exact modulo 2^bits).
template <operator_pair Op>
__host__ __device__ __forceinline__ typename Op::value scan_power(typename Op::value w, std::int64_t k) {
    using T = typename Op::value;
    if constexpr (std::is_same_v<Op, max_plus<T>> && std::is_integral_v<T>) {
        const std::int64_t p = static_cast<std::int64_t>(w) * k;
        const std::int64_t lo = static_cast<std::int64_t>(Op::identity());
        return static_cast<T>(p < lo ? lo : (p > -lo ? -lo : p));
    } else {
        return Op::power(w, k);
    }
}

// Both algebras take the weight of a run as a `power` (power(w, length) for the weighted scan, nothing for maps), so
// the powers a kernel needs are computed once, not in every combine. pow_sum(power(a), power(b)) = power(a + b).
template <theorem1_pair Op>
struct weighted_algebra {
    using op = Op;
    using value = typename Op::value;
    using elem = value;    // the B of a composite; its weight is power(w, length)
    using power = value;
    static constexpr bool is_map = false;
    static constexpr bool saturating = std::is_same_v<Op, max_plus<value>> && std::is_integral_v<value>;
    // Powers by squaring (a loop per power): kernels compute them while the kernel before them still runs. Measured on
    // the H100 for (+,·): 6 % at 2^20; the same for (max,+) (one multiply per power) cost registers and 2-60 %.
    static constexpr bool costly_powers = !std::is_same_v<Op, max_plus<value>> && !std::is_same_v<Op, plus_plus<value>>;
    value w;

    __host__ __device__ __forceinline__ static elem identity() { return Op::identity(); }
    __host__ __device__ __forceinline__ power pow(std::int64_t len) const { return scan_power<Op>(w, len); }
    __host__ __device__ __forceinline__ static power pow_sum(power a, power b) {
        if constexpr (saturating) {
            const std::int64_t p = static_cast<std::int64_t>(a) + static_cast<std::int64_t>(b);
            const std::int64_t lo = static_cast<std::int64_t>(Op::identity());
            return static_cast<value>(p < lo ? lo : p);
        } else {
            return Op::dist(a, b);
        }
    }
    // The composite of a run (`earlier`) followed by a run of weight p_later (`later`).
    __host__ __device__ __forceinline__ elem combine(elem earlier, elem later, power p_later) const {
        if constexpr (Op::dist_distributes) return Op::acc(Op::dist(earlier, p_later), later);
        else return Op::acc(earlier, later);
    }
    // The value leaving a run of weight p_len and composite c, entered with x.
    __host__ __device__ __forceinline__ value apply(elem c, value x, power p_len) const {
        return Op::acc(Op::dist(x, p_len), c);
    }
    __host__ __device__ __forceinline__ value step(elem c, value x) const { return Op::acc(Op::dist(x, w), c); }
    __host__ __device__ __forceinline__ static elem from_map(const linear_map<Op>& m) { return m.b; }
    // An input value as the scan carries it.
    __host__ __device__ __forceinline__ static elem input(value v) { return v; }
};

// Integer (max,+) with a weight w <= 0, the usual case (gap penalties): every power is then in [identity, 0], and once
// inputs are raised to the identity (input(): a value below it acts as the identity anyway, as max with a result of
// dist, which is never below it), every value the scan carries is at least the identity. Then
//   dist(x, p) = max(x + p, identity)  and  combine(x, c, p) = max(dist(x, p), c) = max(x + p, c),
// one add-and-max (a DPX instruction on sm_90 for 32 bits) where the general saturating step takes a compare, a
// select, an add and two maxes; results are bit-identical, and x + p >= 2·identity never wraps.
// launch_weighted_scan picks it for weighted_algebra<max_plus<T>> with w <= 0, the engine for problems whose
// weights_descending() says so (their values entering a row must be at least the identity, as -inf is).
template <class T>
struct descending_max_plus_algebra : weighted_algebra<max_plus<T>> {
    using base = weighted_algebra<max_plus<T>>;
    using typename base::elem;
    using typename base::power;
    using typename base::value;
    static_assert(std::is_integral_v<T> && std::is_signed_v<T>);

    __host__ __device__ __forceinline__ static value add_max(value x, value p, value c) {
#if defined(__CUDA_ARCH__)
        if constexpr (sizeof(T) == 4) return __viaddmax_s32(x, p, c);
#endif
        const value s = value(x + p);
        return s > c ? s : c;
    }
    __host__ __device__ __forceinline__ elem combine(elem earlier, elem later, power p_later) const {
        return add_max(earlier, p_later, later);
    }
    __host__ __device__ __forceinline__ value apply(elem c, value x, power p_len) const { return add_max(x, p_len, c); }
    __host__ __device__ __forceinline__ value step(elem c, value x) const { return add_max(x, this->w, c); }
    __host__ __device__ __forceinline__ static elem input(value v) {
        return v < base::identity() ? base::identity() : v;
    }
    __host__ __device__ __forceinline__ static elem from_map(const linear_map<max_plus<T>>& m) { return input(m.b); }
};

template <theorem1_pair Op>
struct map_algebra {
    using op = Op;
    using value = typename Op::value;
    using elem = linear_map<Op>;
    struct power {};  // a composite map carries its own weight
    static constexpr bool is_map = true;
    static constexpr bool saturating = false;  // the weighted scan's saturating powers; a map carries its own weight
    static constexpr bool costly_powers = false;

    __host__ __device__ __forceinline__ static elem identity() { return elem::identity_map(); }
    __host__ __device__ __forceinline__ power pow(std::int64_t) const { return {}; }
    __host__ __device__ __forceinline__ static power pow_sum(power, power) { return {}; }
    __host__ __device__ __forceinline__ elem combine(const elem& earlier, const elem& later, power) const {
        return then(earlier, later);
    }
    __host__ __device__ __forceinline__ value apply(const elem& c, value x, power) const { return c(x); }
    __host__ __device__ __forceinline__ value step(const elem& c, value x) const { return c(x); }
    __host__ __device__ __forceinline__ static elem from_map(const linear_map<Op>& m) { return m; }
};

// ---------------------------------------------------------------------------------------------------------------------
// Warp and memory primitives for any trivially copyable element
// ---------------------------------------------------------------------------------------------------------------------

namespace scan_detail {

inline constexpr unsigned full_mask = 0xffffffffu;

template <class T>
struct words {
    static constexpr int count = (sizeof(T) + 3) / 4;
    unsigned w[count];
};

// Moves a trivially copyable value between the lanes of a warp, one 32-bit word at a time: `shuffle(word)` is one of
// the __shfl*_sync intrinsics with its lane argument bound.
template <class T, class Shuffle>
__device__ __forceinline__ T shfl_words(const T& v, Shuffle shuffle) {
    static_assert(std::is_trivially_copyable_v<T>);
    words<T> x{};
    std::memcpy(x.w, &v, sizeof(T));
#pragma unroll
    for (int k = 0; k < words<T>::count; ++k) x.w[k] = shuffle(x.w[k]);
    T r;
    std::memcpy(&r, x.w, sizeof(T));
    return r;
}
template <class T>
__device__ __forceinline__ T shfl_up(const T& v, int delta) {
    return shfl_words(v, [delta](unsigned w) { return __shfl_up_sync(full_mask, w, delta); });
}
template <class T>
__device__ __forceinline__ T shfl_down(const T& v, int delta) {
    return shfl_words(v, [delta](unsigned w) { return __shfl_down_sync(full_mask, w, delta); });
}
template <class T>
__device__ __forceinline__ T shfl_idx(const T& v, int lane) {
    return shfl_words(v, [lane](unsigned w) { return __shfl_sync(full_mask, w, lane); });
}

// Loads and stores that bypass L1 (cached in L2 only), for data another block publishes during the same kernel: after
// the acquire that orders them they can never return a stale L1 line.
template <class T>
__device__ __forceinline__ T load_cg(const T* p) {
    static_assert(std::is_trivially_copyable_v<T>);
    T r;
    if constexpr (sizeof(T) % 4 == 0 && alignof(T) >= 4) {
        unsigned w[sizeof(T) / 4];
        const unsigned* src = reinterpret_cast<const unsigned*>(p);
#pragma unroll
        for (unsigned k = 0; k < sizeof(T) / 4; ++k) w[k] = __ldcg(src + k);
        std::memcpy(&r, w, sizeof(T));
    } else if constexpr (sizeof(T) == 2) {
        unsigned short w = __ldcg(reinterpret_cast<const unsigned short*>(p));
        std::memcpy(&r, &w, 2);
    } else {
        unsigned char b[sizeof(T)];
        const unsigned char* src = reinterpret_cast<const unsigned char*>(p);
#pragma unroll
        for (unsigned k = 0; k < sizeof(T); ++k) b[k] = __ldcg(src + k);
        std::memcpy(&r, b, sizeof(T));
    }
    return r;
}
template <class T>
__device__ __forceinline__ void store_cg(T* p, const T& v) {
    if constexpr (sizeof(T) % 4 == 0 && alignof(T) >= 4) {
        unsigned w[sizeof(T) / 4];
        std::memcpy(w, &v, sizeof(T));
        unsigned* dst = reinterpret_cast<unsigned*>(p);
#pragma unroll
        for (unsigned k = 0; k < sizeof(T) / 4; ++k) __stcg(dst + k, w[k]);
    } else if constexpr (sizeof(T) == 2) {
        unsigned short w;
        std::memcpy(&w, &v, 2);
        __stcg(reinterpret_cast<unsigned short*>(p), w);
    } else {
        unsigned char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        unsigned char* dst = reinterpret_cast<unsigned char*>(p);
#pragma unroll
        for (unsigned k = 0; k < sizeof(T); ++k) __stcg(dst + k, b[k]);
    }
}

// Single-copy-atomic 64-bit accesses without ordering: a status and its value travel in one word.
__device__ __forceinline__ unsigned long long load_relaxed(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_relaxed(unsigned long long* p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

}  // namespace scan_detail

// ---------------------------------------------------------------------------------------------------------------------
// Block level
// ---------------------------------------------------------------------------------------------------------------------

// A tile of THREADS·CPT·SUBS cells. Warp w owns the contiguous segment [w·WARP_LEN, (w+1)·WARP_LEN), split into SUBS
// sub-segments of 32·CPT cells; lane l holds the CPT consecutive cells (the chunk) at
//   offset(s, e) = w·WARP_LEN + s·SUB_LEN + l·CPT + e
// so a warp reads each sub-segment as one coalesced run of CPT-wide vectors.
template <class Alg, int THREADS, int CPT, int SUBS>
struct block_scan {
    using elem = typename Alg::elem;
    using power = typename Alg::power;
    static_assert(THREADS % 32 == 0 && THREADS >= 32 && THREADS <= 1024);
    static constexpr int warps = THREADS / 32;
    static constexpr int sub_len = 32 * CPT;
    static constexpr int warp_len = sub_len * SUBS;
    static constexpr int tile = warp_len * warps;

    struct storage {
        elem warp_total[warps];
    };

    // The weights of the runs the scan combines, for this thread; made once per algebra (per kernel, or per row).
    struct powers {
        power one;       // 1 cell
        power lanes[5];  // CPT·d cells, d = 1, 2, 4, 8, 16 (the warp scan's steps)
        power sub;       // a sub-segment
        power warp;      // a warp's segment
        power lane;      // the chunks of the lanes before this one in a sub-segment: lane·CPT cells
        power first;     // offset(0, 0): everything in the tile before this thread's first chunk
    };

    __device__ __forceinline__ static int lane() { return threadIdx.x & 31; }
    __device__ __forceinline__ static int warp() { return threadIdx.x >> 5; }
    __device__ __forceinline__ static int offset(int s, int e) { return warp() * warp_len + s * sub_len + lane() * CPT + e; }

    __device__ __forceinline__ static powers make_powers(const Alg& alg) {
        powers p;
        p.one = alg.pow(1);
        p.lanes[0] = alg.pow(CPT);
#pragma unroll
        for (int k = 1; k < 5; ++k) p.lanes[k] = Alg::pow_sum(p.lanes[k - 1], p.lanes[k - 1]);
        p.sub = Alg::pow_sum(p.lanes[4], p.lanes[4]);
        p.warp = alg.pow(warp_len);
        p.lane = alg.pow(std::int64_t(lane()) * CPT);
        p.first = Alg::pow_sum(alg.pow(std::int64_t(warp()) * warp_len), p.lane);
        return p;
    }

    // Input: the maps of this thread's cells, el[s][e]. Output: before[s], the composite of every tile cell before
    // chunk s (relative to the tile start; its weight is that of offset(s, 0) cells: pw.first, then · pw.sub per s);
    // returns the composite of the whole tile. With more than one warp it contains one __syncthreads, and
    // `sm.warp_total` must not be rewritten until every thread has returned from here; one warp needs no shared memory.
    __device__ __forceinline__ static elem scan(const Alg& alg, const powers& pw, const elem (&el)[SUBS][CPT],
                                                elem (&before)[SUBS], storage& sm) {
        elem c[SUBS];
#pragma unroll
        for (int s = 0; s < SUBS; ++s) c[s] = chunk_composite(alg, pw, el[s]);
        return scan_chunks(alg, pw, c, before, sm);
    }

    // Thread level: the composite of one chunk, sequentially.
    __device__ __forceinline__ static elem chunk_composite(const Alg& alg, const powers& pw, const elem (&chunk)[CPT]) {
        elem c = chunk[0];
#pragma unroll
        for (int e = 1; e < CPT; ++e) c = alg.combine(c, chunk[e], pw.one);
        return c;
    }

    // scan() from the chunk composites c[s] on (c is overwritten); same outputs, barrier and rules.
    __device__ __forceinline__ static elem scan_chunks(const Alg& alg, const powers& pw, elem (&c)[SUBS],
                                                       elem (&before)[SUBS], storage& sm) {
        using namespace scan_detail;
#pragma unroll
        for (int k = 0; k < 5; ++k) {  // warp: inclusive Hillis-Steele over lanes, SUBS scans interleaved
            const int d = 1 << k;
#pragma unroll
            for (int s = 0; s < SUBS; ++s) {
                const elem up = shfl_up(c[s], d);
                if (lane() >= d) c[s] = alg.combine(up, c[s], pw.lanes[k]);
            }
        }
        elem warp_prefix_of_sub[SUBS];
        elem running = Alg::identity();
#pragma unroll
        for (int s = 0; s < SUBS; ++s) {
            const elem excl = shfl_up(c[s], 1);
            before[s] = lane() == 0 ? Alg::identity() : excl;
            warp_prefix_of_sub[s] = running;
            running = alg.combine(running, shfl_idx(c[s], 31), pw.sub);
        }
        elem warp_prefix = Alg::identity(), tile_total = running;
        if constexpr (warps > 1) {
            if (lane() == 0) sm.warp_total[warp()] = running;
            __syncthreads();
            tile_total = Alg::identity();
#pragma unroll
            for (int k = 0; k < warps; ++k) {  // block: the composite of the warps before this one, and of all
                const elem t = sm.warp_total[k];
                if (k == warp()) warp_prefix = tile_total;
                tile_total = alg.combine(tile_total, t, pw.warp);
            }
        }
        power subs = alg.pow(0);  // the weight of s sub-segments
#pragma unroll
        for (int s = 0; s < SUBS; ++s) {
            const elem sub_prefix = alg.combine(warp_prefix, warp_prefix_of_sub[s], subs);
            before[s] = alg.combine(sub_prefix, before[s], pw.lane);
            subs = Alg::pow_sum(subs, pw.sub);
        }
        return tile_total;
    }
};

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
