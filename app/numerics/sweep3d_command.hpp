// `swgpu sweep3d --n N --loops L [--precision single|double] [--c C] [-o GRID.npy] [--backend auto|cpu|gpu]`: the 3-D
// wavefront sweep (core/numerics/sweep3d.hpp, gpu/numerics/sweep3d.hpp); `--kernel dd` the diamond-difference sweep of one octant.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "app/numerics/sat_command.hpp"

namespace swgpu::app {

class sweep3d_command : public command {
public:
    explicit sweep3d_command(CLI::App& app);

private:
    int run(const std::string& command_line) override;
    long long n_ = 0;
    int loops_ = 1, angles_ = 8;
    double c_ = 1.0, sigma_ = 1.0, source_ = 1.0;
    std::string precision_ = "double", kernel_ = "fmod", output_;
    long long tile_ = 16;
    table_backend backend_;
};

}  // namespace swgpu::app
