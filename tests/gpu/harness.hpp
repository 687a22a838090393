// A small test harness for the GPU test executable (Catch2 does not enter CUDA translation units).
//
//   GPU_TEST("name") { ... CHECK(cond); REQUIRE(cond); CHECK_EQ(a, b); }
//
// main() runs every registered test whose name contains argv[1] (all when absent). Exit codes: 0 all passed, 1 a
// check failed, 2 the input files or the swgpu program were not found (one line says which), 77 no CUDA device (CTest
// reports the test as skipped, never passed).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace swgpu::gputest {

struct test_case {
    const char* name;
    std::function<void()> body;
};

inline std::vector<test_case>& registry() {
    static std::vector<test_case> r;
    return r;
}
inline int& failures() {
    static int f = 0;
    return f;
}
struct registrar {
    registrar(const char* name, std::function<void()> body) { registry().push_back({name, std::move(body)}); }
};
struct require_failed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline void report(const char* file, int line, const std::string& what) {
    ++failures();
    std::fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what.c_str());
}

// The files the tests read, relative to source_dir(); main() checks them before any test runs.
inline const char* const required_files[] = {"data/demo_db.fa", "data/demo_queries.fa",
                                             "tests/data/crosscheck/lambda_pieces.fa"};

// The source tree the inputs come from: $SWGPU_SOURCE_DIR, else the tree this was built from when it holds the inputs,
// else the current directory.
inline std::string source_dir() {
    namespace fs = std::filesystem;
    if (const char* p = std::getenv("SWGPU_SOURCE_DIR")) return p;
#ifdef SWGPU_SOURCE_DIR
    if (fs::exists(fs::path(SWGPU_SOURCE_DIR) / required_files[0])) return SWGPU_SOURCE_DIR;
#endif
    return fs::current_path().string();
}

// The swgpu program the end-to-end tests run: $SWGPU_BINARY, else beside this executable or in the build tree's app/,
// else empty.
inline std::string program() {
    namespace fs = std::filesystem;
    if (const char* p = std::getenv("SWGPU_BINARY")) return p;
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec).parent_path();
    for (const auto& c : {self / "swgpu", self.parent_path() / "app" / "swgpu", self.parent_path().parent_path() / "app" / "swgpu"})
        if (fs::exists(c)) return c.string();
    return {};
}

}  // namespace swgpu::gputest

#define SWGPU_CAT2(a, b) a##b
#define SWGPU_CAT(a, b) SWGPU_CAT2(a, b)
#define GPU_TEST(name)                                                                                     \
    static void SWGPU_CAT(gpu_test_fn_, __LINE__)();                                                        \
    static ::swgpu::gputest::registrar SWGPU_CAT(gpu_test_reg_, __LINE__)(name, SWGPU_CAT(gpu_test_fn_, __LINE__)); \
    static void SWGPU_CAT(gpu_test_fn_, __LINE__)()

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) ::swgpu::gputest::report(__FILE__, __LINE__, #cond);                \
    } while (0)
#define REQUIRE(cond)                                                                     \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            ::swgpu::gputest::report(__FILE__, __LINE__, #cond);                          \
            throw ::swgpu::gputest::require_failed(#cond);                                \
        }                                                                                 \
    } while (0)
#define CHECK_EQ(a, b)                                                                    \
    do {                                                                                  \
        const auto& swgpu_a_ = (a);                                                       \
        const auto& swgpu_b_ = (b);                                                       \
        if (!(swgpu_a_ == swgpu_b_)) {                                                    \
            std::ostringstream swgpu_os_;                                                 \
            swgpu_os_ << #a " == " #b " (" << swgpu_a_ << " vs " << swgpu_b_ << ")";     \
            ::swgpu::gputest::report(__FILE__, __LINE__, swgpu_os_.str());                \
        }                                                                                 \
    } while (0)
