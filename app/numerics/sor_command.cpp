#include "app/numerics/sor_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "core/numerics/sat.hpp"
#include "core/numerics/sor.hpp"
#include "core/thread_pool.hpp"
#include "gpu/numerics/sor.hpp"
#include "io/memory.hpp"
#include "io/arrays/reports.hpp"
#include "io/output_file.hpp"
#include "io/arrays/npy.hpp"

namespace swgpu::app {

namespace {

const char* const sor_footer =
    "Problem: -lap u = f on an N x N grid, h = 1/(N-1), u given on the four edges (the boundary array's edges; its\n"
    "  interior is ignored); 5-point stencil. F.npy and G.npy: (N, N) float64. --model N: f = 2 pi^2 sin(pi x)\n"
    "  sin(pi y), zero boundary (exact solution sin(pi x) sin(pi y)). --problem NAME --size N: a built-in problem:\n"
    "  model (as --model), rough (zero boundary, f = A w for w uniform in [0, 1): Laplace's equation from a random\n"
    "  start), signs (w = +-1 at random), blocks (w = +-1 at random on 8 x 8 blocks).\n"
    "Methods: lex (SOR in lexicographic order), redblack, ssor (a forward and a backward lexicographic sweep per\n"
    "  iteration), mlssor (K = --layers forward sweeps, then K backward ones, per iteration). mlssor --subdomain AxB:\n"
    "  the K-layer paper's parallel MLSSOR, subdomains of A x B points moving one point per layer, each cut into 2 x 2\n"
    "  tiles run in parallel step by step (K defaults to min(A, B) / 2, the largest allowed; 2K <= A, B);\n"
    "  --forward-only: both halves sweep forward. --omega defaults to 2 / (1 + sin(pi h)), the optimum of SOR for the\n"
    "  model problem.\n"
    "Stops when ||b - A u|| / ||b|| <= --tol (b: f plus the boundary values next to each interior point over h^2, the\n"
    "  whole right-hand side; absolute only when b = 0), when --stagnation sweeps bring no 0.1 % fall of the smallest\n"
    "  residual (a round-off floor above --tol), or after --max-sweeps.\n"
    "Counts are sweeps over the grid (--max-sweeps, --stagnation, the output): an iteration of ssor is 2 sweeps, of\n"
    "  mlssor 2K; the residual is checked after each iteration, and a run stops at the end of the iteration that\n"
    "  reaches --max-sweeps.\n"
    "Output: U.npy (N, N) float64, boundary included; --history FILE.tsv: sweep, iteration, residual, seconds (TSV\n"
    "  with a header line; seconds from the start of the sweeps); --plot FILE.svg: the residual against sweeps and\n"
    "  against time, with the tolerance. One line on stdout: method, sweeps, iterations, residual, time (and the\n"
    "  threads on the CPU: -t 0 takes one thread for N below the measured tuning value sor.cpu_one_thread_below).\n"
    "Exit codes: 0 converged, 6 not converged (stagnated or --max-sweeps reached: U, --history and --plot are still\n"
    "  written, and stderr says why it stopped), 1 bad input (not (N, N) float64, N < 3, NaN or an infinity in\n"
    "  F or G: refused naming how many and where the first is), 2 bad command line (also --omega 0, --model 0),\n"
    "  3 device failure, 4 out of memory (also refused before any work when the grid would not fit the memory\n"
    "  available), 5 output could not be written.\n";

}  // namespace

sor_command::sor_command(CLI::App& app)
    : command(app, "sor", "SOR for the 2-D Poisson problem: lexicographic, red-black or symmetric") {
    add_input("--rhs", rhs_, "--rhs", "f as an (N, N) float64 .npy");
    add_input("--boundary", boundary_, "--boundary", "u on the edges, as an (N, N) float64 .npy (its interior is ignored)");
    sub_->add_option("--model", model_, "Solve the model problem on an N x N grid instead of --rhs/--boundary");
    sub_->add_option("--problem", problem_, "A built-in problem: model, rough, signs or blocks (with --size N)");
    sub_->add_option("--size", size_, "The grid of --problem: N x N points");
    add_output("-o,--out", output_, "-o", "The solution as an (N, N) float64 .npy, written atomically");
    sub_->add_option("--method", method_, "lex, redblack, ssor or mlssor")
        ->check(CLI::IsMember({"lex", "redblack", "ssor", "mlssor"}))
        ->capture_default_str();
    sub_->add_option("--omega", omega_, "Relaxation factor in (0, 2) [default: 2 / (1 + sin(pi h))]");
    layers_option_ = sub_->add_option("--layers", layers_, "mlssor: K, the forward (then backward) sweeps of one iteration")
                         ->capture_default_str();
    sub_->add_option("--subdomain", subdomain_,
                     "mlssor: the K-layer paper's parallel MLSSOR on subdomains of AxB points (K defaults to min(A,B)/2)");
    sub_->add_flag("--forward-only", forward_only_, "mlssor: both halves of an iteration sweep forward");
    sub_->add_option("--tol", tol_, "Stop when the relative residual is at most this")->capture_default_str();
    sub_->add_option("--max-sweeps", max_sweeps_, "Stop after this many sweeps")->capture_default_str();
    sub_->add_option("--stagnation", stagnation_,
                     "Stop when this many sweeps bring no 0.1 % fall of the smallest residual (0: never)")
        ->capture_default_str();
    add_output("--history", history_, "--history", "Write sweep, iteration, residual and seconds as TSV (.tsv or .txt)");
    add_output("--plot", plot_, "--plot", "Write an SVG plot (.svg) of the residual against sweeps and against time");
    backend_.add_options(sub_);
    sub_->footer(sor_footer);
}

// The problem: --model N, --problem NAME --size N, or --rhs and --boundary arrays.
sor::problem sor_command::read_problem() const {
    // A value given counts as given, 0 included (then refused as any size below 3).
    const bool model = sub_->count("--model") > 0, size = sub_->count("--size") > 0;
    const int inputs = (model ? 1 : 0) + (!problem_.empty() ? 1 : 0) + (!rhs_.empty() || !boundary_.empty() ? 1 : 0);
    if (inputs > 1) throw usage_error("give one of --model N, --problem NAME --size N, or --rhs and --boundary");
    if (!model && problem_.empty() && (rhs_.empty() || boundary_.empty()))
        throw usage_error("give --rhs F.npy and --boundary G.npy (or --model N, or --problem NAME --size N)");
    if (!problem_.empty() && !size) throw usage_error("--problem needs --size N");
    if (problem_.empty() && size) throw usage_error("--size is for --problem");
    // The run holds about five float64 arrays of the grid's size at once (f, the initial and the current u, h^2 f and
    // the output); refused before any of them is taken when they cannot fit.
    if (model) {
        if (model_ >= 3) io::check_memory(sor::grid_memory(model_, 5, "--model " + std::to_string(model_), "use a smaller N"));
        return sor::model_problem(model_);
    }
    if (!problem_.empty()) {
        if (size_ >= 3)
            io::check_memory(sor::grid_memory(size_, 5, "--problem " + problem_ + " --size " + std::to_string(size_),
                                              "use a smaller N"));
        return sor::builtin_problem(problem_, size_);
    }
    sor::index_t n = 0, nb = 0;
    auto f = io::read_square_f64(rhs_, n);
    const auto g = io::read_square_f64(boundary_, nb);
    if (n != nb) throw input_error(boundary_, "must have the shape of " + rhs_);
    io::check_memory(sor::grid_memory(n, 4, rhs_, "use a smaller grid"));  // f is read; four more arrays of its size to come
    return sor::from_arrays(n, std::move(f), g, rhs_);
}

// The solver's options from the command line, checked.
sor::options sor_command::solver_options(const sor::problem& p) const {
    const std::optional<double> omega =  // --omega 0 is refused, not absent
        sub_->count("--omega") > 0 ? std::optional(omega_) : std::nullopt;
    sor::options o = sor::options_of(method_, omega, p.n, tol_, max_sweeps_, layers_, stagnation_);
    if (!subdomain_.empty()) sor::set_subdomains(o, subdomain_, layers_option_->count() > 0);
    if (layers_option_->count() && o.m != sor::method::mlssor)
        throw usage_error("--layers is for --method mlssor (" + method_ + " has no layers)");
    o.forward_only = forward_only_;
    sor::check(o);
    return o;
}

int sor_command::run(const std::string&) {
    const sor::problem p = read_problem();
    const sor::options o = solver_options(p);
    io::require_extension(output_, "-o", {"npy"}, "U is written as .npy");
    io::require_extension(history_, "--history", {"tsv", "txt"}, "the history is tab-separated text");
    io::require_extension(plot_, "--plot", {"svg"}, "the plot is SVG");
    // Outputs fail before the solve when they cannot be written.
    std::optional<io::output_file> out, history, plot;
    if (!output_.empty()) out.emplace(output_);
    if (!history_.empty()) history.emplace(history_);
    if (!plot_.empty()) plot.emplace(plot_);

    const bool gpu = backend_.use_gpu();
    sor::solution s;
    gpu::sor_report report;
    unsigned cpu_threads = 0;
    if (gpu) {
        s = gpu::sor_solve(p, o, &report);
    } else {
        thread_pool pool(sor::cpu_threads(p.n, backend_.threads));
        cpu_threads = pool.size();
        s = sor::solve(p, o, pool);
    }
    const int per = sor::sweeps_per_iteration(o);
    std::fputs(io::sor_summary(p.n, o, s, gpu, cpu_threads).c_str(), stdout);
    if (out) io::write_square_f64(*out, s.u, p.n);
    if (history) history->write(io::sor_history_tsv(s, per));
    if (plot) {
        plot->write(io::history_svg(s, per, o.tol,
                                std::string("swgpu sor --method ") + sor::method_name(o.m) +
                                    (o.sub_rows > 0 ? " --subdomain " + subdomain_ : std::string()) + ", N = " +
                                    std::to_string(p.n) + (gpu ? ", GPU" : ", CPU")));
    }
    // Renamed together once all are written: a failure to write one leaves none of them.
    io::commit_all({out ? &*out : nullptr, history ? &*history : nullptr, plot ? &*plot : nullptr});
    if (s.converged) return 0;
    // Not converged: the results are written, and the run says why it stopped (exit code 6).
    std::fprintf(stderr, "swgpu: error: %s%s\n", io::sor_not_converged(s, o).c_str(),
                 out ? ("; U is written to " + output_).c_str() : "");
    return static_cast<int>(exit_code::not_converged);
}

}  // namespace swgpu::app
