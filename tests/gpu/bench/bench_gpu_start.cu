// What a GPU process pays before its first kernel and after its last (docs/performance.md, "Start-up"): the CUDA
// runtime's first call (driver and context), a pool reservation like the one `swgpu align` maps for its alignments,
// one empty kernel, and then the way the process ends. Times are printed from main's entry; the shell's wall clock
// around the program gives the rest (loading the program before main, and the exit after the last line).
//
// usage: bench_gpu_start [--reserve MIB] [--exit normal|reset|quick]
//   normal: return from main (the runtime tears its context down in its exit handlers)
//   reset:  cudaDeviceReset() first, then return
//   quick:  std::_Exit after flushing stdout (the driver releases the context as the process ends)
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

__global__ void empty_kernel(int* out) {
    if (out != nullptr && threadIdx.x == 0) *out = 1;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool ok(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    std::fprintf(stderr, "bench_gpu_start: %s: %s\n", what, cudaGetErrorString(e));
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    const auto t0 = std::chrono::steady_clock::now();
    std::size_t reserve_mib = 0;
    std::string exit_mode = "normal";
    for (int k = 1; k < argc; ++k) {
        if (!std::strcmp(argv[k], "--reserve") && k + 1 < argc) reserve_mib = std::strtoull(argv[++k], nullptr, 10);
        else if (!std::strcmp(argv[k], "--exit") && k + 1 < argc) exit_mode = argv[++k];
        else {
            std::fprintf(stderr, "usage: bench_gpu_start [--reserve MIB] [--exit normal|reset|quick]\n");
            return 2;
        }
    }
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        std::printf("no CUDA device: nothing to measure\n");
        return 77;
    }
    const double counted = ms_since(t0);
    if (!ok(cudaFree(nullptr), "cudaFree(0)")) return 3;
    const double context = ms_since(t0);
    if (reserve_mib > 0) {
        cudaMemPool_t pool{};
        if (!ok(cudaDeviceGetDefaultMemPool(&pool, 0), "pool")) return 3;
        std::uint64_t keep = static_cast<std::uint64_t>(reserve_mib) << 20;
        if (!ok(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "threshold")) return 3;
        void* p = nullptr;
        if (!ok(cudaMallocAsync(&p, keep, nullptr), "reserve") || !ok(cudaFreeAsync(p, nullptr), "free") ||
            !ok(cudaStreamSynchronize(nullptr), "sync"))
            return 3;
    }
    const double reserved = ms_since(t0);
    empty_kernel<<<1, 32>>>(nullptr);
    if (!ok(cudaDeviceSynchronize(), "kernel")) return 3;
    const double kernel = ms_since(t0);
    if (exit_mode == "reset" && !ok(cudaDeviceReset(), "reset")) return 3;
    std::printf("bench_gpu_start: device count %.1f ms, context %.1f ms, reserve %zu MiB %.1f ms, first kernel %.1f ms, "
                "exit '%s' begins at %.1f ms (from main's entry)\n",
                counted, context, reserve_mib, reserved, kernel, exit_mode.c_str(), ms_since(t0));
    std::fflush(stdout);
    if (exit_mode == "quick") std::_Exit(0);
    return 0;
}
