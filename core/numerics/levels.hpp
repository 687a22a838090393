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

// The bodies f of a generic loop, over the k values read, v_0..v_{k-1} (k >= 0), left to right, every operation
// rounded on its own (no fused multiply-add on any backend):
//   sum:  v_0 + v_1 + ... + v_{k-1} + 1            (1 for k = 0)
//   max:  max(v_0, ..., v_{k-1}) + 1               (1 for k = 0)
//   fmod: fmod(v_0 + ... + v_{k-1} + 1, 1021)      (a bounded accumulator, the body of the randAcc benchmarks)
//   wsum: c_0·v_0 + c_1·v_1 + ... + c_{k-1}·v_{k-1}   (0 for k = 0), one coefficient per read position: a stencil
//         (2dconv's 3x3 convolution, fdtd-2d's updates)
//   dot:  β·v_0 + (α·v_1)·v_2 + (α·v_3)·v_4 + ... + (α·v_{k-2})·v_{k-1}, k odd, coefficients (α, β): a dot product
//         accumulated onto the written element (gemm's C[i][j] = β·C[i][j] + Σ_k α·A[i][k]·B[k][j]; mvt with α = β = 1)
// The +1 of sum, max and fmod makes every write change the array, so a wrong order shows in the result. Every body
// is an exact function of its inputs on every backend: the same operations in the same order (fmod is exact in IEEE
// arithmetic), so the CPU, its threads and the GPU give the same bits as the sequential loop. Bodies take any number
// of reads on every backend: the values are folded one at a time as they are read.
enum class loop_body { sum, max, fmod, wsum, dot };
const char* body_name(loop_body b);
std::optional<loop_body> parse_body(std::string_view name);

// A body with its coefficients (wsum: k of them; dot: α and β; the others: none).
struct body_spec {
    loop_body kind = loop_body::sum;
    std::vector<double> coefficients;
};

// Empty when `b` can run a loop of k reads per iteration; else why not (the number of coefficients, or dot's odd k).
std::string body_mismatch(const body_spec& b, int k);

// a + b and a·b rounded once each, also where the compiler could contract them (nvcc fuses a·b + c by default).
SWGPU_HD double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}
SWGPU_HD double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

// f(v_0..v_{k-1}) with v_r = read(r), read once each in ascending r; c: the coefficients (body_mismatch empty).
template <class Read>
SWGPU_HD double apply_body(loop_body b, const double* c, int k, Read&& read) {
    double acc = 0.0;
    switch (b) {
        case loop_body::max:
            for (int r = 0; r < k; ++r) {
                const double v = read(r);
                acc = r == 0 || v > acc ? v : acc;
            }
            return add_rn(acc, 1.0);
        case loop_body::wsum:
            for (int r = 0; r < k; ++r) {
                const double t = mul_rn(c[r], read(r));
                acc = r == 0 ? t : add_rn(acc, t);
            }
            return acc;
        case loop_body::dot:
            if (k > 0) acc = mul_rn(c[1], read(0));
            for (int r = 1; r + 1 < k; r += 2) {
                const double x = mul_rn(c[0], read(r));
                acc = add_rn(acc, mul_rn(x, read(r + 1)));
            }
            return acc;
        case loop_body::sum:
        case loop_body::fmod:
            break;
    }
    for (int r = 0; r < k; ++r) acc = add_rn(acc, read(r));
    acc = add_rn(acc, 1.0);
    return b == loop_body::fmod ? ::fmod(acc, 1021.0) : acc;  // fmod is exact in IEEE arithmetic, host and device
}

// The same over values in an array.
SWGPU_HD double apply_body(loop_body b, const double* c, const double* v, int k) {
    return apply_body(b, c, k, [v](int r) { return v[r]; });
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
// `b` must fit the loop (body_mismatch(b, loop.reads_per_iteration) empty).
void run_sequential(const indirect_loop& loop, const body_spec& b, std::span<double> a);
void run_by_levels(const indirect_loop& loop, const body_spec& b, const level_sets& sets, std::span<double> a,
                   thread_pool& pool);

// The loop on the pool with its inspection pipelined with its execution (the paper's software pipelining, on the
// CPU): the iterations are cut into chunks, and a thread of its own finds the levels of chunk c+1 (as loop_levels
// does, carrying its state from chunk to chunk) while the pool runs chunk c level by level. An iteration depends only
// on earlier ones, so the chunks in order, each by its levels, respect every dependence: `a` ends as the sequential
// loop leaves it. Returns the levels (loop_levels'). per_chunk = 0: n / 4 iterations, at least 65536.
std::vector<level_t> run_pipelined(const indirect_loop& loop, const body_spec& b, std::span<double> a, thread_pool& pool,
                                   std::size_t per_chunk = 0);

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

// A general sparse matrix in CSR form as a caller holds it (0-based, 64-bit indices, any order within a row).
struct csr_view {
    std::int64_t rows = 0, cols = 0;
    std::span<const std::int64_t> indptr, indices;  // rows + 1; one per entry
    std::span<const double> data;                   // one per entry
};
// The triangle `part` of `m` (columns ascending, duplicates summed, entries outside the triangle dropped), checked as
// `swgpu levels` checks a Matrix Market file: input_error naming `where` for a matrix that is not square, empty, has
// 2^31 rows or more, inconsistent indptr, indices or data, a column out of range, a non-finite entry, or a triangle
// check_triangular refuses.
csr_matrix triangle_from_csr(const csr_view& m, triangle part, const std::string& where);

// The dependences of row i are its off-diagonal columns; the diagonal is the last entry of a lower row and the first
// of an upper one. check_triangular throws input_error naming `where` when a row has an entry outside the triangle or
// a missing or zero diagonal (1-based row in the message, as Matrix Market counts).
void check_triangular(const csr_matrix& t, triangle part, const std::string& where);

// Row levels: 1 + the highest level of a row it reads (level-set analysis), in one pass in dependence order.
std::vector<level_t> triangular_levels(const csr_matrix& t, triangle part);

// x = T^-1 b by the sequential substitution (rows in dependence order, one thread): the oracle of the solves.
void triangular_solve_sequential(const csr_matrix& t, triangle part, std::span<const double> b, std::span<double> x);

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
