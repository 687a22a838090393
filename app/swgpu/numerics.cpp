// The library face's numerical calls (app/swgpu/numerics.hpp): arrays in, the core's checks and solvers, the GPU
// where asked and usable.
#include "app/swgpu/numerics.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <tuple>
#include <string_view>

#include "app/swgpu/face.hpp"
#include "core/cancel.hpp"
#include "core/numerics/finite.hpp"
#include "core/numerics/levels.hpp"
#include "core/numerics/sat.hpp"
#include "core/numerics/sor.hpp"
#include "core/numerics/sweep3d.hpp"
#include "core/thread_pool.hpp"
#include "core/tuning.hpp"
#include "gpu/gpu.hpp"
#include "gpu/numerics/levels.hpp"
#include "gpu/numerics/sat.hpp"
#include "gpu/numerics/sor.hpp"
#include "gpu/numerics/sweep3d.hpp"
#include "io/memory.hpp"

namespace swgpu {

using detail::wants_gpu;

// ---- arrays and summed-area tables ----------------------------------------------------------------------------------

namespace {

// The face's dtype lists core's types (core/numerics/sat.hpp) in the same order.
static_assert(int(dtype::uint8) == int(sat::dtype::u8) && int(dtype::uint64) == int(sat::dtype::u64) &&
              int(dtype::int8) == int(sat::dtype::i8) && int(dtype::int64) == int(sat::dtype::i64) &&
              int(dtype::float32) == int(sat::dtype::f32) && int(dtype::float64) == int(sat::dtype::f64));
sat::dtype internal(dtype t) { return static_cast<sat::dtype>(static_cast<int>(t)); }
dtype external(sat::dtype t) { return static_cast<dtype>(static_cast<int>(t)); }
std::size_t element_bytes(dtype t) { return sat::size_of(internal(t)); }

}  // namespace

array::array(dtype type, std::vector<std::int64_t> shape) : type_(type), shape_(std::move(shape)) {
    for (const auto d : shape_)
        if (d < 0) throw usage_error("array: a negative extent");
    bytes_.assign((size() * element_bytes(type_) + 7) / 8, 0);
}

std::size_t array::size() const {
    std::size_t n = 1;
    for (const auto d : shape_) n *= static_cast<std::size_t>(d);
    return n;
}

std::size_t array::offset(const std::vector<std::int64_t>& index) const {
    if (index.size() != shape_.size())
        throw usage_error("array::at: " + std::to_string(index.size()) + " indices for " +
                          std::to_string(shape_.size()) + " dimensions");
    std::size_t at = 0;
    for (std::size_t k = 0; k < index.size(); ++k) {
        if (index[k] < 0 || index[k] >= shape_[k])
            throw usage_error("array::at: index " + std::to_string(index[k]) + " outside 0.." +
                              std::to_string(shape_[k] - 1) + " of dimension " + std::to_string(k));
        at = at * static_cast<std::size_t>(shape_[k]) + static_cast<std::size_t>(index[k]);
    }
    return at;
}

namespace {

// The image as the tables take it: one copy into the core's array (its checks and the CPU's bands read it there).
sat::array sat_input(dtype type, const std::vector<std::int64_t>& shape, const void* image) {
    if (shape.size() != 2 && shape.size() != 3)
        throw usage_error("summed_area_table: an image of shape (H, W) or (H, W, C), not of " +
                          std::to_string(shape.size()) + " dimensions");
    sat::array in = sat::array::uninitialized(internal(type), shape[0], shape[1], shape.size() == 3 ? shape[2] : 1);
    if (in.bytes() > 0) std::memcpy(in.raw(), image, in.bytes());
    sat::check_finite(in, "image");
    sat::check_table_fits(in, sat::table_type(in.type, sat::precision::automatic), "image");
    return in;
}

}  // namespace

dtype summed_area_table_type(dtype image) { return external(sat::table_type(internal(image), sat::precision::automatic)); }

void check_summed_area_table(dtype type, const std::vector<std::int64_t>& shape) {
    double elements = 1;
    for (const auto d : shape) elements *= static_cast<double>(std::max<std::int64_t>(d, 0));
    io::check_memory(sat::table_call_memory(elements, internal(type), internal(summed_area_table_type(type))));
}

array summed_area_table(const array& image, backend where, std::stop_token stop) {
    const detail::stop_scope stopping(std::move(stop));
    check_summed_area_table(image.type(), image.shape());
    array result(summed_area_table_type(image.type()), image.shape());
    summed_area_table_into(image.type(), image.shape(), image.data(), result.data(), where);
    return result;
}

void summed_area_table_into(dtype type, const std::vector<std::int64_t>& shape, const void* image, void* table,
                            backend where) {
    // 8- and 16-bit images on the GPU: read in place (no finite check to make; their sums fit below 2^48 pixels).
    if ((type == dtype::uint8 || type == dtype::uint16) && (shape.size() == 2 || shape.size() == 3) &&
        wants_gpu(where)) {
        const std::int64_t rows = shape[0], cols = shape[1], lanes = shape.size() == 3 ? shape[2] : 1;
        const double pixels = double(rows) * double(cols);
        if (rows > 0 && cols > 0 && lanes > 0 && pixels < std::ldexp(1.0, 48)) {
            gpu::small_integer_table_into(image, internal(type), rows, cols, lanes, table);
            return;
        }
    }
    const sat::array in = sat_input(type, shape, image);
    const sat::dtype table_type = sat::table_type(in.type, sat::precision::automatic);
    if (wants_gpu(where)) {
        gpu::summed_area_table_into(in, table_type, table);
    } else {
        thread_pool pool(0);
        sat::summed_area_table_into(in, table_type, table, pool);
    }
}

namespace {

// The binning of an integral histogram of an image of `shape`, checked as `swgpu ihist` checks it.
sat::binning histogram_binning(const std::vector<std::int64_t>& shape, int bins, const std::vector<double>& edges) {
    if (shape.size() != 2)
        throw usage_error("integral_histogram: a one-channel image of shape (H, W), not of " +
                          std::to_string(shape.size()) + " dimensions");
    const sat::binning binning = sat::binning_of(bins, edges);
    detail::as_library_call([&] { sat::check_binning(binning); });  // messages name the arguments
    sat::check_histogram_pixels(shape[0], shape[1], "image");
    return binning;
}

}  // namespace

int check_integral_histogram(dtype type, const std::vector<std::int64_t>& shape, int bins,
                             const std::vector<double>& edges) {
    const sat::binning binning = histogram_binning(shape, bins, edges);
    detail::as_library_call([&] {
        io::check_memory(sat::histogram_memory(shape[0], shape[1], binning.bins, true, int(element_bytes(type))));
    });
    return binning.bins;
}

array integral_histogram(const array& image, int bins, const std::vector<double>& edges, backend where,
                         std::stop_token stop) {
    const detail::stop_scope stopping(std::move(stop));
    const int b = check_integral_histogram(image.type(), image.shape(), bins, edges);
    array result(dtype::uint32, {image.shape()[0], image.shape()[1], static_cast<std::int64_t>(b)});
    integral_histogram_into(image.type(), image.shape(), image.data(), bins, edges,
                            static_cast<std::uint32_t*>(result.data()), where);
    return result;
}

void integral_histogram_into(dtype type, const std::vector<std::int64_t>& shape, const void* image, int bins,
                             const std::vector<double>& edges, std::uint32_t* out, backend where) {
    const sat::binning binning = histogram_binning(shape, bins, edges);
    sat::array in = sat::array::uninitialized(internal(type), shape[0], shape[1], 1);
    if (in.bytes() > 0) std::memcpy(in.raw(), image, in.bytes());
    sat::check_finite(in, "image");
    const auto bin = sat::bin_indices(in, binning);
    if (wants_gpu(where)) {
        gpu::integral_histogram_into(bin, in.rows, in.cols, binning.bins, out);
    } else {
        thread_pool pool(0);
        sat::integral_histogram_into(bin, in.rows, in.cols, binning.bins, pool, out);
    }
}

// ---- sparse triangular solves, SOR, the 3-D sweep ------------------------------------------------------------------

std::vector<double> triangular_solve(const csr_matrix& matrix, const std::vector<double>& b, bool lower,
                                     backend where, std::stop_token stop) {
    const detail::stop_scope stopping(std::move(stop));
    const levels::triangle part = lower ? levels::triangle::lower : levels::triangle::upper;
    const levels::csr_matrix t = levels::triangle_from_csr(
        {matrix.rows, matrix.cols, matrix.indptr, matrix.indices, matrix.data}, part, "triangular_solve");
    if (static_cast<std::int64_t>(b.size()) != t.rows)
        throw input_error("triangular_solve", "b has " + std::to_string(b.size()) + " elements; the matrix has " +
                                                  std::to_string(t.rows) + " rows");
    if (const numerics::nonfinite bad = numerics::find_nonfinite(std::span<const double>(b)); bad.count > 0)
        throw input_error("triangular_solve", "b " + numerics::nonfinite_message(bad, "element " + std::to_string(bad.first)));
    if (wants_gpu(where)) {
        gpu::triangular_solver solver(t, part, b);
        return solver.first_solution();
    }
    std::vector<double> x(b.size());
    thread_pool pool(0);
    const levels::level_sets sets = levels::group_by_level(levels::triangular_levels(t, part));
    levels::triangular_solve(t, part, sets, b, x, pool);
    return x;
}

sor_result poisson_sor(std::int64_t n, const std::vector<double>& f, const std::vector<double>& boundary,
                       const sor_settings& settings) {
    const detail::stop_scope stopping(settings.stop);
    if (n < 3) throw input_error("sor", "the grid needs at least 3 x 3 points (got " + std::to_string(n) + ")");
    if (n > (std::int64_t{1} << 20)) throw input_error("sor", "a grid of more than 2^20 x 2^20 points");
    // As `swgpu sor` counts them: about five float64 arrays of the grid at once (f, the initial and the current u,
    // h^2 f, the result).
    io::check_memory(sor::grid_memory(n, 5, "sor: n " + std::to_string(n), "use a smaller grid"));
    const sor::problem p = sor::from_arrays(n, f, boundary, "sor");
    const std::optional<double> omega = settings.omega == 0 ? std::nullopt : std::optional(settings.omega);
    sor::options o = detail::as_library_call([&] {
        return sor::options_of(settings.method, omega, n, settings.tol, settings.max_sweeps, settings.layers,
                               settings.stagnation);
    });
    detail::as_library_call([&] { sor::check(o); });
    sor::solution s;
    if (wants_gpu(settings.where)) {
        s = gpu::sor_solve(p, o);
    } else {
        thread_pool pool(0);
        s = sor::solve(p, o, pool);
    }
    sor_result r;
    r.u = std::move(s.u);
    const int per = sor::sweeps_per_iteration(o);
    for (const auto& e : s.history) {
        r.sweeps.push_back(static_cast<std::int64_t>(e.iteration) * per);
        r.iterations.push_back(e.iteration);
        r.residuals.push_back(e.residual);
        r.seconds.push_back(e.seconds);
    }
    r.converged = s.converged;
    r.reason = sor::reason_name(s.reason);
    r.omega = o.omega;
    return r;
}

array sweep3d_fmod(std::int64_t n, int loops, double c, dtype precision, backend where, std::stop_token stop) {
    const detail::stop_scope stopping(std::move(stop));
    check_sweep3d(n, loops, c, precision);
    array result(precision, {n, n, n});
    sweep3d_fmod_into(n, loops, c, precision, result.data(), where);
    return result;
}

void check_sweep3d(std::int64_t n, int loops, double c, dtype precision) {
    if (precision != dtype::float32 && precision != dtype::float64)
        throw usage_error("sweep3d: precision is float32 (single) or float64 (double)");
    detail::as_library_call([&] { sweep3d::check(sweep3d::fmod_params{n, loops, c}); });
    // The grid, refused before it is taken when it cannot fit (exit code 4), as the command line refuses it (a Python
    // call of sweep3d(1200) was killed by the kernel instead).
    detail::as_library_call(
        [&] { io::check_memory(sweep3d::host_memory(n, precision == dtype::float32 ? 4 : 8, false, 0)); });
}

void sweep3d_fmod_into(std::int64_t n, int loops, double c, dtype precision, void* grid, backend where) {
    if (precision != dtype::float32 && precision != dtype::float64)
        throw usage_error("sweep3d: precision is float32 (single) or float64 (double)");
    const sweep3d::fmod_params p{n, loops, c};
    detail::as_library_call([&] { sweep3d::check(p); });
    const bool gpu = wants_gpu(where);
    const auto fill = [&](auto zero) {
        using T = decltype(zero);
        const std::span<T> out(static_cast<T*>(grid), static_cast<std::size_t>(n * n * n));
        if (gpu) gpu::sweep3d_fmod_into<T>(p, out);
        else (void)sweep3d::sweep_on_cpu<T>(&p, nullptr, 0, 16, out);
    };
    if (precision == dtype::float32) fill(0.0f);
    else fill(0.0);
}

}  // namespace swgpu
