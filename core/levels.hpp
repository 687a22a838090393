// Run-time levelization of loops with indirect accesses (the inspector-executor of Anantpur & Govindarajan,
// "Runtime dependence computation and execution of loops on heterogeneous systems", CGO 2013), and the sparse
// triangular solve it serves.
//
// A loop of n iterations over an array A of `locations` elements,
//
//   for i in 0..n-1:   A[W[i]] = f(A[R[i][0]], ..., A[R[i][k-1]])
//
// has dependences only its index arrays reveal. Iteration i depends on an earlier iteration j < i when
//   true   (read after write):  j is the last writer before i of a location i reads;
//   output (write after write): j is the last writer before i of W[i];
//   anti   (write after read):  j reads W[i] after the last write of W[i] before i (and j != i).
// An iteration never depends on itself (it reads before it writes). Its level is
//
//   level(i) = 1 + max{ level(j) : i depends on j },   max{} = 0,
//
// so level 1 holds the iterations that depend on nothing, and iterations of one level are independent: running the
// levels in order, each level's iterations in any order (or at once), gives exactly the sequential loop's array.
// The longest dependence chain has `levels` iterations. These direct edges give the same levels as every conflicting
// pair would (earlier writers and readers of a location are ordered before its last writer by the same edges).
//
// The sparse triangular solve T x = b is such a loop: row i writes x[i] and reads x[j] for every off-diagonal
// T[i][j] != 0 (j < i for a lower, j > i for an upper triangle, whose rows run from the last to the first):
//
//   x[i] = (b[i] - Σ_j T[i][j] x[j]) / T[i][i],   the sum taken in ascending column order, one rounding per step.
//
// Every backend (the sequential loop, the levels on threads, the GPU) computes each row with exactly these
// operations in this order, so x is the same bit for bit everywhere (no fused multiply-add on either side).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/host_device.hpp"
#include "core/thread_pool.hpp"

namespace swgpu::levels {

using level_t = std::int32_t;

// Iterations grouped by level: those of level l (1-based) are order[offsets[l-1] .. offsets[l]), ascending.
struct level_sets {
    std::vector<level_t> level;         // per iteration, >= 1
    std::vector<std::int64_t> offsets;  // levels + 1 entries, offsets[0] = 0
    std::vector<std::int32_t> order;    // iterations sorted by (level, iteration)

    level_t count() const { return offsets.empty() ? 0 : static_cast<level_t>(offsets.size() - 1); }
    std::int64_t width(level_t l) const { return offsets[static_cast<std::size_t>(l)] - offsets[static_cast<std::size_t>(l) - 1]; }
    std::int64_t max_width() const;
};

// Counting sort of iterations by level (levels must be >= 1).
level_sets group_by_level(std::vector<level_t> level);

// ---- generic indirect loops ----------------------------------------------------------------------------------------

// The bodies f of a generic loop, over the k values read, v_0..v_{k-1} (k >= 0), left to right:
//   sum:  v_0 + v_1 + ... + v_{k-1} + 1            (1 for k = 0)
//   max:  max(v_0, ..., v_{k-1}) + 1               (1 for k = 0)
//   fmod: fmod(v_0 + ... + v_{k-1} + 1, 1021)      (the paper's randAcc body: a bounded accumulator)
// The +1 makes every write change the array, so a wrong order shows in the result. All three are exact functions of
// their inputs on every backend (additions in a fixed order, no multiply).
enum class loop_body { sum, max, fmod };
const char* body_name(loop_body b);
std::optional<loop_body> parse_body(std::string_view name);

SWGPU_HD double apply_body(loop_body b, const double* v, int k) {
    const bool is_max = b == loop_body::max;
    double acc = is_max && k > 0 ? v[0] : 0.0;
    for (int r = is_max && k > 0 ? 1 : 0; r < k; ++r) acc = is_max ? (v[r] > acc ? v[r] : acc) : acc + v[r];
    acc = acc + 1.0;
    return b == loop_body::fmod ? ::fmod(acc, 1021.0) : acc;  // fmod is exact in IEEE arithmetic, host and device
}

// s - a·b with two roundings everywhere: nvcc would otherwise fuse it into one FMA on the device.
SWGPU_HD double mul_sub(double s, double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dsub_rn(s, __dmul_rn(a, b));
#else
    return s - a * b;
#endif
}

struct indirect_loop {
    std::int64_t locations = 0;        // A has this many elements
    std::vector<std::int64_t> writes;  // W[i]
    std::vector<std::int64_t> reads;   // R[i][r] at i * reads_per_iteration + r
    int reads_per_iteration = 0;
    std::int64_t iterations() const { return static_cast<std::int64_t>(writes.size()); }
};

// input_error naming `where` for an index outside [0, locations), reads that are not iterations x k, or more
// iterations or locations than 2^31 - 1.
void check_loop(const indirect_loop& loop, const std::string& where);

// The inspector, sequentially: per location the level of its last writer and the highest level of its readers since;
// O(n·(k+1)) time, O(locations) memory.
std::vector<level_t> loop_levels(const indirect_loop& loop);

// The sequential loop (the oracle), and the executor: levels in order, each level's iterations on the pool.
void run_sequential(const indirect_loop& loop, loop_body b, std::span<double> a);
void run_by_levels(const indirect_loop& loop, loop_body b, const level_sets& sets, std::span<double> a, thread_pool& pool);

// ---- sparse triangular solves -------------------------------------------------------------------------------------

enum class triangle { lower, upper };

// A square sparse matrix in CSR form, columns ascending within a row.
struct csr_matrix {
    std::int64_t rows = 0;
    std::vector<std::int64_t> row_ptr;  // rows + 1
    std::vector<std::int32_t> col;
    std::vector<double> val;
    std::int64_t nonzeros() const { return static_cast<std::int64_t>(col.size()); }
};

// The dependences of row i are its off-diagonal columns; the diagonal is the last entry of a lower row and the first
// of an upper one. check_triangular throws input_error naming `where` when a row has an entry outside the triangle or
// a missing or zero diagonal (1-based row in the message, as Matrix Market counts).
void check_triangular(const csr_matrix& t, triangle part, const std::string& where);

// Row levels: 1 + the highest level of a row it reads (level-set analysis), in one pass in dependence order.
std::vector<level_t> triangular_levels(const csr_matrix& t, triangle part);

// x = T^-1 b by levels on the pool (rows of one level in chunks); the same bits as the sequential substitution.
void triangular_solve(const csr_matrix& t, triangle part, const level_sets& sets, std::span<const double> b,
                      std::span<double> x, thread_pool& pool);

// The one row update every backend performs (see the top of this file).
SWGPU_HD double solve_row(const std::int64_t* row_ptr, const std::int32_t* col, const double* val, const double* x,
                          double bi, std::int64_t i, bool upper) {
    std::int64_t k = row_ptr[i], end = row_ptr[i + 1];
    const std::int64_t diag = upper ? k++ : --end;
    double s = bi;
    for (; k < end; ++k) s = mul_sub(s, val[k], x[col[k]]);
    return s / val[diag];
}

}  // namespace swgpu::levels
