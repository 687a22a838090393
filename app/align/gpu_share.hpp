// Which GPU an MPI rank takes: the ranks of a host take its GPUs in turn (local rank mod GPUs), and each makes its GPU
// the only one visible (CUDA_VISIBLE_DEVICES) before its first CUDA call, so that the CUDA driver starts that GPU
// alone: the first CUDA call of a process started every visible GPU of the host, about 0.2 s each (H200 hosts,
// 2026-11-26: 0.20, 0.39 and 0.80 s of start-up with 1, 2 and 4 GPUs visible), and under MPI every rank paid it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace swgpu {

struct rank_gpu {
    std::string visible;  // the value CUDA_VISIBLE_DEVICES takes for this rank: one entry of the host's list
    int gpus = 0;         // GPUs the ranks of the host share
    int index = 0;        // this rank's GPU among them (its index while all of them are visible)
    int sharing = 1;      // ranks of the host on this GPU
};

// `visible`: CUDA_VISIBLE_DEVICES as the launcher left it (nullptr: unset; then the host's GPUs are the
// `device_files` /dev/nvidiaN files, numbered 0..device_files-1). nullopt when no GPU is known (an empty list, no
// device files): the caller then leaves the choice to the CUDA runtime.
inline std::optional<rank_gpu> gpu_for_rank(const char* visible, int device_files, int local_rank, int local_size) {
    std::vector<std::string> entries;
    if (visible) {
        std::string entry;
        for (const char* c = visible;; ++c) {
            if (*c == ',' || *c == '\0') {
                if (!entry.empty()) entries.push_back(entry);
                entry.clear();
                if (*c == '\0') break;
            } else if (*c != ' ') {
                entry += *c;
            }
        }
    } else {
        for (int d = 0; d < device_files; ++d) entries.push_back(std::to_string(d));
    }
    if (entries.empty() || local_rank < 0 || local_size < 1) return std::nullopt;
    rank_gpu r;
    r.gpus = static_cast<int>(entries.size());
    r.index = local_rank % r.gpus;
    r.visible = entries[static_cast<std::size_t>(r.index)];
    r.sharing = (local_size - r.index + r.gpus - 1) / r.gpus;
    return r;
}

}  // namespace swgpu
