#include "io/gpu_share.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace swgpu::io {

std::optional<rank_gpu> gpu_for_rank(const char* visible, int device_files, int local_rank, int local_size) {
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

int gpu_device_files() {
    int device_files = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/dev", ec)) {
        const std::string name = e.path().filename().string();
        if (name.size() > 6 && name.rfind("nvidia", 0) == 0 &&
            std::all_of(name.begin() + 6, name.end(), [](unsigned char c) { return std::isdigit(c); }))
            ++device_files;
    }
    return device_files;
}

std::optional<rank_gpu> take_rank_gpu(int local_rank, int local_size) {
    std::optional<rank_gpu> taken =
        gpu_for_rank(std::getenv("CUDA_VISIBLE_DEVICES"), gpu_device_files(), local_rank, local_size);
    if (taken) ::setenv("CUDA_VISIBLE_DEVICES", taken->visible.c_str(), 1);
    return taken;
}

rank_device device_for_rank(const std::optional<rank_gpu>& taken, int devices, int local_rank, int local_size) {
    rank_device d;
    if (taken && devices == 1) {  // this rank's GPU alone is visible
        d.sharing = taken->sharing;
    } else {  // the runtime saw every GPU anyway (started before), or none was known: pick among them
        d.device = local_rank % devices;
        d.sharing = (local_size - d.device + devices - 1) / devices;
    }
    return d;
}

}  // namespace swgpu::io
