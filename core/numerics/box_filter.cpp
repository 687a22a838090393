// The box filter (docs/sat.md, "Box filter"): the mean of every (2R+1)² window under BORDER_REFLECT_101, by running
// window sums, separable as OpenCV computes them: per band of rows, the vertical window sum of every column is kept
// and moved down one row at a time (the row entering added, the row leaving subtracted), and each output row is the
// horizontal window sum of those column sums (direct for small radii, running for larger ones), divided by the area.
//
// Every sum is exact. Integers are summed in uint32, uint64 or 128-bit words (the narrowest that holds (A+1)·max|v|,
// A = (2R+1)², with wrap-around arithmetic whose final value is the exact one). Floats are summed as integers too: the
// values of an image are multiples of the smallest binary unit that occurs in it (2^(e_min - p + 1), e_min the least
// exponent of its nonzero values, p the precision), and bounded by 2^(e_max + 1), so x · 2^s with s = p - 1 - e_min
// is an exact integer of (e_max - e_min + p + 1) bits; window sums add log2(A+1) bits. When that fits 63 bits the sums
// are int64, else 127 bits; only an image whose nonzero magnitudes span more than about 2^(127 - p - log2 A) is
// rounded first, to multiples of 2^-s with s lowered until the sums fit (absolute error at most 2^-(s+1) per mean).
// From the exact sum S, the mean S · 2^-s / A is rounded once more: float32 through a double (relative error of the
// quotient 2^-52, then rounded to float: within 0.5 ulp + 2^-28 ulp of the exact mean), float64 through long double
// (64-bit significand: within 0.5 ulp + 2^-10 ulp). So both are within 1 ulp of the exact window mean.
// Integer outputs are the mean rounded to nearest (the area is odd: no ties), through a float or double reciprocal
// where its error is provably smaller than the distance 1/(2A) of every mean from a half-integer, else by integer
// division; the result lies between the input's minimum and maximum, so it never needs saturating.
#include "core/numerics/box_filter_kernel.hpp"

#include <algorithm>
#include <cstring>

#include "core/align/simd/isa.hpp"
#include "core/error.hpp"
#include "core/numerics/box_filter_isa.hpp"
#include "core/numerics/sat.hpp"

namespace swgpu::sat {

index_t reflect101(index_t p, index_t n) {
    if (n <= 1) return 0;
    const index_t period = 2 * (n - 1);
    p = p < 0 ? -p : p;
    p %= period;
    return p >= n ? period - p : p;
}

double box_filter_bytes(const array& in, index_t radius, unsigned threads) {
    // The output, and per thread the padded row of column sums and the row of window sums.
    const double row = (2 * static_cast<double>(in.cols) + 2 * static_cast<double>(radius)) * static_cast<double>(in.lanes) *
                           accumulator_bytes(in.type, radius) +
                       2 * static_cast<double>(radius) * sizeof(index_t);
    const double bands = std::max(1.0, std::min<double>(static_cast<double>(in.rows), threads));
    return static_cast<double>(in.bytes()) + bands * row;
}

memory_need box_filter_memory(const array& in, index_t radius, unsigned threads) {
    return {box_filter_bytes(in, radius, threads),
            "--box-filter " + std::to_string(radius) + " of a " + shape_of(in) + " " + name_of(in.type) +
                " image takes its output and, per thread, rows of " + std::to_string(in.cols + 2 * radius) +
                " window sums",
            "use a smaller image or radius"};
}

namespace {

// The engine the CPU runs (core/align/simd/isa.hpp), else the baseline copy; R >= 1.
void run_box_filter(const array& in, const box_output& out, index_t radius, thread_pool& pool) {
#if defined(SWGPU_X86_KERNELS)
    if (simd::cpu_supports(simd::isa::avx512bw)) box_filter_avx512(in, out, radius, pool);
    else if (simd::cpu_supports(simd::isa::avx2)) box_filter_avx2(in, out, radius, pool);
    else box_filter_kernel(in, out, radius, pool);
#else
    box_filter_kernel(in, out, radius, pool);
#endif
}

void check_box_filter(const array& in, index_t radius) {
    if (radius < 0) throw usage_error("--box-filter needs a radius of 0 or more");
    if (in.elements() == 0) throw input_error("", "the image is empty; nothing to filter");
}

}  // namespace

array box_filter(const array& in, index_t radius, thread_pool& pool) {
    check_box_filter(in, radius);
    array out = array::uninitialized(in.type, in.rows, in.cols, in.lanes);
    if (radius == 0) {  // the window is the pixel: the identity, exactly
        std::memcpy(out.raw(), in.raw(), in.bytes());
        return out;
    }
    run_box_filter(in, box_output{out.raw(), nullptr}, radius, pool);
    return out;
}

void box_filter_rows(const array& in, index_t radius, thread_pool& pool, const rows_sink& sink) {
    check_box_filter(in, radius);
    if (radius == 0) {  // the identity: the input's rows as they are
        sink(0, in.rows, in.raw());
        return;
    }
    run_box_filter(in, box_output{nullptr, &sink}, radius, pool);
}

}  // namespace swgpu::sat
