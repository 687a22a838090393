// `swgpu sor --rhs F.npy --boundary G.npy -o U.npy [--method lex|redblack|ssor|mlssor] [--layers K]
//  [--subdomain AxB] [--forward-only] [--omega W] [--tol T] [--max-sweeps S] [--backend auto|cpu|gpu]` (or --model N
// for the model problem, --problem NAME --size N for a built-in one): SOR for the 2-D Poisson problem (core/numerics/sor.hpp,
// gpu/numerics/sor.hpp), with the residual history as TSV and an SVG plot of it.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "app/numerics/sat_command.hpp"
#include "core/numerics/sor.hpp"

namespace swgpu::app {

class sor_command : public command {
public:
    explicit sor_command(CLI::App& app);

private:
    int run(const std::string& command_line) override;
    sor::problem read_problem() const;
    sor::options solver_options(const sor::problem& p) const;

    std::string rhs_, boundary_, output_, method_ = "lex", history_, plot_, problem_, subdomain_;
    long long model_ = 0, size_ = 0;
    bool forward_only_ = false;
    CLI::Option* layers_option_ = nullptr;
    double omega_ = 0, tol_ = 1e-8;
    int max_sweeps_ = 10000, layers_ = 3, stagnation_ = 1000;
    table_backend backend_;
};

}  // namespace swgpu::app
