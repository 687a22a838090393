// Small helpers shared by the long-pair aligner's translation units (long_pair.cpp, cpu_backend.cpp); internal.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace swgpu::long_pair::detail {

using clock = std::chrono::steady_clock;
inline double since(clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); }
inline std::size_t idx(std::int64_t v) { return static_cast<std::size_t>(v); }

}  // namespace swgpu::long_pair::detail
