// The promises of docs/conventions.md, kept by every subcommand: the registry (tests/conventions_registry.hpp) has one
// row per subcommand saying how to make a small valid run, a large one and which of its files are inputs, and each
// promise is one test that loops over the rows (as parasail's tests loop over its function registry). A new subcommand
// joins by adding a row; a promise it breaks fails here. CPU = GPU bytes per row: tests/gpu/test_conventions_backends.cpp.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "app/swgpu/swgpu.hpp"
#include "core/tuning.hpp"
#include "tests/cli_support.hpp"
#include "tests/conventions_registry.hpp"

namespace {

using namespace swgpu::testing;
namespace fs = std::filesystem;
using conv::write_npy;

// Runs swgpu in `dir` (relative names are the folder's) with `args`, {OUT} replaced by `out`, on the CPU.
program_result run_here(const fs::path& dir, const std::string& args, const std::string& out, const std::string& env = "") {
    return run_program(filled(args, out), env, "/dev/null", 0, dir.string());
}

const std::string& large_args(const subcommand& c) { return c.large_args.empty() ? c.args : c.large_args; }

// The temporary files an output leaves while it is written (".NAME.swgpu-XXXXXX", io/output_file.hpp) in `dir`.
std::vector<std::string> temporaries(const fs::path& dir) {
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().find(".swgpu-") != std::string::npos) found.push_back(e.path().filename());
    return found;
}

// Starts swgpu `args` in `dir` (stdout and stderr to /dev/null), sends `sig` after `delay`, and returns how it ended:
// the signal that ended it (128 + signal) or its exit code.
int interrupted(const fs::path& dir, const std::string& args, int sig, std::chrono::milliseconds delay) {
    const std::string cmd = "exec '" + swgpu_binary() + "' " + args + " >/dev/null 2>&1 </dev/null";
    // The child is a copy of this test program until it execs, with the test framework's handlers of SIGINT and
    // SIGTERM: a signal sent in that window (a loaded machine, a short delay) would be reported as this test's fatal
    // error. The signals stay blocked across the fork, the child takes their default action and unblocks them (one
    // sent already then ends it, as it would end the shell), and only then execs.
    sigset_t both, before;
    ::sigemptyset(&both);
    ::sigaddset(&both, SIGINT);
    ::sigaddset(&both, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &both, &before);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::signal(SIGINT, SIG_DFL);
        ::signal(SIGTERM, SIG_DFL);
        ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
        if (::chdir(dir.c_str()) != 0) ::_exit(127);
        ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    std::this_thread::sleep_for(delay);
    ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace

TEST_CASE("conventions: every subcommand runs its registry row (the rows are valid runs)", "[conventions][cli]") {
    for (const auto& c : registry()) {
        INFO(c.name);
        const temp_dir dir("swgpu-conv-ok");
        c.make_inputs(dir.path, false);
        const auto r = run_here(dir.path, c.args, c.out);
        INFO(r.err);
        CHECK(r.code == 0);
        CHECK(r.err.find("error") == std::string::npos);
    }
}

TEST_CASE("conventions: an output that is an input is refused by any name, exit 2, the input kept", "[conventions][cli]") {
    for (const auto& c : registry()) {
        for (const auto& input : c.inputs) {
            const temp_dir dir("swgpu-conv-same");
            c.make_inputs(dir.path, false);
            const std::string before = slurp(dir / input);
            fs::create_symlink(input, dir.path / ("link_" + input));
            fs::create_hard_link(dir.path / input, dir.path / ("hard_" + input));
            // makedb's output is PREFIX.swdb: the input's name without .swdb names it too.
            const std::string stem = c.name == "makedb" ? input.substr(0, input.size() - 5) : input;
            for (const std::string& out : {stem, "./" + stem, (dir.path / stem).string(), "link_" + input, "hard_" + input}) {
                INFO(c.name << ": -o " << out << " with input " << input);
                const auto r = run_here(dir.path, c.args, out);
                CHECK(r.code == 2);
                CHECK(one_error_line(r.err));
                CHECK(slurp(dir / input) == before);
                CHECK(fs::is_symlink(dir.path / ("link_" + input)));
            }
        }
    }
}

TEST_CASE("conventions: -t beyond 4096 threads is refused with exit 2 before any work", "[conventions][cli]") {
    for (const auto& c : registry()) {
        if (!c.has_threads) continue;
        INFO(c.name);
        const temp_dir dir("swgpu-conv-threads");
        c.make_inputs(dir.path, false);
        const auto r = run_here(dir.path, c.args + " -t 100000", "x.npy");
        CHECK(r.code == 2);
        CHECK(!fs::exists(dir.path / "x.npy"));
    }
}

TEST_CASE("conventions: a bad input is one error line, with no notice beside it (a CPU fallback is said after success)",
          "[conventions][cli]") {
    for (const auto& c : registry()) {
        INFO(c.name << ": " << c.bad);
        const temp_dir dir("swgpu-conv-bad");
        c.make_inputs(dir.path, false);
        const auto r = run_here(dir.path, c.bad, "");
        INFO(r.err);
        CHECK(r.code != 0);
        CHECK(one_error_line(r.err));
        CHECK(!fs::exists(dir.path / "x.npy"));
    }
}

TEST_CASE("conventions: a result that overflows to infinity or NaN is refused (exit 1, one line), no file written",
          "[conventions][cli]") {
    const temp_dir dir("swgpu-conv-overflow");
    write_npy(dir.path / "big.npy", {50, 50}, 1e307);
    std::ofstream(dir.path / "tiny.mtx") << "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1e-320\n2 1 1\n2 2 1\n";
    const std::vector<std::pair<std::string, std::string>> runs = {
        {"sat --backend cpu big.npy -o {OUT}", "the sums overflow float64"},
        {"sweep3d --backend cpu --n 16 --kernel dd --source 1e308 -o {OUT}", "--source and --sigma"},
        {"sweep3d --backend cpu --n 16 --c 1e-50 --precision single -o {OUT}", "--c is too small"},
        {"levels --backend cpu --matrix tiny.mtx -o {OUT}", "the solve overflowed"},
    };
    for (const auto& [args, says] : runs) {
        INFO(args);
        const auto r = run_here(dir.path, args + " -q", "out.npy");
        CHECK(r.code == 1);
        CHECK(one_error_line(r.err));
        CHECK_THAT(r.err, Catch::Contains("not finite") && Catch::Contains(says));
        CHECK(!fs::exists(dir.path / "out.npy"));
    }
}

TEST_CASE("conventions: threads that cannot start are one error line and exit 3, never a hang", "[conventions][cli]") {
    // Under a 600 MB address-space limit 4000 threads' stacks cannot all be mapped: the threads already started are
    // stopped and the run ends (sat -t 128 under ulimit -v 1G hung in pthread_cond_destroy).
    for (const auto& c : registry()) {
        if (!c.has_threads) continue;
        INFO(c.name);
        const temp_dir dir("swgpu-conv-nothreads");
        c.make_inputs(dir.path, false);
        const std::string args = filled(c.args + " -t 4000", "x.npy");
        const temp_dir io("swgpu-conv-nothreads-io");
        const std::string cmd = "cd '" + dir.path.string() + "' && ulimit -v 600000 && timeout 120 '" + swgpu_binary() +
                                "' " + args + " >/dev/null 2>'" + (io / "err") + "'";
        const int status = std::system(("bash -c \"" + cmd + "\"").c_str());
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        const std::string err = slurp(io / "err");
        INFO(err);
        CHECK(code == 3);
        CHECK(one_error_line(err));
        CHECK_THAT(err, Catch::Contains("could not start 4000 threads"));
        CHECK(!fs::exists(dir.path / "x.npy"));
    }
}

TEST_CASE("conventions: an output into a folder that does not exist is exit 5, one line, before any work",
          "[conventions][cli]") {
    for (const auto& c : registry()) {
        INFO(c.name);
        const temp_dir dir("swgpu-conv-nodir");
        c.make_inputs(dir.path, false);
        const auto r = run_here(dir.path, c.args + " -q", c.name == "makedb" ? "no_such_dir/x" : "no_such_dir/x.npy");
        INFO(r.err);
        CHECK(r.code == 5);
        CHECK(one_error_line(r.err));
        CHECK(!fs::exists(dir.path / "no_such_dir"));
    }
}

TEST_CASE("conventions: a run that needs more memory than is available is refused with exit 4 before it takes it",
          "[conventions][cli]") {
    // Each row's large run with the memory allowed set to 1 MiB (the tuning key host.memory_mib stands for the
    // machine's, docs/conventions.md "Memory"): one line saying what takes the memory, no output file.
    for (const auto& c : registry()) {
        INFO(c.name);
        const temp_dir dir("swgpu-conv-memory");
        c.make_inputs(dir.path, true);
        const auto r = run_here(dir.path, large_args(c) + (c.has_backend ? " -q" : ""), c.out, "SWGPU_TUNE=host.memory_mib=1");
        INFO(r.err);
        CHECK(r.code == 4);
        CHECK(one_error_line(r.err));
        CHECK_THAT(r.err, Catch::Contains("the memory allowed (host.memory_mib) is 1.05 MB"));
        CHECK(!fs::exists(dir.path / (c.out + c.written_suffix)));
        CHECK(temporaries(dir.path).empty());
    }
}

TEST_CASE("conventions: the bytes written do not depend on the thread count (-t 1 = -t 2 = -t 0)", "[conventions][cli]") {
    for (const auto& c : registry()) {
        INFO(c.name);
        const temp_dir dir("swgpu-conv-t");
        c.make_inputs(dir.path, true);
        std::string first;
        for (const char* t : {"1", "2", "0"}) {
            const std::string t_arg = c.has_threads ? std::string(" -t ") + t : std::string();
            const auto r = run_here(dir.path, large_args(c) + t_arg, c.out);
            INFO("-t " << t << ": " << r.err);
            REQUIRE(r.code == 0);
            const std::string bytes = slurp(dir / (c.out + c.written_suffix));
            CHECK(bytes.size() > 100);
            if (first.empty()) first = bytes;
            CHECK(bytes == first);
            fs::remove(dir.path / (c.out + c.written_suffix));
        }
    }
}

TEST_CASE("conventions: SIGINT or SIGTERM during a run leaves the old output as it was (or the complete new one), no "
          "temporary file",
          "[conventions][cli]") {
    // The signal comes early (inputs being read), midway and late; whenever it comes, the output's name holds the old
    // file or the complete new one (a signal after the rename, or a run already finished), and no temporary file is
    // left.
    for (const auto& c : registry()) {
        const temp_dir dir("swgpu-conv-signal");
        c.make_inputs(dir.path, true);
        const std::string written = c.out + c.written_suffix;
        REQUIRE(run_here(dir.path, large_args(c), c.out).code == 0);
        const std::string complete = slurp(dir / written);
        int stopped = 0;
        for (const int delay : {5, 40, 150, 400}) {
            for (const int sig : {SIGINT, SIGTERM}) {
                INFO(c.name << ": signal " << sig << " after " << delay << " ms");
                std::ofstream(dir / written) << "the old output";
                const int how = interrupted(dir.path, filled(large_args(c), c.out), sig,
                                            std::chrono::milliseconds(delay));
                CHECK((how == 128 + sig || how == 0));
                stopped += how == 128 + sig;
                const std::string now = slurp(dir / written);
                // Finished (exit 0), or stopped before the rename, or after it (the complete file at its name).
                CHECK((now == "the old output" || now == complete));
                CHECK((how != 0 || now == complete));
                CHECK(temporaries(dir.path).empty());
            }
        }
        INFO(c.name);
        CHECK(stopped > 0);  // the large run lasts long enough for a signal to stop it
    }
}

// ---- the C++ face: the library's calls as rows --------------------------------------------------------------------

namespace {

struct library_call {
    std::string name;
    std::function<void()> impossible;  // a call needing more than the 1 MiB allowed below
    std::function<void()> nonfinite;   // a call with NaN in its input
};

const std::vector<library_call>& library_calls() {
    static const std::vector<library_call> rows = {
        {"summed_area_table",
         [] { (void)swgpu::summed_area_table(swgpu::array::zeros<double>({400, 400})); },
         [] {
             auto a = swgpu::array::zeros<double>({4, 4});
             a.at<double>({1, 2}) = std::nan("");
             (void)swgpu::summed_area_table(a, swgpu::backend::cpu);
         }},
        {"integral_histogram",
         [] { (void)swgpu::integral_histogram(swgpu::array::zeros<double>({300, 300}), 8, {}, swgpu::backend::cpu); },
         [] {
             auto a = swgpu::array::zeros<double>({4, 4});
             a.at<double>({0, 0}) = std::nan("");
             (void)swgpu::integral_histogram(a, 2, {}, swgpu::backend::cpu);
         }},
        {"sweep3d_fmod", [] { (void)swgpu::sweep3d_fmod(100, 1, 1.0, swgpu::dtype::float64, swgpu::backend::cpu); },
         nullptr},
        {"poisson_sor",
         [] {
             const std::vector<double> f(300 * 300, 1.0), g(300 * 300, 0.0);
             (void)swgpu::poisson_sor(300, f, g);
         },
         [] {
             std::vector<double> f(9 * 9, 1.0), g(9 * 9, 0.0);
             f[40] = std::nan("");
             (void)swgpu::poisson_sor(9, f, g);
         }},
        {"triangular_solve", nullptr,
         [] {
             swgpu::csr_matrix m{2, 2, {0, 1, 3}, {0, 0, 1}, {1.0, 2.0, 3.0}};
             (void)swgpu::triangular_solve(m, {1.0, std::nan("")}, true, swgpu::backend::cpu);
         }},
    };
    return rows;
}


}  // namespace

// swgpu serve writes no file and runs until a signal, so it has no row in the registry: the promises that apply to it
// (one error line, the exit codes, -t bounded) are checked here; tests/serve/test_serve.py runs the service itself.
TEST_CASE("conventions: swgpu serve refuses bad options and inputs with one error line and the promised exit code",
          "[conventions][cli]") {
    const temp_dir dir("swgpu-conv-serve");
    std::ofstream(dir.path / "db.fa") << ">s\nMKVLAAGIVGLLLAQHWERTYPLKV\n";
    const struct {
        const char* args;
        int code;
    } cases[] = {{"serve", 2},
                 {"serve db.fa --listen nohost", 2},
                 {"serve db.fa --listen 127.0.0.1:99999", 2},
                 {"serve db.fa -t 100000", 2},
                 {"serve db.fa --max-batch many", 2},
                 {"serve db.fa --no-such-option", 2},
                 {"serve db.fa --outfmt sam", 2},
                 {"serve db.fa --outfmt 9", 2},
                 {"serve db.fa --backend cpu -e 0", 2},
                 {"serve no_such.fa", 1},
                 {"serve db.fa --token-file no_such", 1},
                 {"serve db.fa --backend cpu --listen 203.0.113.7:8080", 3},
                 // the client refuses an output that is its query file before it reads or sends anything
                 {"align --server http://127.0.0.1:9 db.fa -o db.fa", 2}};
    for (const auto& c : cases) {
        INFO(c.args);
        const auto r = run_program(c.args, "", "/dev/null", 60, dir.path.string());
        INFO(r.err);
#ifdef SWGPU_HAVE_SERVE
        CHECK(r.code == c.code);
#else  // built without cpp-httplib: a usage error, or the one line saying how to get the service (exit 3)
        CHECK((r.code == 2 || r.code == 3));
#endif
        CHECK(one_error_line(r.err));
    }
}

TEST_CASE("conventions, C++ face: a call needing more memory than allowed is refused (out of memory) before it takes it",
          "[conventions][library]") {
    const swgpu::tuning::scoped_override small("host.memory_mib=1");
    for (const auto& c : library_calls()) {
        if (!c.impossible) continue;
        INFO(c.name);
        CHECK(code_of(c.impossible) == swgpu::exit_code::out_of_memory);
    }
}

TEST_CASE("conventions, C++ face: NaN in an input is refused (bad input)", "[conventions][library]") {
    for (const auto& c : library_calls()) {
        if (!c.nonfinite) continue;
        INFO(c.name);
        CHECK(code_of(c.nonfinite) == swgpu::exit_code::bad_input);
    }
}
