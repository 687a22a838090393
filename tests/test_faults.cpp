// Failures of the file system under the built program (docs/testing.md, "Fault injection"): a full disk while an output
// is written, an I/O error while an input is read, a folder the user may not write, a pipe that ends early. Each
// failure must give the documented exit code (5 for an output, 1 for an input: docs/conventions.md), exactly one line
// on stderr naming the file and the reason, and no output: no file at the output's name when there was none, an earlier
// file of that name byte for byte as it was, and no temporary file left beside it.
//
// The failures are injected into the swgpu process by libswgpu_fault.so (tests/fault/fault_inject.cpp) through
// LD_PRELOAD, steered by SWGPU_FAULT_* variables. Where LD_PRELOAD cannot work (a sanitizer build, a platform without
// the library) the tests say why and pass without running.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/numerics/sat.hpp"
#include "io/arrays/npy.hpp"
#include "tests/cli_support.hpp"

namespace {

using namespace swgpu::testing;
namespace fs = std::filesystem;

const std::string source_dir = from_env_or("SWGPU_SOURCE_DIR", SWGPU_SOURCE_DIR);
#ifdef SWGPU_FAULT_LIBRARY
const std::string fault_library = from_env_or("SWGPU_FAULT_LIBRARY", SWGPU_FAULT_LIBRARY);
#endif
const std::string queries = source_dir + "/data/demo_queries.fa";
const std::string database = source_dir + "/data/demo_db.fa";

#if defined(__SANITIZE_ADDRESS__)
constexpr bool address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool address_sanitizer = true;
#else
constexpr bool address_sanitizer = false;
#endif
#else
constexpr bool address_sanitizer = false;
#endif

std::string q(const std::string& s) { return "'" + s + "'"; }

// Why faults cannot be injected in this build, or "" when they can: the library must exist, the build must not be
// one with AddressSanitizer (whose runtime must come first among the libraries, so LD_PRELOAD of another one stops
// the program), and a probe run must show the library loaded into swgpu.
const std::string& injection_unavailable() {
    static const std::string why = []() -> std::string {
#ifndef SWGPU_FAULT_LIBRARY
        return "the fault-injection library is built on Linux only";
#else
        if (address_sanitizer) return "an AddressSanitizer build (LD_PRELOAD of another library conflicts with its runtime)";
        if (!fs::exists(fault_library)) return fault_library + " is missing";
        const auto r = run_program("--version", "LD_PRELOAD=" + q(fault_library) + " SWGPU_FAULT_PROBE=1");
        if (r.code != 0 || r.err.find("swgpu-fault: loaded") == std::string::npos)
            return "LD_PRELOAD does not reach the swgpu process (exit " + std::to_string(r.code) + ", stderr: " + r.err + ")";
        return "";
#endif
    }();
    return why;
}

#define REQUIRE_INJECTION()                                                         \
    do {                                                                            \
        if (!injection_unavailable().empty()) {                                     \
            WARN("fault injection skipped: " << injection_unavailable());          \
            return;                                                                 \
        }                                                                           \
    } while (0)

// swgpu ARGS with the library preloaded and `faults` (SWGPU_FAULT_...=... words) set.
program_result run_faulted(const std::string& args, const std::string& faults) {
#ifdef SWGPU_FAULT_LIBRARY
    return run_program(args, "LD_PRELOAD=" + q(fault_library) + " " + faults);
#else
    (void)faults;
    return run_program(args);
#endif
}

std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

void put(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Inputs of the numerical commands, written once per test run into `dir`.
struct numeric_inputs {
    std::string image, array, matrix;
    explicit numeric_inputs(const temp_dir& dir) : image(dir / "img.pgm"), array(dir / "img.npy"), matrix(dir / "bi.mtx") {
        std::string pgm = "P5\n64 64\n255\n";
        for (int k = 0; k < 64 * 64; ++k) pgm += static_cast<char>((k * 7) % 251);
        put(image, pgm);
        swgpu::sat::array a(swgpu::sat::dtype::f64, 64, 64, 1);
        for (int k = 0; k < 64 * 64; ++k) a.data<double>()[k] = 0.5 * (k % 97);
        swgpu::io::write_npy(a, array);
        // A lower bidiagonal matrix of 200 rows: 2 on the diagonal, -1 below it.
        std::string mtx = "%%MatrixMarket matrix coordinate real general\n200 200 399\n";
        for (int i = 1; i <= 200; ++i) {
            if (i > 1) mtx += std::to_string(i) + " " + std::to_string(i - 1) + " -1.0\n";
            mtx += std::to_string(i) + " " + std::to_string(i) + " 2.0\n";
        }
        put(matrix, mtx);
    }
};

// A command writing one output, `name` in the folder of outputs; `args` holds OUT where that path goes.
struct output_case {
    const char* what;
    std::string args;
    std::string name;
};

std::string with_output(std::string args, const std::string& out) {
    const auto at = args.find("OUT");
    return args.replace(at, 3, q(out));
}

// The backends the fault tests run on: the CPU, and the GPU where one is usable (a run on it succeeds), so that every
// output path of both is covered (the GPU backend's outputs go through the same files, after device work).
const std::vector<std::string>& backends() {
    static const std::vector<std::string> b = [] {
        std::vector<std::string> v{"cpu"};
        if (run_program("sweep3d --n 4 --backend gpu -q").code == 0) v.push_back("gpu");
        return v;
    }();
    return b;
}

// `args` for `backend`: its "--backend cpu" replaced; empty when it names no backend and `backend` is not the CPU
// (a command without device work runs once).
std::string on_backend(std::string args, const std::string& backend) {
    const auto at = args.find("--backend cpu");
    if (at == std::string::npos) return backend == "cpu" ? args : std::string();
    return args.replace(at, 13, "--backend " + backend);
}

// Every output of `align` and `makedb`, and of the numerical commands (OUT where the output's path goes).
std::vector<output_case> align_outputs() {
    const std::string demo = q(queries) + " " + q(database) + " --backend cpu -q";
    return {
        {"BLAST tabular -o", "align " + demo + " -o OUT", "hits.tsv"},
        {"SAM -o", "align " + demo + " --outfmt sam -o OUT", "hits.sam"},
        {"--dotplot", "align " + demo + " --dotplot OUT", "plot.svg"},
        {"makedb", "makedb " + q(database) + " OUT -q", "demo.swdb"},
    };
}

std::vector<output_case> numeric_outputs(const numeric_inputs& inputs) {
    return {
        {"sat table", "sat " + q(inputs.image) + " --backend cpu -o OUT", "t.npy"},
        {"sat --box-filter .npy (rows written in place)", "sat " + q(inputs.array) + " --box-filter 2 --backend cpu -o OUT", "b.npy"},
        {"sat --box-filter PNG", "sat " + q(inputs.image) + " --box-filter 2 --backend cpu -o OUT", "b.png"},
        {"ihist", "ihist " + q(inputs.image) + " --bins 4 --backend cpu -o OUT", "h.npy"},
        {"sor -o", "sor --model 33 --backend cpu -q -o OUT", "u.npy"},
        {"sor --history", "sor --model 33 --backend cpu -q --history OUT", "h.tsv"},
        {"levels -o", "levels --matrix " + q(inputs.matrix) + " --backend cpu -q -o OUT", "x.npy"},
        {"levels --stats", "levels --matrix " + q(inputs.matrix) + " --backend cpu -q --stats OUT", "s.tsv"},
        {"sweep3d", "sweep3d --n 8 --backend cpu -q -o OUT", "g.npy"},
    };
}

// After a failed or interrupted run: the folder of outputs holds only the earlier file `name` with its text `earlier`
// (removed afterwards for the next run), or nothing when there was none.
void check_nothing_left(const fs::path& outs, const std::string& name, const std::string& earlier) {
    if (earlier.empty()) {
        CHECK(entries(outs).empty());
        return;
    }
    CHECK(entries(outs) == std::vector<std::string>{name});
    CHECK(slurp(outs / name) == earlier);
    fs::remove(outs / name);
}

// Runs `c` once without faults (it must succeed and write its file) and then with writes to the folder of outputs
// failing after 0 bytes, half the file and all but its last byte, each with and without an earlier file there.
void check_output_faults(const output_case& c) {
    INFO(c.what << ": swgpu " << c.args);
    const temp_dir out("swgpu-fault-out");
    const std::string path = out / c.name;
    const auto clean = run_program(with_output(c.args, path));
    REQUIRE(clean.code == 0);
    REQUIRE(entries(out.path) == std::vector<std::string>{c.name});
    const auto size = static_cast<long long>(fs::file_size(path));
    REQUIRE(size > 1);
    fs::remove(path);

    const std::string earlier = "an earlier file of that name\n";
    for (const long long after : {0LL, size / 2, size - 1}) {
        for (const bool had_file : {false, true}) {
            INFO("writes fail after " << after << " of " << size << " bytes; earlier file: " << had_file);
            if (had_file) put(path, earlier);
            const auto r = run_faulted(with_output(c.args, path),
                                       "SWGPU_FAULT_PATH=" + q(out.path.string() + "/") +
                                           " SWGPU_FAULT_WRITE_AFTER=" + std::to_string(after));
            CHECK(r.code == 5);
            CHECK(one_error_line(r.err));
            CHECK_THAT(r.err, Catch::Contains(path) && Catch::Contains("No space left on device"));
            check_nothing_left(out.path, c.name, had_file ? earlier : "");
        }
    }
}

// Starts swgpu ARGS with the library preloaded and writes to files whose path contains `path` stopped after `after`
// bytes; waits until the stall mark appears (the process is caught in its output), sends `sig` and returns how the
// process ended: the signal that ended it, or -1 (it exited, or never stalled within 60 s: then it is killed).
int signal_during_output(const std::string& args, const std::string& path, long long after, int sig) {
#ifdef SWGPU_FAULT_LIBRARY
    const temp_dir marks("swgpu-fault-mark");
    const std::string mark = marks / "stalled";
    const std::string cmd = "exec env LD_PRELOAD=" + q(fault_library) + " SWGPU_FAULT_PATH=" + q(path) +
                            " SWGPU_FAULT_STALL_AFTER=" + std::to_string(after) + " SWGPU_FAULT_STALL_MARK=" + q(mark) +
                            " '" + swgpu_binary() + "' " + args + " < /dev/null > /dev/null 2>&1";
    const pid_t pid = ::fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        ::signal(SIGINT, SIG_DFL);
        ::signal(SIGTERM, SIG_DFL);
        ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    bool stalled = false;
    int status = 0;
    for (int k = 0; k < 6000 && !stalled; ++k) {
        stalled = fs::exists(mark);
        if (!stalled) {
            if (::waitpid(pid, &status, WNOHANG) == pid) return -1;  // it ended without reaching its output's stall
            ::usleep(10000);
        }
    }
    ::kill(pid, stalled ? sig : SIGKILL);
    ::waitpid(pid, &status, 0);
    return stalled && WIFSIGNALED(status) ? WTERMSIG(status) : -1;
#else
    (void)args, (void)path, (void)after, (void)sig;
    return -1;
#endif
}

}  // namespace

TEST_CASE("a full disk while swgpu align and makedb write: exit 5, one line, no file or the earlier one kept", "[faults][cli]") {
    REQUIRE_INJECTION();
    const auto cases = align_outputs();
    for (const auto& backend : backends())
        for (const auto& c : cases)
            if (const auto args = on_backend(c.args, backend); !args.empty()) check_output_faults({c.what, args, c.name});
}

TEST_CASE("a full disk while the numerical commands write: exit 5, one line, no file or the earlier one kept", "[faults][cli]") {
    REQUIRE_INJECTION();
    const temp_dir in("swgpu-fault-in");
    const numeric_inputs inputs(in);
    const auto cases = numeric_outputs(inputs);
    for (const auto& backend : backends())
        for (const auto& c : cases)
            if (const auto args = on_backend(c.args, backend); !args.empty()) check_output_faults({c.what, args, c.name});
}

TEST_CASE("the error of a failed write is the one the file system gave", "[faults][cli]") {
    REQUIRE_INJECTION();
    const temp_dir out("swgpu-fault-out");
    for (const auto& [name, text] : {std::pair{"EDQUOT", "Disk quota exceeded"}, std::pair{"EFBIG", "File too large"},
                                     std::pair{"EIO", "Input/output error"}}) {
        const auto r = run_faulted("sweep3d --n 8 --backend cpu -q -o " + q(out / "g.npy"),
                                   "SWGPU_FAULT_PATH=" + q(out.path.string() + "/") +
                                       " SWGPU_FAULT_WRITE_AFTER=200 SWGPU_FAULT_ERRNO=" + name);
        CHECK(r.code == 5);
        CHECK(one_error_line(r.err));
        CHECK_THAT(r.err, Catch::Contains(out / "g.npy") && Catch::Contains(text));
        CHECK(entries(out.path).empty());
    }
}

TEST_CASE("a command with several outputs leaves none of them when writing one fails", "[faults][cli]") {
    REQUIRE_INJECTION();
    const temp_dir in("swgpu-fault-in");
    const numeric_inputs inputs(in);
    const temp_dir out("swgpu-fault-out");
    put(in / "r.tsv", "0 0 3 3\n1 2 10 20\n");
    struct several {
        const char* what;
        std::string args;
        std::string failing;  // the output whose writes fail
    };
    const std::string demo = q(queries) + " " + q(database) + " --backend cpu -q";
    const std::vector<several> cases = {
        {"align -o and --dotplot", "align " + demo + " -o " + q(out / "hits.tsv") + " --dotplot " + q(out / "plot.svg"), "plot.svg"},
        {"align -o and --dotplot", "align " + demo + " -o " + q(out / "hits.tsv") + " --dotplot " + q(out / "plot.svg"), "hits.tsv"},
        {"sor -o, --history, --plot", "sor --model 33 --backend cpu -q -o " + q(out / "u.npy") + " --history " +
                                          q(out / "h.tsv") + " --plot " + q(out / "p.svg"), "h.tsv"},
        {"sor -o, --history, --plot", "sor --model 33 --backend cpu -q -o " + q(out / "u.npy") + " --history " +
                                          q(out / "h.tsv") + " --plot " + q(out / "p.svg"), "p.svg"},
        {"levels -o and --stats", "levels --matrix " + q(inputs.matrix) + " --backend cpu -q -o " + q(out / "x.npy") +
                                      " --stats " + q(out / "s.tsv"), "x.npy"},
        {"levels -o and --stats", "levels --matrix " + q(inputs.matrix) + " --backend cpu -q -o " + q(out / "x.npy") +
                                      " --stats " + q(out / "s.tsv"), "s.tsv"},
        {"sat -o and --query-out", "sat " + q(inputs.image) + " --backend cpu -o " + q(out / "t.npy") + " --query " +
                                       q(in / "r.tsv") + " --query-out " + q(out / "sums.tsv"), "sums.tsv"},
        {"sat --box-filter and --query-out", "sat " + q(inputs.image) + " --box-filter 1 --backend cpu -o " +
                                                 q(out / "b.png") + " --query " + q(in / "r.tsv") + " --query-out " +
                                                 q(out / "sums.tsv"), "b.png"},
        {"sat --box-filter and --query-out", "sat " + q(inputs.image) + " --box-filter 1 --backend cpu -o " +
                                                 q(out / "b.png") + " --query " + q(in / "r.tsv") + " --query-out " +
                                                 q(out / "sums.tsv"), "sums.tsv"},
        {"ihist -o and --query-out", "ihist " + q(inputs.image) + " --bins 4 --backend cpu -o " + q(out / "h.npy") +
                                         " --query " + q(in / "r.tsv") + " --query-out " + q(out / "hq.tsv"), "h.npy"},
    };
    for (const auto& backend : backends())
        for (const auto& c : cases) {
            const std::string args = on_backend(c.args, backend);
            INFO(c.what << ", writes to " << c.failing << " fail: swgpu " << args);
            REQUIRE(run_program(args).code == 0);  // the command line is right
            for (const auto& e : entries(out.path)) fs::remove(out.path / e);
            const auto r = run_faulted(args, "SWGPU_FAULT_PATH=" + q("." + c.failing + ".swgpu-") + " SWGPU_FAULT_WRITE_AFTER=10");
            CHECK(r.code == 5);
            CHECK(one_error_line(r.err));
            CHECK_THAT(r.err, Catch::Contains(c.failing) && Catch::Contains("No space left on device"));
            CHECK(entries(out.path).empty());
        }
}

TEST_CASE("an I/O error while an input is read: exit 1, one line naming the file, no output", "[faults][cli]") {
    REQUIRE_INJECTION();
    const temp_dir in("swgpu-fault-in");
    const numeric_inputs inputs(in);
    const temp_dir out("swgpu-fault-out");
    struct read_case {
        const char* what;
        std::string args;  // OUT: the output
        std::string input, name;
        long long after;   // bytes read before the error
    };
    const std::string demo = q(queries) + " " + q(database) + " --backend cpu -q";
    const std::vector<read_case> cases = {
        {"the query FASTA, mid-file", "align " + demo + " -o OUT", queries, "hits.tsv", 700},
        {"the query FASTA, at once", "align " + demo + " -o OUT", queries, "hits.tsv", 0},
        {"the database FASTA, mid-file", "align " + demo + " --db-chunk 20000 -o OUT", database, "hits.tsv", 300000},
        {"the database FASTA, makedb", "makedb " + q(database) + " OUT -q", database, "db.swdb", 300000},
        {"a .npy input", "sat " + q(inputs.array) + " --backend cpu -o OUT", inputs.array, "t.npy", 4000},
        {"a PGM input", "sat " + q(inputs.image) + " --backend cpu -o OUT", inputs.image, "t.npy", 2000},
        {"a .npy input of ihist", "ihist " + q(inputs.array) + " --bins 4 --backend cpu -o OUT", inputs.array, "h.npy", 4000},
        {"a Matrix Market file", "levels --matrix " + q(inputs.matrix) + " --backend cpu -q -o OUT", inputs.matrix, "x.npy", 1000},
    };
    for (const auto& c : cases) {
        INFO(c.what << ": reads fail after " << c.after << " bytes: swgpu " << c.args);
        const std::string path = out / c.name;
        REQUIRE(run_program(with_output(c.args, path)).code == 0);
        fs::remove(path);
        const auto r = run_faulted(with_output(c.args, path),
                                   "SWGPU_FAULT_PATH=" + q(c.input) + " SWGPU_FAULT_READ_AFTER=" + std::to_string(c.after));
        CHECK(r.code == 1);
        CHECK(one_error_line(r.err));
        CHECK_THAT(r.err, Catch::Contains(c.input) && Catch::Contains("Input/output error"));
        CHECK(entries(out.path).empty());
    }
}

TEST_CASE("a folder the user may not write: exit 5 before any work, one line, nothing written", "[faults][cli]") {
    const temp_dir in("swgpu-fault-in");
    const numeric_inputs inputs(in);
    const temp_dir out("swgpu-fault-out");
    const std::string demo = q(queries) + " " + q(database) + " --backend cpu -q";
    auto cases = align_outputs();
    for (auto& c : numeric_outputs(inputs)) cases.push_back(std::move(c));
    const auto check = [&](const program_result& r, const output_case& c, bool had_file) {
        CHECK(r.code == 5);
        CHECK(one_error_line(r.err));
        CHECK_THAT(r.err, Catch::Contains(out / c.name) && Catch::Contains("Permission denied"));
        CHECK(entries(out.path) == (had_file ? std::vector<std::string>{c.name} : std::vector<std::string>{}));
        if (had_file) CHECK(slurp(out / c.name) == "earlier\n");
    };
    if (::geteuid() != 0) {
        for (const auto& c : cases) {
            INFO(c.what << " into a folder of mode 0555: swgpu " << c.args);
            for (const bool had_file : {false, true}) {
                if (had_file) put(out / c.name, "earlier\n");
                ::chmod(out.path.c_str(), 0555);
                const auto r = run_program(with_output(c.args, out / c.name));
                ::chmod(out.path.c_str(), 0755);
                check(r, c, had_file);
                if (had_file) fs::remove(out / c.name);
            }
        }
    } else {
        WARN("running as root, who may write a folder of mode 0555: the unwritable folder is simulated only");
    }
    REQUIRE_INJECTION();
    for (const auto& c : cases) {
        INFO(c.what << " into a folder where creating files fails with EACCES: swgpu " << c.args);
        for (const bool had_file : {false, true}) {
            if (had_file) put(out / c.name, "earlier\n");
            const auto r = run_faulted(with_output(c.args, out / c.name), "SWGPU_FAULT_OPEN_PATH=" + q(out.path.string() + "/"));
            check(r, c, had_file);
            if (had_file) fs::remove(out / c.name);
        }
    }
}

namespace {

// swgpu ARGS stopped after 60 s: a program that opened a named pipe twice would wait for a second writer for ever.
program_result run_limited(const std::string& args) { return run_program(args, "", "/dev/null", 60); }

// Writes the first `bytes` bytes of `source` (all with -1) into the named pipe `fifo`, in the background: the writer
// waits until swgpu opens the pipe, and gives up after 60 s if it never does.
void feed(const std::string& fifo, const std::string& source, long long bytes = -1) {
    const std::string copy = bytes < 0 ? "cat '" + source + "'" : "head -c " + std::to_string(bytes) + " '" + source + "'";
    REQUIRE(std::system(("timeout 60 sh -c \"" + copy + " > '" + fifo + "'\" &").c_str()) == 0);
}

}  // namespace

TEST_CASE("inputs through a named pipe are read once and whole, and one that ends early is exit 1 with one line and no output", "[faults][cli]") {
    // A pipe is read to its end (not mapped, not read at offsets, not opened twice to look at its first bytes).
    const temp_dir in("swgpu-fault-in");
    const numeric_inputs inputs(in);
    const temp_dir out("swgpu-fault-out");
    const std::string fifo = in / "pipe";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);

    SECTION("whole inputs give what the files give") {
        struct whole_case {
            const char* what;
            std::string args, source;  // PIPE: the input; OUT: the output
            std::string extension;
        };
        const std::vector<whole_case> cases = {
            {"a .npy image", "sat PIPE --backend cpu -o OUT", inputs.array, ".npy"},
            {"a PGM image", "sat PIPE --backend cpu -o OUT", inputs.image, ".npy"},
            {"a Matrix Market file", "levels --matrix PIPE --backend cpu -q -o OUT", inputs.matrix, ".npy"},
            {"the database FASTA", "align " + q(queries) + " PIPE --backend cpu -q --db-chunk 20000 -o OUT", database, ".tsv"},
            {"the query FASTA", "align PIPE " + q(database) + " --backend cpu -q -o OUT", queries, ".tsv"},
            {"makedb's FASTA", "makedb PIPE OUT -q", database, ".swdb"},
        };
        for (const auto& c : cases) {
            INFO(c.what << ": swgpu " << c.args);
            const std::string want = out / ("want" + c.extension), got = out / ("got" + c.extension);
            auto args = with_output(c.args, want);
            REQUIRE(run_program(args.replace(args.find("PIPE"), 4, q(c.source))).code == 0);
            feed(fifo, c.source);
            args = with_output(c.args, got);
            const auto r = run_limited(args.replace(args.find("PIPE"), 4, q(fifo)));
            CHECK(r.code == 0);
            CHECK(r.err.empty());
            CHECK(slurp(got) == slurp(want));
            CHECK(slurp(want).size() > 100);
            fs::remove(want);
            fs::remove(got);
        }
    }
    SECTION("an input that ends early") {
        // The Matrix Market file cut after its 50th line: a whole entry, then the end (a cut inside a line is a
        // malformed entry instead).
        long long matrix_lines_bytes = 0;
        const std::string text = slurp(inputs.matrix);
        for (int lines = 0; lines < 50; ++lines) matrix_lines_bytes = static_cast<long long>(text.find('\n', matrix_lines_bytes)) + 1;
        struct cut_case {
            const char* what;
            std::string args, source, name;
            long long bytes;
            const char* says;
        };
        const std::vector<cut_case> cases = {
            {".npy cut in its body", "sat " + q(fifo) + " --backend cpu -o OUT", inputs.array, "t.npy", 1000, "truncated"},
            {"PGM cut in its pixels", "sat " + q(fifo) + " --backend cpu -o OUT", inputs.image, "t.npy", 1000, "truncated"},
            {"Matrix Market cut at the end of a line before its entries end",
             "levels --matrix " + q(fifo) + " --backend cpu -q -o OUT", inputs.matrix, "x.npy", matrix_lines_bytes, "entries"},
        };
        for (const auto& c : cases) {
            INFO(c.what << ": swgpu " << c.args);
            feed(fifo, c.source, c.bytes);
            const auto r = run_limited(with_output(c.args, out / c.name));
            CHECK(r.code == 1);
            CHECK(one_error_line(r.err));
            CHECK_THAT(r.err, Catch::Contains(fifo) && Catch::Contains(c.says));
            CHECK(entries(out.path).empty());
        }
    }
}

TEST_CASE("SIGINT or SIGTERM while any subcommand writes its output: it dies of the signal, no file or the earlier one kept", "[faults][cli]") {
    // Each command is stopped inside the write of its output (at its first byte, and half way through the file),
    // then signalled: the process must end by that signal (exit status 128 + N in a shell), leaving no file at the
    // output's name (or the earlier file of that name as it was) and no temporary file. With several outputs, one
    // stopped while the others are complete: none is left.
    REQUIRE_INJECTION();
    const temp_dir in("swgpu-fault-in");
    const numeric_inputs inputs(in);
    const std::string demo = q(queries) + " " + q(database) + " --backend cpu -q";
    const std::vector<output_case> cases = {
        {"align -o", "align " + demo + " -o OUT", "hits.tsv"},
        {"align SAM", "align " + demo + " --outfmt sam -o OUT", "hits.sam"},
        {"align --dotplot", "align " + demo + " --dotplot OUT", "plot.svg"},
        {"makedb", "makedb " + q(database) + " OUT -q", "demo.swdb"},
        {"sat table", "sat " + q(inputs.image) + " --backend cpu -o OUT", "t.npy"},
        {"sat --box-filter .npy", "sat " + q(inputs.array) + " --box-filter 2 --backend cpu -o OUT", "b.npy"},
        {"sat --box-filter PNG", "sat " + q(inputs.image) + " --box-filter 2 --backend cpu -o OUT", "b.png"},
        {"ihist", "ihist " + q(inputs.image) + " --bins 4 --backend cpu -o OUT", "h.npy"},
        {"sor -o", "sor --model 33 --backend cpu -q -o OUT", "u.npy"},
        {"levels -o", "levels --matrix " + q(inputs.matrix) + " --backend cpu -q -o OUT", "x.npy"},
        {"sweep3d", "sweep3d --n 8 --backend cpu -q -o OUT", "g.npy"},
    };
    const std::string earlier = "an earlier file of that name\n";
    int signalled = 0, runs = 0;
    for (const auto& backend : backends()) {
        for (const auto& c : cases) {
            const std::string args = on_backend(c.args, backend);
            if (args.empty()) continue;
            ++runs;
            INFO(c.what << ": swgpu " << args);
            const temp_dir out("swgpu-fault-out");
            const std::string path = out / c.name;
            REQUIRE(run_program(with_output(args, path)).code == 0);
            const auto size = static_cast<long long>(fs::file_size(path));
            fs::remove(path);
            for (const auto& [after, sig, had_file] : {std::tuple{0LL, SIGINT, false}, std::tuple{size / 2, SIGTERM, true},
                                                       std::tuple{size / 2, SIGINT, false}, std::tuple{0LL, SIGTERM, true}}) {
                INFO("stopped after " << after << " of " << size << " bytes, signal " << sig << ", earlier file " << had_file);
                if (had_file) put(path, earlier);
                CHECK(signal_during_output(with_output(args, path), out.path.string() + "/", after, sig) == sig);
                ++signalled;
                check_nothing_left(out.path, c.name, had_file ? earlier : "");
            }
        }
    }
    // Several outputs: the last one stopped while the others are written and closed.
    const temp_dir out("swgpu-fault-out");
    const std::string several = "sor --model 33 --backend cpu -q -o " + q(out / "u.npy") + " --history " +
                                q(out / "h.tsv") + " --plot " + q(out / "p.svg");
    for (const std::string stopped : {"u.npy", "h.tsv", "p.svg"}) {
        INFO("sor with three outputs, " << stopped << " stopped");
        CHECK(signal_during_output(several, "." + stopped + ".swgpu-", 10, SIGTERM) == SIGTERM);
        CHECK(entries(out.path).empty());
    }
    const std::string aligned = "align " + demo + " -o " + q(out / "hits.tsv") + " --dotplot " + q(out / "plot.svg");
    for (const std::string stopped : {"hits.tsv", "plot.svg"}) {
        INFO("align with a dot plot, " << stopped << " stopped");
        CHECK(signal_during_output(aligned, "." + stopped + ".swgpu-", 10, SIGINT) == SIGINT);
        CHECK(entries(out.path).empty());
    }
    CHECK(signalled == 4 * runs);
}
