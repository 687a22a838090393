// `swgpu ihist INPUT --bins B -o OUT.npy [--edges E0,...,EB] [--query rects.tsv] [--backend auto|cpu|gpu]`: integral
// histograms (core/numerics/sat.hpp, gpu/numerics/sat.hpp).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/numerics/sat_command.hpp"

namespace swgpu::app {

class ihist_command : public command {
public:
    explicit ihist_command(CLI::App& app);

private:
    int run(const std::string& command_line) override;
    std::string input_, output_, query_, query_out_ = "-";
    int bins_ = 0;
    std::vector<double> edges_;
    table_backend backend_;
};

}  // namespace swgpu::app
