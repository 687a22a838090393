// `swgpu levels`: run-time levelization (core/numerics/levels.hpp, gpu/numerics/levels.hpp) of
//   sparse triangular solves:  --matrix A.mtx [--rhs B.npy] -o X.npy [--lower|--upper] [--stats FILE.tsv] [--repeat R]
//   generic indirect loops:    --writes W.npy [--reads R.npy] [--array A0.npy] [--body sum|max|fmod|wsum|dot]
//                              [--coefficients C0,C1,...] -o A.npy
//   either, as the plain sequential loop (the reference, timed): --sequential
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/numerics/sat_command.hpp"

namespace swgpu::app {

class levels_command {
public:
    explicit levels_command(CLI::App& app);
    bool selected() const { return sub_->parsed(); }
    int run();

private:
    int run_solve();
    int run_loop();

    CLI::App* sub_ = nullptr;
    std::string matrix_, rhs_, output_, stats_, writes_, reads_, array_, body_ = "sum", schedule_ = "level_grid";
    std::vector<std::string> coefficients_;  // parsed with strtod (correctly rounded to double)
    bool lower_ = false, upper_ = false, require_triangular_ = false, sequential_ = false, pipeline_ = false;
    long long repeat_ = 1, locations_ = 0;
    table_backend backend_;
};

}  // namespace swgpu::app
