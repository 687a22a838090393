#include "core/numerics/sweep3d.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <string>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/numerics/sweep3d_isa.hpp"
#include "core/numerics/sweep3d_kernel.hpp"

namespace swgpu::sweep3d {

namespace {

// 3-D tiles in wavefront order: wave d holds the tiles (ti, tj, tk) with ti + tj + tk == d, run in parallel on the
// pool; body(i0, i1, j0, j1, k0, k1) runs one tile. A tile's upstream tiles are in earlier waves; the tiles of one
// wave differ in at least two tile coordinates, so the (j, k), (i, k) and (i, j) regions they own are disjoint.
template <class Body>
void tiled_waves(index_t n, index_t tile, thread_pool& pool, Body&& body) {
    tile = std::max<index_t>(1, tile);
    const index_t t = (n + tile - 1) / tile;
    std::vector<std::array<index_t, 3>> wave;
    for (index_t d = 0; d <= 3 * (t - 1); ++d) {
        check_cancelled();  // between waves: a stop leaves nothing half-done that anyone reads
        wave.clear();
        for (index_t ti = std::max<index_t>(0, d - 2 * (t - 1)); ti <= std::min(d, t - 1); ++ti)
            for (index_t tj = std::max<index_t>(0, d - ti - (t - 1)); tj <= std::min(d - ti, t - 1); ++tj)
                wave.push_back({ti, tj, d - ti - tj});
        pool.parallel_for(wave.size(), [&](std::size_t w) {
            const auto [ti, tj, tk] = wave[w];
            body(ti * tile, std::min(n, (ti + 1) * tile), tj * tile, std::min(n, (tj + 1) * tile), tk * tile,
                 std::min(n, (tk + 1) * tile));
        });
    }
}

// The oracles: lexicographic, the library's fmod, faces per angle.
template <class T>
std::vector<T> fmod_sweep(const fmod_params& p) {
    check(p);
    const index_t n = p.n;
    std::vector<T> a(static_cast<std::size_t>(n * n * n));
    const T c = T(p.c);
    const auto at = [n](index_t i, index_t j, index_t k) { return static_cast<std::size_t>((i * n + j) * n + k); };
    const auto block = [&](index_t i0, index_t i1, index_t j0, index_t j1, index_t k0, index_t k1) {
        for (index_t i = i0; i < i1; ++i)
            for (index_t j = j0; j < j1; ++j)
                for (index_t k = k0; k < k1; ++k) {
                    const T top = i > 0 ? a[at(i - 1, j, k)] : T(0);
                    const T north = j > 0 ? a[at(i, j - 1, k)] : T(0);
                    const T west = k > 0 ? a[at(i, j, k - 1)] : T(0);
                    a[at(i, j, k)] = fmod_point(initial_value<T>(i, j, k), top, north, west, c, p.loops);
                }
    };
    block(0, n, 0, n, 0, n);
    return a;
}

template <class T>
std::vector<T> dd_sweep(const dd_params& p) {
    check(p);
    const index_t n = p.n;
    const auto plane = static_cast<std::size_t>(n * n);
    const auto angles = static_cast<std::size_t>(p.angles);
    std::vector<T> phi(plane * static_cast<std::size_t>(n), T(0));
    // Incoming face fluxes per angle: x faces on the (j, k) plane, y faces on (i, k), z faces on (i, j); 0 on the
    // inflow boundary, updated in place by each cell to its outgoing value.
    std::vector<T> fx(plane * angles, T(0)), fy(plane * angles, T(0)), fz(plane * angles, T(0));
    std::vector<dd_angle<T>> coef(angles);
    for (int a = 0; a < p.angles; ++a) coef[static_cast<std::size_t>(a)] = dd_coefficients<T>(p, a);
    const T weight = T(1) / T(p.angles), source = T(p.source);
    const auto block = [&](index_t i0, index_t i1, index_t j0, index_t j1, index_t k0, index_t k1) {
        for (index_t i = i0; i < i1; ++i)
            for (index_t j = j0; j < j1; ++j)
                for (index_t k = k0; k < k1; ++k) {
                    T sum = T(0);
                    for (std::size_t a = 0; a < angles; ++a) {
                        T& x = fx[a * plane + static_cast<std::size_t>(j * n + k)];
                        T& y = fy[a * plane + static_cast<std::size_t>(i * n + k)];
                        T& z = fz[a * plane + static_cast<std::size_t>(i * n + j)];
                        sum = add_rn(sum, mul_rn(dd_cell(coef[a], source, x, y, z), weight));
                    }
                    phi[static_cast<std::size_t>((i * n + j) * n + k)] = sum;
                }
    };
    block(0, n, 0, n, 0, n);
    return phi;
}

// The kernel of an instruction set: the best of kernel_isas() not above it.
enum class kernel { portable, avx2, avx512 };
kernel pick(simd::isa isa) {
    const auto have = kernel_isas();
    for (auto it = have.rbegin(); it != have.rend(); ++it) {
        if (*it > isa) continue;
        if (*it == simd::isa::avx512bw) return kernel::avx512;
        if (*it == simd::isa::avx2) return kernel::avx2;
        return kernel::portable;
    }
    return kernel::portable;
}

template <class T>
void fmod_block(kernel k, const detail::fmod_job<T>& job, const detail::box& b) {
#if defined(SWGPU_X86_KERNELS)
    if (k == kernel::avx512) return detail::fmod_block_avx512(job, b);
    if (k == kernel::avx2) return detail::fmod_block_avx2(job, b);
#endif
    (void)k;
    detail::fmod_block_kernel<T, 0>(job, b);
}

template <class T>
void dd_block(kernel k, const detail::dd_job<T>& job, const detail::box& b) {
#if defined(SWGPU_X86_KERNELS)
    if (k == kernel::avx512) return detail::dd_block_avx512(job, b);
    if (k == kernel::avx2) return detail::dd_block_avx2(job, b);
#endif
    (void)k;
    detail::dd_block_kernel<T, 0>(job, b);
}

template <class T>
void fmod_tiled_sweep(const fmod_params& p, thread_pool& pool, index_t tile, simd::isa isa, std::span<T> a) {
    check(p);
    const index_t n = p.n;
    if (a.size() != static_cast<std::size_t>(n * n * n))
        throw error(exit_code::bad_command_line, "sweep3d: the grid holds " + std::to_string(a.size()) +
                                                     " values; N^3 = " + std::to_string(n * n * n) + " expected");
    detail::fmod_job<T> job{a.data(), n, p.loops, T(p.c), T(0), {}};
    for (int d = 0; d < 10; ++d) job.values[d] = initial_value<T>(d, 0, 0);
    // a modulus the exact fmod cannot take (subnormal, or 1/C not finite) runs the library's fmod
    const kernel k = detail::fmod_lane_usable(job.c) ? pick(isa) : kernel::portable;
    job.inverse = T(1) / job.c;
    tiled_waves(n, tile, pool, [&](index_t i0, index_t i1, index_t j0, index_t j1, index_t k0, index_t k1) {
        fmod_block(k, job, detail::box{i0, i1, j0, j1, k0, k1});
    });
}

template <class T>
void dd_tiled_sweep(const dd_params& p, thread_pool& pool, index_t tile, simd::isa isa, std::span<T> phi) {
    check(p);
    const index_t n = p.n;
    const auto plane = static_cast<std::size_t>(n * n);
    const auto angles = static_cast<std::size_t>(p.angles);
    if (phi.size() != plane * static_cast<std::size_t>(n))
        throw error(exit_code::bad_command_line, "sweep3d: the grid holds " + std::to_string(phi.size()) +
                                                     " values; N^3 = " + std::to_string(n * n * n) + " expected");
    // Incoming face fluxes, [position][angle]: x faces on the (j, k) plane, y faces on (i, k), z faces on (i, j).
    std::vector<T> fx(plane * angles, T(0)), fy(plane * angles, T(0)), fz(plane * angles, T(0));
    std::vector<T> cx(angles), cy(angles), cz(angles), den(angles);
    for (std::size_t a = 0; a < angles; ++a) {
        const auto c = dd_coefficients<T>(p, static_cast<int>(a));
        cx[a] = c.cx;
        cy[a] = c.cy;
        cz[a] = c.cz;
        den[a] = c.denominator;
    }
    const detail::dd_job<T> job{phi.data(), fx.data(), fy.data(), fz.data(), cx.data(), cy.data(), cz.data(),
                                den.data(), n, p.angles, T(p.source), T(1) / T(p.angles)};
    const kernel k = pick(isa);
    tiled_waves(n, tile, pool, [&](index_t i0, index_t i1, index_t j0, index_t j1, index_t k0, index_t k1) {
        dd_block(k, job, detail::box{i0, i1, j0, j1, k0, k1});
    });
}

}  // namespace

std::vector<simd::isa> kernel_isas() {
    std::vector<simd::isa> v{simd::isa::portable};
#if defined(SWGPU_X86_KERNELS)
    if (simd::cpu_supports(simd::isa::avx2) && __builtin_cpu_supports("fma")) {
        v.push_back(simd::isa::avx2);
        if (simd::cpu_supports(simd::isa::avx512bw)) v.push_back(simd::isa::avx512bw);
    }
#endif
    return v;
}

template <class T>
T exact_fmod(T x, T c) {
    const T ac = std::fabs(c);
    if (!detail::fmod_lane_usable(ac)) return fmod_of(x, c);
    std::int32_t bad = 0;
    const T r = detail::fmod_lane(x, ac, T(1) / ac, bad);
    return bad ? fmod_of(x, c) : r;
}

template <class T>
bool exact_fmod_array(const T* x, T* r, std::size_t count, T c, simd::isa isa) {
    const T ac = std::fabs(c);
    if (!detail::fmod_lane_usable(ac)) {
        for (std::size_t i = 0; i < count; ++i) r[i] = fmod_of(x[i], c);
        return count > 0;
    }
    const T inv = T(1) / ac;
    switch (pick(isa)) {
#if defined(SWGPU_X86_KERNELS)
    case kernel::avx512: return detail::fmod_array_avx512(x, r, count, ac, inv);
    case kernel::avx2: return detail::fmod_array_avx2(x, r, count, ac, inv);
#endif
    default: return detail::fmod_array_kernel<T>(x, r, count, ac, inv);
    }
}

template <class T>
T fmod_chain(T x, T step, std::size_t count, T c, bool inline_fmod, simd::isa isa) {
    const T ac = std::fabs(c);
    if (!inline_fmod || !detail::fmod_lane_usable(ac))
        return detail::fmod_chain_kernel<T, false>(x, step, count, c, T(1));
    const T inv = T(1) / ac;
    switch (pick(isa)) {
#if defined(SWGPU_X86_KERNELS)
    case kernel::avx512: return detail::fmod_chain_avx512(x, step, count, ac, inv);
    case kernel::avx2: return detail::fmod_chain_avx2(x, step, count, ac, inv);
#endif
    default: return detail::fmod_chain_kernel<T, true>(x, step, count, ac, inv);
    }
}

void check(const fmod_params& p) {
    if (p.n < 1) throw usage_error("--n must be at least 1 (got " + std::to_string(p.n) + ")");
    if (p.n > 4096) throw usage_error("--n must be at most 4096 (got " + std::to_string(p.n) + ")");
    if (p.loops < 1) throw usage_error("--loops must be at least 1 (got " + std::to_string(p.loops) + ")");
    if (!(p.c > 0) || !std::isfinite(p.c)) throw usage_error("--c must be a positive number");
}

void check(const dd_params& p) {
    if (p.n < 1) throw usage_error("--n must be at least 1 (got " + std::to_string(p.n) + ")");
    if (p.n > 4096) throw usage_error("--n must be at most 4096 (got " + std::to_string(p.n) + ")");
    if (p.angles < 1 || p.angles > 64)
        throw usage_error("--angles must be 1 to 64 (got " + std::to_string(p.angles) + ")");
    if (!(p.sigma > 0) || !std::isfinite(p.sigma)) throw usage_error("--sigma must be a positive number");
    if (!std::isfinite(p.source) || p.source < 0) throw usage_error("--source must be a number >= 0");
}

direction angle(int a, int angles) {
    // Spread over the octant: a polar-like parameter u in (0, 1) and an azimuth in (0, pi/2).
    const double u = (a + 0.5) / angles;
    const double phi = (0.5 + (a * 7 % angles)) / angles * (std::acos(-1.0) / 2);
    const double xi = u, s = std::sqrt(1 - u * u);
    return {s * std::cos(phi), s * std::sin(phi), xi};
}

template <class T>
std::vector<T> fmod_naive(const fmod_params& p) {
    return fmod_sweep<T>(p);
}
template <class T>
std::vector<T> fmod_tiled(const fmod_params& p, thread_pool& pool, index_t tile) {
    return fmod_tiled<T>(p, pool, tile, simd::isa::avx512bw);
}
template <class T>
std::vector<T> fmod_tiled(const fmod_params& p, thread_pool& pool, index_t tile, simd::isa isa) {
    check(p);
    std::vector<T> a(static_cast<std::size_t>(p.n * p.n * p.n));
    fmod_tiled_sweep<T>(p, pool, tile, isa, std::span<T>(a));
    return a;
}
template <class T>
void fmod_tiled_into(const fmod_params& p, thread_pool& pool, index_t tile, std::vector<T>& grid, simd::isa isa) {
    check(p);
    grid.resize(static_cast<std::size_t>(p.n * p.n * p.n));
    fmod_tiled_sweep<T>(p, pool, tile, isa, std::span<T>(grid));
}
template <class T>
void fmod_tiled_into(const fmod_params& p, thread_pool& pool, index_t tile, std::span<T> grid, simd::isa isa) {
    fmod_tiled_sweep<T>(p, pool, tile, isa, grid);
}
template <class T>
std::vector<T> dd_naive(const dd_params& p) {
    return dd_sweep<T>(p);
}
template <class T>
std::vector<T> dd_tiled(const dd_params& p, thread_pool& pool, index_t tile) {
    return dd_tiled<T>(p, pool, tile, simd::isa::avx512bw);
}
template <class T>
std::vector<T> dd_tiled(const dd_params& p, thread_pool& pool, index_t tile, simd::isa isa) {
    check(p);
    std::vector<T> phi(static_cast<std::size_t>(p.n * p.n * p.n));
    dd_tiled_sweep<T>(p, pool, tile, isa, std::span<T>(phi));
    return phi;
}
template <class T>
void dd_tiled_into(const dd_params& p, thread_pool& pool, index_t tile, std::vector<T>& grid, simd::isa isa) {
    check(p);
    grid.resize(static_cast<std::size_t>(p.n * p.n * p.n));
    dd_tiled_sweep<T>(p, pool, tile, isa, std::span<T>(grid));
}
template <class T>
double sweep_on_cpu(const fmod_params* fp, const dd_params* dp, unsigned threads, index_t tile, std::span<T> grid) {
    thread_pool pool(threads);
    const auto t0 = std::chrono::steady_clock::now();
    if (fp) fmod_tiled_sweep<T>(*fp, pool, tile, simd::isa::avx512bw, grid);
    else dd_tiled_sweep<T>(*dp, pool, tile, simd::isa::avx512bw, grid);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

memory_need host_memory(index_t n, int value_bytes, bool held_twice, int dd_angles) {
    const double value = value_bytes, grids = held_twice ? 2 : 1, nn = static_cast<double>(n);
    const std::string side = std::to_string(n);
    return {nn * nn * nn * value * grids + 3.0 * nn * nn * dd_angles * value,
            "--n " + side + " is a " + side + " x " + side + " x " + side + " grid of " +
                (value_bytes == 4 ? "float32" : "float64") + (held_twice ? ", held twice for -o" : "") +
                (dd_angles > 0 ? ", with the angular fluxes of its faces" : ""),
            "use a smaller --n" + std::string(value_bytes == 8 ? " or --precision single" : "")};
}
template <class T>
double checksum(const std::vector<T>& grid) {
    double s = 0;
    for (const T v : grid) s += double(v);
    return s;
}

template std::vector<float> fmod_naive<float>(const fmod_params&);
template std::vector<double> fmod_naive<double>(const fmod_params&);
template std::vector<float> fmod_tiled<float>(const fmod_params&, thread_pool&, index_t);
template std::vector<double> fmod_tiled<double>(const fmod_params&, thread_pool&, index_t);
template std::vector<float> fmod_tiled<float>(const fmod_params&, thread_pool&, index_t, simd::isa);
template std::vector<double> fmod_tiled<double>(const fmod_params&, thread_pool&, index_t, simd::isa);
template std::vector<float> dd_naive<float>(const dd_params&);
template std::vector<double> dd_naive<double>(const dd_params&);
template std::vector<float> dd_tiled<float>(const dd_params&, thread_pool&, index_t);
template std::vector<double> dd_tiled<double>(const dd_params&, thread_pool&, index_t);
template std::vector<float> dd_tiled<float>(const dd_params&, thread_pool&, index_t, simd::isa);
template std::vector<double> dd_tiled<double>(const dd_params&, thread_pool&, index_t, simd::isa);
template void fmod_tiled_into<float>(const fmod_params&, thread_pool&, index_t, std::vector<float>&, simd::isa);
template void fmod_tiled_into<double>(const fmod_params&, thread_pool&, index_t, std::vector<double>&, simd::isa);
template void fmod_tiled_into<float>(const fmod_params&, thread_pool&, index_t, std::span<float>, simd::isa);
template void fmod_tiled_into<double>(const fmod_params&, thread_pool&, index_t, std::span<double>, simd::isa);
template void dd_tiled_into<float>(const dd_params&, thread_pool&, index_t, std::vector<float>&, simd::isa);
template void dd_tiled_into<double>(const dd_params&, thread_pool&, index_t, std::vector<double>&, simd::isa);
template float exact_fmod<float>(float, float);
template double exact_fmod<double>(double, double);
template bool exact_fmod_array<float>(const float*, float*, std::size_t, float, simd::isa);
template bool exact_fmod_array<double>(const double*, double*, std::size_t, double, simd::isa);
template float fmod_chain<float>(float, float, std::size_t, float, bool, simd::isa);
template double fmod_chain<double>(double, double, std::size_t, double, bool, simd::isa);
template double sweep_on_cpu<float>(const fmod_params*, const dd_params*, unsigned, index_t, std::span<float>);
template double sweep_on_cpu<double>(const fmod_params*, const dd_params*, unsigned, index_t, std::span<double>);
template double checksum<float>(const std::vector<float>&);
template double checksum<double>(const std::vector<double>&);

}  // namespace swgpu::sweep3d
