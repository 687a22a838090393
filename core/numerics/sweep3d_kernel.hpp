// The CPU kernels of the 3-D sweeps, written once and compiled per instruction set (core/numerics/sweep3d_isa.hpp):
// included only by core/numerics/sweep3d.cpp (baseline) and sweep3d_<isa>.cpp, inside the region that compiles that
// file for its target. Everything here has internal linkage (an anonymous namespace), so code built for AVX2 cannot
// be picked by the linker for a caller in baseline code (core/align/simd/isa_target.hpp). The files that include it
// are compiled with -ffp-contract=off (core/CMakeLists.txt): a product and a sum stay two roundings.
//
// The exact fmod. For x >= 0 and C > 0 normal, with inv = fl(1/C) and y = fl(x * inv), y is within a relative 2^-22.9
// of x / C; when y < 2^20 it is within 1/8 of x / C, so q = trunc(y) is Q - 1, Q or Q + 1 with Q = floor(x / C) the
// true quotient (an integer below 2^21, exact in either precision). r = fma(-q, C, x) rounds x - qC once: for q = Q it
// is the true remainder x - QC, representable (a remainder always is), so r is exact; for q = Q + 1 the exact value
// is negative (a nonzero multiple of the least subnormal), so r < 0; for q = Q - 1 it is >= C, so r >= C. The
// corrected q' = q + [r >= C] - [r < 0] is Q, and fma(-q', C, x) is the remainder, exactly: the bits of fmod.
// y >= 2^20, NaN or infinite (x infinite or NaN, a huge quotient) sends the value to the library's fmod. The sign of x
// is put back (fmod(x, C) has the sign of x, -0 included).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/numerics/sweep3d.hpp"
#include "core/numerics/sweep3d_isa.hpp"

namespace swgpu::sweep3d::detail {
namespace {

template <class T>
constexpr T quotient_limit = T(1 << 20);

// |x| mod C for any x (the sign put back), C > 0 normal and finite, inv = fl(1/C); bad is set (to 1) where the
// result must come from the library's fmod instead.
template <class T, class Flag>
inline T fmod_lane(T x, T c, T inv, Flag& bad) {
    const T ax = std::fabs(x);
    const T y = ax * inv;
    bad |= Flag(!(y < quotient_limit<T>));
    T q = std::trunc(y);
    const T r0 = std::fma(-q, c, ax);
    q = q + (r0 >= c ? T(1) : T(0)) - (r0 < T(0) ? T(1) : T(0));
    return std::copysign(std::fma(-q, c, ax), x);
}

// Whether C can take the exact fmod (positive, normal, finite, 1/C finite).
template <class T>
inline bool fmod_lane_usable(T c) {
    return c >= std::numeric_limits<T>::min() && c <= std::numeric_limits<T>::max() &&
           T(1) / c <= std::numeric_limits<T>::max();
}

// The lane operations of the kernels, by the vector width of the file that includes this header
// (SWGPU_SWEEP3D_VECTOR: 256 for AVX2 with FMA, 512 for AVX-512, else one lane of plain C++). vec<T>::fmod is the
// exact fmod above with its fallback lanes reported in `bad`; the one-lane copy calls the library.
template <class T, int Bits>
struct vec;
#if SWGPU_SWEEP3D_VECTOR >= 256
template <>
struct vec<float, 256> {
    using v = __m256;
    using mask = __m256;
    static constexpr int width = 8;
    static v load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, v x) { _mm256_storeu_ps(p, x); }
    static __m256i part(std::size_t count) {
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)),
                                  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    static v load(const float* p, std::size_t count) { return _mm256_maskload_ps(p, part(count)); }
    static void store(float* p, v x, std::size_t count) { _mm256_maskstore_ps(p, part(count), x); }
    static v set(float x) { return _mm256_set1_ps(x); }
    static v add(v a, v b) { return _mm256_add_ps(a, b); }
    static v sub(v a, v b) { return _mm256_sub_ps(a, b); }
    static v mul(v a, v b) { return _mm256_mul_ps(a, b); }
    static v div(v a, v b) { return _mm256_div_ps(a, b); }
    static mask none() { return _mm256_setzero_ps(); }
    // lanes [first, end) of r, the others of old
    static v keep(v r, v old, int first, int end) {
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i in = _mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32(first - 1)),
                                            _mm256_cmpgt_epi32(_mm256_set1_epi32(end), lane));
        return _mm256_blendv_ps(old, r, _mm256_castsi256_ps(in));
    }
    static unsigned bits(mask m) { return static_cast<unsigned>(_mm256_movemask_ps(m)); }
    static v fmod(v x, v c, v inv, mask& bad) {
        const v sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
        const v ax = _mm256_andnot_ps(sign, x);
        const v y = _mm256_mul_ps(ax, inv);
        bad = _mm256_or_ps(bad, _mm256_cmp_ps(y, _mm256_set1_ps(quotient_limit<float>), _CMP_NLT_UQ));
        v q = _mm256_round_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const v r0 = _mm256_fnmadd_ps(q, c, ax);
        q = _mm256_sub_ps(_mm256_add_ps(q, _mm256_and_ps(_mm256_cmp_ps(r0, c, _CMP_GE_OQ), one)),
                          _mm256_and_ps(_mm256_cmp_ps(r0, _mm256_setzero_ps(), _CMP_LT_OQ), one));
        return _mm256_or_ps(_mm256_fnmadd_ps(q, c, ax), _mm256_and_ps(x, sign));
    }
};
template <>
struct vec<double, 256> {
    using v = __m256d;
    using mask = __m256d;
    static constexpr int width = 4;
    static v load(const double* p) { return _mm256_loadu_pd(p); }
    static void store(double* p, v x) { _mm256_storeu_pd(p, x); }
    static __m256i part(std::size_t count) {
        return _mm256_cmpgt_epi64(_mm256_set1_epi64x(static_cast<long long>(count)), _mm256_setr_epi64x(0, 1, 2, 3));
    }
    static v load(const double* p, std::size_t count) { return _mm256_maskload_pd(p, part(count)); }
    static void store(double* p, v x, std::size_t count) { _mm256_maskstore_pd(p, part(count), x); }
    static v set(double x) { return _mm256_set1_pd(x); }
    static v add(v a, v b) { return _mm256_add_pd(a, b); }
    static v sub(v a, v b) { return _mm256_sub_pd(a, b); }
    static v mul(v a, v b) { return _mm256_mul_pd(a, b); }
    static v div(v a, v b) { return _mm256_div_pd(a, b); }
    static mask none() { return _mm256_setzero_pd(); }
    static v keep(v r, v old, int first, int end) {
        const __m256i lane = _mm256_setr_epi64x(0, 1, 2, 3);
        const __m256i in = _mm256_and_si256(_mm256_cmpgt_epi64(lane, _mm256_set1_epi64x(first - 1)),
                                            _mm256_cmpgt_epi64(_mm256_set1_epi64x(end), lane));
        return _mm256_blendv_pd(old, r, _mm256_castsi256_pd(in));
    }
    static unsigned bits(mask m) { return static_cast<unsigned>(_mm256_movemask_pd(m)); }
    static v fmod(v x, v c, v inv, mask& bad) {
        const v sign = _mm256_set1_pd(-0.0), one = _mm256_set1_pd(1.0);
        const v ax = _mm256_andnot_pd(sign, x);
        const v y = _mm256_mul_pd(ax, inv);
        bad = _mm256_or_pd(bad, _mm256_cmp_pd(y, _mm256_set1_pd(quotient_limit<double>), _CMP_NLT_UQ));
        v q = _mm256_round_pd(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const v r0 = _mm256_fnmadd_pd(q, c, ax);
        q = _mm256_sub_pd(_mm256_add_pd(q, _mm256_and_pd(_mm256_cmp_pd(r0, c, _CMP_GE_OQ), one)),
                          _mm256_and_pd(_mm256_cmp_pd(r0, _mm256_setzero_pd(), _CMP_LT_OQ), one));
        return _mm256_or_pd(_mm256_fnmadd_pd(q, c, ax), _mm256_and_pd(x, sign));
    }
};
#endif
#if SWGPU_SWEEP3D_VECTOR >= 512
template <>
struct vec<float, 512> {
    using v = __m512;
    using mask = __mmask16;
    static constexpr int width = 16;
    static v load(const float* p) { return _mm512_loadu_ps(p); }
    static void store(float* p, v x) { _mm512_storeu_ps(p, x); }
    static __mmask16 part(std::size_t count) { return static_cast<__mmask16>((1u << count) - 1); }
    static v load(const float* p, std::size_t count) { return _mm512_maskz_loadu_ps(part(count), p); }
    static void store(float* p, v x, std::size_t count) { _mm512_mask_storeu_ps(p, part(count), x); }
    static v set(float x) { return _mm512_set1_ps(x); }
    static v add(v a, v b) { return _mm512_add_ps(a, b); }
    static v sub(v a, v b) { return _mm512_sub_ps(a, b); }
    static v mul(v a, v b) { return _mm512_mul_ps(a, b); }
    static v div(v a, v b) { return _mm512_div_ps(a, b); }
    static mask none() { return 0; }
    static v keep(v r, v old, int first, int end) {
        return _mm512_mask_blend_ps(static_cast<__mmask16>(((1u << end) - 1u) & ~((1u << first) - 1u)), old, r);
    }
    static unsigned bits(mask m) { return m; }
    static v fmod(v x, v c, v inv, mask& bad) {
        const __m512i sign = _mm512_set1_epi32(std::int32_t(0x80000000u));
        const v one = _mm512_set1_ps(1.0f);
        const v ax = _mm512_castsi512_ps(_mm512_andnot_si512(sign, _mm512_castps_si512(x)));
        const v y = _mm512_mul_ps(ax, inv);
        bad |= _mm512_cmp_ps_mask(y, _mm512_set1_ps(quotient_limit<float>), _CMP_NLT_UQ);
        v q = _mm512_roundscale_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const v r0 = _mm512_fnmadd_ps(q, c, ax);
        q = _mm512_mask_add_ps(q, _mm512_cmp_ps_mask(r0, c, _CMP_GE_OQ), q, one);
        q = _mm512_mask_sub_ps(q, _mm512_cmp_ps_mask(r0, _mm512_setzero_ps(), _CMP_LT_OQ), q, one);
        const __m512i r = _mm512_castps_si512(_mm512_fnmadd_ps(q, c, ax));
        return _mm512_castsi512_ps(_mm512_or_si512(r, _mm512_and_si512(_mm512_castps_si512(x), sign)));
    }
};
template <>
struct vec<double, 512> {
    using v = __m512d;
    using mask = __mmask8;
    static constexpr int width = 8;
    static v load(const double* p) { return _mm512_loadu_pd(p); }
    static void store(double* p, v x) { _mm512_storeu_pd(p, x); }
    static __mmask8 part(std::size_t count) { return static_cast<__mmask8>((1u << count) - 1); }
    static v load(const double* p, std::size_t count) { return _mm512_maskz_loadu_pd(part(count), p); }
    static void store(double* p, v x, std::size_t count) { _mm512_mask_storeu_pd(p, part(count), x); }
    static v set(double x) { return _mm512_set1_pd(x); }
    static v add(v a, v b) { return _mm512_add_pd(a, b); }
    static v sub(v a, v b) { return _mm512_sub_pd(a, b); }
    static v mul(v a, v b) { return _mm512_mul_pd(a, b); }
    static v div(v a, v b) { return _mm512_div_pd(a, b); }
    static mask none() { return 0; }
    static v keep(v r, v old, int first, int end) {
        return _mm512_mask_blend_pd(static_cast<__mmask8>(((1u << end) - 1u) & ~((1u << first) - 1u)), old, r);
    }
    static unsigned bits(mask m) { return m; }
    static v fmod(v x, v c, v inv, mask& bad) {
        const __m512i sign = _mm512_set1_epi64(std::int64_t(0x8000000000000000ull));
        const v one = _mm512_set1_pd(1.0);
        const v ax = _mm512_castsi512_pd(_mm512_andnot_si512(sign, _mm512_castpd_si512(x)));
        const v y = _mm512_mul_pd(ax, inv);
        bad |= _mm512_cmp_pd_mask(y, _mm512_set1_pd(quotient_limit<double>), _CMP_NLT_UQ);
        v q = _mm512_roundscale_pd(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const v r0 = _mm512_fnmadd_pd(q, c, ax);
        q = _mm512_mask_add_pd(q, _mm512_cmp_pd_mask(r0, c, _CMP_GE_OQ), q, one);
        q = _mm512_mask_sub_pd(q, _mm512_cmp_pd_mask(r0, _mm512_setzero_pd(), _CMP_LT_OQ), q, one);
        const __m512i r = _mm512_castpd_si512(_mm512_fnmadd_pd(q, c, ax));
        return _mm512_castsi512_pd(_mm512_or_si512(r, _mm512_and_si512(_mm512_castpd_si512(x), sign)));
    }
};
#endif
template <class T>
struct vec<T, 0> {
    using v = T;
    using mask = unsigned;
    static constexpr int width = 1;
    static v load(const T* p) { return *p; }
    static void store(T* p, v x) { *p = x; }
    static v load(const T* p, std::size_t) { return *p; }
    static void store(T* p, v x, std::size_t) { *p = x; }
    static v set(T x) { return x; }
    static v add(v a, v b) { return add_rn(a, b); }
    static v sub(v a, v b) { return add_rn(a, -b); }
    static v mul(v a, v b) { return mul_rn(a, b); }
    static v div(v a, v b) { return a / b; }
    static mask none() { return 0; }
    static v keep(v r, v old, int first, int end) { return first < end ? r : old; }
    static unsigned bits(mask m) { return m; }
    static v fmod(v x, v c, v, mask&) { return fmod_of(x, c); }
};
#if defined(SWGPU_SWEEP3D_VECTOR)
constexpr int widest = SWGPU_SWEEP3D_VECTOR;
#else
constexpr int widest = 0;
#endif

// r[i] = fmod(x[i], c) for count values, a vector at a time, by the exact fmod; true where some went to the library.
// C must be usable (fmod_lane_usable).
template <class T>
bool fmod_array_kernel(const T* x, T* r, std::size_t count, T c, T inv) {
    using V = vec<T, widest>;
    constexpr int W = V::width;
    bool fell_back = false;
    std::size_t i = 0;
    if constexpr (W > 1) {
        const typename V::v cv = V::set(c), iv = V::set(inv);
        for (; i + W <= count; i += W) {
            typename V::mask bad = V::none();
            V::store(r + i, V::fmod(V::load(x + i), cv, iv, bad));
            if (const unsigned b = V::bits(bad)) {
                fell_back = true;
                for (int l = 0; l < W; ++l)
                    if (b >> l & 1u) r[i + l] = fmod_of(x[i + l], c);
            }
        }
    }
    for (; i < count; ++i) {
        std::int32_t bad = 0;
        r[i] = fmod_lane(x[i], c, inv, bad);
        if (bad) {
            r[i] = fmod_of(x[i], c);
            fell_back = true;
        }
    }
    return fell_back;
}

// x = fmod(x + step, C), count times, one after another: the latency of one remainder and one addition. Inline: the
// exact fmod (its fused multiply-add is the instruction where the file is compiled with FMA); else the library.
template <class T, bool Inline>
T fmod_chain_kernel(T x, T step, std::size_t count, T c, T inv) {
    for (std::size_t i = 0; i < count; ++i) {
        const T s = add_rn(x, step);
        if constexpr (Inline) {
            std::int32_t bad = 0;
            x = fmod_lane(s, c, inv, bad);
            if (bad) x = fmod_of(s, c);
        } else {
            x = fmod_of(s, c);
        }
    }
    return x;
}

// One vector of lanes with work at a step of fmod_block_kernel: plane g, lanes m0 .. m0 + W - 1, of which
// [first, end) are inside their columns; the initial values start at init + start.
struct fmod_vector {
    index_t g, m0;
    int first, end;
    index_t start;
};

// NB vectors of one step of fmod_block_kernel, their L updates interleaved (independent chains for the pipelines).
template <class V, int NB, class T>
inline void fmod_vectors(const fmod_job<T>& job, const box& b, index_t s, const T* old, T* now, index_t row,
                         const T* init, const fmod_vector* work, typename V::v cv, typename V::v iv) {
    constexpr index_t W = V::width;
    typename V::v t[NB], no[NB], w[NB], r[NB];
    typename V::mask bad[NB];
    for (int q = 0; q < NB; ++q) {
        const fmod_vector& x = work[q];
        t[q] = V::load(old + x.g * row + 1 + x.m0);
        no[q] = V::load(old + (x.g + 1) * row + x.m0);
        w[q] = V::load(old + (x.g + 1) * row + 1 + x.m0);
        bad[q] = V::none();
        r[q] = V::fmod(V::add(V::add(V::add(V::load(init + x.start), t[q]), no[q]), w[q]), cv, iv, bad[q]);
    }
    for (int it = 1; it < job.loops; ++it)
        for (int q = 0; q < NB; ++q) r[q] = V::fmod(V::add(V::add(V::add(r[q], t[q]), no[q]), w[q]), cv, iv, bad[q]);
    const index_t n = job.n;
    for (int q = 0; q < NB; ++q) {
        const fmod_vector& x = work[q];
        T* const out = now + (x.g + 1) * row + 1 + x.m0;
        V::store(out, x.first == 0 && x.end == W ? r[q] : V::keep(r[q], w[q], x.first, x.end));
        if (const unsigned any = V::bits(bad[q]) >> x.first << x.first & ((1u << x.end) - 1u)) {
            const T* const west = old + (x.g + 1) * row + 1 + x.m0;
            const T* const north = old + (x.g + 1) * row + x.m0;
            const T* const top = old + x.g * row + 1 + x.m0;
            for (int l = x.first; l < x.end; ++l)
                if (any >> l & 1u)
                    out[l] = fmod_point(init[x.start + l], top[l], north[l], west[l], job.c, job.loops);
        }
        // lane m writes (i0 + g, j0 + m, s - g - m)
        const index_t at = (b.i0 + x.g) * n * n + (b.j0 + x.m0) * n + (s - x.g - x.m0);
        for (int l = x.first; l < x.end; ++l) job.a[at + l * (n - 1)] = out[l];
    }
}

// The fmod sweep of one tile, a vector of lanes at a time. The tile's G planes, R rows and K columns run as a
// wavefront in registers and a small state: at step s, lane (g, m) (plane i0 + g, row j0 + m) does column
// k = s - m - g, so the lanes of a step are independent of one another. Its west neighbour is its own value of the
// previous step, its north neighbour lane (g, m - 1)'s, its top neighbour lane (g - 1, m)'s; the tile's faces (plane
// i0 - 1, row j0 - 1, column k0 - 1) come from the grid. The state row g + 1 holds lane (g, m) at slot m + 1 and the
// north face at slot 0; row 0 holds the top face, so the three neighbours of a vector of lanes are three contiguous
// loads from the previous step's state. A lane outside its columns keeps its value (the west face before, its last
// value after), and a vector of W lanes is computed only if one of them is inside. Each point does its L updates in
// the fixed order; a lane whose quotient is too large for the exact fmod is done again with the library's.
template <class T, int Bits>
void fmod_block_kernel(const fmod_job<T>& job, const box& b) {
    using V = vec<T, Bits>;
    constexpr index_t W = V::width;
    const index_t n = job.n, n2 = n * n;
    T* const a = job.a;
    const index_t G = b.i1 - b.i0, R = b.j1 - b.j0;
    const index_t lanes = (R + W - 1) / W * W, row = lanes + 1;
    std::vector<T> state[2] = {std::vector<T>(static_cast<std::size_t>((G + 1) * row), T(0)),
                               std::vector<T>(static_cast<std::size_t>((G + 1) * row), T(0))};
    for (index_t g = 0; g < G; ++g)
        for (index_t m = 0; m < R; ++m) {
            const T west = b.k0 > 0 ? a[(b.i0 + g) * n2 + (b.j0 + m) * n + b.k0 - 1] : T(0);
            state[0][static_cast<std::size_t>((g + 1) * row + m + 1)] = west;
            state[1][static_cast<std::size_t>((g + 1) * row + m + 1)] = west;
        }
    // the initial value of lane m at offset o: values[(-(m + o)) mod 10]
    std::vector<T> init(static_cast<std::size_t>(lanes + 10));
    for (index_t t = 0; t < lanes + 10; ++t) init[static_cast<std::size_t>(t)] = job.values[(10 - t % 10) % 10];
    const typename V::v cv = V::set(job.c), iv = V::set(job.inverse);
    const index_t last = b.k1 - 1 + (R - 1) + (G - 1);
    std::vector<fmod_vector> work(static_cast<std::size_t>(G * (lanes / W)));
    for (index_t s = b.k0; s <= last; ++s) {
        T* const old = state[s & 1].data();
        T* const now = state[(s + 1) & 1].data();
        // the faces of this step: the top face of plane i0's lanes, the north face of each plane's lane 0
        {
            const index_t lo = std::max<index_t>(0, s - b.k1 + 1), hi = std::min<index_t>(R - 1, s - b.k0);
            for (index_t m = lo; m <= hi; ++m)
                old[m + 1] = b.i0 > 0 ? a[(b.i0 - 1) * n2 + (b.j0 + m) * n + (s - m)] : T(0);
            const index_t glo = std::max<index_t>(0, s - b.k1 + 1), ghi = std::min<index_t>(G - 1, s - b.k0);
            for (index_t g = glo; g <= ghi; ++g)
                old[(g + 1) * row] = b.j0 > 0 ? a[(b.i0 + g) * n2 + (b.j0 - 1) * n + (s - g)] : T(0);
        }
        // the vectors of lanes with work at this step; their L updates interleaved four vectors at a time
        std::size_t count = 0;
        for (index_t g = 0; g < G; ++g) {
            const index_t lo = std::max<index_t>(0, s - g - b.k1 + 1), hi = std::min<index_t>(R - 1, s - g - b.k0);
            if (lo > hi) continue;
            // (i + 2j + 3k) mod 10 = (B - m) mod 10, B = i0 + 2 j0 + 3 s - 2 g
            const index_t base = ((b.i0 + 2 * b.j0 + 3 * s - 2 * g) % 10 + 10) % 10;
            for (index_t m0 = lo / W * W; m0 <= hi; m0 += W)
                work[count++] = {g, m0, static_cast<int>(std::max(lo, m0) - m0),
                                 static_cast<int>(std::min(hi + 1, m0 + W) - m0), (10 - base) % 10 + m0};
        }
        std::size_t w0 = 0;
        for (; w0 + 4 <= count; w0 += 4)
            fmod_vectors<V, 4>(job, b, s, old, now, row, init.data(), work.data() + w0, cv, iv);
        for (; w0 < count; ++w0) fmod_vectors<V, 1>(job, b, s, old, now, row, init.data(), work.data() + w0, cv, iv);
    }
}

// The diamond-difference sweep of one tile. The faces are [position][angle], so a cell's work over its angles (the
// numerator, the division, the outgoing faces, psi / A) is one vectorised loop; the sum over the angles then runs in
// angle order. Rows run in strips of four, skewed by one column per row (cell (j + r, k) at step k + r), so that four
// independent cells are in flight while each waits on its west neighbour's faces.
template <class T, int Bits>
void dd_block_kernel(const dd_job<T>& job, const box& b) {
    using V = vec<T, Bits>;
    constexpr std::size_t W = V::width;
    constexpr index_t strip = 4;
    const index_t n = job.n;
    const auto angles = static_cast<std::size_t>(job.angles);
    const typename V::v source = V::set(job.source), weight = V::set(job.weight);
    T psi[64 + W];
    const auto cell = [&](index_t i, index_t j, index_t k) {
        T* const x = job.fx + static_cast<std::size_t>(j * n + k) * angles;
        T* const y = job.fy + static_cast<std::size_t>(i * n + k) * angles;
        T* const z = job.fz + static_cast<std::size_t>(i * n + j) * angles;
        for (std::size_t a = 0; a < angles; a += W) {
            const std::size_t count = std::min(W, angles - a);
            const auto load = [count](const T* p) {
                return count == std::size_t(V::width) ? V::load(p) : V::load(p, count);
            };
            const typename V::v xa = load(x + a), ya = load(y + a), za = load(z + a);
            const typename V::v numerator =
                V::add(V::add(V::add(source, V::mul(load(job.cx + a), xa)), V::mul(load(job.cy + a), ya)),
                       V::mul(load(job.cz + a), za));
            const typename V::v p = V::div(numerator, load(job.denominator + a));
            const typename V::v two = V::add(p, p);
            if (count == W) {
                V::store(x + a, V::sub(two, xa));
                V::store(y + a, V::sub(two, ya));
                V::store(z + a, V::sub(two, za));
            } else {
                V::store(x + a, V::sub(two, xa), count);
                V::store(y + a, V::sub(two, ya), count);
                V::store(z + a, V::sub(two, za), count);
            }
            V::store(psi + a, V::mul(p, weight));
        }
        T sum = T(0);
        for (std::size_t a = 0; a < angles; ++a) sum = add_rn(sum, psi[a]);
        job.phi[(i * n + j) * n + k] = sum;
    };
    for (index_t i = b.i0; i < b.i1; ++i)
        for (index_t j0 = b.j0; j0 < b.j1; j0 += strip) {
            const index_t rows = std::min(strip, b.j1 - j0);
            for (index_t s = b.k0; s < b.k1 + rows - 1; ++s)
                for (index_t r = 0; r < rows; ++r) {
                    const index_t k = s - r;
                    if (k >= b.k0 && k < b.k1) cell(i, j0 + r, k);
                }
        }
}

}  // namespace
}  // namespace swgpu::sweep3d::detail
