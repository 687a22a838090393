#include "app/numerics/sat_command.hpp"

#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "gpu/gpu.hpp"
#include "gpu/numerics/box_filter.hpp"
#include "gpu/numerics/sat.hpp"
#include "io/memory.hpp"
#include "io/arrays/reports.hpp"
#include "io/output_file.hpp"
#include "io/arrays/image.hpp"
#include "io/arrays/npy.hpp"
#include "io/arrays/rectangles.hpp"

namespace swgpu::app {

namespace {

const char* const sat_footer =
    "Tables: S[i][j] is the sum of the input over rows 0..i and columns 0..j, inclusive (no extra zero row or column).\n"
    "  Unsigned-integer input: uint64 (<u8), exact; signed: int64; floating: float64, or float32 with --type float32.\n"
    "  Shape (H, W) for one channel, (H, W, C) for C channels (colour images: one table per channel).\n"
    "  Inputs: PNG and TIFF (8/16-bit grey or colour, TIFF float32), binary PGM/PPM (P5/P6), NumPy .npy\n"
    "  (C order, u1..u8, i1..i8, f4, f8 in either byte order; (W,), (H, W) or (H, W, C)); INPUT - reads stdin. A (W,)\n"
    "  input is one row, and its table is (W,) (or (W, C)) again.\n"
    "Queries (--query FILE): one rectangle per line, 'top left bottom right' (0-based, inclusive); output one line\n"
    "  per rectangle: top left bottom right area, then sum and mean of each channel, tab-separated.\n"
    "Box filter (--box-filter R): the mean over the (2R+1)x(2R+1) window, OpenCV's boxFilter with its defaults\n"
    "  (normalised, BORDER_REFLECT_101); same type and channels as the input, from exact window sums: integers are\n"
    "  the mean rounded to nearest, floats within 1 ulp of it; -o names the image (.png, .tif, .pgm/.ppm, .npy).\n"
    "  Computed on the GPU with --backend gpu or auto (the same bits as the CPU), else on the CPU threads.\n"
    "Non-finite values: a float input holding NaN or an infinity is refused (exit 1), naming how many and where the\n"
    "  first is.\n"
    "Exit codes: 0 success, 1 bad input (unreadable/truncated/unsupported file, empty image, NaN or infinite values,\n"
    "  sums that do not fit, rectangles outside the image), 2 bad command line, 3 device failure (or --backend gpu\n"
    "  without a GPU), 4 out of memory (also refused before any work when the table or the output of --box-filter\n"
    "  would not fit the memory available), 5 output could not be written. A failed run leaves no output\n"
    "  file.\n";

}  // namespace

sat_command::sat_command(CLI::App& app)
    : command(app, "sat", "Summed-area table of an image or array (.npy out); rectangle sums; box filter") {
    add_input("INPUT", input_, "the input", "PNG, TIFF, PGM/PPM (P5/P6) or .npy")->required();
    add_output("-o,--out", output_, "-o",
                     "The table as .npy (written atomically); with --box-filter, the filtered image (.png, .tif, "
                     ".pgm/.ppm or .npy)");
    sub_->add_option("--type", type_, "Table type: auto (uint64 / int64 / float64 by the input), float32, float64")
        ->check(CLI::IsMember({"auto", "float32", "float64"}))
        ->capture_default_str();
    add_input("--query", query_, "--query", "Rectangles (TSV: top left bottom right, 0-based inclusive): print their sums and means");
    add_output("--query-out", query_out_, "--query-out", "Where the answers to --query go [default: stdout]");
    sub_->add_option("--box-filter", box_radius_, "Write the box-filtered image of radius R (window 2R+1) to -o")
        ->check(CLI::Range(0LL, 1LL << 20));
    backend_.add_options(sub_);
    sub_->footer(sat_footer);
}

int sat_command::run(const std::string&) {
    const bool box = box_radius_ >= 0;
    if (box && sub_->count("--type") > 0)
        throw usage_error("--type sets the table's type; --box-filter writes an image of the input's type: drop --type");
    if (output_.empty() && query_.empty())
        throw usage_error(box ? "--box-filter needs -o OUT (an image or .npy)" : "nothing to do: give -o OUT.npy and/or --query FILE");
    if (!output_.empty() && !box && io::format_for_name(output_) != io::image_format::npy)
        throw usage_error("the table is written as .npy; name the output '" + output_ + "' .npy (images are written only with --box-filter)");
    if (box) (void)io::format_for_name(output_);
    if (box && output_.empty()) throw usage_error("--box-filter needs -o OUT (an image or .npy)");
    const sat::precision prec = type_ == "float32" ? sat::precision::float32
                              : type_ == "float64" ? sat::precision::float64 : sat::precision::automatic;
    const bool gpu = backend_.use_gpu();

    // Outputs are opened first: an unwritable destination fails before any work, and a failed run leaves no file.
    std::optional<io::output_file> table_out, query_file;
    if (!output_.empty() && !box) table_out.emplace(output_);
    if (!query_.empty()) query_file.emplace(query_out_);

    const sat::array in = io::read_array(input_);
    sat::check_finite(in, input_);
    const sat::dtype table_type = sat::table_type(in.type, prec);
    const bool needs_table = table_out || query_file;
    if (needs_table) sat::check_table_fits(in, table_type, input_);  // the box filter's sums are sized by the window
    thread_pool pool(backend_.threads);
    if (box) io::check_memory(sat::box_filter_memory(in, box_radius_, pool.size()));
    const bool table_for_queries = query_file && !gpu && !sat::is_float(in.type);
    if (table_out || table_for_queries) io::check_memory(sat::table_memory(in, table_type));
    if (query_file && sat::is_float(in.type)) io::check_memory(sat::exact_rect_sums_memory(in));
    io::rect_list rects;
    if (!query_.empty()) {
        rects = io::read_rects(query_);
        sat::check_rects(rects.rects, in.rows, in.cols, query_, rects.lines);
    }

    std::optional<sat::array> table;
    if (table_out || table_for_queries)
        table = gpu ? gpu::summed_area_table(in, table_type) : sat::summed_area_table(in, table_type, pool);
    if (query_file) {
        // Float images: exact sums rounded once (sat::exact_rect_sums), not differences of the float table's entries.
        const auto words = sat::is_float(in.type) ? sat::exact_rect_sums(in, rects.rects)
                           : table            ? sat::rect_sums(*table, rects.rects)
                                              : gpu::summed_area_queries(in, table_type, rects.rects);
        const sat::dtype word_type = table_type == sat::dtype::f32 ? sat::dtype::f64 : table_type;
        io::write_query_lines(*query_file, rects.rects, words, static_cast<std::size_t>(in.lanes), word_type);
    }
    // The answers are written out before the filtered image, which commits itself: a failure to write them leaves no
    // image, and one to write the image removes them (their file is renamed only below).
    if (box && query_file) query_file->complete();
    if (box) {
        // On the GPU where it takes the radius (the same bits as the CPU: gpu/numerics/box_filter.hpp); --backend gpu
        // with a radius beyond it is a usage error there, auto falls back to the CPU.
        const bool on_gpu = gpu && (backend_.name == "gpu" ||
                                    gpu::box_filter_supported(in.type, in.rows, in.cols, in.lanes, box_radius_));
        if (!on_gpu && io::format_for_name(output_) == io::image_format::npy) {
            // Each block of rows goes into the file as soon as it is computed (no output array in memory).
            io::write_npy_rows(in, output_, [&](const sat::rows_sink& sink) { sat::box_filter_rows(in, box_radius_, pool, sink); });
        } else {
            sat::array filtered = on_gpu ? gpu::box_filter(in, box_radius_) : sat::box_filter(in, box_radius_, pool);
            filtered.one_dimensional = in.one_dimensional;  // (W,) in, (W,) out
            sat::check_finite(filtered, "the box filter of " + input_,
                              "the window sums overflow the image's type; scale the input down (nothing was written)");
            io::write_array(filtered, output_);
        }
    }
    if (table_out) {
        table->one_dimensional = in.one_dimensional;
        sat::check_finite(*table, "the table of " + input_,
                          std::string("the sums overflow ") + sat::name_of(table_type) +
                              "; scale the input down (nothing was written)");
        io::write_npy(*table, *table_out);
    }
    // Renamed together once both are written: a failure to write one leaves neither.
    io::commit_all({table_out ? &*table_out : nullptr, query_file ? &*query_file : nullptr});
    return 0;
}

}  // namespace swgpu::app
