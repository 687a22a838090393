// SOR (core/numerics/sor.hpp): each method's sweep gives the bits of a textbook loop written here; lex and red-black converge
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
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/numerics/sat.hpp"
#include "core/numerics/sor.hpp"
#include "core/thread_pool.hpp"
#include "io/arrays/npy.hpp"
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

namespace {

// One sweep point by point: rows and columns ascending, or both descending (the backward half of ssor).
void sequential_sweep(index_t n, std::vector<double>& u, const std::vector<double>& h2f, double omega, bool backward) {
    for (index_t r = 1; r < n - 1; ++r)
        for (index_t c = 1; c < n - 1; ++c) {
            const index_t i = backward ? n - 1 - r : r, j = backward ? n - 1 - c : c;
            u[static_cast<std::size_t>(i * n + j)] = textbook_point(u, h2f, n, i, j, omega);
        }
}

}  // namespace

TEST_CASE("sor: the lexicographic sweep in strips on threads gives the sequential sweep's bits", "[sor]") {
    // Strips of 1 to 8 rows (tile 1 to 8 and more, the last strip shorter where the rows do not divide, down to one
    // row), chunks of 1 to 32 steps and the default; tiny grids (fewer strips than threads), odd sides, sides where
    // every step of an 8-row strip has a row outside the grid (up to 30) and longer ones; 1 to 5 threads; forward,
    // backward, and the two alternating.
    for (const unsigned threads : {1u, 2u, 3u, 4u, 5u}) {
        thread_pool pool(threads);
        for (const index_t n : {index_t(3), index_t(4), index_t(5), index_t(6), index_t(11), index_t(12), index_t(19),
                                index_t(34), index_t(37), index_t(70), index_t(101)})
            for (const index_t tile : {index_t(1), index_t(2), index_t(3), index_t(5), index_t(7), index_t(8),
                                       index_t(9), index_t(32), index_t(0)})
                for (const int order : {0, 1, 2}) {  // forward, backward, alternating (from forward)
                    INFO("threads " << threads << ", n " << n << ", tile " << tile << ", order " << order);
                    const auto p = random_problem(n, 11 + std::uint64_t(n));
                    const auto h2f = sor::scaled_rhs(p);
                    auto got = p.u, want = p.u;
                    for (int k = 0; k < 3; ++k) {
                        const bool backward = order == 1 || (order == 2 && k % 2 == 1);
                        sor::lexicographic_sweep(n, got, h2f, 1.6, pool, backward, tile);
                        sequential_sweep(n, want, h2f, 1.6, backward);
                        CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0);
                    }
                }
    }
    // Larger grids, one with rows 4 KiB apart, many chunks and strips in flight on more
    // threads than cores: sweeps repeated, so that a missing wait would show.
    for (const unsigned threads : {2u, 3u, 5u}) {
        thread_pool pool(threads);
        for (const index_t n : {index_t(512), index_t(301)})
            for (const index_t tile : {index_t(4), index_t(29), index_t(0)}) {
                INFO("threads " << threads << ", n " << n << ", tile " << tile);
                const auto p = random_problem(n, 23 + std::uint64_t(n));
                const auto h2f = sor::scaled_rhs(p);
                auto got = p.u, want = p.u;
                for (int k = 0; k < 6; ++k) {
                    sor::lexicographic_sweep(n, got, h2f, 1.3, pool, k % 3 == 2, tile);
                    sequential_sweep(n, want, h2f, 1.3, k % 3 == 2);
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

TEST_CASE("swgpu sor: solution, history and plot, bad input refused with its exit code", "[sor][cli]") {
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
    CHECK(line == "sweep\titeration\tresidual\tseconds");
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

// The parallel MLSSOR of the K-layer paper (`--subdomain AxB`), against a plain reading of its definition written here:
// the subdomain and the tile of every point in every layer from the paper's cutting planes, and the points updated one
// by one in the order step, subdomain, layer, lexicographic (of the half), with the textbook update above.
namespace {

// Along one axis (interior coordinate x, subdomain size a), in a layer of drift d: the subdomain holding x (the
// planes x = s a + d, s >= 1, cut the axis; the first subdomain keeps the edge) and whether x is in its first tile.
struct axis_place {
    index_t sub;
    int part;
};
axis_place place(index_t x, index_t a, index_t d, int layers, bool backward) {
    index_t s = 0;
    while (x >= (s + 1) * a + d) ++s;
    // forward: T1 below the plane x = s a + a - 1 - d; backward: T1 at or above x = s a + 2K - 1 - d
    const bool first = backward ? x >= s * a + 2 * layers - 1 - d : x < s * a + a - 1 - d;
    return {s, first ? 0 : 1};
}

// One iteration, the subdomains of a step taken in ascending or descending order.
void reference_parallel_mlssor(index_t n, std::vector<double>& u, const std::vector<double>& h2f, double omega, int layers,
                               index_t a, index_t b, bool descending, bool forward_only = false) {
    const index_t len = n - 2;
    const index_t si_count = (len + a - 1) / a, sj_count = (len + b - 1) / b;
    for (const bool backward : {false, !forward_only})
        for (int step = 0; step < 4; ++step)
            for (index_t q = 0; q < si_count * sj_count; ++q) {
                const index_t sub = descending ? si_count * sj_count - 1 - q : q;
                const index_t si = sub / sj_count, sj = sub % sj_count;
                for (int k = 0; k < layers; ++k) {
                    const index_t d = backward ? layers - 1 - k : k;
                    for (index_t t = 0; t < len; ++t)
                        for (index_t v = 0; v < len; ++v) {
                            const index_t x = backward ? len - 1 - t : t, y = backward ? len - 1 - v : v;
                            const auto pi = place(x, a, d, layers, backward), pj = place(y, b, d, layers, backward);
                            if (pi.sub != si || pj.sub != sj || pi.part != step / 2 || pj.part != step % 2) continue;
                            u[static_cast<std::size_t>((x + 1) * n + y + 1)] = textbook_point(u, h2f, n, x + 1, y + 1, omega);
                        }
                }
            }
}

bool same_bits(const std::vector<double>& x, const std::vector<double>& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE("sor: the subdomain MLSSOR gives the bits of a plain reading of the paper's iteration", "[sor]") {
    thread_pool pool(3);
    struct shape {
        index_t a, b;
    };
    for (const index_t n : {index_t(3), index_t(7), index_t(12), index_t(23), index_t(34)})
        for (const shape s : {shape{2, 2}, shape{4, 4}, shape{5, 7}, shape{6, 3}, shape{8, 8}, shape{9, 4}, shape{13, 11}})
            for (int layers = 1; layers <= 4; ++layers) {
                if (2 * layers > std::min(s.a, s.b)) continue;
                for (const bool forward_only : {false, true}) {
                    if (forward_only && layers != 2) continue;
                    INFO("n " << n << ", subdomain " << s.a << "x" << s.b << ", K " << layers << ", forward only "
                              << forward_only);
                    const auto p = random_problem(n, 100 + std::uint64_t(n));
                    const auto h2f = sor::scaled_rhs(p);
                    auto got = p.u, up = p.u, down = p.u;
                    for (int it = 0; it < 3; ++it) {
                        sor::mlssor_subdomain_sweep(n, got, h2f, 1.6, layers, s.a, s.b, pool, forward_only);
                        reference_parallel_mlssor(n, up, h2f, 1.6, layers, s.a, s.b, false, forward_only);
                        reference_parallel_mlssor(n, down, h2f, 1.6, layers, s.a, s.b, true, forward_only);
                    }
                    CHECK(same_bits(got, up));
                    CHECK(same_bits(got, down));  // the subdomains of a step are independent
                }
            }
}

TEST_CASE("sor: the subdomain MLSSOR is another iteration than whole sweeps unless one subdomain covers the grid", "[sor]") {
    thread_pool pool(2);
    for (const index_t n : {index_t(5), index_t(12), index_t(31)}) {
        const index_t len = n - 2;
        const auto p = random_problem(n, 300 + std::uint64_t(n));
        const auto h2f = sor::scaled_rhs(p);
        for (int layers = 1; 2 * layers <= len; ++layers) {
            INFO("n " << n << ", K " << layers);
            // one subdomain (A, B >= N - 2): the tiles respect every dependence, so this is K forward sweeps then K
            // backward ones (or 2K forward), bit for bit
            for (const index_t extra : {index_t(0), index_t(3)}) {
                auto tiled = p.u, whole = p.u, tiled_fwd = p.u, whole_fwd = p.u;
                for (int it = 0; it < 2; ++it) {
                    sor::mlssor_subdomain_sweep(n, tiled, h2f, 1.7, layers, len + extra, len, pool);
                    textbook_sweep(sor::method::mlssor, n, whole, h2f, 1.7, layers);
                    sor::mlssor_subdomain_sweep(n, tiled_fwd, h2f, 1.7, layers, len, len + extra, pool, true);
                    for (int l = 0; l < 2 * layers; ++l) textbook_sweep(sor::method::lex, n, whole_fwd, h2f, 1.7);
                }
                CHECK(same_bits(tiled, whole));
                CHECK(same_bits(tiled_fwd, whole_fwd));
            }
        }
    }
    // smaller subdomains: the iterates differ (the paper's iteration does not keep every dependence)
    const index_t n = 34;
    const auto p = random_problem(n, 9);
    const auto h2f = sor::scaled_rhs(p);
    auto tiled = p.u, whole = p.u;
    sor::mlssor_subdomain_sweep(n, tiled, h2f, 1.7, 2, 8, 8, pool);
    textbook_sweep(sor::method::mlssor, n, whole, h2f, 1.7, 2);
    double diff = 0;
    for (std::size_t k = 0; k < tiled.size(); ++k) diff = std::max(diff, std::abs(tiled[k] - whole[k]));
    CHECK(diff > 1e-6);
}

TEST_CASE("sor: the subdomain MLSSOR converges on the model problem and the rough one", "[sor]") {
    thread_pool pool(2);
    const index_t n = 33;
    struct shape {
        index_t a, b;
        int layers;
    };
    for (const shape s : {shape{4, 4, 2}, shape{5, 7, 2}, shape{8, 8, 4}, shape{16, 16, 8}, shape{6, 6, 1}}) {
        INFO("subdomain " << s.a << "x" << s.b << ", K " << s.layers);
        sor::options o;
        o.m = sor::method::mlssor;
        o.omega = 1.5;
        o.tol = 1e-11;
        o.max_sweeps = 2000 * 2 * s.layers;  // sweeps over the grid: 2000 iterations
        o.layers = s.layers;
        o.sub_rows = s.a;
        o.sub_cols = s.b;
        const auto model = sor::solve(sor::model_problem(n), o, pool);
        REQUIRE(model.converged);
        double err = 0;
        for (index_t i = 0; i < n; ++i)
            for (index_t j = 0; j < n; ++j)
                err = std::max(err, std::abs(model.u[static_cast<std::size_t>(i * n + j)] - sor::model_solution(n, i, j)));
        CHECK(err < 1.5e-3);  // the 5-point discretisation error, about pi^2 h^2 / 12
        // rough: the discrete solution is the random grid w
        const auto rough = sor::solve(sor::builtin_problem("rough", n), o, pool);
        REQUIRE(rough.converged);
        const auto w = sor::builtin_solution("rough", n);
        double werr = 0;
        for (std::size_t k = 0; k < w.size(); ++k) werr = std::max(werr, std::abs(rough.u[k] - w[k]));
        CHECK(werr < 1e-9);
    }
}

TEST_CASE("sor: the subdomain MLSSOR converges faster with larger subdomains", "[sor]") {
    // The paper's Table II: the convergence of its MLSSOR depends on the subdomain size, larger being faster (K the
    // largest allowed, half the side). Here on the blocks problem, omega 1.25, 1e-6.
    thread_pool pool(2);
    const index_t n = 130;
    const auto p = sor::builtin_problem("blocks", n);
    std::vector<std::size_t> sweeps;
    for (const index_t a : {index_t(4), index_t(8), index_t(16), index_t(32)}) {
        sor::options o;
        o.m = sor::method::mlssor;
        o.omega = 1.25;
        o.tol = 1e-6;
        o.max_sweeps = 5000;
        o.layers = int(a / 2);
        o.sub_rows = o.sub_cols = a;
        const auto s = sor::solve(p, o, pool);
        REQUIRE(s.converged);
        sweeps.push_back(s.history.size() * std::size_t(2 * o.layers));  // sweeps over the grid
    }
    INFO(sweeps[0] << " " << sweeps[1] << " " << sweeps[2] << " " << sweeps[3]);
    CHECK(sweeps[0] > sweeps[1]);
    CHECK(sweeps[1] > sweeps[2]);
    CHECK(sweeps[2] > sweeps[3]);
}

TEST_CASE("sor: built-in problems have the discrete solution they state", "[sor]") {
    thread_pool pool(2);
    for (const char* name : {"rough", "signs", "blocks"}) {
        INFO(name);
        const index_t n = 19;
        const auto p = sor::builtin_problem(name, n);
        const auto w = sor::builtin_solution(name, n);
        // w has a zero boundary and its residual is rounding
        for (index_t k = 0; k < n; ++k) {
            CHECK(w[static_cast<std::size_t>(k)] == 0.0);
            CHECK(w[static_cast<std::size_t>(k * n)] == 0.0);
        }
        CHECK(sor::residual(p, w, pool) < 1e-14);
        CHECK(sor::residual(p, p.u, pool) == 1.0);  // from u = 0 the residual is f itself
        if (std::string(name) == "signs")
            for (index_t i = 1; i < n - 1; ++i) CHECK(std::abs(w[static_cast<std::size_t>(i * n + 3)]) == 1.0);
    }
    CHECK(sor::builtin_problem("model", 9).f == sor::model_problem(9).f);
    CHECK_THROWS(sor::builtin_problem("jacobi", 9));
    CHECK_THROWS(sor::builtin_problem("rough", 2));
}

TEST_CASE("swgpu sor --subdomain and --problem: runs, and bad values refused with exit code 2", "[sor][cli]") {
    auto run = [&](const std::string& args, std::string* out = nullptr) {
        const auto r = testing::run_program("sor " + args + " --backend cpu");
        if (out) *out = r.out;
        return r.code;
    };
    std::string printed;
    REQUIRE(run("--problem rough --size 40 --method mlssor --subdomain 8x6 --omega 1.25 --tol 1e-3", &printed) == 0);
    CHECK(printed.find("method mlssor") == 0);
    CHECK(printed.find("converged") != std::string::npos);
    CHECK(printed.find(" layers 3 subdomain 8x6") != std::string::npos);  // K = min(A, B) / 2 by default
    REQUIRE(run("--model 20 --method mlssor --subdomain 8x8 --layers 2 --forward-only --max-sweeps 3", &printed) == 6);
    CHECK(printed.find(" layers 2 subdomain 8x8 forward-only") != std::string::npos);
    for (const char* bad : {"4", "4x", "x4", "0x4", "4x0", "4x4x4", "-4x4", "axb", "4 x 4", "99999999999x4"})
        CHECK(run(std::string("--model 20 --method mlssor --subdomain '") + bad + "'") == 2);
    CHECK(run("--model 20 --method lex --subdomain 4x4") == 2);
    CHECK(run("--model 20 --method mlssor --subdomain 4x4 --layers 3") == 2);  // 2K > 4
    CHECK(run("--model 20 --method mlssor --subdomain 1x1") == 2);             // K would be 0
    CHECK(run("--model 20 --method ssor --forward-only") == 2);
    CHECK(run("--problem nope --size 20") == 2);
    CHECK(run("--problem rough") == 2);
    CHECK(run("--model 20 --size 20") == 2);
    CHECK(run("--problem rough --size 20 --model 20") == 2);
    CHECK(run("--problem rough --size 2") == 2);
}

TEST_CASE("swgpu sor: NaN and infinities refused with their position and count, sizes past the memory refused first", "[sor][cli]") {
    namespace fs = std::filesystem;
    const testing::temp_dir tmp("swgpu-sor");
    const fs::path dir = tmp.path;
    const auto file = [&](const char* name) { return "'" + (dir / name).string() + "'"; };
    sat::array f(sat::dtype::f64, 9, 9, 1), g(sat::dtype::f64, 9, 9, 1);
    f.data<double>()[4 * 9 + 5] = std::nan("");
    f.data<double>()[6 * 9 + 1] = INFINITY;
    g.data<double>()[8 * 9 + 3] = INFINITY;  // on the bottom edge
    io::write_npy(f, (dir / "f.npy").string());
    io::write_npy(g, (dir / "g.npy").string());
    io::write_npy(sat::array(sat::dtype::f64, 9, 9, 1), (dir / "zero.npy").string());
    const std::size_t files_before = tmp.count();
    struct bad_case {
        std::string args, env, message;
        int code;
    };
    const std::string small_memory = "SWGPU_TUNE=host.memory_mib=1024";
    const std::vector<bad_case> cases = {
        {"--rhs " + file("f.npy") + " --boundary " + file("zero.npy"), "",
         "f.npy: holds 2 values that are not finite (NaN or infinity), the first (nan) at row 4, column 5", 1},
        {"--rhs " + file("zero.npy") + " --boundary " + file("g.npy"), "",
         "g.npy: holds 1 value that is not finite (NaN or infinity), the first (inf) at row 8, column 3", 1},
        {"--model 50000", small_memory,
         "--model 50000 is a 50000 x 50000 grid, held in 5 float64 arrays of its size (100 GB); the memory allowed "
         "(host.memory_mib) is 1.07 GB: use a smaller N",
         4},
        {"--problem rough --size 50000", small_memory, "use a smaller N", 4},
        {"--model 10000000", "", "--model 10000000 is a 10000000 x 10000000 grid", 4},  // 4 PB: no machine holds it
        {"--model 0", "", "at least 3 x 3 points (got 0)", 2},
        {"--model 9 --omega 0", "", "--omega must be in (0, 2)", 2},
        {"--problem rough --size 0", "", "at least 3 x 3 points (got 0)", 2},
    };
    for (const auto& c : cases) {
        INFO(c.args);
        const auto r = testing::run_program("sor " + c.args + " -o " + file("u.npy") + " --history " + file("h.tsv") +
                                                 " --backend cpu",
                                             c.env);
        CHECK(r.code == c.code);
        CHECK(testing::one_error_line(r.err));
        CHECK(r.err.find(c.message) != std::string::npos);
        CHECK(tmp.count() == files_before);
    }
}

TEST_CASE("sor: the residual is relative to the whole right-hand side, runs that stop above --tol exit 6 and say why", "[sor][cli]") {
    namespace fs = std::filesystem;
    const testing::temp_dir tmp("swgpu-sor");
    const fs::path dir = tmp.path;
    const auto file = [&](const char* name) { return "'" + (dir / name).string() + "'"; };
    // Laplace's equation with boundary values in kelvin: f = 0, so a residual divided by ||f|| was absolute and
    // never came near 1e-10 (its scale is the boundary's over h^2).
    const index_t n = 21;
    sat::array f(sat::dtype::f64, n, n, 1), g(sat::dtype::f64, n, n, 1);
    for (index_t k = 0; k < n * n; ++k) g.data<double>()[k] = k < n ? 400.0 : 300.0;  // the top edge at 400 K
    io::write_npy(f, (dir / "f.npy").string());
    io::write_npy(g, (dir / "g.npy").string());
    auto r = testing::run_program("sor --rhs " + file("f.npy") + " --boundary " + file("g.npy") + " --tol 1e-10 -o " +
                                  file("u.npy") + " --backend cpu");
    REQUIRE(r.code == 0);
    CHECK(r.out.find(" converged") != std::string::npos);
    // ||b - A u|| / ||b|| over the interior, b = f plus the boundary neighbours over h^2, computed here.
    const auto u = io::read_npy((dir / "u.npy").string());
    const double* U = u.data<double>();
    const double h2 = double(n - 1) * double(n - 1);
    const auto edge = [&](index_t i, index_t j) { return i == 0 || j == 0 || i == n - 1 || j == n - 1; };
    double r2 = 0, b2 = 0;
    for (index_t i = 1; i < n - 1; ++i)
        for (index_t j = 1; j < n - 1; ++j) {
            double b = 0, au = 4 * U[i * n + j];
            const std::initializer_list<std::pair<index_t, index_t>> neighbours = {{i - 1, j}, {i + 1, j}, {i, j - 1}, {i, j + 1}};
            for (const auto& [a, c] : neighbours) {
                if (edge(a, c)) b += U[a * n + c];  // a known value, moved to the right-hand side
                else au -= U[a * n + c];
            }
            b *= h2;
            au *= h2;
            r2 += (b - au) * (b - au);
            b2 += b * b;
        }
    const double rel = std::sqrt(r2) / std::sqrt(b2);
    CHECK(rel <= 1e-10);
    CHECK(rel > 0);
    CHECK(U[10 * n + 10] > 300.0);
    CHECK(U[10 * n + 10] < 400.0);
    // The library's residual is the same quantity.
    {
        thread_pool pool(2);
        sor::problem p = sor::from_arrays(n, std::vector<double>(static_cast<std::size_t>(n * n), 0.0),
                                          std::vector<double>(g.data<double>(), g.data<double>() + n * n), "g");
        std::vector<double> w(U, U + n * n);
        CHECK(std::abs(sor::residual(p, w, pool) - rel) <= 1e-6 * rel);
    }

    // --max-sweeps reached: exit 6, U and the history written, the reason on stderr.
    r = testing::run_program("sor --model 17 --max-sweeps 3 -o " + file("m.npy") + " --history " + file("m.tsv") +
                             " --backend cpu");
    CHECK(r.code == 6);
    CHECK(testing::one_error_line(r.err));
    CHECK(r.err.find("did not converge: the relative residual") != std::string::npos);
    CHECK(r.err.find("after 3 sweeps (--max-sweeps 3)") != std::string::npos);
    CHECK(r.out.find("not-converged") != std::string::npos);
    CHECK(fs::exists(dir / "m.npy"));
    CHECK(fs::exists(dir / "m.tsv"));
    // A tolerance below the round-off floor: the run stops when the residual stagnates, long before --max-sweeps.
    r = testing::run_program("sor --model 33 --tol 1e-18 --stagnation 40 --max-sweeps 100000 --backend cpu");
    CHECK(r.code == 6);
    CHECK(testing::one_error_line(r.err));
    CHECK(r.err.find("stagnated above --tol 1e-18") != std::string::npos);
    const auto sweeps_at = r.out.find(" sweeps ");
    REQUIRE(sweeps_at != std::string::npos);
    CHECK(std::stoi(r.out.substr(sweeps_at + 8)) < 2000);
    // The stopping test itself.
    sor::options o;
    o.tol = 1e-6;
    o.max_sweeps = 100;
    o.stagnation = 3;
    sor::stop_test stop{o};
    CHECK(!stop(1, 1.0));
    CHECK(!stop(2, 0.5));
    CHECK(!stop(3, 0.4999));  // not a 0.1 % fall
    CHECK(!stop(4, 0.6));
    CHECK(stop(5, 0.5));      // three sweeps since 0.5
    CHECK(stop.reason == sor::stop_reason::stagnated);
    sor::stop_test again{o};
    CHECK(again(1, 1e-6));
    CHECK(again.reason == sor::stop_reason::converged);
    CHECK(testing::run_program("sor --model 9 --stagnation -1 --backend cpu").code == 2);
}
