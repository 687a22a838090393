// Summed-area tables and integral histograms (docs/engine.md; Hou et al., Sec. IV, SAT and IHist).
//
//   S[i][j] = I[i][j] + S[i-1][j] + S[i][j-1] - S[i-1][j-1],   S[-1][*] = S[*][-1] = 0
//
// so S[i][j] is the sum of I over rows 0..i and columns 0..j, inclusive (OpenCV's cv::integral without its extra
// leading row and column). Over the (+,+) pair the in-row map is x ↦ x + g with g = I[i][j] + S[i-1][j] - S[i-1][j-1]
// gathered from the finished row, a constant weight 0: a row is a plain prefix sum (Theorem 1, ∘ = ◇).
// An integral histogram is one such table per bin b with I = [bin(I[i][j]) == b]; its tables are stored interleaved,
// OUT[i][j][b], exactly like the channels of a colour image, so both are "tables of interleaved lanes".
//
// Arithmetic. Unsigned-integer inputs accumulate in uint64 and signed ones in int64: exact, and checked up front
// (a total that does not fit is an error, never a wrapped table). Floating inputs accumulate in double (float64
// tables) or in float (float32 tables, --type float32); every backend sums a row first and then down the columns, so
// |S - exact| <= (i + j + 2) · u · Σ|I| over the rectangle, u = 2^-53 or 2^-24. Integer tables are identical between
// backends, bit for bit.
//
// Layout everywhere: row-major, lanes (channels or bins) innermost: element (i, j, c) at (i·cols + j)·lanes + c.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/linear_map.hpp"
#include "core/engine/operator_pair.hpp"
#include "core/thread_pool.hpp"
#include "core/engine/wavefront.hpp"
#include "core/memory_need.hpp"

namespace swgpu::sat {

// Element types of arrays: NumPy's little-endian u1..u8, i1..i8, f4, f8.
enum class dtype : std::uint8_t { u8, u16, u32, u64, i8, i16, i32, i64, f32, f64 };

std::size_t size_of(dtype t);
const char* name_of(dtype t);  // "uint8", ..., "float64"
bool is_unsigned(dtype t);
bool is_signed(dtype t);
bool is_float(dtype t);

// Blocks of at least large_allocation bytes come from allocate_large: rounded up to and aligned on 2 MiB and marked
// for transparent huge pages (madvise MADV_HUGEPAGE, as NumPy does for its arrays), so that filling a 64 MB image
// takes 32 page faults rather than 16384 (reading a 4096² float32 .npy into such a block took 17 ms rather than
// 57-77 ms on the 2-core development machine, 2026-11-27). deallocate_large takes the same byte count back.
inline constexpr std::size_t large_allocation = std::size_t(4) << 20;
void* allocate_large(std::size_t bytes);
void deallocate_large(void* p, std::size_t bytes);

// An allocator that leaves value-initialised words uninitialised, so that an array its owner fills entirely is not
// zero-filled first (on one thread: for a 16384² uint64 table that took longer than computing it); large blocks on
// huge pages (allocate_large).
template <class T>
struct uninitialized_allocator : std::allocator<T> {
    template <class U>
    struct rebind {
        using other = uninitialized_allocator<U>;
    };
    T* allocate(std::size_t n) {
        if (n >= large_allocation / sizeof(T)) return static_cast<T*>(allocate_large(n * sizeof(T)));
        return std::allocator<T>::allocate(n);
    }
    void deallocate(T* p, std::size_t n) {
        if (n >= large_allocation / sizeof(T)) deallocate_large(p, n * sizeof(T));
        else std::allocator<T>::deallocate(p, n);
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        if constexpr (sizeof...(Args) == 0) ::new (static_cast<void*>(p)) U;
        else ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

// An H x W x C array, row-major with the C lanes innermost, owning its elements (aligned for any dtype).
struct array {
    dtype type = dtype::u8;
    index_t rows = 0, cols = 0, lanes = 1;
    // Read from a 1-D (W,) .npy (rows = lanes = 1): .npy outputs derived from it leave the rows out again, (W,) or
    // (W, C), as NumPy would (io::write_npy).
    bool one_dimensional = false;
    std::vector<std::uint64_t, uninitialized_allocator<std::uint64_t>> storage;  // 8-byte words: every dtype aligned

    array() = default;
    array(dtype t, index_t r, index_t c, index_t l);  // zero-filled
    // Elements left uninitialised, for a caller that writes every one of them.
    static array uninitialized(dtype t, index_t r, index_t c, index_t l);
    std::size_t elements() const { return static_cast<std::size_t>(rows * cols * lanes); }
    std::size_t bytes() const { return elements() * size_of(type); }
    template <class T>
    T* data() { return reinterpret_cast<T*>(storage.data()); }
    template <class T>
    const T* data() const { return reinterpret_cast<const T*>(storage.data()); }
    void* raw() { return storage.data(); }
    const void* raw() const { return storage.data(); }
    double value(std::size_t k) const;  // element k as a double (for messages and floating paths)
};

// ---- summed-area tables -------------------------------------------------------------------------------------------

enum class precision { automatic, float32, float64 };  // automatic: uint64 / int64 / float64 by the input's kind

// The table's dtype for an input dtype.
dtype table_type(dtype input, precision p);

// Throws input_error naming `where` when some S[i][j] of an integer table would not fit its type (only possible for
// 32- and 64-bit inputs or more than 2^40 pixels), or when the array is empty.
void check_table_fits(const array& in, dtype table, const std::string& where);

// Throws input_error naming `where` when a floating array holds NaN or an infinity (core/numerics/finite.hpp): the
// count, and the first one's position ("row i, column j[, channel c]", or "index k" for a one-row array, as a (W,)
// .npy is). Integer arrays pass without a look. `advice` ends the message.
void check_finite(const array& a, const std::string& where,
                  const std::string& advice = "replace them with finite values");

// The bytes a table of `in` in dtype `table` takes.
double table_bytes(const array& in, dtype table);
// The most bytes box_filter(in, radius) on `threads` threads holds at once besides `in`: the output, and per thread
// a row of column sums padded by the radius on both sides and a row of window sums, in the accumulation type (4, 8 or
// 16 bytes).
double box_filter_bytes(const array& in, index_t radius, unsigned threads);
// The same as `swgpu sat` names them for io::check_memory: a table of `in` in `table`, box_filter(in, radius) on
// `threads` threads, and the exact rectangle sums of a float image (exact_rect_sums, below).
memory_need table_memory(const array& in, dtype table);
memory_need box_filter_memory(const array& in, index_t radius, unsigned threads);
memory_need exact_rect_sums_memory(const array& in);
// The library's call for an image of `elements` values of `image`: its copy of the image and the table in `table`.
memory_need table_call_memory(double elements, dtype image, dtype table);
// "H x W", or "H x W x C" for C > 1 channels.
std::string shape_of(const array& a);

// The wavefront problem of one lane of the table (core/engine/wavefront.hpp): run by run_naive/run_rowscan/run_tiled.
// In is the input element, T the table element; `out` receives S (row-major, `lanes` apart).
template <class In, class T>
struct sat_problem {
    using op = plus_plus<T>;
    using cell = T;
    using gathered = T;
    static constexpr bool constant_weight = true;

    const In* in = nullptr;
    T* out = nullptr;
    index_t h = 0, w = 0, lanes = 1, lane = 0;

    index_t rows() const { return h; }
    index_t cols() const { return w; }
    T top(index_t) const { return T(0); }
    T left(index_t) const { return T(0); }
    T incoming(index_t) const { return T(0); }
    T weight(index_t) const { return T(0); }
    // g = I[i][j] + S[i-1][j] - S[i-1][j-1]; the value entering cell j is S[i][j-1].
    T gather(index_t i, index_t j, T up, T diag) const {
        return T(T(static_cast<T>(in[(i * w + j) * lanes + lane]) + up) - diag);
    }
    linear_map<op> carry(index_t, index_t, T g) const { return {T(0), g}; }
    T finish(index_t i, index_t j, T g, T x) {
        const T s = T(x + g);
        out[(i * w + j) * lanes + lane] = s;
        return s;
    }
};

// The oracle: the recurrence above in lexicographic order (run_naive over sat_problem), one lane after another.
array summed_area_table_naive(const array& in, dtype table);

// The CPU backend: bands of rows on the pool. Each band first sums its columns (one read of the input), a short
// sequential pass turns those sums into the table row just above every band, then every band writes its rows in one
// pass (each row = the row above + the running row prefix). Input read twice, table written once.
array summed_area_table(const array& in, dtype table, thread_pool& pool);
// The same into `out`, which is reused when it already has the table's type and shape (else it is made so): for a
// caller computing many tables of one shape, which then skips allocating and first touching a fresh output.
void summed_area_table_into(const array& in, dtype table, array& out, thread_pool& pool);
// The same into memory the caller owns (in.elements() values of type `table`: the library's NumPy result).
void summed_area_table_into(const array& in, dtype table, void* out, thread_pool& pool);

// ---- integral histograms ------------------------------------------------------------------------------------------

// How values map to bins. Default (no edges): 8-bit inputs v -> v·B/256, 16-bit v -> v·B/65536 (integer division);
// other dtypes: B equal-width bins over [min, max] of the data, the maximum in the last bin. With edges e_0 < ... < e_B:
// bin b holds e_b <= v < e_{b+1}, the last bin also v == e_B (NumPy's histogram); values outside are in no bin.
struct binning {
    int bins = 0;
    std::vector<double> edges;  // empty or bins + 1 increasing values
};

// `bins` bins, or with none (0) and edges given, one fewer than the edges (--bins' default); not checked.
binning binning_of(int bins, std::vector<double> edges);
// Validates a binning (bins in 1..65535, edges increasing and bins + 1 of them); throws usage_error.
void check_binning(const binning& b);
// An integral histogram's image has fewer than 2^32 pixels (its uint32 counts cannot overflow); input_error naming
// `where` otherwise.
void check_histogram_pixels(index_t rows, index_t cols, const std::string& where);
// The memory of an integral histogram of a rows x cols image with `bins` bins, as `swgpu ihist` names it: the bin of
// every pixel (2 bytes), the uint32 table where it is held on the host (`table`), and a caller's copy of the image of
// `copy_bytes` a pixel (the library's calls).
memory_need histogram_memory(index_t rows, index_t cols, int bins, bool table, int copy_bytes);

// The bin of every element of a one-lane array; `bins` (one past the last bin) for a value in no bin. Equal-width
// bins over [min, max] of data holding NaN or an infinity are an input_error (naming --edges); with edges, such values
// are outside every bin (the commands refuse them before: check_finite).
std::vector<std::uint16_t> bin_indices(const array& in, const binning& b);

// The integral histogram as a uint32 array (H, W, B). Throws input_error when H·W >= 2^32 (counts would not fit).
array integral_histogram_naive(std::span<const std::uint16_t> bin, index_t rows, index_t cols, int bins);
array integral_histogram(std::span<const std::uint16_t> bin, index_t rows, index_t cols, int bins, thread_pool& pool);
// The same into memory the caller owns (rows x cols x bins counts: the library's result, held once). Stops between
// rows when a stop is requested (core/cancel.hpp).
void integral_histogram_into(std::span<const std::uint16_t> bin, index_t rows, index_t cols, int bins, thread_pool& pool,
                             std::uint32_t* out);

// ---- what users do with a table -----------------------------------------------------------------------------------

// An inclusive rectangle of rows top..bottom and columns left..right (0-based).
struct rect {
    index_t top = 0, left = 0, bottom = 0, right = 0;
    index_t area() const { return (bottom - top + 1) * (right - left + 1); }
};

// Throws input_error ("where:LINE: ...") for the first rectangle outside rows x cols or with top > bottom or
// left > right; line numbers are 1-based positions in `rects`' source (line_of[k], or k + 1 when empty).
void check_rects(std::span<const rect> rects, index_t rows, index_t cols, const std::string& where,
                 std::span<const std::size_t> line_of = {});

// Sums of every lane of a table over each rectangle, four lookups each: out[k·lanes + c], in the table's dtype, returned
// as raw 8-byte words (uint64, int64 or double; a float32 table's sums are widened to double).
std::vector<std::uint64_t> rect_sums(const array& table, std::span<const rect> rects);
// Sums of every lane of a float image (float32 or float64) over each rectangle, as raw 8-byte doubles: the exact sum
// rounded once to double (differences of a float table's entries lose the digits the entries share: a one-pixel sum
// of a 4096² image in [1000, 1001) was off by 1.7e-5). Exact as the box filter is (core/numerics/box_filter.cpp):
// every value is an integer multiple of the image's smallest binary unit 2^-s, so the summed-area table of the scaled
// values in 128-bit integers has exact differences; only an image whose nonzero magnitudes span more than about
// 2^(127 - p - 33) (p: 24 or 53) has its values rounded to multiples of a coarser unit first. Memory:
// exact_rect_sums_bytes (16 bytes per element).
std::vector<std::uint64_t> exact_rect_sums(const array& in, std::span<const rect> rects);
double exact_rect_sums_bytes(const array& in);
// The same for an integral histogram (uint32): out[k·B + b] counts the pixels of bin b in rectangle k.
std::vector<std::uint32_t> rect_counts(const array& histogram, std::span<const rect> rects);

// Box filter of radius R (window (2R+1)²) with normalisation, as OpenCV's cv::boxFilter(src, dst, -1, {2R+1, 2R+1})
// with its defaults (anchor at the centre, normalize=true, BORDER_DEFAULT = BORDER_REFLECT_101: ...cb|abcd|cb...).
// The output has the input's dtype and shape; integers are the exact mean rounded to nearest (no ties: the window
// area is odd), floats within 1 ulp of the exact mean (radius 0: the input itself). Computed by running window sums,
// vertical then horizontal, in exact integer arithmetic (core/numerics/box_filter.cpp); bands of rows on the pool.
// A float input holding NaN or an infinity is an input_error (the commands refuse it before: check_finite).
array box_filter(const array& in, index_t radius, thread_pool& pool);

// The rows of the filtered image as they are computed, for a caller that writes them out rather than keep the image
// (a file written while the filter runs: io::write_npy_rows): sink(first, count, data) receives rows first ..
// first + count - 1, count · cols · lanes elements of the input's dtype, contiguous. Every row is handed over exactly
// once, in blocks of a few hundred KiB, from the pool's threads, several at a time and in no particular order; `data`
// is valid only during the call. The same values as box_filter, the same errors; an exception from the sink ends the
// filter and is rethrown here.
using rows_sink = std::function<void(index_t first, index_t count, const void* data)>;
void box_filter_rows(const array& in, index_t radius, thread_pool& pool, const rows_sink& sink);

// The source index of position p (may be outside 0..n-1) under BORDER_REFLECT_101; n == 1 gives 0.
index_t reflect101(index_t p, index_t n);

}  // namespace swgpu::sat
