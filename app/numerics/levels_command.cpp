#include "app/numerics/levels_command.hpp"

#include <iostream>
#include <optional>

#include "core/error.hpp"
#include "core/numerics/finite.hpp"
#include "core/numerics/level_runs.hpp"
#include "core/numerics/levels.hpp"
#include "gpu/numerics/level_runs.hpp"
#include "io/arrays/reports.hpp"
#include "io/output_file.hpp"
#include "io/arrays/loop_indices.hpp"
#include "io/arrays/matrix_market.hpp"
#include "io/arrays/npy.hpp"

namespace swgpu::app {

namespace {

const char* const levels_footer =
    "Triangular solves: T x = b with T the lower (default) or upper triangle of A, diagonal included (entries of a\n"
    "  general file outside it are left out, with a warning counting them); A in Matrix\n"
    "  Market coordinate format (real, integer or pattern; general or symmetric, a symmetric file meaning both\n"
    "  triangles; duplicate entries summed). b: a float64 .npy vector (any numeric dtype is converted; (n,), (n, 1) or\n"
    "  (1, n)), all ones without --rhs. x: float64 .npy of shape (n,). Each row is\n"
    "  x[i] = (b[i] - sum_j T[i][j] x[j]) / T[i][i], summed in ascending column order with one rounding per step:\n"
    "  the CPU and the GPU give the same bits as a sequential substitution.\n"
    "Generic loops: for i in 0..n-1: A[W[i]] = f(A[R[i][0]], ..., A[R[i][k-1]]), W (n,) and R (n,) or (n, k)\n"
    "  integer .npy arrays, A0 float64 .npy (all ones without --array; --locations N sets its size otherwise, default\n"
    "  1 + the largest index). f over the k values read, left to right, each operation rounded on its own:\n"
    "    sum  = v0+...+v(k-1)+1          max = max(v)+1          fmod = fmod(v0+...+v(k-1)+1, 1021)\n"
    "    wsum = c0*v0+...+c(k-1)*v(k-1)  (--coefficients: k values, one per read position)\n"
    "    dot  = beta*v0 + (alpha*v1)*v2 + ... + (alpha*v(k-2))*v(k-1)  (k odd; --coefficients alpha,beta)\n"
    "  Any number of reads per iteration. Output: the final A (float64 .npy), equal to the sequential loop's.\n"
    "--sequential runs the plain sequential loop (solves: the substitution row after row) on one thread instead of\n"
    "  the levels: the reference every backend is checked against, timed on the summary line; no levels computed.\n"
    "Levels: an iteration's level is 1 + the highest level of an iteration it depends on (true, anti and output\n"
    "  dependences through A; rows read for a solve). --stats writes a 'level<TAB>width' header line, a line per level\n"
    "  and a closing '#' comment (np.genfromtxt(F, names=True) and np.loadtxt(F, skiprows=1) read it).\n"
    "  A summary (levels, widths, analysis and per-solve times) goes to stderr unless -q. Loops: the CPU reports\n"
    "  'inspector I ms, executor E ms, total T ms'; the GPU 'inspector I ms, inspector + executor E ms, total T ms,\n"
    "  with transfers X ms' (device times; the GPU finds the levels and runs them in one pass, inspecting later\n"
    "  iterations while earlier ones execute); --sequential 'sequential loop T ms'.\n"
    "Non-finite values: a matrix value, b or A0 holding NaN or an infinity is refused (exit 1), naming how many and\n"
    "  where the first is.\n"
    "Exit codes: 0 success, 1 bad input (malformed or truncated .mtx, array format, non-square, a missing or zero\n"
    "  diagonal entry, NaN or infinite values, an entry outside the triangle with --require-triangular, a vector of the wrong length, an\n"
    "  index out of range, mismatched lengths), 2 bad command line (also --coefficients that do not fit the body\n"
    "  and the reads), 3 device failure (or --backend gpu without a GPU), 4 out of memory (also refused before any\n"
    "  work when the size line announces more than the memory available holds), 5 output could not be written.\n"
    "  A failed run leaves no output file.\n";

}  // namespace

levels_command::levels_command(CLI::App& app)
    : command(app, "levels", "Sparse triangular solves and indirect loops by run-time levels (inspector-executor)") {
    add_input("--matrix", matrix_, "--matrix", "Matrix Market file (.mtx): solve with its lower (default) or upper triangle");
    add_input("--rhs", rhs_, "--rhs", "Right-hand side b (.npy vector) [default: all ones]");
    add_output("-o,--out", output_, "-o", "The solution x (or the loop's final array) as float64 .npy (written atomically)");
    auto* lo = sub_->add_flag("--lower", lower_, "T = the lower triangle of A, diagonal included (the default)");
    auto* up = sub_->add_flag("--upper", upper_, "T = the upper triangle of A, diagonal included");
    lo->excludes(up);
    sub_->add_flag("--require-triangular", require_triangular_,
                   "Refuse (exit 1) a matrix with entries outside the triangle instead of dropping them");
    add_output("--stats", stats_, "--stats", "Write the level widths (TSV: level, width)");
    sub_->add_option("--repeat", repeat_, "Solve R times reusing the analysis; report the time per solve")
        ->check(CLI::Range(1LL, 1000000LL))
        ->capture_default_str();
    sub_->add_option("--schedule", schedule_,
                     "GPU solve: level_p2p (default), syncfree, syncfree_by_level, level_sync or level_grid")
        ->check(CLI::IsMember({"level_p2p", "syncfree", "syncfree_by_level", "level_sync", "level_grid"}))
        ->capture_default_str();
    add_input("--writes", writes_, "--writes", "Generic loop: write indices W (.npy, integers, shape (n,))");
    add_input("--reads", reads_, "--reads", "Generic loop: read indices R (.npy, integers, (n,) or (n, k)) [default: none]");
    add_input("--array", array_, "--array", "Generic loop: the initial array A0 (.npy) [default: all ones]");
    sub_->add_option("--locations", locations_, "Generic loop: size of A without --array [default: 1 + the largest index]")
        ->check(CLI::Range(1LL, (1LL << 31) - 1));
    sub_->add_option("--body", body_, "Generic loop body: sum, max, fmod, wsum or dot (see below)")
        ->check(CLI::IsMember({"sum", "max", "fmod", "wsum", "dot"}))
        ->capture_default_str();
    sub_->add_option("--coefficients", coefficients_,
                     "The body's coefficients, comma-separated (wsum: one per read; dot: alpha,beta)")
        ->delimiter(',');
    sub_->add_flag("--pipeline", pipeline_,
                   "CPU loops: inspect the next chunk of iterations while the threads run this one (the paper's software "
                   "pipelining; one of the -t threads inspects)");
    sub_->add_flag("--sequential", sequential_,
                   "Run the plain sequential loop or substitution (one thread, no levels): the timed reference");
    backend_.add_options(sub_);
    sub_->footer(levels_footer);
}

int levels_command::run(const std::string&) {
    if (matrix_.empty() == writes_.empty())
        throw usage_error("give either --matrix A.mtx (a triangular solve) or --writes W.npy (a generic loop)");
    if (output_.empty() && stats_.empty()) throw usage_error("nothing to do: give -o OUT.npy and/or --stats FILE.tsv");
    if (!output_.empty() && (output_.size() < 4 || output_.substr(output_.size() - 4) != ".npy"))
        throw usage_error("the result is written as .npy; name the output '" + output_ + "' .npy");
    io::require_extension(stats_, "--stats", {"tsv", "txt"}, "the level widths are tab-separated text");
    if (!matrix_.empty() && (!writes_.empty() || !reads_.empty() || !array_.empty() || locations_ != 0))
        throw usage_error("--reads, --array and --locations belong to a generic loop (--writes), not to --matrix");
    if (!writes_.empty() && (!rhs_.empty() || lower_ || upper_ || require_triangular_))
        throw usage_error("--rhs, --lower, --upper and --require-triangular belong to a solve (--matrix)");
    if (!writes_.empty() && !array_.empty() && locations_ != 0)
        throw usage_error("--locations is the size of A without --array; the array gives its own size");
    if (!matrix_.empty() && (!coefficients_.empty() || sub_->count("--body") > 0))
        throw usage_error("--body and --coefficients belong to a generic loop (--writes), not to --matrix");
    if (sequential_ && backend_.name == "gpu") throw usage_error("--sequential runs on the CPU; drop --backend gpu");
    if (sequential_ && !stats_.empty()) throw usage_error("--sequential computes no levels; drop --stats");
    if (pipeline_ && (sequential_ || !matrix_.empty() || backend_.name == "gpu"))
        throw usage_error("--pipeline applies to loops (--writes) on the CPU backend");
    return matrix_.empty() ? run_loop() : run_solve();
}

int levels_command::run_solve() {
    const bool gpu = !sequential_ && backend_.use_gpu();
    std::optional<io::output_file> out, stats;
    if (!output_.empty()) out.emplace(output_);
    if (!stats_.empty()) stats.emplace(stats_);
    const levels::csr_matrix t = read_triangle();
    const std::vector<double> b = rhs_.empty() ? std::vector<double>(static_cast<std::size_t>(t.rows), 1.0) : io::read_vector(rhs_, t.rows);
    const levels::triangle part = upper_ ? levels::triangle::upper : levels::triangle::lower;
    const levels::solve_run run = sequential_ ? levels::solve_sequentially(t, part, b, repeat_)
                                  : gpu       ? gpu::solve_on_gpu(t, part, b, repeat_, schedule_)
                                              : levels::solve_on_cpu(t, part, b, repeat_, backend_.threads);
    numerics::refuse_nonfinite(run.x, matrix_ + ": the solution x",
                               "the solve overflowed (a diagonal entry near 0, or huge entries); nothing was written");
    if (!backend_.quiet) std::cerr << io::solve_report(matrix_, upper_, t, run, sequential_, repeat_, schedule_);
    if (stats) {
        io::write_stats(*stats, run.widths, t.rows, std::string(upper_ ? "upper" : "lower") + " triangle of " + matrix_);
    }
    if (out) io::write_vector(*out, run.x);
    io::commit_all({stats ? &*stats : nullptr, out ? &*out : nullptr});  // a failure to write one leaves neither
    return 0;
}

levels::csr_matrix levels_command::read_triangle() const {
    const levels::triangle part = upper_ ? levels::triangle::upper : levels::triangle::lower;
    io::dropped_entries dropped;
    levels::csr_matrix t = io::read_matrix_market_triangle(matrix_, part, require_triangular_, &dropped);
    if (dropped.count > 0 && !backend_.quiet) std::cerr << io::dropped_entries_warning(matrix_, dropped, part);
    return t;
}

levels::indirect_loop levels_command::read_loop(std::vector<double>& a) const {
    levels::indirect_loop loop;
    io::set_loop_writes(loop, io::read_npy(writes_), writes_);
    if (!reads_.empty()) io::set_loop_reads(loop, io::read_npy(reads_), reads_);
    if (!array_.empty()) a = io::read_vector(array_, -1);
    io::set_loop_locations(loop, array_.empty() ? -1 : static_cast<std::int64_t>(a.size()), locations_, writes_);
    if (array_.empty()) a.assign(static_cast<std::size_t>(loop.locations), 1.0);  // checked: 1 to 2^31 - 1
    return loop;
}

int levels_command::run_loop() {
    const bool gpu = !sequential_ && backend_.use_gpu();
    std::optional<io::output_file> out, stats;
    if (!output_.empty()) out.emplace(output_);
    if (!stats_.empty()) stats.emplace(stats_);

    std::vector<double> a;
    const levels::indirect_loop loop = read_loop(a);
    const auto n = static_cast<std::int64_t>(loop.writes.size());
    const levels::body_spec body = levels::body_of(body_, coefficients_, loop.reads_per_iteration);

    // Sequentially, on the GPU, by levels on the CPU, or pipelined: what it took as text, and the levels' widths.
    std::vector<std::int64_t> widths;
    const std::string times =
        gpu ? gpu::run_loop_on_gpu(loop, body, a, stats.has_value() || !backend_.quiet, widths)
            : levels::run_loop_on_cpu(loop, body, a, sequential_, pipeline_, backend_.threads, widths);
    numerics::refuse_nonfinite(a, writes_ + ": the loop's final array",
                               "the loop's values overflowed (or a body divided by 0); nothing was written");
    if (!backend_.quiet)
        std::cerr << "swgpu: levels: loop of " << loop.reads_per_iteration << " reads per iteration over "
                  << loop.locations << " locations, "
                  << (sequential_ ? std::to_string(n) + " iterations" : io::levels_summary(n, widths)) << "; " << times << '\n';
    if (stats) {
        io::write_stats(*stats, widths, n, std::string("loop ") + writes_);
    }
    if (out) io::write_vector(*out, a);
    io::commit_all({stats ? &*stats : nullptr, out ? &*out : nullptr});  // a failure to write one leaves neither
    return 0;
}

}  // namespace swgpu::app
