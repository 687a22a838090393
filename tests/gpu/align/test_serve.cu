// `swgpu serve` on a GPU (docs/serve.md): the answers of a service that searches on the GPU are the CPU's `swgpu
// align` bytes, and a GPU that fails under it (its memory taken by another program: this test process) costs the
// request in flight a 503 answer and a line in the log, after which the service answers on the CPU, the same bytes.
// The client is `swgpu align --server`. Skipped (passes with a note) where the program was built without the service.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "tests/gpu/harness.hpp"
#include "tests/gpu/memory_hog.cuh"

namespace {

namespace fs = std::filesystem;
using swgpu::gputest::memory_hog;
using swgpu::gputest::program;
using swgpu::gputest::source_dir;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Running: not gone and not a zombie (a container's first process may never reap the service once its shell left).
bool alive(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    const auto close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

int shell(const std::string& cmd) {
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A service in the background, its stderr in `log`; stopped by SIGTERM when destroyed.
struct service {
    fs::path log;
    pid_t pid = 0;
    int port = 0;
    service(const std::string& args, const fs::path& dir) : log(dir / "serve.log") {
        const fs::path pid_file = dir / "serve.pid";
        shell(program() + " serve " + args + " --listen 127.0.0.1:0 2> '" + log.string() + "' & echo $! > '" +
              pid_file.string() + "'");
        pid = static_cast<pid_t>(std::atol(slurp(pid_file).c_str()));
        const std::regex address("on http://127\\.0\\.0\\.1:([0-9]+)");
        for (int k = 0; k < 600 && port == 0; ++k) {
            std::smatch m;
            const std::string text = slurp(log);
            if (std::regex_search(text, m, address)) port = std::stoi(m[1]);
            else if (!alive(pid)) break;
            else std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    // SIGTERM: true when it said it stops and was gone within 60 s (its exit code, the shell's child's, is not seen
    // here; the CPU tests check it).
    bool stop() {
        if (pid <= 0) return false;
        ::kill(pid, SIGTERM);
        for (int k = 0; k < 600; ++k) {
            if (!alive(pid)) {
                pid = 0;
                return slurp(log).find("stopping") != std::string::npos;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return false;
    }
    ~service() {
        if (pid > 0 && alive(pid)) ::kill(pid, SIGKILL);
    }
};

}  // namespace

GPU_TEST("serve: a service on the GPU answers the CPU's bytes; a GPU out of memory costs one 503, then the CPU answers") {
    const fs::path dir = fs::temp_directory_path() / ("swgpu_gpu_serve_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    if (shell(program() + " serve --help > /dev/null 2>&1") != 0) {
        std::printf("     swgpu was built without the search service: not tested\n");
        fs::remove_all(dir);
        return;
    }
    // The database: the demo's records and 20,000 random ones of 300 residues (6 MB: its copy on the device is more
    // than the driver keeps in hand for small allocations, so a full GPU cannot take it).
    const std::string src = source_dir();
    const fs::path db_file = dir / "db.fa";
    {
        std::ofstream out(db_file, std::ios::binary);
        out << slurp(fs::path(src) / "data" / "demo_db.fa");
        std::uint64_t x = 7;
        for (int r = 0; r < 20000; ++r) {
            out << ">random" << r << "\n";
            for (int k = 0; k < 300; ++k) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                out << "ACDEFGHIKLMNPQRSTVWY"[(x >> 33) % 20];
            }
            out << "\n";
        }
    }
    const std::string queries = "'" + src + "/data/demo_queries.fa'", db = "'" + db_file.string() + "'";
    REQUIRE(shell(program() + " align -q " + queries + " " + db + " --backend cpu -o '" + (dir / "cpu.tsv").string() +
                  "'") == 0);
    const std::string expected = slurp(dir / "cpu.tsv");
    REQUIRE(expected.size() > 200);
    auto ask = [&](const service& s, const std::string& name) {
        return shell(program() + " align -q --server http://127.0.0.1:" + std::to_string(s.port) + " " + queries +
                     " -o '" + (dir / name).string() + "' 2> '" + (dir / "client.err").string() + "'");
    };

    {  // The GPU's answers.
        service s(db + " --backend gpu", dir);
        REQUIRE(s.port > 0);
        CHECK_EQ(ask(s, "gpu.tsv"), 0);
        CHECK(slurp(dir / "gpu.tsv") == expected);
        CHECK(s.stop());
    }

    // A service whose database is not on the device yet (it goes there at the first search) when the device memory
    // is taken: the first request fails on the GPU, the next is answered on the CPU. With --gpu-mem the service keeps
    // no pool of device memory in hand for the alignments (without it, the searches run from that pool, and another
    // program taking the device's memory does not touch them: both GPU tests of this file saw so).
    service s(db + " --backend gpu --gpu-mem 64M", dir);
    REQUIRE(s.port > 0);
    int code = 0;
    {
        const memory_hog hog(0);  // all the device memory that can be taken
        std::printf("     %.1f GiB of device memory held\n", static_cast<double>(hog.held) / (1 << 30));
        code = ask(s, "full.tsv");
        const std::string client_err = slurp(dir / "client.err");
        std::printf("     with the GPU full: exit %d, %s", code, client_err.c_str());
        CHECK_EQ(code, 3);
        CHECK(client_err.find("answered 503 (out_of_memory)") != std::string::npos);
        CHECK(!fs::exists(dir / "full.tsv"));
        CHECK_EQ(ask(s, "after.tsv"), 0);  // on the CPU now, the device still full
        CHECK(slurp(dir / "after.tsv") == expected);
    }
    const std::string log = slurp(s.log);
    CHECK(log.find("search failed") != std::string::npos);
    CHECK(log.find("searching on the cpu from now on") != std::string::npos);
    CHECK(s.stop());
    fs::remove_all(dir);
}
