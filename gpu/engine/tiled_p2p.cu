// gpu_tiled_p2p compiled for the engine's problem list (gpu/engine/engine_instances.cuh); the kernel is in tiled_p2p.cuh.
#include "gpu/engine/engine_instances.cuh"

namespace swgpu::gpu {
SWGPU_ENGINE_INSTANCES(SWGPU_TILED_P2P_INSTANCE)
}  // namespace swgpu::gpu
