// Summed-area tables and integral histograms on the GPU against the copy bound, CUB and NPP (the paper's SAT and
// IHist workloads). Everything is device-resident; each time is the median of `reps` launches (CUDA events).
//
//   bench_sat [--size 16384] [--ihist-size 4096] [--bins 32] [--queries 10000000] [--reps 7]
//
// Rows printed, per workload: swgpu strips (two passes over the input, none waiting; the default), swgpu tiled_p2p
// (one pass, decoupled look-back), swgpu row_sync (CUB BlockScan along
// the rows, then a pass down the columns: the "rows-then-columns with CUB" library baseline), NPP's nppiIntegral
// (8u32s and 8u32f; loaded at run time from libnppist when the host has it, skipped otherwise; its 32-bit integer
// table overflows past 2^31, which is the point of 64-bit tables), and the device-to-device copy of the same bytes.
// "% bound": time of reading the input and writing the table at the copy's bandwidth / measured time. For IHist the
// bound is writing the table alone. Queries: rectangle sums of a 16384² uint64 table, 4 lookups each.
// The last lines start with "summary:".
#include <dlfcn.h>

#include "tests/gpu/bench/npp_runtime.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/numerics/sat_kernels.cuh"
#include "gpu/numerics/sat_ordered_kernels.cuh"
#include "gpu/numerics/sat_strip_kernels.cuh"

using namespace swgpu;
using namespace swgpu::gpu;
using namespace swgpu::gpu::sat_kernels;
namespace sk = swgpu::gpu::strip_kernels;

namespace {

struct options {
    index_t size = 16384, ihist_size = 4096;
    int bins = 32, reps = 7;
    index_t queries = 10000000;
};

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

__global__ void fill_random_u8(unsigned char* p, std::size_t n, unsigned seed) {
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n; k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        unsigned x = static_cast<unsigned>(k) * 2654435761u ^ seed;
        x ^= x >> 13;
        x *= 0x5bd1e995u;
        x ^= x >> 15;
        p[k] = static_cast<unsigned char>(x);
    }
}
__global__ void u8_to_f32(const unsigned char* a, float* b, std::size_t n) {
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n; k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        b[k] = a[k] * (1.0f / 256);
}
template <class T>
__global__ void count_differences(const T* a, const T* b, std::size_t n, unsigned long long* bad) {
    unsigned long long local = 0;
    for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n; k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        local += a[k] != b[k];
    if (local) atomicAdd(bad, local);
}
template <class T>
unsigned long long differences(const T* a, const T* b, std::size_t n) {
    device_buffer<unsigned long long> bad(1);
    bad.zero();
    count_differences<<<1024, 256>>>(a, b, n, bad.data());
    SWGPU_CUDA_CHECK_LAUNCH("count_differences");
    return bad.download(1)[0];
}

// NPP's integral, loaded at run time (npp_runtime.hpp).
using bench::npp_context;
using bench::npp_size;
using bench::npp_stream_context;
using npp_integral_8u32s = int (*)(const unsigned char*, int, int*, int, npp_size, int, npp_stream_context);
using npp_integral_8u32f = int (*)(const unsigned char*, int, float*, int, npp_size, float, npp_stream_context);

struct npp_library {
    npp_integral_8u32s i32 = nullptr;
    npp_integral_8u32f f32 = nullptr;
    std::string from;
    npp_library() {
        if (void* h = bench::open_npp("nppist", "nppiIntegral_8u32s_C1R_Ctx", from)) {
            i32 = reinterpret_cast<npp_integral_8u32s>(dlsym(h, "nppiIntegral_8u32s_C1R_Ctx"));
            f32 = reinterpret_cast<npp_integral_8u32f>(dlsym(h, "nppiIntegral_8u32f_C1R_Ctx"));
        }
    }
};

void row(const char* what, double ms, double bound_ms, const char* note = "") {
    std::printf("  %-44s %9.3f ms  %6.1f %% bound  %s\n", what, ms, 100.0 * bound_ms / ms, note);
}

// Where the strips' time goes: each step timed alone (run after the checks: the scans are not idempotent).
template <class A, class B, class C>
void breakdown(int reps, cudaStream_t s, A count, B scans, C pass) {
    const float a = median_ms(reps, s, count), b = median_ms(reps, s, scans), c = median_ms(reps, s, pass);
    std::printf("    strips alone: count %.3f ms, scans %.3f ms, table pass %.3f ms\n", a, b, c);
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    for (int k = 1; k < argc; ++k) {
        const std::string a = argv[k];
        auto next = [&] { return k + 1 < argc ? std::atoll(argv[++k]) : 0; };
        if (a == "--size") o.size = next();
        else if (a == "--ihist-size") o.ihist_size = next();
        else if (a == "--bins") o.bins = static_cast<int>(next());
        else if (a == "--queries") o.queries = next();
        else if (a == "--reps") o.reps = static_cast<int>(next());
        else {
            std::fprintf(stderr, "usage: bench_sat [--size N] [--ihist-size N] [--bins B] [--queries Q] [--reps R]\n");
            return 2;
        }
    }
    try {
        cudaDeviceProp prop{};
        SWGPU_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        std::printf("# bench_sat on %s (%d SMs)\n", prop.name, prop.multiProcessorCount);
        cuda_stream stream;
        const cudaStream_t s = stream.get();
        const index_t n = o.size;
        const std::size_t px = static_cast<std::size_t>(n * n);

        // The copy: 2^28 fp32 elements (1 GiB read, 1 GiB written), the ceiling docs/performance.md uses.
        const std::size_t copy_elems = std::size_t(1) << 28;
        device_buffer<float> ca(copy_elems), cb(copy_elems);
        ca.zero(s);
        const float copy_ms = median_ms(o.reps, s, [&] {
            SWGPU_CUDA_CHECK(cudaMemcpyAsync(cb.data(), ca.data(), copy_elems * 4, cudaMemcpyDeviceToDevice, s));
        });
        const double copy_gbs = 2.0 * copy_elems * 4 / (copy_ms * 1e6);
        std::printf("copy, fp32 2^28: %.3f ms, %.0f GB/s (read + write)\n", copy_ms, copy_gbs);
        ca = device_buffer<float>();
        cb = device_buffer<float>();
        auto bound = [&](double bytes) { return bytes / (copy_gbs * 1e6); };

        device_buffer<unsigned char> in8(px);
        fill_random_u8<<<1024, 256, 0, s>>>(in8.data(), px, 14u);
        SWGPU_CUDA_CHECK_LAUNCH("fill_random_u8");
        npp_library npp;
        const auto ctx = npp_context(s);
        double sat8_tiled = 0, sat8_cub = 0, sat8_npp = 0, satf_tiled = 0, satf_cub = 0, ih_tiled = 0, ih_cub = 0, qps = 0;
        double sat8_strips = 0, satf_strips = 0, ih_strips = 0;

        {  // 8-bit -> uint64
            device_buffer<std::uint64_t> out(px), out2(px);
            const double b = bound(static_cast<double>(px) * 9);
            std::printf("\nSAT %lld x %lld, uint8 -> uint64 (bound %.3f ms)\n", static_cast<long long>(n), static_cast<long long>(n), b);
            std::size_t flags = 0;
            device_buffer<unsigned char> ws(tiled_workspace_bytes<std::uint64_t, std::uint32_t>(n, n, 1, &flags));
            const auto st = make_tiled_state<std::uint64_t, std::uint32_t>(out.data(), n, n, 1, ws.data());
            const pixel_loader<unsigned char, std::uint32_t> load8{in8.data(), n};
            const pixel_loader<unsigned char, std::uint64_t> load8w{in8.data(), n};
            sat8_tiled = median_ms(o.reps, s, [&] { launch_tiled(st, load8, flags, s); });
            sat8_cub = median_ms(o.reps, s, [&] { launch_row_sync(out2.data(), n, n, 1, load8w, s); });
            const auto bad = differences(out.data(), out2.data(), px);
            {
                device_buffer<unsigned char> sws(sk::strip_workspace_bytes<std::uint64_t>(n, n, 1, sk::table_width));
                const auto sst = sk::make_strip_state<std::uint64_t>(n, n, 1, sk::table_width, sws.data());
                sat8_strips = median_ms(o.reps, s, [&] { sk::launch_table_strips(sst, load8, out.data(), s); });
                row("swgpu strips (two input passes, no waiting)", sat8_strips, b,
                    differences(out.data(), out2.data(), px) ? "MISMATCH with row_sync" : "= row_sync");
                breakdown(o.reps, s, [&] { sk::launch_table_count(sst, load8, s); }, [&] { sk::launch_strip_scans(sst, s); },
                          [&] { sk::launch_table_pass(sst, load8, out.data(), s); });
            }
            row("swgpu tiled_p2p (one pass)", sat8_tiled, b, bad ? "MISMATCH with row_sync" : "= row_sync");
            row("swgpu row_sync (CUB rows, then columns)", sat8_cub, b);
            if (npp.i32) {
                device_buffer<int> o32(static_cast<std::size_t>((n + 1) * (n + 1)));
                sat8_npp = median_ms(o.reps, s, [&] {
                    const int st = npp.i32(in8.data(), static_cast<int>(n), o32.data(), static_cast<int>((n + 1) * 4),
                                           {static_cast<int>(n), static_cast<int>(n)}, 0, ctx);
                    if (st != 0) throw runtime_failure("nppiIntegral_8u32s_C1R_Ctx returned " + std::to_string(st));
                });
                row("NPP nppiIntegral_8u32s_C1R (32-bit table)", sat8_npp, bound(static_cast<double>(px) * 5), "bound of its own 5 bytes/px");
                if (npp.f32) {
                    device_buffer<float> of(static_cast<std::size_t>((n + 1) * (n + 1)));
                    const float t = median_ms(o.reps, s, [&] {
                        const int st = npp.f32(in8.data(), static_cast<int>(n), of.data(), static_cast<int>((n + 1) * 4),
                                               {static_cast<int>(n), static_cast<int>(n)}, 0.0f, ctx);
                        if (st != 0) throw runtime_failure("nppiIntegral_8u32f_C1R_Ctx returned " + std::to_string(st));
                    });
                    row("NPP nppiIntegral_8u32f_C1R (float table)", t, bound(static_cast<double>(px) * 5), "bound of its own 5 bytes/px");
                }
                std::printf("  (NPP from %s)\n", npp.from.c_str());
            } else {
                std::printf("  NPP: libnppist not found on this host (set SWGPU_NPP_DIR); skipped\n");
            }
        }
        {  // float32 -> float32
            device_buffer<float> inf(px), out(px), out2(px);
            u8_to_f32<<<1024, 256, 0, s>>>(in8.data(), inf.data(), px);
            SWGPU_CUDA_CHECK_LAUNCH("u8_to_f32");
            const double b = bound(static_cast<double>(px) * 8);
            std::printf("\nSAT %lld x %lld, float32 -> float32 (bound %.3f ms)\n", static_cast<long long>(n), static_cast<long long>(n), b);
            std::size_t flags = 0;
            device_buffer<unsigned char> ws(tiled_workspace_bytes<float, float>(n, n, 1, &flags));
            const auto st = make_tiled_state<float, float>(out.data(), n, n, 1, ws.data());
            const pixel_loader<float, float> load{inf.data(), n};
            satf_tiled = median_ms(o.reps, s, [&] { launch_tiled(st, load, flags, s); });
            satf_cub = median_ms(o.reps, s, [&] { launch_row_sync(out2.data(), n, n, 1, load, s); });
            {
                device_buffer<unsigned char> sws(sk::strip_workspace_bytes<float>(n, n, 1, sk::table_width));
                const auto sst = sk::make_strip_state<float>(n, n, 1, sk::table_width, sws.data());
                satf_strips = median_ms(o.reps, s, [&] { sk::launch_table_strips(sst, load, out.data(), s); });
                row("swgpu strips (two input passes, no waiting)", satf_strips, b);
                breakdown(o.reps, s, [&] { sk::launch_table_count(sst, load, s); }, [&] { sk::launch_strip_scans(sst, s); },
                          [&] { sk::launch_table_pass(sst, load, out.data(), s); });
            }
            row("swgpu tiled_p2p (one pass)", satf_tiled, b);
            row("swgpu row_sync (CUB rows, then columns)", satf_cub, b);
            const double satf_ordered = median_ms(o.reps, s, [&] { swgpu::gpu::sat_ordered::launch(inf.data(), out.data(), n, n, index_t(1), s); });
            row("swgpu ordered (the CPU's order: rows, then columns; the default for float tables)", satf_ordered, b);
            {
                device_buffer<double> out64(px);
                const double t = median_ms(o.reps, s, [&] { swgpu::gpu::sat_ordered::launch(inf.data(), out64.data(), n, n, index_t(1), s); });
                row("swgpu ordered, float32 -> float64", t, bound(static_cast<double>(px) * 12));
            }
        }
        {  // integral histogram
            const index_t m = o.ihist_size;
            const std::size_t mp = static_cast<std::size_t>(m * m), outn = mp * o.bins;
            std::vector<std::uint16_t> hbin(mp);
            std::mt19937 rng(3);
            for (auto& v : hbin) v = static_cast<std::uint16_t>((rng() & 255) * static_cast<unsigned>(o.bins) / 256);
            device_buffer<std::uint16_t> bins;
            bins.upload(hbin, s);
            device_buffer<std::uint32_t> out(outn), out2(outn);
            const double b = bound(static_cast<double>(outn) * 4);
            std::printf("\nIHist %lld x %lld, %d bins, uint32 (output-write bound %.3f ms)\n", static_cast<long long>(m),
                        static_cast<long long>(m), o.bins, b);
            const bin_loader load{bins.data(), m, o.bins};
            if (o.bins <= max_tiled_lanes) {
                std::size_t flags = 0;
                device_buffer<unsigned char> ws(tiled_workspace_bytes<std::uint32_t, std::uint32_t>(m, m * o.bins, o.bins, &flags));
                const auto st = make_tiled_state<std::uint32_t, std::uint32_t>(out.data(), m, m * o.bins, o.bins, ws.data());
                ih_tiled = median_ms(o.reps, s, [&] { launch_tiled(st, load, flags, s); });
            }
            ih_cub = median_ms(o.reps, s, [&] { launch_row_sync(out2.data(), m, m, o.bins, load, s); });
            const auto bad = o.bins <= max_tiled_lanes ? differences(out.data(), out2.data(), outn) : 0;
            const float set_ms = median_ms(o.reps, s, [&] { SWGPU_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, outn * 4, s)); });
            row("cudaMemset of the same bytes (writes alone)", set_ms, b);
            if (o.bins <= sk::max_bins) {
                device_buffer<unsigned char> sws(sk::strip_workspace_bytes<std::uint32_t>(m, m, o.bins, sk::histogram_width));
                const auto sst = sk::make_strip_state<std::uint32_t>(m, m, o.bins, sk::histogram_width, sws.data());
                ih_strips = median_ms(o.reps, s, [&] { sk::launch_histogram_strips(sst, bins.data(), out.data(), s); });
                row("swgpu strips (two input passes, no waiting)", ih_strips, b,
                    differences(out.data(), out2.data(), outn) ? "MISMATCH with row_sync" : "= row_sync");
                breakdown(o.reps, s, [&] { sk::launch_histogram_count(sst, bins.data(), s); }, [&] { sk::launch_strip_scans(sst, s); },
                          [&] { sk::launch_histogram_pass(sst, bins.data(), out.data(), s); });
            }
            if (ih_tiled > 0) row("swgpu tiled_p2p (one pass)", ih_tiled, b, bad ? "MISMATCH with row_sync" : "= row_sync");
            row("swgpu row_sync (CUB rows, then columns)", ih_cub, b);
        }
        {  // rectangle queries on a uint64 table
            device_buffer<std::uint64_t> table(px);
            std::size_t flags = 0;
            device_buffer<unsigned char> ws(tiled_workspace_bytes<std::uint64_t, std::uint32_t>(n, n, 1, &flags));
            launch_tiled(make_tiled_state<std::uint64_t, std::uint32_t>(table.data(), n, n, 1, ws.data()),
                         pixel_loader<unsigned char, std::uint32_t>{in8.data(), n}, flags, s);
            std::vector<device_rect> rects(static_cast<std::size_t>(o.queries));
            std::mt19937_64 rng(5);
            for (auto& r : rects) {
                r.top = static_cast<index_t>(rng() % n);
                r.bottom = r.top + static_cast<index_t>(rng() % static_cast<std::uint64_t>(n - r.top));
                r.left = static_cast<index_t>(rng() % n);
                r.right = r.left + static_cast<index_t>(rng() % static_cast<std::uint64_t>(n - r.left));
            }
            device_buffer<device_rect> d_rects;
            d_rects.upload(rects, s);
            device_buffer<std::uint64_t> sums(rects.size());
            const float t = median_ms(o.reps, s, [&] {
                launch_rect_queries<std::uint64_t, std::uint64_t>(table.data(), n, 1, d_rects.data(), o.queries, sums.data(), s);
            });
            qps = static_cast<double>(o.queries) / (t * 1e-3);
            std::printf("\nrectangle sums, %lld random rectangles of a %lld^2 uint64 table: %.3f ms, %.3g queries/s\n",
                        static_cast<long long>(o.queries), static_cast<long long>(n), t, qps);
        }
        const double b8 = bound(static_cast<double>(px) * 9), bf = bound(static_cast<double>(px) * 8);
        const double bh = bound(static_cast<double>(o.ihist_size * o.ihist_size) * o.bins * 4);
        std::printf("\nsummary: copy %.0f GB/s; SAT %lld^2 u8->u64 strips %.3f ms = %.1f %% of copy bound (tiled %.3f ms), %.2fx CUB rows-then-columns",
                    copy_gbs, static_cast<long long>(n), sat8_strips, 100 * b8 / sat8_strips, sat8_tiled, sat8_cub / sat8_strips);
        if (sat8_npp > 0) std::printf(", %.2fx NPP 8u32s", sat8_npp / sat8_strips);
        std::printf("\nsummary: SAT %lld^2 f32->f32 strips %.3f ms = %.1f %% of copy bound (tiled %.3f ms), %.2fx CUB rows-then-columns\n",
                    static_cast<long long>(n), satf_strips, 100 * bf / satf_strips, satf_tiled, satf_cub / satf_strips);
        if (ih_strips > 0)
            std::printf("summary: IHist %lld^2 %d bins strips %.3f ms = %.1f %% of output-write bound (tiled %.3f ms), %.2fx row_sync\n",
                        static_cast<long long>(o.ihist_size), o.bins, ih_strips, 100 * bh / ih_strips, ih_tiled, ih_cub / ih_strips);
        std::printf("summary: rectangle sums %.3g queries/s\n", qps);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_sat: %s\n", e.what());
        return 1;
    }
    return 0;
}
