// The GPU box filter (gpu/numerics/box_filter.hpp) against NPP's nppiFilterBoxBorder (8u C1R and 32f C1R, loaded at run
// time from libnppif when the host has it, skipped otherwise) and the device-to-device copy of the same bytes.
// Everything is device-resident; each time is the median of `reps` launches (CUDA events).
//
//   bench_box_filter_gpu [--size 4096] [--radius 5] [--reps 21]
//
// NPP has no BORDER_REFLECT_101 (the filter's border, OpenCV's default): it runs with NPP_BORDER_REPLICATE, so only the
// speeds compare; the pixels at least R from every edge are the same window means under either border, and the
// lines say how many of those differ (NPP's rounding of uint8 means; float sums in float). The float32 time includes
// the pass that finds the image's exponent range (and NaN) and the plan kernel; the input is random 24-bit fractions
// in [0, 1). The last lines start with "summary:".
#include <dlfcn.h>

#include "tests/gpu/bench/npp_runtime.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/numerics/box_filter.hpp"

using namespace swgpu;
using namespace swgpu::gpu;

namespace {

template <class F>
float median_ms(int reps, cudaStream_t s, F&& launch) {
    cuda_event a, b;
    launch();  // warm-up
    SWGPU_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<float> ms;
    for (int r = 0; r < reps; ++r) {
        a.record(s);
        launch();
        b.record(s);
        b.synchronize();
        ms.push_back(b.since(a));
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

__device__ unsigned hash(std::size_t k, unsigned seed) {
    unsigned x = static_cast<unsigned>(k) * 2654435761u ^ seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    return x;
}
__global__ void fill_u8(unsigned char* p, std::size_t n) {
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n; k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        p[k] = static_cast<unsigned char>(hash(k, 14u));
}
__global__ void fill_f32(float* p, std::size_t n) {
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n; k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        p[k] = static_cast<float>(hash(k, 15u) >> 8) * (1.0f / 16777216.0f);
}
// Interior pixels (at least r from every edge) where a and b differ (floats: by more than `tol` relative).
template <class T>
__global__ void interior_differences(const T* a, const T* b, int n, int r, double tol, unsigned long long* bad) {
    unsigned long long local = 0;
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < static_cast<std::size_t>(n) * n;
         k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const int i = static_cast<int>(k / n), j = static_cast<int>(k % n);
        if (i < r || j < r || i >= n - r || j >= n - r) continue;
        const double x = a[k], y = b[k];
        local += tol == 0 ? x != y : fabs(x - y) > tol * fabs(y);
    }
    if (local) atomicAdd(bad, local);
}
template <class T>
unsigned long long interior_diff(const T* a, const T* b, int n, int r, double tol, cudaStream_t s) {
    device_buffer<unsigned long long> bad(1);
    bad.zero(s);
    interior_differences<<<1024, 256, 0, s>>>(a, b, n, r, tol, bad.data());
    SWGPU_CUDA_CHECK_LAUNCH("interior_differences");
    return bad.download(1, s)[0];
}

// NPP's box filter, loaded at run time (npp_runtime.hpp).
using bench::npp_context;
using bench::npp_size;
using bench::npp_stream_context;
struct npp_point {
    int x, y;
};
constexpr int npp_border_replicate = 2;  // NppiBorderType: UNDEFINED 0, CONSTANT 1, REPLICATE 2, WRAP 3, MIRROR 4
using npp_box_8u = int (*)(const unsigned char*, int, npp_size, npp_point, unsigned char*, int, npp_size, npp_size, npp_point,
                           int, npp_stream_context);
using npp_box_32f = int (*)(const float*, int, npp_size, npp_point, float*, int, npp_size, npp_size, npp_point, int,
                            npp_stream_context);

struct npp_library {
    npp_box_8u u8 = nullptr;
    npp_box_32f f32 = nullptr;
    std::string from;
    npp_library() {
        if (void* h = bench::open_npp("nppif", "nppiFilterBoxBorder_8u_C1R_Ctx", from)) {
            u8 = reinterpret_cast<npp_box_8u>(dlsym(h, "nppiFilterBoxBorder_8u_C1R_Ctx"));
            f32 = reinterpret_cast<npp_box_32f>(dlsym(h, "nppiFilterBoxBorder_32f_C1R_Ctx"));
        }
    }
};

void row(const char* what, double ms, double copy_ms, const char* note = "") {
    std::printf("  %-48s %9.4f ms  %6.1f %% of copy  %s\n", what, ms, 100.0 * copy_ms / ms, note);
}

}  // namespace

int main(int argc, char** argv) {
    int size = 4096, radius = 5, reps = 21;
    for (int k = 1; k < argc; ++k) {
        const std::string a = argv[k];
        auto next = [&] { return k + 1 < argc ? std::atoi(argv[++k]) : 0; };
        if (a == "--size") size = next();
        else if (a == "--radius") radius = next();
        else if (a == "--reps") reps = next();
        else {
            std::fprintf(stderr, "usage: bench_box_filter_gpu [--size N] [--radius R] [--reps K]\n");
            return 2;
        }
    }
    try {
        cudaDeviceProp prop{};
        SWGPU_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        std::printf("# bench_box_filter_gpu on %s (%d SMs): %d^2, radius %d (window %d^2), median of %d\n", prop.name,
                    prop.multiProcessorCount, size, radius, 2 * radius + 1, reps);
        cuda_stream stream;
        const cudaStream_t s = stream.get();
        const auto n = static_cast<std::size_t>(size) * size;
        device_buffer<unsigned char> ws(box_filter_workspace_bytes());
        npp_library npp;
        const auto ctx = npp_context(s);
        const npp_size full{size, size};
        const npp_point origin{0, 0}, anchor{radius, radius};
        const npp_size mask{2 * radius + 1, 2 * radius + 1};
        double u8_ours = 0, u8_npp = 0, f32_ours = 0, f32_npp = 0;
        if (!npp.from.empty()) std::printf("  (NPP from %s, NPP_BORDER_REPLICATE; swgpu BORDER_REFLECT_101)\n", npp.from.c_str());
        else std::printf("  NPP: libnppif not found on this host (set SWGPU_NPP_DIR); skipped\n");
        {
            device_buffer<unsigned char> in(n), out(n), ref(n);
            fill_u8<<<1024, 256, 0, s>>>(in.data(), n);
            SWGPU_CUDA_CHECK_LAUNCH("fill_u8");
            const float copy = median_ms(reps, s, [&] { SWGPU_CUDA_CHECK(cudaMemcpyAsync(out.data(), in.data(), n, cudaMemcpyDeviceToDevice, s)); });
            std::printf("uint8:\n");
            row("copy (cudaMemcpy device to device)", copy, copy);
            u8_ours = median_ms(reps, s, [&] { box_filter_device(sat::dtype::u8, in.data(), out.data(), size, size, 1, radius, ws.data(), s); });
            row("swgpu box filter (exact, REFLECT_101)", u8_ours, copy);
            if (npp.u8) {
                u8_npp = median_ms(reps, s, [&] {
                    const int st = npp.u8(in.data(), size, full, origin, ref.data(), size, full, mask, anchor, npp_border_replicate, ctx);
                    if (st != 0) throw runtime_failure("nppiFilterBoxBorder_8u_C1R_Ctx returned " + std::to_string(st));
                });
                const auto bad = interior_diff(out.data(), ref.data(), size, radius, 0, s);
                const std::string note = std::to_string(bad) + " interior pixels differ";
                row("NPP nppiFilterBoxBorder_8u_C1R (REPLICATE)", u8_npp, copy, note.c_str());
            }
        }
        {
            device_buffer<float> in(n), out(n), ref(n);
            fill_f32<<<1024, 256, 0, s>>>(in.data(), n);
            SWGPU_CUDA_CHECK_LAUNCH("fill_f32");
            const float copy = median_ms(reps, s, [&] { SWGPU_CUDA_CHECK(cudaMemcpyAsync(out.data(), in.data(), n * 4, cudaMemcpyDeviceToDevice, s)); });
            std::printf("float32:\n");
            row("copy (cudaMemcpy device to device)", copy, copy);
            f32_ours = median_ms(reps, s, [&] { box_filter_device(sat::dtype::f32, in.data(), out.data(), size, size, 1, radius, ws.data(), s); });
            if (!box_filter_input_was_finite(sat::dtype::f32, ws.data(), s)) throw runtime_failure("non-finite input?");
            row("swgpu box filter (exact sums, REFLECT_101)", f32_ours, copy, "with the exponent-range pass");
            if (npp.f32) {
                f32_npp = median_ms(reps, s, [&] {
                    const int st = npp.f32(in.data(), size * 4, full, origin, ref.data(), size * 4, full, mask, anchor, npp_border_replicate, ctx);
                    if (st != 0) throw runtime_failure("nppiFilterBoxBorder_32f_C1R_Ctx returned " + std::to_string(st));
                });
                const auto bad = interior_diff(out.data(), ref.data(), size, radius, 0, s);
                const auto far = interior_diff(out.data(), ref.data(), size, radius, 1e-5, s);
                const std::string note = std::to_string(bad) + " interior pixels differ, " + std::to_string(far) + " by more than 1e-5 relative";
                row("NPP nppiFilterBoxBorder_32f_C1R (REPLICATE)", f32_npp, copy, note.c_str());
            }
        }
        std::printf("\nsummary: box filter %d^2 radius %d: uint8 %.4f ms", size, radius, u8_ours);
        if (u8_npp > 0) std::printf(" (%.2fx NPP 8u C1R %.4f ms)", u8_npp / u8_ours, u8_npp);
        std::printf("; float32 %.4f ms", f32_ours);
        if (f32_npp > 0) std::printf(" (%.2fx NPP 32f C1R %.4f ms)", f32_npp / f32_ours, f32_npp);
        std::printf("\n");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_box_filter_gpu: %s\n", e.what());
        return 1;
    }
    return 0;
}
