// Runs the GPU tests; exit code 77 (skipped) when no CUDA device is usable.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/gpu.hpp"
#include "tests/gpu/harness.hpp"

int main(int argc, char** argv) {
    using namespace swgpu::gputest;
    if (!swgpu::gpu::available()) {
        std::printf("no CUDA device: GPU tests skipped\n");
        return 77;
    }
    // Missing inputs would fail dozens of checks; one line says what is missing instead.
    std::string missing;
    const std::string src = source_dir();
    for (const char* f : required_files)
        if (!std::filesystem::exists(std::filesystem::path(src) / f)) missing += std::string(missing.empty() ? "" : ", ") + f;
    if (!missing.empty()) {
        std::fprintf(stderr,
                     "swgpu_gpu_tests: test inputs not found under %s: %s (run from the source tree, or set "
                     "SWGPU_SOURCE_DIR to it)\n",
                     src.c_str(), missing.c_str());
        return 2;
    }
    if (program().empty()) {
        std::fprintf(stderr,
                     "swgpu_gpu_tests: the swgpu program was not found beside this executable or in the build tree "
                     "(set SWGPU_BINARY to it)\n");
        return 2;
    }
    // One optional argument: substrings of the names of the tests to run, separated by '|' (a test runs when its name
    // contains any of them). Anything else is refused, so that a mistyped option never reads as a clean run of nothing.
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
        std::fprintf(stderr, "usage: swgpu_gpu_tests [NAME_SUBSTRING[|NAME_SUBSTRING...]]\n");
        return 2;
    }
    const char* filter = argc > 1 ? argv[1] : nullptr;
    std::vector<std::string> parts;
    if (filter)
        for (std::string_view rest = filter;;) {
            const auto bar = rest.find('|');
            parts.emplace_back(rest.substr(0, bar));
            if (bar == std::string_view::npos) break;
            rest.remove_prefix(bar + 1);
        }
    const auto chosen = [&](const char* name) {
        for (const auto& p : parts)
            if (std::strstr(name, p.c_str())) return true;
        return parts.empty();
    };
    int run = 0;
    for (const auto& t : registry()) {
        if (!chosen(t.name)) continue;
        const int before = failures();
        ++run;
        const auto start = std::chrono::steady_clock::now();
        try {
            t.body();
        } catch (const require_failed&) {
        } catch (const std::exception& e) {
            report(__FILE__, __LINE__, std::string(t.name) + ": exception: " + e.what());
        }
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("%s %s (%.2f s)\n", failures() == before ? "ok  " : "FAIL", t.name, secs);
        std::fflush(stdout);
    }
    std::printf("%d tests, %d failed checks\n", run, failures());
    if (run == 0) {
        std::fprintf(stderr, "swgpu_gpu_tests: no test name contains \"%s\"\n", filter ? filter : "");
        return 2;
    }
    return failures() == 0 ? 0 : 1;
}
