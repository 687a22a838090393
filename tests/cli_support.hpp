// What the tests that run the built program share: a temporary folder, reading a file, running `swgpu ARGS`.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace swgpu::testing {

// The lines of a text, without their line ends.
inline std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string l; std::getline(ss, l);) out.push_back(l);
    return out;
}

// The tab-separated fields of a line (an empty last field kept).
inline std::vector<std::string> fields_of(const std::string& line) {
    std::vector<std::string> out;
    std::size_t at = 0;
    for (;;) {
        const auto tab = line.find('\t', at);
        out.push_back(line.substr(at, tab - at));
        if (tab == std::string::npos) return out;
        at = tab + 1;
    }
}

// A fresh folder under the system's temporary folder, removed with everything in it at the end of its scope.
struct temp_dir {
    std::filesystem::path path;
    explicit temp_dir(const std::string& prefix = "swgpu-test") {
        std::string templ = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
        path = ::mkdtemp(templ.data());
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    ~temp_dir() { std::filesystem::remove_all(path); }
    std::string operator/(const std::string& name) const { return (path / name).string(); }
    std::size_t count() const {
        std::size_t n = 0;
        for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(path)) ++n;
        return n;
    }
};

inline std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct program_result {
    int code = -1;
    std::string out, err;
};

// `var` from the environment when set, else `built` (a path compiled in): the tests run from a bundle on another
// machine with SWGPU_BINARY, SWGPU_SOURCE_DIR and SWGPU_FAULT_LIBRARY set to where things are there.
inline std::string from_env_or(const char* var, const char* built) {
    const char* v = std::getenv(var);
    return v && *v ? std::string(v) : std::string(built);
}

// The swgpu the tests run: $SWGPU_BINARY, else the one built beside them.
inline const std::string& swgpu_binary() {
    static const std::string b = from_env_or("SWGPU_BINARY", SWGPU_BINARY);
    return b;
}

// Runs the built swgpu (swgpu_binary()) with `args` (a shell fragment), stdin from `input` (/dev/null by default); `env`
// (e.g. "SWGPU_TUNE=host.memory_mib=1024") is set for that run only; timeout_seconds > 0 stops it after that long;
// `dir`, when given, is the working directory (relative names in `args` are its files).
inline program_result run_program(const std::string& args, const std::string& env = "",
                                  const std::string& input = "/dev/null", int timeout_seconds = 0,
                                  const std::string& dir = "") {
    const temp_dir io("swgpu-run");
    const std::string cmd = (dir.empty() ? std::string() : "cd '" + dir + "' && ") +
        (env.empty() ? std::string() : "env " + env + " ") +
        (timeout_seconds > 0 ? "timeout " + std::to_string(timeout_seconds) + " " : std::string()) + "'" +
        swgpu_binary() + "' " + args + " <'" + input + "' >'" + (io / "out") + "' 2>'" + (io / "err") + "'";
    const int status = std::system(cmd.c_str());
    program_result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(io / "out");
    r.err = slurp(io / "err");
    return r;
}

// The exit code a library call's swgpu::error carries (success when it throws none).
inline exit_code code_of(const std::function<void()>& call) {
    try {
        call();
    } catch (const error& e) {
        return e.code();
    }
    return exit_code::success;
}

// True when stderr is exactly one line starting "swgpu: error: " (the error convention).
inline bool one_error_line(const std::string& err) {
    return err.rfind("swgpu: error: ", 0) == 0 && err.find('\n') == err.size() - 1;
}

}  // namespace swgpu::testing
