// The box filter's engine (core/numerics/box_filter.cpp describes the method and its exactness), written once and
// compiled per instruction set: included only by core/numerics/box_filter.cpp (baseline) and box_filter_<isa>.cpp,
// inside the region that compiles that file for its target. Everything here has internal linkage (an anonymous
// namespace), so code built for AVX2 cannot be picked by the linker for a caller in baseline code
// (core/align/simd/isa_target.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/numerics/box_filter_isa.hpp"
#include "core/numerics/sat.hpp"
#include "core/thread_pool.hpp"

namespace swgpu::sat {
namespace {

using u128 = unsigned __int128;
using i128 = __int128;

static_assert(std::numeric_limits<long double>::digits >= 64, "the float64 box filter rounds through long double");

// The signed type of an accumulator (std::make_signed does not know the 128-bit one in ISO mode).
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

template <class T>
using buffer = std::vector<T, uninitialized_allocator<T>>;

// ceil(log2(x)), x >= 1.
int ceil_log2(u128 x) {
    int k = 0;
    while ((u128(1) << k) < x) ++k;
    return k;
}

// Horizontal windows up to this radius are summed directly (2R vectorised adds per element), larger ones by a running
// sum along the row (two scalar operations per element). 128-bit sums are scalar either way.
template <class Acc>
constexpr index_t direct_radius = sizeof(Acc) <= 8 ? 8 : 1;

// A sink's blocks of rows: about this many bytes (a few rows of a wide image stay in the cache until they are handed
// over; at least one row).
constexpr std::size_t sink_block_bytes = std::size_t(256) << 10;

// Rows r0..r1-1 of the output. The sums are kept in K planes (an exact sum may be split into K parts):
// `conv.template at<p>(v)` maps an input element to its part in plane p (integers: wrapping arithmetic);
// `fin(planes, out, n)` turns the n window sums of every plane into output elements, written into the output array
// or into a block of rows handed to the sink when it is full (box_output).
template <class Acc, int K, class In, class Out, class Conv, class Fin>
void box_band(const In* in, const box_output& out, index_t H, index_t W, index_t L, index_t R, index_t r0, index_t r1,
              const Conv& conv, const Fin& fin) {
    const index_t n = W * L, P = R * L;
    buffer<Acc> colbuf(static_cast<std::size_t>(K * (n + 2 * P))), hs(static_cast<std::size_t>(K * n));
    Out* const whole = static_cast<Out*>(out.whole);
    const index_t block_rows =
        whole ? 0 : std::clamp<index_t>(static_cast<index_t>(sink_block_bytes / (static_cast<std::size_t>(n) * sizeof(Out))), 1, r1 - r0);
    buffer<Out> block(static_cast<std::size_t>(block_rows * n));
    index_t block_first = r0;  // the first row in `block`
    std::vector<index_t> left(static_cast<std::size_t>(R)), right(static_cast<std::size_t>(R));
    for (index_t k = 1; k <= R; ++k) {
        left[static_cast<std::size_t>(k - 1)] = reflect101(-k, W) * L;
        right[static_cast<std::size_t>(k - 1)] = reflect101(W - 1 + k, W) * L;
    }
    Acc* cols[K];  // plane p: cols[p][-P .. n + P), the vertical sums of the columns, padded as the row would be
    const Acc* sums[K];
    for (int p = 0; p < K; ++p) {
        cols[p] = colbuf.data() + p * (n + 2 * P) + P;
        sums[p] = hs.data() + p * n;
    }
    const auto each_plane = [&](auto&& f) { [&]<int... p>(std::integer_sequence<int, p...>) { (f(std::integral_constant<int, p>{}), ...); }(std::make_integer_sequence<int, K>{}); };
    each_plane([&](auto pc) {
        constexpr int p = decltype(pc)::value;
        Acc* col = cols[p];
        const In* row = in + reflect101(r0 - R, H) * n;
        for (index_t x = 0; x < n; ++x) col[x] = conv.template at<p>(row[x]);
        for (index_t k = -R + 1; k <= R; ++k) {
            row = in + reflect101(r0 + k, H) * n;
            for (index_t x = 0; x < n; ++x) col[x] = Acc(col[x] + conv.template at<p>(row[x]));
        }
    });
    for (index_t i = r0; i < r1; ++i) {
        const In* a = in + reflect101(i + R, H) * n;
        const In* b = in + reflect101(i - R - 1, H) * n;
        each_plane([&](auto pc) {
            constexpr int p = decltype(pc)::value;
            Acc* col = cols[p];
            if (i > r0)
                for (index_t x = 0; x < n; ++x) col[x] = Acc(col[x] + Acc(conv.template at<p>(a[x]) - conv.template at<p>(b[x])));
            for (index_t k = 0; k < R; ++k)
                for (index_t c = 0; c < L; ++c) {
                    col[-(k + 1) * L + c] = col[left[static_cast<std::size_t>(k)] + c];
                    col[n + k * L + c] = col[right[static_cast<std::size_t>(k)] + c];
                }
            const Acc* w = col - P;  // the window of output element x starts at w[x] and takes every L-th of 2R+1
            Acc* h = hs.data() + p * n;
            if (R <= direct_radius<Acc>) {
                // Blocks of B outputs summed in registers, each window read once (B: a few vector registers).
                constexpr index_t B = 128 / sizeof(Acc);
                index_t x = 0;
                for (; x + B <= n; x += B) {
                    Acc t[B];
                    for (index_t b = 0; b < B; ++b) t[b] = w[x + b];
                    for (index_t k = 1; k <= 2 * R; ++k) {
                        const Acc* s = w + x + k * L;
                        for (index_t b = 0; b < B; ++b) t[b] = Acc(t[b] + s[b]);
                    }
                    for (index_t b = 0; b < B; ++b) h[x + b] = t[b];
                }
                for (; x < n; ++x) {
                    Acc t = w[x];
                    for (index_t k = 1; k <= 2 * R; ++k) t = Acc(t + w[x + k * L]);
                    h[x] = t;
                }
            } else {
                for (index_t c = 0; c < L; ++c) {
                    Acc s = 0;
                    for (index_t k = 0; k <= 2 * R; ++k) s = Acc(s + w[k * L + c]);
                    for (index_t j = 0;; ++j) {
                        h[j * L + c] = s;
                        if (j + 1 == W) break;
                        s = Acc(s + Acc(w[(j + 2 * R + 1) * L + c] - w[j * L + c]));
                    }
                }
            }
        });
        if (whole) {
            fin(sums, whole + i * n, n);
        } else {
            fin(sums, block.data() + (i - block_first) * n, n);
            if (i + 1 - block_first == block_rows || i + 1 == r1) {
                (*out.sink)(block_first, i + 1 - block_first, block.data());
                block_first = i + 1;
            }
        }
    }
}

template <class Acc, int K, class In, class Out, class Conv, class Fin>
void box_run(const array& in, const box_output& out, index_t R, thread_pool& pool, const Conv& conv, const Fin& fin) {
    const index_t H = in.rows;
    const auto bands = static_cast<std::size_t>(std::max<index_t>(1, std::min<index_t>(H, pool.size())));
    const In* src = in.data<In>();
    pool.parallel_for(bands, [&](std::size_t b) {
        const auto r0 = static_cast<index_t>(static_cast<std::size_t>(H) * b / bands);
        const auto r1 = static_cast<index_t>(static_cast<std::size_t>(H) * (b + 1) / bands);
        box_band<Acc, K, In, Out>(src, out, H, in.cols, in.lanes, R, r0, r1, conv, fin);
    });
}

// One plane: the element converted by `f`.
template <class F>
struct one_plane {
    F f;
    template <int P, class V>
    auto at(V v) const {
        return f(v);
    }
};
template <class F>
one_plane(F) -> one_plane<F>;

// ---- integers -----------------------------------------------------------------------------------------------------

// The largest magnitude of a value of In.
template <class In>
u128 magnitude() {
    if constexpr (std::is_signed_v<In>) return u128(std::numeric_limits<In>::max()) + 1;
    else return u128(std::numeric_limits<In>::max());
}

template <class Acc, class In>
void box_integer_with(const array& in, const box_output& out, index_t R, thread_pool& pool) {
    using SAcc = signed_t<Acc>;
    using Wide = std::conditional_t<std::is_signed_v<In>, std::int64_t, std::uint64_t>;
    const u128 A = u128(2 * R + 1) * u128(2 * R + 1), M = magnitude<In>();
    const auto conv = [](In v) { return static_cast<Acc>(static_cast<Wide>(v)); };
    // float: |x - S/A| <= M·(2^-23 + 2^-48), and adding 0.5 rounds by at most 2^-24·(M+1), so the error is below
    // (M+1)·2^-22.4, less than 1/(2A) when (M+1)·A <= 2^21; S < 2^24 is then exact in a float.
    if (std::is_unsigned_v<In> && sizeof(Acc) == 4 && (M + 1) * A <= (u128(1) << 21)) {
        const float inv = 1.0f / static_cast<float>(static_cast<std::uint64_t>(A));
        box_run<Acc, 1, In, In>(in, out, R, pool, one_plane{conv}, [inv](const Acc* const* sp, In* o, index_t n) {
            const Acc* s = sp[0];
            for (index_t x = 0; x < n; ++x)
                o[x] = static_cast<In>(static_cast<std::int32_t>(static_cast<float>(static_cast<std::int32_t>(s[x])) * inv + 0.5f));
        });
        return;
    }
    // double: the same bound with 2^-51.99 and 2^-53: below (M+1)·2^-51.4, less than 1/(2A) when (M+1)·A <= 2^50.
    if ((M + 1) * A <= (u128(1) << 50)) {
        const double inv = 1.0 / static_cast<double>(static_cast<std::uint64_t>(A));
        box_run<Acc, 1, In, In>(in, out, R, pool, one_plane{conv}, [inv](const Acc* const* sp, In* o, index_t n) {
            const Acc* s = sp[0];
            for (index_t x = 0; x < n; ++x) {
                const double m = static_cast<double>(static_cast<std::int64_t>(static_cast<SAcc>(s[x]))) * inv + 0.5;
                if constexpr (std::is_signed_v<In>) o[x] = static_cast<In>(std::floor(m));
                else o[x] = static_cast<In>(static_cast<std::uint64_t>(m));
            }
        });
        return;
    }
    // Exact: round(S / A) = floor((2S + A) / (2A)).
    const auto a = static_cast<i128>(A);
    box_run<Acc, 1, In, In>(in, out, R, pool, one_plane{conv}, [a](const Acc* const* sp, In* o, index_t n) {
        const Acc* s = sp[0];
        for (index_t x = 0; x < n; ++x) {
            const i128 num = 2 * static_cast<i128>(static_cast<SAcc>(s[x])) + a, den = 2 * a;
            i128 q = num / den;
            if (num % den != 0 && num < 0) --q;
            o[x] = static_cast<In>(q);
        }
    });
}

// The accumulator an integer input needs: (A+1)·max|v| must fit its signed range.
template <class In>
int integer_accumulator_bytes(index_t R) {
    const u128 A = u128(2 * R + 1) * u128(2 * R + 1), bound = (A + 1) * magnitude<In>();
    return bound < (u128(1) << 31) ? 4 : bound < (u128(1) << 63) ? 8 : 16;
}

template <class In>
void box_integer(const array& in, const box_output& out, index_t R, thread_pool& pool) {
    switch (integer_accumulator_bytes<In>(R)) {
        case 4: box_integer_with<std::uint32_t, In>(in, out, R, pool); return;
        case 8: box_integer_with<std::uint64_t, In>(in, out, R, pool); return;
        default: box_integer_with<u128, In>(in, out, R, pool); return;
    }
}

// ---- floats -------------------------------------------------------------------------------------------------------

template <class F>
struct float_bits;
template <>
struct float_bits<float> {
    using U = std::uint32_t;
    static constexpr int mant = 23, emax_field = 255, lsb_bias = 150;  // a normal value is m · 2^(e - 150), m < 2^24
};
template <>
struct float_bits<double> {
    using U = std::uint64_t;
    static constexpr int mant = 52, emax_field = 2047, lsb_bias = 1075;
};

// The least and greatest exponent fields of the nonzero values (subnormals count as exponent 1); e_min > e_max when
// every value is zero. Vectorised: a min and a max of the magnitude bits.
template <class F>
std::pair<int, int> exponent_range(const F* v, std::size_t n, thread_pool& pool) {
    using B = float_bits<F>;
    using U = typename B::U;
    const std::size_t parts = std::min<std::size_t>(pool.size(), std::max<std::size_t>(1, n >> 16));
    std::vector<int> lo(parts, B::emax_field + 1), hi(parts, -1);
    pool.parallel_for(parts, [&](std::size_t p) {
        // The least nonzero and the greatest magnitude bits: their exponent fields are the least and greatest.
        const std::size_t a = n * p / parts, b = n * (p + 1) / parts;
        const U magnitude = U(~U(0)) >> 1;
        U least = U(~U(0)), most = 0;
        for (std::size_t k = a; k < b; ++k) {
            U bits;
            std::memcpy(&bits, v + k, sizeof bits);
            bits &= magnitude;
            least = std::min(least, bits != 0 ? bits : U(~U(0)));
            most = std::max(most, bits);
        }
        lo[p] = least == U(~U(0)) ? B::emax_field + 1 : std::max(1, static_cast<int>(least >> B::mant));
        hi[p] = most == 0 ? -1 : static_cast<int>(most >> B::mant);
    });
    return {*std::min_element(lo.begin(), lo.end()), *std::max_element(hi.begin(), hi.end())};
}

// x · 2^s as an integer of U, rounded to nearest (half away from zero) when it is not one.
template <class U, class F>
U fixed_point(F x, int s) {
    using B = float_bits<F>;
    typename B::U bits;
    std::memcpy(&bits, &x, sizeof bits);
    const bool negative = (bits >> (8 * sizeof bits - 1)) != 0;
    int e = static_cast<int>((bits >> B::mant) & typename B::U(B::emax_field));
    std::uint64_t m = bits & ((typename B::U(1) << B::mant) - 1);
    if (e != 0) m |= std::uint64_t(1) << B::mant;
    else e = 1;
    const int sh = e - B::lsb_bias + s;
    U v;
    if (sh >= 0) v = U(U(m) << sh);
    else if (-sh > B::mant + 2) v = 0;
    else v = U((m + (std::uint64_t(1) << (-sh - 1))) >> -sh);
    return negative ? U(U(0) - v) : v;
}

// The mean of exact fixed-point sums S (units 2^-s) as F: float32 through a double (S, then S / A, rounded once each:
// relative error 2^-52 before the rounding to float), float64 through long double (2^-63 before the rounding to double).
template <class Acc, class F>
void box_float_fixed(const array& in, const box_output& out, index_t R, int s, thread_pool& pool) {
    using SAcc = signed_t<Acc>;
    const u128 A = u128(2 * R + 1) * u128(2 * R + 1);
    const auto conv = one_plane{[s](F v) { return fixed_point<Acc>(v, s); }};
    if constexpr (std::is_same_v<F, float>) {
        const double back = std::ldexp(1.0, -s), a = static_cast<double>(static_cast<std::uint64_t>(A));
        box_run<Acc, 1, F, F>(in, out, R, pool, conv, [a, back](const Acc* const* sum, F* o, index_t n) {
            for (index_t x = 0; x < n; ++x) o[x] = static_cast<F>(static_cast<double>(static_cast<SAcc>(sum[0][x])) / a * back);
        });
    } else {
        const long double back = std::ldexp(1.0L, -s), a = static_cast<long double>(static_cast<std::uint64_t>(A));
        box_run<Acc, 1, F, F>(in, out, R, pool, conv, [a, back](const Acc* const* sum, F* o, index_t n) {
            for (index_t x = 0; x < n; ++x)
                o[x] = static_cast<F>(static_cast<long double>(static_cast<SAcc>(sum[0][x])) / a * back);
        });
    }
}

// Every value split into two doubles, v = hi + lo: hi = v rounded to a multiple of 2^k ((v + C) - C, C = 1.5·2^(52+k)),
// lo = v - hi (exact, a multiple of the image's least unit 2^lsb, |lo| <= 2^(k-1)). With k chosen so that every
// partial sum of his stays below 2^(53+k) and every partial sum of los below 2^(53+lsb), both planes are summed in
// double without a rounding: the window sum is hi + lo exactly. Vectorised adds only.
template <class F>
struct split_planes {
    double C;
    template <int P>
    double at(F v) const {
        const double d = static_cast<double>(v), hi = (d + C) - C;
        if constexpr (P == 0) return hi;
        else return d - hi;
    }
};

template <class F>
void box_float_split(const array& in, const box_output& out, index_t R, int k, thread_pool& pool) {
    const u128 A = u128(2 * R + 1) * u128(2 * R + 1);
    const split_planes<F> conv{std::ldexp(1.5, 52 + k)};
    if constexpr (std::is_same_v<F, float>) {
        // (hi + lo) · fl(1/A): relative error below 3 · 2^-53 before the rounding to float.
        const double inv = 1.0 / static_cast<double>(static_cast<std::uint64_t>(A));
        box_run<double, 2, F, F>(in, out, R, pool, conv, [inv](const double* const* sum, F* o, index_t n) {
            for (index_t x = 0; x < n; ++x) o[x] = static_cast<F>((sum[0][x] + sum[1][x]) * inv);
        });
    } else {
        const long double a = static_cast<long double>(static_cast<std::uint64_t>(A));
        box_run<double, 2, F, F>(in, out, R, pool, conv, [a](const double* const* sum, F* o, index_t n) {
            for (index_t x = 0; x < n; ++x)
                o[x] = static_cast<F>((static_cast<long double>(sum[0][x]) + static_cast<long double>(sum[1][x])) / a);
        });
    }
}

// How the sums of an image with nonzero exponent fields e_min..e_max are kept.
struct float_plan {
    enum { split, fixed64, fixed128 } kind = split;
    int k = 0;  // split: the unit of the high parts, 2^k; fixed: the scale 2^s
};

template <class F>
float_plan plan_for(int e_min, int e_max, index_t R) {
    using B = float_bits<F>;
    if (e_min > e_max) return {float_plan::split, 0};  // all zero
    const u128 A = u128(2 * R + 1) * u128(2 * R + 1);
    // A partial sum (a running sum holds up to A + 2R + 1 <= 2A values for a moment) is below 2A · 2^top, every value a
    // multiple of 2^lsb.
    const int c = ceil_log2(2 * A), top = e_max - B::lsb_bias + B::mant + 1, lsb = e_min - B::lsb_bias;
    // Two planes: his below 2^(53+k) needs k >= top + c - 53 (then also |v| <= 2^(51+k)); los below 2^(53+lsb) needs
    // 2^(k-1) · 2A <= 2^(53+lsb), k <= 54 + lsb - c.
    const int k = std::max(top + c - 53, lsb);
    if (k <= 54 + lsb - c && 52 + k <= 1020) return {float_plan::split, k};  // (C a finite double)
    // Fixed point: integers x · 2^-lsb below 2^(top - lsb + c) in magnitude, 63 or 127 bits.
    const int bits = top - lsb + c;
    if (bits <= 63) return {float_plan::fixed64, -lsb};
    if (bits <= 127) return {float_plan::fixed128, -lsb};
    return {float_plan::fixed128, -lsb - (bits - 127)};  // rounded to multiples of 2^-s
}

template <class F>
void box_float(const array& in, const box_output& out, index_t R, thread_pool& pool) {
    const auto [e_min, e_max] = exponent_range(in.data<F>(), in.elements(), pool);
    if (e_max == float_bits<F>::emax_field)
        throw input_error("", "the image holds NaN or infinite values; the box filter needs finite values");
    const float_plan plan = plan_for<F>(e_min, e_max, R);
    switch (plan.kind) {
        case float_plan::split: box_float_split<F>(in, out, R, plan.k, pool); return;
        case float_plan::fixed64: box_float_fixed<std::uint64_t, F>(in, out, R, plan.k, pool); return;
        case float_plan::fixed128: box_float_fixed<u128, F>(in, out, R, plan.k, pool); return;
    }
}

[[maybe_unused]] int accumulator_bytes(dtype t, index_t R) {
    switch (t) {
        case dtype::u8: return integer_accumulator_bytes<std::uint8_t>(R);
        case dtype::u16: return integer_accumulator_bytes<std::uint16_t>(R);
        case dtype::u32: return integer_accumulator_bytes<std::uint32_t>(R);
        case dtype::u64: return integer_accumulator_bytes<std::uint64_t>(R);
        case dtype::i8: return integer_accumulator_bytes<std::int8_t>(R);
        case dtype::i16: return integer_accumulator_bytes<std::int16_t>(R);
        case dtype::i32: return integer_accumulator_bytes<std::int32_t>(R);
        case dtype::i64: return integer_accumulator_bytes<std::int64_t>(R);
        case dtype::f32:
        case dtype::f64: return 16;  // at most; 8 for most images
    }
    return 16;
}


// The filter of `in` into `out` (the output array, of the same type and shape, or a sink of rows; R >= 1).
[[maybe_unused]] void box_filter_kernel(const array& in, const box_output& out, index_t radius, thread_pool& pool) {
    switch (in.type) {
        case dtype::u8: box_integer<std::uint8_t>(in, out, radius, pool); break;
        case dtype::u16: box_integer<std::uint16_t>(in, out, radius, pool); break;
        case dtype::u32: box_integer<std::uint32_t>(in, out, radius, pool); break;
        case dtype::u64: box_integer<std::uint64_t>(in, out, radius, pool); break;
        case dtype::i8: box_integer<std::int8_t>(in, out, radius, pool); break;
        case dtype::i16: box_integer<std::int16_t>(in, out, radius, pool); break;
        case dtype::i32: box_integer<std::int32_t>(in, out, radius, pool); break;
        case dtype::i64: box_integer<std::int64_t>(in, out, radius, pool); break;
        case dtype::f32: box_float<float>(in, out, radius, pool); break;
        case dtype::f64: box_float<double>(in, out, radius, pool); break;
    }
}

}  // namespace
}  // namespace swgpu::sat
