// The box filter on the GPU (gpu/numerics/box_filter.hpp describes what it computes; core/numerics/box_filter.cpp the
// CPU filter whose bits it reproduces).
//
// One kernel, box_rows: a block takes `block_width` consecutive elements of a row (a row of W pixels of L lanes is W·L
// elements; the horizontal window of element x takes every L-th element from x - R·L to x + R·L) and a band of
// `band_rows` rows. In shared memory it keeps the vertical window sums of those elements and of a halo of R·L elements
// either side (halo columns are the reflected columns, BORDER_REFLECT_101, read from the image directly), moved down
// one row at a time (the row entering added, the row leaving subtracted, in wrap-around integer arithmetic whose final
// value is the exact one), double-buffered so that one barrier a row suffices. Each thread then forms 8 consecutive
// outputs: the first window summed directly, the rest by a running sum (one lane) or each directly (several lanes),
// and writes them as one vector where the row allows. Shared memory is padded one element every 128 bytes, so that
// threads reading 8 apart meet no bank conflicts.
//
// Integers: the accumulator width and the rounding of the CPU (box_filter_kernel.hpp's integer_accumulator_bytes and
// box_integer_with): a float or double reciprocal where its error provably cannot change the rounding, else the exact
// quotient floor((2S + A) / 2A); each gives the exactly rounded mean, so the bits equal the CPU's.
// Floats: a pass over the image finds the least and greatest exponents (and NaN or infinities), a one-thread kernel
// turns them into the CPU's plan (plan_for), and the sums are exact fixed-point integers x · 2^s of 64 or 128 bits,
// the kernel of the other width returning at once. The mean is then rounded as the CPU's plan rounds it: float32
// through the same double operations (split plan: fl(S) · fl(1/A); fixed plans: fl(S) / A · 2^-s), float64 by
// emulating its long double steps (S rounded to 64 significant bits, divided by A and rounded to 64 bits, then
// rounded to a double, subnormals included) in integer arithmetic.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/numerics/box_filter.hpp"

namespace swgpu::gpu {

namespace {

using u64 = std::uint64_t;
using i64 = std::int64_t;
using u128 = unsigned __int128;
using i128 = __int128;

constexpr int threads = 64, per_thread = 8, block_width = threads * per_thread, band_rows = 32;

template <class T>
struct signed_of {
    using type = std::make_signed_t<T>;
};
template <>
struct signed_of<u128> {
    using type = i128;
};
template <class T>
using signed_t = typename signed_of<T>::type;

// The shared-memory slot of element p: one element of padding every 128 bytes.
template <class Acc>
__host__ __device__ __forceinline__ int slot(int p) {
    constexpr int per = 128 / static_cast<int>(sizeof(Acc));
    return p + p / per;
}
template <class Acc>
std::size_t shared_bytes(index_t halo) {
    return 2 * static_cast<std::size_t>(slot<Acc>(static_cast<int>(block_width + 2 * halo)) + 1) * sizeof(Acc);
}

__host__ __device__ __forceinline__ int reflect101(int p, int n) {
    if (n <= 1) return 0;
    const int period = 2 * (n - 1);
    p = p < 0 ? -p : p;
    p %= period;
    return p >= n ? period - p : p;
}

// ---- integers -----------------------------------------------------------------------------------------------------

enum class int_round : int { by_float, by_double, exact };

template <class In, class Acc>
struct int_policy {
    int_round mode;
    float finv;
    double dinv;
    u64 area;
    __device__ bool prepare() { return true; }
    __device__ Acc conv(In v) const {
        using Wide = std::conditional_t<std::is_signed_v<In>, i64, u64>;
        return static_cast<Acc>(static_cast<Wide>(v));
    }
    __device__ In fin(Acc s) const {
        using SAcc = signed_t<Acc>;
        if (mode == int_round::by_float)  // unsigned, 32-bit sums, (M+1)·A <= 2^21 (box_integer_with)
            return static_cast<In>(static_cast<std::int32_t>(
                __fadd_rn(__fmul_rn(__int2float_rn(static_cast<std::int32_t>(s)), finv), 0.5f)));
        if (mode == int_round::by_double) {  // (M+1)·A <= 2^50
            const double m = __dadd_rn(__dmul_rn(__ll2double_rn(static_cast<i64>(static_cast<SAcc>(s))), dinv), 0.5);
            if constexpr (std::is_signed_v<In>) return static_cast<In>(floor(m));
            else return static_cast<In>(static_cast<u64>(m));
        }
        // Exact: round(S / A) = floor((2S + A) / (2A)).
        const i128 a = static_cast<i128>(area), num = 2 * static_cast<i128>(static_cast<SAcc>(s)) + a, den = 2 * a;
        i128 q = num / den;
        if (num % den != 0 && num < 0) --q;
        return static_cast<In>(q);
    }
};

// ---- floats -------------------------------------------------------------------------------------------------------

template <class F>
struct float_bits;
template <>
struct float_bits<float> {
    using U = std::uint32_t;
    static constexpr int mant = 23, emax_field = 255, lsb_bias = 150;
};
template <>
struct float_bits<double> {
    using U = std::uint64_t;
    static constexpr int mant = 52, emax_field = 2047, lsb_bias = 1075;
};

// What the workspace holds: the magnitude bits found by the range pass, then the plan.
struct float_plan {
    int acc_bits;  // 64 or 128; 0: the image holds NaN or infinities (nothing is written)
    int s;         // the fixed-point scale: sums of x · 2^s
    int split;     // the CPU's split plan (float32 rounds fl(S·2^-s) · fl(1/A)), else a fixed plan (fl(S) / A · 2^-s)
    int unused;    // named so that the copy to the host reads no uninitialized padding bytes
    u64 area;
    double a, inv, back;  // A, fl(1/A), 2^-s (float32 only)
};
static_assert(sizeof(float_plan) == 4 * sizeof(int) + sizeof(u64) + 3 * sizeof(double), "float_plan has padding");
struct workspace_layout {
    unsigned long long least, most;  // the least nonzero and the greatest magnitude bits
    float_plan plan;
};

__host__ __device__ inline int ceil_log2(u128 x) {
    int k = 0;
    while ((u128(1) << k) < x) ++k;
    return k;
}

// box_filter_kernel.hpp's plan_for, on the device.
template <class F>
__global__ void make_plan(workspace_layout* ws, u64 area) {
    using B = float_bits<F>;
    const auto least = ws->least, most = ws->most;
    const int e_min = least == ~0ull ? B::emax_field + 1 : max(1, static_cast<int>(least >> B::mant));
    const int e_max = most == 0 ? -1 : static_cast<int>(most >> B::mant);
    float_plan p{};
    p.area = area;
    p.a = static_cast<double>(area);
    p.inv = __ddiv_rn(1.0, p.a);
    if (e_max == B::emax_field) {
        p.acc_bits = 0;
    } else if (e_min > e_max) {  // all zero: every sum is 0
        p.acc_bits = 64;
        p.s = 0;
        p.split = 1;
    } else {
        const int c = ceil_log2(2 * u128(area)), top = e_max - B::lsb_bias + B::mant + 1, lsb = e_min - B::lsb_bias;
        const int k = max(top + c - 53, lsb), bits = top - lsb + c;
        p.split = k <= 54 + lsb - c && 52 + k <= 1020;
        p.s = bits <= 127 || p.split ? -lsb : -lsb - (bits - 127);
        p.acc_bits = bits <= 63 ? 64 : 128;
    }
    p.back = p.s > 1000 || p.s < -1000 ? 0.0 : scalbn(1.0, -p.s);
    ws->plan = p;
}

// The least nonzero and the greatest magnitude bits of n values (U: their bit pattern).
template <class U>
__global__ void magnitude_range(const U* v, std::size_t n, workspace_layout* ws) {
    constexpr U magnitude = U(~U(0)) >> 1;
    unsigned long long least = ~0ull, most = 0;
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n;
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const U b = __ldg(v + k) & magnitude;
        if (b != 0) least = min(least, static_cast<unsigned long long>(b));
        most = max(most, static_cast<unsigned long long>(b));
    }
    for (int o = 16; o > 0; o /= 2) {
        least = min(least, __shfl_xor_sync(0xffffffffu, least, o));
        most = max(most, __shfl_xor_sync(0xffffffffu, most, o));
    }
    if ((threadIdx.x & 31) == 0) {
        if (least != ~0ull) atomicMin(&ws->least, least);
        if (most != 0) atomicMax(&ws->most, most);
    }
}
__global__ void reset_range(workspace_layout* ws) {
    ws->least = ~0ull;
    ws->most = 0;
}

// x · 2^s as an integer of U, rounded to nearest (half away from zero) when it is not one (box_filter_kernel.hpp's
// fixed_point).
template <class U, class F>
__device__ __forceinline__ U fixed_point(F x, int s) {
    using B = float_bits<F>;
    typename B::U bits;
    if constexpr (sizeof(F) == 4) bits = __float_as_uint(x);
    else bits = static_cast<u64>(__double_as_longlong(x));
    const bool negative = (bits >> (8 * sizeof bits - 1)) != 0;
    int e = static_cast<int>((bits >> B::mant) & typename B::U(B::emax_field));
    u64 m = bits & ((typename B::U(1) << B::mant) - 1);
    if (e != 0) m |= u64(1) << B::mant;
    else e = 1;
    const int sh = e - B::lsb_bias + s;
    U v;
    if (sh >= 0) v = U(U(m) << sh);
    else if (-sh > B::mant + 2) v = 0;
    else v = U((m + (u64(1) << (-sh - 1))) >> -sh);
    return negative ? U(U(0) - v) : v;
}

__device__ __forceinline__ int bit_length(u128 m) {
    const u64 hi = static_cast<u64>(m >> 64), lo = static_cast<u64>(m);
    return hi ? 128 - __clzll(static_cast<long long>(hi)) : lo ? 64 - __clzll(static_cast<long long>(lo)) : 0;
}

// m (plus a nonzero remainder below its last bit when `sticky`) rounded to `bits` significant bits, nearest-even:
// M · 2^e.
__device__ __forceinline__ void round_bits(u128 m, bool sticky, int bits, u64& M, int& e) {
    const int len = bit_length(m);
    if (len <= bits) {
        M = static_cast<u64>(m);
        e = 0;
        return;
    }
    int sh = len - bits;
    u128 q = m >> sh;
    const u128 rem = m - (q << sh), half = u128(1) << (sh - 1);
    if (rem > half || (rem == half && (sticky || (q & 1)))) ++q;
    if (q >> bits) {
        q >>= 1;
        ++sh;
    }
    M = static_cast<u64>(q);
    e = sh;
}

// A signed integer of Acc rounded to the nearest double.
template <class Acc>
__device__ __forceinline__ double to_double(Acc s) {
    if constexpr (sizeof(Acc) <= 8) {
        return __ll2double_rn(static_cast<long long>(static_cast<signed_t<Acc>>(s)));
    } else {
        const bool negative = static_cast<i128>(s) < 0;
        const u128 m = negative ? u128(0) - u128(s) : u128(s);
        u64 M;
        int e;
        round_bits(m, false, 53, M, e);
        const double d = scalbn(__ull2double_rn(M), e);
        return negative ? -d : d;
    }
}

// float64 as the CPU rounds it: ((long double)S / A) · 2^-s, then to double; each step emulated exactly.
__device__ __forceinline__ double long_double_mean(i128 S, u64 area, int s) {
    if (S == 0) return 0.0;
    const bool negative = S < 0;
    const u128 m = negative ? u128(0) - u128(S) : u128(S);
    u64 M1;
    int e1;
    round_bits(m, false, 64, M1, e1);  // (long double)S = M1 · 2^e1
    const int z = __clzll(static_cast<long long>(M1));
    const u64 N = M1 << z;  // top bit set
    const u128 num = u128(N) << 64, q = num / area;
    const bool sticky = num - q * area != 0;
    u64 M2;
    int e2;
    round_bits(q, sticky, 64, M2, e2);  // / A, rounded to 64 bits: M2 · 2^(e1 - z - 64 + e2), M2's top bit is bit 63
    const int E = e1 - z - 64 + e2 - s;  // · 2^-s (exact in long double)
    // To double: 53 bits, fewer below 2^-1022 (the least bit a double holds is 2^-1074).
    const int drop = max(11, -1074 - E);
    double d;
    if (drop > 64) {
        d = 0.0;
    } else {
        const u128 w = u128(M2);
        u128 q2 = w >> drop;
        const u128 rem = w - (q2 << drop), half = u128(1) << (drop - 1);
        if (rem > half || (rem == half && (q2 & 1))) ++q2;
        d = scalbn(__ull2double_rn(static_cast<u64>(q2)), E + drop);
    }
    return negative ? -d : d;
}

template <class F, class Acc>
struct float_policy {
    const workspace_layout* ws;
    float_plan p;
    __device__ bool prepare() {
        p = ws->plan;
        return p.acc_bits == 8 * static_cast<int>(sizeof(Acc));
    }
    __device__ Acc conv(F v) const { return fixed_point<Acc>(v, p.s); }
    __device__ F fin(Acc S) const {
        if constexpr (std::is_same_v<F, float>) {
            const double d = to_double(S);
            return __double2float_rn(p.split ? __dmul_rn(__dmul_rn(d, p.back), p.inv) : __dmul_rn(__ddiv_rn(d, p.a), p.back));
        } else {
            return long_double_mean(static_cast<i128>(static_cast<signed_t<Acc>>(S)), p.area, p.s);
        }
    }
};

// ---- the kernel ---------------------------------------------------------------------------------------------------

template <class T>
__device__ __forceinline__ void store_vector(T* dst, const T (&v)[per_thread]) {
    constexpr int bytes = per_thread * static_cast<int>(sizeof(T));
    if constexpr (bytes % 16 == 0) {
#pragma unroll
        for (int c = 0; c < bytes / 16; ++c) {
            uint4 w;
            memcpy(&w, reinterpret_cast<const char*>(v) + 16 * c, 16);
            reinterpret_cast<uint4*>(dst)[c] = w;
        }
    } else {
        static_assert(bytes == 8);
        uint2 w;
        memcpy(&w, v, 8);
        *reinterpret_cast<uint2*>(dst) = w;
    }
}

// The element of the row whose vertical sums stand at halo-padded position q (x0 - P <= q < x0 + width + P).
__device__ __forceinline__ int source_column(int q, int n, int W, int L) {
    if (q >= 0 && q < n) return q;
    const int j = q >= 0 ? q / L : -((-q + L - 1) / L), c = q - j * L;
    return reflect101(j, W) * L + c;
}

// one_lane: L == 1 (running horizontal sums); else every output's window is summed directly.
template <class In, class Acc, bool one_lane, class Pol>
__global__ void __launch_bounds__(threads) box_rows(const In* __restrict__ in, In* __restrict__ out, int H, int W, int L,
                                                    int R, int bands, bool vector_store, Pol pol) {
    if (!pol.prepare()) return;
    extern __shared__ __align__(16) unsigned char shared_raw[];
    const int n = W * L, P = R * L, x0 = blockIdx.x * block_width, width = min(block_width, n - x0), np = width + 2 * P;
    Acc* const buf0 = reinterpret_cast<Acc*>(shared_raw);
    Acc* const buf1 = buf0 + slot<Acc>(block_width + 2 * P) + 1;
    const int t = threadIdx.x, o = t * per_thread;
    for (int band = blockIdx.y; band < bands; band += gridDim.y) {
        const int r0 = band * band_rows, r1 = min(H, r0 + band_rows);
        __syncthreads();  // the previous band's readers are done
        for (int i = r0; i < r1; ++i) {
            Acc* const cur = ((i - r0) & 1) ? buf1 : buf0;
            const Acc* const prev = ((i - r0) & 1) ? buf0 : buf1;
            if (i == r0) {
                for (int p = t; p < np; p += threads) {
                    const int c = source_column(x0 - P + p, n, W, L);
                    Acc s = 0;
                    for (int k = -R; k <= R; ++k) s = Acc(s + pol.conv(__ldg(in + static_cast<i64>(reflect101(i + k, H)) * n + c)));
                    cur[slot<Acc>(p)] = s;
                }
            } else {
                const In* const ra = in + static_cast<i64>(reflect101(i + R, H)) * n;
                const In* const rb = in + static_cast<i64>(reflect101(i - R - 1, H)) * n;
                for (int p = t; p < np; p += threads) {
                    const int c = source_column(x0 - P + p, n, W, L);
                    cur[slot<Acc>(p)] = Acc(prev[slot<Acc>(p)] + Acc(pol.conv(__ldg(ra + c)) - pol.conv(__ldg(rb + c))));
                }
            }
            __syncthreads();
            if (o < width) {
                Acc h[per_thread];
                if constexpr (one_lane) {
                    Acc c0[per_thread];
#pragma unroll
                    for (int j = 0; j < per_thread; ++j) c0[j] = cur[slot<Acc>(o + j)];
                    Acc s = c0[0];
#pragma unroll
                    for (int j = 1; j < per_thread; ++j)
                        if (j <= 2 * R) s = Acc(s + c0[j]);
                    for (int j = per_thread; j <= 2 * R; ++j) s = Acc(s + cur[slot<Acc>(o + j)]);
                    h[0] = s;
#pragma unroll
                    for (int k = 1; k < per_thread; ++k) {
                        s = Acc(s + Acc(cur[slot<Acc>(o + k + 2 * R)] - c0[k - 1]));
                        h[k] = s;
                    }
                } else {
#pragma unroll
                    for (int k = 0; k < per_thread; ++k) {
                        Acc s = 0;
                        if (o + k < width)
                            for (int m = 0; m <= 2 * R; ++m) s = Acc(s + cur[slot<Acc>(o + k + m * L)]);
                        h[k] = s;
                    }
                }
                In v[per_thread];
#pragma unroll
                for (int k = 0; k < per_thread; ++k) v[k] = pol.fin(h[k]);
                In* const dst = out + static_cast<i64>(i) * n + x0 + o;
                if (vector_store && o + per_thread <= width) {
                    store_vector(dst, v);
                } else {
#pragma unroll
                    for (int k = 0; k < per_thread; ++k)
                        if (o + k < width) dst[k] = v[k];
                }
            }
        }
    }
}

struct geometry {
    int H, W, L, R;
    dim3 grid;
    int bands;
    bool vector_store;
};

template <class In>
geometry geometry_of(const void* out, index_t rows, index_t cols, index_t lanes, index_t radius) {
    geometry g{static_cast<int>(rows), static_cast<int>(cols), static_cast<int>(lanes), static_cast<int>(radius), {}, 0, false};
    const index_t n = cols * lanes;
    g.bands = static_cast<int>((rows + band_rows - 1) / band_rows);
    g.grid = dim3(static_cast<unsigned>((n + block_width - 1) / block_width), static_cast<unsigned>(std::min(g.bands, 65535)));
    const std::size_t vb = std::min<std::size_t>(16, per_thread * sizeof(In));
    g.vector_store = reinterpret_cast<std::uintptr_t>(out) % vb == 0 && (static_cast<std::size_t>(n) * sizeof(In)) % vb == 0;
    return g;
}

template <class In, class Acc, class Pol>
void launch(const In* in, In* out, const geometry& g, Pol pol, cudaStream_t stream) {
    const std::size_t smem = shared_bytes<Acc>(static_cast<index_t>(g.R) * g.L);
    const auto run = [&](auto kernel) {
        if (smem > 48 * 1024) SWGPU_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
        kernel<<<g.grid, threads, smem, stream>>>(in, out, g.H, g.W, g.L, g.R, g.bands, g.vector_store, pol);
        SWGPU_CUDA_CHECK_LAUNCH("box_rows");
    };
    if (g.L == 1) run(box_rows<In, Acc, true, Pol>);
    else run(box_rows<In, Acc, false, Pol>);
}

// The largest magnitude of a value of In, and the accumulator the CPU uses: (A+1)·M must fit its signed range.
template <class In>
u128 magnitude() {
    if constexpr (std::is_signed_v<In>) return u128(std::numeric_limits<In>::max()) + 1;
    else return u128(std::numeric_limits<In>::max());
}
template <class In>
int accumulator_bytes(index_t R) {
    const u128 A = u128(2 * R + 1) * u128(2 * R + 1), bound = (A + 1) * magnitude<In>();
    return bound < (u128(1) << 31) ? 4 : bound < (u128(1) << 63) ? 8 : 16;
}

template <class In, class Acc>
void launch_integer(const In* in, In* out, const geometry& g, cudaStream_t stream) {
    const u128 A = u128(2 * g.R + 1) * u128(2 * g.R + 1), M = magnitude<In>();
    int_policy<In, Acc> pol{int_round::exact, 0.0f, 0.0, static_cast<u64>(A)};
    if (std::is_unsigned_v<In> && sizeof(Acc) == 4 && (M + 1) * A <= (u128(1) << 21)) {
        pol.mode = int_round::by_float;
        pol.finv = 1.0f / static_cast<float>(static_cast<u64>(A));
    } else if ((M + 1) * A <= (u128(1) << 50)) {
        pol.mode = int_round::by_double;
        pol.dinv = 1.0 / static_cast<double>(static_cast<u64>(A));
    }
    launch<In, Acc>(in, out, g, pol, stream);
}

template <class In>
void run_integer(const In* in, In* out, const geometry& g, cudaStream_t stream) {
    switch (accumulator_bytes<In>(g.R)) {
        case 4:
            if constexpr (sizeof(In) <= 2) launch_integer<In, std::uint32_t>(in, out, g, stream);
            return;
        case 8:
            if constexpr (sizeof(In) <= 4) launch_integer<In, u64>(in, out, g, stream);
            return;
        default: launch_integer<In, u128>(in, out, g, stream); return;
    }
}

template <class F>
void run_float(const F* in, F* out, index_t elements, const geometry& g, workspace_layout* ws, cudaStream_t stream) {
    using U = typename float_bits<F>::U;
    reset_range<<<1, 1, 0, stream>>>(ws);
    SWGPU_CUDA_CHECK_LAUNCH("reset_range");
    const auto blocks = static_cast<unsigned>(std::clamp<index_t>((elements + 255) / 256, 1, 2048));
    magnitude_range<U><<<blocks, 256, 0, stream>>>(reinterpret_cast<const U*>(in), static_cast<std::size_t>(elements), ws);
    SWGPU_CUDA_CHECK_LAUNCH("magnitude_range");
    const u128 A = u128(2 * g.R + 1) * u128(2 * g.R + 1);
    make_plan<F><<<1, 1, 0, stream>>>(ws, static_cast<u64>(A));
    SWGPU_CUDA_CHECK_LAUNCH("make_plan");
    launch<F, u64>(in, out, g, float_policy<F, u64>{ws, {}}, stream);
    launch<F, u128>(in, out, g, float_policy<F, u128>{ws, {}}, stream);
}

template <class In>
void run_typed(const void* in, void* out, index_t rows, index_t cols, index_t lanes, index_t radius, void* workspace,
               cudaStream_t stream) {
    const geometry g = geometry_of<In>(out, rows, cols, lanes, radius);
    const auto* src = static_cast<const In*>(in);
    auto* dst = static_cast<In*>(out);
    if constexpr (std::is_floating_point_v<In>)
        run_float<In>(src, dst, rows * cols * lanes, g, static_cast<workspace_layout*>(workspace), stream);
    else run_integer<In>(src, dst, g, stream);
}

// The shared memory a launch takes (floats: at most 128-bit sums).
std::size_t shared_needed(sat::dtype type, index_t radius, index_t lanes) {
    int bytes = 16;
    switch (type) {
        case sat::dtype::u8: bytes = accumulator_bytes<std::uint8_t>(radius); break;
        case sat::dtype::u16: bytes = accumulator_bytes<std::uint16_t>(radius); break;
        case sat::dtype::u32: bytes = accumulator_bytes<std::uint32_t>(radius); break;
        case sat::dtype::i8: bytes = accumulator_bytes<std::int8_t>(radius); break;
        case sat::dtype::i16: bytes = accumulator_bytes<std::int16_t>(radius); break;
        case sat::dtype::i32: bytes = accumulator_bytes<std::int32_t>(radius); break;
        default: break;
    }
    const index_t halo = radius * lanes;
    return bytes == 4 ? shared_bytes<std::uint32_t>(halo) : bytes == 8 ? shared_bytes<u64>(halo) : shared_bytes<u128>(halo);
}

}  // namespace

bool box_filter_supported(sat::dtype type, index_t rows, index_t cols, index_t lanes, index_t radius) {
    if (radius < 0 || rows < 1 || cols < 1 || lanes < 1) return false;
    const index_t n = cols * lanes;
    if (n >= (index_t(1) << 31) - block_width || rows >= (index_t(1) << 31) - 2 * radius - 2) return false;
    if (radius > (index_t(1) << 29) / lanes) return false;
    int device = 0, limit = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess)
        return false;
    return shared_needed(type, radius, lanes) <= static_cast<std::size_t>(limit);
}

std::size_t box_filter_workspace_bytes() { return sizeof(workspace_layout); }

void box_filter_device(sat::dtype type, const void* in, void* out, index_t rows, index_t cols, index_t lanes, index_t radius,
                       void* workspace, void* stream_ptr) {
    const auto stream = static_cast<cudaStream_t>(stream_ptr);
    if (radius == 0) {
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(out, in, static_cast<std::size_t>(rows * cols * lanes) * sat::size_of(type),
                                         cudaMemcpyDeviceToDevice, stream));
        if (type == sat::dtype::f32 || type == sat::dtype::f64) {  // still checked for NaN and infinities
            const auto elements = rows * cols * lanes;
            auto* ws = static_cast<workspace_layout*>(workspace);
            reset_range<<<1, 1, 0, stream>>>(ws);
            const auto blocks = static_cast<unsigned>(std::clamp<index_t>((elements + 255) / 256, 1, 2048));
            if (type == sat::dtype::f32) {
                magnitude_range<std::uint32_t><<<blocks, 256, 0, stream>>>(static_cast<const std::uint32_t*>(in), static_cast<std::size_t>(elements), ws);
                make_plan<float><<<1, 1, 0, stream>>>(ws, 1);
            } else {
                magnitude_range<u64><<<blocks, 256, 0, stream>>>(static_cast<const u64*>(in), static_cast<std::size_t>(elements), ws);
                make_plan<double><<<1, 1, 0, stream>>>(ws, 1);
            }
            SWGPU_CUDA_CHECK_LAUNCH("make_plan");
        }
        return;
    }
    switch (type) {
        case sat::dtype::u8: run_typed<std::uint8_t>(in, out, rows, cols, lanes, radius, workspace, stream); break;
        case sat::dtype::u16: run_typed<std::uint16_t>(in, out, rows, cols, lanes, radius, workspace, stream); break;
        case sat::dtype::u32: run_typed<std::uint32_t>(in, out, rows, cols, lanes, radius, workspace, stream); break;
        case sat::dtype::u64: run_typed<std::uint64_t>(in, out, rows, cols, lanes, radius, workspace, stream); break;
        case sat::dtype::i8: run_typed<std::int8_t>(in, out, rows, cols, lanes, radius, workspace, stream); break;
        case sat::dtype::i16: run_typed<std::int16_t>(in, out, rows, cols, lanes, radius, workspace, stream); break;
        case sat::dtype::i32: run_typed<std::int32_t>(in, out, rows, cols, lanes, radius, workspace, stream); break;
        case sat::dtype::i64: run_typed<std::int64_t>(in, out, rows, cols, lanes, radius, workspace, stream); break;
        case sat::dtype::f32: run_typed<float>(in, out, rows, cols, lanes, radius, workspace, stream); break;
        case sat::dtype::f64: run_typed<double>(in, out, rows, cols, lanes, radius, workspace, stream); break;
    }
}

bool box_filter_input_was_finite(sat::dtype type, const void* workspace, void* stream_ptr) {
    if (type != sat::dtype::f32 && type != sat::dtype::f64) return true;
    const auto stream = static_cast<cudaStream_t>(stream_ptr);
    float_plan p{};
    SWGPU_CUDA_CHECK(cudaMemcpyAsync(&p, &static_cast<const workspace_layout*>(workspace)->plan, sizeof p, cudaMemcpyDeviceToHost, stream));
    SWGPU_CUDA_CHECK(cudaStreamSynchronize(stream));
    return p.acc_bits != 0;
}

sat::array box_filter(const sat::array& in, index_t radius, float* kernel_ms) {
    if (radius < 0) throw usage_error("--box-filter needs a radius of 0 or more");
    if (in.elements() == 0) throw input_error("", "the image is empty; nothing to filter");
    if (!box_filter_supported(in.type, in.rows, in.cols, in.lanes, radius))
        throw usage_error("--box-filter " + std::to_string(radius) + " of a " + std::to_string(in.cols) + "-pixel-wide, " +
                          std::to_string(in.lanes) + "-channel image is beyond the GPU filter (its halo of window sums " +
                          "must fit shared memory); use --backend cpu");
    sat::array out = sat::array::uninitialized(in.type, in.rows, in.cols, in.lanes);
    cuda_stream stream;
    device_buffer<unsigned char> d_in, d_out, ws(box_filter_workspace_bytes());
    d_in.upload(static_cast<const unsigned char*>(in.raw()), in.bytes(), stream.get());
    d_out.allocate(in.bytes());
    cuda_event start, stop;
    start.record(stream.get());
    box_filter_device(in.type, d_in.data(), d_out.data(), in.rows, in.cols, in.lanes, radius, ws.data(), stream.get());
    stop.record(stream.get());
    if (!box_filter_input_was_finite(in.type, ws.data(), stream.get()))
        throw input_error("", "the image holds NaN or infinite values; the box filter needs finite values");
    if (kernel_ms) *kernel_ms = stop.since(start);
    SWGPU_CUDA_CHECK(cudaMemcpyAsync(out.raw(), d_out.data(), in.bytes(), cudaMemcpyDeviceToHost, stream.get()));
    stream.synchronize();
    return out;
}

}  // namespace swgpu::gpu
