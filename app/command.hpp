// The layer every subcommand of the command line goes through (docs/conventions.md, "Promises"): the options every
// command shares are declared here once, and so are the files a command reads and writes, so that the promises about
// them are kept in one place before any work:
//   - an output that is an input or another output (by device and inode: relative names, ./, symbolic and hard links)
//     is refused, exit 2 (io::refuse_overwriting);
//   - an output into a folder that does not exist is refused, exit 5;
//   - -t/--threads lies within 0..max_threads (exit 2); a thread that cannot start is exit 3 (thread_pool);
//   - the notice of a CPU fallback comes once, after success, never beside an error line.
// The memory estimate stays with each command (it knows what it allocates), through io::check_memory.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "io/output_file.hpp"

namespace swgpu::app {

// The most threads any command starts: -t above it is a usage error (sor -t 100000 once took the machine's processes
// from other programs).
inline constexpr unsigned max_threads = 4096;

// Where a numerical command computes, and how it talks about it: --backend, -t and -q as they share them.
struct table_backend {
    std::string name = "auto";  // auto | cpu | gpu
    unsigned threads = 0;
    bool quiet = false;
    // True for the GPU; throws runtime_failure for --backend gpu without a usable GPU. The CPU fallback of --backend
    // auto is noticed once, after the command succeeded (print_fallback_notice), never beside an error.
    bool use_gpu() const;
    void add_options(CLI::App* sub);
    // Prints the notice of a CPU fallback, if a command fell back (and was not --quiet): command::execute, after
    // success.
    static void print_fallback_notice();
};

class command {
public:
    command(CLI::App& app, const std::string& name, const std::string& description);
    virtual ~command() = default;
    command(const command&) = delete;
    command& operator=(const command&) = delete;

    const std::string& name() const { return name_; }
    bool selected() const { return sub_->parsed(); }
    // The shared checks on the declared files (outputs against inputs and each other, outputs' folders), then run(),
    // then the CPU-fallback notice of a successful run. `command_line` is the whole command (align writes it into
    // SAM's @PG). Throws swgpu::error (main turns it into one line and its exit code).
    int execute(const std::string& command_line);

protected:
    // Declares an option or positional argument naming a file the command reads (`role` names it in messages: "the
    // input", "--rhs") or writes ("-o"). "-" is stdin or stdout, an empty value an option not given.
    CLI::Option* add_input(const std::string& flags, std::string& path, const std::string& role, const std::string& help);
    CLI::Option* add_output(const std::string& flags, std::string& path, const std::string& role, const std::string& help);
    // -t/--threads, bounded by max_threads.
    CLI::Option* add_threads(unsigned& threads, const std::string& help);
    // The files of this run, given the declared ones that were given: a command adds those known only once the
    // options are parsed (a database named by its prefix) and takes out those that are not files here (align's -o
    // with --batch names a folder). Default: the declared ones.
    virtual void run_files(std::vector<io::named_file>& outputs, std::vector<io::named_file>& inputs);
    virtual int run(const std::string& command_line) = 0;

    CLI::App* sub_ = nullptr;

private:
    struct declared {
        std::string role;
        std::string* path;
    };
    std::string name_;
    std::vector<declared> inputs_, outputs_;
};

}  // namespace swgpu::app
