// `swgpu levels`: run-time levelization (core/numerics/levels.hpp, gpu/numerics/levels.hpp) of
//   sparse triangular solves:  --matrix A.mtx [--rhs B.npy] -o X.npy [--lower|--upper] [--stats FILE.tsv] [--repeat R]
//   generic indirect loops:    --writes W.npy [--reads R.npy] [--array A0.npy] [--body sum|max|fmod|wsum|dot]
//                              [--coefficients C0,C1,...] -o A.npy
//   either, as the plain sequential loop (the reference, timed): --sequential
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/numerics/sat_command.hpp"
#include "core/numerics/level_runs.hpp"
#include "core/numerics/levels.hpp"

namespace swgpu::app {

class levels_command : public command {
public:
    explicit levels_command(CLI::App& app);

private:
    int run(const std::string& command_line) override;
    int run_solve();
    int run_loop();
    // run_solve's first step: the triangle read (warning of entries outside it); it is then solved as asked (--repeat
    // times: sequentially or by levels on the CPU, core/numerics/level_runs.hpp, or on the GPU,
    // gpu/numerics/level_runs.hpp).
    levels::csr_matrix read_triangle() const;
    // run_loop's first step: the loop and its array from the files.
    levels::indirect_loop read_loop(std::vector<double>& a) const;

    std::string matrix_, rhs_, output_, stats_, writes_, reads_, array_, body_ = "sum", schedule_ = "level_p2p";
    std::vector<std::string> coefficients_;  // parsed with strtod (correctly rounded to double)
    bool lower_ = false, upper_ = false, require_triangular_ = false, sequential_ = false, pipeline_ = false;
    long long repeat_ = 1, locations_ = 0;
    table_backend backend_;
};

}  // namespace swgpu::app
