#include "core/numerics/sweep3d.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace swgpu::sweep3d {

namespace {

// 3-D tiles in wavefront order: wave d holds the tiles (ti, tj, tk) with ti + tj + tk == d, run in parallel on the
// pool; inside a tile, body(i0, i1, j0, j1, k0, k1) runs its cells lexicographically. A tile's upstream tiles are in
// earlier waves; the tiles of one wave differ in at least two tile coordinates, so the (j, k), (i, k) and (i, j)
// regions they own are disjoint.
template <class Body>
void tiled_waves(index_t n, index_t tile, thread_pool& pool, Body&& body) {
    tile = std::max<index_t>(1, tile);
    const index_t t = (n + tile - 1) / tile;
    std::vector<std::array<index_t, 3>> wave;
    for (index_t d = 0; d <= 3 * (t - 1); ++d) {
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

template <class T>
std::vector<T> fmod_sweep(const fmod_params& p, thread_pool* pool, index_t tile) {
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
    if (pool) tiled_waves(n, tile, *pool, block);
    else block(0, n, 0, n, 0, n);
    return a;
}

template <class T>
std::vector<T> dd_sweep(const dd_params& p, thread_pool* pool, index_t tile) {
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
    if (pool) tiled_waves(n, tile, *pool, block);
    else block(0, n, 0, n, 0, n);
    return phi;
}

}  // namespace

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
    return fmod_sweep<T>(p, nullptr, 0);
}
template <class T>
std::vector<T> fmod_tiled(const fmod_params& p, thread_pool& pool, index_t tile) {
    return fmod_sweep<T>(p, &pool, tile);
}
template <class T>
std::vector<T> dd_naive(const dd_params& p) {
    return dd_sweep<T>(p, nullptr, 0);
}
template <class T>
std::vector<T> dd_tiled(const dd_params& p, thread_pool& pool, index_t tile) {
    return dd_sweep<T>(p, &pool, tile);
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
template std::vector<float> dd_naive<float>(const dd_params&);
template std::vector<double> dd_naive<double>(const dd_params&);
template std::vector<float> dd_tiled<float>(const dd_params&, thread_pool&, index_t);
template std::vector<double> dd_tiled<double>(const dd_params&, thread_pool&, index_t);
template double checksum<float>(const std::vector<float>&);
template double checksum<double>(const std::vector<double>&);

}  // namespace swgpu::sweep3d
