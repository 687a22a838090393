#include "app/command.hpp"

#include <iostream>

#include "core/error.hpp"
#include "gpu/gpu.hpp"

namespace swgpu::app {

namespace {

std::string& fallback_notice() {
    static std::string text;
    return text;
}

}  // namespace

bool table_backend::use_gpu() const {
    if (name == "cpu") return false;
    if (gpu::available()) return true;
    if (name == "gpu")
        throw runtime_failure("--backend gpu: no usable GPU (" + gpu::build_info() +
                              "); use --backend cpu, or --backend auto to fall back to the CPU");
    if (!quiet && gpu::built_with_cuda())  // a build without a GPU backend computes on the CPU without a word
        fallback_notice() = "swgpu: no usable GPU (" + gpu::build_info() + "); ran on the CPU\n";
    return false;
}

void table_backend::print_fallback_notice() {
    if (!fallback_notice().empty()) std::cerr << fallback_notice();
    fallback_notice().clear();
}

void table_backend::add_options(CLI::App* sub) {
    sub->add_option("--backend", name,
                    "auto: the GPU when one is usable, else the CPU (with a notice); gpu without a usable GPU is an "
                    "error (exit 3)")
        ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
        ->capture_default_str();
    sub->add_option("-t,--threads", threads, "CPU threads (at most 4096); 0 = one per hardware thread")
        ->check(CLI::Range(0u, max_threads))
        ->capture_default_str();
    sub->add_flag("-q,--quiet", quiet, "Only errors on stderr");
}

command::command(CLI::App& app, const std::string& name, const std::string& description) : name_(name) {
    sub_ = app.add_subcommand(name, description);
}

CLI::Option* command::add_input(const std::string& flags, std::string& path, const std::string& role,
                                const std::string& help) {
    inputs_.push_back({role, &path});
    return sub_->add_option(flags, path, help);
}

CLI::Option* command::add_output(const std::string& flags, std::string& path, const std::string& role,
                                 const std::string& help) {
    outputs_.push_back({role, &path});
    return sub_->add_option(flags, path, help);
}

CLI::Option* command::add_threads(unsigned& threads, const std::string& help) {
    return sub_->add_option("-t,--threads", threads, help)->check(CLI::Range(0u, max_threads))->capture_default_str();
}

void command::run_files(std::vector<io::named_file>&, std::vector<io::named_file>&) {}

int command::execute(const std::string& command_line) {
    std::vector<io::named_file> outputs, inputs;
    for (const auto& d : outputs_)
        if (!d.path->empty()) outputs.push_back({d.role, *d.path});
    for (const auto& d : inputs_)
        if (!d.path->empty()) inputs.push_back({d.role, *d.path});
    run_files(outputs, inputs);
    io::refuse_overwriting(outputs, inputs);
    for (const auto& o : outputs) io::require_output_folder(o.path, o.role);
    const int code = run(command_line);
    if (code == 0) table_backend::print_fallback_notice();
    return code;
}

}  // namespace swgpu::app
