// What the numerical commands write and read besides their arrays (io/arrays/reports.hpp).
#include "io/arrays/reports.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "core/error.hpp"
#include "core/numerics/finite.hpp"
#include "core/tuning.hpp"
#include "io/arrays/npy.hpp"
#include "core/numerics/sat.hpp"

namespace swgpu::io {

std::vector<double> read_vector(const std::string& path, std::int64_t n) {
    const sat::array a = read_npy(path);
    if (a.lanes != 1 || (a.rows != 1 && a.cols != 1))
        throw input_error(path, "expected a vector ((n,), (n, 1) or (1, n)), not an array of shape (" +
                                    std::to_string(a.rows) + ", " + std::to_string(a.cols) + ", " + std::to_string(a.lanes) + ")");
    if (n >= 0 && static_cast<std::int64_t>(a.elements()) != n)
        throw input_error(path, "has " + std::to_string(a.elements()) + " elements; the matrix has " + std::to_string(n) + " rows");
    sat::check_finite(a, path);
    std::vector<double> v(a.elements());
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = a.value(k);
    return v;
}

void write_vector(output_file& out, std::span<const double> x) {
    out.write(npy_header(sat::dtype::f64, "(" + std::to_string(x.size()) + ",)"));
    out.write(std::string_view(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(double)));
}

// A header line of names first, then the widths, then what they describe as a '#' comment at the end: a comment
// before the names made np.genfromtxt(F, names=True) take it for the names and np.loadtxt(F, skiprows=1) fail.
void write_stats(output_file& out, const std::vector<std::int64_t>& widths, std::int64_t n, const std::string& what) {
    std::string s = "level\twidth\n";
    for (std::size_t l = 0; l < widths.size(); ++l) s += std::to_string(l + 1) + '\t' + std::to_string(widths[l]) + '\n';
    s += "# " + what + ": " + std::to_string(n) + " iterations, " + std::to_string(widths.size()) + " levels\n";
    out.write(s);
}

void write_histogram_line(output_file& out, const sat::rect& r, std::span<const std::uint32_t> counts) {
    std::string line = std::to_string(r.top) + '\t' + std::to_string(r.left) + '\t' + std::to_string(r.bottom) + '\t' +
                       std::to_string(r.right);
    for (const std::uint32_t c : counts) line += '\t' + std::to_string(c);
    line += '\n';
    out.write(line);
}

void write_query_line(output_file& out, const sat::rect& r, std::span<const std::uint64_t> words, sat::dtype table) {
    const index_t area = r.area();
    std::string line = std::to_string(r.top) + '\t' + std::to_string(r.left) + '\t' + std::to_string(r.bottom) + '\t' +
                       std::to_string(r.right) + '\t' + std::to_string(area);
    char buf[64];
    for (const std::uint64_t w : words) {
        double sum_d;
        if (table == sat::dtype::u64) {
            line += '\t' + std::to_string(w);
            sum_d = static_cast<double>(w);
        } else if (table == sat::dtype::i64) {
            const auto v = static_cast<std::int64_t>(w);
            line += '\t' + std::to_string(v);
            sum_d = static_cast<double>(v);
        } else {
            std::memcpy(&sum_d, &w, sizeof sum_d);
            std::snprintf(buf, sizeof buf, "%.17g", sum_d);
            line += '\t';
            line += buf;
        }
        std::snprintf(buf, sizeof buf, "%.17g", sum_d / static_cast<double>(area));
        line += '\t';
        line += buf;
    }
    line += '\n';
    out.write(line);
}

// The residual against sweeps (left) and against seconds (right), log scale, each panel with its axis labels and the
// tolerance as a dashed line.
std::string history_svg(const sor::solution& s, int per, double tol, const std::string& title) {
    const double w = 360, h = 260, margin = 60;
    double lo = tol, hi = tol, t_max = 0;
    for (const auto& e : s.history) {
        if (e.residual > 0) lo = std::min(lo, e.residual), hi = std::max(hi, e.residual);
        t_max = std::max(t_max, e.seconds);
    }
    const double l_lo = std::floor(std::log10(lo)), l_hi = std::max(std::ceil(std::log10(hi)), l_lo + 1);
    const long long sweeps = std::max<long long>(1, s.history.empty() ? 1 : static_cast<long long>(s.history.back().iteration) * per);
    const auto y_of = [&](double l) { return margin + h - (l - l_lo) / (l_hi - l_lo) * h; };
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(int(2 * w + 3 * margin)) +
                      "\" height=\"" + std::to_string(int(h + 2 * margin)) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    svg += "<text x=\"" + std::to_string(int(margin)) + "\" y=\"20\">" + title + "</text>\n";
    char buf[200];
    for (int panel = 0; panel < 2; ++panel) {
        const double x0 = margin + panel * (w + margin), y0 = margin;
        std::snprintf(buf, sizeof buf, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"black\"/>\n", x0, y0, w, h);
        svg += buf;
        std::snprintf(buf, sizeof buf, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n", x0 + w / 2, y0 + h + 30,
                      panel == 0 ? "sweeps" : "seconds");
        svg += buf;
        std::snprintf(buf, sizeof buf,
                      "<text class=\"ylabel\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" transform=\"rotate(-90 %.0f %.0f)\">"
                      "relative residual ||b - Au|| / ||b||</text>\n",
                      x0 - 42, y0 + h / 2, x0 - 42, y0 + h / 2);
        svg += buf;
        for (double l = l_lo; l <= l_hi; l += 1) {
            std::snprintf(buf, sizeof buf, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">1e%d</text>\n", x0 - 4, y_of(l) + 4, int(l));
            svg += buf;
        }
        std::snprintf(buf, sizeof buf, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>\n", x0 + w, y0 + h + 15,
                      panel == 0 ? std::to_string(sweeps).c_str() : (std::to_string(t_max).substr(0, 6) + " s").c_str());
        svg += buf;
        const double ty = y_of(std::log10(tol));
        std::snprintf(buf, sizeof buf,
                      "<line class=\"tol\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"firebrick\" "
                      "stroke-dasharray=\"6 4\"/>\n<text x=\"%.0f\" y=\"%.0f\" fill=\"firebrick\">--tol %.3g</text>\n",
                      x0, ty, x0 + w, ty, x0 + 4, ty - 4, tol);
        svg += buf;
        svg += "<polyline fill=\"none\" stroke=\"steelblue\" points=\"";
        for (const auto& e : s.history) {
            if (!(e.residual > 0)) continue;
            const double fx = panel == 0 ? double(e.iteration) * per / double(sweeps) : (t_max > 0 ? e.seconds / t_max : 0);
            std::snprintf(buf, sizeof buf, "%.1f,%.1f ", x0 + fx * w, y_of(std::log10(e.residual)));
            svg += buf;
        }
        svg += "\"/>\n";
    }
    return svg + "</svg>\n";
}

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

std::string levels_summary(std::int64_t n, const std::vector<std::int64_t>& widths) {
    std::int64_t top = 0;
    for (const auto w : widths) top = std::max(top, w);
    char buf[160];
    std::snprintf(buf, sizeof buf, "%lld iterations, %zu levels (widest %lld, mean %.1f)", static_cast<long long>(n),
                  widths.size(), static_cast<long long>(top),
                  widths.empty() ? 0.0 : static_cast<double>(n) / static_cast<double>(widths.size()));
    return buf;
}

std::string solve_report(const std::string& matrix, bool upper, const levels::csr_matrix& t,
                         const levels::solve_run& run, bool sequential, long long repeat, const std::string& schedule) {
    const std::string head = std::string("swgpu: levels: ") + (upper ? "upper" : "lower") + " triangle of " + matrix +
                             ", " + std::to_string(t.nonzeros()) + " nonzeros, ";
    if (sequential) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "sequential substitution %.3f ms (median of %lld, CPU, 1 thread)\n",
                      median(run.solve_ms), repeat);
        return head + std::to_string(t.rows) + " rows; " + buf;
    }
    if (run.on_gpu) {
        char buf[240];
        if (repeat > 1)
            std::snprintf(buf, sizeof buf,
                          "; analysis with the first solve %.3f ms, solve %.3f ms (median of %lld more, GPU %s)\n",
                          run.analysis_ms, median(run.solve_ms), repeat - 1, schedule.c_str());
        else
            std::snprintf(buf, sizeof buf, "; analysis with the solve %.3f ms (GPU)\n", run.analysis_ms);
        return head + levels_summary(t.rows, run.widths) + buf;
    }
    char buf[400];
    char how[160];
    if (run.cpu_sequential)
        std::snprintf(how, sizeof how, "CPU, sequential substitution: %.1f rows per level, below levels.cpu_sequential_width %g",
                      static_cast<double>(t.rows) / static_cast<double>(std::max<std::size_t>(1, run.widths.size())),
                      tuning::real("levels.cpu_sequential_width"));
    else
        std::snprintf(how, sizeof how, "CPU, by levels on %u thread%s", run.threads, run.threads == 1 ? "" : "s");
    std::snprintf(buf, sizeof buf, "; analysis %.3f ms, solve %.3f ms (median of %lld, %s)\n", run.analysis_ms,
                  median(run.solve_ms), repeat, how);
    return head + levels_summary(t.rows, run.widths) + buf;
}

std::vector<double> read_square_f64(const std::string& path, sor::index_t& n) {
    const sat::array a = read_npy(path);
    if (a.type != sat::dtype::f64) throw input_error(path, std::string("must be float64, not ") + sat::name_of(a.type));
    if (a.lanes != 1 || a.rows != a.cols)
        throw input_error(path, "must be a square (N, N) array (got " + std::to_string(a.rows) + " x " +
                                    std::to_string(a.cols) + (a.lanes != 1 ? " x " + std::to_string(a.lanes) : "") + ")");
    sat::check_finite(a, path);
    n = a.rows;
    return std::vector<double>(a.data<double>(), a.data<double>() + a.elements());
}

void write_square_f64(output_file& out, const std::vector<double>& u, sor::index_t n) {
    sat::array a(sat::dtype::f64, n, n, 1);
    std::copy(u.begin(), u.end(), a.data<double>());
    write_npy(a, out);
}

void write_query_lines(output_file& out, std::span<const sat::rect> rects, std::span<const std::uint64_t> words,
                       std::size_t lanes, sat::dtype table) {
    for (std::size_t k = 0; k < rects.size(); ++k) write_query_line(out, rects[k], words.subspan(k * lanes, lanes), table);
}

void write_histogram_lines(output_file& out, std::span<const sat::rect> rects, std::span<const std::uint32_t> counts,
                           std::size_t bins) {
    for (std::size_t k = 0; k < rects.size(); ++k) write_histogram_line(out, rects[k], counts.subspan(k * bins, bins));
}

std::string sor_summary(sor::index_t n, const sor::options& o, const sor::solution& s, bool gpu, unsigned cpu_threads) {
    const auto& last = s.history.back();
    const int per = sor::sweeps_per_iteration(o);
    const long long last_sweep = static_cast<long long>(last.iteration) * per;
    std::string extra;
    if (o.m == sor::method::mlssor) {
        extra = " layers " + std::to_string(o.layers);
        if (o.sub_rows > 0) extra += " subdomain " + std::to_string(o.sub_rows) + "x" + std::to_string(o.sub_cols);
        if (o.forward_only) extra += " forward-only";
    }
    if (!gpu) extra += " threads " + std::to_string(cpu_threads);
    char buf[400];
    std::snprintf(buf, sizeof buf, "method %s omega %.6f n %lld sweeps %lld iterations %d residual %.6e %s time %.6f s",
                  sor::method_name(o.m), o.omega, static_cast<long long>(n), last_sweep, last.iteration, last.residual,
                  s.converged ? "converged" : "not-converged", last.seconds);
    return buf + extra + "\n";
}

std::string sor_history_tsv(const sor::solution& s, int per) {
    std::string text = "sweep\titeration\tresidual\tseconds\n";
    char buf[128];
    for (const auto& e : s.history) {
        std::snprintf(buf, sizeof buf, "%lld\t%d\t%.9e\t%.6f\n", static_cast<long long>(e.iteration) * per, e.iteration,
                      e.residual, e.seconds);
        text += buf;
    }
    return text;
}

std::string sor_not_converged(const sor::solution& s, const sor::options& o) {
    const auto& last = s.history.back();
    const int per = sor::sweeps_per_iteration(o);
    const long long last_sweep = static_cast<long long>(last.iteration) * per;
    char buf[320];
    if (s.reason == sor::stop_reason::stagnated) {
        double best = last.residual;
        long long at = last_sweep;
        for (const auto& e : s.history)
            if (e.residual < best) best = e.residual, at = static_cast<long long>(e.iteration) * per;
        std::snprintf(buf, sizeof buf,
                      "did not converge: the relative residual stagnated above --tol %.3g at sweep %lld (smallest "
                      "%.3e, at sweep %lld; --stagnation %d sweeps without a 0.1 %% fall); a tolerance below the "
                      "round-off floor cannot be reached",
                      o.tol, last_sweep, best, at, o.stagnation);
    } else {
        std::snprintf(buf, sizeof buf,
                      "did not converge: the relative residual %.3e is above --tol %.3g after %lld sweeps (--max-sweeps "
                      "%d); raise --max-sweeps or --tol",
                      last.residual, o.tol, last_sweep, o.max_sweeps);
    }
    return buf;
}

}  // namespace swgpu::io
