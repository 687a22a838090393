// swgpu: the command line. One CLI11 subcommand per tool, each a swgpu::app::command (app/command.hpp: the options and
// files every command shares, and the promises about them, in one layer). Errors from every layer arrive here as swgpu::error and leave as one line "swgpu: error: ..." with the exit
// code of docs/conventions.md.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/align/align_command.hpp"
#include "app/numerics/ihist_command.hpp"
#include "app/numerics/levels_command.hpp"
#include "app/align/makedb_command.hpp"
#include "app/align/serve_command.hpp"
#include "app/numerics/sat_command.hpp"
#include "app/numerics/sor_command.hpp"
#include "app/numerics/sweep3d_command.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/tuning.hpp"
#include "gpu/gpu.hpp"

namespace {

int fail(swgpu::exit_code code, std::string what) {
    for (auto& c : what)
        if (c == '\n' || c == '\r') c = ' ';
    std::cerr << "swgpu: error: " << what << '\n';
    return static_cast<int>(code);
}

std::string joined(int argc, char** argv) {
    std::string s;
    for (int k = 0; k < argc; ++k) s += (k ? " " : "") + std::string(argv[k]);
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"swgpu: exact Smith-Waterman-Gotoh local alignment on NVIDIA GPUs, with a CPU fallback"};
    app.name("swgpu");
    app.set_version_flag("--version", [] {
        return std::string("swgpu ") + SWGPU_VERSION + " (GPU backend: " + swgpu::gpu::build_info() + ")";
    });
    app.require_subcommand(1);
    app.footer("Run 'swgpu align --help' for the options, output formats and conventions of database search.");
    swgpu::app::align_command align(app);
    swgpu::app::makedb_command makedb(app);
    swgpu::app::sat_command sat(app);
    swgpu::app::ihist_command ihist(app);
    swgpu::app::levels_command levels(app);
    swgpu::app::sweep3d_command sweep3d(app);
    swgpu::app::sor_command sor(app);
    swgpu::app::serve_command serve(app);
    const std::vector<swgpu::app::command*> commands = {&align, &makedb, &sat, &ihist, &levels, &sweep3d, &sor, &serve};

    // A first word that is no subcommand: name it and the nearest subcommand (CLI11 would say "A subcommand is
    // required").
    if (argc > 1 && argv[1][0] != '-') {
        const std::string word = argv[1];
        std::vector<std::string> names;
        for (const auto* sub : app.get_subcommands({})) names.push_back(sub->get_name());
        const std::string nearest = swgpu::nearest_name(word, names);
        if (std::find(names.begin(), names.end(), word) == names.end())
            return fail(swgpu::exit_code::bad_command_line,
                        "'" + word + "' is not a swgpu subcommand" +
                            (!nearest.empty() ? "; did you mean '" + nearest + "'? Run" : std::string("; run")) +
                            " 'swgpu --help' for the list");
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {  // --help, --version
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::string where = "swgpu --help";
        for (const auto* c : commands)
            if (c->selected() || (argc > 1 && argv[1] == c->name())) where = "swgpu " + c->name() + " --help";
        return fail(swgpu::exit_code::bad_command_line, std::string(e.what()) + "; run '" + where + "'");
    }

    try {
        swgpu::tuning::check_environment();  // a malformed SWGPU_TUNE fails before any work
        // The shared checks of every command, its run, and a CPU fallback's notice after success (app/command.hpp).
        for (auto* c : commands)
            if (c->selected()) return c->execute(joined(argc, argv));
        return fail(swgpu::exit_code::bad_command_line, "no command given; run 'swgpu --help'");
    } catch (const swgpu::error& e) {
        return fail(e.code(), e.what());
    } catch (const std::bad_alloc&) {
        if (align.selected() || makedb.selected())
            return fail(swgpu::exit_code::out_of_memory, "out of memory; use a smaller --db-chunk or fewer queries per run");
        return fail(swgpu::exit_code::out_of_memory, "out of memory; use a smaller input or smaller options");
    } catch (const std::exception& e) {
        return fail(swgpu::exit_code::runtime_failure, e.what());
    }
}
