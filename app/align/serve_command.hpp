// `swgpu serve DB [--listen HOST:PORT] [options]`: the database kept resident, searches answered over HTTP
// (docs/serve.md). A thin face: io/serve/http_server answers requests, core's search_batcher batches and searches them
// (core/align/search/batcher.hpp). Also the client side of `swgpu align --server URL`.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "app/align/align_command.hpp"
#include "app/command.hpp"

namespace swgpu::app {

class serve_command : public command {
public:
    explicit serve_command(CLI::App& app);

private:
    int run(const std::string& command_line) override;
    struct settings;
    std::shared_ptr<settings> s_;
};

// `swgpu align --server URL QUERY [options]`: the query file sent to a server, its answer (the bytes a local run
// prints) written to -o or stdout. The settings given on the command line go with it.
struct given_options;
int align_on_server(const align_settings& s, const given_options& given);

}  // namespace swgpu::app
