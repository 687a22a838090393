// Runs the GPU tests; exit code 77 (skipped) when no CUDA device is usable.
#include <cstdio>
#include <cstring>
#include <exception>

#include "gpu/gpu.hpp"
#include "tests/gpu/harness.hpp"

int main(int argc, char** argv) {
    using namespace swgpu::gputest;
    if (!swgpu::gpu::available()) {
        std::printf("no CUDA device: GPU tests skipped\n");
        return 77;
    }
    const char* filter = argc > 1 ? argv[1] : nullptr;
    int run = 0;
    for (const auto& t : registry()) {
        if (filter && !std::strstr(t.name, filter)) continue;
        const int before = failures();
        ++run;
        try {
            t.body();
        } catch (const require_failed&) {
        } catch (const std::exception& e) {
            report(__FILE__, __LINE__, std::string(t.name) + ": exception: " + e.what());
        }
        std::printf("%s %s\n", failures() == before ? "ok  " : "FAIL", t.name);
        std::fflush(stdout);
    }
    std::printf("%d tests, %d failed checks\n", run, failures());
    return failures() == 0 ? 0 : 1;
}
