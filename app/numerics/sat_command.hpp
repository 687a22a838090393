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
    // True for the GPU; throws runtime_failure for --backend gpu without a usable GPU. The CPU fallback of --backend
    // auto is noticed once, after the command succeeded (print_fallback_notice), never beside an error.
    bool use_gpu() const;
    void add_options(CLI::App* sub);
    // Prints the notice of a CPU fallback, if a command fell back (and was not --quiet): app/main.cpp, after success.
    static void print_fallback_notice();
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
