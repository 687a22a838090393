#include "app/numerics/ihist_command.hpp"

#include <optional>
#include <span>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "gpu/numerics/sat.hpp"
#include "io/memory.hpp"
#include "io/output_file.hpp"
#include "io/arrays/image.hpp"
#include "io/arrays/npy.hpp"
#include "io/arrays/reports.hpp"
#include "io/arrays/rectangles.hpp"

namespace swgpu::app {

namespace {

const char* const ihist_footer =
    "Output: uint32 array (H, W, B); OUT[i][j][b] counts the pixels of bin b in rows 0..i and columns 0..j ((W, B)\n"
    "  for a (W,) input). INPUT - reads stdin.\n"
    "Bins: 8-bit input: bin of v is v*B/256 (integer division); 16-bit: v*B/65536; other types: B equal bins over\n"
    "  [min, max] of the data, edges and bins exactly as np.histogram(a, B) computes them (its edges\n"
    "  np.linspace(min, max, B + 1), float32 for float32 data; min = max widens to [min - 0.5, max + 0.5]). --edges E0,...,EB (B+1 increasing values): bin b holds E_b <= v < E_{b+1}, the last\n"
    "  bin also v == E_B (NumPy's histogram); values outside the edges are counted in no bin.\n"
    "  The input must have one channel (grey image, (H, W) .npy).\n"
    "Queries (--query FILE): one rectangle per line, 'top left bottom right' (0-based, inclusive); output one line\n"
    "  per rectangle: top left bottom right, then the B counts, tab-separated. Without -o, the GPU answers them from a\n"
    "  table that stays on the device.\n"
    "Non-finite values: a float input holding NaN or an infinity is refused (exit 1), naming how many and where the\n"
    "  first is (equal-width bins over [min, max] cannot hold an infinity, and --edges are finite).\n"
    "Exit codes: 0 success, 1 bad input, 2 bad command line, 3 device failure, 4 out of memory (also refused before\n"
    "  any work when the histogram would not fit the memory available), 5 output could not be written. A failed run\n"
    "  leaves no output file.\n";

}  // namespace

ihist_command::ihist_command(CLI::App& app)
    : command(app, "ihist", "Integral histogram of an image or array (.npy out); histograms of rectangles") {
    add_input("INPUT", input_, "the input", "PNG, TIFF, PGM (P5) or .npy, one channel")->required();
    sub_->add_option("--bins", bins_, "Number of bins B (1..65535); may be left out with --edges");
    sub_->add_option("--edges", edges_, "Explicit bin edges E0,...,EB (B+1 increasing numbers)")->delimiter(',');
    add_output("-o,--out", output_, "-o", "The integral histogram as .npy (uint32, H x W x B), written atomically");
    add_input("--query", query_, "--query", "Rectangles (TSV: top left bottom right, 0-based inclusive): print their histograms");
    add_output("--query-out", query_out_, "--query-out", "Where the answers to --query go [default: stdout]");
    backend_.add_options(sub_);
    sub_->footer(ihist_footer);
}

int ihist_command::run(const std::string&) {
    const sat::binning binning = sat::binning_of(bins_, edges_);
    if (binning.bins == 0) throw usage_error("--bins B is required (or --edges)");
    sat::check_binning(binning);
    if (output_.empty() && query_.empty()) throw usage_error("nothing to do: give -o OUT.npy and/or --query FILE");
    if (!output_.empty() && io::format_for_name(output_) != io::image_format::npy)
        throw usage_error("the integral histogram is written as .npy; name the output '" + output_ + "' .npy");
    const bool gpu = backend_.use_gpu();

    std::optional<io::output_file> table_out, query_file;
    if (!output_.empty()) table_out.emplace(output_);
    if (!query_.empty()) query_file.emplace(query_out_);

    const sat::array in = io::read_array(input_);
    if (in.lanes != 1)
        throw input_error(input_, "the input has " + std::to_string(in.lanes) +
                                      " channels; integral histograms take one channel (convert to grey first)");
    sat::check_histogram_pixels(in.rows, in.cols, input_);
    sat::check_finite(in, input_,
                      edges_.empty() ? "equal-width bins over [min, max] of the data are impossible with them, and --edges "
                                       "bins take finite values only: replace them with finite values"
                                     : "replace them with finite values");
    io::check_memory(sat::histogram_memory(in.rows, in.cols, binning.bins, table_out || (query_file && !gpu), 0));
    io::rect_list rects;
    if (!query_.empty()) {
        rects = io::read_rects(query_);
        sat::check_rects(rects.rects, in.rows, in.cols, query_, rects.lines);
    }
    const auto bin = sat::bin_indices(in, binning);
    thread_pool pool(backend_.threads);

    std::optional<sat::array> table;
    if (table_out || (query_file && !gpu))
        table = gpu ? gpu::integral_histogram(bin, in.rows, in.cols, binning.bins)
                    : sat::integral_histogram(bin, in.rows, in.cols, binning.bins, pool);
    if (query_file) {
        std::vector<std::uint32_t> counts;
        if (table) {
            counts = sat::rect_counts(*table, rects.rects);
        } else {
            counts = gpu::integral_histogram_queries(bin, in.rows, in.cols, binning.bins, rects.rects);
        }
        io::write_histogram_lines(*query_file, rects.rects, counts, static_cast<std::size_t>(binning.bins));
    }
    if (table_out) {
        table->one_dimensional = in.one_dimensional;  // a (W,) input: (W, B)
        io::write_npy(*table, *table_out, true);
    }
    // Renamed together once both are written: a failure to write one leaves neither.
    io::commit_all({table_out ? &*table_out : nullptr, query_file ? &*query_file : nullptr});
    return 0;
}

}  // namespace swgpu::app
