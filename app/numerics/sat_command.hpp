// `swgpu sat INPUT -o OUT.npy [--backend auto|cpu|gpu] [--type float32|float64] [--query rects.tsv]
//  [--box-filter R -o out.png]`: summed-area tables of images and arrays (core/numerics/sat.hpp, gpu/numerics/sat.hpp).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "core/numerics/sat.hpp"

namespace swgpu::app {

// What the table commands share: where the tables are computed and how to talk about it.
struct table_backend {
    std::string name = "auto";  // auto | cpu | gpu
    unsigned threads = 0;
    bool quiet = false;
    // True for the GPU; throws runtime_failure for --backend gpu without a usable GPU; notices the CPU fallback.
    bool use_gpu() const;
    void add_options(CLI::App* sub);
};

class sat_command {
public:
    explicit sat_command(CLI::App& app);
    bool selected() const { return sub_->parsed(); }
    int run();

private:
    CLI::App* sub_ = nullptr;
    std::string input_, output_, type_ = "auto", query_, query_out_ = "-";
    long long box_radius_ = -1;
    table_backend backend_;
};

}  // namespace swgpu::app
