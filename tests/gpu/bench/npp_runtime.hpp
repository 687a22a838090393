// NPP loaded at run time by the benchmarks that compare against it (bench_sat: nppiIntegral; bench_box_filter_gpu:
// nppiFilterBoxBorder), so that they build and run where the host has no NPP: the C ABI's stream context as nppdefs.h
// declares it, and the library found in SWGPU_NPP_DIR, the loader's path or CUDA's folders.
#pragma once

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

namespace swgpu::bench {

struct npp_stream_context {
    cudaStream_t hStream;
    int nCudaDeviceId, nMultiProcessorCount, nMaxThreadsPerMultiProcessor, nMaxThreadsPerBlock;
    std::size_t nSharedMemPerBlock;
    int nCudaDevAttrComputeCapabilityMajor, nCudaDevAttrComputeCapabilityMinor;
    unsigned nStreamFlags;
    int nReserved0;
};
struct npp_size {
    int width, height;
};

inline npp_stream_context npp_context(cudaStream_t s) {
    npp_stream_context c{};
    int dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, dev);
    c.hStream = s;
    c.nCudaDeviceId = dev;
    c.nMultiProcessorCount = p.multiProcessorCount;
    c.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
    c.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
    c.nSharedMemPerBlock = p.sharedMemPerBlock;
    c.nCudaDevAttrComputeCapabilityMajor = p.major;
    c.nCudaDevAttrComputeCapabilityMinor = p.minor;
    cudaStreamGetFlags(s, &c.nStreamFlags);
    return c;
}

// The first NPP library `stem` ("nppist", "nppif", ...) that opens, after nppc from the same folder (it needs it,
// loaded globally), and whose `symbol` it holds; nullptr when none does. `from` names the file opened.
inline void* open_npp(const std::string& stem, const char* symbol, std::string& from) {
    std::vector<std::string> dirs = {"", "/usr/local/cuda/lib64/", "/usr/local/cuda/targets/x86_64-linux/lib/",
                                     "/usr/lib/x86_64-linux-gnu/"};
    if (const char* e = std::getenv("SWGPU_NPP_DIR")) dirs.insert(dirs.begin(), std::string(e) + "/");
    for (const auto& d : dirs)
        for (const char* version : {".so.13", ".so.12", ".so"}) {
            for (const char* c : {"libnppc.so.13", "libnppc.so.12", "libnppc.so"})
                if (dlopen((d + c).c_str(), RTLD_NOW | RTLD_GLOBAL)) break;
            const std::string name = d + "lib" + stem + version;
            if (void* h = dlopen(name.c_str(), RTLD_NOW); h && dlsym(h, symbol)) {
                from = name;
                return h;
            }
        }
    return nullptr;
}

}  // namespace swgpu::bench
