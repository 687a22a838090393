// What the numerical commands write and read besides their arrays (io/arrays/reports.hpp).
#include "io/arrays/reports.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "core/error.hpp"
#include "core/numerics/finite.hpp"
#include "io/arrays/npy.hpp"

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

}  // namespace swgpu::io
