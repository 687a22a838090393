// What `swgpu align` and `swgpu makedb` make of their inputs: the sequence type (--seqtype auto's rule, IUPAC codes,
// mixed files, --batch files typed one by one), outputs that would replace an input, counts on the command line, and
// the small checks of makedb and of matrices' default gap costs. Each case was a wrong answer with exit 0 or a lost
// file before; the tests run the built program as a user does, except the rule itself, tested on sets directly.
#include <catch2/catch.hpp>
#include <htslib/bgzf.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_support.hpp"
#include "core/error.hpp"
#include "core/align/scoring.hpp"
#include "core/align/sequence.hpp"
#include "core/align/strand.hpp"
#include "gpu/gpu.hpp"

namespace fs = std::filesystem;
using swgpu::testing::fields_of;
using swgpu::testing::lines_of;
using swgpu::testing::one_error_line;
using swgpu::testing::program_result;
using swgpu::testing::run_program;
using swgpu::testing::slurp;
using swgpu::testing::temp_dir;

namespace {

std::string write(const temp_dir& dir, const std::string& name, const std::string& content) {
    std::ofstream(dir / name, std::ios::binary) << content;
    return dir / name;
}

std::string random_dna(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string s(n, 'A');
    for (auto& c : s) c = "ACGT"[rng() % 4];
    return s;
}

// Protein letters with roughly natural frequencies (ACGTN are about a quarter of them).
std::string random_protein(std::size_t n, std::uint64_t seed) {
    static const std::string pool = "AAAAAAAARRRRRNNNNDDDDDCCQQQQEEEEEEGGGGGGGHHIIIIILLLLLLLLLKKKKKKMMFFFFPPPPPSSSSSSS"
                                    "TTTTTWYYYVVVVVV";
    std::mt19937_64 rng(seed);
    std::string s(n, 'A');
    for (auto& c : s) c = pool[rng() % pool.size()];
    return s;
}

swgpu::sequence_set set_of(const std::vector<std::string>& records) {
    swgpu::sequence_set s;
    s.source = "test.fa";
    for (std::size_t k = 0; k < records.size(); ++k) s.add("r" + std::to_string(k + 1), records[k]);
    return s;
}

program_result align(const std::string& args) { return run_program("align --backend cpu " + args); }

}  // namespace

TEST_CASE("the type rule: DNA when at least 90 % of the letters are ACGTUN, every record checked", "[seqtype]") {
    using swgpu::seq_type;
    const std::string genome = random_dna(300, 1);
    std::string iupac = genome;
    iupac[40] = 'K';
    iupac[200] = 'Y';
    CHECK(swgpu::detect_type(set_of({iupac})) == seq_type::dna);
    // 91 % ACGT, the rest ambiguity codes and X: DNA. 89 %: protein.
    std::string ambiguous = random_dna(100, 2);
    for (int k = 0; k < 9; ++k) ambiguous[k * 10] = "RYKMSWBDX"[k];
    CHECK(swgpu::detect_type(set_of({ambiguous})) == seq_type::dna);
    ambiguous[95] = 'V', ambiguous[96] = 'H';
    CHECK(swgpu::detect_type(set_of({ambiguous})) == seq_type::protein);
    CHECK(swgpu::detect_type(set_of({"acgtnacgtuacgt"})) == seq_type::dna);  // any case, U and N
    CHECK(swgpu::detect_type(set_of({random_protein(400, 3)})) == seq_type::protein);
    CHECK(swgpu::detect_type(set_of({})) == seq_type::protein);

    // Mixed files: the first record that disagrees with its file.
    const auto dna_file = set_of({genome, random_dna(80, 4), random_protein(60, 5), genome});
    CHECK(swgpu::detect_type(dna_file) == seq_type::dna);
    CHECK(swgpu::first_disagreeing(dna_file, seq_type::dna) == 2);
    // A short peptide in a DNA file is caught by its letters. In a protein file nothing disagrees (every nucleotide
    // string is a protein string, as blastp reads it): a 50-residue ACGT record is counted for a warning, a short
    // ACGT-only peptide is not typed on its own.
    CHECK(swgpu::first_disagreeing(set_of({genome, "MELLK"}), seq_type::dna) == 1);
    const auto protein_file = set_of({random_protein(300, 6), "GAGTACG", random_protein(200, 7), random_dna(50, 8),
                                      std::string(200, 'A')});
    CHECK(swgpu::detect_type(protein_file) == seq_type::protein);
    CHECK(swgpu::first_disagreeing(protein_file, seq_type::protein) == protein_file.size());
    swgpu::nucleotide_like odd;
    odd.add(protein_file, 11);
    CHECK(odd.count == 2);
    CHECK(odd.first_record == 14);
    CHECK(odd.warning("p.fa") ==
          "p.fa:r4 (record 14): its letters look like DNA (100 % of its 50 letters are ACGTUN); read as protein, as "
          "the file is (2 such records in all)");
    // A file is typed by its leading records (type_window residues): a protein tail does not make a genome protein.
    std::vector<std::string> leading(5, random_dna(std::size_t(swgpu::type_window / 4), 12));
    leading.push_back(random_protein(std::size_t(swgpu::type_window) * 2, 13));
    CHECK(swgpu::detect_type(set_of(leading)) == seq_type::dna);
    CHECK(swgpu::first_disagreeing(set_of({genome, iupac}), seq_type::dna) == 2);  // none: size()

    // Large sets are checked in parallel slices: the first odd record is still the one reported.
    std::vector<std::string> many(4000, random_dna(2000, 9));
    many[3100] = random_protein(2000, 10);
    many[3900] = random_protein(2000, 11);
    CHECK(swgpu::first_disagreeing(set_of(many), seq_type::dna) == 3100);
    try {
        swgpu::throw_mixed_types(dna_file, 2, seq_type::dna);
        FAIL("no error");
    } catch (const swgpu::error& e) {
        CHECK(e.code() == swgpu::exit_code::bad_input);
        CHECK_THAT(std::string(e.what()), Catch::StartsWith("test.fa:r3 (record 3): holds letters") &&
                                              Catch::Contains("--seqtype dna or --seqtype protein"));
    }
}

TEST_CASE("IUPAC codes leave reads and a genome DNA: both strands, the true locus first", "[seqtype][cli]") {
    temp_dir dir("swgpu-iupac");
    std::string genome = random_dna(300, 21);
    genome[57] = 'K';
    genome[233] = 'Y';
    // read_minus: the reverse complement of genome[100, 160) with an R and a Y; read_plus: genome[180, 240) with an R.
    std::string minus_part = genome.substr(100, 60);
    minus_part[10] = 'R';
    minus_part[30] = 'Y';
    const std::string read_minus = swgpu::reverse_complement(minus_part);
    std::string read_plus = genome.substr(180, 60);
    read_plus[5] = 'R';
    const auto db = write(dir, "genome.fa", ">genome\n" + genome + "\n");
    const auto q = write(dir, "reads.fa", ">minus\n" + read_minus + "\n>plus\n" + read_plus + "\n");
    const std::string fmt = " --outfmt '6 qseqid sseqid qstart qend sstart send sstrand evalue'";
    const auto r = align(q + " " + db + fmt);
    REQUIRE(r.code == 0);
    CHECK(r.err.find("error") == std::string::npos);
    std::vector<std::vector<std::string>> first;  // each query's first hit
    std::string last;
    for (const auto& l : lines_of(r.out)) {
        const auto f = fields_of(l);
        if (f.at(0) != last) first.push_back(f);
        last = f.at(0);
    }
    REQUIRE(first.size() == 2);
    CHECK(first[0] == std::vector<std::string>{"minus", "genome", "1", "60", "160", "101", "minus", first[0][7]});
    CHECK(first[1] == std::vector<std::string>{"plus", "genome", "1", "60", "181", "240", "plus", first[1][7]});
    // The same as naming the type.
    const auto named = align(q + " " + db + fmt + " --seqtype dna");
    REQUIRE(named.code == 0);
    CHECK(named.out == r.out);
}

TEST_CASE("a DNA file holding a protein record is an error naming it, a protein file's DNA-like records are protein",
          "[seqtype][cli]") {
    temp_dir dir("swgpu-mixed");
    const std::string protein = random_protein(200, 31), dna = random_dna(200, 32);
    const std::string long_dna = random_dna(600, 35);
    const auto mixed_q = write(dir, "mixed_q.fa", ">d1\n" + long_dna + "\n>p1\n" + protein.substr(0, 100) + "\n>d2\n" +
                                                      long_dna + "\n");
    const auto gdb = write(dir, "gdb.fa", ">g1\n" + random_dna(500, 33) + "\n>g2\n" + dna + "\n");
    const auto r = align(mixed_q + " " + gdb);
    CHECK(r.code == 1);
    CHECK(one_error_line(r.err));
    CHECK_THAT(r.err, Catch::Contains("mixed_q.fa:p1 (record 2)") && Catch::Contains("no nucleotide code uses") &&
                          Catch::Contains("--seqtype dna or --seqtype protein"));
    CHECK(r.out.empty());
    // The database: a protein record far down a DNA database (past the first chunk) is found too, and makedb refuses
    // the same file with the same words.
    std::string db_text;
    for (int k = 0; k < 50; ++k) db_text += ">s" + std::to_string(k + 1) + "\n" + random_dna(100, 40 + k) + "\n";
    db_text += ">peptide\n" + protein + "\n";
    const auto mixed_db = write(dir, "mixed_db.fa", db_text);
    const auto q = write(dir, "q.fa", ">q\n" + dna + "\n");
    const auto d = align(q + " " + mixed_db + " --db-chunk 500");
    CHECK(d.code == 1);
    CHECK(one_error_line(d.err));
    CHECK_THAT(d.err, Catch::Contains("mixed_db.fa:peptide (record 51)") && Catch::Contains("--seqtype"));
    const auto m = run_program("makedb " + mixed_db + " " + (dir / "mixed"));
    CHECK(m.code == 1);
    CHECK(one_error_line(m.err));
    CHECK_THAT(m.err, Catch::Contains("mixed_db.fa:peptide (record 51)"));
    CHECK(!fs::exists(dir / "mixed.swdb"));
    // Naming the type reads every record as that type: no error.
    CHECK(align(q + " " + mixed_db + " --seqtype dna -q").code == 0);
    // A protein file's record made of nucleotide letters is protein: one warning naming it, the search runs.
    const auto pq = write(dir, "pq.fa", ">p1\n" + protein + "\n>d1\n" + dna + "\n>p2\n" + protein + "\n");
    const auto pdb = write(dir, "pdb.fa", ">s1\n" + protein + "\n>s2\n" + random_protein(150, 34) + "\n");
    const auto w = align(pq + " " + pdb);
    CHECK(w.code == 0);
    CHECK(lines_of(w.err).size() == 1);
    CHECK_THAT(w.err, Catch::Contains("warning") && Catch::Contains("pq.fa:d1 (record 2)") &&
                          Catch::Contains("read as protein"));
    CHECK(w.out == align(pq + " " + pdb + " --seqtype protein").out);
    // Queries and database of different types: the error names the values to give.
    const auto dq = write(dir, "dq.fa", ">d\n" + dna + "\n");
    const auto t = align(dq + " " + pdb);
    CHECK(t.code == 2);
    CHECK_THAT(t.err, Catch::Contains("look like DNA") && Catch::Contains("looks like protein") &&
                          Catch::Contains("--seqtype dna or --seqtype protein"));
}

TEST_CASE("real protein databases with poly-A, poly-G and ACGT-only peptides are searched as protein",
          "[seqtype][cli]") {
    // UniProt's proteins of data/demo_db.fa with low-complexity records that are all nucleotide letters among them,
    // as real databases hold (poly-A fragments, Ala/Gly/Thr/Cys-rich proteins): plain, gzip and .swdb, default options,
    // the same hits as --seqtype protein, a warning naming the first such record and the count, never an error.
    temp_dir dir("swgpu-poly-a");
    const std::string demo = slurp(std::string(SWGPU_SOURCE_DIR) + "/data/demo_db.fa");
    const auto at = [&](std::size_t record) {  // the offset of the record-th header (0-based)
        std::size_t p = 0;
        for (std::size_t k = 0; k <= record; ++k) p = demo.find('>', k ? p + 1 : 0);
        return p;
    };
    std::mt19937_64 rng(7);
    const auto letters = [&](const std::string& pool, std::size_t n) {
        std::string s(n, 'A');
        for (auto& c : s) c = pool[rng() % pool.size()];
        return s;
    };
    const std::string odd = ">polyA_fragment\n" + std::string(200, 'A') + "\n>polyG\n" + std::string(150, 'G') +
                            "\n>acgt_peptide20\n" + letters("ACGT", 20) + "\n>acgt_peptide300 Ala/Cys/Gly/Thr rich\n" +
                            letters("ACGT", 300) + "\n>polyA_short\n" + std::string(40, 'A') + "\n";
    // Odd records first, in the middle and last of the database.
    const std::string db_text = odd + demo.substr(0, at(500)) + odd + demo.substr(at(500)) + odd;
    const auto db = write(dir, "db.fa", db_text);
    REQUIRE(std::system(("gzip -c " + db + " > " + (dir / "db.fa.gz")).c_str()) == 0);
    const std::string queries = slurp(std::string(SWGPU_SOURCE_DIR) + "/data/demo_queries.fa");
    const auto q = write(dir, "q.fa", ">polyA_query\n" + std::string(120, 'A') + "\n" + queries +
                                          ">acgt_query\n" + letters("ACGT", 60) + "\n");
    const auto made = run_program("makedb " + (dir / "db.fa.gz") + " " + (dir / "db"));
    REQUIRE(made.code == 0);
    CHECK_THAT(made.err, Catch::Contains("warning") && Catch::Contains("db.fa.gz:polyA_fragment (record 1)") &&
                             Catch::Contains("(15 such records in all)"));
    const std::string fmt = " --outfmt '6 std score'";
    const auto named = align(q + " " + db + fmt + " --seqtype protein");
    REQUIRE(named.code == 0);
    REQUIRE(!named.out.empty());
    CHECK(named.out.find("polyA_query\tpolyA_fragment") != std::string::npos);  // scored as protein (BLOSUM62 A-A)
    for (const std::string& d : {db, dir / "db.fa.gz", dir / "db.swdb", dir / "db"}) {
        INFO(d);
        const auto r = align(q + " " + d + fmt);
        CHECK(r.code == 0);
        CHECK(r.out == named.out);
        CHECK_THAT(r.err, Catch::Contains("q.fa:polyA_query (record 1): its letters look like DNA") &&
                              Catch::Contains("(2 such records in all)"));
        // A .swdb says its type in its header: its records are not typed again (makedb warned already).
        if (d.find("db.fa") != std::string::npos)
            CHECK_THAT(r.err, Catch::Contains(":polyA_fragment (record 1)") && Catch::Contains("(15 such records"));
        else
            CHECK(r.err.find("polyA_fragment") == std::string::npos);
        CHECK(lines_of(r.err).size() == (d.find("db.fa") != std::string::npos ? 2u : 1u));
    }
    // Small chunks (the odd records open several of them): the same.
    CHECK(align(q + " " + db + fmt + " --db-chunk 1000 -q").out == named.out);
    // makedb --seqtype is written into the database, and a search with --seqtype auto follows it.
    const auto all_a = write(dir, "all_a.fa", ">a1\n" + std::string(100, 'A') + "\n>a2\n" + letters("ACGT", 80) + "\n");
    REQUIRE(run_program("makedb " + all_a + " " + (dir / "forced") + " --seqtype protein -q").code == 0);
    const auto pq = write(dir, "pq.fa", ">p\n" + random_protein(60, 5) + std::string(30, 'A') + "\n");
    const auto f = align(pq + " " + (dir / "forced.swdb") + fmt);
    CHECK(f.code == 0);
    CHECK(f.out == align(pq + " " + all_a + fmt + " --seqtype protein").out);
    CHECK(!f.out.empty());
    const auto as_dna = align(pq + " " + all_a + fmt);  // the FASTA file alone is DNA by the rule
    CHECK(as_dna.code == 2);
}

TEST_CASE("align with --batch: each file is typed and refused as it is alone, the others written", "[seqtype][cli]") {
    temp_dir dir("swgpu-batch-types");
    const std::string p1 = random_protein(150, 51), p2 = random_protein(120, 52);
    const auto db = write(dir, "db.fa", ">s1\n" + p1 + "\n>s2\n" + p2 + "\n>s3\n" + random_protein(300, 53) + "\n");
    const auto a = write(dir, "a.fa", ">qa\n" + p1.substr(10, 80) + "\n");
    const auto d = write(dir, "d.fa", ">qd\n" + random_dna(200, 54) + "\n");
    const auto c = write(dir, "c.fa", ">qc\n" + p2.substr(20, 70) + "\n");
    const auto e = write(dir, "e.fa", "");  // empty: refused alone with exit 1
    const auto list = write(dir, "list.txt", a + "\n" + d + "\n" + c + "\n" + e + "\n" + (dir / "missing.fa") + "\n");
    const auto r = align("--batch " + list + " " + db + " -o " + dir.path.string());
    CHECK(r.code == 2);  // the first refused file's code (d.fa: types differ)
    CHECK_THAT(r.err, Catch::Contains("d.fa: the queries look like DNA") && Catch::Contains("e.fa") &&
                          Catch::Contains("missing.fa") && Catch::Contains("3 of the 5 query files"));
    for (const auto& [query, out] : std::vector<std::pair<std::string, std::string>>{{a, "a.fa.out"}, {c, "c.fa.out"}}) {
        const auto alone = align(query + " " + db);
        REQUIRE(alone.code == 0);
        CHECK(!alone.out.empty());
        CHECK(slurp(dir / out) == alone.out);
    }
    CHECK(!fs::exists(dir / "d.fa.out"));
    CHECK(!fs::exists(dir / "e.fa.out"));
    CHECK(!fs::exists(dir / "missing.fa.out"));
    const auto alone_d = align(d + " " + db);
    CHECK(alone_d.code == 2);
}

TEST_CASE("an output that is an input is refused, by any name, and the input is kept", "[cli]") {
    temp_dir dir("swgpu-same-file");
    const std::string protein = random_protein(200, 61);
    const auto q = write(dir, "q.fa", ">q\n" + protein.substr(30, 100) + "\n");
    const auto db = write(dir, "db.fa", ">s\n" + protein + "\n");
    const std::string q_text = slurp(q), db_text = slurp(db);
    fs::create_symlink(db, dir / "link.fa");
    REQUIRE(run_program("makedb " + db + " " + (dir / "db2") + " -q").code == 0);
    const std::string swdb_bytes = slurp(dir / "db2.swdb");
    const auto list = write(dir, "list.txt", q + "\t" + q + "\n");
    const std::string in_dir = "cd " + dir.path.string() + " && ";
    struct refused_case {
        std::string args, says;
    };
    const std::vector<refused_case> cases = {
        {q + " " + db + " -o " + db, "is the database"},
        {q + " " + db + " -o " + q, "is the query file"},
        {q + " " + db + " -o " + (dir / "link.fa"), "the same file"},
        {q + " " + db + " -o " + dir.path.string() + "/./db.fa", "is the database"},
        {q + " " + (dir / "db2") + " -o " + (dir / "db2.swdb"), "is the database"},
        {q + " " + db + " --dotplot " + q, "is the query file"},
        {q + " " + db + " -o " + (dir / "x.tsv") + " --dotplot " + (dir / "x.tsv"), "are the same file"},
        {"--batch " + list + " " + (dir / "db2.swdb"), "is the query file"},
    };
    for (const auto& c : cases) {
        INFO(c.args);
        const auto r = align(c.args);
        CHECK(r.code == 2);
        CHECK(one_error_line(r.err));
        CHECK_THAT(r.err, Catch::Contains(c.says));
    }
    // Relative paths, from the folder of the files.
    const std::string cmd = in_dir + "'" + std::string(SWGPU_BINARY) + "' align --backend cpu q.fa db.fa -o ./db.fa";
    const int status = std::system((cmd + " 2>/dev/null").c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    CHECK(slurp(q) == q_text);
    CHECK(slurp(db) == db_text);
    CHECK(slurp(dir / "db2.swdb") == swdb_bytes);
    CHECK(fs::is_symlink(dir / "link.fa"));
    // makedb: the output that is its input.
    const auto swdb_named = write(dir, "named.swdb", ">s\n" + protein + "\n");
    const auto m = run_program("makedb " + swdb_named + " " + (dir / "named"));
    CHECK(m.code == 2);
    CHECK(one_error_line(m.err));
    CHECK(slurp(swdb_named) == ">s\n" + protein + "\n");
}

TEST_CASE("an output that is the faidx index a region reads (.fai, .gzi) is refused, whether or not it exists yet",
          "[cli]") {
    temp_dir dir("swgpu-index-out");
    const std::string protein = random_protein(400, 81);
    const auto q = write(dir, "q.fa", ">q\n" + protein.substr(100, 120) + "\n");
    const auto genome = write(dir, "g.fa", ">s\n" + protein + "\n>t\n" + random_protein(300, 82) + "\n");
    const std::string region = genome + ":s:51-350", fai = genome + ".fai";
    const auto refused = [&](const std::string& args, const std::string& says) {
        INFO(args);
        const auto r = align(args);
        CHECK(r.code == 2);
        CHECK(one_error_line(r.err));
        CHECK_THAT(r.err, Catch::Contains(says) && Catch::Contains("would destroy that input"));
        CHECK(r.out.empty());
    };
    // Before the index exists: the run would build g.fa.fai, then rename its results over it.
    refused(q + " " + region + " -o " + fai, "-o " + fai + " is the database's index " + fai);
    CHECK_FALSE(fs::exists(fai));
    // After a run has built it: refused by name and by any other name (a relative path), and kept as it was.
    REQUIRE(align(q + " " + region).code == 0);
    REQUIRE(fs::exists(fai));
    const std::string fai_text = slurp(fai);
    refused(q + " " + region + " -o " + fai, "is the database's index");
    refused(q + " " + region + " -o " + dir.path.string() + "/./g.fa.fai", "is the database's index");
    refused(genome + ":t " + q + " -o " + fai, "is the query file's index");
    const auto list = write(dir, "list.txt", region + "\t" + fai + "\n");
    refused("--batch " + list + " " + q, "is the query file's index");
    CHECK(slurp(fai) == fai_text);

    // bgzip: the .gzi as well as the .fai.
    const std::string bgz = dir / "g.fa.gz";
    {
        BGZF* f = bgzf_open(bgz.c_str(), "w");
        const std::string text = slurp(genome);
        REQUIRE(f);
        REQUIRE(bgzf_write(f, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
        REQUIRE(bgzf_close(f) == 0);
    }
    refused(q + " " + bgz + ":s:51-350 -o " + bgz + ".gzi", "is the database's index " + bgz + ".gzi");
    refused(q + " " + bgz + ":s:51-350 -o " + bgz + ".fai", "is the database's index " + bgz + ".fai");
    REQUIRE(align(q + " " + bgz + ":s:51-350").code == 0);
    REQUIRE(fs::exists(bgz + ".gzi"));
    const std::string gzi_bytes = slurp(bgz + ".gzi");
    refused(q + " " + bgz + ":s:51-350 -o " + bgz + ".gzi", "is the database's index");
    CHECK(slurp(bgz + ".gzi") == gzi_bytes);
    // The whole file reads no index: an output of that name is no input of that run.
    CHECK(align(q + " " + genome + " -o " + (dir / "other.fai")).code == 0);
}

TEST_CASE("option --dotplot: a name that is not .svg is refused, since the plot is SVG", "[cli]") {
    temp_dir dir("swgpu-dotplot-name");
    const std::string protein = random_protein(200, 91);
    const auto q = write(dir, "q.fa", ">q\n" + protein.substr(30, 100) + "\n");
    const auto db = write(dir, "db.fa", ">s\n" + protein + "\n");
    for (const std::string name : {"plot.png", "plot.pdf", "plot", "plot.svg.gz", "plot.tsv"}) {
        INFO(name);
        const auto r = align(q + " " + db + " --dotplot " + (dir / name));
        CHECK(r.code == 2);
        CHECK(r.err == "swgpu: error: --dotplot " + (dir / name) + ": the dot plot is SVG; name it .svg\n");
        CHECK(r.out.empty());
        CHECK_FALSE(fs::exists(dir / name));
    }
    // .svg in any case is accepted and holds SVG.
    for (const std::string name : {"plot.svg", "PLOT.SVG"}) {
        INFO(name);
        const auto r = align(q + " " + db + " --dotplot " + (dir / name));
        CHECK(r.code == 0);
        CHECK_THAT(slurp(dir / name), Catch::Contains("<svg"));
    }
}

TEST_CASE("counts on the command line: negative and non-numeric values are usage errors", "[cli]") {
    temp_dir dir("swgpu-counts");
    const std::string protein = random_protein(200, 71);
    const auto q = write(dir, "q.fa", ">q\n" + protein.substr(30, 100) + "\n");
    const auto db = write(dir, "db.fa", ">s\n" + protein + "\n");
    for (const std::string opt : {"-k -5", "-k abc", "-k 0", "--db-chunk -5", "-t -1", "--gpus -1", "-k 1.5"}) {
        INFO(opt);
        const auto r = align(q + " " + db + " " + opt);
        CHECK(r.code == 2);
        CHECK(one_error_line(r.err));
        CHECK(r.out.empty());
    }
}

TEST_CASE("makedb: a .swdb prefix, duplicate ids, headers without an id, databases of another version", "[cli]") {
    temp_dir dir("swgpu-makedb-checks");
    const std::string protein = random_protein(200, 81);
    const auto db = write(dir, "db.fa", ">s1 first\n" + protein + "\n>s2\n" + protein.substr(9) + "\n");
    const auto made = run_program("makedb " + db + " " + (dir / "out.swdb"));
    CHECK(made.code == 0);
    CHECK(fs::exists(dir / "out.swdb"));
    CHECK(!fs::exists(dir / "out.swdb.swdb"));
    CHECK_THAT(made.err, Catch::Contains("out.swdb") && !Catch::Contains("out.swdb.swdb"));

    const auto dup = write(dir, "dup.fa", ">a\nMKV\n>b\nMKVL\n>a second\nMKL\n>b\nMMM\n");
    const auto d = run_program("makedb " + dup + " " + (dir / "dup"));
    CHECK(d.code == 0);
    CHECK_THAT(d.err, Catch::Contains("warning") && Catch::Contains("dup.fa:a (record 3)") &&
                          Catch::Contains("record 1") && Catch::Contains("2 records in all"));

    const auto noid = write(dir, "noid.fa", ">s1\n" + protein + "\n> description only\n" + protein + "\n");
    const auto n = run_program("makedb " + noid + " " + (dir / "noid"));
    CHECK(n.code == 0);
    CHECK_THAT(n.err, Catch::Contains("warning") && Catch::Contains("noid.fa:description (record 2") &&
                          Catch::Contains("no id"));
    const auto q = write(dir, "q.fa", "> just words\n" + protein.substr(0, 60) + "\n");
    const auto a = align(q + " " + db);
    CHECK(a.code == 0);
    CHECK_THAT(a.err, Catch::Contains("q.fa:just (record 1") && Catch::Contains("no id"));

    // A database of another format version says so, and how to rebuild it.
    std::string bytes = slurp(dir / "out.swdb");
    REQUIRE(bytes.substr(0, 8) == "SWGPUDB3");
    bytes[7] = '1';  // the format before checksums
    write(dir, "v1.swdb", bytes);
    const auto v = align(db + " " + (dir / "v1.swdb"));
    CHECK(v.code == 1);
    CHECK(one_error_line(v.err));
    CHECK_THAT(v.err, Catch::Contains("format version 1") && Catch::Contains("reads format versions 2 to 3") &&
                          Catch::Contains("swgpu makedb"));
    // A database given where FASTA is read.
    const auto as_query = align((dir / "out.swdb") + " " + db);
    CHECK(as_query.code == 1);
    CHECK_THAT(as_query.err, Catch::Contains("a swgpu database"));
}

TEST_CASE("default gap costs: NUC.4.4 10/6, DNA matrix files DNA defaults", "[scoring][cli]") {
    using swgpu::seq_type;
    CHECK(swgpu::default_gaps(swgpu::substitution_matrix::builtin("NUC.4.4"), seq_type::dna).open == 10);
    CHECK(swgpu::default_gaps(swgpu::substitution_matrix::builtin("NUC.4.4"), seq_type::dna).extend == 6);
    CHECK(swgpu::default_gaps(swgpu::substitution_matrix::match_mismatch(2, -3), seq_type::dna).open == 5);
    CHECK(swgpu::default_gaps(swgpu::substitution_matrix::builtin("BLOSUM45"), seq_type::protein).open == 14);

    temp_dir dir("swgpu-gaps");
    const std::string genome = random_dna(400, 91);
    const auto db = write(dir, "g.fa", ">g\n" + genome + "\n");
    const auto q = write(dir, "r.fa", ">r\n" + genome.substr(50, 120) + "\n");
    for (const std::string m : {"NUC.4.4", "EDNAFULL"}) {
        const auto r = align(q + " " + db + " --matrix " + m + " -v");
        CHECK(r.code == 0);
        CHECK_THAT(r.err, Catch::Contains("gap open 10, gap extend 6"));
        const auto explicit_gaps = align(q + " " + db + " --matrix " + m + " --gap-open 10 --gap-extend 6");
        CHECK(explicit_gaps.out == r.out);
        CHECK(!r.out.empty());
    }
    // A 4 x 4 matrix file with blastn's default scores: DNA gap costs 5/2, the same hits as the built-in scoring.
    const auto mat = write(dir, "dna.mat", "   A  C  G  T\nA  2 -3 -3 -3\nC -3  2 -3 -3\nG -3 -3  2 -3\nT -3 -3 -3  2\n");
    const auto f = align(q + " " + db + " --matrix " + mat + " -v --outfmt '6 std score'");
    CHECK(f.code == 0);
    CHECK_THAT(f.err, Catch::Contains("gap open 5, gap extend 2"));
    const auto builtin = align(q + " " + db + " --outfmt '6 std score'");
    CHECK(f.out == builtin.out);
}

TEST_CASE("messages: an input error is one line whatever the backend, the CPU fallback is said once, after success",
          "[cli]") {
    temp_dir dir("swgpu-messages");
    const std::string protein = random_protein(300, 73);
    const auto q = write(dir, "q.fa", ">q\n" + protein.substr(40, 120) + "\n");
    const auto db = write(dir, "db.fa", ">s\n" + protein + "\n");
    {
        const auto r = run_program("align no_such_query.fa " + db);  // --backend auto
        CHECK(r.code == 1);
        CHECK(one_error_line(r.err));
    }
    const auto ok = run_program("align " + q + " " + db + " --outfmt SAM");  // --backend auto; names in any case
    REQUIRE(ok.code == 0);
    CHECK_THAT(ok.out, Catch::StartsWith("@HD"));
    const auto lines = lines_of(ok.err);
    const bool fallback = swgpu::gpu::built_with_cuda() && !swgpu::gpu::available();
    REQUIRE(lines.size() == (fallback ? 1u : 0u));  // a build without a GPU backend says nothing
    if (fallback) CHECK_THAT(lines[0], Catch::Contains("no usable GPU") && Catch::Contains("ran on the CPU"));
    CHECK(align(q + " " + db + " --outfmt PaF").code == 0);
    CHECK(align(q + " " + db + " -q").err.empty());
}

TEST_CASE("option -o through a symbolic link writes the link's target and keeps the link", "[cli]") {
    temp_dir dir("swgpu-symlink");
    const std::string protein = random_protein(300, 79);
    const auto q = write(dir, "q.fa", ">q\n" + protein.substr(40, 120) + "\n");
    const auto db = write(dir, "db.fa", ">s\n" + protein + "\n");
    std::filesystem::create_directories(dir.path / "results");
    const auto target = write(dir, "results/target.tsv", "old\n");
    const std::string link = dir / "link.tsv";
    std::filesystem::create_symlink("results/target.tsv", link);  // relative to the link's folder
    const auto r = align(q + " " + db + " -o " + link);
    REQUIRE(r.code == 0);
    CHECK(std::filesystem::is_symlink(link));
    const auto alone = align(q + " " + db);
    CHECK(slurp(target) == alone.out);
    CHECK(slurp(link) == alone.out);
    // No temporary file is left beside the target or the link.
    std::size_t files = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path)) files += e.is_regular_file() && !e.is_symlink() ? 1 : 0;
    CHECK(files == 3);  // q.fa, db.fa, results/target.tsv
}
