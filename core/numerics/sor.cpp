#include "core/numerics/sor.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/numerics/finite.hpp"
#include "core/tuning.hpp"

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
    if (const numerics::nonfinite bad = numerics::find_nonfinite(f); bad.count > 0) {
        const auto N = static_cast<std::size_t>(n);
        throw input_error(where, "f " + numerics::nonfinite_message(bad, "row " + std::to_string(bad.first / N) +
                                                                            ", column " + std::to_string(bad.first % N)));
    }
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
    if (o.stagnation < 0) throw usage_error("--stagnation must be 0 (never) or a number of sweeps");
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

options options_of(const std::string& method, std::optional<double> omega, index_t n, double tol, int max_sweeps,
                   int layers, int stagnation) {
    options o;
    o.m = parse_method(method);
    o.omega = omega ? *omega : optimal_omega(n);
    o.tol = tol;
    o.max_sweeps = max_sweeps;
    o.layers = layers;
    o.stagnation = stagnation;
    return o;
}

void set_subdomains(options& o, const std::string& text, bool layers_given) {
    parse_subdomain(text, o.sub_rows, o.sub_cols);
    if (layers_given) return;
    const index_t k = std::min(o.sub_rows, o.sub_cols) / 2;
    if (k < 1 || k > 1000)
        throw usage_error("--subdomain " + text + ": the default K = min(A, B) / 2 = " + std::to_string(k) +
                          " is not in 1 to 1000; give --layers");
    o.layers = int(k);
}

unsigned cpu_threads(index_t n, unsigned threads) {
    return threads == 0 && n < tuning::integer("sor.cpu_one_thread_below") ? 1 : threads;
}

memory_need grid_memory(index_t n, int arrays, const std::string& what, const std::string& advice) {
    return {static_cast<double>(n) * static_cast<double>(n) * 8.0 * arrays,
            what + " is a " + std::to_string(n) + " x " + std::to_string(n) + " grid, held in " + std::to_string(arrays) +
                " float64 arrays of its size",
            advice};
}

const char* reason_name(stop_reason r) {
    switch (r) {
        case stop_reason::converged: return "converged";
        case stop_reason::stagnated: return "stagnated";
        case stop_reason::max_sweeps: break;
    }
    return "max_sweeps";
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

namespace {

// The one-point update from a sweep's neighbours: the rows before and after it in the sweep, the columns before and
// after (a backward sweep's row before is the grid's row below).
template <bool backward>
double sweep_point(double centre, double row_before, double row_after, double col_before, double col_after, double h2f,
                   double omega) {
    if constexpr (backward) return point(centre, row_after, row_before, col_after, col_before, h2f, omega);
    else return point(centre, row_before, row_after, col_before, col_after, h2f, omega);
}

// A lexicographic sweep in its own coordinates: interior row x and column y, both 0 .. len-1 in the sweep's order, at
// u[x·dr + y·dc] from the first point it updates (grid (1, 1) forward, (n-2, n-2) backward).
template <bool backward>
struct sweep_grid {
    static constexpr index_t dc = backward ? -1 : 1;
    double* u;
    const double* h2f;
    index_t dr;
    index_t len;
    double omega;

    void at(index_t x, index_t y) const {
        double* p = u + x * dr + y * dc;
        *p = sweep_point<backward>(*p, p[-dr], p[dr], p[-dc], p[dc], h2f[x * dr + y * dc], omega);
    }
};

// A strip of up to 8 rows runs in steps: in step s its row k updates column s - k·strip_skew (when in [0, len)), so
// the rows' chains of dependent operations run side by side (one row's chain of 7 rounded operations leaves the
// floating-point units mostly idle). The skew of half a cache line keeps the rows' points in different cache sets
// when rows lie a multiple of 4 KiB apart: skewed by one column, 8-row strips of 2048-point rows ran 3.5x slower.
constexpr int strip_rows = 8;
constexpr index_t strip_skew = 4;

// Steps [s0, s1) of the strip of R rows from row x0. Each point reads what the sweep's own order gives it: new values
// in the row before (skew steps earlier, or done by the strip before: see lexicographic_strips) and the column before
// (a step earlier), old ones in the row after (skew steps later, or not yet reached by the strip after) and the
// column after (a step later).
template <int R, bool backward>
void run_strip(const sweep_grid<backward>& g, index_t x0, index_t s0, index_t s1) {
    constexpr index_t dc = sweep_grid<backward>::dc, skew = strip_skew;
    const auto edge_step = [&](index_t s) {
        for (int k = 0; k < R; ++k)
            if (s - k * skew >= 0 && s - k * skew < g.len) g.at(x0 + k, s - k * skew);
    };
    // Steps [(R-1)·skew, len) have a column for every row: their loop keeps each row's last value in a register.
    const index_t full_lo = (R - 1) * skew, full_hi = std::min(s1, g.len);
    index_t s = s0;
    for (; s < std::min(s1, full_lo); ++s) edge_step(s);
    if (s < full_hi) {
        const index_t dr = g.dr;
        const double omega = g.omega;
        double* p[R];
        const double* f[R];
        double before[R];
        for (int k = 0; k < R; ++k) {
            p[k] = g.u + (x0 + k) * dr + (s - k * skew) * dc;
            f[k] = g.h2f + (x0 + k) * dr + (s - k * skew) * dc;
            before[k] = p[k][-dc];
        }
        for (; s < full_hi; ++s) {
#pragma GCC unroll 8
            for (int k = 0; k < R; ++k) {
                const double v = sweep_point<backward>(*p[k], p[k][-dr], p[k][dr], before[k], p[k][dc], *f[k], omega);
                *p[k] = v;
                before[k] = v;
                p[k] += dc;
                f[k] += dc;
            }
        }
    }
    for (; s < s1; ++s) edge_step(s);
}

template <bool backward>
void run_strip(const sweep_grid<backward>& g, index_t rows, index_t x0, index_t s0, index_t s1) {
    switch (rows) {
        case 8: return run_strip<8>(g, x0, s0, s1);
        case 7: return run_strip<7>(g, x0, s0, s1);
        case 6: return run_strip<6>(g, x0, s0, s1);
        case 5: return run_strip<5>(g, x0, s0, s1);
        case 4: return run_strip<4>(g, x0, s0, s1);
        case 3: return run_strip<3>(g, x0, s0, s1);
        case 2: return run_strip<2>(g, x0, s0, s1);
        default: return run_strip<1>(g, x0, s0, s1);
    }
}

struct alignas(64) strip_progress {
    std::atomic<index_t> steps{0};  // the strip's steps done, published every `chunk` steps
};

// Strips of `rows` rows (the last one shorter), strip b on task b mod tasks, each task one thread (see
// thread_pool::parallel_for). Strip b runs its steps in chunks; before steps [s0, s1) it waits (spinning, then
// yielding) until strip b-1 has done steps min(s1, len) + (rows-1)·skew, where its last row has updated every column
// below min(s1, len): the new values the chunk's first row reads as the row before, and read by strip b-1 as old
// values before strip b writes them (the release and acquire of the step counts order both).
template <bool backward>
void lexicographic_strips(const sweep_grid<backward>& g, index_t rows, index_t chunk, thread_pool& pool) {
    const index_t strips = (g.len + rows - 1) / rows;
    const auto steps_of = [&](index_t b) {
        return g.len + (std::min(g.len, (b + 1) * rows) - b * rows - 1) * strip_skew;
    };
    if (pool.size() == 1 || strips == 1) {
        for (index_t b = 0; b < strips; ++b) run_strip(g, std::min(rows, g.len - b * rows), b * rows, 0, steps_of(b));
        return;
    }
    const index_t tasks = std::min<index_t>(pool.size(), strips);
    std::vector<strip_progress> done(static_cast<std::size_t>(strips));
    pool.parallel_for(static_cast<std::size_t>(tasks), [&](std::size_t t) {
        for (index_t b = index_t(t); b < strips; b += tasks) {
            const index_t x0 = b * rows, total = steps_of(b);
            index_t seen = 0;  // strip b-1's steps, as last read
            for (index_t s0 = 0; s0 < total; s0 += chunk) {
                const index_t s1 = std::min(total, s0 + chunk);
                if (b > 0) {
                    const index_t need = std::min(s1, g.len) + (rows - 1) * strip_skew;
                    const auto& before = done[static_cast<std::size_t>(b - 1)].steps;
                    for (int spin = 0; seen < need; ++spin) {
                        if (spin >= 64) std::this_thread::yield();
                        seen = before.load(std::memory_order_acquire);
                    }
                }
                run_strip(g, std::min(rows, g.len - x0), x0, s0, s1);
                done[static_cast<std::size_t>(b)].steps.store(s1, std::memory_order_release);
            }
        }
    });
}

}  // namespace

void lexicographic_sweep(index_t n, std::vector<double>& u, const std::vector<double>& h2f, double omega,
                         thread_pool& pool, bool backward, index_t tile) {
    const index_t len = n - 2;
    if (len <= 0) return;
    const index_t rows = tile > 0 ? std::min<index_t>(tile, strip_rows) : strip_rows;
    // Strip b trails strip b-1 by about a chunk and the skew: chunks of len / (4 threads) keep every thread's strip
    // in flight at once with room to spare.
    const index_t chunk = tile > 0 ? tile : std::clamp<index_t>(len / (4 * static_cast<index_t>(pool.size())), 16, 256);
    const auto first = static_cast<std::size_t>(backward ? (n - 2) * n + n - 2 : n + 1);
    if (backward)
        lexicographic_strips(sweep_grid<true>{u.data() + first, h2f.data() + first, -n, len, omega}, rows, chunk, pool);
    else
        lexicographic_strips(sweep_grid<false>{u.data() + first, h2f.data() + first, n, len, omega}, rows, chunk, pool);
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

int sweeps_per_iteration(const options& o) {
    switch (o.m) {
        case method::ssor: return 2;
        case method::mlssor: return 2 * o.layers;
        default: return 1;
    }
}

bool stop_test::operator()(int iteration, double r) {
    check_cancelled();  // a caller's request to stop (core/cancel.hpp), once per residual
    if (r <= o.tol) {
        reason = stop_reason::converged;
        return true;
    }
    if (!(r == r)) {  // NaN: nothing more to gain
        reason = stop_reason::stagnated;
        return true;
    }
    const auto per = static_cast<std::int64_t>(sweeps_per_iteration(o));
    if (best_iteration == 0 || r < best * 0.999) {
        best = r;
        best_iteration = iteration;
    } else if (o.stagnation > 0 && (iteration - best_iteration) * per >= o.stagnation) {
        reason = stop_reason::stagnated;
        return true;
    }
    reason = stop_reason::max_sweeps;
    return iteration * per >= o.max_sweeps;
}

double residual_scale(const problem& p) {
    const index_t n = p.n;
    const double inv_h2 = double(n - 1) * double(n - 1);
    const auto N = static_cast<std::size_t>(n);
    const auto edge = [&](index_t i, index_t j) { return i == 0 || j == 0 || i == n - 1 || j == n - 1; };
    double b2 = 0;  // row by row, in the order residual_sum adds r^2 (so that u = 0 gives exactly 1 when b = f)
    for (index_t i = 1; i < n - 1; ++i) {
        double row = 0;
        for (index_t j = 1; j < n - 1; ++j) {
            const auto s = static_cast<std::size_t>(i * n + j);
            double moved = 0;  // the boundary neighbours, known values moved to the right-hand side
            if (edge(i - 1, j)) moved += p.u[s - N];
            if (edge(i + 1, j)) moved += p.u[s + N];
            if (edge(i, j - 1)) moved += p.u[s - 1];
            if (edge(i, j + 1)) moved += p.u[s + 1];
            const double b = p.f[s] + moved * inv_h2;
            row += b * b;
        }
        b2 += row;
    }
    return b2 > 0 ? std::sqrt(b2) : 1.0;  // absolute when b is 0
}

namespace {

// ||f - A u||^2 over the interior: rows on the pool's threads, their sums added in row order.
double residual_sum(const problem& p, const std::vector<double>& u, thread_pool& pool) {
    const index_t n = p.n;
    const double inv_h2 = double(n - 1) * double(n - 1);
    std::vector<double> r2(static_cast<std::size_t>(n), 0.0);
    pool.parallel_for(static_cast<std::size_t>(n - 2), [&](std::size_t row) {
        const index_t i = index_t(row) + 1;
        double r_sum = 0;
        for (index_t j = 1; j < n - 1; ++j) {
            const auto s = static_cast<std::size_t>(i * n + j), N = static_cast<std::size_t>(n);
            const double au = (4 * u[s] - u[s - N] - u[s + N] - u[s - 1] - u[s + 1]) * inv_h2;
            const double r = p.f[s] - au;
            r_sum += r * r;
        }
        r2[row] = r_sum;
    });
    double r = 0;
    for (std::size_t row = 0; row < r2.size(); ++row) r += r2[row];
    return r;
}

}  // namespace

double residual(const problem& p, const std::vector<double>& u, thread_pool& pool) {
    return std::sqrt(residual_sum(p, u, pool)) / residual_scale(p);
}

solution solve(const problem& p, const options& o, thread_pool& pool) {
    check(o);
    solution s;
    s.u = p.u;
    const auto h2f = scaled_rhs(p);
    const double scale = residual_scale(p);
    stop_test stop{o};
    const auto start = std::chrono::steady_clock::now();  // the sweeps' time, not the setup's
    for (int k = 1; k <= o.max_sweeps; ++k) {
        if (o.m == method::mlssor && o.sub_rows > 0) {
            mlssor_subdomain_sweep(p.n, s.u, h2f, o.omega, o.layers, o.sub_rows, o.sub_cols, pool, o.forward_only);
        } else if (o.m == method::mlssor && o.forward_only) {
            for (int l = 0; l < 2 * o.layers; ++l) sweep(method::lex, p.n, s.u, h2f, o.omega, pool);
        } else {
            sweep(o.m, p.n, s.u, h2f, o.omega, pool, o.layers);
        }
        const double r = std::sqrt(residual_sum(p, s.u, pool)) / scale;
        s.history.push_back({k, r, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
        if (stop(k, r)) break;
    }
    s.reason = stop.reason;
    s.converged = stop.reason == stop_reason::converged;
    return s;
}

}  // namespace swgpu::sor
