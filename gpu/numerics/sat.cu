// The facade of gpu/numerics/sat.hpp: host arrays in, the kernels of gpu/numerics/sat_kernels.cuh, host arrays out.
//
// Element types reach the kernels in a few canonical forms (the rest is converted on the host first, which is exact):
//   uint64 table:  uint8 / uint16 pixels with 32-bit tiles (a tile's local sums fit: 65535 · 32 · 256 < 2^32), or
//                  uint64 pixels (from uint32 / uint64) with 64-bit tiles
//   int64 table:   int64 pixels          float64 table: float32 or float64 pixels
//   float32 table: float32 pixels        integral histogram: uint16 bin indices, 32-bit tiles and table
#include <chrono>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "core/tuning.hpp"
#include "gpu/device_buffer.cuh"
#include "gpu/numerics/sat.hpp"
#include "gpu/numerics/sat_kernels.cuh"
#include "gpu/numerics/sat_ordered_kernels.cuh"
#include "gpu/numerics/sat_strip_kernels.cuh"

namespace swgpu::gpu {

namespace {

using namespace sat_kernels;

// The strips take tables of one lane and histograms of up to 32 bins (strip_kernels::max_bins).
bool strips_apply(index_t lanes, bool histogram) { return histogram ? lanes <= strip_kernels::max_bins : lanes == 1; }

table_schedule resolve(table_schedule s, index_t lanes, bool histogram, bool floating) {
    if (s == table_schedule::ordered && histogram)
        throw usage_error("the ordered GPU schedule takes summed-area tables; use strips for histograms");
    // Float tables in the CPU's order (the other schedules round differently: within the bound, not bit for bit).
    if (s == table_schedule::hybrid && floating && !histogram) return table_schedule::ordered;
    if (s != table_schedule::hybrid) {
        if (s == table_schedule::tiled_p2p && lanes > max_tiled_lanes)
            throw usage_error("the tiled GPU schedule takes at most " + std::to_string(max_tiled_lanes) +
                              " lanes (channels or bins); use row_sync");
        if (s == table_schedule::strips && !strips_apply(lanes, histogram))
            throw usage_error(histogram ? "the strips GPU schedule takes at most 32 bins; use row_sync"
                                        : "the strips GPU schedule takes one-channel tables; use tiled_p2p");
        return s;
    }
    // The hybrid: strips wherever they apply (they never wait between blocks: measured faster than the tiles at
    // 16384^2 and 4096^2 x 32 bins, README), then tiles, then row_sync for lane counts neither takes.
    if (strips_apply(lanes, histogram)) return table_schedule::strips;
    return lanes <= max_tiled_lanes ? table_schedule::tiled_p2p : table_schedule::row_sync;
}

// Runs one table `repeats` times into d_out (device), timing each run.
template <class Out, class Local, class Loader>
table_report run_table(Out* d_out, index_t rows, index_t cols, int lanes, Loader load, table_schedule s, int repeats,
                       cudaStream_t stream) {
    constexpr bool histogram = std::is_same_v<Loader, bin_loader>;
    table_report rep;
    rep.used = resolve(s, lanes, histogram, std::is_floating_point_v<Out>);
    const index_t row_len = cols * lanes;
    device_buffer<unsigned char> workspace;
    tiled_state<Out, Local> st{};
    strip_kernels::strip_state<Out> strips{};
    std::size_t flags_bytes = 0;
    if (rep.used == table_schedule::tiled_p2p) {
        workspace.allocate(tiled_workspace_bytes<Out, Local>(rows, row_len, lanes, &flags_bytes));
        st = make_tiled_state<Out, Local>(d_out, rows, row_len, lanes, workspace.data());
    } else if (rep.used == table_schedule::strips) {
        const index_t width = histogram ? strip_kernels::histogram_width : strip_kernels::table_width;
        workspace.allocate(strip_kernels::strip_workspace_bytes<Out>(rows, cols, lanes, width));
        strips = strip_kernels::make_strip_state<Out>(rows, cols, lanes, width, workspace.data());
    }
    cuda_event start, stop;
    for (int r = 0; r < std::max(1, repeats); ++r) {
        start.record(stream);
        if (rep.used == table_schedule::ordered) {
            if constexpr (!histogram) sat_ordered::launch(load.in, d_out, rows, cols, lanes, stream);
        } else if (rep.used == table_schedule::tiled_p2p) {
            launch_tiled(st, load, flags_bytes, stream);
        } else if (rep.used == table_schedule::strips) {
            if constexpr (histogram) strip_kernels::launch_histogram_strips(strips, load.bin, d_out, stream);
            else strip_kernels::launch_table_strips(strips, load, d_out, stream);
        } else {
            launch_row_sync(d_out, rows, cols, lanes, load, stream);
        }
        stop.record(stream);
        stop.synchronize();
        rep.ms.push_back(stop.since(start));
    }
    return rep;
}

template <class Out>
sat::dtype dtype_of() {
    if constexpr (std::is_same_v<Out, std::uint64_t>) return sat::dtype::u64;
    else if constexpr (std::is_same_v<Out, std::int64_t>) return sat::dtype::i64;
    else if constexpr (std::is_same_v<Out, float>) return sat::dtype::f32;
    else return sat::dtype::f64;
}

// The input converted on the host to element type T (exact for the conversions this file makes).
template <class T>
std::vector<T> converted(const sat::array& in) {
    std::vector<T> out(in.elements());
    for (std::size_t k = 0; k < out.size(); ++k) {
        switch (in.type) {
            case sat::dtype::u8: out[k] = static_cast<T>(in.data<std::uint8_t>()[k]); break;
            case sat::dtype::u16: out[k] = static_cast<T>(in.data<std::uint16_t>()[k]); break;
            case sat::dtype::u32: out[k] = static_cast<T>(in.data<std::uint32_t>()[k]); break;
            case sat::dtype::u64: out[k] = static_cast<T>(in.data<std::uint64_t>()[k]); break;
            case sat::dtype::i8: out[k] = static_cast<T>(in.data<std::int8_t>()[k]); break;
            case sat::dtype::i16: out[k] = static_cast<T>(in.data<std::int16_t>()[k]); break;
            case sat::dtype::i32: out[k] = static_cast<T>(in.data<std::int32_t>()[k]); break;
            case sat::dtype::i64: out[k] = static_cast<T>(in.data<std::int64_t>()[k]); break;
            case sat::dtype::f32: out[k] = static_cast<T>(in.data<float>()[k]); break;
            case sat::dtype::f64: out[k] = static_cast<T>(in.data<double>()[k]); break;
        }
    }
    return out;
}

// The table of `in` left in d_out (allocated here); returns the report.
template <class Out, class Local, class In>
table_report table_on_device(const In* host, index_t rows, index_t cols, index_t lanes, device_buffer<Out>& d_out,
                             table_schedule s, int repeats, cudaStream_t stream) {
    const auto elements = static_cast<std::size_t>(rows * cols * lanes);
    device_buffer<In> d_in;
    d_in.upload(host, elements, stream);
    d_out.allocate(elements);
    pixel_loader<In, Local> load{d_in.data(), cols * lanes};
    return run_table<Out, Local>(d_out.data(), rows, cols, static_cast<int>(lanes), load, s, repeats, stream);
}

template <class Out, class Local, class In>
table_report table_on_device(const In* host, const sat::array& in, device_buffer<Out>& d_out, table_schedule s, int repeats,
                             cudaStream_t stream) {
    return table_on_device<Out, Local>(host, in.rows, in.cols, in.lanes, d_out, s, repeats, stream);
}

// Calls f(d_table, report) with the table of `in` in device memory, in type Out.
template <class Out, class F>
void with_device_table(const sat::array& in, table_schedule s, int repeats, cudaStream_t stream, F&& f) {
    device_buffer<Out> d_out;
    table_report rep;
    if constexpr (std::is_same_v<Out, std::uint64_t>) {
        if (in.type == sat::dtype::u8) rep = table_on_device<Out, std::uint32_t>(in.data<std::uint8_t>(), in, d_out, s, repeats, stream);
        else if (in.type == sat::dtype::u16) rep = table_on_device<Out, std::uint32_t>(in.data<std::uint16_t>(), in, d_out, s, repeats, stream);
        else if (in.type == sat::dtype::u64) rep = table_on_device<Out, Out>(in.data<Out>(), in, d_out, s, repeats, stream);
        else rep = table_on_device<Out, Out>(converted<Out>(in).data(), in, d_out, s, repeats, stream);
    } else if constexpr (std::is_same_v<Out, double>) {
        if (in.type == sat::dtype::f32) rep = table_on_device<Out, Out>(in.data<float>(), in, d_out, s, repeats, stream);
        else if (in.type == sat::dtype::f64) rep = table_on_device<Out, Out>(in.data<double>(), in, d_out, s, repeats, stream);
        else rep = table_on_device<Out, Out>(converted<Out>(in).data(), in, d_out, s, repeats, stream);
    } else {  // int64 and float32 tables: the input in the table's own type
        if (in.type == dtype_of<Out>()) rep = table_on_device<Out, Out>(in.data<Out>(), in, d_out, s, repeats, stream);
        else rep = table_on_device<Out, Out>(converted<Out>(in).data(), in, d_out, s, repeats, stream);
    }
    f(d_out, rep);
}

template <class F>
void visit_table_type(sat::dtype t, F&& f) {
    switch (t) {
        case sat::dtype::u64: f(std::uint64_t{}); return;
        case sat::dtype::i64: f(std::int64_t{}); return;
        case sat::dtype::f32: f(float{}); return;
        case sat::dtype::f64: f(double{}); return;
        default: throw runtime_failure(std::string("no GPU summed-area table of element type ") + sat::name_of(t));
    }
}

std::vector<device_rect> to_device_rects(std::span<const sat::rect> rects) {
    std::vector<device_rect> r(rects.size());
    for (std::size_t k = 0; k < rects.size(); ++k) r[k] = {rects[k].top, rects[k].left, rects[k].bottom, rects[k].right};
    return r;
}

void histogram_on_device(std::span<const std::uint16_t> bin, index_t rows, index_t cols, int bins,
                         device_buffer<std::uint32_t>& d_out, table_schedule s, int repeats, cudaStream_t stream,
                         table_report& rep) {
    if (static_cast<std::size_t>(rows * cols) != bin.size()) throw runtime_failure("integral_histogram: bins do not match the shape");
    device_buffer<std::uint16_t> d_bin;
    d_bin.upload(bin.data(), bin.size(), stream);
    d_out.allocate(static_cast<std::size_t>(rows * cols * bins));
    bin_loader load{d_bin.data(), cols, bins};
    rep = run_table<std::uint32_t, std::uint32_t>(d_out.data(), rows, cols, bins, load, s, repeats, stream);
}

}  // namespace

namespace {

void table_into(const sat::array& in, sat::dtype table, void* out, table_schedule s, table_report* report, int repeats) {
    if (in.elements() == 0) return;
    cuda_stream stream;
    visit_table_type(table, [&](auto tv) {
        using Out = decltype(tv);
        with_device_table<Out>(in, s, repeats, stream.get(), [&](device_buffer<Out>& d, table_report& rep) {
            SWGPU_CUDA_CHECK(cudaMemcpyAsync(out, d.data(), in.elements() * sizeof(Out), cudaMemcpyDeviceToHost,
                                             stream.get()));
            stream.synchronize();
            if (report) *report = rep;
        });
    });
}

}  // namespace

sat::array summed_area_table(const sat::array& in, sat::dtype table, table_schedule s, table_report* report, int repeats) {
    sat::array out = sat::array::uninitialized(table, in.rows, in.cols, in.lanes);  // every element is written
    table_into(in, table, out.raw(), s, report, repeats);
    return out;
}

void summed_area_table_into(const sat::array& in, sat::dtype table, void* out) {
    table_into(in, table, out, table_schedule::hybrid, nullptr, 1);
}

void small_integer_table_into(const void* image, sat::dtype type, index_t rows, index_t cols, index_t lanes,
                              void* out) {
    if (type != sat::dtype::u8 && type != sat::dtype::u16)
        throw runtime_failure("internal error: small_integer_table_into takes 8- and 16-bit images");
    const auto elements = static_cast<std::size_t>(rows * cols * lanes);
    if (elements == 0) return;
    // SWGPU_TUNE=sat.profile=1 (a measurement switch): where a call's time goes, on stderr.
    const bool profile = tuning::flag("sat.profile");
    const auto t0 = std::chrono::steady_clock::now();
    const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    std::chrono::steady_clock::time_point t1, t2, t3;
    {
        cuda_stream stream;
        device_buffer<std::uint64_t> d;
        table_report rep;
        if (type == sat::dtype::u8)
            rep = table_on_device<std::uint64_t, std::uint32_t>(static_cast<const std::uint8_t*>(image), rows, cols,
                                                                lanes, d, table_schedule::hybrid, 1, stream.get());
        else
            rep = table_on_device<std::uint64_t, std::uint32_t>(static_cast<const std::uint16_t*>(image), rows, cols,
                                                                lanes, d, table_schedule::hybrid, 1, stream.get());
        t1 = std::chrono::steady_clock::now();
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(out, d.data(), elements * sizeof(std::uint64_t), cudaMemcpyDeviceToHost,
                                         stream.get()));
        stream.synchronize();
        t2 = std::chrono::steady_clock::now();
        if (profile && !rep.ms.empty())
            std::fprintf(stderr, "swgpu: sat: upload, allocation and kernels %.1f ms (kernels %.2f), copy back %.1f ms",
                         ms(t0, t1), rep.ms.back(), ms(t1, t2));
    }
    t3 = std::chrono::steady_clock::now();
    if (profile) std::fprintf(stderr, ", freed in %.1f ms\n", ms(t2, t3));
}

sat::array integral_histogram(std::span<const std::uint16_t> bin, index_t rows, index_t cols, int bins, table_schedule s,
                              table_report* report, int repeats) {
    sat::array out(sat::dtype::u32, rows, cols, bins);
    if (out.elements() == 0) return out;
    cuda_stream stream;
    device_buffer<std::uint32_t> d_out;
    table_report rep;
    histogram_on_device(bin, rows, cols, bins, d_out, s, repeats, stream.get(), rep);
    SWGPU_CUDA_CHECK(cudaMemcpyAsync(out.raw(), d_out.data(), out.bytes(), cudaMemcpyDeviceToHost, stream.get()));
    stream.synchronize();
    if (report) *report = rep;
    return out;
}

void integral_histogram_into(std::span<const std::uint16_t> bin, index_t rows, index_t cols, int bins, std::uint32_t* out) {
    const auto count = static_cast<std::size_t>(rows * cols * bins);
    if (count == 0) return;
    cuda_stream stream;
    device_buffer<std::uint32_t> d_out;
    table_report rep;
    histogram_on_device(bin, rows, cols, bins, d_out, table_schedule::hybrid, 1, stream.get(), rep);
    SWGPU_CUDA_CHECK(cudaMemcpyAsync(out, d_out.data(), count * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream.get()));
    stream.synchronize();
}

std::vector<std::uint64_t> summed_area_queries(const sat::array& in, sat::dtype table, std::span<const sat::rect> rects,
                                               table_report* report) {
    const auto L = static_cast<std::size_t>(in.lanes);
    std::vector<std::uint64_t> out(rects.size() * L);
    if (rects.empty()) return out;
    cuda_stream stream;
    device_buffer<device_rect> d_rects;
    d_rects.upload(to_device_rects(rects), stream.get());
    visit_table_type(table, [&](auto tv) {
        using Out = decltype(tv);
        using Word = std::conditional_t<std::is_floating_point_v<Out>, double, std::uint64_t>;
        with_device_table<Out>(in, table_schedule::hybrid, 1, stream.get(), [&](device_buffer<Out>& d, table_report& rep) {
            device_buffer<Word> d_words(out.size());
            launch_rect_queries<Out, Word>(d.data(), in.cols, static_cast<int>(in.lanes), d_rects.data(),
                                           static_cast<index_t>(rects.size()), d_words.data(), stream.get());
            SWGPU_CUDA_CHECK(cudaMemcpyAsync(out.data(), d_words.data(), out.size() * sizeof(Word), cudaMemcpyDeviceToHost, stream.get()));
            stream.synchronize();
            if (report) *report = rep;
        });
    });
    return out;
}

std::vector<std::uint32_t> integral_histogram_queries(std::span<const std::uint16_t> bin, index_t rows, index_t cols,
                                                      int bins, std::span<const sat::rect> rects, table_report* report) {
    std::vector<std::uint32_t> out(rects.size() * static_cast<std::size_t>(bins));
    if (rects.empty()) return out;
    cuda_stream stream;
    device_buffer<std::uint32_t> d_table;
    table_report rep;
    histogram_on_device(bin, rows, cols, bins, d_table, table_schedule::hybrid, 1, stream.get(), rep);
    device_buffer<device_rect> d_rects;
    d_rects.upload(to_device_rects(rects), stream.get());
    device_buffer<std::uint32_t> d_counts(out.size());
    launch_rect_queries<std::uint32_t, std::uint32_t>(d_table.data(), cols, bins, d_rects.data(), static_cast<index_t>(rects.size()),
                                                      d_counts.data(), stream.get());
    SWGPU_CUDA_CHECK(cudaMemcpyAsync(out.data(), d_counts.data(), out.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream.get()));
    stream.synchronize();
    if (report) *report = rep;
    return out;
}

}  // namespace swgpu::gpu
