// Output formats and the finish step, on alignments whose every printed value is known by hand (Durbin et al.'s
// HEAGAWGHEE/PAWHEAE example, constructed plus- and minus-strand DNA hits), plus the atomic output file.
#include <catch2/catch.hpp>

#include <htslib/sam.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/statistics.hpp"
#include "core/align/strand.hpp"
#include "core/thread_pool.hpp"
#include "io/output_file.hpp"
#include "io/align/output.hpp"
#include "io/align/sequence_reader.hpp"

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
    function_chunks chunks(reader);
    function_backend backend(pass);
    r.scan = scan_database(r.queries, r.sc, max_hits, chunks, backend);
    finish_options fo;
    if (statistics) {
        r.stats.emplace(r.sc, r.scan.residues, r.scan.sequences);
        fo.statistics = &*r.stats;
    }
    r.hits = finish_hits(r.scan, r.queries, r.sc, fo, pool);
    return r;
}

std::string render(const run_result& r, const io::output_format& fmt, const fs::path& file) {
    io::output_file out(file.string());
    io::write_results(fmt, io::run_header{"9.9.9", "swgpu align q.fa db.fa", "q.fa", "db.fa", ""},
                      io::results_view{r.sc, r.queries, r.scan, r.hits}, out);
    out.commit();
    return slurp(file);
}

std::string render(const run_result& r, const std::string& outfmt, const fs::path& file) {
    return render(r, io::parse_outfmt(outfmt), file);
}

// --outfmt with --eqx.
io::output_format eqx(const std::string& outfmt) {
    auto fmt = io::parse_outfmt(outfmt);
    fmt.eqx = true;
    return fmt;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

std::vector<std::string> fields_of(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string f; std::getline(in, f, '\t');) out.push_back(f);
    return out;
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
    CHECK(io::parse_outfmt("paf").kind == io::format_kind::paf);
    CHECK(!io::parse_outfmt("paf").eqx);  // --eqx is a flag of its own, not part of --outfmt
    CHECK(io::needs_alignments(io::parse_outfmt("paf")));
    CHECK(!io::needs_alignments(io::parse_outfmt("6 qseqid sseqid score")));

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
    CHECK_THAT(usage("paf qseqid"), Catch::Contains("takes no column list"));
    CHECK_THAT(usage("bogus"), Catch::Contains("paf"));  // the message lists the formats
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
    CHECK_THAT(pair, Catch::Contains("Query= q\n\nLength=10\n\n\n> s\nLength=7\n\n Score = 28\n"
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

TEST_CASE("qcovhsp and pair's percentages as BLAST+ 2.12 prints them: 100 for the whole only, else rounded half up to at most 99",
          "[output]") {
    // Each (span, qlen) -> qcovhsp as blastn and blastp 2.12.0+ printed it for constructed pairs whose HSP covered
    // `span` of a `qlen`-residue query (the blastn case below reproduces them where BLAST is installed).
    struct measured {
        std::int64_t span, qlen;
        int blast;
    };
    const measured cases[] = {
        {300, 300, 100}, {299, 300, 99}, {297, 300, 99}, {300, 301, 99}, {199, 200, 99}, {998, 1000, 99},
        {151, 300, 50},  {20, 300, 7},   {13, 300, 4},   {102, 200, 51}, {25, 1000, 3},  {45, 1000, 5},
        {18, 1000, 2},   {25, 2000, 1},  {17, 3000, 1},  {28, 5000, 1},  {14, 5000, 0},  {16, 4000, 0},
        {200, 333, 60},  {24, 700, 3},
    };
    for (const auto& c : cases) {
        INFO(c.span << " of " << c.qlen);
        CHECK(io::blast_percent(c.span, c.qlen) == c.blast);
    }
    // blastp 2.12's pairwise output for a 300-residue pair with one substitution:
    // " Identities = 299/300 (99%), Positives = 299/300 (99%), Gaps = 0/300 (0%)".
    CHECK(io::blast_percent(299, 300) == 99);
    CHECK(io::blast_percent(0, 300) == 0);
    {
        // That pair through the output: 300 residues, A against W (BLOSUM62 -3) at position 151, so the alignment is
        // all 300 columns with 299 identities and positives.
        std::string q;
        std::uint64_t x = 99;
        for (int k = 0; k < 300; ++k) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            q += "ARNDCQEGHILKMFPSTWYV"[(x >> 33) % 20];
        }
        q[150] = 'A';
        std::string s = q;
        s[150] = 'W';
        const auto r = run({{"q", q}}, {{"s", s}},
                           scoring{substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein}, true,
                           false);
        temp_dir dir;
        CHECK_THAT(render(r, "pair", dir.path / "pair.txt"),
                   Catch::Contains(" Identities = 299/300 (99%), Positives = 299/300 (99%), Gaps = 0/300 (0%)\n"));
    }

    // The same through the output: a 300-base query whose only hit covers 299 bases prints 99, not 100.
    std::string query;
    std::uint64_t state = 12345;
    for (int k = 0; k < 300; ++k) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        query += "ACGT"[(state >> 33) % 4];
    }
    const std::vector<std::pair<std::string, std::string>> db = {
        {"s299", query.substr(0, 299)}, {"s298", query.substr(1, 298)}, {"s150", query.substr(70, 150)},
        {"s20", query.substr(140, 20)}};
    const scoring sc{substitution_matrix::match_mismatch(2, -3), gap_costs{5, 2}, seq_type::dna};
    const auto r = run({{"q", query}}, db, sc, true, false);
    temp_dir dir;
    std::map<std::string, std::string> ours;
    for (const auto& l : lines_of(render(r, "6 sseqid qstart qend qlen qcovhsp", dir.path / "cov.tsv"))) {
        const auto f = fields_of(l);
        ours[f.at(0)] = f.at(1) + " " + f.at(2) + " " + f.at(3) + " " + f.at(4);
    }
    CHECK(ours.at("s299") == "1 299 300 99");
    CHECK(ours.at("s298") == "2 299 300 99");
    CHECK(ours.at("s150") == "71 220 300 50");
    CHECK(ours.at("s20") == "141 160 300 7");

    if (std::system("command -v blastn >/dev/null 2>&1") != 0) {
        WARN("blastn is not installed (Debian package ncbi-blast+): qcovhsp against blastn skipped");
        return;
    }
    {
        std::ofstream q(dir.path / "q.fa"), s(dir.path / "s.fa");
        q << ">q\n" << query << "\n";
        for (const auto& [name, letters] : db) s << ">" << name << "\n" << letters << "\n";
    }
    const std::string cmd = "cd '" + dir.path.string() + "' && blastn -task blastn -dust no -word_size 7 -strand plus "
                            "-evalue 1e6 -max_hsps 1 -query q.fa -subject s.fa -outfmt '6 sseqid qstart qend qlen "
                            "qcovhsp' > blast.tsv 2> blast.err";
    REQUIRE(std::system(cmd.c_str()) == 0);
    std::map<std::string, std::string> blast;
    for (const auto& l : lines_of(slurp(dir.path / "blast.tsv"))) {
        const auto f = fields_of(l);
        blast[f.at(0)] = f.at(1) + " " + f.at(2) + " " + f.at(3) + " " + f.at(4);
    }
    CHECK(blast == ours);
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
    SECTION("written out of order (write_at, from several threads): complete once committed, else absent") {
        const std::string block_a(3 << 20, 'a'), block_b(1 << 20, 'b');
        std::ofstream(target) << "previous results\n";
        {
            io::output_file out(target.string());
            REQUIRE(out.positional());
            out.reserve(block_a.size() + block_b.size() + 5);
            std::thread second([&] { out.write_at(5 + block_a.size(), block_b); });
            out.write_at(5, block_a);
            second.join();
            out.write_at(0, "head:");
            CHECK(slurp(target) == "previous results\n");
            out.commit();
        }
        CHECK(dir.entries() == std::vector<std::string>{"out.tsv"});
        CHECK(slurp(target) == "head:" + block_a + block_b);
        {
            io::output_file out(target.string());
            out.reserve(8 << 20);
            out.write_at(1 << 20, "partial");
        }
        CHECK(dir.entries() == std::vector<std::string>{"out.tsv"});
        CHECK(slurp(target) == "head:" + block_a + block_b);
    }
    SECTION("write_at: not after write(), not to stdout") {
        {
            io::output_file out(target.string());
            out.write("buffered");
            CHECK_THROWS_AS(out.write_at(0, "x"), swgpu::error);
        }
        io::output_file out("-");
        CHECK(!out.positional());
        CHECK_THROWS_AS(out.write_at(0, "x"), swgpu::error);
        CHECK(dir.entries().empty());
    }
}

namespace {

// The SAM records (header lines dropped), split into fields.
std::vector<std::vector<std::string>> sam_records(const std::string& text) {
    std::vector<std::vector<std::string>> out;
    for (const auto& line : lines_of(text))
        if (!line.empty() && line[0] != '@') out.push_back(fields_of(line));
    return out;
}

// A CIGAR's (length, op) pairs.
std::vector<std::pair<std::int64_t, char>> cigar_ops(const std::string& cigar) {
    std::vector<std::pair<std::int64_t, char>> out;
    std::int64_t n = 0;
    for (const char c : cigar) {
        if (c >= '0' && c <= '9') {
            n = 10 * n + (c - '0');
        } else {
            out.emplace_back(n, c);
            n = 0;
        }
    }
    return out;
}

}  // namespace

TEST_CASE("PAF output and =/X CIGARs of a protein hit (Durbin's HEAGAWGHEE/PAWHEAE)", "[output]") {
    // AWGHE / AW-HE (query 5..9, subject 2..5, 1-based): PAF's 0-based half-open intervals are query [4, 9) and subject
    // [1, 5); 4 identities in 5 columns; NM = 0 mismatches + 1 gap column. The second hit is W against the first W of
    // WWWWWW (score 15, query [5, 6), subject [0, 1)); no statistics in this run, so no ZE tag.
    const auto r = run({{"q", "HEAGAWGHEE"}}, {{"other", "WWWWWW"}, {"s", "PAWHEAE"}}, durbin_scoring(), true, false);
    temp_dir dir;
    CHECK(render(r, "paf", dir.path / "a.paf") ==
          "q\t10\t4\t9\t+\ts\t7\t1\t5\t4\t5\t255\tNM:i:1\tAS:i:28\tcg:Z:2M1I2M\n"
          "q\t10\t5\t6\t+\tother\t6\t0\t1\t1\t1\t255\tNM:i:0\tAS:i:15\tcg:Z:1M\n");
    CHECK(render(r, eqx("paf"), dir.path / "b.paf") ==
          "q\t10\t4\t9\t+\ts\t7\t1\t5\t4\t5\t255\tNM:i:1\tAS:i:28\tcg:Z:2=1I2=\n"
          "q\t10\t5\t6\t+\tother\t6\t0\t1\t1\t1\t255\tNM:i:0\tAS:i:15\tcg:Z:1=\n");
    CHECK(render(r, eqx("6 qseqid sseqid cigar"), dir.path / "c.tsv") == "q\ts\t2=1I2=\nq\tother\t1=\n");
    CHECK(render(r, eqx("json qseqid cigar"), dir.path / "d.json") ==
          "{\"qseqid\":\"q\",\"cigar\":\"2=1I2=\"}\n{\"qseqid\":\"q\",\"cigar\":\"1=\"}\n");
    // SAM: soft clips around the =/X operations (query 0..3 and 9 unaligned).
    const auto plain = sam_records(render(r, "sam", dir.path / "e.sam"));
    const auto with_eqx = sam_records(render(r, eqx("sam"), dir.path / "f.sam"));
    REQUIRE(plain.size() == 2);
    REQUIRE(with_eqx.size() == 2);
    CHECK(plain[0][5] == "4S2M1I2M1S");
    CHECK(with_eqx[0][5] == "4S2=1I2=1S");
    CHECK(with_eqx[1][5] == "5S1=4S");
    // Only the CIGAR changes.
    for (std::size_t k = 0; k < 2; ++k)
        for (std::size_t f = 0; f < plain[k].size(); ++f)
            if (f != 5) CHECK(plain[k][f] == with_eqx[k][f]);

    // No hits: no PAF line (as minimap2).
    const auto none = run({{"lonely", "WWWW"}}, {{"s", "DDDD"}}, durbin_scoring(), true, false);
    CHECK(render(none, "paf", dir.path / "g.paf").empty());
}

TEST_CASE("PAF output of plus- and minus-strand DNA hits: forward-strand coordinates and =/X CIGARs", "[output]") {
    // The subject is G*10 + A + G*10 + B + G*10 (84 nt; A at [10, 40), B at [50, 74)). The query (78 nt) is
    // T*8 + X + T*8 + revcomp(Y) + T*8 with
    //   X = A with a substitution at A[10] (T -> G) and A[20] (a C between G and A) deleted:  29 nt at [8, 37);
    //   Y = B with a substitution at B[5] (C -> G) and an A inserted between B[11] = G and B[12] = T: 25 nt.
    // The flanks (T or A against G) never match, and the gap has one place only (its neighbours differ from it), so
    //   plus:  20M1D9M against subject [10, 40), 28 identities + 1 mismatch + 1 gap column = 30 columns, NM 2,
    //          score 28*2 - 3 - (5 + 2) = 46;
    //   minus: revcomp(query) = A*8 + Y + A*8 + revcomp(X) + A*8 holds Y at [8, 33), i.e. the query's plus strand
    //          [78-33, 78-8) = [45, 70); 12M1I12M against subject [50, 74) (subject-forward, as SAM), 23 identities,
    //          25 columns, NM 2, score 23*2 - 3 - 7 = 36.
    // With =/X: 10=1X9=1D9= and 5=1X6=1I12=.
    const std::string A = "ACGTTCAGCATGGACTCTAGCAATCGCTGA", B = "TGCATCCAGTAGTCAGGCTAACGT";
    const std::string X = A.substr(0, 10) + "G" + A.substr(11, 9) + A.substr(21);
    const std::string Y = B.substr(0, 5) + "G" + B.substr(6, 6) + "A" + B.substr(12);
    REQUIRE(X.size() == 29);
    REQUIRE(Y.size() == 25);
    const std::string subject = std::string(10, 'G') + A + std::string(10, 'G') + B + std::string(10, 'G');
    const std::string flank(8, 'T');
    const std::string query = flank + X + flank + reverse_complement(Y) + flank;
    REQUIRE(subject.size() == 84);
    REQUIRE(query.size() == 78);
    const scoring sc{substitution_matrix::match_mismatch(2, -3), gap_costs{5, 2}, seq_type::dna};
    const auto r = run({{"read", query}}, {{"chr", subject}}, sc, true, true, true);
    REQUIRE(r.hits[0].size() == 2);
    temp_dir dir;

    // BLAST's view of the same hits, by hand: 1-based, sstart > send on the minus strand.
    const auto tab = lines_of(render(r, "6 sstrand qstart qend sstart send nident length mismatch gaps score evalue",
                                     dir.path / "a.tsv"));
    REQUIRE(tab.size() == 2);
    CHECK(tab[0].rfind("plus\t9\t37\t11\t40\t28\t30\t1\t1\t46\t", 0) == 0);
    CHECK(tab[1].rfind("minus\t46\t70\t74\t51\t23\t25\t1\t1\t36\t", 0) == 0);
    const std::string evalue0 = fields_of(tab[0]).back(), evalue1 = fields_of(tab[1]).back();
    CHECK(evalue0 != "NA");

    // ZE:Z is the E-value exactly as the tabular format prints it.
    const auto paf = lines_of(render(r, "paf", dir.path / "b.paf"));
    REQUIRE(paf.size() == 2);
    CHECK(paf[0] == "read\t78\t8\t37\t+\tchr\t84\t10\t40\t28\t30\t255\tNM:i:2\tAS:i:46\tZE:Z:" + evalue0 +
                        "\tcg:Z:20M1D9M");
    CHECK(paf[1] == "read\t78\t45\t70\t-\tchr\t84\t50\t74\t23\t25\t255\tNM:i:2\tAS:i:36\tZE:Z:" + evalue1 +
                        "\tcg:Z:12M1I12M");
    const auto paf_eqx = lines_of(render(r, eqx("paf"), dir.path / "c.paf"));
    REQUIRE(paf_eqx.size() == 2);
    CHECK_THAT(paf_eqx[0], Catch::EndsWith("\tAS:i:46\tZE:Z:" + evalue0 + "\tcg:Z:10=1X9=1D9="));
    CHECK_THAT(paf_eqx[1], Catch::EndsWith("\tAS:i:36\tZE:Z:" + evalue1 + "\tcg:Z:5=1X6=1I12="));

    CHECK(render(r, eqx("6 sstrand cigar"), dir.path / "d.tsv") == "plus\t10=1X9=1D9=\nminus\t5=1X6=1I12=\n");
    CHECK(render(r, "6 sstrand cigar", dir.path / "e.tsv") == "plus\t20M1D9M\nminus\t12M1I12M\n");

    // SAM: POS 11 and 51; the minus record's clips are those of the reverse-complemented query (8 before, 78 - 33 =
    // 45 after); NM 2 either way.
    const auto sam = sam_records(render(r, eqx("sam"), dir.path / "f.sam"));
    REQUIRE(sam.size() == 2);
    CHECK(sam[0][1] == "0");
    CHECK(sam[0][3] == "11");
    CHECK(sam[0][5] == "8S10=1X9=1D9=41S");
    CHECK(sam[1][1] == "272");  // 16 (minus) + 256 (secondary)
    CHECK(sam[1][3] == "51");
    CHECK(sam[1][5] == "8S5=1X6=1I12=45S");
    CHECK(sam[1][9] == "*");  // a secondary record leaves SEQ and QUAL to the primary one
    CHECK(sam[1][10] == "*");
    CHECK(std::find(sam[1].begin(), sam[1].end(), "NM:i:2") != sam[1].end());
    const auto sam_plain = sam_records(render(r, "sam", dir.path / "g.sam"));
    REQUIRE(sam_plain.size() == 2);
    CHECK(sam_plain[0][5] == "8S20M1D9M41S");
    CHECK(sam_plain[1][5] == "8S12M1I12M45S");

    // --no-evalue: no ZE tag.
    const auto no_stats = run({{"read", query}}, {{"chr", subject}}, sc, true, true, false);
    CHECK(render(no_stats, "paf", dir.path / "h.paf") ==
          "read\t78\t8\t37\t+\tchr\t84\t10\t40\t28\t30\t255\tNM:i:2\tAS:i:46\tcg:Z:20M1D9M\n"
          "read\t78\t45\t70\t-\tchr\t84\t50\t74\t23\t25\t255\tNM:i:2\tAS:i:36\tcg:Z:12M1I12M\n");
}

TEST_CASE("PAF output and =/X CIGARs agree with the tabular columns on the demo data", "[output]") {
    auto queries = io::read_all(SWGPU_SOURCE_DIR "/data/demo_queries.fa");
    auto db = io::read_all(SWGPU_SOURCE_DIR "/data/demo_db.fa");
    std::vector<std::pair<std::string, std::string>> q, d;
    for (std::size_t k = 0; k < queries.size(); ++k)
        q.emplace_back(queries.names[k], std::string(queries[k].begin(), queries[k].end()));
    for (std::size_t k = 0; k < db.size(); ++k)
        d.emplace_back(db.names[k], std::string(db[k].begin(), db[k].end()));
    const scoring sc{substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein};
    const auto r = run(q, d, sc, true, false, true, 500);
    temp_dir dir;
    const auto tab = lines_of(render(
        r, "6 qseqid qlen qstart qend sseqid slen sstart send nident length mismatch gaps score evalue cigar",
        dir.path / "a.tsv"));
    const auto paf = lines_of(render(r, "paf", dir.path / "b.paf"));
    const auto paf_eqx = lines_of(render(r, eqx("paf"), dir.path / "c.paf"));
    REQUIRE(!tab.empty());
    REQUIRE(paf.size() == tab.size());
    REQUIRE(paf_eqx.size() == tab.size());
    for (std::size_t k = 0; k < tab.size(); ++k) {
        const auto t = fields_of(tab[k]), p = fields_of(paf[k]), e = fields_of(paf_eqx[k]);
        REQUIRE(p.size() == 16);
        const auto num = [](const std::string& s) { return std::stoll(s); };
        CHECK(p[0] == t[0]);
        CHECK(p[1] == t[1]);
        CHECK(num(p[2]) == num(t[2]) - 1);
        CHECK(p[3] == t[3]);
        CHECK(p[4] == "+");
        CHECK(p[5] == t[4]);
        CHECK(p[6] == t[5]);
        CHECK(num(p[7]) == num(t[6]) - 1);
        CHECK(p[8] == t[7]);
        CHECK(p[9] == t[8]);
        CHECK(p[10] == t[9]);
        CHECK(p[11] == "255");
        CHECK(p[12] == "NM:i:" + std::to_string(num(t[10]) + num(t[11])));
        CHECK(p[13] == "AS:i:" + t[12]);
        CHECK(p[14] == "ZE:Z:" + t[13]);
        CHECK(p[15] == "cg:Z:" + t[14]);
        // --eqx: the = runs add up to nident, the X runs to mismatch, and merged back into M they give the CIGAR.
        REQUIRE(e.size() == 16);
        CHECK(std::equal(e.begin(), e.begin() + 15, p.begin()));
        std::int64_t eq = 0, diff = 0;
        std::string merged;
        std::int64_t run_m = 0;
        for (const auto& [n, op] : cigar_ops(e[15].substr(5))) {
            if (op == '=' || op == 'X') {
                (op == '=' ? eq : diff) += n;
                run_m += n;
                continue;
            }
            if (run_m) merged += std::to_string(run_m) + "M";
            run_m = 0;
            merged += std::to_string(n) + op;
        }
        if (run_m) merged += std::to_string(run_m) + "M";
        CHECK(eq == num(t[8]));
        CHECK(diff == num(t[10]));
        CHECK(merged == t[14]);
    }
}

namespace {

// SAM as align_run writes it: MAPQ from the scan's hits and the run's statistics, with an @RG line when given.
std::string render_sam(const run_result& r, const fs::path& file, const std::string& read_group = "") {
    io::output_file out(file.string());
    io::results_view view{r.sc, r.queries, r.scan, r.hits, r.scan.hits, r.stats ? &*r.stats : nullptr};
    io::write_results(io::parse_outfmt("sam"),
                      io::run_header{"9.9.9", "swgpu align q.fq db.fa", "q.fq", "db.fa", read_group}, view, out);
    out.commit();
    return slurp(file);
}

std::string random_dna(std::size_t n, std::mt19937& rng) {
    std::string s(n, 'A');
    for (auto& c : s) c = "ACGT"[rng() % 4];
    return s;
}

}  // namespace

TEST_CASE("MAPQ rule: 3.0103 per bit between the best and the best other hit, 0 when tied, at most 60",
          "[output]") {
    CHECK(io::mapping_quality(50, 50) == 0);
    CHECK(io::mapping_quality(50, 52) == 0);  // a printed best that scores below another (E-value order)
    CHECK(io::mapping_quality(50, 49) == 3);
    CHECK(io::mapping_quality(50, 45) == 15);
    CHECK(io::mapping_quality(50, 40) == 30);
    CHECK(io::mapping_quality(50, 30.1) == 60);
    CHECK(io::mapping_quality(500, 0) == 60);
}

TEST_CASE("option --read-group: the @RG fields as bwa mem -R takes them", "[output]") {
    CHECK(io::parse_read_group("ID:x\\tSM:y") == "ID:x\tSM:y");
    CHECK(io::parse_read_group("@RG\\tID:x\\tSM:y\\tPL:ILLUMINA") == "ID:x\tSM:y\tPL:ILLUMINA");
    CHECK(io::parse_read_group("@RG\tID:x\tSM:y") == "ID:x\tSM:y");
    CHECK(io::parse_read_group("ID:lane 1") == "ID:lane 1");
    const auto usage = [](const std::string& text) {
        try {
            io::parse_read_group(text);
        } catch (const error& e) {
            CHECK(e.code() == exit_code::bad_command_line);
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(usage("SM:y"), Catch::Contains("no ID:VALUE field"));
    CHECK_THAT(usage("ID:"), Catch::Contains("no ID:VALUE field"));
    CHECK_THAT(usage("ID:x\\tsample"), Catch::Contains("field 'sample' is not TAG:VALUE"));
    CHECK_THAT(usage("ID:x\\t"), Catch::Contains("field '' is not TAG:VALUE"));
    CHECK_THAT(usage("ID:x\nSM:y"), Catch::Contains("line break"));
}

TEST_CASE("SAM of reads: QUAL from FASTQ (reversed on the minus strand), MAPQ, secondaries, @RG", "[output]") {
    // chr1 holds segment A at 100; chr2 holds A with one substitution in its middle at 60, and the reverse complement
    // of segment B at 30. Read a is A (best on chr1, second on chr2: MAPQ from their bit scores), read b is B (one
    // place, on chr2's minus strand), read c is random (its hits are cleared below: a read with no hit passing -e).
    std::mt19937 rng(7);
    const std::string A = random_dna(60, rng), B = random_dna(50, rng), C = random_dna(40, rng);
    std::string A2 = A;
    A2[30] = A2[30] == 'A' ? 'C' : 'A';
    const std::string chr1 = random_dna(100, rng) + A + random_dna(100, rng);
    const std::string chr2 = random_dna(30, rng) + reverse_complement(B) + random_dna(30, rng) + A2 +
                             random_dna(60, rng);
    const scoring sc{substitution_matrix::match_mismatch(2, -3), gap_costs{5, 2}, seq_type::dna};
    auto r = run({{"a", A}, {"b", B}, {"c", C}}, {{"chr1", chr1}, {"chr2", chr2}}, sc, true, true, true, 3);
    std::string qa, qb, qc;
    for (std::size_t k = 0; k < A.size(); ++k) qa += static_cast<char>('!' + k % 42);
    for (std::size_t k = 0; k < B.size(); ++k) qb += static_cast<char>('#' + k % 37);
    qc.assign(C.size(), 'F');
    r.queries.plus.qualities = qa + qb + qc;
    r.hits[2].clear();
    REQUIRE(r.hits[0].size() >= 2);
    REQUIRE(r.hits[1].size() >= 1);
    REQUIRE(r.scan.subjects.at(r.hits[0][0].subject).name == "chr1");
    REQUIRE(r.scan.subjects.at(r.hits[0][1].subject).name == "chr2");
    REQUIRE(r.hits[1][0].str == strand::minus);

    temp_dir dir;
    const std::string text = render_sam(r, dir.path / "a.sam", "ID:grp1\tSM:s1");
    CHECK_THAT(text, Catch::Contains("\n@RG\tID:grp1\tSM:s1\n"));
    const auto recs = sam_records(text);
    std::vector<std::vector<std::string>> a, b, c;
    for (const auto& f : recs) (f[0] == "a" ? a : f[0] == "b" ? b : c).push_back(f);
    for (const auto& f : recs) CHECK(f.back() == "RG:Z:grp1");

    // Read a: primary on chr1 at 101, QUAL as read; MAPQ from the bits of chr1's and chr2's scores (a one-base
    // substitution: about 5 raw points); the others secondary with MAPQ 0 and SEQ, QUAL "*".
    REQUIRE(a.size() == r.hits[0].size());
    CHECK(a[0][1] == "0");
    CHECK(a[0][2] == "chr1");
    CHECK(a[0][3] == "101");
    CHECK(a[0][9] == A);
    CHECK(a[0][10] == qa);
    const int expected = io::mapping_quality(r.stats->bit_score(r.hits[0][0].score),
                                             r.stats->bit_score(r.hits[0][1].score));
    CHECK(expected > 3);
    CHECK(expected < 60);
    CHECK(a[0][4] == std::to_string(expected));
    for (std::size_t k = 1; k < a.size(); ++k) {
        CHECK((std::stoi(a[k][1]) & 256) != 0);
        CHECK(a[k][4] == "0");
        CHECK(a[k][9] == "*");
        CHECK(a[k][10] == "*");
    }
    // Read b: minus strand, SEQ its reverse complement and QUAL reversed; no other hit comes near: MAPQ 60.
    REQUIRE(!b.empty());
    CHECK(b[0][1] == "16");
    CHECK(b[0][2] == "chr2");
    CHECK(b[0][3] == "31");
    CHECK(b[0][4] == "60");
    CHECK(b[0][9] == reverse_complement(B));
    CHECK(b[0][10] == std::string(qb.rbegin(), qb.rend()));
    // Read c: unmapped, SEQ and QUAL as read.
    REQUIRE(c.size() == 1);
    CHECK(std::vector<std::string>(c[0].begin(), c[0].begin() + 11) ==
          std::vector<std::string>{"c", "4", "*", "0", "0", "*", "*", "0", "0", C, qc});

    // An exact second copy ties: MAPQ 0. Without statistics (--no-evalue): 255.
    auto tied = run({{"a", A}}, {{"chr1", chr1}, {"chr3", chr1}}, sc, true, true, true, 2);
    REQUIRE(tied.hits[0].size() == 2);
    REQUIRE(tied.hits[0][1].score == tied.hits[0][0].score);
    CHECK(sam_records(render_sam(tied, dir.path / "b.sam"))[0][4] == "0");
    tied.stats.reset();
    CHECK(sam_records(render_sam(tied, dir.path / "c.sam"))[0][4] == "255");
    // FASTA reads: QUAL "*".
    r.queries.plus.qualities.clear();
    CHECK(sam_records(render_sam(r, dir.path / "d.sam"))[0][10] == "*");
}

TEST_CASE("reverse complement", "[output]") {
    CHECK(reverse_complement(std::string_view("ACGTN")) == "NACGT");
    CHECK(reverse_complement(std::string_view("acgu")) == "acgt");
    CHECK(reverse_complement(std::string_view("RYKMBVDHSW")) == "WSDHBVKMRY");
    CHECK(reverse_complement(std::string_view("AC-GT")) == "AC-GT");
    CHECK(reverse_complement(reverse_complement(std::string_view("GATTACAN-RYKM"))) == "GATTACAN-RYKM");
}
