#include "io/align/dotplot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string_view>

#include "io/output_file.hpp"

namespace swgpu::io {

namespace {

// Plot geometry in pixels. The longer sequence gets `plot_side`; the other axis is scaled alike (so diagonals are at
// 45 degrees) unless that would make it thinner than `min_side`, as a read against a chromosome would.
constexpr double plot_side = 800, min_side = 300;
constexpr double margin_left = 90, margin_top = 70, margin_right = 40, margin_bottom = 50;
constexpr const char* plus_colour = "#1f77b4";
constexpr const char* minus_colour = "#d62728";
// A hit keeps at least this many points however many hits share the file's budget.
constexpr std::size_t min_points_per_hit = 32;

std::string xml_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string number(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// A tick every 1, 2 or 5 times a power of ten, about every 100 pixels, at least one residue.
std::int64_t tick_step(std::int64_t length, double pixels) {
    const double raw = static_cast<double>(length) / std::max(2.0, pixels / 100.0);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * magnitude;
    for (const double m : {1.0, 2.0, 5.0})
        if (m * magnitude >= raw) {
            step = m * magnitude;
            break;
        }
    return std::max<std::int64_t>(1, std::llround(step));
}

// Tick labels short enough for a 100-pixel gap: plain below 100,000, else in k, M or G of the axis' length.
std::string tick_text(std::int64_t v, std::int64_t length) {
    struct scale {
        std::int64_t from;
        double unit;
        const char* suffix;
    };
    constexpr scale scales[] = {{1'000'000'000, 1e9, "G"}, {1'000'000, 1e6, "M"}, {100'000, 1e3, "k"}, {0, 1, ""}};
    const auto* sc =
        std::find_if(std::begin(scales), std::end(scales), [&](const scale& x) { return length >= x.from; });
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g%s", static_cast<double>(v) / sc->unit, sc->suffix);
    return buf;
}

// "subject: chr1 (248,956,422 bp)"; with several sequences the first three and how many more, or where that is longer
// than the axis (about `pixels` / 7.5 characters of the 13-pixel font), how many and the longest; cut short with
// "..." when even that does not fit.
std::string axis_label(const char* what, const std::vector<std::pair<std::string, std::size_t>>& seqs,
                       const char* unit, double pixels) {
    auto describe = [&](const std::pair<std::string, std::size_t>& seq) {
        return seq.first + " (" + thousands(seq.second) + " " + unit + ")";
    };
    std::string s = std::string(what) + (seqs.size() == 1 ? ": " : "s: ");
    for (std::size_t k = 0; k < seqs.size() && k < 3; ++k) s += (k ? ", " : "") + describe(seqs[k]);
    if (seqs.size() > 3) s += " and " + std::to_string(seqs.size() - 3) + " more";
    if (seqs.empty()) s += "none";
    const auto fits = static_cast<std::size_t>(std::max(20.0, pixels / 7.5));
    if (s.size() > fits && seqs.size() > 1) {
        const auto longest = std::max_element(seqs.begin(), seqs.end(),
                                              [](const auto& a, const auto& b) { return a.second < b.second; });
        s = std::to_string(seqs.size()) + " " + what + "s, the longest " + describe(*longest);
    }
    if (s.size() > fits) {
        std::size_t cut = fits - 3;
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 letter
        s = s.substr(0, cut) + "...";
    }
    return xml_escape(s);
}

}  // namespace

std::vector<path_point> alignment_path(const printed_hit& hit, std::size_t query_length, std::size_t max_points) {
    const auto& a = hit.aln;
    std::vector<path_point> path;
    if (a.ops.empty()) return path;
    max_points = std::max<std::size_t>(max_points, 2);
    const auto L = static_cast<std::int64_t>(query_length);
    const bool minus = hit.str == strand::minus;
    auto add = [&](std::int64_t s, std::int64_t q) { path.push_back({s, minus ? L - q : q}); };
    std::int64_t s = a.subject_begin, q = a.query_begin;
    add(s, q);
    if (a.ops.size() + 1 <= max_points) {  // every corner
        path.reserve(a.ops.size() + 1);
        for (const auto& o : a.ops) {
            if (o.op != 'I') s += o.len;
            if (o.op != 'D') q += o.len;
            add(s, q);
        }
        return path;
    }
    // A point every k columns: columns / k <= max_points - 2 samples after the start, plus the end when the last
    // sample falls short of it. Sampled arithmetically per operation, so a path of 10^7 columns costs its points only.
    std::int64_t columns = 0;
    for (const auto& o : a.ops) columns += o.len;
    const auto room = static_cast<std::int64_t>(std::max<std::size_t>(max_points - 2, 1));
    const std::int64_t k = (columns + room - 1) / room;
    path.reserve(static_cast<std::size_t>(columns / k) + 2);
    std::int64_t walked = 0, next = k;
    for (const auto& o : a.ops) {
        const std::int64_t ds = o.op != 'I', dq = o.op != 'D';
        for (; next <= walked + o.len; next += k) add(s + ds * (next - walked), q + dq * (next - walked));
        s += ds * o.len;
        q += dq * o.len;
        walked += o.len;
    }
    if (columns % k != 0) add(s, q);
    return path;
}

void write_dotplot(const std::string& path, const results_view& results) {
    output_file out(path);
    write_dotplot(results, out);
    out.commit();
}

namespace {

struct drawn {
    std::size_t query;
    const printed_hit* hit;
};

// The plot's geometry: the hits drawn (with an alignment), the queries and subjects they involve, the longest of each,
// and the scales from residues to the plot's pixels.
struct plot_frame {
    std::vector<drawn> hits;
    std::set<std::size_t> queries;     // input order
    std::set<std::uint32_t> subjects;  // database order
    std::int64_t max_q = 0, max_s = 0;
    double pw = 0, ph = 0, sx = 0, sy = 0, width = 0, height = 0, left = 0, top = 0, right = 0, bottom = 0;

    explicit plot_frame(const results_view& r) {
        for (std::size_t q = 0; q < r.queries.size(); ++q)
            for (const auto& h : r.hits[q]) {
                if (h.aln.ops.empty()) continue;
                hits.push_back({q, &h});
                queries.insert(q);
                subjects.insert(h.subject);
                max_q = std::max<std::int64_t>(max_q, static_cast<std::int64_t>(r.queries.plus.length(q)));
                const auto slen = r.scan.subjects.at(h.subject).residues.size();
                max_s = std::max<std::int64_t>(max_s, static_cast<std::int64_t>(slen));
            }
        max_q = std::max<std::int64_t>(max_q, 1);
        max_s = std::max<std::int64_t>(max_s, 1);
        const double longest = static_cast<double>(std::max(max_q, max_s));
        pw = std::max(min_side, plot_side * static_cast<double>(max_s) / longest);
        ph = std::max(min_side, plot_side * static_cast<double>(max_q) / longest);
        sx = pw / static_cast<double>(max_s);
        sy = ph / static_cast<double>(max_q);
        width = margin_left + pw + margin_right;
        height = margin_top + ph + margin_bottom;
        left = margin_left;
        top = margin_top;
        right = left + pw;
        bottom = top + ph;
    }
    std::string px(std::int64_t s) const { return number(left + static_cast<double>(s) * sx, 2); }
    std::string py(std::int64_t q) const { return number(top + static_cast<double>(q) * sy, 2); }
};

std::string svg_line(const std::string& x1, const std::string& y1, const std::string& x2, const std::string& y2) {
    return "<line x1=\"" + x1 + "\" y1=\"" + y1 + "\" x2=\"" + x2 + "\" y2=\"" + y2 + "\"/>\n";
}

// The SVG's opening, the axis labels (names and lengths), grid lines and ticks: subjects along the top, queries down
// the left side.
std::string plot_axes(const results_view& r, const plot_frame& f, const char* unit) {
    const std::string w = number(std::ceil(f.width), 0), h = number(std::ceil(f.height), 0);
    std::string text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                       w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h +
                       "\" font-family=\"sans-serif\" font-size=\"11\">\n<title>swgpu dot plot: " +
                       std::to_string(f.hits.size()) + " hits</title>\n" +
                       "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    std::vector<std::pair<std::string, std::size_t>> qseqs, sseqs;
    for (const auto q : f.queries) qseqs.emplace_back(r.queries.plus.names[q], r.queries.plus.length(q));
    for (const auto s : f.subjects) {
        const auto& rec = r.scan.subjects.at(s);
        sseqs.emplace_back(rec.name, rec.residues.size());
    }
    text += "<text x=\"" + number(f.left + f.pw / 2, 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"13\">" +
            axis_label("subject", sseqs, unit, f.pw) + "</text>\n";
    text += "<text transform=\"translate(18 " + number(f.top + f.ph / 2, 2) +
            ") rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">" + axis_label("query", qseqs, unit, f.ph) +
            "</text>\n";
    text += "<g stroke=\"#e0e0e0\" stroke-width=\"0.5\">\n";
    std::string ticks = "<g stroke=\"black\" stroke-width=\"1\">\n", labels = "<g fill=\"black\">\n";
    const std::int64_t xstep = tick_step(f.max_s, f.pw), ystep = tick_step(f.max_q, f.ph);
    for (std::int64_t v = 0; v <= f.max_s; v += xstep) {
        const std::string x = f.px(v);
        text += svg_line(x, number(f.top, 2), x, number(f.bottom, 2));
        ticks += svg_line(x, number(f.top - 5, 2), x, number(f.top, 2));
        labels += "<text x=\"" + x + "\" y=\"" + number(f.top - 9, 2) + "\" text-anchor=\"middle\">" +
                  tick_text(v, f.max_s) + "</text>\n";
    }
    for (std::int64_t v = 0; v <= f.max_q; v += ystep) {
        const std::string y = f.py(v);
        text += svg_line(number(f.left, 2), y, number(f.right, 2), y);
        ticks += svg_line(number(f.left - 5, 2), y, number(f.left, 2), y);
        labels += "<text x=\"" + number(f.left - 8, 2) + "\" y=\"" + y + "\" dy=\"0.35em\" text-anchor=\"end\">" +
                  tick_text(v, f.max_q) + "</text>\n";
    }
    text += "</g>\n" + ticks + "</g>\n" + labels + "</g>\n";
    if (f.hits.empty())
        text += "<text x=\"" + number(f.left + f.pw / 2, 2) + "\" y=\"" + number(f.top + f.ph / 2, 2) +
                "\" text-anchor=\"middle\">no hits</text>\n";
    return text;
}

// One hit's polyline of at most `budget` points, with its title (names, score, strand, coordinates).
std::string hit_polyline(const results_view& r, const plot_frame& f, const drawn& d, std::size_t budget) {
    const bool dna = r.sc.type == seq_type::dna;
    const std::size_t qlen = r.queries.plus.length(d.query);
    const auto& subject = r.scan.subjects.at(d.hit->subject);
    const auto co = blast_view(*d.hit, qlen);
    const bool minus = dna && d.hit->str == strand::minus;
    std::string text = "<polyline stroke=\"" + std::string(minus ? minus_colour : plus_colour) + "\" points=\"";
    bool first = true;
    for (const auto& p : alignment_path(*d.hit, qlen, budget)) {
        if (!first) text += ' ';
        first = false;
        text += f.px(p.subject) + ',' + f.py(p.query);
    }
    text += "\"><title>" + xml_escape(r.queries.plus.names[d.query] + " vs " + subject.name) + ", score " +
            std::to_string(d.hit->score) + (dna ? (minus ? ", minus strand" : ", plus strand") : "") + ", query " +
            std::to_string(co.qstart) + "-" + std::to_string(co.qend) + ", subject " + std::to_string(co.sstart) +
            "-" + std::to_string(co.send) + "</title></polyline>\n";
    return text;
}

// The frame around the plot, the strands' legend (DNA) and the SVG's end.
std::string plot_closing(const plot_frame& f, bool dna) {
    std::string text = "<rect x=\"" + number(f.left, 2) + "\" y=\"" + number(f.top, 2) + "\" width=\"" +
                       number(f.pw, 2) + "\" height=\"" + number(f.ph, 2) + "\" fill=\"none\" stroke=\"black\"/>\n";
    if (dna) {  // legend: which colour is which strand
        const std::string y = number(f.bottom + 30, 2);
        const double left = f.left;
        text += "<g stroke-width=\"2\">\n<line x1=\"" + number(left, 2) + "\" y1=\"" + y + "\" x2=\"" +
                number(left + 24, 2) + "\" y2=\"" + y + "\" stroke=\"" + plus_colour + "\"/>\n<line x1=\"" +
                number(left + 130, 2) + "\" y1=\"" + y + "\" x2=\"" + number(left + 154, 2) + "\" y2=\"" + y +
                "\" stroke=\"" + minus_colour + "\"/>\n</g>\n<text x=\"" + number(left + 30, 2) + "\" y=\"" + y +
                "\" dy=\"0.35em\">plus strand</text>\n<text x=\"" + number(left + 160, 2) + "\" y=\"" + y +
                "\" dy=\"0.35em\">minus strand</text>\n";
    }
    return text + "</svg>\n";
}

}  // namespace

void write_dotplot(const results_view& r, text_sink& out) {
    const bool dna = r.sc.type == seq_type::dna;
    const plot_frame f(r);
    out.write(plot_axes(r, f, dna ? "bp" : "aa"));
    // One polyline per hit; the file's point budget shared among the hits.
    const std::size_t budget = std::clamp(dotplot_max_points / std::max<std::size_t>(f.hits.size(), 1),
                                          min_points_per_hit, dotplot_max_points_per_hit);
    out.write("<g fill=\"none\" stroke-width=\"1.5\" stroke-linejoin=\"round\" stroke-linecap=\"round\">\n");
    for (const auto& d : f.hits) out.write(hit_polyline(r, f, d, budget));
    out.write("</g>\n");
    out.write(plot_closing(f, dna));
}

}  // namespace swgpu::io
