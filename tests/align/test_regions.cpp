// Regions of indexed FASTA files (FILE:NAME:BEG-END) as queries and subjects of `swgpu align`: printed as BLAST's
// -query_loc and -subject_loc print them, named for their sequence and in its coordinates, in every format; SAM's
// @SQ names the sequence with its whole length, so that samtools (and IGV, bcftools) place the records on the genome.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_support.hpp"
#include "core/align/strand.hpp"

namespace fs = std::filesystem;
using swgpu::testing::fields_of;
using swgpu::testing::lines_of;
using swgpu::testing::program_result;
using swgpu::testing::run_program;
using swgpu::testing::slurp;
using swgpu::testing::temp_dir;

namespace {

std::string random_dna(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string s(n, 'A');
    for (auto& c : s) c = "ACGT"[rng() % 4];
    return s;
}

// FASTA with lines of 60 letters, as faidx needs them.
std::string fasta_record(const std::string& header, const std::string& seq) {
    std::string out = ">" + header + "\n";
    for (std::size_t at = 0; at < seq.size(); at += 60) out += seq.substr(at, 60) + "\n";
    return out;
}

std::string write(const temp_dir& dir, const std::string& name, const std::string& content) {
    std::ofstream(dir / name, std::ios::binary) << content;
    return dir / name;
}

program_result align(const std::string& args) { return run_program("align --backend cpu " + args); }

// The lines of a run's output that are not comments or headers.
std::vector<std::string> records(const std::string& out) {
    std::vector<std::string> kept;
    for (const auto& l : lines_of(out))
        if (!l.empty() && l[0] != '#' && l[0] != '@') kept.push_back(l);
    return kept;
}

bool on_path(const std::string& tool) {
    return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

// A genome of two contigs, reads taken from chr1 at 2001-2200 (plus strand, one substitution) and 601-760 (minus
// strand), and a long query holding the first read between 100 unrelated letters on each side.
struct genome_fixture {
    temp_dir dir{"swgpu-regions"};
    std::string chr1 = random_dna(3000, 11), chr2 = random_dna(1000, 12);
    std::string genome, reads, long_query;
    genome_fixture() {
        genome = write(dir, "genome.fa", fasta_record("chr1 first contig", chr1) + fasta_record("chr2", chr2));
        std::string plus = chr1.substr(2000, 200);
        plus[50] = plus[50] == 'A' ? 'C' : 'A';
        const std::string minus = swgpu::reverse_complement(chr1.substr(600, 160));
        reads = write(dir, "reads.fa", ">plus\n" + plus + "\n>minus\n" + minus + "\n");
        long_query = write(dir, "long.fa", fasta_record("long a read with flanks",
                                                        random_dna(100, 13) + plus + random_dna(100, 14)));
    }
};

const std::string coords = " --outfmt '6 qseqid sseqid qstart qend sstart send sstrand score slen'";

}  // namespace

TEST_CASE("a region subject prints the contig's name and coordinates, as searching the whole contig", "[cli][regions]") {
    genome_fixture g;
    const auto whole = align(g.reads + " " + g.genome + ":chr1" + coords);
    const auto region = align(g.reads + " " + g.genome + ":chr1:501-2600" + coords);
    REQUIRE(whole.code == 0);
    REQUIRE(region.code == 0);
    CHECK(region.err.empty());
    const auto w = records(whole.out), r = records(region.out);
    REQUIRE(r.size() >= 2);
    // The region's best hits are the whole contig's (a region holds both reads' loci).
    CHECK(fields_of(r[0]) == std::vector<std::string>{"plus", "chr1", "1", "200", "2001", "2200", "plus",
                                                      fields_of(r[0])[7], "3000"});
    // Every true locus's hit (weak chance hits differ: E-values are the region's) is the whole contig's hit.
    for (const auto& line : r)
        if (std::stoi(fields_of(line)[7]) >= 100) CHECK(std::find(w.begin(), w.end(), line) != w.end());
    bool minus_seen = false;
    for (const auto& line : r)
        if (fields_of(line)[0] == "minus" && fields_of(line)[6] == "minus") {
            CHECK(fields_of(line)[4] == "760");
            CHECK(fields_of(line)[5] == "601");
            minus_seen = true;
        }
    CHECK(minus_seen);

    // E-values are those of the region searched (BLAST's -subject_loc does the same): smaller than the contig's.
    const auto ev = [&](const std::string& db) {
        const auto out = align(g.reads + " " + db + " --outfmt '6 evalue'");
        REQUIRE(out.code == 0);
        return std::stod(records(out.out).at(0));
    };
    CHECK(ev(g.genome + ":chr1:1501-2600") < ev(g.genome + ":chr1"));

    // PAF: the contig's whole length and 0-based coordinates in it.
    const auto paf = align(g.reads + " " + g.genome + ":chr1:1501-2600 --outfmt paf");
    REQUIRE(paf.code == 0);
    const auto p = fields_of(records(paf.out).at(0));
    CHECK(std::vector<std::string>(p.begin(), p.begin() + 9) ==
          std::vector<std::string>{"plus", "200", "0", "200", "+", "chr1", "3000", "2000", "2200"});

    // pair: the whole length, the definition line and the contig's coordinates.
    const auto pair = align(g.reads + " " + g.genome + ":chr1:1501-2600 --outfmt pair");
    REQUIRE(pair.code == 0);
    CHECK_THAT(pair.out, Catch::Contains("\n> chr1\nLength=3000\n") && Catch::Contains("\nSbjct  2001 "));
}

TEST_CASE("a region query prints the sequence's name and coordinates, as the whole query does", "[cli][regions]") {
    genome_fixture g;
    const std::string cols = " --outfmt '6 qseqid sseqid qstart qend sstart send score qlen qcovhsp'";
    const auto whole = align(g.long_query + " " + g.genome + cols);
    const auto region = align(g.long_query + ":long:101-300 " + g.genome + cols);
    REQUIRE(whole.code == 0);
    REQUIRE(region.code == 0);
    const auto w = fields_of(records(whole.out).at(0)), r = fields_of(records(region.out).at(0));
    CHECK(r == std::vector<std::string>{"long", "chr1", "101", "300", "2001", "2200", w[6], "200", "100"});
    // The same hit as the whole query's; qlen and qcovhsp are the searched query's, as BLAST's -query_loc prints them.
    CHECK(std::vector<std::string>(w.begin(), w.begin() + 7) == std::vector<std::string>(r.begin(), r.begin() + 7));
    CHECK(w[7] == "400");

    const auto paf = align(g.long_query + ":long:101-300 " + g.genome + " --outfmt paf");
    REQUIRE(paf.code == 0);
    const auto p = fields_of(records(paf.out).at(0));
    CHECK(std::vector<std::string>(p.begin(), p.begin() + 9) ==
          std::vector<std::string>{"long", "400", "100", "300", "+", "chr1", "3000", "2000", "2200"});
}

TEST_CASE("SAM of a region: @SQ names the contig with its whole length, POS is in the contig", "[cli][regions]") {
    genome_fixture g;
    const auto sam = align(g.reads + " " + g.genome + ":chr1:1501-2600 --outfmt sam -o " + (g.dir / "out.sam"));
    REQUIRE(sam.code == 0);
    const std::string text = slurp(g.dir / "out.sam");
    CHECK_THAT(text, Catch::Contains("@SQ\tSN:chr1\tLN:3000\n"));
    std::optional<std::vector<std::string>> plus;
    for (const auto& l : records(text))
        if (fields_of(l)[0] == "plus" && fields_of(l)[1] == "0") plus = fields_of(l);
    REQUIRE(plus);
    CHECK((*plus)[2] == "chr1");
    CHECK((*plus)[3] == "2001");

    if (!on_path("samtools")) {
        WARN("samtools is not installed (Debian package samtools): the check that it reads the SAM is skipped");
        return;
    }
    // samtools sorts, indexes and finds the read at its place on the genome, and faidx reads the same contig.
    const std::string d = g.dir.path.string();
    const std::string cmd = "cd '" + d + "' && samtools sort -o out.bam out.sam 2>err && samtools index out.bam 2>>err" +
                            " && samtools view -c -F 256 out.bam chr1:2100-2110 >count 2>>err";
    REQUIRE(std::system(cmd.c_str()) == 0);
    CHECK(slurp(g.dir / "count") == "1\n");
}

TEST_CASE("a region past the contig's end is clamped with one warning naming the region and the length",
          "[cli][regions]") {
    genome_fixture g;
    const auto clamped = align(g.reads + " " + g.genome + ":chr1:1501-99999999" + coords);
    const auto exact = align(g.reads + " " + g.genome + ":chr1:1501-3000" + coords);
    REQUIRE(clamped.code == 0);
    REQUIRE(exact.code == 0);
    CHECK(clamped.out == exact.out);
    CHECK(exact.err.empty());
    CHECK(lines_of(clamped.err).size() == 1);
    CHECK_THAT(clamped.err, Catch::StartsWith("swgpu: warning: " + g.genome + ":chr1:1501-99999999: the region ends "
                                              "past the end of chr1 (length 3000)"));
}
