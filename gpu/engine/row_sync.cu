// gpu_row_sync compiled for the engine's problem list (gpu/engine/engine_instances.cuh); the kernels are in row_sync.cuh.
#include "gpu/engine/engine_instances.cuh"

namespace swgpu::gpu {
SWGPU_ENGINE_INSTANCES(SWGPU_ROW_SYNC_INSTANCE)
}  // namespace swgpu::gpu
