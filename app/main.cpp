#include <iostream>

#include "core/error.hpp"
#include "gpu/gpu.hpp"

int main(int argc, char** argv) {
    (void)argc;
    (void)argv;
    std::cout << "swgpu " << SWGPU_VERSION << " (" << swgpu::gpu::build_info() << ")\n";
    return 0;
}
