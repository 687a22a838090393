// swgpu as a library, numerics: summed-area tables, integral histograms, sparse triangular solves, SOR and the 3-D
// sweep, each as its subcommand computes it (installed as <swgpu/numerics.hpp>; <swgpu/swgpu.hpp> includes it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stop_token>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common.hpp"

namespace swgpu {

// An n-dimensional array, C order (the last index fastest), of one element type, owning its elements.
enum class dtype { uint8, uint16, uint32, uint64, int8, int16, int32, int64, float32, float64 };

class array {
public:
    array() = default;
    array(dtype type, std::vector<std::int64_t> shape);  // zero-filled
    template <class T>
    static array zeros(std::vector<std::int64_t> shape) {
        return array(type_of<T>(), std::move(shape));
    }
    template <class T>
    T& at(const std::vector<std::int64_t>& index) {
        check<T>();
        return reinterpret_cast<T*>(bytes_.data())[offset(index)];
    }
    template <class T>
    const T& at(const std::vector<std::int64_t>& index) const {
        check<T>();
        return reinterpret_cast<const T*>(bytes_.data())[offset(index)];
    }
    dtype type() const { return type_; }
    const std::vector<std::int64_t>& shape() const { return shape_; }
    std::size_t size() const;  // elements
    void* data() { return bytes_.data(); }
    const void* data() const { return bytes_.data(); }

private:
    template <class T>
    static constexpr dtype type_of();
    template <class T>
    void check() const {
        if (type_of<T>() != type_) throw error(exit_code::bad_command_line, "array::at: the element type differs");
    }
    std::size_t offset(const std::vector<std::int64_t>& index) const;
    dtype type_ = dtype::uint8;
    std::vector<std::int64_t> shape_;
    std::vector<std::uint64_t> bytes_;  // 8-byte words: every element type aligned
};

template <class T>
constexpr dtype array::type_of() {
    if constexpr (std::is_same_v<T, std::uint8_t>) return dtype::uint8;
    else if constexpr (std::is_same_v<T, std::uint16_t>) return dtype::uint16;
    else if constexpr (std::is_same_v<T, std::uint32_t>) return dtype::uint32;
    else if constexpr (std::is_same_v<T, std::uint64_t>) return dtype::uint64;
    else if constexpr (std::is_same_v<T, std::int8_t>) return dtype::int8;
    else if constexpr (std::is_same_v<T, std::int16_t>) return dtype::int16;
    else if constexpr (std::is_same_v<T, std::int32_t>) return dtype::int32;
    else if constexpr (std::is_same_v<T, std::int64_t>) return dtype::int64;
    else if constexpr (std::is_same_v<T, float>) return dtype::float32;
    else if constexpr (std::is_same_v<T, double>) return dtype::float64;
    else static_assert(sizeof(T) == 0, "swgpu::array holds integers of 8 to 64 bits, float and double");
}

// The summed-area table of an image of shape (H, W) or (H, W, C), as `swgpu sat` computes it: S[i][j] is the sum over
// rows 0..i and columns 0..j, per channel; uint64 for unsigned inputs, int64 for signed ones, float64 for floating
// ones; exact for integers and byte-identical on every backend. A float image holding NaN or an infinity is refused
// (swgpu::error, bad input), as by the command.
// A request on `stop` (as on search_settings::stop in <swgpu/align.hpp>) ends this call and the other numerical calls
// below at their next check with swgpu::error of kind error_kind::interrupted (exit code 130).
array summed_area_table(const array& image, backend where = backend::automatic, std::stop_token stop = {});
// The table's element type for an image's: uint64 for unsigned integers, int64 for signed ones, float64 for floats.
dtype summed_area_table_type(dtype image);
// The same table for memory the caller owns (NumPy arrays): `image` holds the elements of `shape` ((H, W) or
// (H, W, C), C order) in `type`, read in place; `table` receives the table, summed_area_table_type(type) elements of
// the same shape. No host copy of the table is made.
void summed_area_table_into(dtype type, const std::vector<std::int64_t>& shape, const void* image, void* table,
                            backend where = backend::automatic);
// The memory the table of an image of `shape` takes with the call's copy of the image, refused before any is taken
// when more than is available (swgpu::error, out of memory, exit code 4, as `swgpu sat` refuses it): a face that
// allocates the table itself (NumPy) calls this first; summed_area_table does.
void check_summed_area_table(dtype type, const std::vector<std::int64_t>& shape);

// The integral histogram of a one-channel image of shape (H, W), as `swgpu ihist` computes it: uint32, shape
// (H, W, B), H[i][j][b] the pixels of bin b in rows 0..i and columns 0..j. Bins: with `edges` (B + 1 increasing values)
// bin b holds e_b <= v < e_{b+1}, the last also v == e_B (NumPy's histogram), values outside in no bin; without,
// 8-bit v -> v·B/256, 16-bit v -> v·B/65536, other types B equal bins over [min, max]. B in 1..65535; the same on
// every backend. A float image holding NaN or an infinity is refused (swgpu::error, bad input), as by the command.
array integral_histogram(const array& image, int bins, const std::vector<double>& edges = {},
                         backend where = backend::automatic, std::stop_token stop = {});
// The same for memory the caller owns (NumPy arrays): `image` (H, W) of `type` read in place, `out` receiving the
// H x W x B counts (B = bins, or edges.size() - 1 when bins is 0). No host copy of the histogram is made.
void integral_histogram_into(dtype type, const std::vector<std::int64_t>& shape, const void* image, int bins,
                             const std::vector<double>& edges, std::uint32_t* out, backend where = backend::automatic);
// The bins of that call (bad settings are swgpu::error), its memory refused as check_summed_area_table's is: returns
// B, the third extent of the result.
int check_integral_histogram(dtype type, const std::vector<std::int64_t>& shape, int bins,
                             const std::vector<double>& edges);

// ---- numerics: sparse triangular solves, SOR, the 3-D sweep ---------------------------------------------------------

// A sparse matrix in compressed sparse row form (SciPy's csr_matrix): row i holds the entries
// indices[indptr[i] .. indptr[i+1]) with values data[...], columns 0-based, in any order, duplicates summed.
struct csr_matrix {
    std::int64_t rows = 0, cols = 0;
    std::vector<std::int64_t> indptr;   // rows + 1
    std::vector<std::int64_t> indices;  // column of each entry
    std::vector<double> data;           // value of each entry
};

// x with T x = b, T the lower (lower = true) or upper triangle of `matrix`, diagonal included, as `swgpu levels
// --matrix ... [--upper]` solves it: entries outside the triangle are dropped, each row is
// x[i] = (b[i] - sum_j T[i][j] x[j]) / T[i][i] summed in ascending column order (the same bits on every backend).
// swgpu::error, bad input (exit code 1), for a matrix that is not square or is empty, an index out of range, a
// missing or zero diagonal entry, a value or b[i] that is NaN or infinite, or b of another length than the rows.
std::vector<double> triangular_solve(const csr_matrix& matrix, const std::vector<double>& b, bool lower = true,
                                     backend where = backend::automatic, std::stop_token stop = {});

// SOR for -lap u = f on an N x N grid (spacing 1 / (N - 1), Dirichlet values on the edges), as `swgpu sor` solves it
// (core/numerics/sor.hpp): method "lex", "redblack", "ssor" or "mlssor" (layers K); omega 0: the optimal
// 2 / (1 + sin(pi h)). The run stops when the relative residual ||b - A u|| / ||b|| is at most tol (converged),
// after `stagnation` sweeps without a 0.1 % fall of the smallest residual (stagnated; 0: never), or at the end of
// the iteration that reaches max_sweeps (counts are sweeps over the grid: an ssor iteration is 2, an mlssor one 2K).
struct sor_settings {
    std::string method = "lex";
    double omega = 0;
    double tol = 1e-8;
    int max_sweeps = 10000;
    int layers = 3;
    int stagnation = 1000;
    backend where = backend::automatic;
    std::stop_token stop;  // a request ends the solve between sweeps (error_kind::interrupted)
};
struct sor_result {
    std::vector<double> u;                // N x N, row-major, the boundary included
    std::vector<std::int64_t> sweeps;     // the history, one entry per iteration: sweeps done (2 per ssor iteration,
    std::vector<std::int64_t> iterations; //   2K per mlssor one), the iteration,
    std::vector<double> residuals;        //   the relative residual after it,
    std::vector<double> seconds;          //   and the time since the start of the solve
    bool converged = false;
    std::string reason;                   // "converged", "max_sweeps" or "stagnated" (the CLI exits 6 for the last two)
    double omega = 0;                     // the omega used
};
// f and boundary: N x N row-major (the boundary's interior is ignored), N >= 3, finite (swgpu::error, bad input);
// settings out of range: swgpu::error, bad settings. A run that does not converge is no error: see `converged`.
sor_result poisson_sor(std::int64_t n, const std::vector<double>& f, const std::vector<double>& boundary,
                       const sor_settings& settings = {});

// The fmod 3-D wavefront sweep of `swgpu sweep3d` (core/numerics/sweep3d.hpp): an (N, N, N) array, float32 or float64
// (`precision`), A[i][j][k] initially ((i + 2j + 3k) mod 10) / 10, each point doing `loops` times
// r = fmod(((r + A[i-1][j][k]) + A[i][j-1][k]) + A[i][j][k-1], c) with its neighbours' final values (0 outside).
// The same bits on every backend. N in 1..4096, loops >= 1, c > 0 (else swgpu::error, bad settings).
array sweep3d_fmod(std::int64_t n, int loops = 1, double c = 1.0, dtype precision = dtype::float64,
                   backend where = backend::automatic, std::stop_token stop = {});
// The same into memory the caller owns, N^3 values of `precision` (NumPy arrays: the grid is held once). Call
// check_sweep3d before taking that memory: it refuses bad settings (swgpu::error, bad settings) and a grid larger
// than the memory available (out of memory, exit code 4).
void sweep3d_fmod_into(std::int64_t n, int loops, double c, dtype precision, void* grid,
                       backend where = backend::automatic);
void check_sweep3d(std::int64_t n, int loops, double c, dtype precision);

}  // namespace swgpu
