// The library face (app/swgpu/swgpu.hpp) against the command line it shares its machinery with: the same hits, in the same
// order, with the same column values; a database reused for two searches gives what two calls of search() give; a
// pair aligned alone gives the CLI's best hit of that pair; summed-area tables equal the textbook sums; the numerics
// calls (triangular_solve, poisson_sor, sweep3d_fmod) against small cases solved by hand or by the plain loop.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <optional>
#include <cstdio>
#include <functional>
#include <fstream>
#include <random>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "app/swgpu/face.hpp"
#include "app/swgpu/swgpu.hpp"
#include "core/align/statistics.hpp"
#include "core/align/strand.hpp"
#include "tests/cli_support.hpp"

using swgpu::testing::code_of;
using swgpu::testing::lines_of;
using swgpu::testing::run_program;
using swgpu::testing::temp_dir;

namespace {

const std::string source_dir = SWGPU_SOURCE_DIR;

// A hit as the CLI prints "6 std score cigar qlen slen sstrand".
std::string as_cli_line(const swgpu::hit& h) {
    char pident[32];
    std::snprintf(pident, sizeof pident, "%.3f", h.pident);
    const auto num = [](long v) { return std::to_string(v); };
    return h.qseqid + "\t" + h.sseqid + "\t" + pident + "\t" + num(h.length) + "\t" + num(h.mismatch) + "\t" +
           num(h.gapopen) + "\t" + num(h.qstart) + "\t" + num(h.qend) + "\t" + num(h.sstart) + "\t" + num(h.send) +
           "\t" + swgpu::format_evalue(h.evalue) + "\t" + swgpu::format_bit_score(h.bitscore) + "\t" + num(h.score) +
           "\t" + h.cigar + "\t" + num(h.qlen) + "\t" + num(h.slen) + "\t" + h.sstrand;
}

std::string as_cli(const std::vector<swgpu::hit>& hits) {
    std::string out;
    for (const auto& h : hits) out += as_cli_line(h) + "\n";
    return out;
}

const std::string columns = " --outfmt '6 std score cigar qlen slen sstrand'";

swgpu::search_settings on_cpu() {
    auto s = swgpu::search_settings::defaults();
    s.where = swgpu::backend::cpu;
    return s;
}

std::string random_dna(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string s(n, 'A');
    for (auto& c : s) c = "ACGT"[rng() % 4];
    return s;
}

}  // namespace

TEST_CASE("library: search gives the command line's hits, in its order, with its values", "[library]") {
    const std::string q = source_dir + "/data/demo_queries.fa", db = source_dir + "/data/demo_db.fa";
    const auto queries = swgpu::read_sequences(q), database = swgpu::read_sequences(db);
    REQUIRE(queries.size() == 4);
    REQUIRE(database.size() == 1000);
    auto s = on_cpu();
    s.max_target_seqs = 7;
    const auto hits = swgpu::search(queries, database, s);
    const auto cli = run_program("align --backend cpu '" + q + "' '" + db + "' -k 7" + columns);
    REQUIRE(cli.code == 0);
    CHECK(hits.size() == lines_of(cli.out).size());
    CHECK(as_cli(hits) == cli.out);

    // The same database kept resident: two searches give what two calls of search() give.
    swgpu::database resident(db, s);
    CHECK(resident.size() == 1000);
    const std::vector<swgpu::sequence> first(queries.begin(), queries.begin() + 1), second(queries.begin() + 1, queries.end());
    CHECK(as_cli(resident.search(first)) == as_cli(swgpu::search(first, database, s)));
    CHECK(as_cli(resident.search(second)) == as_cli(swgpu::search(second, database, s)));
    // From a .swdb, the same.
    temp_dir dir("swgpu-library");
    REQUIRE(run_program("makedb '" + db + "' '" + (dir / "demo") + "' -q").code == 0);
    swgpu::database from_swdb(dir / "demo.swdb", s);
    CHECK(as_cli(from_swdb.search(first)) == as_cli(resident.search(first)));
}

TEST_CASE("library: the steps after the score pass in the command line's one order (SEG, composition, --max-hsps)",
          "[library]") {
    // A query with a low-complexity run and a subject holding two copies of its other part: SEG masks the run, and
    // the further alignments (counted on the letters as read) come after composition-based statistics in both faces.
    temp_dir dir("swgpu-library-steps");
    const std::string core = "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEVVHSLAKWKRQTLGQHDFSAGEG";
    std::ofstream(dir / "q.fa") << ">q\n" << core << std::string(30, 'Q') << "\n";
    std::ofstream(dir / "db.fa") << ">s1\nGGGG" << core.substr(40) << "PPPPPPPP" << core.substr(0, 60) << "WWWW"
                                 << std::string(40, 'Q') << "\n>s2\nPPPP" << core.substr(10, 50) << "PPPP\n";
    const auto queries = swgpu::read_sequences(dir / "q.fa"), database = swgpu::read_sequences(dir / "db.fa");
    for (const bool cbs : {false, true}) {
        INFO("comp_based_stats " << cbs);
        auto s = on_cpu();
        s.seg = true;
        s.max_hsps = 4;
        s.comp_based_stats = cbs ? 1 : 0;
        const auto hits = swgpu::search(queries, database, s);
        const auto cli = run_program("align --backend cpu '" + (dir / "q.fa") + "' '" + (dir / "db.fa") +
                                     "' --seg yes --max-hsps 4 --comp-based-stats " + (cbs ? "1" : "0") + columns);
        REQUIRE(cli.code == 0);
        CHECK(lines_of(cli.out).size() > 2);
        CHECK(as_cli(hits) == cli.out);
    }
}

TEST_CASE("library: DNA on both strands, align_pair, settings and errors as the command line's", "[library]") {
    temp_dir dir("swgpu-library-dna");
    const std::string genome = random_dna(3000, 5);
    std::string read = swgpu::reverse_complement(genome.substr(1200, 150));
    read[40] = read[40] == 'A' ? 'C' : 'A';
    const swgpu::sequence g{"genome", genome}, r{"read", read};
    {
        std::FILE* f = std::fopen((dir / "g.fa").c_str(), "w");
        std::fprintf(f, ">genome\n%s\n", genome.c_str());
        std::fclose(f);
        f = std::fopen((dir / "r.fa").c_str(), "w");
        std::fprintf(f, ">read\n%s\n", read.c_str());
        std::fclose(f);
    }
    const auto hits = swgpu::search({r}, {g}, on_cpu());
    const auto cli = run_program("align --backend cpu '" + (dir / "r.fa") + "' '" + (dir / "g.fa") + "'" + columns);
    REQUIRE(cli.code == 0);
    CHECK(as_cli(hits) == cli.out);
    REQUIRE(!hits.empty());
    CHECK(hits[0].sstrand == "minus");
    CHECK(hits[0].sstart == 1350);
    CHECK(hits[0].send == 1201);

    const swgpu::hit best = swgpu::align_pair(r, g, on_cpu());
    CHECK(as_cli_line(best) == lines_of(cli.out).at(0));
    // A pair with no positive-scoring alignment.
    const swgpu::hit none = swgpu::align_pair({"a", "AAAA"}, {"c", "CCCC"}, on_cpu());
    CHECK(none.score == 0);
    CHECK(none.length == 0);
    CHECK(std::isnan(none.evalue));  // no E-value: it passes no filter (0.0 passed every one)
    CHECK(std::isnan(none.bitscore));

    // A long pair through the long-pair path (--mode pairwise), as the command line aligns it.
    std::string other = genome;
    for (std::size_t k = 0; k < other.size(); k += 37) other[k] = other[k] == 'G' ? 'T' : 'G';
    auto pairwise = on_cpu();
    pairwise.mode = swgpu::pair_mode::pairwise;
    pairwise.strand = swgpu::strands::plus;
    {
        std::FILE* f = std::fopen((dir / "o.fa").c_str(), "w");
        std::fprintf(f, ">other\n%s\n", other.c_str());
        std::fclose(f);
    }
    const auto long_cli = run_program("align --backend cpu --mode pairwise --strand plus '" + (dir / "o.fa") + "' '" +
                                      (dir / "g.fa") + "'" + columns);
    REQUIRE(long_cli.code == 0);
    CHECK(as_cli_line(swgpu::align_pair({"other", other}, g, pairwise)) == lines_of(long_cli.out).at(0));

    // Errors carry the command line's exit codes.
    const auto code_of = [](auto&& call) {
        try {
            call();
        } catch (const swgpu::error& e) {
            return static_cast<int>(e.code());
        }
        return 0;
    };
    CHECK(code_of([&] { swgpu::search({r}, {{"p", "MKVLAAGIVGLLLWAQEEFPSTRHDKNCY"}}, on_cpu()); }) == 2);  // types
    CHECK(code_of([&] { swgpu::search({{"x", "AC1GT"}}, {g}, on_cpu()); }) == 1);                        // residue
    auto bad = on_cpu();
    bad.gap_open = 3;  // no E-value parameters for BLOSUM62 3/1
    CHECK(code_of([&] { swgpu::search({{"p", "MKVLAAGIVG"}}, {{"q", "MKVLAAGIVG"}}, bad); }) == 2);
    bad.evalues = false;  // without statistics any gap costs go
    CHECK(swgpu::search({{"p", "MKVLAAGIVG"}}, {{"q", "MKVLAAGIVG"}}, bad).size() == 1);
    CHECK(std::isnan(swgpu::search({{"p", "MKVLAAGIVG"}}, {{"q", "MKVLAAGIVG"}}, bad)[0].evalue));
}

TEST_CASE("library: align_pair_all gives what search gives for one pair, with max_hsps's further alignments",
          "[library]") {
    // The subject holds two copies of parts of the query: two alignments at least with max_hsps 4.
    const std::string core = "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEVVHSLAKWKRQTLGQHDFSAGEG";
    const swgpu::sequence q{"q", core}, s1{"s1", "GGGG" + core.substr(40) + "PPPPPPPP" + core.substr(0, 60) + "WWWW"};
    auto s = on_cpu();
    s.max_hsps = 4;
    const auto all = swgpu::align_pair_all(q, s1, s);
    const auto searched = swgpu::search({q}, {s1}, s);
    REQUIRE(all.size() >= 2);
    CHECK(as_cli(all) == as_cli(searched));
    for (const auto& h : all) CHECK(h.evalue <= s.evalue);
    // Its first is align_pair's one alignment; the second, scoring no more, lies on the subject's other copy.
    s.max_hsps = 1;
    CHECK(as_cli_line(swgpu::align_pair(q, s1, s)) == as_cli_line(all.front()));
    CHECK(all[1].score <= all[0].score);
    CHECK((all[1].send < all[0].sstart || all[1].sstart > all[0].send));
    // A pair with no positive-scoring alignment: no alignment at all; one below the E-value: the best one.
    s.max_hsps = 4;
    CHECK(swgpu::align_pair_all({"a", "AAAA"}, {"c", "CCCC"}, s).empty());
    auto strict = s;
    strict.evalue = 1e-300;
    const auto best = swgpu::align_pair_all(q, s1, strict);
    REQUIRE(best.size() == 1);
    CHECK(as_cli_line(best[0]) == as_cli_line(all[0]));
}

TEST_CASE("library: a std::stop_token stops a call, errors carry a kind and name the settings", "[library]") {
    const auto caught = [](auto&& call) -> std::optional<swgpu::error> {
        try {
            call();
        } catch (const swgpu::error& e) {
            return e;
        }
        return std::nullopt;
    };
    const swgpu::sequence a{"a", random_dna(40000, 11)}, b{"b", random_dna(40000, 12)};
    auto s = on_cpu();
    s.mode = swgpu::pair_mode::pairwise;
    s.strand = swgpu::strands::plus;
    {  // a stop requested before the call: it does not start
        std::stop_source before;
        before.request_stop();
        s.stop = before.get_token();
        const auto e = caught([&] { swgpu::search({a}, {b}, s); });
        REQUIRE(e);
        CHECK(swgpu::kind_of(*e) == swgpu::error_kind::interrupted);
        CHECK(swgpu::exit_code_of(*e) == 130);
    }
    {  // during a long pair of 1.6e9 cells (seconds on a few cores): it stops at the next check
        std::stop_source during;
        s.stop = during.get_token();
        std::jthread stopper([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
            during.request_stop();
        });
        const auto started = std::chrono::steady_clock::now();
        const auto e = caught([&] { swgpu::search({a}, {b}, s); });
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        REQUIRE(e);
        CHECK(swgpu::kind_of(*e) == swgpu::error_kind::interrupted);
        CHECK(took < 5.0);
    }
    // The request ends with the call: the next one runs (a short pair, a token never stopped).
    std::stop_source unused;
    auto plain = on_cpu();
    plain.stop = unused.get_token();
    CHECK(swgpu::search({{"p", "MKVLAAGIVG"}}, {{"q", "MKVLAAGIVG"}}, plain).size() == 1);

    // Errors: a kind, the command line's exit code, and a message naming the setting rather than the option.
    auto dna = on_cpu();
    dna.match = 0;
    const auto bad_match = caught([&] { swgpu::search({{"r", "ACGTACGTAC"}}, {{"g", "ACGTACGTAC"}}, dna); });
    REQUIRE(bad_match);
    CHECK(swgpu::kind_of(*bad_match) == swgpu::error_kind::bad_settings);
    CHECK(swgpu::exit_code_of(*bad_match) == 2);
    CHECK(std::string(bad_match->what()) == "match must be positive (got 0)");
    auto hsps = on_cpu();
    hsps.max_hsps = 0;
    const auto bad_hsps = caught([&] { swgpu::search({{"p", "MKVLAAGIVG"}}, {{"q", "MKVLAAGIVG"}}, hsps); });
    REQUIRE(bad_hsps);
    CHECK(std::string(bad_hsps->what()).find("--") == std::string::npos);
    CHECK(std::string(bad_hsps->what()).find("max_hsps") != std::string::npos);
    auto cbs = on_cpu();
    cbs.comp_based_stats = 1;
    cbs.matrix = "BLOSUM62";
    cbs.gap_open = 11;
    const auto wrong_type = caught([&] { swgpu::search({{"r", "ACGTACGTACGTACGTACGTAC"}}, {{"g", "ACGTACGTACGTACGTACGTAC"}}, cbs); });
    REQUIRE(wrong_type);
    CHECK(swgpu::kind_of(*wrong_type) == swgpu::error_kind::bad_settings);
    CHECK(std::string(wrong_type->what()).find("--") == std::string::npos);
    // The rewording itself, on messages core and io word for the command line.
    CHECK(swgpu::detail::setting_names("--match/--mismatch score DNA; use --matrix, or --seqtype dna") ==
          "match/mismatch score DNA; use matrix, or type dna");
    CHECK(swgpu::detail::setting_names("-k/--max-target-seqs must be at least 1; --gpu-mem '4X' (--comp-based-stats)") ==
          "max_target_seqs must be at least 1; gpu_memory '4X' (comp_based_stats)");
    CHECK(swgpu::detail::setting_names("file a--b.fa: 3--4 residues") == "file a--b.fa: 3--4 residues");
    const auto missing = caught([&] { swgpu::read_sequences("/nonexistent/swgpu-library.fa"); });
    REQUIRE(missing);
    CHECK(swgpu::kind_of(*missing) == swgpu::error_kind::bad_input);
}

TEST_CASE("library: summed-area tables equal the textbook sums, per channel", "[library]") {
    auto image = swgpu::array::zeros<std::uint8_t>({5, 7, 2});
    std::mt19937 rng(3);
    for (std::int64_t i = 0; i < 5; ++i)
        for (std::int64_t j = 0; j < 7; ++j)
            for (std::int64_t c = 0; c < 2; ++c) image.at<std::uint8_t>({i, j, c}) = static_cast<std::uint8_t>(rng() % 256);
    const auto table = swgpu::summed_area_table(image, swgpu::backend::cpu);
    CHECK(table.type() == swgpu::dtype::uint64);
    CHECK(table.shape() == std::vector<std::int64_t>{5, 7, 2});
    for (std::int64_t i = 0; i < 5; ++i)
        for (std::int64_t j = 0; j < 7; ++j)
            for (std::int64_t c = 0; c < 2; ++c) {
                std::uint64_t sum = 0;
                for (std::int64_t y = 0; y <= i; ++y)
                    for (std::int64_t x = 0; x <= j; ++x) sum += image.at<std::uint8_t>({y, x, c});
                CHECK(table.at<std::uint64_t>({i, j, c}) == sum);
            }
    auto f = swgpu::array::zeros<float>({3, 4});
    f.at<float>({1, 2}) = 1.5f;
    f.at<float>({2, 3}) = -0.25f;
    const auto ft = swgpu::summed_area_table(f, swgpu::backend::cpu);
    CHECK(ft.type() == swgpu::dtype::float64);
    CHECK(ft.at<double>({2, 3}) == 1.25);
    CHECK(ft.at<double>({1, 1}) == 0.0);
    CHECK_THROWS_AS(f.at<double>({0, 0}), swgpu::error);  // wrong element type
    CHECK_THROWS_AS(f.at<float>({3, 0}), swgpu::error);   // outside
}

TEST_CASE("library: integral histograms equal textbook counts, by the 8-bit rule and by edges", "[library]") {
    auto image = swgpu::array::zeros<std::uint8_t>({6, 9});
    std::mt19937 rng(5);
    for (std::int64_t i = 0; i < 6; ++i)
        for (std::int64_t j = 0; j < 9; ++j) image.at<std::uint8_t>({i, j}) = static_cast<std::uint8_t>(rng() % 256);
    const int bins = 5;
    const auto h = swgpu::integral_histogram(image, bins, {}, swgpu::backend::cpu);
    CHECK(h.type() == swgpu::dtype::uint32);
    CHECK(h.shape() == std::vector<std::int64_t>{6, 9, bins});
    for (std::int64_t i = 0; i < 6; ++i)
        for (std::int64_t j = 0; j < 9; ++j)
            for (int b = 0; b < bins; ++b) {
                std::uint32_t count = 0;
                for (std::int64_t y = 0; y <= i; ++y)
                    for (std::int64_t x = 0; x <= j; ++x) count += image.at<std::uint8_t>({y, x}) * bins / 256 == b;
                CHECK(h.at<std::uint32_t>({i, j, b}) == count);
            }
    // Edges: [0, 100), [100, 200], values above 200 in no bin.
    const auto e = swgpu::integral_histogram(image, 0, {0, 100, 200}, swgpu::backend::cpu);
    REQUIRE(e.shape() == std::vector<std::int64_t>{6, 9, 2});
    std::uint32_t low = 0, high = 0;
    for (std::int64_t y = 0; y < 6; ++y)
        for (std::int64_t x = 0; x < 9; ++x) {
            const int v = image.at<std::uint8_t>({y, x});
            low += v < 100;
            high += v >= 100 && v <= 200;
        }
    CHECK(e.at<std::uint32_t>({5, 8, 0}) == low);
    CHECK(e.at<std::uint32_t>({5, 8, 1}) == high);
    // A binning out of range: the message names the argument, not ihist's option.
    try {
        swgpu::integral_histogram(image, 70000, {}, swgpu::backend::cpu);
        FAIL("70000 bins were accepted");
    } catch (const swgpu::error& bad) {
        CHECK(swgpu::kind_of(bad) == swgpu::error_kind::bad_settings);
        CHECK(std::string(bad.what()) == "bins must be between 1 and 65535");
    }
    CHECK_THROWS_AS(swgpu::integral_histogram(swgpu::array::zeros<std::uint8_t>({2, 2, 3}), 4), swgpu::error);
    CHECK_THROWS_AS(swgpu::integral_histogram(image, 0), swgpu::error);
}


TEST_CASE("library: triangular solves by substitution, the triangle cut from a CSR matrix, errors as levels'",
          "[library]") {
    // A = [[2, 9, 0], [1, 4, 0], [0, 3, 5]] with a duplicate (2, 2) entry split in two and columns out of order.
    swgpu::csr_matrix a;
    a.rows = a.cols = 3;
    a.indptr = {0, 2, 4, 7};
    a.indices = {1, 0, 1, 0, 2, 1, 2};
    a.data = {9, 2, 4, 1, 2, 3, 3};
    const std::vector<double> b = {2, 5, 13};
    const auto lower = swgpu::triangular_solve(a, b, true, swgpu::backend::cpu);  // [[2,0,0],[1,4,0],[0,3,5]]
    REQUIRE(lower.size() == 3);
    CHECK(lower[0] == 1.0);
    CHECK(lower[1] == 1.0);
    CHECK(lower[2] == 2.0);
    const auto upper = swgpu::triangular_solve(a, {11, 4, 5}, false, swgpu::backend::cpu);  // [[2,9,0],[0,4,0],[0,0,5]]
    CHECK(upper == std::vector<double>{1, 1, 1});
    using swgpu::exit_code;
    swgpu::csr_matrix wide = a;
    wide.cols = 4;
    CHECK(code_of([&] { swgpu::triangular_solve(wide, b, true, swgpu::backend::cpu); }) == exit_code::bad_input);
    CHECK(code_of([&] { swgpu::triangular_solve(a, {1, 2}, true, swgpu::backend::cpu); }) == exit_code::bad_input);
    swgpu::csr_matrix zero = a;
    zero.data[1] = 0;  // A[0][0]
    CHECK(code_of([&] { swgpu::triangular_solve(zero, b, true, swgpu::backend::cpu); }) == exit_code::bad_input);
    swgpu::csr_matrix nan = a;
    nan.data[6] = std::nan("");
    CHECK(code_of([&] { swgpu::triangular_solve(nan, b, true, swgpu::backend::cpu); }) == exit_code::bad_input);
}

TEST_CASE("library: SOR converges to the discrete solution, and sweep3d's fmod grid by the plain loop", "[library]") {
    // u = x + y is harmonic and linear, so the 5-point scheme solves it exactly: f = 0, the boundary from u.
    const std::int64_t n = 9;
    std::vector<double> f(n * n, 0.0), g(n * n, 0.0);
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) g[static_cast<std::size_t>(i * n + j)] = double(i + j) / double(n - 1);
    swgpu::sor_settings s;
    s.tol = 1e-12;
    s.where = swgpu::backend::cpu;
    const auto r = swgpu::poisson_sor(n, f, g, s);
    CHECK(r.converged);
    CHECK(r.reason == "converged");
    REQUIRE(!r.residuals.empty());
    CHECK(r.residuals.back() <= 1e-12);
    CHECK(r.sweeps.size() == r.residuals.size());
    for (std::size_t k = 0; k < g.size(); ++k) CHECK(std::abs(r.u[k] - g[k]) < 1e-10);
    s.max_sweeps = 2;
    const auto stopped = swgpu::poisson_sor(n, f, g, s);
    CHECK(!stopped.converged);
    CHECK(stopped.reason == "max_sweeps");
    s.method = "jacobi";
    CHECK(code_of([&] { swgpu::poisson_sor(n, f, g, s); }) == swgpu::exit_code::bad_command_line);
    CHECK(code_of([&] { swgpu::poisson_sor(2, {0, 0, 0, 0}, {0, 0, 0, 0}); }) == swgpu::exit_code::bad_input);

    const std::int64_t m = 4;
    const auto grid = swgpu::sweep3d_fmod(m, 2, 1.0, swgpu::dtype::float64, swgpu::backend::cpu);
    REQUIRE(grid.shape() == std::vector<std::int64_t>{m, m, m});
    std::vector<double> a(static_cast<std::size_t>(m * m * m));
    const auto at = [&](std::int64_t i, std::int64_t j, std::int64_t k) -> double& {
        return a[static_cast<std::size_t>((i * m + j) * m + k)];
    };
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < m; ++j)
            for (std::int64_t k = 0; k < m; ++k) at(i, j, k) = double((i + 2 * j + 3 * k) % 10) / 10;
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < m; ++j)
            for (std::int64_t k = 0; k < m; ++k) {
                double r0 = at(i, j, k);
                for (int l = 0; l < 2; ++l)
                    r0 = std::fmod(r0 + (i ? at(i - 1, j, k) : 0.0) + (j ? at(i, j - 1, k) : 0.0) +
                                       (k ? at(i, j, k - 1) : 0.0),
                                   1.0);
                at(i, j, k) = r0;
                CHECK(grid.at<double>({i, j, k}) == r0);
            }
    CHECK(swgpu::sweep3d_fmod(3, 1, 1.0, swgpu::dtype::float32, swgpu::backend::cpu).type() == swgpu::dtype::float32);
    CHECK(code_of([] { swgpu::sweep3d_fmod(0); }) == swgpu::exit_code::bad_command_line);
    CHECK(code_of([] { swgpu::sweep3d_fmod(3, 1, 1.0, swgpu::dtype::int32); }) == swgpu::exit_code::bad_command_line);
}

TEST_CASE("library: zdrop cuts alignments into collinear blocks as the command line's --zdrop", "[library][zdrop]") {
    // A genome against a copy with its middle 2 kbp inverted: without zdrop one plus-strand alignment runs through the
    // inversion; with it, the plus blocks on both sides and the minus block over it, as `swgpu align --zdrop` prints.
    temp_dir dir("swgpu-library-zdrop");
    const std::string genome = random_dna(12000, 17);
    const std::string copy = genome.substr(0, 5000) + swgpu::reverse_complement(genome.substr(5000, 2000)) +
                             genome.substr(7000);
    std::ofstream(dir / "g.fa") << ">genome\n" << genome << "\n";
    std::ofstream(dir / "c.fa") << ">copy\n" << copy << "\n";
    const auto g = swgpu::read_sequences(dir / "g.fa"), c = swgpu::read_sequences(dir / "c.fa");
    auto s = on_cpu();
    s.max_hsps = 3;
    const auto whole = swgpu::search(g, c, s);
    s.zdrop = 200;
    const auto blocks = swgpu::search(g, c, s);
    const auto cli = run_program("align --backend cpu '" + (dir / "g.fa") + "' '" + (dir / "c.fa") +
                                 "' --max-hsps 3 --zdrop 200" + columns);
    REQUIRE(cli.code == 0);
    CHECK(as_cli(blocks) == cli.out);
    CHECK(whole.front().length > 11000);  // through the inversion
    // Up to 3 blocks per strand: the three long ones, and chance stretches of the random sequences.
    int plus = 0, minus = 0;
    for (const auto& h : blocks) {
        CHECK(h.length < 7100);
        if (h.length > 1500) (h.sstrand == "plus" ? plus : minus) += 1;
    }
    CHECK(plus == 2);
    CHECK(minus == 1);
    // Errors name the setting: a negative zdrop, and zdrop on protein.
    s.zdrop = -2;
    try {
        (void)swgpu::search(g, c, s);
        FAIL("zdrop -2 was taken");
    } catch (const swgpu::error& e) {
        CHECK(swgpu::exit_code_of(e) == 2);
        CHECK(std::string(e.what()).find("zdrop must be 0 or more") != std::string::npos);
    }
    s.zdrop = 10;
    s.type = swgpu::sequence_type::protein;
    try {
        (void)swgpu::search({{"p", "MKTAYIAKQRQISFVKSHFSRQ"}}, {{"s", "MKTAYIAKQRQISFVKSHFSRQ"}}, s);
        FAIL("zdrop on protein was taken");
    } catch (const swgpu::error& e) {
        CHECK(swgpu::exit_code_of(e) == 2);
        CHECK(std::string(e.what()).find("zdrop cuts DNA alignments") != std::string::npos);
    }
}

TEST_CASE("library: a std::stop_token stops the numerical calls too", "[library]") {
    const auto kind = [](auto&& call) -> std::optional<swgpu::error_kind> {
        try {
            call();
        } catch (const swgpu::error& e) {
            return swgpu::kind_of(e);
        }
        return std::nullopt;
    };
    std::stop_source before;
    before.request_stop();
    const std::stop_token stopped = before.get_token();
    const auto cpu = swgpu::backend::cpu;
    swgpu::array image(swgpu::dtype::uint8, {4, 5});
    swgpu::csr_matrix identity{2, 2, {0, 1, 2}, {0, 1}, {1.0, 1.0}};
    const std::int64_t n = 9;
    std::vector<double> f(n * n, 0.0), g(n * n, 1.0);
    swgpu::sor_settings s;
    s.where = cpu;
    s.stop = stopped;
    // A stop requested before a call: it does not start.
    CHECK(kind([&] { swgpu::summed_area_table(image, cpu, stopped); }) == swgpu::error_kind::interrupted);
    CHECK(kind([&] { swgpu::integral_histogram(image, 4, {}, cpu, stopped); }) == swgpu::error_kind::interrupted);
    CHECK(kind([&] { swgpu::triangular_solve(identity, {1.0, 2.0}, true, cpu, stopped); }) ==
          swgpu::error_kind::interrupted);
    CHECK(kind([&] { swgpu::poisson_sor(n, f, g, s); }) == swgpu::error_kind::interrupted);
    CHECK(kind([&] { swgpu::sweep3d_fmod(4, 1, 1.0, swgpu::dtype::float64, cpu, stopped); }) ==
          swgpu::error_kind::interrupted);
    // During a solve that would run its 10^6 sweeps (a tolerance it cannot reach): it ends at the next sweep.
    const std::int64_t big = 512;
    std::vector<double> fb(big * big, 1.0), gb(big * big, 0.0);
    std::stop_source during;
    s.stop = during.get_token();
    s.tol = 1e-300;
    s.max_sweeps = 1000000;
    s.stagnation = 0;
    std::jthread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        during.request_stop();
    });
    CHECK(kind([&] { swgpu::poisson_sor(big, fb, gb, s); }) == swgpu::error_kind::interrupted);
    // The request ends with the call: the next ones run.
    CHECK(swgpu::triangular_solve(identity, {1.0, 2.0}, true, cpu) == std::vector<double>{1.0, 2.0});
    CHECK(swgpu::summed_area_table(image, cpu).shape() == std::vector<std::int64_t>{4, 5});
}
