#include "core/numerics/sat.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <thread>
#include <type_traits>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/engine/executors.hpp"
#include "core/numerics/finite.hpp"

namespace swgpu::sat {

namespace {
constexpr std::size_t huge_page = std::size_t(2) << 20;
}

void* allocate_large(std::size_t bytes) {
    if (bytes > std::numeric_limits<std::size_t>::max() - huge_page) throw std::bad_alloc();
    const std::size_t size = (bytes + huge_page - 1) / huge_page * huge_page;
    void* p = ::operator new(size, std::align_val_t(huge_page));
#if defined(MADV_HUGEPAGE)
    (void)::madvise(p, size, MADV_HUGEPAGE);  // a hint: where huge pages are off, ordinary pages
#endif
    return p;
}

void deallocate_large(void* p, std::size_t) { ::operator delete(p, std::align_val_t(huge_page)); }

namespace {

// Calls f(T{}) with the C++ type of dtype t.
template <class F>
decltype(auto) visit(dtype t, F&& f) {
    switch (t) {
        case dtype::u8: return f(std::uint8_t{});
        case dtype::u16: return f(std::uint16_t{});
        case dtype::u32: return f(std::uint32_t{});
        case dtype::u64: return f(std::uint64_t{});
        case dtype::i8: return f(std::int8_t{});
        case dtype::i16: return f(std::int16_t{});
        case dtype::i32: return f(std::int32_t{});
        case dtype::i64: return f(std::int64_t{});
        case dtype::f32: return f(float{});
        case dtype::f64: return f(double{});
    }
    throw runtime_failure("unknown element type");
}

// The same for the four table types.
template <class F>
decltype(auto) visit_table(dtype t, F&& f) {
    switch (t) {
        case dtype::u64: return f(std::uint64_t{});
        case dtype::i64: return f(std::int64_t{});
        case dtype::f32: return f(float{});
        case dtype::f64: return f(double{});
        default: break;
    }
    throw runtime_failure(std::string("no summed-area table of element type ") + name_of(t));
}

// Integer table arithmetic wraps (unsigned) so that S[i-1][j] - S[i-1][j-1] never overflows in between; the checked
// totals guarantee the final values are the exact ones.
template <class T, bool = std::is_integral_v<T>>
struct wrap {
    using type = T;
};
template <class T>
struct wrap<T, true> {
    using type = std::make_unsigned_t<T>;
};
template <class T>
using wrap_t = typename wrap<T>::type;

template <class T, class In>
T to_table(In v) {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<wrap_t<T>>(static_cast<T>(v)));
    else return static_cast<T>(v);
}

// The bands of `rows` for `threads` threads: band b is rows [bound(b), bound(b + 1)).
struct bands {
    index_t rows, count;
    bands(index_t r, unsigned threads) : rows(r), count(std::max<index_t>(1, std::min<index_t>(r, threads))) {}
    index_t bound(index_t b) const { return rows * b / count; }
};

// The table row just above each band (row bound(b) - 1; zeros for band 0), from per-band column sums:
// above_b[j][c] = Σ_{j' <= j} Σ_{b' < b} colsum_b'[j'][c].
template <class T>
std::vector<std::vector<wrap_t<T>>> rows_above(const std::vector<std::vector<wrap_t<T>>>& colsum, index_t cols,
                                               index_t lanes) {
    using W = wrap_t<T>;
    const auto n = static_cast<std::size_t>(cols * lanes);
    std::vector<std::vector<W>> above(colsum.size());
    std::vector<W> cum(n, W(0));
    for (std::size_t b = 0; b < colsum.size(); ++b) {
        auto& a = above[b];
        a.assign(n, W(0));
        if (b > 0) {
            for (std::size_t x = 0; x < n; ++x) cum[x] = W(cum[x] + colsum[b - 1][x]);
            for (std::size_t x = 0; x < n; ++x)
                a[x] = x >= static_cast<std::size_t>(lanes) ? W(a[x - static_cast<std::size_t>(lanes)] + cum[x]) : cum[x];
        }
    }
    return above;
}

// The table in one order of additions, the same whatever the thread count and the same as the GPU's
// (gpu/numerics/sat_ordered_kernels.cuh) and as NumPy's `a.cumsum(1).cumsum(0)`: along each row first, left to right
// (R[i][x] = R[i][x - L] + a[i][x], the first element of a row (lane) taken as it is), then down each column
// (S[i][x] = S[i - 1][x] + R[i][x], row 0 taken as it is). Float tables are therefore bit for bit those of any
// backend and thread count; integer tables are exact whatever the order.
//
// The threads share the work as a wavefront of tiles: bands of `band_rows` rows, each cut into strips of columns;
// tile (b, k) needs the band above done with strip k (its last row is the row above) and its own strip k - 1 (the
// rows' running sums, kept per band). Bands are taken in order as threads come free (thread_pool::parallel_for), so
// a band waits only for a band already taken. The tiling decides who adds, never the order of the additions: the
// strip width may follow the thread count.
constexpr index_t band_rows = 32;

template <class In, class T>
void sat_cpu(const In* in, T* out_t, index_t h, index_t w, index_t lanes, thread_pool& pool) {
    using W = wrap_t<T>;
    W* out = reinterpret_cast<W*>(out_t);
    const index_t n = w * lanes;
    const index_t band_count = (h + band_rows - 1) / band_rows;
    // Strips: about four per thread along a row (so that the bands' wavefront keeps every thread busy), whole pixels,
    // at least 512 columns (a tile's wait is amortised over its work).
    const index_t per_strip = std::max<index_t>(512, (w + 4 * pool.size() - 1) / (4 * pool.size()));
    const index_t strip = per_strip * lanes;
    const index_t strips = (n + strip - 1) / strip;
    std::vector<std::atomic<index_t>> done(static_cast<std::size_t>(band_count));  // strips finished, per band
    for (auto& d : done) d.store(0, std::memory_order_relaxed);
    std::atomic<bool> failed{false};
    pool.parallel_for(static_cast<std::size_t>(band_count), [&](std::size_t bi) {
        const auto b = static_cast<index_t>(bi);
        const index_t r0 = b * band_rows, r1 = std::min(h, r0 + band_rows);
        std::vector<W> run(static_cast<std::size_t>((r1 - r0) * lanes), W(0));  // the rows' running sums, per lane
        try {
            for (index_t k = 0; k < strips; ++k) {
                if (b > 0)
                    while (done[static_cast<std::size_t>(b - 1)].load(std::memory_order_acquire) <= k) {
                        if (failed.load(std::memory_order_relaxed)) return;
                        std::this_thread::yield();
                    }
                check_cancelled();
                const index_t x0 = k * strip, x1 = std::min(n, x0 + strip);
                for (index_t i = r0; i < r1; ++i) {
                    const In* src = in + i * n;
                    W* dst = out + i * n;
                    const W* up = i > 0 ? out + (i - 1) * n : nullptr;
                    W* r = run.data() + (i - r0) * lanes;
                    index_t x = x0;
                    if (x0 == 0)  // the first pixel's lanes start each row's sums as they are
                        for (; x < lanes; ++x) {
                            r[x] = static_cast<W>(to_table<T>(src[x]));
                            dst[x] = up ? W(up[x] + r[x]) : r[x];
                        }
                    if (lanes == 1) {
                        W s = r[0];
                        if (up)
                            for (; x < x1; ++x) {
                                s = W(s + static_cast<W>(to_table<T>(src[x])));
                                dst[x] = W(up[x] + s);
                            }
                        else
                            for (; x < x1; ++x) dst[x] = s = W(s + static_cast<W>(to_table<T>(src[x])));
                        r[0] = s;
                    } else {
                        for (; x < x1; ++x) {
                            W& s = r[x % lanes];
                            s = W(s + static_cast<W>(to_table<T>(src[x])));
                            dst[x] = up ? W(up[x] + s) : s;
                        }
                    }
                }
                done[bi].store(k + 1, std::memory_order_release);
            }
        } catch (...) {
            failed.store(true);
            throw;
        }
    });
}

template <class T>
T table_at(const array& t, index_t i, index_t j, index_t c) {
    if (i < 0 || j < 0) return T(0);
    return t.data<T>()[(i * t.cols + j) * t.lanes + c];
}

}  // namespace

// ---- dtypes and arrays --------------------------------------------------------------------------------------------

std::size_t size_of(dtype t) {
    return visit(t, [](auto v) { return sizeof(v); });
}
const char* name_of(dtype t) {
    switch (t) {
        case dtype::u8: return "uint8";
        case dtype::u16: return "uint16";
        case dtype::u32: return "uint32";
        case dtype::u64: return "uint64";
        case dtype::i8: return "int8";
        case dtype::i16: return "int16";
        case dtype::i32: return "int32";
        case dtype::i64: return "int64";
        case dtype::f32: return "float32";
        case dtype::f64: return "float64";
    }
    return "?";
}
bool is_unsigned(dtype t) { return t == dtype::u8 || t == dtype::u16 || t == dtype::u32 || t == dtype::u64; }
bool is_signed(dtype t) { return t == dtype::i8 || t == dtype::i16 || t == dtype::i32 || t == dtype::i64; }
bool is_float(dtype t) { return t == dtype::f32 || t == dtype::f64; }

array::array(dtype t, index_t r, index_t c, index_t l) : type(t), rows(r), cols(c), lanes(l) {
    storage.assign((bytes() + 7) / 8, 0);
}

array array::uninitialized(dtype t, index_t r, index_t c, index_t l) {
    array a;
    a.type = t;
    a.rows = r;
    a.cols = c;
    a.lanes = l;
    a.storage.resize((a.bytes() + 7) / 8);
    return a;
}

double array::value(std::size_t k) const {
    return visit(type, [&](auto v) { return static_cast<double>(data<decltype(v)>()[k]); });
}

// ---- summed-area tables -------------------------------------------------------------------------------------------

dtype table_type(dtype input, precision p) {
    if (p == precision::float32) return dtype::f32;
    if (p == precision::float64) return dtype::f64;
    if (is_unsigned(input)) return dtype::u64;
    if (is_signed(input)) return dtype::i64;
    return dtype::f64;
}

void check_table_fits(const array& in, dtype table, const std::string& where) {
    if (in.rows <= 0 || in.cols <= 0 || in.lanes <= 0)
        throw input_error(where, "the image is empty (" + std::to_string(in.rows) + " x " + std::to_string(in.cols) +
                                     "); nothing to sum");
    if (is_float(table)) return;
    const auto pixels = static_cast<unsigned __int128>(in.rows) * static_cast<unsigned __int128>(in.cols);
    const auto lanes = static_cast<std::size_t>(in.lanes);
    const char* advice = "; use --type float64 for an approximate table";
    if (table == dtype::u64) {
        // A bound from the dtype's maximum first: 8- and 16-bit images never need the pass over the data.
        const unsigned __int128 maxval = in.type == dtype::u8 ? 255u : in.type == dtype::u16 ? 65535u : 0u;
        if (maxval != 0 && maxval * pixels <= std::numeric_limits<std::uint64_t>::max()) return;
        std::vector<unsigned __int128> total(lanes, 0);
        for (std::size_t k = 0; k < in.elements(); ++k) {
            const auto v = visit(in.type, [&](auto t) -> unsigned __int128 {
                return static_cast<unsigned __int128>(in.data<decltype(t)>()[k]);
            });
            total[k % lanes] += v;
        }
        for (auto t : total)
            if (t > std::numeric_limits<std::uint64_t>::max())
                throw input_error(where, "the sum of the image exceeds uint64, so the table cannot be exact" +
                                             std::string(advice));
        return;
    }
    // int64: every S lies between minus the sum of the negative values and the sum of the positive ones.
    std::vector<__int128> pos(lanes, 0), neg(lanes, 0);
    for (std::size_t k = 0; k < in.elements(); ++k) {
        const auto v = visit(in.type, [&](auto t) -> __int128 {
            if constexpr (std::is_integral_v<decltype(t)>) return static_cast<__int128>(in.data<decltype(t)>()[k]);
            else return 0;
        });
        (v >= 0 ? pos : neg)[k % lanes] += v;
    }
    for (std::size_t c = 0; c < lanes; ++c)
        if (pos[c] > std::numeric_limits<std::int64_t>::max() || neg[c] < std::numeric_limits<std::int64_t>::min())
            throw input_error(where, "partial sums of the image exceed int64, so the table cannot be exact" +
                                         std::string(advice));
}

void check_finite(const array& a, const std::string& where, const std::string& advice) {
    if (!is_float(a.type)) return;
    const numerics::nonfinite bad =
        a.type == dtype::f32 ? numerics::find_nonfinite(std::span(a.data<float>(), a.elements()))
                             : numerics::find_nonfinite(std::span(a.data<double>(), a.elements()));
    if (bad.count == 0) return;
    const auto k = static_cast<index_t>(bad.first);
    const index_t lanes = std::max<index_t>(a.lanes, 1), cols = std::max<index_t>(a.cols, 1);
    const index_t pixel = k / lanes, c = k % lanes, i = pixel / cols, j = pixel % cols;
    std::string position = a.rows == 1 && lanes == 1 ? "index " + std::to_string(j)
                                                     : "row " + std::to_string(i) + ", column " + std::to_string(j);
    if (lanes > 1) position += ", channel " + std::to_string(c);
    throw input_error(where, numerics::nonfinite_message(bad, position, advice));
}

double table_bytes(const array& in, dtype table) {
    return static_cast<double>(in.rows) * static_cast<double>(in.cols) * static_cast<double>(in.lanes) *
           static_cast<double>(size_of(table));
}

std::string shape_of(const array& a) {
    return std::to_string(a.rows) + " x " + std::to_string(a.cols) + (a.lanes > 1 ? " x " + std::to_string(a.lanes) : "");
}

memory_need table_memory(const array& in, dtype table) {
    return {table_bytes(in, table), "the table of a " + shape_of(in) + " input is " + name_of(table),
            table == dtype::f32 ? "use a smaller input" : "use a smaller input (or --type float32 for a float input)"};
}

memory_need exact_rect_sums_memory(const array& in) {
    return {exact_rect_sums_bytes(in),
            "the exact rectangle sums of a " + shape_of(in) + " float image take 16 bytes an element",
            "use a smaller input"};
}

memory_need table_call_memory(double elements, dtype image, dtype table) {
    const double copy = elements * static_cast<double>(size_of(image));
    return {copy + elements * static_cast<double>(size_of(table)),
            "the summed-area table of the image and the call's copy of the image", "use a smaller image"};
}

memory_need histogram_memory(index_t rows, index_t cols, int bins, bool table, int copy_bytes) {
    const double pixels = static_cast<double>(rows) * static_cast<double>(cols);
    return {pixels * 2 + (table ? pixels * bins * 4.0 : 0.0) + pixels * copy_bytes,
            "the integral histogram of a " + std::to_string(rows) + " x " + std::to_string(cols) + " image with " +
                std::to_string(bins) + " bins is uint32" + (copy_bytes > 0 ? ", with the call's copy of the image" : ""),
            "use fewer --bins or a smaller image"};
}

array summed_area_table_naive(const array& in, dtype table) {
    array out(table, in.rows, in.cols, in.lanes);
    visit(in.type, [&](auto iv) {
        using In = decltype(iv);
        visit_table(table, [&](auto tv) {
            using T = decltype(tv);
            using W = wrap_t<T>;
            // The problem runs over the wrapping type so that integer intermediates never overflow.
            std::vector<W> lane_out(in.elements());
            for (index_t c = 0; c < in.lanes; ++c) {
                std::vector<W> conv(in.elements());
                for (std::size_t k = 0; k < in.elements(); ++k)
                    conv[k] = static_cast<W>(to_table<T>(in.data<In>()[k]));
                sat_problem<W, W> p{conv.data(), lane_out.data(), in.rows, in.cols, in.lanes, c};
                run_naive(p);
            }
            std::memcpy(out.raw(), lane_out.data(), out.bytes());
        });
    });
    return out;
}

void summed_area_table_into(const array& in, dtype table, array& out, thread_pool& pool) {
    if (out.type != table || out.rows != in.rows || out.cols != in.cols || out.lanes != in.lanes)
        out = array::uninitialized(table, in.rows, in.cols, in.lanes);  // sat_cpu writes every element
    summed_area_table_into(in, table, out.raw(), pool);
}

void summed_area_table_into(const array& in, dtype table, void* out, thread_pool& pool) {
    if (in.elements() == 0) return;
    visit(in.type, [&](auto iv) {
        using In = decltype(iv);
        visit_table(table, [&](auto tv) {
            using T = decltype(tv);
            sat_cpu<In, T>(in.data<In>(), static_cast<T*>(out), in.rows, in.cols, in.lanes, pool);
        });
    });
}

array summed_area_table(const array& in, dtype table, thread_pool& pool) {
    array out;
    summed_area_table_into(in, table, out, pool);
    return out;
}

// ---- integral histograms ------------------------------------------------------------------------------------------

void check_histogram_pixels(index_t rows, index_t cols, const std::string& where) {
    if (static_cast<unsigned __int128>(rows) * static_cast<unsigned __int128>(cols) >= (static_cast<unsigned __int128>(1) << 32))
        throw input_error(where, "the image has 2^32 pixels or more; uint32 counts could overflow");
}

binning binning_of(int bins, std::vector<double> edges) {
    binning b;
    b.bins = bins == 0 && !edges.empty() ? static_cast<int>(edges.size()) - 1 : bins;
    b.edges = std::move(edges);
    return b;
}

void check_binning(const binning& b) {
    if (b.bins < 1 || b.bins > 65535) throw usage_error("--bins must be between 1 and 65535");
    if (b.edges.empty()) return;
    if (b.edges.size() != static_cast<std::size_t>(b.bins) + 1)
        throw usage_error("--edges needs bins + 1 = " + std::to_string(b.bins + 1) + " values, got " +
                          std::to_string(b.edges.size()));
    for (std::size_t k = 0; k < b.edges.size(); ++k) {
        if (!std::isfinite(b.edges[k])) throw usage_error("--edges must be finite numbers");
        if (k > 0 && !(b.edges[k] > b.edges[k - 1])) throw usage_error("--edges must be strictly increasing");
    }
}

namespace {

// Equal-width bins as np.histogram(a, bins) computes them (NumPy 1.24, lib/histograms.py, its fast path for equal
// bins). Outer edges: the data's min and max (NumPy scalars of the data's type), widened by 0.5 each way when equal
// (np.float32(v) - 0.5 is a float64). Edges: np.linspace(lo, hi, B + 1, dtype=T), computed in float64 whatever T is
// (linspace multiplies its ends by 1.0) and rounded to T at the end: y_i = i * step + lo with delta = hi - lo and
// step = delta / B (i / B * delta when step underflows to 0), the last edge hi itself. A value's bin: f = (v - lo) *
// norm in T (the data's type: NumPy casts the scalars lo and norm to it), norm = B / (hi - lo) in float64 with hi - lo
// in the ends' own type; f truncated, B moved to B - 1, then one bin down when v < edge[bin] and one up when
// v >= edge[bin + 1] (except in the last bin, which holds hi). T: float for float32 data, double for the rest.
template <class T>
void numpy_equal_bins(const array& in, double min, double max, int bins, std::vector<std::uint16_t>& out) {
    double lo = min, hi = max;  // exact: min and max are values of the data (T)
    double width = static_cast<double>(static_cast<T>(static_cast<T>(max) - static_cast<T>(min)));  // in T
    if (lo == hi) {  // widened in float64
        lo -= 0.5;
        hi += 0.5;
        width = hi - lo;
    }
    const auto B = static_cast<std::size_t>(bins);
    std::vector<T> edge(B + 1);
    {
        const double delta = hi - lo;  // each operation rounded on its own (ISO C++ mode: no contraction into an FMA)
        const double step = delta / static_cast<double>(B);
        for (std::size_t i = 0; i <= B; ++i) {
            double y = static_cast<double>(i);
            if (step == 0) {
                y = y / static_cast<double>(B);
                y = y * delta;
            } else {
                y = y * step;
            }
            edge[i] = static_cast<T>(y + lo);
        }
        edge[B] = static_cast<T>(hi);
    }
    const T norm = static_cast<T>(static_cast<double>(B) / width);
    const T first = static_cast<T>(lo);
    const std::size_t n = in.elements();
    for (std::size_t k = 0; k < n; ++k) {
        const T v = in.type == dtype::f32 ? static_cast<T>(in.data<float>()[k]) : static_cast<T>(in.value(k));
        const T d = v - first;
        const T f = static_cast<T>(d * norm);
        auto index = static_cast<std::size_t>(static_cast<std::int64_t>(f));
        if (index >= B) index = B - 1;  // v == hi (f can pass B only by rounding)
        if (v < edge[index] && index > 0) --index;
        else if (index + 1 < B && v >= edge[index + 1]) ++index;
        out[k] = static_cast<std::uint16_t>(index);
    }
}

}  // namespace

std::vector<std::uint16_t> bin_indices(const array& in, const binning& b) {
    check_binning(b);
    const std::size_t n = in.elements();
    const auto none = static_cast<std::uint16_t>(b.bins);
    std::vector<std::uint16_t> out(n);
    if (!b.edges.empty()) {
        const auto& e = b.edges;
        for (std::size_t k = 0; k < n; ++k) {
            const double v = in.value(k);
            if (!(v >= e.front() && v <= e.back())) {
                out[k] = none;
                continue;
            }
            const auto at = std::upper_bound(e.begin(), e.end(), v) - e.begin() - 1;
            out[k] = static_cast<std::uint16_t>(std::min<std::ptrdiff_t>(at, b.bins - 1));
        }
        return out;
    }
    const auto B = static_cast<std::uint64_t>(b.bins);
    if (in.type == dtype::u8) {
        for (std::size_t k = 0; k < n; ++k) out[k] = static_cast<std::uint16_t>(in.data<std::uint8_t>()[k] * B / 256);
        return out;
    }
    if (in.type == dtype::u16) {
        for (std::size_t k = 0; k < n; ++k) out[k] = static_cast<std::uint16_t>(in.data<std::uint16_t>()[k] * B / 65536);
        return out;
    }
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    bool nan = false;
    for (std::size_t k = 0; k < n; ++k) {
        const double v = in.value(k);
        if (std::isnan(v)) {
            nan = true;
            continue;
        }
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    if (n > 0 && (nan || std::isinf(lo) || std::isinf(hi)))
        throw input_error("", std::string("equal-width bins over [min, max] of the data are impossible: the data holds ") +
                                  (nan ? "NaN" : "an infinity") +
                                  "; give finite values, or bins by --edges (values outside the edges are in no bin)");
    if (n == 0) return out;
    if (in.type == dtype::f32) numpy_equal_bins<float>(in, lo, hi, b.bins, out);
    else numpy_equal_bins<double>(in, lo, hi, b.bins, out);
    return out;
}

namespace {

void check_histogram_size(index_t rows, index_t cols) {
    if (rows <= 0 || cols <= 0)
        throw input_error("", "the image is empty (" + std::to_string(rows) + " x " + std::to_string(cols) + ")");
    if (static_cast<unsigned __int128>(rows) * static_cast<unsigned __int128>(cols) >= (static_cast<unsigned __int128>(1) << 32))
        throw input_error("", "the image has 2^32 pixels or more; uint32 bin counts could overflow");
}

}  // namespace

array integral_histogram_naive(std::span<const std::uint16_t> bin, index_t rows, index_t cols, int bins) {
    check_histogram_size(rows, cols);
    array out(dtype::u32, rows, cols, bins);
    // The indicators Q(i, j, b), interleaved like the output; one wavefront problem per bin.
    std::vector<std::uint32_t> q(out.elements(), 0u);
    for (std::size_t k = 0; k < bin.size(); ++k)
        if (bin[k] < bins) q[k * static_cast<std::size_t>(bins) + bin[k]] = 1u;
    for (int b = 0; b < bins; ++b) {
        sat_problem<std::uint32_t, std::uint32_t> p{q.data(), out.data<std::uint32_t>(), rows, cols, bins, b};
        run_naive(p);
    }
    return out;
}

array integral_histogram(std::span<const std::uint16_t> bin, index_t rows, index_t cols, int bins, thread_pool& pool) {
    check_histogram_size(rows, cols);
    array out = array::uninitialized(dtype::u32, rows, cols, bins);
    integral_histogram_into(bin, rows, cols, bins, pool, out.data<std::uint32_t>());
    return out;
}

void integral_histogram_into(std::span<const std::uint16_t> bin, index_t rows, index_t cols, int bins, thread_pool& pool,
                             std::uint32_t* o) {
    check_histogram_size(rows, cols);
    const index_t n = cols * bins;
    const auto B = static_cast<std::size_t>(bins);
    const bands bd(rows, pool.size());
    std::vector<std::vector<std::uint32_t>> colsum(static_cast<std::size_t>(bd.count));
    pool.parallel_for(static_cast<std::size_t>(bd.count - 1), [&](std::size_t b) {
        auto& s = colsum[b];
        s.assign(static_cast<std::size_t>(n), 0u);
        for (index_t i = bd.bound(static_cast<index_t>(b)); i < bd.bound(static_cast<index_t>(b) + 1); ++i) {
            check_cancelled();
            for (index_t j = 0; j < cols; ++j) {
                const std::size_t v = bin[static_cast<std::size_t>(i * cols + j)];
                if (v < B) ++s[static_cast<std::size_t>(j) * B + v];
            }
        }
    });
    const auto above = rows_above<std::uint32_t>(colsum, cols, bins);
    pool.parallel_for(static_cast<std::size_t>(bd.count), [&](std::size_t b) {
        const std::uint32_t* prev = above[b].data();
        std::vector<std::uint32_t> run(B);
        for (index_t i = bd.bound(static_cast<index_t>(b)); i < bd.bound(static_cast<index_t>(b) + 1); ++i) {
            check_cancelled();
            std::fill(run.begin(), run.end(), 0u);
            std::uint32_t* dst = o + i * n;
            for (index_t j = 0; j < cols; ++j) {
                const std::size_t v = bin[static_cast<std::size_t>(i * cols + j)];
                if (v < B) ++run[v];
                const std::uint32_t* p = prev + j * bins;
                std::uint32_t* d = dst + j * bins;
                for (std::size_t c = 0; c < B; ++c) d[c] = p[c] + run[c];  // B lanes at once: vectorised
            }
            prev = dst;
        }
    });
}

// ---- queries ------------------------------------------------------------------------------------------------------

void check_rects(std::span<const rect> rects, index_t rows, index_t cols, const std::string& where,
                 std::span<const std::size_t> line_of) {
    for (std::size_t k = 0; k < rects.size(); ++k) {
        const rect& r = rects[k];
        const std::size_t line = line_of.empty() ? k + 1 : line_of[k];
        const std::string at = where + ":" + std::to_string(line);
        if (r.top < 0 || r.left < 0 || r.bottom >= rows || r.right >= cols)
            throw input_error(at, "rectangle rows " + std::to_string(r.top) + ".." + std::to_string(r.bottom) +
                                      ", columns " + std::to_string(r.left) + ".." + std::to_string(r.right) +
                                      " is outside the image (" + std::to_string(rows) + " rows x " +
                                      std::to_string(cols) + " columns, 0-based)");
        if (r.top > r.bottom || r.left > r.right)
            throw input_error(at, "rectangle has top > bottom or left > right (inclusive 0-based bounds expected)");
    }
}

std::vector<std::uint64_t> rect_sums(const array& table, std::span<const rect> rects) {
    const auto L = static_cast<std::size_t>(table.lanes);
    std::vector<std::uint64_t> out(rects.size() * L);
    visit_table(table.type, [&](auto tv) {
        using T = decltype(tv);
        for (std::size_t k = 0; k < rects.size(); ++k) {
            const rect& r = rects[k];
            for (std::size_t c = 0; c < L; ++c) {
                const auto lane = static_cast<index_t>(c);
                const T a = table_at<T>(table, r.bottom, r.right, lane), b = table_at<T>(table, r.top - 1, r.right, lane);
                const T d = table_at<T>(table, r.bottom, r.left - 1, lane), e = table_at<T>(table, r.top - 1, r.left - 1, lane);
                std::uint64_t word;
                if constexpr (std::is_integral_v<T>) {
                    using U = std::make_unsigned_t<T>;
                    word = static_cast<std::uint64_t>(U(U(U(a) - U(b)) - U(d)) + U(e));
                } else {
                    const double s = (static_cast<double>(a) - static_cast<double>(b)) -
                                     (static_cast<double>(d) - static_cast<double>(e));
                    std::memcpy(&word, &s, sizeof s);
                }
                out[k * L + c] = word;
            }
        }
    });
    return out;
}

double exact_rect_sums_bytes(const array& in) { return static_cast<double>(in.elements()) * sizeof(__int128); }

std::vector<std::uint64_t> exact_rect_sums(const array& in, std::span<const rect> rects) {
    if (!is_float(in.type)) throw runtime_failure("exact_rect_sums needs a float32 or float64 image");
    const bool f32 = in.type == dtype::f32;
    const std::size_t n = in.elements();
    const auto value = [&](std::size_t k) { return f32 ? static_cast<double>(in.data<float>()[k]) : in.data<double>()[k]; };
    // The least and the greatest binary exponent of the nonzero values (x = m·2^e, m in [0.5, 1)).
    int e_min = std::numeric_limits<int>::max(), e_max = std::numeric_limits<int>::min();
    for (std::size_t k = 0; k < n; ++k) {
        const double x = value(k);
        if (x == 0) continue;
        int e = 0;
        (void)std::frexp(x, &e);
        e_min = std::min(e_min, e);
        e_max = std::max(e_max, e);
    }
    const int p = f32 ? 24 : 53;
    // Scaled by 2^s, every value is an integer below 2^(e_max - e_min + p); a sum of up to 2^33 of them, with its
    // sign, must fit 127 bits: s lowered (values rounded to multiples of 2^-s) only where the span is wider.
    int s = 0;
    if (e_min <= e_max) {
        s = p - e_min;
        const int bits = e_max + s + 33 + 1;
        if (bits > 127) s -= bits - 127;
    }
    using i128 = __int128;
    const index_t H = in.rows, W = in.cols, L = std::max<index_t>(in.lanes, 1);
    std::vector<i128> t(n);
    const auto at = [&](index_t i, index_t j, index_t c) -> i128 {
        return i < 0 || j < 0 ? i128(0) : t[static_cast<std::size_t>((i * W + j) * L + c)];
    };
    for (index_t i = 0; i < H; ++i)
        for (index_t c = 0; c < L; ++c) {
            i128 row = 0;
            for (index_t j = 0; j < W; ++j) {
                const auto k = static_cast<std::size_t>((i * W + j) * L + c);
                row += static_cast<i128>(std::nearbyint(std::ldexp(value(k), s)));  // exact unless s was lowered
                t[k] = row + at(i - 1, j, c);
            }
        }
    std::vector<std::uint64_t> out(rects.size() * static_cast<std::size_t>(L));
    for (std::size_t q = 0; q < rects.size(); ++q) {
        const rect& r = rects[q];
        for (index_t c = 0; c < L; ++c) {
            const i128 sum = at(r.bottom, r.right, c) - at(r.top - 1, r.right, c) - at(r.bottom, r.left - 1, c) +
                             at(r.top - 1, r.left - 1, c);
            const double d = std::ldexp(static_cast<double>(sum), -s);  // rounded once (to nearest)
            std::memcpy(&out[q * static_cast<std::size_t>(L) + static_cast<std::size_t>(c)], &d, sizeof d);
        }
    }
    return out;
}

std::vector<std::uint32_t> rect_counts(const array& h, std::span<const rect> rects) {
    if (h.type != dtype::u32) throw runtime_failure("rect_counts needs a uint32 integral histogram");
    const auto B = static_cast<std::size_t>(h.lanes);
    std::vector<std::uint32_t> out(rects.size() * B);
    for (std::size_t k = 0; k < rects.size(); ++k) {
        const rect& r = rects[k];
        for (std::size_t b = 0; b < B; ++b) {
            const auto lane = static_cast<index_t>(b);
            out[k * B + b] = table_at<std::uint32_t>(h, r.bottom, r.right, lane) - table_at<std::uint32_t>(h, r.top - 1, r.right, lane) -
                             table_at<std::uint32_t>(h, r.bottom, r.left - 1, lane) + table_at<std::uint32_t>(h, r.top - 1, r.left - 1, lane);
        }
    }
    return out;
}

}  // namespace swgpu::sat
