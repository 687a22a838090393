// gpu_row_sync vs gpu_tiled_p2p vs the hybrid over shapes (the paper's Fig. 10), and the fit of the hybrid switch.
//
//   bench_schedules [--fit FILE] [--reps 3] [--cells-log2 30] [--extra-cells-log2 26] [--problems sw,plus_times]
//
// Problems: "sw" = Smith-Waterman-Gotoh through the engine ((max,+), 32-bit, BLOSUM62 11/1, random proteins);
// "plus_times" = the synthetic (+,·) fp32 problem of gpu/engine/synthetic_problems.hpp (hashed inputs, no per-cell output).
// Shapes: rows × cols = 2^cells-log2 with rows = 2^8 .. 2^15, plus (for the fit only) the same at 2^extra-cells-log2.
// Every schedule configuration (row_sync with each barrier, tiled_p2p with each tuning entry) is timed on the device
// (CUDA events around the executor; median of --reps runs after a warm-up; a configuration whose warm-up is over 2 s
// or over 4× the best warm-up at that shape is timed by its warm-up alone). Then the switch is fitted per problem class
// (and over all), written to FILE as data/hybrid_switch.tsv expects, installed, and the hybrid is timed at every shape
// against the better pure schedule.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/align/scoring.hpp"
#include "gpu/engine/engine.hpp"
#include "gpu/gpu.hpp"
#include "gpu/engine/hybrid.hpp"
#include "gpu/engine/synthetic_problems.hpp"
#include "tests/gpu/engine/sw_on_engine.hpp"

namespace {

using namespace swgpu;
using gpu::schedule;
using gpu::schedule_choice;

const char* arg_str(int argc, char** argv, const char* name, const char* fallback) {
    for (int k = 1; k + 1 < argc; ++k)
        if (std::strcmp(argv[k], name) == 0) return argv[k + 1];
    return fallback;
}

double median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

struct config {
    std::string name;
    gpu::hybrid_candidate candidate;  // its schedule fields; the fit sets the coefficients
};

std::vector<config> pure_configs() {
    std::vector<config> c;
    for (auto b : {gpu::row_barrier::launch, gpu::row_barrier::grid}) {
        gpu::hybrid_candidate k;
        k.sched = schedule::row_sync;
        k.barrier = b;
        c.push_back({std::string("row_sync/") + gpu::row_barrier_name(b), k});
    }
    for (int e = 0; e < gpu::tiled_tuning_entries(); ++e) {
        gpu::hybrid_candidate k;
        k.sched = schedule::tiled_p2p;
        k.tiled_entry = e;
        c.push_back({"tiled_p2p/e" + std::to_string(e), k});
    }
    return c;
}

// Runs one problem at one shape with `choice`: the warm-up, then up to `reps` timed runs; returns the median ms and
// the schedule that ran.
using runner = std::function<gpu::run_report(std::int64_t rows, std::int64_t cols, const schedule_choice&, int repeats)>;

struct timing {
    double ms;
    gpu::run_report report;
};
// The warm-up run, then the median of `reps` runs, unless the warm-up alone shows the configuration is out of the
// race (over 2 s, or over 4× the best warm-up so far at this shape): then the warm-up is the measurement.
timing time_config(const runner& run, std::int64_t rows, std::int64_t cols, const schedule_choice& c, int reps,
                   double* best_warm = nullptr) {
    const auto warm = run(rows, cols, c, 1);
    const double w = warm.ms.front();
    if (best_warm) {
        const bool out_of_race = w > 2000.0 || (*best_warm > 0 && w > 4.0 * *best_warm);
        if (*best_warm <= 0 || w < *best_warm) *best_warm = w;
        if (out_of_race) return {w, warm};
    }
    auto r = run(rows, cols, c, reps);
    return {median(r.ms), r};
}

std::vector<std::uint8_t> random_protein(std::mt19937_64& rng, std::size_t n, const substitution_matrix& m) {
    static const char letters[] = "ARNDCQEGHILKMFPSTWYV";
    std::vector<std::uint8_t> s(n);
    for (auto& c : s) c = m.code(letters[rng() % 20]);
    return s;
}

}  // namespace

int main(int argc, char** argv) try {
    const char* fit_path = arg_str(argc, argv, "--fit", nullptr);
    const int reps = std::atoi(arg_str(argc, argv, "--reps", "3"));
    const int cells_log2 = std::atoi(arg_str(argc, argv, "--cells-log2", "30"));
    const int extra_log2 = std::atoi(arg_str(argc, argv, "--extra-cells-log2", "26"));
    const std::string problems = arg_str(argc, argv, "--problems", "sw,plus_times");
    const auto devs = gpu::devices();
    if (devs.empty()) {
        std::printf("no CUDA device: bench_schedules skipped\n");
        return 77;
    }
    const std::string arch = "sm_" + std::to_string(devs[0].compute_major) + std::to_string(devs[0].compute_minor);
    std::printf("# bench_schedules on %s (%s, %d SMs); median of %d runs; ms on the device per whole matrix\n",
                devs[0].name.c_str(), arch.c_str(), devs[0].multiprocessors, reps);

    const scoring sc{substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}};
    std::mt19937_64 rng(42);
    std::map<std::string, runner> runners;
    if (problems.find("sw") != std::string::npos) {
        // One pair of sequences per shape, made once.
        auto cache = std::make_shared<std::map<std::pair<std::int64_t, std::int64_t>,
                                               std::pair<std::vector<std::uint8_t>, std::vector<std::uint8_t>>>>();
        runners["sw"] = [&, cache](std::int64_t rows, std::int64_t cols, const schedule_choice& c, int repeats) {
            auto& seqs = (*cache)[{rows, cols}];
            if (seqs.first.empty()) {
                seqs.first = random_protein(rng, static_cast<std::size_t>(rows), sc.matrix);
                seqs.second = random_protein(rng, static_cast<std::size_t>(cols), sc.matrix);
            }
            return gpu::sw_score(seqs.first, seqs.second, sc, c, repeats).report;
        };
    }
    if (problems.find("plus_times") != std::string::npos) {
        runners["plus_times"] = [](std::int64_t rows, std::int64_t cols, const schedule_choice& c, int repeats) {
            gpu::synthetic_problem<plus_times<float>, false> p{};
            p.m = rows;
            p.n = cols;
            p.seed = 7;
            return gpu::run_synthetic(p, c, false, repeats).report;
        };
    }

    struct measured {
        std::string problem;
        std::int64_t rows, cols;
        bool main_shape;
        std::map<std::string, double> ms;  // per configuration
    };
    std::vector<measured> all;
    const auto configs = pure_configs();
    std::printf("%-11s %7s %9s %-16s %11s %9s\n", "problem", "rows", "cols", "schedule", "ms", "GCUPS");
    for (const auto& [name, run] : runners) {
        for (int total : {cells_log2, extra_log2}) {
            if (total <= 0) continue;
            for (int r = 8; r <= 15; ++r) {
                // The smaller total keeps the range of aspect ratios: rows shrink by half of the difference.
                const int row_log2 = total == cells_log2 ? r : std::max(1, r - (cells_log2 - total) / 2);
                const std::int64_t rows = std::int64_t(1) << row_log2;
                const std::int64_t cols = (std::int64_t(1) << total) / rows;
                measured m{name, rows, cols, total == cells_log2, {}};
                double best_warm = 0;
                for (const auto& c : configs) {
                    const timing t = time_config(run, rows, cols, c.candidate.choice(), reps, &best_warm);
                    m.ms[c.name] = t.ms;
                    std::printf("%-11s %7lld %9lld %-16s %11.3f %9.1f\n", name.c_str(), (long long)rows, (long long)cols,
                                c.name.c_str(), t.ms, double(rows) * double(cols) / t.ms / 1e6);
                    std::fflush(stdout);
                }
                all.push_back(m);
            }
        }
    }

    // Fit: one group of candidates per problem class, and one over all classes (device-specific and "*").
    std::map<std::string, double> worst_fit;
    auto fit_class = [&](const std::string& cls) {
        std::vector<gpu::hybrid_candidate> group;
        for (const auto& c : configs) group.push_back(c.candidate);
        std::vector<gpu::hybrid_sample> samples;
        for (const auto& m : all) {
            if (cls != "*" && m.problem != cls) continue;
            gpu::hybrid_sample s{m.rows, m.cols, {}};
            for (const auto& c : configs) s.ms.push_back(m.ms.at(c.name));
            samples.push_back(s);
        }
        const auto picked = gpu::fit_hybrid(group, samples);
        worst_fit[cls] = picked.empty() ? 0 : *std::max_element(picked.begin(), picked.end());
        for (auto& c : group) c.device = arch, c.problem_class = cls;
        return group;
    };
    gpu::hybrid_switch fitted;
    for (const auto& [name, run] : runners)
        for (const auto& c : fit_class(name)) fitted.candidates.push_back(c);
    for (const auto& c : fit_class("*")) {
        fitted.candidates.push_back(c);
        auto any = c;
        any.device = "*";
        fitted.candidates.push_back(any);
    }
    for (const auto& [cls, w] : worst_fit)
        std::printf("# fit %s: worst slowdown of the picked configuration over the fitted shapes = %.3f\n", cls.c_str(), w);
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    const std::string header =
        "# swgpu hybrid switch between the GPU schedules (gpu/engine/hybrid.hpp), a multinomial logistic model:\n"
        "#   score = c0 + c_size*size + c_aspect*aspect + c_aspect2*aspect^2, the highest-scoring candidate runs, with\n"
        "#   size = (log2(rows) + log2(cols) - 30) / 4, aspect = (log2(rows) - log2(cols)) / 8\n"
        "# Fitted by bench_schedules on " + devs[0].name + " (" + arch + "), " + date + ", shapes rows x cols = 2^" +
        std::to_string(cells_log2) + (extra_log2 > 0 ? " and 2^" + std::to_string(extra_log2) : std::string()) +
        " with rows 2^8..2^15 (scaled), median of " + std::to_string(reps) + " runs. Regenerate with\n"
        "#   bench_schedules --fit data/hybrid_switch.tsv\n";
    const std::string tsv = fitted.to_tsv(header);
    std::printf("\n%s", tsv.c_str());
    if (fit_path) {
        std::ofstream f(fit_path);
        f << tsv;
        if (!f) throw output_error(fit_path, "could not write the fitted switch");
        std::printf("# written to %s\n", fit_path);
    }
    gpu::install_hybrid_switch(fitted);

    // The hybrid against the better pure schedule, on the main shapes.
    std::printf("\n# hybrid vs the better pure schedule (target: hybrid within 5%% at every shape)\n");
    std::printf("%-11s %7s %9s %11s %11s %11s %-16s %9s\n", "problem", "rows", "cols", "row_sync", "tiled_p2p", "hybrid",
                "hybrid ran", "hyb/best");
    double worst = 0;
    std::vector<std::string> summary_lines;
    for (const auto& m : all) {
        if (!m.main_shape) continue;
        double best_row = 1e300, best_tiled = 1e300;
        for (const auto& [cfg, ms] : m.ms) {
            double& best = cfg.rfind("row_sync", 0) == 0 ? best_row : best_tiled;
            best = std::min(best, ms);
        }
        const timing h = time_config(runners.at(m.problem), m.rows, m.cols, schedule_choice{}, reps);
        const double ratio = h.ms / std::min(best_row, best_tiled);
        worst = std::max(worst, ratio);
        std::string ran = gpu::schedule_name(h.report.used);
        ran += h.report.used == schedule::row_sync ? std::string("/") + gpu::row_barrier_name(h.report.barrier)
                                                   : "/e" + std::to_string(h.report.tiled_entry);
        std::printf("%-11s %7lld %9lld %11.3f %11.3f %11.3f %-16s %9.3f\n", m.problem.c_str(), (long long)m.rows,
                    (long long)m.cols, best_row, best_tiled, h.ms, ran.c_str(), ratio);
        const double cells = double(m.rows) * double(m.cols);
        summary_lines.push_back("summary: " + m.problem + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols) +
                                " GCUPS row_sync " + std::to_string(int(cells / best_row / 1e6)) + " tiled " +
                                std::to_string(int(cells / best_tiled / 1e6)) + " hybrid " +
                                std::to_string(int(cells / h.ms / 1e6)) + " (" + ran + ")");
        std::fflush(stdout);
    }
    for (const auto& l : summary_lines) std::printf("%s\n", l.c_str());
    std::printf("summary: worst hybrid / better pure schedule over the 2^%d-cell shapes = %.3f (target <= 1.05 %s)\n",
                cells_log2, worst, worst <= 1.05 ? "met" : "NOT met");
    return 0;
} catch (const swgpu::error& e) {
    std::fprintf(stderr, "bench_schedules: error: %s\n", e.what());
    return static_cast<int>(e.code());
}
