// Shared by the libFuzzer targets in tests/fuzz (built and run by scripts/fuzz.sh, outside the normal build).
//
// A parser given any bytes either succeeds or throws swgpu::error with the exit code a user would see for bad data
// (bad_input; out_of_memory where the parser checks the memory a header announces against the memory available).
// Anything else (a crash, a sanitizer report, another exception, a leak, a hang, an allocation over libFuzzer's
// -malloc_limit_mb) is a bug. fuzz_abort() marks a broken promise of a parser that succeeded.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace swgpu::fuzz {

[[noreturn]] inline void fuzz_abort(const char* what) {
    std::fprintf(stderr, "fuzz target: broken invariant: %s\n", what);
    std::abort();
}

// An error that is an expected outcome for arbitrary input: bad input, or (memory_checked) a size refused by
// io::check_memory. Its message is one line.
inline void expect(const swgpu::error& e, bool memory_checked = false) {
    const bool ok = e.code() == swgpu::exit_code::bad_input || (memory_checked && e.code() == swgpu::exit_code::out_of_memory);
    if (!ok) {
        std::fprintf(stderr, "fuzz target: unexpected exit code %d: %s\n", static_cast<int>(e.code()), e.what());
        std::abort();
    }
    if (std::string_view(e.what()).find('\n') != std::string_view::npos) fuzz_abort("an error message of several lines");
}

// A file of this process in $TMPDIR (default /tmp) for parsers that read paths: "swgpu_fuzz_<pid>_<tag>".
inline std::string scratch_path(const std::string& tag) {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp && *tmp ? tmp : "/tmp") + "/swgpu_fuzz_" + std::to_string(::getpid()) + "_" + tag;
}

inline void write_file(const std::string& path, std::string_view bytes) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) fuzz_abort("cannot create the scratch file");
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) fuzz_abort("cannot write the scratch file");
    std::fclose(f);
}

// Removes the scratch files when the fuzzer exits normally.
struct scratch_cleanup {
    std::string paths[4];
    ~scratch_cleanup() {
        for (const auto& p : paths)
            if (!p.empty()) std::remove(p.c_str());
    }
};

}  // namespace swgpu::fuzz
