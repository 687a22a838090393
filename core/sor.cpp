#include "core/sor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "core/error.hpp"

namespace swgpu::sor {

method parse_method(const std::string& name) {
    if (name == "lex") return method::lex;
    if (name == "redblack") return method::redblack;
    if (name == "ssor") return method::ssor;
    if (name == "mlssor") return method::mlssor;
    throw usage_error("--method must be lex, redblack, ssor or mlssor (got '" + name + "')");
}

const char* method_name(method m) {
    switch (m) {
        case method::lex: return "lex";
        case method::redblack: return "redblack";
        case method::ssor: return "ssor";
        case method::mlssor: return "mlssor";
    }
    return "?";
}

double model_solution(index_t n, index_t i, index_t j) {
    const double pi = std::acos(-1.0), h = 1.0 / double(n - 1);
    return std::sin(pi * double(i) * h) * std::sin(pi * double(j) * h);
}

problem model_problem(index_t n) {
    if (n < 3) throw usage_error("the grid needs at least 3 x 3 points (got " + std::to_string(n) + ")");
    problem p;
    p.n = n;
    const auto cells = static_cast<std::size_t>(n * n);
    p.f.assign(cells, 0.0);
    p.u.assign(cells, 0.0);
    const double pi2 = 2 * std::acos(-1.0) * std::acos(-1.0);
    for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < n; ++j) p.f[static_cast<std::size_t>(i * n + j)] = pi2 * model_solution(n, i, j);
    return p;
}

problem from_arrays(index_t n, std::vector<double> f, const std::vector<double>& boundary, const std::string& where) {
    if (n < 3) throw input_error(where, "the grid needs at least 3 x 3 points (got " + std::to_string(n) + ")");
    const auto cells = static_cast<std::size_t>(n * n);
    if (f.size() != cells || boundary.size() != cells) throw input_error(where, "f and the boundary must both be N x N");
    for (const double v : f)
        if (!std::isfinite(v)) throw input_error(where, "f holds a value that is not finite");
    problem p;
    p.n = n;
    p.f = std::move(f);
    p.u.assign(cells, 0.0);
    for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < n; ++j)
            if (i == 0 || j == 0 || i == n - 1 || j == n - 1) {
                const double v = boundary[static_cast<std::size_t>(i * n + j)];
                if (!std::isfinite(v)) throw input_error(where, "the boundary holds a value that is not finite");
                p.u[static_cast<std::size_t>(i * n + j)] = v;
            }
    return p;
}

double optimal_omega(index_t n) { return 2.0 / (1.0 + std::sin(std::acos(-1.0) / double(n - 1))); }

void check(const options& o) {
    if (!(o.omega > 0 && o.omega < 2)) throw usage_error("--omega must be in (0, 2)");
    if (!(o.tol > 0) || !std::isfinite(o.tol)) throw usage_error("--tol must be a positive number");
    if (o.max_sweeps < 1) throw usage_error("--max-sweeps must be at least 1");
    if (o.layers < 1 || o.layers > 1000) throw usage_error("--layers must be 1 to 1000");
    if (o.sub_rows != 0 || o.sub_cols != 0) {
        if (o.m != method::mlssor) throw usage_error("--subdomain is for --method mlssor");
        if (o.sub_rows < 1 || o.sub_cols < 1) throw usage_error("--subdomain needs both sides positive");
        if (o.sub_rows < 2 * index_t(o.layers) || o.sub_cols < 2 * index_t(o.layers))
            throw usage_error("--subdomain " + std::to_string(o.sub_rows) + "x" + std::to_string(o.sub_cols) +
                              " is too small for --layers " + std::to_string(o.layers) +
                              ": both sides must be at least 2K");
    }
    if (o.forward_only && o.m != method::mlssor) throw usage_error("--forward-only is for --method mlssor");
}

void parse_subdomain(const std::string& text, index_t& rows, index_t& cols) {
    const auto bad = [&] {
        return usage_error("--subdomain must be AxB with A and B positive integers (got '" + text + "')");
    };
    const auto x = text.find_first_of("xX");
    if (x == std::string::npos || x == 0 || x + 1 == text.size()) throw bad();
    const auto number = [&](const std::string& part) {
        if (part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos) throw bad();
        const index_t v = std::stoll(part);
        if (v < 1) throw bad();
        return v;
    };
    rows = number(text.substr(0, x));
    cols = number(text.substr(x + 1));
}

namespace {

// w of the rough problems, n x n with a zero boundary; the generator's values in row-major order, so any platform
// gives the same grid.
std::vector<double> rough_solution(const std::string& name, index_t n) {
    std::vector<double> w(static_cast<std::size_t>(n * n), 0.0);
    std::mt19937_64 rng(name == "rough" ? 20100 : name == "signs" ? 20101 : 20102);
    const auto uniform = [&] { return double(rng() >> 11) * 0x1.0p-53; };  // [0, 1), the same on every platform
    if (name == "blocks") {
        const index_t b = (n + 7) / 8;
        std::vector<double> sign(static_cast<std::size_t>(b * b));
        for (auto& v : sign) v = uniform() < 0.5 ? -1.0 : 1.0;
        for (index_t i = 1; i < n - 1; ++i)
            for (index_t j = 1; j < n - 1; ++j)
                w[static_cast<std::size_t>(i * n + j)] = sign[static_cast<std::size_t>((i / 8) * b + j / 8)];
        return w;
    }
    for (index_t i = 1; i < n - 1; ++i)
        for (index_t j = 1; j < n - 1; ++j) {
            const double r = uniform();
            w[static_cast<std::size_t>(i * n + j)] = name == "signs" ? (r < 0.5 ? -1.0 : 1.0) : r;
        }
    return w;
}

}  // namespace

const char* builtin_names() { return "model, rough, signs, blocks"; }

std::vector<double> builtin_solution(const std::string& name, index_t n) {
    if (name != "model" && name != "rough" && name != "signs" && name != "blocks")
        throw usage_error("--problem must be one of " + std::string(builtin_names()) + " (got '" + name + "')");
    if (n < 3) throw usage_error("the grid needs at least 3 x 3 points (got " + std::to_string(n) + ")");
    if (name != "model") return rough_solution(name, n);
    std::vector<double> u(static_cast<std::size_t>(n * n));
    for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < n; ++j) u[static_cast<std::size_t>(i * n + j)] = model_solution(n, i, j);
    return u;
}

problem builtin_problem(const std::string& name, index_t n) {
    const auto w = builtin_solution(name, n);  // checks the name and n
    if (name == "model") return model_problem(n);
    // f = A w, zero boundary: w is the discrete solution (up to the rounding of f).
    problem p;
    p.n = n;
    p.f.assign(w.size(), 0.0);
    p.u.assign(w.size(), 0.0);
    const double inv_h2 = double(n - 1) * double(n - 1);
    const auto N = static_cast<std::size_t>(n);
    for (index_t i = 1; i < n - 1; ++i)
        for (index_t j = 1; j < n - 1; ++j) {
            const auto s = static_cast<std::size_t>(i * n + j);
            p.f[s] = (4 * w[s] - w[s - N] - w[s + N] - w[s - 1] - w[s + 1]) * inv_h2;
        }
    return p;
}

std::vector<double> scaled_rhs(const problem& p) {
    const double h = 1.0 / double(p.n - 1);
    std::vector<double> out(p.f.size());
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = h * h * p.f[k];
    return out;
}

namespace {

inline void update(index_t n, std::vector<double>& u, const std::vector<double>& h2f, double omega, index_t i,
                   index_t j) {
    const auto s = static_cast<std::size_t>(i * n + j), N = static_cast<std::size_t>(n);
    u[s] = point(u[s], u[s - N], u[s + N], u[s - 1], u[s + 1], h2f[s], omega);
}

}  // namespace

void mlssor_subdomain_sweep(index_t n, std::vector<double>& u, const std::vector<double>& h2f, double omega, int layers,
                            index_t rows, index_t cols, thread_pool& pool, bool forward_only) {
    if (n < 3) return;
    const index_t si_count = subdomain_count(n - 2, rows), sj_count = subdomain_count(n - 2, cols);
    for (const bool backward : {false, !forward_only})
        for (int step = 0; step < 4; ++step)
            pool.parallel_for(static_cast<std::size_t>(si_count), [&](std::size_t si) {
                for (index_t sj = 0; sj < sj_count; ++sj)
                    mlssor_tile(n, u.data(), h2f.data(), omega, layers, rows, cols, index_t(si), sj, step / 2,
                                step % 2, backward);
            });
}

void lexicographic_sweep(index_t n, std::vector<double>& u, const std::vector<double>& h2f, double omega,
                         thread_pool& pool, bool backward, index_t tile) {
    const index_t len = n - 2;
    if (len <= 0) return;
    if (tile <= 0) tile = std::clamp<index_t>(len / (4 * static_cast<index_t>(pool.size())), 32, 512);
    const index_t tiles = (len + tile - 1) / tile;
    // Tile (a, b) in the sweep's order: interior rows [a·tile, ...) and columns likewise, counted from the end when
    // backward.
    const auto run_tile = [&](index_t a, index_t b) {
        const index_t r0 = a * tile, r1 = std::min(len, r0 + tile), c0 = b * tile, c1 = std::min(len, c0 + tile);
        for (index_t r = r0; r < r1; ++r) {
            const index_t i = backward ? n - 2 - r : 1 + r;
            for (index_t c = c0; c < c1; ++c) update(n, u, h2f, omega, i, backward ? n - 2 - c : 1 + c);
        }
    };
    if (pool.size() == 1 || tiles == 1) {
        for (index_t a = 0; a < tiles; ++a)
            for (index_t b = 0; b < tiles; ++b) run_tile(a, b);  // row after row of tiles: the sweep's own order
        return;
    }
    for (index_t d = 0; d < 2 * tiles - 1; ++d) {
        const index_t a_lo = std::max<index_t>(0, d - (tiles - 1)), a_hi = std::min(tiles - 1, d);
        pool.parallel_for(static_cast<std::size_t>(a_hi - a_lo + 1), [&](std::size_t k) {
            const index_t a = a_lo + static_cast<index_t>(k);
            run_tile(a, d - a);
        });
    }
}

void sweep(method m, index_t n, std::vector<double>& u, const std::vector<double>& h2f, double omega, thread_pool& pool,
           int layers) {
    switch (m) {
        case method::mlssor:
            for (int k = 0; k < layers; ++k) lexicographic_sweep(n, u, h2f, omega, pool, false);
            for (int k = 0; k < layers; ++k) lexicographic_sweep(n, u, h2f, omega, pool, true);
            return;
        case method::lex:
            lexicographic_sweep(n, u, h2f, omega, pool, false);
            return;
        case method::ssor:
            lexicographic_sweep(n, u, h2f, omega, pool, false);
            lexicographic_sweep(n, u, h2f, omega, pool, true);
            return;
        case method::redblack:
            for (int colour = 0; colour < 2; ++colour)
                pool.parallel_for(static_cast<std::size_t>(n - 2), [&](std::size_t r) {
                    const index_t i = index_t(r) + 1;
                    for (index_t j = 1 + ((i + 1 + colour) & 1); j < n - 1; j += 2) update(n, u, h2f, omega, i, j);
                });
            return;
    }
}

double residual(const problem& p, const std::vector<double>& u, thread_pool& pool) {
    const index_t n = p.n;
    const double inv_h2 = double(n - 1) * double(n - 1);
    std::vector<double> r2(static_cast<std::size_t>(n), 0.0), f2(static_cast<std::size_t>(n), 0.0);
    pool.parallel_for(static_cast<std::size_t>(n - 2), [&](std::size_t row) {
        const index_t i = index_t(row) + 1;
        double r_sum = 0, f_sum = 0;
        for (index_t j = 1; j < n - 1; ++j) {
            const auto s = static_cast<std::size_t>(i * n + j), N = static_cast<std::size_t>(n);
            const double au = (4 * u[s] - u[s - N] - u[s + N] - u[s - 1] - u[s + 1]) * inv_h2;
            const double r = p.f[s] - au;
            r_sum += r * r;
            f_sum += p.f[s] * p.f[s];
        }
        r2[row] = r_sum;
        f2[row] = f_sum;
    });
    double r = 0, f = 0;
    for (std::size_t row = 0; row < r2.size(); ++row) r += r2[row], f += f2[row];
    const double scale = f > 0 ? std::sqrt(f) : 1.0;  // absolute when f is 0
    return std::sqrt(r) / scale;
}

solution solve(const problem& p, const options& o, thread_pool& pool) {
    check(o);
    const auto start = std::chrono::steady_clock::now();
    solution s;
    s.u = p.u;
    const auto h2f = scaled_rhs(p);
    for (int k = 1; k <= o.max_sweeps; ++k) {
        if (o.m == method::mlssor && o.sub_rows > 0) {
            mlssor_subdomain_sweep(p.n, s.u, h2f, o.omega, o.layers, o.sub_rows, o.sub_cols, pool, o.forward_only);
        } else if (o.m == method::mlssor && o.forward_only) {
            for (int l = 0; l < 2 * o.layers; ++l) sweep(method::lex, p.n, s.u, h2f, o.omega, pool);
        } else {
            sweep(o.m, p.n, s.u, h2f, o.omega, pool, o.layers);
        }
        const double r = residual(p, s.u, pool);
        s.history.push_back({k, r, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
        if (r <= o.tol) {
            s.converged = true;
            break;
        }
    }
    return s;
}

}  // namespace swgpu::sor
