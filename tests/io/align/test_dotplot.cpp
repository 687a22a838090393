// The dot plot (io/align/dotplot.hpp): alignment paths known by hand (Durbin's HEAGAWGHEE/PAWHEAE, a constructed
// minus-strand DNA hit), their decimation, and the SVG file: well formed, one polyline per hit, pixel coordinates
// derived by hand, small for a path of 10^7 columns, atomic.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/strand.hpp"
#include "core/thread_pool.hpp"
#include "io/align/dotplot.hpp"
#include "io/align/output.hpp"
#include "tests/cli_support.hpp"

namespace fs = std::filesystem;
using namespace swgpu;
using io::path_point;

namespace {

struct temp_dir : testing::temp_dir {
    temp_dir() : testing::temp_dir("swgpu-dotplot") {}
};
using testing::slurp;

// A whole run through the core API (queries and database as letters), without statistics.
struct run_result {
    scoring sc;
    query_strands queries;
    database_scan scan;
    std::vector<std::vector<printed_hit>> hits;
    io::results_view view() const { return {sc, queries, scan, hits}; }
};

run_result run(const std::vector<std::pair<std::string, std::string>>& queries,
               const std::vector<std::pair<std::string, std::string>>& db, scoring sc, bool minus) {
    run_result r;
    r.sc = std::move(sc);
    for (const auto& [n, s] : queries) r.queries.plus.add(n, s);
    r.queries.search_minus = minus;
    if (minus) r.queries.minus = reverse_complement(r.queries.plus);
    encode(r.queries.plus, r.sc.matrix);
    if (minus) encode(r.queries.minus, r.sc.matrix);
    thread_pool pool(2);
    bool read = false;
    const chunk_reader reader = [&](sequence_set& chunk) {
        if (read) return false;
        for (const auto& [n, s] : db) chunk.add(n, s);
        read = true;
        return true;
    };
    const score_pass pass = [&](const sequence_set& q, const sequence_set& d, const search_options& o) {
        return search_cpu(q, d, r.sc, o, pool);
    };
    function_chunks chunks(reader);
    function_backend backend(pass);
    r.scan = scan_database(r.queries, r.sc, 500, chunks, backend);
    r.hits = finish_hits(r.scan, r.queries, r.sc, finish_options{}, pool);
    return r;
}

scoring durbin_scoring() {
    return scoring{substitution_matrix::builtin("BLOSUM50"), gap_costs{0, 8}, seq_type::protein};
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

// The values of every points="..." attribute, in order.
std::vector<std::string> polyline_points(const std::string& svg) {
    std::vector<std::string> out;
    const std::string key = "points=\"";
    for (auto at = svg.find(key); at != std::string::npos; at = svg.find(key, at)) {
        at += key.size();
        out.push_back(svg.substr(at, svg.find('"', at) - at));
    }
    return out;
}

// XML-ish well-formedness: every element closed in order (or self-closing), attribute values quoted, no bare '&' or
// '<' in text. Returns an empty string when well formed, else what is wrong.
std::string xml_problem(const std::string& text) {
    std::vector<std::string> open;
    std::size_t at = 0;
    while (at < text.size()) {
        if (text[at] == '&') {
            const auto semi = text.find(';', at);
            const auto entity = text.substr(at, semi == std::string::npos ? 8 : semi - at + 1);
            if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;" && entity != "&apos;")
                return "bare & at " + std::to_string(at);
            ++at;
            continue;
        }
        if (text[at] != '<') {
            if (text[at] == '>') return "bare > at " + std::to_string(at);
            ++at;
            continue;
        }
        // A tag: find its end outside quoted attribute values.
        std::size_t end = at + 1;
        bool quoted = false;
        for (; end < text.size(); ++end) {
            if (text[end] == '"') quoted = !quoted;
            else if (!quoted && text[end] == '<') return "'<' inside a tag at " + std::to_string(end);
            else if (!quoted && text[end] == '>') break;
        }
        if (end >= text.size()) return "unterminated tag at " + std::to_string(at);
        const std::string tag = text.substr(at + 1, end - at - 1);
        at = end + 1;
        if (tag.empty()) return "empty tag";
        if (tag[0] == '?') {
            if (tag.back() != '?') return "bad processing instruction";
            continue;
        }
        if (tag[0] == '/') {
            if (open.empty() || open.back() != tag.substr(1)) return "unexpected </" + tag.substr(1) + ">";
            open.pop_back();
            continue;
        }
        const std::string name = tag.substr(0, tag.find_first_of(" \t\n/"));
        if (tag.back() != '/') open.push_back(name);
        else if (open.empty()) return "a top-level empty element";
    }
    if (!open.empty()) return "<" + open.back() + "> not closed";
    return {};
}

bool is_svg(const std::string& text) {
    return (text.rfind("<?xml", 0) == 0 || text.rfind("<svg", 0) == 0) && text.find("<svg") != std::string::npos &&
           text.size() >= 7 && text.compare(text.size() - 7, 7, "</svg>\n") == 0;
}

// A hand-made hit: `ops` from (subject_begin, query_begin) on the searched strand.
printed_hit make_hit(std::uint32_t subject, strand str, std::int64_t query_begin, std::int64_t subject_begin,
                     std::vector<cigar_op> ops) {
    printed_hit h;
    h.subject = subject;
    h.str = str;
    h.score = 1;
    h.aln.score = 1;
    h.aln.query_begin = query_begin;
    h.aln.subject_begin = subject_begin;
    std::int64_t q = query_begin, s = subject_begin;
    for (const auto& o : ops) {
        h.stats.columns += o.len;
        if (o.op != 'I') s += o.len;
        if (o.op != 'D') q += o.len;
    }
    h.aln.query_end = q - 1;
    h.aln.subject_end = s - 1;
    h.aln.ops = std::move(ops);
    return h;
}

}  // namespace

TEST_CASE("dotplot: alignment paths, every corner, by hand", "[dotplot]") {
    // Durbin's AWGHE / AW-HE: query 4..8, subject 1..4 (0-based): 2M to (3, 6), the gap in the subject (I: a query
    // residue) straight down to (3, 7), 2M to (5, 9). The second hit, W/W, is (0, 5) -> (1, 6).
    const auto r = run({{"q", "HEAGAWGHEE"}}, {{"other", "WWWWWW"}, {"s", "PAWHEAE"}}, durbin_scoring(), false);
    REQUIRE(r.hits[0].size() == 2);
    CHECK(io::alignment_path(r.hits[0][0], 10, 20000) ==
          std::vector<path_point>{{1, 4}, {3, 6}, {3, 7}, {5, 9}});
    CHECK(io::alignment_path(r.hits[0][1], 10, 20000) == std::vector<path_point>{{0, 5}, {1, 6}});
    // Too few points for every corner: only the ends.
    CHECK(io::alignment_path(r.hits[0][0], 10, 2) == std::vector<path_point>{{1, 4}, {5, 9}});

    // A minus-strand hit: 12M1I12M from subject 50 and position 8 of the reverse-complemented 78-nt query, drawn with
    // the query on its plus strand (q -> 78 - q): from (50, 70) up to (74, 45), the BLAST view's (sstart - 1, qend)
    // to (send, qstart - 1).
    const auto minus = make_hit(0, strand::minus, 8, 50, {{'M', 12}, {'I', 1}, {'M', 12}});
    CHECK(io::alignment_path(minus, 78, 20000) == std::vector<path_point>{{50, 70}, {62, 58}, {62, 57}, {74, 45}});
    const auto co = blast_view(minus, 78);
    CHECK(co.qstart == 46);
    CHECK(co.qend == 70);
    CHECK(co.sstart == 74);
    CHECK(co.send == 51);
}

TEST_CASE("dotplot: path decimation keeps a point every k columns", "[dotplot]") {
    // 4M1I4M1D4M: 14 columns, 6 corners. With 4 points: k = ceil(14 / 2) = 7, so the start (0, 0), the point after
    // 7 columns (4M to (4, 4), 1I to (4, 5), 2 of the next 4M: (6, 7)), the point after 14 columns (the end, (13, 13)).
    const auto h = make_hit(0, strand::plus, 0, 0, {{'M', 4}, {'I', 1}, {'M', 4}, {'D', 1}, {'M', 4}});
    CHECK(io::alignment_path(h, 20, 6).size() == 6);
    CHECK(io::alignment_path(h, 20, 4) == std::vector<path_point>{{0, 0}, {6, 7}, {13, 13}});
    // 5 points: k = ceil(14 / 3) = 5: after 5 columns (4M, then the I: (4, 5)), after 10 (4M to (8, 9), the D:
    // (9, 9)), then the end, which 15 would pass.
    CHECK(io::alignment_path(h, 20, 5) == std::vector<path_point>{{0, 0}, {4, 5}, {9, 9}, {13, 13}});
}

TEST_CASE("dotplot SVG: frame, labels, one polyline per hit, coordinates by hand", "[dotplot]") {
    // Durbin's example with names that need escaping. The longest sequences with a hit are the query (10) and the
    // subject PAWHEAE (7): the query axis gets 800 px, the subject axis 7/10 of it, 560 px, so 80 px per residue on
    // both axes, from the frame's corner at (90, 70).
    const auto r = run({{"q<1>", "HEAGAWGHEE"}}, {{"other", "WWWWWW"}, {"s&t", "PAWHEAE"}}, durbin_scoring(), false);
    temp_dir dir;
    const auto file = dir.path / "plot.svg";
    io::write_dotplot(file.string(), r.view());
    REQUIRE(fs::exists(file));
    const auto svg = slurp(file);
    CHECK(is_svg(svg));
    CHECK(xml_problem(svg).empty());
    CHECK(count(svg, "<polyline") == 2);
    CHECK(polyline_points(svg) == std::vector<std::string>{"170.00,390.00 330.00,550.00 330.00,630.00 490.00,790.00",
                                                           "90.00,470.00 170.00,550.00"});
    CHECK(svg.find("<rect x=\"90.00\" y=\"70.00\" width=\"560.00\" height=\"800.00\"") != std::string::npos);
    CHECK_THAT(svg, Catch::Contains("subjects: other (6 aa), s&amp;t (7 aa)"));
    CHECK_THAT(svg, Catch::Contains("query: q&lt;1&gt; (10 aa)"));
    CHECK_THAT(svg, Catch::Contains(">10</text>"));  // the query axis' last tick
    CHECK(count(svg, "stroke=\"#d62728\"") == 0);    // protein: no minus strand
    CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);  // no temporary left
}

TEST_CASE("dotplot SVG: plus and minus strands in two colours", "[dotplot]") {
    // The constructed hits of test_output.cpp's PAF test: plus 20M1D9M at subject 10 / query 8, minus 12M1I12M at
    // subject 50 / query [45, 70) on the plus strand. Subject 84 nt, query 78: the subject axis gets 800 px
    // (800/84 px per nt), the query axis 78/84 of it.
    const std::string A = "ACGTTCAGCATGGACTCTAGCAATCGCTGA", B = "TGCATCCAGTAGTCAGGCTAACGT";
    const std::string X = A.substr(0, 10) + "G" + A.substr(11, 9) + A.substr(21);
    const std::string Y = B.substr(0, 5) + "G" + B.substr(6, 6) + "A" + B.substr(12);
    const std::string subject = std::string(10, 'G') + A + std::string(10, 'G') + B + std::string(10, 'G');
    const std::string flank(8, 'T');
    const std::string query = flank + X + flank + reverse_complement(Y) + flank;
    const scoring sc{substitution_matrix::match_mismatch(2, -3), gap_costs{5, 2}, seq_type::dna};
    const auto r = run({{"read", query}}, {{"chr", subject}}, sc, true);
    REQUIRE(r.hits[0].size() == 2);
    REQUIRE(r.hits[0][1].str == strand::minus);
    CHECK(io::alignment_path(r.hits[0][0], 78, 20000) ==
          std::vector<path_point>{{10, 8}, {30, 28}, {31, 28}, {40, 37}});
    CHECK(io::alignment_path(r.hits[0][1], 78, 20000) ==
          std::vector<path_point>{{50, 70}, {62, 58}, {62, 57}, {74, 45}});

    temp_dir dir;
    const auto file = dir.path / "plot.svg";
    io::write_dotplot(file.string(), r.view());
    const auto svg = slurp(file);
    CHECK(is_svg(svg));
    CHECK(xml_problem(svg).empty());
    CHECK(count(svg, "<polyline") == 2);
    CHECK(count(svg, "<polyline stroke=\"#1f77b4\"") == 1);
    CHECK(count(svg, "<polyline stroke=\"#d62728\"") == 1);
    CHECK_THAT(svg, Catch::Contains("subject: chr (84 bp)"));
    CHECK_THAT(svg, Catch::Contains("query: read (78 bp)"));
    CHECK_THAT(svg, Catch::Contains("minus strand</text>"));
    // The minus path's first point: subject 50 at 90 + 50*800/84 px, query 70 at 70 + 70*800/84 px.
    const auto points = polyline_points(svg);
    REQUIRE(points.size() == 2);
    CHECK(points[1].rfind("566.19,736.67 ", 0) == 0);
}

TEST_CASE("dotplot SVG: no hits, and unwritable destinations", "[dotplot]") {
    const auto r = run({{"lonely", "WWWW"}}, {{"s", "DDDD"}}, durbin_scoring(), false);
    temp_dir dir;
    const auto file = dir.path / "empty.svg";
    io::write_dotplot(file.string(), r.view());
    const auto svg = slurp(file);
    CHECK(is_svg(svg));
    CHECK(xml_problem(svg).empty());
    CHECK(count(svg, "<polyline") == 0);
    CHECK_THAT(svg, Catch::Contains("no hits"));

    // Into a file opened before the search (as the app opens -o): nothing at the destination until it is complete.
    const auto early = dir.path / "early.svg";
    {
        io::output_file out(early.string());
        CHECK(!fs::exists(early));
        io::write_dotplot(r.view(), out);
        CHECK(!fs::exists(early));
        out.commit();
    }
    CHECK(slurp(early) == svg);

    auto code_of = [&](const fs::path& p) {
        try {
            io::write_dotplot(p.string(), r.view());
        } catch (const swgpu::error& e) {
            return static_cast<int>(e.code());
        }
        return 0;
    };
    CHECK(code_of(dir.path / "no-such-dir" / "plot.svg") == 5);
    CHECK(code_of(dir.path) == 5);  // a directory
    CHECK(!fs::exists(dir.path / "no-such-dir"));
}

TEST_CASE("dotplot SVG: a path of 10^7 columns stays small", "[dotplot]") {
    // A synthetic alignment of 40M1I40M1D repeated, then 18M: 121,951 * 82 + 18 = 10^7 columns and 487,805 operations,
    // far more corners than a hit may keep. Query and subject 10^7 residues each.
    constexpr std::int64_t total = 10'000'000;
    scoring sc{substitution_matrix::match_mismatch(2, -3), gap_costs{5, 2}, seq_type::dna};
    query_strands queries;
    queries.plus.add("long_query", std::string(total, 'A'));
    database_scan scan;
    scan.subjects[0] = subject_record{"long_subject", std::vector<std::uint8_t>(total, 0), {}};
    std::vector<cigar_op> ops;
    for (int k = 0; k < 121'951; ++k) {
        ops.push_back({'M', 40});
        ops.push_back({'I', 1});
        ops.push_back({'M', 40});
        ops.push_back({'D', 1});
    }
    ops.push_back({'M', 18});
    std::vector<std::vector<printed_hit>> hits(1);
    hits[0].push_back(make_hit(0, strand::plus, 0, 0, std::move(ops)));
    REQUIRE(hits[0][0].stats.columns == total);
    const std::int64_t end = 121'951 * 81 + 18;  // each repeat advances 81 residues of both sequences
    REQUIRE(hits[0][0].aln.query_end == end - 1);

    // k = ceil(10^7 / (20,000 - 2)) = 501 columns between points: the start, 19,960 samples (501 * 19,960 =
    // 9,999,960) and the end.
    const auto path = io::alignment_path(hits[0][0], total, io::dotplot_max_points_per_hit);
    CHECK(path.size() == 19'962);
    CHECK(path.front() == path_point{0, 0});
    CHECK(path.back() == path_point{end, end});
    // Both coordinates advance by at most k, never backwards.
    for (std::size_t k = 1; k < path.size(); ++k) {
        const auto ds = path[k].subject - path[k - 1].subject, dq = path[k].query - path[k - 1].query;
        CHECK((ds >= 0 && dq >= 0 && ds <= 501 && dq <= 501 && ds + dq > 0));
    }

    temp_dir dir;
    const auto file = dir.path / "huge.svg";
    io::write_dotplot(file.string(), io::results_view{sc, queries, scan, hits});
    CHECK(fs::file_size(file) < 1'500'000);
    const auto svg = slurp(file);
    CHECK(is_svg(svg));
    CHECK(xml_problem(svg).empty());
    CHECK(count(svg, "<polyline") == 1);
    const auto points = polyline_points(svg);
    REQUIRE(points.size() == 1);
    CHECK(count(points[0], ",") == path.size());
    CHECK_THAT(svg, Catch::Contains("subject: long_subject (10,000,000 bp)"));
    CHECK_THAT(svg, Catch::Contains(">10M</text>"));  // tick labels in M
}
