#include "gpu/engine/hybrid.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "core/error.hpp"

namespace swgpu::gpu {

// The text of data/hybrid_switch.tsv, compiled in by gpu/CMakeLists.txt.
extern const std::string_view hybrid_switch_tsv;

namespace {

constexpr int features = 4;

std::array<double, features> shape_features(std::int64_t rows, std::int64_t cols) {
    const double r = std::log2(static_cast<double>(std::max<std::int64_t>(rows, 1)));
    const double c = std::log2(static_cast<double>(std::max<std::int64_t>(cols, 1)));
    const double size = (r + c - 30.0) / 4.0, aspect = (r - c) / 8.0;
    return {1.0, size, aspect, aspect * aspect};
}

std::vector<std::string> split_tabs(const std::string& line) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    for (;;) {
        const std::size_t tab = line.find('\t', pos);
        out.push_back(line.substr(pos, tab == std::string::npos ? std::string::npos : tab - pos));
        if (tab == std::string::npos) return out;
        pos = tab + 1;
    }
}

constexpr const char* columns = "device\tclass\tschedule\trow_barrier\ttiled_entry\ttile_rows\tc0\tc_size\tc_aspect\tc_aspect2";
constexpr std::size_t column_count = 10;

}  // namespace

double hybrid_candidate::score(std::int64_t rows, std::int64_t cols) const {
    const auto x = shape_features(rows, cols);
    return c0 * x[0] + c_size * x[1] + c_aspect * x[2] + c_aspect2 * x[3];
}

schedule_choice hybrid_candidate::choice() const {
    schedule_choice c;
    c.sched = sched;
    c.barrier = static_cast<int>(barrier);
    c.tiled_entry = tiled_entry;
    c.tile_rows = tile_rows;
    return c;
}

hybrid_switch hybrid_switch::parse(std::string_view tsv, const std::string& source) {
    hybrid_switch s;
    std::istringstream in{std::string(tsv)};
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (line.empty() || line[0] == '#' || line.rfind("device\t", 0) == 0) continue;  // comments, the header
        const auto f = split_tabs(line);
        const std::string where = source + ":" + std::to_string(number);
        if (f.size() != column_count)
            throw input_error(where, "expected " + std::to_string(column_count) + " tab-separated columns (" +
                                         std::string(columns) + "), found " + std::to_string(f.size()) +
                                         "; regenerate the file with bench_schedules --fit");
        hybrid_candidate c;
        try {
            c.device = f[0];
            c.problem_class = f[1];
            if (f[2] == "row_sync") c.sched = schedule::row_sync;
            else if (f[2] == "tiled_p2p") c.sched = schedule::tiled_p2p;
            else throw std::invalid_argument("schedule");
            if (f[3] == "launch") c.barrier = row_barrier::launch;
            else if (f[3] == "grid") c.barrier = row_barrier::grid;
            else throw std::invalid_argument("row_barrier");
            c.tiled_entry = std::stoi(f[4]);
            c.tile_rows = std::stoll(f[5]);
            c.c0 = std::stod(f[6]);
            c.c_size = std::stod(f[7]);
            c.c_aspect = std::stod(f[8]);
            c.c_aspect2 = std::stod(f[9]);
        } catch (const std::logic_error&) {
            throw input_error(where, "a number, schedule (row_sync|tiled_p2p) or row_barrier (launch|grid) could not "
                                     "be read; regenerate the file with bench_schedules --fit");
        }
        if (c.tiled_entry < 0 || c.tiled_entry >= tiled_tuning_entries())
            throw input_error(where, "tiled_entry " + std::to_string(c.tiled_entry) + " does not exist in this build");
        s.candidates.push_back(c);
    }
    return s;
}

std::string hybrid_switch::to_tsv(const std::string& header_comment) const {
    std::ostringstream out;
    out << header_comment << columns << "\n";
    out.precision(6);
    for (const auto& c : candidates)
        out << c.device << '\t' << c.problem_class << '\t' << schedule_name(c.sched) << '\t' << row_barrier_name(c.barrier)
            << '\t' << c.tiled_entry << '\t' << c.tile_rows << '\t' << c.c0 << '\t' << c.c_size << '\t' << c.c_aspect
            << '\t' << c.c_aspect2 << "\n";
    return out.str();
}

schedule_choice hybrid_switch::plan(const std::string& device, const std::string& problem_class, std::int64_t rows,
                                    std::int64_t cols, const schedule_choice& asked) const {
    // The most specific group: exact device beats "*", then exact class beats "*".
    int best_specificity = -1;
    for (const auto& c : candidates) {
        if ((c.device != device && c.device != "*") || (c.problem_class != problem_class && c.problem_class != "*"))
            continue;
        best_specificity = std::max(best_specificity, (c.device == device ? 2 : 0) + (c.problem_class == problem_class ? 1 : 0));
    }
    const hybrid_candidate* pick = nullptr;
    double best_score = 0;
    for (const auto& c : candidates) {
        if ((c.device != device && c.device != "*") || (c.problem_class != problem_class && c.problem_class != "*"))
            continue;
        if ((c.device == device ? 2 : 0) + (c.problem_class == problem_class ? 1 : 0) != best_specificity) continue;
        if (asked.sched != schedule::hybrid && c.sched != asked.sched) continue;  // the best tuning of the asked schedule
        const double sc = c.score(rows, cols);
        if (!pick || sc > best_score) pick = &c, best_score = sc;
    }
    schedule_choice planned{schedule::row_sync, static_cast<int>(row_barrier::launch), 0, 0, false};
    if (pick) planned = pick->choice();
    else if (asked.sched != schedule::hybrid) planned.sched = asked.sched;
    schedule_choice out = asked;
    if (out.sched == schedule::hybrid) out.sched = planned.sched;
    if (out.barrier < 0) out.barrier = planned.barrier;
    if (out.tiled_entry < 0) out.tiled_entry = planned.tiled_entry;
    if (out.tile_rows <= 0) out.tile_rows = planned.tile_rows;
    return out;
}

namespace {
std::mutex switch_mutex;
std::shared_ptr<const hybrid_switch>& switch_slot() {
    static std::shared_ptr<const hybrid_switch> s;
    return s;
}
}  // namespace

const hybrid_switch& active_hybrid_switch() {
    std::lock_guard lock(switch_mutex);
    auto& s = switch_slot();
    if (!s) s = std::make_shared<const hybrid_switch>(hybrid_switch::parse(hybrid_switch_tsv, "data/hybrid_switch.tsv"));
    return *s;
}

void install_hybrid_switch(hybrid_switch s) {
    std::lock_guard lock(switch_mutex);
    switch_slot() = std::make_shared<const hybrid_switch>(std::move(s));
}

std::vector<double> fit_hybrid(std::vector<hybrid_candidate>& configs, const std::vector<hybrid_sample>& samples) {
    // Multinomial logistic regression (convex, so the optimum does not depend on the start) against soft labels that
    // prefer the faster configurations: q_c ∝ exp(-κ·(r_c - 1)), r_c = ms_c / min(ms) the slowdown of configuration c
    // at that shape, κ = 30 (a configuration 5% slower gets a fifth of the weight of the fastest). Loss: mean over
    // shapes of -Σ_c q_c log p_c, p = softmax(θ_c · x), plus λ·|θ without intercepts|²; dLoss/dz_c = p_c - q_c.
    // Full-batch Adam from zero, a fixed number of steps: deterministic.
    const std::size_t k = configs.size();
    if (k == 0) return {};
    constexpr double kappa = 30.0, lambda = 1e-4, rate = 0.05, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    std::vector<std::array<double, features>> theta(k, std::array<double, features>{}), m1 = theta, m2 = theta;
    std::vector<std::array<double, features>> x;
    std::vector<std::vector<double>> slowdown, target;
    for (const auto& s : samples) {
        if (s.ms.size() != k) throw runtime_failure("fit_hybrid: a sample does not time every configuration");
        x.push_back(shape_features(s.rows, s.cols));
        const double best = *std::min_element(s.ms.begin(), s.ms.end());
        std::vector<double> r, q;
        double sum = 0;
        for (double t : s.ms) {
            r.push_back(t / best);
            q.push_back(std::exp(-kappa * (t / best - 1.0)));
            sum += q.back();
        }
        for (double& v : q) v /= sum;
        slowdown.push_back(r);
        target.push_back(q);
    }
    const double n = static_cast<double>(std::max<std::size_t>(samples.size(), 1));
    std::vector<double> z(k), p(k);
    for (int iter = 1; iter <= 20000; ++iter) {
        std::vector<std::array<double, features>> grad(k, std::array<double, features>{});
        for (std::size_t s = 0; s < samples.size(); ++s) {
            double zmax = -1e300;
            for (std::size_t c = 0; c < k; ++c) {
                z[c] = 0;
                for (int f = 0; f < features; ++f) z[c] += theta[c][f] * x[s][f];
                zmax = std::max(zmax, z[c]);
            }
            double sum = 0;
            for (std::size_t c = 0; c < k; ++c) sum += p[c] = std::exp(z[c] - zmax);
            for (std::size_t c = 0; c < k; ++c)
                for (int f = 0; f < features; ++f) grad[c][f] += (p[c] / sum - target[s][c]) * x[s][f] / n;
        }
        for (std::size_t c = 0; c < k; ++c)
            for (int f = 0; f < features; ++f) {
                const double g = grad[c][f] + (f > 0 ? 2 * lambda * theta[c][f] : 0.0);
                m1[c][f] = beta1 * m1[c][f] + (1 - beta1) * g;
                m2[c][f] = beta2 * m2[c][f] + (1 - beta2) * g * g;
                const double mh = m1[c][f] / (1 - std::pow(beta1, iter)), vh = m2[c][f] / (1 - std::pow(beta2, iter));
                theta[c][f] -= rate * mh / (std::sqrt(vh) + eps);
            }
    }
    for (std::size_t c = 0; c < k; ++c) {
        configs[c].c0 = theta[c][0];
        configs[c].c_size = theta[c][1];
        configs[c].c_aspect = theta[c][2];
        configs[c].c_aspect2 = theta[c][3];
    }
    std::vector<double> picked;
    for (std::size_t s = 0; s < samples.size(); ++s) {
        std::size_t best = 0;
        for (std::size_t c = 1; c < k; ++c)
            if (configs[c].score(samples[s].rows, samples[s].cols) > configs[best].score(samples[s].rows, samples[s].cols))
                best = c;
        picked.push_back(slowdown[s][best]);
    }
    return picked;
}

}  // namespace swgpu::gpu
