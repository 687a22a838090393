// The conformance suite's backend promise (docs/conventions.md: results independent of the backend), looped over the
// registry of tests/conventions_registry.hpp: every subcommand with a backend writes the same bytes on the GPU as on
// the CPU for its large input. The other promises are checked on every machine by tests/test_conventions.cpp.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/conventions_registry.hpp"
#include "tests/gpu/harness.hpp"

namespace {

namespace fs = std::filesystem;

std::string bytes_of(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Runs swgpu `args` in `dir`; its exit code.
int run_in(const fs::path& dir, const std::string& args) {
    const std::string cmd = "cd '" + dir.string() + "' && '" + swgpu::gputest::program() + "' " + args +
                            " >/dev/null 2>'" + (dir / "err.txt").string() + "'";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

GPU_TEST("conventions: every subcommand with a backend writes the GPU's bytes equal to the CPU's (registry rows)") {
    for (const auto& c : swgpu::testing::registry()) {
        if (!c.has_backend) continue;
        const fs::path dir = fs::temp_directory_path() / ("swgpu_gpu_conv_" + c.name + "_" + std::to_string(::getpid()));
        fs::create_directories(dir);
        c.make_inputs(dir, true);
        const std::string args = !c.backend_args.empty() ? c.backend_args : !c.large_args.empty() ? c.large_args : c.args;
        const int cpu = run_in(dir, swgpu::testing::filled(args, "cpu" + c.out, "cpu"));
        const int gpu = run_in(dir, swgpu::testing::filled(args, "gpu" + c.out, "gpu"));
        std::fprintf(stderr, "  %s: cpu exit %d, gpu exit %d\n", c.name.c_str(), cpu, gpu);
        CHECK_EQ(cpu, 0);
        CHECK_EQ(gpu, 0);
        const std::string a = bytes_of(dir / ("cpu" + c.out + c.written_suffix));
        const std::string b = bytes_of(dir / ("gpu" + c.out + c.written_suffix));
        CHECK(a.size() > 100);
        if (a != b) std::fprintf(stderr, "  %s: the GPU's bytes differ from the CPU's\n", c.name.c_str());
        CHECK(a == b);
        fs::remove_all(dir);
    }
}
