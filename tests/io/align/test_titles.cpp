// Whole definition lines and accessions in `swgpu align`'s output, as BLAST+ 2.12 prints them: "# Query:" of
// --outfmt 7 and "Query=" / "> " of pair hold the whole header line; the columns sacc, saccver (BLAST's accessions
// from the id), stitle (the whole header line), and qacc, qaccver, qtitle. The plain cases run everywhere; the
// comparisons with blastp run when it is installed (Debian package ncbi-blast+), as in test_crosscheck.cpp.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/cli_support.hpp"
#include "io/align/seq_id.hpp"
#include "io/align/sequence_reader.hpp"

using swgpu::testing::fields_of;
using swgpu::testing::lines_of;
using swgpu::testing::program_result;
using swgpu::testing::run_program;
using swgpu::testing::slurp;
using swgpu::testing::temp_dir;

namespace {

const std::string protein =
    "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEVVHSLAKWKRQTLGQHDFSAGEGLYTHMKALRPDEDRLSPLHS"
    "VYVDQWDWERVMGDGERQF";

// Headers of the styles BLAST parses, each on a prefix of `protein` of its own length (slen tells them apart).
const std::vector<std::string> headers = {
    "sp|P12345.2|NAME_HUMAN Some protein OS=Homo sapiens",
    "tr|A0A024R161|A0A024R161_HUMAN Guanine OS=Homo",
    "gi|123456|ref|NP_000001.1| another one [Homo sapiens]",
    "seq1 plain description here",
    "lcl|myseq.3 local id",
    "ENSP00000354587.3 pep chromosome:GRCh38",
    "XP_011524.1",
    "emb|CAA12345.1| embl thing",
    "pdb|1ABC|A chain A",
    "gnl|db|tag.2 general id",
    "P67890.1 a plain UniProt accession",
    "chr1.2 no accession format",
};

std::string write(const temp_dir& dir, const std::string& name, const std::string& content) {
    std::ofstream(dir / name, std::ios::binary) << content;
    return dir / name;
}

struct title_fixture {
    temp_dir dir{"swgpu-titles"};
    std::string query, db;
    title_fixture() {
        query = write(dir, "q.fa", ">sp|Q99999.1|QRY_HUMAN Query protein   with words  \n" + protein + "\n");
        std::string text;
        for (std::size_t k = 0; k < headers.size(); ++k)
            text += ">" + headers[k] + "\n" + protein.substr(0, 60 + 4 * k) + "\n";
        db = write(dir, "s.fa", text);
    }
};

program_result align(const std::string& args) { return run_program("align --backend cpu " + args); }

bool on_path(const std::string& tool) {
    return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

// Each line's fields keyed by its last field (slen), comments left out.
std::map<std::string, std::vector<std::string>> by_length(const std::string& out) {
    std::map<std::string, std::vector<std::string>> m;
    for (const auto& l : lines_of(out))
        if (!l.empty() && l[0] != '#') m[fields_of(l).back()] = fields_of(l);
    return m;
}

}  // namespace

TEST_CASE("accessions from FASTA ids as BLAST derives them", "[output][titles]") {
    // Each pair as blastp 2.12 -parse_deflines printed sacc and saccver for a subject of that id.
    const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> cases = {
        {"sp|P12345.2|NAME_HUMAN", {"P12345", "P12345.2"}},
        {"tr|A0A024R161|A0A024R161_HUMAN", {"A0A024R161", "A0A024R161"}},
        {"gi|123456|ref|NP_000001.1|", {"NP_000001", "NP_000001.1"}},
        {"gi|123", {"123", "123"}},
        {"P12345.2", {"P12345", "P12345.2"}},
        {"Q6GZX4", {"Q6GZX4", "Q6GZX4"}},
        {"A0A024R161.2", {"A0A024R161", "A0A024R161.2"}},
        {"AB123456.1", {"AB123456", "AB123456.1"}},
        {"AAA12345.2", {"AAA12345", "AAA12345.2"}},
        {"ABCD01000001.1", {"ABCD01000001", "ABCD01000001.1"}},
        {"NC_000001.11", {"NC_000001", "NC_000001.11"}},
        {"NZ_CP012345.1", {"NZ_CP012345", "NZ_CP012345.1"}},
        {"WP_012345678.1", {"WP_012345678", "WP_012345678.1"}},
        {"NP_000001", {"NP_000001", "NP_000001"}},
        {"ref|NP_1.1|", {"NP_1", "NP_1.1"}},
        {"gb|AAA12345.2|", {"AAA12345", "AAA12345.2"}},
        {"tpg|DAA00001.1|", {"DAA00001", "DAA00001.1"}},
        {"pdb|1ABC|A", {"1ABC_A", "1ABC_A"}},
        {"1ABC_A", {"1ABC_A", "1ABC_A"}},
        {"lcl|x.1", {"x.1", "x.1"}},
        {"gnl|db|tag.2", {"db:tag.2", "db:tag.2"}},
        {"gnl|SRA|SRR123.1", {"SRA:SRR123.1", "SRA:SRR123.1"}},
        {"seq1", {"seq1", "seq1"}},
        {"chr1", {"chr1", "chr1"}},
        {"chr1.2", {"chr1.2", "chr1.2"}},
        {"seq1.5", {"seq1.5", "seq1.5"}},
        {"contig_1.2", {"contig_1.2", "contig_1.2"}},
        {"ABC.1", {"ABC.1", "ABC.1"}},
        {"ENST0001.1", {"ENST0001.1", "ENST0001.1"}},
        {"ENSP00000354587.3", {"ENSP00000354587.3", "ENSP00000354587.3"}},
        {"UniRef90_P12345", {"UniRef90_P12345", "UniRef90_P12345"}},
    };
    for (const auto& [id, expected] : cases) {
        INFO(id);
        const auto a = swgpu::io::accession_of(id);
        CHECK(a.acc == expected.first);
        CHECK(a.accver == expected.second);
    }
}

TEST_CASE("the reader keeps whole header lines when they say more than the id", "[input][titles]") {
    temp_dir dir("swgpu-titles-read");
    const auto path = write(dir, "t.fa", ">a  first   words \t\nMKV\n>b\nMKV\n>  c description\nMKV\n");
    const auto s = swgpu::io::read_all(path);
    REQUIRE(s.size() == 3);
    CHECK(s.origin(0).title == "a  first   words");
    CHECK(s.origin(1).title.empty());
    CHECK(s.origin(2).title == "c description");
    swgpu::io::read_options no_titles;
    no_titles.keep_titles = false;
    CHECK(swgpu::io::read_all(path, no_titles).origins.empty());
}

TEST_CASE("whole header lines in --outfmt 7 and pair, and the title and accession columns", "[cli][titles]") {
    title_fixture f;
    const std::string query_line = "sp|Q99999.1|QRY_HUMAN Query protein   with words";
    const auto seven = align(f.query + " " + f.db + " --outfmt 7");
    REQUIRE(seven.code == 0);
    CHECK_THAT(seven.out, Catch::Contains("\n# Query: " + query_line + "\n"));
    for (const auto& l : lines_of(seven.out))  // qseqid stays the id
        if (!l.empty() && l[0] != '#') CHECK(fields_of(l).at(0) == "sp|Q99999.1|QRY_HUMAN");

    const auto pair = align(f.query + " " + f.db + " --outfmt pair");
    REQUIRE(pair.code == 0);
    CHECK_THAT(pair.out, Catch::Contains("\nQuery= " + query_line + "\n"));
    for (const auto& h : headers) CHECK_THAT(pair.out, Catch::Contains("\n> " + h + "\nLength="));

    const auto cols = align(f.query + " " + f.db + " --outfmt '6 qacc qaccver qtitle sseqid sacc saccver stitle slen'");
    REQUIRE(cols.code == 0);
    const auto rows = by_length(cols.out);
    REQUIRE(rows.size() == headers.size());
    const auto& sp = rows.at("60");
    CHECK(sp == std::vector<std::string>{"Q99999", "Q99999.1", query_line, "sp|P12345.2|NAME_HUMAN", "P12345",
                                         "P12345.2", headers[0], "60"});
    CHECK(rows.at("72") == std::vector<std::string>{"Q99999", "Q99999.1", query_line, "seq1", "seq1", "seq1",
                                                    headers[3], "72"});
    // A header that is only an id has itself as its title.
    CHECK(rows.at("84").at(6) == "XP_011524.1");

    // A .swdb keeps ids only: its titles are the ids.
    REQUIRE(run_program("makedb " + f.db + " " + (f.dir / "s")).code == 0);
    const auto swdb = align(f.query + " " + (f.dir / "s.swdb") + " --outfmt '6 stitle slen'");
    REQUIRE(swdb.code == 0);
    CHECK(by_length(swdb.out).at("60").at(0) == "sp|P12345.2|NAME_HUMAN");
}

TEST_CASE("titles and accessions equal blastp's", "[cli][titles][crosscheck]") {
    if (!on_path("blastp") || !on_path("makeblastdb")) {
        WARN("blastp or makeblastdb is not installed (Debian package ncbi-blast+): the comparison of titles and "
             "accessions with blastp is skipped");
        return;
    }
    title_fixture f;
    const std::string d = "cd '" + f.dir.path.string() + "' && ";
    // sacc, saccver: blastp -parse_deflines (as makeblastdb -parse_seqids) against the FASTA subjects.
    REQUIRE(std::system((d + "blastp -query q.fa -subject s.fa -parse_deflines -outfmt '6 qacc qaccver sacc saccver "
                             "slen' > acc.tsv 2>acc.err").c_str()) == 0);
    // stitle: a database made without -parse_seqids, whose titles are the whole header lines.
    REQUIRE(std::system((d + "makeblastdb -in s.fa -dbtype prot -out sdb > mk.log 2>&1 && blastp -query q.fa -db sdb "
                             "-outfmt '6 sseqid stitle slen' > title.tsv 2>title.err && blastp -query q.fa -db sdb "
                             "-outfmt 7 > seven.txt 2>>title.err && blastp -query q.fa -subject s.fa -outfmt 0 "
                             "> pair.txt 2>>title.err").c_str()) == 0);
    const auto ours_acc = by_length(align(f.query + " " + f.db + " --outfmt '6 qacc qaccver sacc saccver slen'").out);
    const auto ours_title = by_length(align(f.query + " " + f.db + " --outfmt '6 sseqid stitle slen'").out);
    const auto blast_acc = by_length(slurp(f.dir / "acc.tsv")), blast_title = by_length(slurp(f.dir / "title.tsv"));
    CHECK(blast_acc.size() >= headers.size() - 2);  // BLAST's heuristics may miss the shortest
    for (const auto& [len, row] : blast_acc) {
        INFO(row.at(3));
        CHECK(ours_acc.at(len) == row);
    }
    CHECK(blast_title.size() >= headers.size() - 2);
    for (const auto& [len, row] : blast_title) CHECK(ours_title.at(len) == row);

    // "# Query:" of -outfmt 7, "Query=" and "> " of the pairwise output.
    const auto seven = align(f.query + " " + f.db + " --outfmt 7").out;
    for (const auto& l : lines_of(slurp(f.dir / "seven.txt")))
        if (l.rfind("# Query: ", 0) == 0) CHECK_THAT(seven, Catch::Contains("\n" + l + "\n"));
    const auto pair = align(f.query + " " + f.db + " --outfmt pair").out;
    std::size_t compared = 0;
    for (const auto& l : lines_of(slurp(f.dir / "pair.txt")))
        if (l.rfind("Query= ", 0) == 0 || l.rfind("> ", 0) == 0) {
            CHECK_THAT(pair, Catch::Contains("\n" + l + "\n"));
            ++compared;
        }
    CHECK(compared >= headers.size() - 1);
}
