// A GPU that runs out of memory (docs/testing.md, "Fault injection"): the device memory taken by another program (this
// test process holds all but a little of it) while swgpu runs its GPU backend, and a memory budget too small for
// anything. Each run either succeeds with the output of the CPU backend (it fitted in what was left) or fails with the
// out-of-memory exit code 4, exactly one line on stderr naming the GPU's memory, and no output: no file at the output's
// name, an earlier file kept byte for byte, no temporary file beside it.
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/gpu/harness.hpp"
#include "tests/gpu/memory_hog.cuh"

namespace {

namespace fs = std::filesystem;
using swgpu::gputest::memory_hog;
using swgpu::gputest::program;
using swgpu::gputest::source_dir;

std::string slurp_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

struct result {
    int code = -1;
    std::string err;
};

result run_swgpu(const std::string& args, const fs::path& dir) {
    const std::string cmd = program() + " " + args + " > /dev/null 2> " + (dir / "err.txt").string();
    const int status = std::system(cmd.c_str());
    result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = slurp_file(dir / "err.txt");
    return r;
}

std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    return out;
}

int lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

// One command writing `name` (OUT in `args`) into a fresh folder `outs`: run on the CPU backend for the expected
// bytes, then on the GPU under the condition the caller set up, with and without an earlier file of that name.
void check(const std::string& what, const std::string& args, const std::string& name, const std::string& gpu_args,
           int& failed_runs, int& fitted_runs) {
    const fs::path dir = fs::temp_directory_path() / ("swgpu_gpu_oom_" + std::to_string(::getpid()));
    const fs::path outs = dir / "outs";
    fs::create_directories(outs);
    const fs::path out = outs / name;
    auto with = [&](const std::string& backend) {
        std::string a = args;
        a.replace(a.find("OUT"), 3, "'" + out.string() + "'");
        return a + " --backend " + backend;
    };
    const auto cpu = run_swgpu(with("cpu"), dir);
    CHECK_EQ(cpu.code, 0);
    const std::string expected = slurp_file(out);
    CHECK(!expected.empty());
    const std::string earlier = "an earlier file of that name\n";
    for (const bool had_file : {false, true}) {
        fs::remove(out);
        if (had_file) std::ofstream(out, std::ios::binary) << earlier;
        const auto gpu = run_swgpu(with("gpu") + " " + gpu_args, dir);
        if (gpu.code == 0) {
            ++fitted_runs;
            if (slurp_file(out) != expected) {
                std::fprintf(stderr, "%s: the GPU run succeeded with other output than the CPU's\n", what.c_str());
                CHECK(slurp_file(out) == expected);
            }
            continue;
        }
        ++failed_runs;
        if (gpu.code != 4 || lines(gpu.err) != 1 || gpu.err.rfind("swgpu: error: ", 0) != 0 ||
            gpu.err.find("memory") == std::string::npos)
            std::fprintf(stderr, "%s: exit %d, stderr: %s", what.c_str(), gpu.code, gpu.err.c_str());
        CHECK_EQ(gpu.code, 4);
        CHECK_EQ(lines(gpu.err), 1);
        CHECK(gpu.err.find("memory") != std::string::npos);
        const auto left = entries(outs);
        if (had_file) {
            CHECK(left.size() == 1);
            CHECK(slurp_file(out) == earlier);
        } else {
            CHECK(left.empty());
        }
    }
    fs::remove_all(dir);
}

struct inputs {
    fs::path dir;
    std::string image, long_a, long_b, matrix;
    inputs() : dir(fs::temp_directory_path() / ("swgpu_gpu_oom_in_" + std::to_string(::getpid()))) {
        fs::create_directories(dir);
        image = (dir / "img.pgm").string();
        std::string pgm = "P5\n512 384\n255\n";
        for (int k = 0; k < 512 * 384; ++k) pgm += static_cast<char>((k * 7) % 251);
        std::ofstream(image, std::ios::binary) << pgm;
        std::uint64_t x = 5;
        auto next = [&x] { return x = x * 6364136223846793005ull + 1442695040888963407ull, static_cast<unsigned>(x >> 33); };
        std::string a;
        for (int k = 0; k < 30000; ++k) a += "ACGT"[next() % 4];
        std::string b = a.substr(500, 28000);
        for (auto& c : b)
            if (next() % 25 == 0) c = "ACGT"[next() % 4];
        long_a = (dir / "a.fa").string();
        long_b = (dir / "b.fa").string();
        std::ofstream(long_a) << ">a\n" << a << "\n";
        std::ofstream(long_b) << ">b\n" << b << "\n";
        matrix = (dir / "bi.mtx").string();
        std::string mtx = "%%MatrixMarket matrix coordinate real general\n2000 2000 3999\n";
        for (int i = 1; i <= 2000; ++i) {
            if (i > 1) mtx += std::to_string(i) + " " + std::to_string(i - 1) + " -1.0\n";
            mtx += std::to_string(i) + " " + std::to_string(i) + " 2.0\n";
        }
        std::ofstream(matrix) << mtx;
    }
    ~inputs() { fs::remove_all(dir); }
};

void every_command(const inputs& in, const std::string& gpu_args, int& failed, int& fitted) {
    const std::string src = source_dir();
    const std::string demo = "'" + src + "/data/demo_queries.fa' '" + src + "/data/demo_db.fa' -q";
    check("align, database search", "align " + demo + " -o OUT", "hits.tsv", gpu_args, failed, fitted);
    check("align, SAM and a dot plot", "align " + demo + " --outfmt sam --dotplot OUT", "plot.svg", gpu_args, failed,
          fitted);
    check("align, a long pair", "align '" + in.long_b + "' '" + in.long_a + "' -q --mode pairwise -o OUT", "pair.tsv",
          gpu_args, failed, fitted);
    check("sat", "sat '" + in.image + "' -o OUT", "sat.npy", gpu_args, failed, fitted);
    check("ihist", "ihist '" + in.image + "' --bins 8 -o OUT", "ihist.npy", gpu_args, failed, fitted);
    check("levels", "levels --matrix '" + in.matrix + "' -o OUT", "levels.npy", gpu_args, failed, fitted);
    check("sor", "sor --model 96 --method redblack -o OUT", "sor.npy", gpu_args, failed, fitted);
}

}  // namespace

GPU_TEST("out of device memory: a GPU another program has filled gives the CPU's output or exit 4, one line, no output") {
    const inputs in;
    int failed = 0, fitted = 0;
    {
        const memory_hog hog(0);  // all that can be taken
        std::printf("     %.1f GiB of device memory held\n", static_cast<double>(hog.held) / (1 << 30));
        every_command(in, "", failed, fitted);
    }
    std::printf("     a full GPU: %d runs failed with exit 4, %d fitted\n", failed, fitted);
    CHECK(failed > 0);
    failed = fitted = 0;
    {
        const memory_hog hog(std::size_t(1) << 30);  // 1 GiB left: enough for a context and small problems
        every_command(in, "", failed, fitted);
    }
    std::printf("     1 GiB left: %d runs failed with exit 4, %d fitted\n", failed, fitted);
}

GPU_TEST("out of device memory: --gpu-mem below the minimum is a usage error; at the minimum, the CPU's output or exit 4") {
    const inputs in;
    const std::string src = source_dir();
    const std::string demo = "'" + src + "/data/demo_queries.fa' '" + src + "/data/demo_db.fa' -q";
    const fs::path dir = fs::temp_directory_path() / ("swgpu_gpu_oom_" + std::to_string(::getpid()));
    fs::create_directories(dir / "outs");
    for (const char* budget : {"1", "64K", "1M", "16777215"}) {
        const auto r = run_swgpu("align " + demo + " --backend gpu --gpu-mem " + budget + " -o '" +
                                     (dir / "outs" / "hits.tsv").string() + "'",
                                 dir);
        CHECK_EQ(r.code, 2);
        CHECK_EQ(lines(r.err), 1);
        CHECK(r.err.find("is below the minimum of 16M") != std::string::npos);
        CHECK(entries(dir / "outs").empty());
    }
    fs::remove_all(dir);
    int failed = 0, fitted = 0;
    check("align --gpu-mem 16M", "align " + demo + " -o OUT", "hits.tsv", "--gpu-mem 16M", failed, fitted);
    check("align --gpu-mem 16M, a long pair", "align '" + in.long_b + "' '" + in.long_a + "' -q --mode pairwise -o OUT",
          "pair.tsv", "--gpu-mem 16M", failed, fitted);
    std::printf("     the smallest budget: %d runs failed with exit 4, %d fitted\n", failed, fitted);
}
