// `swgpu sat INPUT -o OUT.npy [--backend auto|cpu|gpu] [--type float32|float64] [--query rects.tsv]
//  [--box-filter R -o out.png]`: summed-area tables of images and arrays (core/numerics/sat.hpp, gpu/numerics/sat.hpp).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "app/command.hpp"
#include "core/numerics/sat.hpp"

namespace swgpu::app {

class sat_command : public command {
public:
    explicit sat_command(CLI::App& app);

private:
    int run(const std::string& command_line) override;

    std::string input_, output_, type_ = "auto", query_, query_out_ = "-";
    long long box_radius_ = -1;
    table_backend backend_;
};

}  // namespace swgpu::app
