#include "app/numerics/sweep3d_command.hpp"

#include <cstdio>
#include <optional>
#include <span>
#include <vector>

#include "core/error.hpp"
#include "core/numerics/finite.hpp"
#include "core/numerics/sat.hpp"
#include "core/numerics/sweep3d.hpp"
#include "gpu/numerics/sweep3d.hpp"
#include "io/memory.hpp"
#include "io/output_file.hpp"
#include "io/arrays/npy.hpp"

namespace swgpu::app {

namespace {

const char* const sweep3d_footer =
    "fmod kernel: an N x N x N grid, A[i][j][k] initially ((i + 2j + 3k) mod 10) / 10, swept from (0, 0, 0); each\n"
    "  point does L times r = fmod(((r + A[i-1][j][k]) + A[i][j-1][k]) + A[i][j][k-1], C) with its neighbours' final\n"
    "  values (0 outside the grid). Bit for bit the same on every backend.\n"
    "dd kernel: the diamond-difference discrete-ordinates sweep of one octant, --angles directions, unit cells, total\n"
    "  cross-section --sigma, uniform --source; the grid is the scalar flux (the mean of the angular fluxes).\n"
    "Output: one line 'checksum C time T s' (the grid's sum in double, in index order; the sweep's time), and with -o\n"
    "  the grid as .npy, shape (N, N, N), C order [i][j][k], float32 (single) or float64 (double).\n"
    "  The A directions (mu, eta, xi) of the octant: xi = (a + 1/2) / A, azimuth phi = (1/2 + (7a mod A)) / A * pi/2,\n"
    "  mu = sqrt(1 - xi^2) cos phi, eta = sqrt(1 - xi^2) sin phi, weights 1/A (not a level-symmetric S_N set).\n"
    "  --loops and --c belong to fmod, --angles, --sigma and --source to dd: given to the other kernel, exit 2.\n"
    "Exit codes: 0 success, 2 bad command line, 3 device failure (or --backend gpu without a GPU), 4 out of memory,\n"
    "  5 output could not be written. A failed run leaves no output file.\n";

template <class T>
int run_typed(const sweep3d::fmod_params* fp, const sweep3d::dd_params* dp, bool gpu, unsigned threads, long long tile,
              const std::string& output) {
    std::optional<io::output_file> out;
    if (!output.empty()) out.emplace(output);  // an unwritable destination fails before the sweep
    std::vector<T> grid;
    gpu::sweep_report report;
    double seconds = 0;
    if (gpu) {
        grid = fp ? gpu::sweep3d_fmod<T>(*fp, &report) : gpu::sweep3d_dd<T>(*dp, &report);
        seconds = report.kernel_ms / 1e3;
    } else {
        // the grid allocated and touched before the clock starts (the GPU's time counts its steps only)
        const index_t cells = fp ? fp->n : dp->n;
        grid.assign(static_cast<std::size_t>(cells * cells * cells), T(0));
        seconds = sweep3d::sweep_on_cpu<T>(fp, dp, threads, tile, std::span<T>(grid));
    }
    numerics::refuse_nonfinite(std::span<const T>(grid), "the grid",
                               fp ? "--c is too small for --precision (the remainders overflow); nothing was written"
                                  : "--source and --sigma give fluxes beyond the type's range; nothing was written");
    std::printf("checksum %.17g time %.6f s\n", sweep3d::checksum(grid), seconds);
    if (out) {
        io::write_cube(*out, std::span<const T>(grid), fp ? fp->n : dp->n);
        out->commit();
    }
    return 0;
}

}  // namespace

sweep3d_command::sweep3d_command(CLI::App& app)
    : command(app, "sweep3d", "The 3-D wavefront sweep (fmod recurrence, or diamond-difference transport)") {
    sub_->add_option("--n", n_, "Grid size N (N x N x N points)")->required();
    sub_->add_option("--loops", loops_, "fmod kernel: L updates per point")->capture_default_str();
    sub_->add_option("--precision", precision_, "single (float32) or double (float64)")
        ->check(CLI::IsMember({"single", "double"}))
        ->capture_default_str();
    sub_->add_option("--c", c_, "fmod kernel: the modulus C")->capture_default_str();
    sub_->add_option("--kernel", kernel_, "fmod (the demonstrator) or dd (diamond-difference sweep of one octant)")
        ->check(CLI::IsMember({"fmod", "dd"}))
        ->capture_default_str();
    sub_->add_option("--angles", angles_, "dd kernel: directions in the octant (1 to 64)")->capture_default_str();
    sub_->add_option("--sigma", sigma_, "dd kernel: total cross-section")->capture_default_str();
    sub_->add_option("--source", source_, "dd kernel: uniform source")->capture_default_str();
    sub_->add_option("--tile", tile_, "CPU: edge of the 3-D tiles run in wavefront order on the threads")
        ->capture_default_str();
    add_output("-o,--out", output_, "-o", "Write the grid as .npy (N, N, N), written atomically");
    backend_.add_options(sub_);
    sub_->footer(sweep3d_footer);
}

int sweep3d_command::run(const std::string&) {
    if (tile_ < 1) throw usage_error("--tile must be at least 1");
    // Options of the other kernel would be ignored without a word: refused.
    for (const char* o : {"--loops", "--c"})
        if (kernel_ == "dd" && sub_->count(o) > 0)
            throw usage_error(std::string(o) + " is for --kernel fmod; the dd kernel takes --angles, --sigma and --source");
    for (const char* o : {"--angles", "--sigma", "--source"})
        if (kernel_ == "fmod" && sub_->count(o) > 0)
            throw usage_error(std::string(o) + " is for --kernel dd; the fmod kernel takes --loops and --c");
    io::require_extension(output_, "-o", {"npy"}, "the grid is written as .npy");
    sweep3d::fmod_params fp{n_, loops_, c_};
    sweep3d::dd_params dp{n_, angles_, sigma_, source_};
    const bool fmod = kernel_ == "fmod";
    if (fmod) sweep3d::check(fp);
    else sweep3d::check(dp);
    // The host's grid, its copy for -o and dd's face fluxes: refused before any of it is taken when it cannot fit.
    io::check_memory(sweep3d::host_memory(n_, precision_ == "single" ? 4 : 8, !output_.empty(), fmod ? 0 : angles_));
    const bool gpu = backend_.use_gpu();
    const auto* f = fmod ? &fp : nullptr;
    const auto* d = fmod ? nullptr : &dp;
    return precision_ == "single" ? run_typed<float>(f, d, gpu, backend_.threads, tile_, output_)
                                  : run_typed<double>(f, d, gpu, backend_.threads, tile_, output_);
}

}  // namespace swgpu::app
