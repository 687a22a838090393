// SOR (core/sor.hpp): each method's sweep gives the bits of a textbook loop written here; lex and red-black converge
// on the model problem to its discrete solution, within the discretisation error of the exact one; `swgpu sor`
// writes the solution, the history and the plot, and refuses bad input with the documented exit codes.
#include <catch2/catch.hpp>


#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/sat.hpp"
#include "core/sor.hpp"
#include "core/thread_pool.hpp"
#include "io/npy.hpp"
#include "tests/cli_support.hpp"

namespace {

using namespace swgpu;
using sor::index_t;

// One point, written out in the order the documentation states.
double textbook_point(const std::vector<double>& u, const std::vector<double>& h2f, index_t n, index_t i, index_t j,
                      double omega) {
    const std::size_t s = static_cast<std::size_t>(i * n + j), N = static_cast<std::size_t>(n);
    double g = u[s - N];
    g = g + u[s + N];
    g = g + u[s - 1];
    g = g + u[s + 1];
    g = g + h2f[s];
    g = g * 0.25;
    return u[s] + omega * (g - u[s]);
}

void textbook_sweep(sor::method m, index_t n, std::vector<double>& u, const std::vector<double>& h2f, double omega,
                    int layers = 1) {
    auto at = [&](index_t i, index_t j) { u[static_cast<std::size_t>(i * n + j)] = textbook_point(u, h2f, n, i, j, omega); };
    if (m == sor::method::redblack) {
        for (int colour = 0; colour < 2; ++colour)
            for (index_t i = 1; i < n - 1; ++i)
                for (index_t j = 1; j < n - 1; ++j)
                    if ((i + j) % 2 == colour) at(i, j);
        return;
    }
    if (m == sor::method::mlssor) {
        for (int k = 0; k < layers; ++k)
            for (index_t i = 1; i < n - 1; ++i)
                for (index_t j = 1; j < n - 1; ++j) at(i, j);
        for (int k = 0; k < layers; ++k)
            for (index_t i = n - 2; i >= 1; --i)
                for (index_t j = n - 2; j >= 1; --j) at(i, j);
        return;
    }
    for (index_t i = 1; i < n - 1; ++i)
        for (index_t j = 1; j < n - 1; ++j) at(i, j);
    if (m == sor::method::ssor)
        for (index_t i = n - 2; i >= 1; --i)
            for (index_t j = n - 2; j >= 1; --j) at(i, j);
}

sor::problem random_problem(index_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> d(-1, 1);
    std::vector<double> f(static_cast<std::size_t>(n * n)), g(f.size());
    for (auto& v : f) v = d(rng) * 50;
    for (auto& v : g) v = d(rng);
    return sor::from_arrays(n, f, g, "random");
}

}  // namespace

TEST_CASE("sor: every method's sweep gives the textbook loop's bits", "[sor]") {
    thread_pool pool(3);
    for (const index_t n : {index_t(3), index_t(4), index_t(17), index_t(40)}) {
        for (const auto m : {sor::method::lex, sor::method::redblack, sor::method::ssor, sor::method::mlssor}) {
            INFO("n " << n << ", method " << sor::method_name(m));
            const auto p = random_problem(n, 7 + std::uint64_t(n));
            const auto h2f = sor::scaled_rhs(p);
            auto got = p.u, want = p.u;
            for (int k = 0; k < 3; ++k) {
                sor::sweep(m, n, got, h2f, 1.7, pool, 3);
                textbook_sweep(m, n, want, h2f, 1.7, 3);
            }
            CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0);
        }
    }
}

TEST_CASE("sor: lex, red-black and ssor converge on the model problem to its solution", "[sor]") {
    thread_pool pool(2);
    const index_t n = 33;
    const auto p = sor::model_problem(n);
    std::vector<double> lex;
    for (const auto m : {sor::method::lex, sor::method::redblack, sor::method::ssor, sor::method::mlssor}) {
        INFO(sor::method_name(m));
        sor::options o;
        o.m = m;
        o.omega = m == sor::method::ssor || m == sor::method::mlssor ? 1.5 : sor::optimal_omega(n);
        o.tol = 1e-11;
        o.max_sweeps = 2000;
        const auto s = sor::solve(p, o, pool);
        REQUIRE(s.converged);
        CHECK(s.history.back().residual <= 1e-11);
        if (m == sor::method::lex || m == sor::method::redblack) CHECK(s.history.size() < 400);  // optimal omega: O(N) sweeps, not O(N^2)
        double err = 0;
        for (index_t i = 0; i < n; ++i)
            for (index_t j = 0; j < n; ++j)
                err = std::max(err, std::abs(s.u[static_cast<std::size_t>(i * n + j)] - sor::model_solution(n, i, j)));
        CHECK(err < 1.5e-3);  // the 5-point discretisation error, about pi^2 h^2 / 12
        if (lex.empty()) lex = s.u;
        else
            for (std::size_t k = 0; k < lex.size(); ++k) CHECK(std::abs(s.u[k] - lex[k]) < 1e-9);
    }
    // Gauss-Seidel (omega 1) needs far more sweeps than optimal SOR
    sor::options gs;
    gs.omega = 1.0;
    gs.tol = 1e-6;
    gs.max_sweeps = 5000;
    sor::options best = gs;
    best.omega = sor::optimal_omega(n);
    CHECK(sor::solve(p, gs, pool).history.size() > 3 * sor::solve(p, best, pool).history.size());
}

TEST_CASE("swgpu sor: solution, history and plot; bad input refused with its exit code", "[sor][cli]") {
    namespace fs = std::filesystem;
    const testing::temp_dir tmp("swgpu-sor");
    const fs::path dir = tmp.path;
    auto run = [&](const std::string& args, std::string* out = nullptr) {
        const auto r = testing::run_program("sor " + args + " --backend cpu");
        if (out) *out = r.out;
        return r.code;
    };
    const auto file = [&](const char* name) { return "'" + (dir / name).string() + "'"; };
    std::string printed;
    REQUIRE(run("--model 17 --tol 1e-9 -o " + file("u.npy") + " --history " + file("h.tsv") + " --plot " + file("p.svg"),
                &printed) == 0);
    CHECK(printed.find("method lex") == 0);
    CHECK(printed.find("converged") != std::string::npos);
    const auto u = io::read_npy((dir / "u.npy").string());
    CHECK((u.type == sat::dtype::f64 && u.rows == 17 && u.cols == 17 && u.lanes == 1));
    CHECK(std::abs(u.data<double>()[8 * 17 + 8] - 1.0) < 5e-3);  // the centre, sin(pi/2)^2
    std::ifstream h(dir / "h.tsv");
    std::string line;
    std::getline(h, line);
    CHECK(line == "sweep\tresidual\tseconds");
    int rows = 0;
    while (std::getline(h, line)) ++rows;
    CHECK(rows > 3);
    std::ifstream svg(dir / "p.svg");
    std::getline(svg, line);
    CHECK(line.rfind("<svg", 0) == 0);

    // from arrays: f and a boundary; the solution keeps the boundary's edges
    sat::array f(sat::dtype::f64, 9, 9, 1), g(sat::dtype::f64, 9, 9, 1), g32(sat::dtype::f32, 9, 9, 1),
        rect(sat::dtype::f64, 9, 8, 1);
    for (std::size_t k = 0; k < 81; ++k) f.data<double>()[k] = 1.0, g.data<double>()[k] = double(k % 9);
    io::write_npy(f, (dir / "f.npy").string());
    io::write_npy(g, (dir / "g.npy").string());
    io::write_npy(g32, (dir / "g32.npy").string());
    io::write_npy(rect, (dir / "rect.npy").string());
    REQUIRE(run("--rhs " + file("f.npy") + " --boundary " + file("g.npy") + " --method redblack -o " + file("v.npy")) == 0);
    const auto v = io::read_npy((dir / "v.npy").string());
    CHECK(v.data<double>()[0 * 9 + 5] == 5.0);
    CHECK(v.data<double>()[8 * 9 + 8] == 8.0);

    CHECK(run("--rhs " + file("f.npy") + " --boundary " + file("g32.npy") + " -o " + file("x.npy")) == 1);
    CHECK(run("--rhs " + file("rect.npy") + " --boundary " + file("rect.npy") + " -o " + file("x.npy")) == 1);
    CHECK(run("--model 9 --omega 2.5 -o " + file("x.npy")) == 2);
    CHECK(run("--model 2 -o " + file("x.npy")) == 2);
    CHECK(run("--model 9 --method jacobi") == 2);
    CHECK(run("--model 9 --method mlssor --layers 0") == 2);
    REQUIRE(run("--model 9 --method mlssor --layers 2", &printed) == 0);
    CHECK(printed.find("method mlssor") == 0);
    CHECK(run("--model 9 --rhs " + file("f.npy")) == 2);
    f.data<double>()[40] = std::nan("");
    io::write_npy(f, (dir / "nan.npy").string());
    CHECK(run("--rhs " + file("nan.npy") + " --boundary " + file("g.npy") + " -o " + file("x.npy")) == 1);
    CHECK(!fs::exists(dir / "x.npy"));
}
