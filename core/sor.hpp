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
//   ssor       a lexicographic sweep, then one in reverse order (one SSOR iteration counts as one sweep here).
//   mlssor     the K-layer SSOR method of the K-layer paper: K lexicographic sweeps, then K in reverse order (one
//              iteration counts as one sweep here; `layers` = K).
// Residual: ||f - A u||_2 / ||f||_2 over the interior (absolute when f is 0), after every sweep; the run stops when
// it is at most tol, or after max_sweeps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/host_device.hpp"
#include "core/rounded.hpp"
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

struct options {
    method m = method::lex;
    double omega = 1.0;
    double tol = 1e-8;
    int max_sweeps = 10000;
    int layers = 3;  // K of mlssor
};
void check(const options& o);  // usage_error: omega outside (0, 2), tol not positive, max_sweeps or layers < 1

struct history_entry {
    int sweep = 0;
    double residual = 0;
    double seconds = 0;  // since the start of the solve
};
struct solution {
    std::vector<double> u;
    std::vector<history_entry> history;
    bool converged = false;
};

template <class T = double>
SWGPU_HD T point(T u, T up, T down, T left, T right, T h2f, T omega) {
    const T g = mul_rn(add_rn(add_rn(add_rn(add_rn(up, down), left), right), h2f), T(0.25));
    return add_rn(u, mul_rn(omega, add_rn(g, -u)));
}

// One sweep of a method on the CPU, in place (h2f = h^2 f, precomputed).
void sweep(method m, index_t n, std::vector<double>& u, const std::vector<double>& h2f, double omega, thread_pool& pool,
           int layers = 1);
// The relative residual of u: rows on the pool's threads, their sums added in row order (the same value for any
// number of threads).
double residual(const problem& p, const std::vector<double>& u, thread_pool& pool);
// h^2 f.
std::vector<double> scaled_rhs(const problem& p);

// Sweeps until converged or max_sweeps, on the CPU threads.
solution solve(const problem& p, const options& o, thread_pool& pool);

}  // namespace swgpu::sor
