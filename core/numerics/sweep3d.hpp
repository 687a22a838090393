// The 3-D wavefront sweep (Pennycook et al., the demonstrator of a 3-D wavefront; issue 17), and the
// diamond-difference discrete-ordinates sweep of one octant (the kernel of Sweep3D, SNAP and Kripke).
//
// fmod sweep. An N x N x N grid, A[i][j][k] initially ((i + 2j + 3k) mod 10) / 10, swept from (0, 0, 0): each point
// does L times  r = fmod(((r + A[i-1][j][k]) + A[i][j-1][k]) + A[i][j][k-1], C)  with its three upstream neighbours'
// final values (0 outside the grid). The additions are in that fixed order and fmod is exact, so every schedule that
// respects the dependences gives the same bits, on the CPU and the GPU.
//
// The pair (fmod, +) is outside Theorem 1 (core/engine/operator_pair.hpp, fmod_plus: not associative), so the compensation
// schedules, which re-associate a row into a scan, do not accept it; the sweep runs on dependency-preserving
// schedules only: lexicographic (the oracle), 3-D tiles in wavefront order on threads (CPU; inside a tile a wavefront
// of lanes in vector registers, core/numerics/sweep3d_kernel.hpp), hyperplanes i + j + k = t on the GPU
// (gpu/numerics/sweep3d.cu). The CPU kernels take the remainder with an exact inline fmod (exact_fmod below), which
// gives the library's bits.
//
// Diamond difference, one octant, A angles (direction cosines mu, eta, xi > 0, equal weights 1/A), unit cells,
// total cross-section sigma and a uniform source q: for each angle and cell, with incoming face fluxes from the
// upstream cells (0 on the inflow boundary),
//   psi = (q + cx psi_x + cy psi_y + cz psi_z) / (sigma + cx + cy + cz),  cx = 2 mu, cy = 2 eta, cz = 2 xi,
//   outgoing faces 2 psi - psi_in,
// and the scalar flux phi[i][j][k] = sum over angles (in order) of psi / A. Multiplications and additions are each
// rounded (no fused multiply-add on the GPU), so the GPU gives the CPU's bits here too.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/align/simd/isa.hpp"
#include "core/host_device.hpp"
#include "core/memory_need.hpp"
#include "core/numerics/rounded.hpp"
#include "core/thread_pool.hpp"

namespace swgpu::sweep3d {

using index_t = std::int64_t;

struct fmod_params {
    index_t n = 0;
    int loops = 1;
    double c = 1.0;
};

struct dd_params {
    index_t n = 0;
    int angles = 8;
    double sigma = 1.0, source = 1.0;
};

// Checks a problem before any work; usage_error (exit 2) naming the option.
void check(const fmod_params& p);
void check(const dd_params& p);

template <class T>
SWGPU_HD T initial_value(index_t i, index_t j, index_t k) {
    return T((i + 2 * j + 3 * k) % 10) / T(10);
}

using swgpu::add_rn;
using swgpu::mul_rn;

template <class T>
SWGPU_HD T fmod_of(T x, T c) {
    if constexpr (sizeof(T) == 4) return ::fmodf(x, c);
    else return ::fmod(x, c);
}

// One point of the fmod sweep: its initial value r, its neighbours' final values.
template <class T>
SWGPU_HD T fmod_point(T r, T top, T north, T west, T c, int loops) {
    for (int l = 0; l < loops; ++l) r = fmod_of(add_rn(add_rn(add_rn(r, top), north), west), c);
    return r;
}

// Direction cosines of angle a of A (positive, normalised, distinct for small A).
struct direction {
    double mu, eta, xi;
};
direction angle(int a, int angles);

// The face coefficients of one angle, in T.
template <class T>
struct dd_angle {
    T cx, cy, cz, denominator;
};
template <class T>
dd_angle<T> dd_coefficients(const dd_params& p, int a) {
    const direction d = angle(a, p.angles);
    dd_angle<T> c{T(2 * d.mu), T(2 * d.eta), T(2 * d.xi), T(0)};
    c.denominator = add_rn(add_rn(add_rn(T(p.sigma), c.cx), c.cy), c.cz);
    return c;
}

// One cell and angle of the diamond-difference sweep: psi from the incoming faces; the outgoing faces replace them.
template <class T>
SWGPU_HD T dd_cell(const dd_angle<T>& c, T source, T& in_x, T& in_y, T& in_z) {
    const T numerator = add_rn(add_rn(add_rn(source, mul_rn(c.cx, in_x)), mul_rn(c.cy, in_y)), mul_rn(c.cz, in_z));
    const T psi = numerator / c.denominator;
    const T two_psi = add_rn(psi, psi);
    in_x = add_rn(two_psi, -in_x);
    in_y = add_rn(two_psi, -in_y);
    in_z = add_rn(two_psi, -in_z);
    return psi;
}

// The grids, row-major [i][j][k], N^3 values. naive: the lexicographic triple loop with the library's fmod and the
// faces per angle (the oracles). tiled: 3-D tiles of edge `tile` in wavefront order on the pool, each tile by the CPU
// kernel of the given instruction set (default: the best this CPU runs, kernel_isas().back()); the same bits.
template <class T>
std::vector<T> fmod_naive(const fmod_params& p);
template <class T>
std::vector<T> fmod_tiled(const fmod_params& p, thread_pool& pool, index_t tile = 16);
template <class T>
std::vector<T> fmod_tiled(const fmod_params& p, thread_pool& pool, index_t tile, simd::isa isa);
template <class T>
std::vector<T> dd_naive(const dd_params& p);
template <class T>
std::vector<T> dd_tiled(const dd_params& p, thread_pool& pool, index_t tile = 16);
template <class T>
std::vector<T> dd_tiled(const dd_params& p, thread_pool& pool, index_t tile, simd::isa isa);
// The tiled sweeps into a grid of N^3 values the caller has allocated (resized if not; every value is overwritten), so
// that a timing can leave the allocation and first touch of the grid out, as the GPU's does.
template <class T>
void fmod_tiled_into(const fmod_params& p, thread_pool& pool, index_t tile, std::vector<T>& grid,
                     simd::isa isa = simd::isa::avx512bw);
template <class T>
void dd_tiled_into(const dd_params& p, thread_pool& pool, index_t tile, std::vector<T>& grid,
                   simd::isa isa = simd::isa::avx512bw);
// The tiled fmod sweep into memory the caller owns, exactly N^3 values (the library's result array: the grid is held
// once). Long sweeps stop between waves of tiles when a stop is requested (core/cancel.hpp).
template <class T>
void fmod_tiled_into(const fmod_params& p, thread_pool& pool, index_t tile, std::span<T> grid,
                     simd::isa isa = simd::isa::avx512bw);

// A sweep on the CPU as `swgpu sweep3d` and the library run it: the fmod kernel with `fp`, else the dd kernel with
// `dp`, in tiles of edge `tile` on `threads` threads (0: one per hardware thread), into `grid` (N^3 values the caller
// has allocated, and touched where the time is to leave that out, as the GPU's time does). Returns the seconds of the
// sweep alone (the threads are started before the clock starts).
template <class T>
double sweep_on_cpu(const fmod_params* fp, const dd_params* dp, unsigned threads, index_t tile, std::span<T> grid);

// The memory the host holds for a sweep of N^3 values of `value_bytes` (4: float32, 8: float64) at its peak, as
// `swgpu sweep3d` names it: the grid (on the GPU its copy back), with `held_twice` a second copy for -o, and for the dd
// kernel (`dd_angles` > 0) the angular fluxes on three faces of every cell plane.
memory_need host_memory(index_t n, int value_bytes, bool held_twice, int dd_angles);

// The instruction sets the CPU kernels are compiled for and this CPU runs, ascending: portable, then avx2 (AVX2 with
// FMA) and avx512bw where the CPU has them. Another isa passed to the sweeps means the best of these below it.
std::vector<simd::isa> kernel_isas();

// fmod(x, c) with the library's bits, by the exact inline method of the CPU kernels (core/numerics/sweep3d_kernel.hpp:
// a quotient from the reciprocal, one correction, a fused multiply-add) where it applies and the library elsewhere.
// exact_fmod_array does count values with the kernel of an instruction set (tests, the cost benchmark) and says
// whether any went to the library; fmod_chain does x = fmod(x + step, c) count times and returns x (inline: true,
// the inline method; false, the library).
template <class T>
T exact_fmod(T x, T c);
template <class T>
bool exact_fmod_array(const T* x, T* r, std::size_t count, T c, simd::isa isa);
template <class T>
T fmod_chain(T x, T step, std::size_t count, T c, bool inline_fmod, simd::isa isa);

// Sum of the grid in index order, in double.
template <class T>
double checksum(const std::vector<T>& grid);

}  // namespace swgpu::sweep3d
