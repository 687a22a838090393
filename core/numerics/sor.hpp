// SOR for the 2-D Poisson problem (issue 17; Hou et al. for SOR as a wavefront, the K-layer SSOR paper for the
// comparison of methods).
//
// Problem: -lap u = f on an N x N grid with spacing h = 1/(N-1), Dirichlet values on the four edges (taken from the
// boundary array; its interior is ignored), the 5-point discretisation
//   (4u[i][j] - u[i-1][j] - u[i+1][j] - u[i][j-1] - u[i][j+1]) / h^2 = f[i][j]   for 1 <= i, j <= N-2.
// One point's update, written once and used by every method and backend (rounded one operation at a time, so the
// GPU gives the CPU's bits):
//   g = ((((u[i-1][j] + u[i+1][j]) + u[i][j-1]) + u[i][j+1]) + h^2 f[i][j]) * 0.25,   u[i][j] += omega (g - u[i][j])
// Methods:
//   lex        SOR in lexicographic order (Gauss-Seidel for omega = 1): a wavefront loop. On the GPU its points are
//              updated anti-diagonal by anti-diagonal, which is the lexicographic result exactly.
//   redblack   the points with i + j even, then the odd ones: a different iteration (its own convergence), fully
//              parallel.
//   ssor       a lexicographic sweep, then one in reverse order: an iteration of 2 sweeps.
//   mlssor     the K-layer SSOR method of the K-layer paper: K lexicographic sweeps, then K in reverse order (an
//              iteration of 2K sweeps; `layers` = K). With subdomains (options::sub_rows x sub_cols), the
//              paper's parallel MLSSOR instead (its section IV; see `tile_span` below): a different iteration, whose
//              convergence depends on the subdomain size.
// Residual: ||b - A u||_2 / ||b||_2 over the interior, b the whole right-hand side of the interior's system (f plus the
// boundary values the stencil reaches, divided by h^2), as SciPy's and PETSc's relative tolerances have it; absolute
// only when b is 0 (then u = 0 is the solution). After every iteration (every sweep for lex and redblack, every 2 or 2K
// sweeps for ssor and mlssor); the run stops when it is at most tol (converged),
// when the smallest residual so far has not fallen by 0.1 % in `stagnation` sweeps (stagnated: a round-off floor
// above tol, or an iteration too slow to reach it), or after max_sweeps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/host_device.hpp"
#include "core/memory_need.hpp"
#include "core/numerics/rounded.hpp"
#include "core/thread_pool.hpp"

namespace swgpu::sor {

using index_t = std::int64_t;

enum class method { lex, redblack, ssor, mlssor };
method parse_method(const std::string& name);  // usage_error for others
const char* method_name(method m);

// f and the initial u (boundary values on the edges, 0 inside), both n x n row-major.
struct problem {
    index_t n = 0;
    std::vector<double> f, u;
};

// The model problem: f = 2 pi^2 sin(pi x) sin(pi y), zero boundary; its exact solution is sin(pi x) sin(pi y).
problem model_problem(index_t n);
double model_solution(index_t n, index_t i, index_t j);
// A problem from user arrays (f and boundary, n x n each): checks them (input_error naming `where`: not square,
// sizes differ, n < 3, a value not finite) and takes the boundary's edges.
problem from_arrays(index_t n, std::vector<double> f, const std::vector<double>& boundary, const std::string& where);

// The optimal omega of SOR for the model problem on this grid: 2 / (1 + sin(pi h)).
double optimal_omega(index_t n);

// The built-in problems (`--problem NAME --size N`), all with a known discrete solution:
//   model   the model problem above
//   rough   zero boundary, f = A w for w uniform in [0, 1) (a fixed seed): the discrete solution is w, and from
//           u = 0 the error is -w, so the iterates' errors are those of Laplace's equation with zero boundary started
//           from a random grid (the K-layer paper's setting, equation (2)); ||f - A u|| / ||f|| is then the residual
//           relative to the initial one. Mostly high frequencies: tens of sweeps reach 1e-3 (fewer as N grows).
//   signs   the same with w = +-1 at random: no mean, even rougher
//   blocks  w = +-1 at random on blocks of 8 x 8 points (from the grid's corner): rough at a coarser scale, so
//           slower to smooth out, still independent of N
problem builtin_problem(const std::string& name, index_t n);  // usage_error for an unknown name or n < 3
// The discrete solution of a built-in problem (the exact one for `model`), n x n with the boundary.
std::vector<double> builtin_solution(const std::string& name, index_t n);
const char* builtin_names();  // "model, rough, signs, blocks"

struct options {
    method m = method::lex;
    double omega = 1.0;
    double tol = 1e-8;
    int max_sweeps = 10000;  // sweeps over the grid (see sweeps_per_iteration): the run stops at the end of the
                             // iteration that reaches them
    int layers = 3;  // K of mlssor
    // mlssor: the paper's subdomains of sub_rows x sub_cols points (0 x 0: whole sweeps); each needs 2K <= it.
    index_t sub_rows = 0, sub_cols = 0;
    bool forward_only = false;  // mlssor: both halves of an iteration sweep forward (the paper's bracketed column)
    int stagnation = 1000;      // sweeps without a 0.1 % fall of the smallest residual that stop the run; 0: never
};
// Sweeps over the grid in one iteration of the method (the residual is checked after each iteration): 1 for lex and
// redblack (a red-black iteration updates every point once), 2 for ssor, 2K for mlssor (with subdomains too: each of
// its 2K layers updates every point once).
int sweeps_per_iteration(const options& o);
// usage_error: omega outside (0, 2), tol not positive, max_sweeps or layers < 1, stagnation < 0; subdomains for another method,
// subdomains smaller than 2K or given for one axis only, forward_only for another method.
void check(const options& o);
// "AxB" (A, B positive integers) as {A, B}; usage_error otherwise.
void parse_subdomain(const std::string& text, index_t& rows, index_t& cols);
// The options of a solve on an n x n grid from a face's settings: the method by name (parse_method), omega (none: the
// optimum for the grid, optimal_omega), tol, max_sweeps, layers and stagnation; not checked (check, once the face
// has set the rest).
options options_of(const std::string& method, std::optional<double> omega, index_t n, double tol, int max_sweeps,
                   int layers, int stagnation);
// mlssor's subdomains from `text` ("AxB") into `o`; unless the layers were given, K is the largest they allow (the
// paper's choice: min(A, B) / 2), a usage_error when that is not in 1 to 1000.
void set_subdomains(options& o, const std::string& text, bool layers_given);
// The threads of a run on the CPU: `threads`, but -t 0 (one per hardware thread) takes one thread for grids too small
// for more to gain, below the measured tuning value sor.cpu_one_thread_below (docs/sor.md).
unsigned cpu_threads(index_t n, unsigned threads);
// The memory of a run on an n x n grid that holds `arrays` float64 arrays of its size at once, as `swgpu sor` names
// it: "WHAT is a N x N grid, held in A float64 arrays of its size".
memory_need grid_memory(index_t n, int arrays, const std::string& what, const std::string& advice);

// One entry per iteration (solvers fill it positionally: {iteration, residual, seconds}); its sweeps are
// iteration * sweeps_per_iteration(o).
struct history_entry {
    int iteration = 0;
    double residual = 0;
    double seconds = 0;  // since the sweeping started (setup and copies to a device not counted)
};
// Why a solve stopped.
enum class stop_reason { converged, max_sweeps, stagnated };
const char* reason_name(stop_reason r);  // "converged", "max_sweeps", "stagnated"
struct solution {
    std::vector<double> u;
    std::vector<history_entry> history;
    bool converged = false;
    stop_reason reason = stop_reason::max_sweeps;
};

// The stopping test, fed each iteration's residual in order (every backend uses it): converged when r <= tol;
// stagnated when `stagnation` sweeps have passed since the smallest residual last fell by 0.1 % (or r is not a
// number); max_sweeps at the iteration that reaches o.max_sweeps sweeps. Returns true when the run stops at this
// iteration, with `reason` set.
struct stop_test {
    const options& o;
    double best = 0;
    int best_iteration = 0;
    stop_reason reason = stop_reason::max_sweeps;
    bool operator()(int iteration, double r);
};

template <class T = double>
SWGPU_HD T point(T u, T up, T down, T left, T right, T h2f, T omega) {
    const T g = mul_rn(add_rn(add_rn(add_rn(add_rn(up, down), left), right), h2f), T(0.25));
    return add_rn(u, mul_rn(omega, add_rn(g, -u)));
}

// The parallel MLSSOR of the K-layer paper (section IV), on the interior's coordinates x = 0 .. len-1 along each axis
// (grid index 1 + x). One iteration is a forward K-layer half, then a backward one (a second forward one with
// forward_only). In layer k (0 .. K-1) of a half, with drift d = k forward and d = K-1-k backward (the backward half
// retraces the forward one's subdomains: its layer k covers the forward layer K-1-k's points), subdomain s along an
// axis with size A covers
//   [sA + d, (s+1)A + d)   clipped to [0, len), and [0, A + d) for s = 0
// (the cutting planes (6) of the paper, moving by one point per layer; the first subdomain keeps the edge). Each
// subdomain is cut into two tiles along each axis by a plane that moves the other way (the paper's (8) with m = 2):
//   forward   T1 = the points below c = sA + A - 1 - d  (A - 1 - 2k points inside the grid, the paper's largest)
//   backward  T1 = the points at or above c = sA + 2K - 1 - d  (the mirror image: the backward half sweeps down)
// and T2 = the rest. A half runs four steps, (T1, T1), (T1, T2), (T2, T1), (T2, T2) by (row, column) tiles; in a
// step every subdomain runs its tile (in parallel: with 2K <= A, B no two tiles of a step touch a point that another
// writes), and a tile runs its K layers one after the other, each point by point in the half's lexicographic order
// (forward: rows and columns ascending; backward: both descending), in place, with the one-point update above. A
// point therefore reads the newest value in the grid, which is where the paper's iteration differs from the
// sequential one near the subdomains' edges. With one subdomain covering the grid (A, B >= N - 2) the tiles respect
// every dependence and the iteration is the whole-sweep MLSSOR, bit for bit.
struct span {
    index_t lo = 0, hi = 0;
    SWGPU_HD bool empty() const { return hi <= lo; }
};
// The points of subdomain s (size `size`) along one axis of `len` points, in layer k of a half, tile part 0 (T1) or
// 1 (T2).
SWGPU_HD span tile_span(index_t len, index_t size, int layers, index_t s, int k, int part, bool backward) {
    const index_t d = backward ? layers - 1 - k : k;
    const index_t start = s == 0 ? 0 : s * size + d;
    const index_t end = (s + 1) * size + d < len ? (s + 1) * size + d : len;
    if (start >= end) return {0, 0};
    const index_t cut = backward ? s * size + 2 * layers - 1 - d : s * size + size - 1 - d;
    const bool below = (part == 0) != backward;  // forward T1 and backward T2 lie below the cut
    if (below) return {start, cut < end ? cut : end};
    return {cut > start ? cut : start, end};
}
// How many subdomains an axis of len points has.
SWGPU_HD index_t subdomain_count(index_t len, index_t size) { return (len + size - 1) / size; }

// One tile of one step (row part pi, column part pj) of a half: its K layers, in place on the n x n grid u.
SWGPU_HD void mlssor_tile(index_t n, double* u, const double* h2f, double omega, int layers, index_t rows,
                          index_t cols, index_t si, index_t sj, int pi, int pj, bool backward) {
    const index_t len = n - 2;
    for (int k = 0; k < layers; ++k) {
        const span ri = tile_span(len, rows, layers, si, k, pi, backward);
        const span rj = tile_span(len, cols, layers, sj, k, pj, backward);
        if (ri.empty() || rj.empty()) continue;
        for (index_t t = 0; t < ri.hi - ri.lo; ++t) {
            const index_t x = backward ? ri.hi - 1 - t : ri.lo + t;
            double* row = u + (x + 1) * n + 1;  // row[y]: interior column y; row[-1] and row[len]: the boundary
            const double* up = row - n;
            const double* down = row + n;
            const double* f = h2f + (x + 1) * n + 1;
            if (!backward) {
                double left = row[rj.lo - 1], centre = row[rj.lo];
                for (index_t y = rj.lo; y < rj.hi; ++y) {
                    const double right = row[y + 1];
                    const double v = point(centre, up[y], down[y], left, right, f[y], omega);
                    row[y] = v;
                    left = v;
                    centre = right;
                }
            } else {
                double right = row[rj.hi], centre = row[rj.hi - 1];
                for (index_t y = rj.hi - 1; y >= rj.lo; --y) {
                    const double left = row[y - 1];
                    const double v = point(centre, up[y], down[y], left, right, f[y], omega);
                    row[y] = v;
                    right = v;
                    centre = left;
                }
            }
        }
    }
}

// One iteration of the parallel MLSSOR on the CPU (subdomain rows on the pool's threads), in place.
void mlssor_subdomain_sweep(index_t n, std::vector<double>& u, const std::vector<double>& h2f, double omega, int layers,
                            index_t rows, index_t cols, thread_pool& pool, bool forward_only = false);

// One lexicographic sweep on the CPU, in place, forward (rows and columns ascending) or backward (both descending),
// with the bits of the sequential sweep. The interior rows, in the sweep's order, are cut into strips of 8 (the last
// one shorter), strip b on thread b mod threads. A strip runs in steps: in step s its row k updates column s - 4k
// (interior columns 0 .. n-3 in the sweep's order; others skipped), so the rows' chains of dependent operations
// interleave on one core. Each point reads what the sequential sweep gives it: new values in the row before (updated
// 4 steps earlier in its strip, or by the strip before) and the column before (a step earlier), old values in the row
// after (4 steps later, or the strip after) and the column after (a step later). A strip runs its steps in chunks
// and publishes its step count after each (release); before steps [s0, s1) it waits (acquire) until the strip before
// has updated, in its last row, every column the chunk's first row reaches (those below min(s1, n - 2)): the chunk
// reads them new, and that strip has read the chunk's first row there (as its last row's row after) before the chunk
// overwrites it. No barrier between strips or chunks. tile > 0: strips of min(tile, 8) rows, chunks of tile steps;
// tile = 0: strips of 8 rows, chunks of (n - 2) / (4 threads) steps, 16 to 256.
void lexicographic_sweep(index_t n, std::vector<double>& u, const std::vector<double>& h2f, double omega,
                         thread_pool& pool, bool backward, index_t tile = 0);

// One sweep of a method on the CPU, in place (h2f = h^2 f, precomputed). lex, ssor and mlssor through
// lexicographic_sweep.
void sweep(method m, index_t n, std::vector<double>& u, const std::vector<double>& h2f, double omega, thread_pool& pool,
           int layers = 1);
// ||b||_2, b = f plus the boundary values next to each interior point over h^2 (the right-hand side of the system in
// the interior's unknowns); 1 when b is 0. The relative residual is ||f - A u|| / this (f - A u over the whole
// stencil is b - A u over the interior).
double residual_scale(const problem& p);
// The relative residual of u: rows on the pool's threads, their sums added in row order (the same value for any
// number of threads).
double residual(const problem& p, const std::vector<double>& u, thread_pool& pool);
// h^2 f.
std::vector<double> scaled_rhs(const problem& p);

// Sweeps until the stopping test stops the run (converged, stagnated or max_sweeps), on the CPU threads.
solution solve(const problem& p, const options& o, thread_pool& pool);

}  // namespace swgpu::sor
