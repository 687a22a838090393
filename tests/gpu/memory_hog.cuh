// Device memory taken from the tests' own process, as another program on the machine would take it (the GPU tests of
// running out of device memory).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace swgpu::gputest {

// Device memory held until destroyed: all that can be taken but `leave` bytes (less when the device has less free).
struct memory_hog {
    std::vector<void*> blocks;
    std::size_t held = 0;
    explicit memory_hog(std::size_t leave) {
        std::size_t free = 0, total = 0;
        cudaMemGetInfo(&free, &total);
        for (std::size_t piece = std::size_t(1) << 30; piece >= (std::size_t(1) << 20); piece /= 2) {
            for (;;) {
                cudaMemGetInfo(&free, &total);
                if (free < leave + piece) break;
                void* p = nullptr;
                if (cudaMalloc(&p, piece) != cudaSuccess) {
                    (void)cudaGetLastError();
                    break;
                }
                blocks.push_back(p);
                held += piece;
            }
        }
    }
    ~memory_hog() {
        for (void* p : blocks) cudaFree(p);
    }
};

}  // namespace swgpu::gputest
