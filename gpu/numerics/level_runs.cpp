#include "gpu/numerics/level_runs.hpp"

#include <chrono>
#include <cstdio>

#include "gpu/numerics/levels.hpp"

namespace swgpu::gpu {

levels::solve_run solve_on_gpu(const levels::csr_matrix& t, levels::triangle part, const std::vector<double>& b,
                               long long repeat, const std::string& schedule) {
    solve_schedule sched = solve_schedule::syncfree;
    for (const solve_schedule s : {solve_schedule::level_p2p, solve_schedule::level_sync, solve_schedule::level_grid,
                                   solve_schedule::syncfree_by_level})
        if (schedule == solve_schedule_name(s)) sched = s;
    levels::solve_run run;
    triangular_solver solver(t, part, b);
    run.analysis_ms = solver.analysis_ms();
    run.x = solver.first_solution();
    for (long long r = 1; r < repeat; ++r) {
        float ms = 0;
        run.x = solver.solve(b, sched, &ms);
        run.solve_ms.push_back(ms);
    }
    run.widths = solver.widths();
    run.on_gpu = true;
    return run;
}

std::string run_loop_on_gpu(const levels::indirect_loop& loop, const levels::body_spec& body, std::vector<double>& a,
                            bool keep_levels, std::vector<std::int64_t>& widths) {
    char times[240];
    loop_report rep;
    const auto t0 = std::chrono::steady_clock::now();
    a = run_loop(loop, body, a, &rep, keep_levels);
    const double wall = levels::ms_since(t0);
    if (!rep.levels.empty()) widths = levels::widths_of(levels::group_by_level(std::move(rep.levels)));
    std::snprintf(times, sizeof times,
                  "inspector %.3f ms, inspector + executor %.3f ms, total %.3f ms, with transfers %.3f ms (GPU; "
                  "%.3f ms with host conversions)",
                  rep.inspect_ms, rep.run_ms, rep.inspect_ms + rep.run_ms,
                  rep.upload_ms + rep.inspect_ms + rep.run_ms + rep.download_ms, wall);
    return times;
}

}  // namespace swgpu::gpu
