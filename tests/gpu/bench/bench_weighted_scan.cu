// Weighted-scan throughput (the paper's Fig. 8): swgpu's one-pass weighted scan for (max,+), (+,·) and (+,+), every
// tuning entry, against a device-to-device copy of the same fp32 array (the floor: one read, one write) and against
// CUB's DeviceScan with the affine-pair operator (a1,b1)∘(a2,b2) = (a1·a2, b1·a2 + b2) (the weighted scan as a library
// user writes it; fp32 in, pair out) and CUB's plain InclusiveSum.
//
//   bench_weighted_scan [--min-log2 14] [--max-log2 28] [--reps 7] [--entries LIST]
//
// LIST: comma-separated tuning entries to measure (default: all); the default entry of each size is always measured,
// so the summary's "default entry" column is complete. "best entry" is the best of those measured.
// Each time is the median over `reps` batches of back-to-back launches; each launch of a batch reads and writes a
// different part of a 2^26-element pool (256 MiB, five times the H100's L2), so small sizes are not served from L2.
// "% copy" = copy time / scan time at the same n; the copy time is the fastest of three medians.
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/weighted_scan.cuh"

namespace {

using namespace swgpu;
using namespace swgpu::gpu;

struct affine {
    float a, b;
};
struct affine_compose {
    __host__ __device__ affine operator()(const affine& x, const affine& y) const { return {x.a * y.a, x.b * y.a + y.b}; }
};
struct to_affine {
    float w;
    __host__ __device__ affine operator()(float b) const { return {w, b}; }
};

template <class T>
__global__ void fill_kernel(T* p, std::size_t n, unsigned seed) {
    for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n; k += std::size_t(gridDim.x) * blockDim.x) {
        unsigned x = static_cast<unsigned>(k) * 2654435761u ^ seed;
        x ^= x >> 15;
        x *= 2246822519u;
        x ^= x >> 13;
        p[k] = T(int(x % 2001) - 1000);  // small integers: exact for (max,+) and (+,+)
    }
}

// Copy kernels, for the ceiling a kernel (rather than cudaMemcpy) reaches: one tile of THREADS x VEC float4 per block,
// all loads issued before the stores (the register scan kernels' shape, without the scan), streaming stores. Launched
// chained (launch_chained, as the scans are) it waits for the kernel before it first.
template <int THREADS, int VEC>
__global__ void __launch_bounds__(THREADS) copy_tiles_kernel(const float4* __restrict__ in, float4* __restrict__ out,
                                                              std::size_t n4) {
    const std::size_t base = blockIdx.x * std::size_t(THREADS * VEC) + threadIdx.x;
    wait_for_previous_grids();
    allow_next_grid();
    float4 v[VEC];
#pragma unroll
    for (int k = 0; k < VEC; ++k)
        if (base + std::size_t(k) * THREADS < n4) v[k] = __ldcs(in + base + std::size_t(k) * THREADS);
#pragma unroll
    for (int k = 0; k < VEC; ++k)
        if (base + std::size_t(k) * THREADS < n4) __stcs(out + base + std::size_t(k) * THREADS, v[k]);
}
// A grid-stride float4 copy over a grid of `gridDim.x` blocks.
__global__ void copy_stride_kernel(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n4) {
    for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n4; k += std::size_t(gridDim.x) * blockDim.x)
        __stcs(out + k, __ldcs(in + k));
}

struct timer {
    cuda_stream stream;
    cuda_event start, stop;
    // Median over `reps` batches of `batch` calls of op(k), k = call index.
    double median_us(int reps, int batch, const std::function<void(int)>& op) {
        op(0);  // warm-up
        stream.synchronize();
        std::vector<double> t;
        for (int r = 0; r < reps; ++r) {
            start.record(stream.get());
            for (int k = 0; k < batch; ++k) op(r * batch + k);
            stop.record(stream.get());
            stop.synchronize();
            t.push_back(1000.0 * stop.since(start) / batch);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    }
};

int arg_int(int argc, char** argv, const char* name, int fallback) {
    for (int k = 1; k + 1 < argc; ++k)
        if (std::strcmp(argv[k], name) == 0) return std::atoi(argv[k + 1]);
    return fallback;
}

// The entries named by --entries (comma-separated indices), or every entry.
std::vector<bool> arg_entries(int argc, char** argv) {
    const int count = static_cast<int>(scan_configs.size());
    for (int k = 1; k + 1 < argc; ++k) {
        if (std::strcmp(argv[k], "--entries") != 0) continue;
        std::vector<bool> chosen(static_cast<std::size_t>(count), false);
        std::string list = argv[k + 1];
        std::size_t pos = 0;
        while (pos <= list.size()) {
            const std::size_t comma = std::min(list.find(',', pos), list.size());
            const std::string item = list.substr(pos, comma - pos);
            char* end = nullptr;
            const long e = std::strtol(item.c_str(), &end, 10);
            if (item.empty() || *end != '\0' || e < 0 || e >= count)
                throw usage_error("--entries " + list + ": '" + item + "' is not a tuning entry (0.." +
                                  std::to_string(count - 1) + "); give a comma-separated list such as 0,3,7");
            chosen[static_cast<std::size_t>(e)] = true;
            pos = comma + 1;
        }
        return chosen;
    }
    return std::vector<bool>(static_cast<std::size_t>(count), true);
}

}  // namespace

int main(int argc, char** argv) try {
    const int min_log2 = arg_int(argc, argv, "--min-log2", 14), max_log2 = arg_int(argc, argv, "--max-log2", 28);
    const int reps = arg_int(argc, argv, "--reps", 7);
    const std::vector<bool> entries = arg_entries(argc, argv);
    const std::size_t pool = std::max<std::size_t>(std::size_t(1) << 26, std::size_t(1) << max_log2);
    timer tm;
    cudaStream_t s = tm.stream.get();
    device_buffer<float> in(pool), out(pool);
    device_buffer<std::int32_t> in_i(pool), out_i(pool);
    device_buffer<affine> out_pair(pool);
    fill_kernel<<<1024, 256, 0, s>>>(in.data(), pool, 17);
    SWGPU_CUDA_CHECK_LAUNCH("fill_kernel");
    fill_kernel<<<1024, 256, 0, s>>>(in_i.data(), pool, 17);
    SWGPU_CUDA_CHECK_LAUNCH("fill_kernel");
    tm.stream.synchronize();
    device_buffer<unsigned char> cub_temp;
    lookback_workspace<float> ws_f;
    lookback_workspace<std::int32_t> ws_i;

    cudaDeviceProp prop{};
    SWGPU_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("# bench_weighted_scan on %s (%d SMs); median of %d batches; times in microseconds per call\n", prop.name,
                prop.multiProcessorCount, reps);
    std::printf("%-28s %6s %10s %9s %8s\n", "what", "log2n", "us", "GB/s", "%copy");

    // Per scan: the worst %copy over n >= 2^20 of the default entry for that n, and of the best entry at each n.
    struct worst {
        double default_entry = 1e9, best_entry = 1e9;
    };
    std::map<std::string, worst> summary;
    std::map<std::string, std::map<int, std::pair<int, double>>> by_size;  // scan -> log2n -> (default entry, %copy)

    for (int lg = min_log2; lg <= max_log2; ++lg) {
        const std::size_t n = std::size_t(1) << lg;
        const int slots = static_cast<int>(pool / n);  // disjoint regions of the pool
        const int batch = std::max(1, std::min(200, static_cast<int>((std::size_t(1) << 26) / n)));
        auto region = [&](int k) { return static_cast<std::size_t>(k % slots) * n; };
        const double bytes = 2.0 * double(n) * sizeof(float);

        // The copy: the fastest of three medians (at 2^20 single medians of the same copy ranged 5.3-6.9 us between
        // runs, mostly upwards; the fastest is the strictest floor for "% copy").
        double copy_us = 1e30;
        for (int t = 0; t < 3; ++t)
            copy_us = std::min(copy_us, tm.median_us(reps, batch, [&](int k) {
                SWGPU_CUDA_CHECK(cudaMemcpyAsync(out.data() + region(k), in.data() + region(k), n * sizeof(float),
                                                 cudaMemcpyDeviceToDevice, s));
            }));
        auto line = [&](const std::string& what, double us, double moved) {
            std::printf("%-28s %6d %10.2f %9.1f %8.1f\n", what.c_str(), lg, us, moved / us / 1e3, 100.0 * copy_us / us);
        };
        line("copy fp32 (d2d)", copy_us, bytes);
        {
            const std::size_t n4 = n / 4;
            const auto tiles = [&](std::size_t per_block) { return static_cast<unsigned>((n4 + per_block - 1) / per_block); };
            line("copy kernel, 4096-float4 tiles", tm.median_us(reps, batch, [&](int k) {
                     copy_tiles_kernel<256, 16><<<tiles(256 * 16), 256, 0, s>>>(
                         reinterpret_cast<const float4*>(in.data() + region(k)), reinterpret_cast<float4*>(out.data() + region(k)), n4);
                 }), bytes);
            line("copy kernel, 4096 f4, chained", tm.median_us(reps, batch, [&](int k) {
                     launch_chained("copy_tiles_kernel", &copy_tiles_kernel<256, 16>, dim3(tiles(256 * 16)), dim3(256), 0, s,
                                    reinterpret_cast<const float4*>(in.data() + region(k)),
                                    reinterpret_cast<float4*>(out.data() + region(k)), n4);
                 }), bytes);
            line("copy kernel, 1024-float4 tiles", tm.median_us(reps, batch, [&](int k) {
                     copy_tiles_kernel<256, 4><<<tiles(256 * 4), 256, 0, s>>>(
                         reinterpret_cast<const float4*>(in.data() + region(k)), reinterpret_cast<float4*>(out.data() + region(k)), n4);
                 }), bytes);
            line("copy kernel, grid-stride", tm.median_us(reps, batch, [&](int k) {
                     copy_stride_kernel<<<static_cast<unsigned>(prop.multiProcessorCount * 8), 256, 0, s>>>(
                         reinterpret_cast<const float4*>(in.data() + region(k)), reinterpret_cast<float4*>(out.data() + region(k)), n4);
                 }), bytes);
            SWGPU_CUDA_CHECK_LAUNCH("copy kernels");
        }

        auto bench_scan = [&](const char* name, auto alg, auto* src, auto* dst, auto& ws) {
            using Alg = decltype(alg);
            double best_pct = 0, default_pct = 0;
            const int default_entry = default_scan_entry_for(alg, static_cast<std::int64_t>(n));
            for (int entry = 0; entry < static_cast<int>(scan_configs.size()); ++entry) {
                if (!entries[static_cast<std::size_t>(entry)] && entry != default_entry) continue;
                scan_arguments<Alg> args{};
                args.n = static_cast<std::int64_t>(n);
                args.alg = alg;
                args.x0 = Alg::identity();
                args.inclusive = true;
                const double us = tm.median_us(reps, batch, [&](int k) {
                    args.b = src + region(k);
                    args.out = dst + region(k);
                    launch_weighted_scan(entry, args, ws, s);
                });
                const std::string what = std::string(name) + " e" + std::to_string(entry);
                line(what, us, bytes);
                const double pct = 100.0 * copy_us / us;
                best_pct = std::max(best_pct, pct);
                if (entry == default_entry) default_pct = pct;
            }
            by_size[name][lg] = {default_entry, default_pct};
            if (lg >= 20) {
                worst& w = summary[name];
                w.default_entry = std::min(w.default_entry, default_pct);
                w.best_entry = std::min(w.best_entry, best_pct);
            }
        };
        bench_scan("scan (max,+) fp32", weighted_algebra<max_plus<float>>{-1.0f}, in.data(), out.data(), ws_f);
        bench_scan("scan (max,+) int32", weighted_algebra<max_plus<std::int32_t>>{-1}, in_i.data(), out_i.data(), ws_i);
        bench_scan("scan (+,*) fp32", weighted_algebra<plus_times<float>>{0.2f}, in.data(), out.data(), ws_f);
        bench_scan("scan (+,+) fp32", weighted_algebra<plus_plus<float>>{0.0f}, in.data(), out.data(), ws_f);

        {  // CUB, affine pairs: fp32 in (transformed to (w, b) on the fly), pair out
            auto input = [&](int k) { return thrust::make_transform_iterator(in.data() + region(k), to_affine{0.2f}); };
            std::size_t temp = 0;
            SWGPU_CUDA_CHECK(cub::DeviceScan::InclusiveScan(nullptr, temp, input(0), out_pair.data(), affine_compose{},
                                                            static_cast<int>(n), s));
            cub_temp.reserve(temp);
            const double us = tm.median_us(reps, batch, [&](int k) {
                std::size_t t = temp;
                SWGPU_CUDA_CHECK(cub::DeviceScan::InclusiveScan(cub_temp.data(), t, input(k), out_pair.data() + region(k),
                                                                affine_compose{}, static_cast<int>(n), s));
            });
            line("cub affine-pair scan", us, double(n) * (sizeof(float) + sizeof(affine)));
            if (lg >= 20) {
                worst& w = summary["cub affine-pair scan"];
                w.default_entry = w.best_entry = std::min(w.default_entry, 100.0 * copy_us / us);
            }
        }
        {  // CUB InclusiveSum fp32
            std::size_t temp = 0;
            SWGPU_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp, in.data(), out.data(), static_cast<int>(n), s));
            cub_temp.reserve(temp);
            const double us = tm.median_us(reps, batch, [&](int k) {
                std::size_t t = temp;
                SWGPU_CUDA_CHECK(cub::DeviceScan::InclusiveSum(cub_temp.data(), t, in.data() + region(k), out.data() + region(k),
                                                               static_cast<int>(n), s));
            });
            line("cub InclusiveSum fp32", us, bytes);
        }
        std::fflush(stdout);
    }
    std::printf("\n# %%copy of the default entry (entry in brackets) by log2 n\n%-28s", "what");
    for (int lg = min_log2; lg <= max_log2; ++lg) std::printf(" %9d", lg);
    std::printf("\n");
    for (const auto& [name, sizes] : by_size) {
        std::printf("%-28s", name.c_str());
        for (const auto& [lg, d] : sizes) std::printf(" %5.1f[%2d]", d.second, d.first);
        std::printf("\n");
    }
    std::printf("\n# worst %%copy over n = 2^20 .. 2^%d (target: >= 90 for the weighted scan)\n", max_log2);
    std::printf("%-28s %14s %14s\n", "what", "default entry", "best entry");
    for (const auto& [name, w] : summary)
        std::printf("%-28s %14.1f %14.1f\n", name.c_str(), w.default_entry, w.best_entry);
    for (const auto& [name, w] : summary)
        std::printf("summary: %s: worst %%copy over 2^20..2^%d = %.1f (default entry), %.1f (best entry)%s\n", name.c_str(),
                    max_log2, w.default_entry, w.best_entry,
                    name.rfind("scan", 0) == 0 ? (w.default_entry >= 90.0 ? "; target >= 90 met" : "; target >= 90 NOT met") : "");
    return 0;
} catch (const swgpu::error& e) {
    std::fprintf(stderr, "bench_weighted_scan: error: %s\n", e.what());
    return static_cast<int>(e.code());
}
