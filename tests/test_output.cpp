// Output formats and the finish step, on alignments whose every printed value is known by hand (Durbin et al.'s
// HEAGAWGHEE/PAWHEAE example, a constructed minus-strand DNA hit), plus the atomic output file.
#include <catch2/catch.hpp>

#include <htslib/sam.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/finish.hpp"
#include "core/search.hpp"
#include "core/statistics.hpp"
#include "core/strand.hpp"
#include "core/thread_pool.hpp"
#include "io/atomic_file.hpp"
#include "io/output.hpp"
#include "io/sequence_reader.hpp"

namespace fs = std::filesystem;
using namespace swgpu;

namespace {

struct temp_dir {
    fs::path path;
    temp_dir() {
        std::string templ = (fs::temp_directory_path() / "swgpu-output-XXXXXX").string();
        path = ::mkdtemp(templ.data());
    }
    ~temp_dir() { fs::remove_all(path); }
    std::vector<std::string> entries() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A whole run through the core API: queries and database given as letters.
struct run_result {
    scoring sc;
    query_strands queries;
    database_scan scan;
    std::vector<std::vector<printed_hit>> hits;
    std::optional<evalue_calculator> stats;
};

run_result run(const std::vector<std::pair<std::string, std::string>>& queries,
               const std::vector<std::pair<std::string, std::string>>& db, scoring sc, bool plus, bool minus,
               bool statistics = false, std::size_t max_hits = 500, std::size_t chunk_records = 0) {
    run_result r;
    r.sc = std::move(sc);
    for (const auto& [n, s] : queries) r.queries.plus.add(n, s);
    r.queries.plus.source = "queries.fa";
    r.queries.search_plus = plus;
    r.queries.search_minus = minus;
    if (minus) r.queries.minus = reverse_complement(r.queries.plus);
    encode(r.queries.plus, r.sc.matrix);
    if (minus) encode(r.queries.minus, r.sc.matrix);
    thread_pool pool(2);
    std::size_t next = 0;
    const chunk_reader reader = [&](sequence_set& chunk) {
        if (next >= db.size()) return false;
        chunk.source = "db.fa";
        const std::size_t n = chunk_records ? chunk_records : db.size();
        for (std::size_t k = 0; k < n && next < db.size(); ++k, ++next) chunk.add(db[next].first, db[next].second);
        return true;
    };
    const score_pass pass = [&](const sequence_set& q, const sequence_set& d, const search_options& o) {
        return search_cpu(q, d, r.sc, o, pool);
    };
    r.scan = scan_database(r.queries, r.sc, max_hits, reader, pass);
    finish_options fo;
    if (statistics) {
        r.stats.emplace(r.sc, r.scan.residues, r.scan.sequences);
        fo.statistics = &*r.stats;
    }
    r.hits = finish_hits(r.scan, r.queries, r.sc, fo, pool);
    return r;
}

std::string render(const run_result& r, const std::string& outfmt, const fs::path& file) {
    io::output_file out(file.string());
    io::write_results(io::parse_outfmt(outfmt), io::run_header{"9.9.9", "swgpu align q.fa db.fa", "q.fa", "db.fa"},
                      io::results_view{r.sc, r.queries, r.scan, r.hits}, out);
    out.commit();
    return slurp(file);
}

scoring durbin_scoring() {
    // Durbin et al., Biological Sequence Analysis, Fig. 2.5: BLOSUM50, linear gap 8 = BLAST open 0, extend 8.
    return scoring{substitution_matrix::builtin("BLOSUM50"), gap_costs{0, 8}, seq_type::protein};
}

}  // namespace

TEST_CASE("option --outfmt specifications", "[output]") {
    using io::column;
    const auto six = io::parse_outfmt("6");
    CHECK(six.kind == io::format_kind::tabular);
    CHECK(six.columns == io::standard_columns());
    CHECK(io::standard_columns().size() == 12);
    const auto cols = io::parse_outfmt("6 qseqid score cigar qaln");
    CHECK(cols.columns == std::vector<column>{column::qseqid, column::score, column::cigar, column::qaln});
    const auto seven = io::parse_outfmt("7 std qlen");
    CHECK(seven.kind == io::format_kind::tabular_commented);
    CHECK(seven.columns.size() == 13);
    CHECK(seven.columns.back() == column::qlen);
    CHECK(io::parse_outfmt("json").columns.back() == column::score);
    CHECK(io::parse_outfmt("sam").kind == io::format_kind::sam);
    CHECK(io::parse_outfmt("pair").kind == io::format_kind::pair);

    auto usage = [](const std::string& spec) {
        try {
            io::parse_outfmt(spec);
        } catch (const swgpu::error& e) {
            return e.code() == exit_code::bad_command_line ? std::string(e.what()) : std::string("wrong code");
        }
        return std::string("no error");
    };
    CHECK_THAT(usage("6 qseqid bogus"), Catch::Contains("unknown --outfmt column 'bogus'"));
    CHECK_THAT(usage("10"), Catch::Contains("unknown --outfmt '10'"));
    CHECK_THAT(usage(""), Catch::Contains("--outfmt is empty"));
    CHECK_THAT(usage("sam qseqid"), Catch::Contains("takes no column list"));
    CHECK_THAT(usage("pair std"), Catch::Contains("takes no column list"));
}

TEST_CASE("every column of a hand-checked alignment (Durbin's HEAGAWGHEE/PAWHEAE)", "[output]") {
    // The optimal local alignment is AWGHE / AW-HE, score 5 + 15 - 8 + 10 + 6 = 28 (Durbin Fig. 2.5): query 5..9,
    // subject 2..5; 5 columns, 4 identities, all four positive, no mismatch, one gap of length 1.
    const auto r = run({{"q", "HEAGAWGHEE"}}, {{"other", "WWWWWW"}, {"s", "PAWHEAE"}}, durbin_scoring(), true, false);
    temp_dir dir;
    REQUIRE(r.hits.size() == 1);
    REQUIRE(r.hits[0].size() >= 1);
    const auto six = render(r, "6", dir.path / "a.tsv");
    CHECK(six.substr(0, six.find('\n') + 1) == "q\ts\t80.000\t5\t0\t1\t5\t9\t2\t5\tNA\tNA\n");
    const std::string all =
        "6 qseqid sseqid score qlen slen nident positive gaps ppos qcovhsp sstrand cigar qseq sseq qaln saln";
    const std::string first_line = [&] {
        const auto text = render(r, all, dir.path / "b.tsv");
        return text.substr(0, text.find('\n'));
    }();
    CHECK(first_line == "q\ts\t28\t10\t7\t4\t4\t1\t80.00\t50\tN/A\t2M1I2M\tAWGHE\tAW-HE\tAWGHE\tAW-HE");

    const auto json = render(r, "json", dir.path / "c.json");
    CHECK(json.substr(0, json.find('\n')) ==
          "{\"qseqid\":\"q\",\"sseqid\":\"s\",\"pident\":80.000,\"length\":5,\"mismatch\":0,\"gapopen\":1,"
          "\"qstart\":5,\"qend\":9,\"sstart\":2,\"send\":5,\"evalue\":null,\"bitscore\":null,\"score\":28}");

    const auto pair = render(r, "pair", dir.path / "d.txt");
    CHECK_THAT(pair, Catch::Contains("Query= q\n\nLength=10\n\n\n>s\nLength=7\n\n Score = 28\n"
                                     " Identities = 4/5 (80%), Positives = 4/5 (80%), Gaps = 1/5 (20%)\n\n"
                                     "Query  5  AWGHE  9\n"
                                     "          AW HE\n"
                                     "Sbjct  2  AW-HE  5\n"));
    CHECK_THAT(pair, Catch::Contains("Scoring: BLOSUM50, gap open 0, gap extend 8 (a gap of length k costs open + "
                                     "k*extend)"));

    const auto seven = render(r, "7", dir.path / "e.tsv");
    CHECK(seven.rfind("# swgpu 9.9.9 align\n# Query: q\n# Database: db.fa\n# Scoring: BLOSUM50, gap open 0, gap "
                      "extend 8 (a gap of length k costs open + k*extend)\n# Fields: query id, subject id, % "
                      "identity, alignment length, mismatches, gap opens, q. start, q. end, s. start, s. end, "
                      "evalue, bit score\n# ",
                      0) == 0);
    CHECK_THAT(seven, Catch::EndsWith("# swgpu processed 1 queries\n"));
}

TEST_CASE("a query without hits", "[output]") {
    // No letter of the query scores positively against the subject: no local alignment at all.
    const auto r = run({{"lonely", "WWWW"}}, {{"s", "DDDD"}}, durbin_scoring(), true, false);
    REQUIRE(r.hits[0].empty());
    temp_dir dir;
    CHECK(render(r, "6", dir.path / "a").empty());
    CHECK(render(r, "json", dir.path / "b").empty());
    CHECK(render(r, "7", dir.path / "c") ==
          "# swgpu 9.9.9 align\n# Query: lonely\n# Database: db.fa\n# Scoring: BLOSUM50, gap open 0, gap extend 8 (a "
          "gap of length k costs open + k*extend)\n# 0 hits found\n# swgpu processed 1 queries\n");
    CHECK_THAT(render(r, "pair", dir.path / "d"), Catch::Contains("***** No hits found *****"));
    const auto sam = render(r, "sam", dir.path / "e.sam");
    CHECK_THAT(sam, Catch::Contains("\nlonely\t4\t*\t0\t0\t*\t*\t0\t0\tWWWW\t*\n"));  // unmapped, protein SEQ kept
}

TEST_CASE("a minus-strand DNA hit: BLAST's view in tabular, flag 16 and soft clips in SAM", "[output]") {
    // The query holds the reverse complement of subject positions 11..30 between flanks, so its reverse complement
    // is CCC + segment + AAAAA; the subject's flanks (G..., T...) match none of those flank letters.
    const std::string segment = "ACGTTGCAAGCTTAGCCATG";
    const std::string subject = "GGGGGGGGGG" + segment + "TTTTTTTTTT";
    const std::string query = "TTTTT" + reverse_complement(segment) + "GGG";  // 28 nt
    REQUIRE(reverse_complement(query) == "CCC" + segment + "AAAAA");
    const scoring sc{substitution_matrix::match_mismatch(2, -3), gap_costs{5, 2}, seq_type::dna};
    const auto r = run({{"read", query}}, {{"chr", subject}}, sc, true, true);
    REQUIRE(!r.hits[0].empty());
    const auto& best = r.hits[0][0];
    CHECK(best.str == strand::minus);
    CHECK(best.score == 40);

    temp_dir dir;
    const auto tab = render(r, "6 std score sstrand cigar qseq sseq", dir.path / "a.tsv");
    CHECK(tab.substr(0, tab.find('\n')) == "read\tchr\t100.000\t20\t0\t0\t6\t25\t30\t11\tNA\tNA\t40\tminus\t20M\t" +
                                               reverse_complement(segment) + "\t" + reverse_complement(segment));
    CHECK_THAT(render(r, "pair", dir.path / "b.txt"),
               Catch::Contains(" Identities = 20/20 (100%), Gaps = 0/20 (0%)\n Strand=Plus/Minus\n\n"
                               "Query  6   " + reverse_complement(segment) + "  25\n"
                               "           ||||||||||||||||||||\n"
                               "Sbjct  30  " + reverse_complement(segment) + "  11\n"));

    // SAM, read back through HTSlib.
    render(r, "sam", dir.path / "c.sam");
    samFile* in = sam_open((dir.path / "c.sam").c_str(), "r");
    REQUIRE(in);
    sam_hdr_t* hdr = sam_hdr_read(in);
    REQUIRE(hdr);
    CHECK(sam_hdr_nref(hdr) == 1);
    CHECK(std::string(sam_hdr_tid2name(hdr, 0)) == "chr");
    CHECK(sam_hdr_tid2len(hdr, 0) == 40);
    bam1_t* b = bam_init1();
    REQUIRE(sam_read1(in, hdr, b) >= 0);
    CHECK(std::string(bam_get_qname(b)) == "read");
    CHECK(b->core.flag == BAM_FREVERSE);
    CHECK(b->core.pos == 10);  // 0-based: SAM POS 11
    std::string cigar;
    for (std::uint32_t k = 0; k < b->core.n_cigar; ++k)
        cigar += std::to_string(bam_cigar_oplen(bam_get_cigar(b)[k])) + bam_cigar_opchr(bam_get_cigar(b)[k]);
    CHECK(cigar == "3S20M5S");
    std::string seq;
    for (int k = 0; k < b->core.l_qseq; ++k) seq += seq_nt16_str[bam_seqi(bam_get_seq(b), k)];
    CHECK(seq == "CCC" + segment + "AAAAA");  // SEQ on the reference's forward strand
    CHECK(bam_aux2i(bam_aux_get(b, "AS")) == 40);
    CHECK(bam_aux2i(bam_aux_get(b, "NM")) == 0);
    CHECK(bam_aux_get(b, "ZE") == nullptr);  // no statistics in this run
    bam_destroy1(b);
    sam_hdr_destroy(hdr);
    sam_close(in);
}

TEST_CASE("finish: order, E-value threshold and re-scoring on the demo data", "[output]") {
    auto queries = io::read_all(SWGPU_SOURCE_DIR "/data/demo_queries.fa");
    auto db = io::read_all(SWGPU_SOURCE_DIR "/data/demo_db.fa");
    std::vector<std::pair<std::string, std::string>> q, d;
    for (std::size_t k = 0; k < queries.size(); ++k)
        q.emplace_back(queries.names[k], std::string(queries[k].begin(), queries[k].end()));
    for (std::size_t k = 0; k < db.size(); ++k)
        d.emplace_back(db.names[k], std::string(db[k].begin(), db[k].end()));
    const scoring sc{substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein};

    const auto r = run(q, d, sc, true, false, true, 500);
    std::size_t printed = 0;
    for (std::size_t qi = 0; qi < r.hits.size(); ++qi) {
        const auto& hits = r.hits[qi];
        for (std::size_t k = 0; k < hits.size(); ++k) {
            const auto& h = hits[k];
            const auto& subject = r.scan.subjects.at(h.subject);
            ++printed;
            // Re-scored from the operations, independently of how the alignment was found.
            CHECK(rescore(h.aln, r.queries.plus[qi], subject.span(), sc) == h.score);
            CHECK(h.evalue <= 10.0);
            if (k > 0) {
                const auto& prev = hits[k - 1];
                CHECK((prev.score > h.score || (prev.score == h.score && prev.subject < h.subject)));
            }
        }
    }
    CHECK(printed > 0);

    // Reading the database in chunks of 7 records gives the same hits, alignments and E-values.
    const auto chunked = run(q, d, sc, true, false, true, 500, 7);
    CHECK(chunked.scan.chunks == (d.size() + 6) / 7);
    CHECK(chunked.scan.residues == r.scan.residues);
    REQUIRE(chunked.hits.size() == r.hits.size());
    for (std::size_t qi = 0; qi < r.hits.size(); ++qi) {
        REQUIRE(chunked.hits[qi].size() == r.hits[qi].size());
        for (std::size_t k = 0; k < r.hits[qi].size(); ++k) {
            CHECK(chunked.hits[qi][k].subject == r.hits[qi][k].subject);
            CHECK(chunked.hits[qi][k].aln == r.hits[qi][k].aln);
            CHECK(chunked.hits[qi][k].evalue == r.hits[qi][k].evalue);
        }
    }

    // -k 3: the three best hits by score (ties: smaller subject index), before the E-value threshold.
    const auto top3 = run(q, d, sc, true, false, true, 3);
    for (std::size_t qi = 0; qi < r.hits.size(); ++qi) {
        REQUIRE(top3.scan.hits[qi].size() == 3);
        for (std::size_t k = 0; k < 3; ++k) CHECK(top3.scan.hits[qi][k] == r.scan.hits[qi][k]);
        CHECK(top3.hits[qi].size() <= 3);
    }
}

TEST_CASE("output_file: complete or absent", "[output]") {
    temp_dir dir;
    const auto target = dir.path / "out.tsv";
    SECTION("committed: the file holds everything, no temporary file is left") {
        {
            io::output_file out(target.string());
            out.write("a\t1\n");
            out.write(std::string(3 << 20, 'x'));  // past the buffer, so part of it is on disk before commit
            CHECK(!fs::exists(target));
            out.commit();
        }
        CHECK(dir.entries() == std::vector<std::string>{"out.tsv"});
        CHECK(fs::file_size(target) == 4 + (3u << 20));
    }
    SECTION("not committed (a failed run): nothing is left, an existing file is untouched") {
        {
            io::output_file out(target.string());
            out.write(std::string(3 << 20, 'x'));
        }
        CHECK(dir.entries().empty());
        std::ofstream(target) << "previous results\n";
        {
            io::output_file out(target.string());
            out.write("partial");
        }
        CHECK(dir.entries() == std::vector<std::string>{"out.tsv"});
        CHECK(slurp(target) == "previous results\n");
    }
    SECTION("unwritable destinations are output errors (exit code 5)") {
        auto code_of = [](const std::string& path, bool write) {
            try {
                io::output_file out(path);
                if (write) {
                    out.write("data\n");
                    out.commit();
                }
            } catch (const swgpu::error& e) {
                return static_cast<int>(e.code());
            }
            return 0;
        };
        CHECK(code_of((dir.path / "no-such-dir" / "out.tsv").string(), false) == 5);
        CHECK(code_of(dir.path.string(), false) == 5);  // a directory
        if (fs::exists("/dev/full")) CHECK(code_of("/dev/full", true) == 5);
        CHECK(dir.entries().empty());
    }
}

TEST_CASE("reverse complement", "[output]") {
    CHECK(reverse_complement(std::string_view("ACGTN")) == "NACGT");
    CHECK(reverse_complement(std::string_view("acgu")) == "acgt");
    CHECK(reverse_complement(std::string_view("RYKMBVDHSW")) == "WSDHBVKMRY");
    CHECK(reverse_complement(std::string_view("AC-GT")) == "AC-GT");
    CHECK(reverse_complement(reverse_complement(std::string_view("GATTACAN-RYKM"))) == "GATTACAN-RYKM");
}
