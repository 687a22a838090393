#include "io/memory.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/tuning.hpp"

namespace swgpu::io {

namespace {

// The kB value of a /proc/meminfo line "KEY: N kB"; negative when absent.
double meminfo_bytes(const std::string& key) {
    std::ifstream in("/proc/meminfo");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(key + ":", 0) != 0) continue;
        std::istringstream fields(line.substr(key.size() + 1));
        double kb = -1;
        fields >> kb;
        return kb >= 0 ? kb * 1024 : -1;
    }
    return -1;
}

// A number from a one-line file (cgroup), negative when absent or "max".
double file_number(const char* path) {
    std::ifstream in(path);
    std::string text;
    if (!(in >> text) || text == "max") return -1;
    try {
        return std::stod(text);
    } catch (...) {
        return -1;
    }
}

}  // namespace

memory_limit available_memory() {
    if (const std::int64_t mib = tuning::integer("host.memory_mib"); mib > 0)
        return {static_cast<double>(mib) * 1048576.0, "the memory allowed (host.memory_mib) is " +
                                                          format_bytes(static_cast<double>(mib) * 1048576.0)};
    memory_limit m;
    m.bytes = meminfo_bytes("MemAvailable");
    if (m.bytes < 0) {
        const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
        m.bytes = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 1e300;
    }
    m.source = "the machine has " + format_bytes(m.bytes) + " available";
    const double cg_max = file_number("/sys/fs/cgroup/memory.max"), cg_now = file_number("/sys/fs/cgroup/memory.current");
    if (cg_max >= 0 && cg_now >= 0 && cg_max - cg_now < m.bytes) {
        m.bytes = std::max(0.0, cg_max - cg_now);
        m.source = "the memory limit of this control group leaves " + format_bytes(m.bytes);
    }
    rlimit as{};
    if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY && static_cast<double>(as.rlim_cur) < m.bytes) {
        m.bytes = static_cast<double>(as.rlim_cur);
        m.source = "the address-space limit (ulimit -v) is " + format_bytes(m.bytes);
    }
    return m;
}

std::string format_bytes(double bytes) {
    const char* units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
    int u = 0;
    while (bytes >= 999.5 && u < 6) bytes /= 1000, ++u;
    char buf[48];
    if (u == 0) std::snprintf(buf, sizeof buf, "%.0f bytes", bytes);
    else std::snprintf(buf, sizeof buf, bytes < 9.995 ? "%.2f %s" : bytes < 99.95 ? "%.1f %s" : "%.0f %s", bytes, units[u]);
    return buf;
}

void check_memory(double need, const std::string& what, const std::string& advice, const memory_limit& limit) {
    if (need <= limit.bytes) return;
    throw out_of_memory(what + " (" + format_bytes(need) + "); " + limit.source + ": " + advice);
}

void check_memory(double need, const std::string& what, const std::string& advice) {
    check_memory(need, what, advice, available_memory());
}

void check_memory(const memory_need& need) { check_memory(need.bytes, need.what, need.advice, available_memory()); }

std::optional<std::uint64_t> plain_file_size(const std::string& path) {
    struct stat st{};
    if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    unsigned char magic[2] = {0, 0};
    std::ifstream(path, std::ios::binary).read(reinterpret_cast<char*>(magic), 2);
    if (magic[0] == 0x1f && magic[1] == 0x8b) return std::nullopt;  // gzip or bgzip
    return static_cast<std::uint64_t>(st.st_size);
}

std::size_t parse_gpu_mem(const std::string& text) {
    if (text.empty()) return 0;
    std::size_t pos = 0;
    unsigned long long value = 0;
    try {
        value = std::stoull(text, &pos);
    } catch (const std::exception&) {
        pos = 0;
    }
    std::size_t unit = 1;
    if (pos > 0 && pos + 1 == text.size()) {
        switch (text[pos]) {
            case 'k': case 'K': unit = std::size_t(1) << 10; break;
            case 'm': case 'M': unit = std::size_t(1) << 20; break;
            case 'g': case 'G': unit = std::size_t(1) << 30; break;
            default: pos = 0;
        }
        if (pos) ++pos;
    }
    if (pos == 0 || pos != text.size() || text[0] == '-')
        throw usage_error("--gpu-mem '" + text + "' is not a size; give bytes or a number with K, M or G, e.g. 4G");
    const std::size_t bytes = static_cast<std::size_t>(value) * unit;
    if (bytes < (std::size_t(16) << 20))
        throw usage_error("--gpu-mem " + text + " is below the minimum of 16M");
    return bytes;
}

}  // namespace swgpu::io
