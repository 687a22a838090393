// The memory a run may take, and refusing one that needs more before it allocates (docs/conventions.md, "Memory").
//
// A request the machine cannot hold is not always a std::bad_alloc: below one allocation's limit, Linux hands out the
// pages lazily and later kills the process (exit 137, without a message, and with the temporary output left behind).
// So the numerical commands estimate their peak from the header or the options first and refuse, with exit code 4
// and the option or input to change, a run that needs more than is available.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/memory_need.hpp"

namespace swgpu::io {

struct memory_limit {
    double bytes = 0;     // what a run may take
    std::string source;   // how that was found, for messages: "the machine has 23.4 GB available"
};

// The least of: MemAvailable (/proc/meminfo; else the free physical pages), the room left under a cgroup v2 limit
// (memory.max - memory.current), and RLIMIT_AS when set. The tuning key host.memory_mib (tests), when positive,
// replaces the measured value.
memory_limit available_memory();

// The bytes of `path` when it is a regular file that is not gzip/bgzip-compressed (so that its size bounds the letters
// it holds, for an estimate before reading); nullopt for "-", a compressed file, or anything else.
std::optional<std::uint64_t> plain_file_size(const std::string& path);

// "12.8 GB" (decimal units, three significant digits).
std::string format_bytes(double bytes);

// Throws out_of_memory (exit 4) when `need` bytes exceed `limit`:
// "WHAT (NEED); LIMIT'S SOURCE: ADVICE", e.g. "--model 50000 is a 50000 x 50000 grid (100 GB of float64 arrays);
// the machine has 23.4 GB available: use a smaller N".
void check_memory(double need, const std::string& what, const std::string& advice, const memory_limit& limit);
void check_memory(double need, const std::string& what, const std::string& advice);
void check_memory(const memory_need& need);

// The bytes of --gpu-mem TEXT: bytes, or a number with K, M or G (binary units); 0 for "" (no limit). Throws
// usage_error for anything else and for less than 16M.
std::size_t parse_gpu_mem(const std::string& text);

}  // namespace swgpu::io
