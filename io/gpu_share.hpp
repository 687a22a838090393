// Which GPU an MPI rank takes: the ranks of a host take its GPUs in turn (local rank mod GPUs), and each makes its GPU
// the only one visible (CUDA_VISIBLE_DEVICES) before its first CUDA call, so that the CUDA driver starts that GPU
// alone: the first CUDA call of a process started every visible GPU of the host, about 0.2 s each (H200 hosts,
// 2026-11-26: 0.20, 0.39 and 0.80 s of start-up with 1, 2 and 4 GPUs visible), and under MPI every rank paid it.
#pragma once

#include <optional>
#include <string>

namespace swgpu::io {

struct rank_gpu {
    std::string visible;  // the value CUDA_VISIBLE_DEVICES takes for this rank: one entry of the host's list
    int gpus = 0;         // GPUs the ranks of the host share
    int index = 0;        // this rank's GPU among them (its index while all of them are visible)
    int sharing = 1;      // ranks of the host on this GPU
};

// `visible`: CUDA_VISIBLE_DEVICES as the launcher left it (nullptr: unset; then the host's GPUs are the
// `device_files` /dev/nvidiaN files, numbered 0..device_files-1). nullopt when no GPU is known (an empty list, no
// device files): the caller then leaves the choice to the CUDA runtime.
std::optional<rank_gpu> gpu_for_rank(const char* visible, int device_files, int local_rank, int local_size);

// The host's /dev/nvidiaN device files.
int gpu_device_files();

// For the rank `local_rank` of `local_size` on this host, before its first CUDA call: its GPU by gpu_for_rank (from
// CUDA_VISIBLE_DEVICES, else the device files), made the only one visible (CUDA_VISIBLE_DEVICES set); nullopt, and
// nothing set, when no GPU is known.
std::optional<rank_gpu> take_rank_gpu(int local_rank, int local_size);

// The device a rank uses among the `devices` the CUDA runtime sees, and how many ranks of the host share it: its own
// (device 0) when it took one and sees only that; else, when the runtime saw every GPU anyway (it started before) or
// none was known, local rank mod devices.
struct rank_device {
    int device = 0;
    int sharing = 1;
};
rank_device device_for_rank(const std::optional<rank_gpu>& taken, int devices, int local_rank, int local_size);

}  // namespace swgpu::io
