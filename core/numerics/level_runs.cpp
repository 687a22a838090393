#include "core/numerics/level_runs.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "core/tuning.hpp"

namespace swgpu::levels {

std::vector<std::int64_t> widths_of(const level_sets& s) {
    std::vector<std::int64_t> w;
    for (level_t l = 1; l <= s.count(); ++l) w.push_back(s.width(l));
    return w;
}

double ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

solve_run solve_sequentially(const csr_matrix& t, triangle part, const std::vector<double>& b, long long repeat) {
    solve_run run;
    run.x.resize(static_cast<std::size_t>(t.rows));
    for (long long r = 0; r < repeat; ++r) {
        const auto t1 = std::chrono::steady_clock::now();
        triangular_solve_sequential(t, part, b, run.x);
        run.solve_ms.push_back(ms_since(t1));
    }
    return run;
}

solve_run solve_on_cpu(const csr_matrix& t, triangle part, const std::vector<double>& b, long long repeat,
                       unsigned threads) {
    solve_run run;
    run.x.resize(static_cast<std::size_t>(t.rows));
    thread_pool pool(threads);
    const auto t0 = std::chrono::steady_clock::now();
    const level_sets sets = group_by_level(triangular_levels(t, part));
    run.analysis_ms = ms_since(t0);
    // Few rows per level: the levels' bookkeeping costs more than their parallelism gains, and the sequential
    // substitution (the same bits) is faster. The threshold is measured data (tuning key levels.cpu_sequential_width,
    // docs/levels.md).
    const double mean_width = static_cast<double>(t.rows) / static_cast<double>(std::max<level_t>(1, sets.count()));
    run.cpu_sequential = mean_width < tuning::real("levels.cpu_sequential_width");
    for (long long r = 0; r < repeat; ++r) {
        const auto t1 = std::chrono::steady_clock::now();
        if (run.cpu_sequential) triangular_solve_sequential(t, part, b, run.x);
        else triangular_solve(t, part, sets, b, run.x, pool);
        run.solve_ms.push_back(ms_since(t1));
    }
    run.widths = widths_of(sets);
    run.threads = pool.size();
    return run;
}

std::string run_loop_on_cpu(const indirect_loop& loop, const body_spec& body, std::vector<double>& a, bool sequential,
                            bool pipelined, unsigned threads, std::vector<std::int64_t>& widths) {
    char times[240];
    if (sequential) {
        const auto t0 = std::chrono::steady_clock::now();
        run_sequential(loop, body, a);
        std::snprintf(times, sizeof times, "sequential loop %.3f ms (CPU, 1 thread)", ms_since(t0));
    } else if (!pipelined || threads == 1) {
        // The inspector, then the executor (the default: the pipeline was slower on 16 cores, README).
        thread_pool pool(threads);
        const auto t0 = std::chrono::steady_clock::now();
        const level_sets sets = group_by_level(loop_levels(loop));
        const double inspect_ms = ms_since(t0);
        const auto t1 = std::chrono::steady_clock::now();
        run_by_levels(loop, body, sets, a, pool);
        const double run_ms = ms_since(t1);
        widths = widths_of(sets);
        std::snprintf(times, sizeof times, "inspector %.3f ms, executor %.3f ms, total %.3f ms (CPU, %u thread%s)",
                      inspect_ms, run_ms, inspect_ms + run_ms, pool.size(), pool.size() == 1 ? "" : "s");
    } else {
        // The inspector's thread takes one of the threads asked for (all of them when -t is 0), the pool the rest.
        const unsigned all = threads ? threads : std::max(2u, std::thread::hardware_concurrency());
        thread_pool pool(std::max(1u, all - 1));
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<level_t> level = run_pipelined(loop, body, a, pool);
        const double total_ms = ms_since(t0);
        widths = widths_of(group_by_level(std::move(level)));
        std::snprintf(times, sizeof times,
                      "inspector and executor pipelined, total %.3f ms (CPU, %u thread%s and the inspector's)", total_ms,
                      pool.size(), pool.size() == 1 ? "" : "s");
    }
    return times;
}

namespace {

// A coefficient as the double nearest its decimal (or hexadecimal) text: strtod rounds once, where a detour through
// long double could round twice.
double parse_coefficient(const std::string& text) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v))
        throw usage_error("--coefficients: '" + text + "' is not a finite number");
    return v;
}

}  // namespace

body_spec body_of(const std::string& name, const std::vector<std::string>& coefficients, int reads) {
    body_spec body;
    body.kind = parse_body(name).value();
    for (const std::string& c : coefficients) body.coefficients.push_back(parse_coefficient(c));
    if (const std::string why = body_mismatch(body, reads); !why.empty()) throw usage_error(why);
    return body;
}

}  // namespace swgpu::levels
