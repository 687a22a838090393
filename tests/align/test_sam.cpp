// SAM and PAF of reads as mappers write them, run through the built program as a user does: MAPQ that sees a read's
// other placements on the same contig and strand (the next Waterman-Eggert alignment), PAF's MAPQ equal to SAM's.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/align/strand.hpp"
#include "tests/cli_support.hpp"

using swgpu::testing::fields_of;
using swgpu::testing::lines_of;
using swgpu::testing::program_result;
using swgpu::testing::run_program;
using swgpu::testing::temp_dir;

namespace {

std::string write(const temp_dir& dir, const std::string& name, const std::string& content) {
    std::ofstream(dir / name, std::ios::binary) << content;
    return dir / name;
}

struct genome_with_repeats {
    std::string chr_a, chr_b, chr_c;
    static constexpr std::size_t a1 = 3000, a2 = 12000;  // chrA: a 1 kbp exact duplication (20 kbp: searched in windows)
    static constexpr std::size_t b1 = 1000, b2 = 5000;   // chrB: a 1 kbp exact duplication (8 kbp: one piece)
    static constexpr std::size_t c1 = 2000, c2 = 14000;  // chrC: a 1 kbp duplication diverged by 2 % (20 substitutions)
};

genome_with_repeats make_genome(std::mt19937_64& rng) {
    const auto dna = [&](std::size_t n) {
        std::string s(n, 'A');
        for (auto& c : s) c = "ACGT"[rng() % 4];
        return s;
    };
    genome_with_repeats g;
    g.chr_a = dna(20000);
    g.chr_b = dna(8000);
    g.chr_c = dna(20000);
    const std::string r = dna(1000), s = dna(1000), t = dna(1000);
    g.chr_a.replace(g.a1, 1000, r);
    g.chr_a.replace(g.a2, 1000, r);
    g.chr_b.replace(g.b1, 1000, s);
    g.chr_b.replace(g.b2, 1000, s);
    std::string diverged = t;
    for (std::size_t k = 25; k < 1000; k += 50) diverged[k] = diverged[k] == 'A' ? 'C' : 'A';  // every 50th base
    g.chr_c.replace(g.c1, 1000, t);
    g.chr_c.replace(g.c2, 1000, diverged);
    return g;
}

// Three substitutions (2 % of 150 bases), away from the ends.
std::string with_errors(std::string read, std::mt19937_64& rng) {
    for (int k = 0; k < 3; ++k) {
        const std::size_t at = 10 + rng() % (read.size() - 20);
        read[at] = read[at] == 'G' ? 'T' : 'G';
    }
    return read;
}

// read name -> SAM fields of its primary record
std::map<std::string, std::vector<std::string>> primaries(const std::string& sam) {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& l : lines_of(sam)) {
        if (l.empty() || l[0] == '@') continue;
        auto f = fields_of(l);
        const int flag = std::stoi(f.at(1));
        if (!(flag & (256 | 2048))) out[f[0]] = f;
    }
    return out;
}

}  // namespace

TEST_CASE("MAPQ sees the other copy of a repeat on the same contig and strand, PAF prints the same MAPQ",
          "[sam][mapq][cli]") {
    std::mt19937_64 rng(2026);
    const auto g = make_genome(rng);
    temp_dir dir("swgpu-mapq");
    const auto genome = write(dir, "genome.fa", ">chrA\n" + g.chr_a + "\n>chrB\n" + g.chr_b + "\n>chrC\n" + g.chr_c + "\n");
    struct read {
        std::string name, seq;
        std::string contig;
        std::size_t first_copy = 0;  // where the primary must lie (the leftmost copy)
        enum { tied, diverged, unique } kind;
    };
    std::vector<read> reads;
    for (int k = 0; k < 6; ++k) {
        const std::size_t off = 100 + 130 * static_cast<std::size_t>(k);  // inside the 1 kbp copies
        // From the second copy, exact and with errors: the two copies tie, the leftmost is the primary.
        reads.push_back({"a_exact" + std::to_string(k), g.chr_a.substr(g.a2 + off, 150), "chrA", g.a1 + off, read::tied});
        reads.push_back({"a_err" + std::to_string(k), with_errors(g.chr_a.substr(g.a2 + off, 150), rng), "chrA",
                         g.a1 + off, read::tied});
        reads.push_back({"b_exact" + std::to_string(k), g.chr_b.substr(g.b2 + off, 150), "chrB", g.b1 + off, read::tied});
        reads.push_back({"b_err" + std::to_string(k), with_errors(g.chr_b.substr(g.b2 + off, 150), rng), "chrB",
                         g.b1 + off, read::tied});
        // From the reverse strand of a copy: the other copy ties on the same (minus) strand.
        reads.push_back({"a_minus" + std::to_string(k), swgpu::reverse_complement(g.chr_a.substr(g.a1 + off, 150)),
                         "chrA", g.a1 + off, read::tied});
        // From the copy of the diverged pair: three differences from the other copy, so a low but non-zero MAPQ.
        reads.push_back({"c_div" + std::to_string(k), g.chr_c.substr(g.c1 + off, 150), "chrC", g.c1 + off, read::diverged});
        // Unique places.
        reads.push_back({"u" + std::to_string(k), g.chr_a.substr(15000 + 500 * static_cast<std::size_t>(k), 150), "chrA",
                         15000 + 500 * static_cast<std::size_t>(k), read::unique});
    }
    std::string fa;
    for (const auto& r : reads) fa += ">" + r.name + "\n" + r.seq + "\n";
    const auto q = write(dir, "reads.fa", fa);
    const auto sam = run_program("align --backend cpu -q " + q + " " + genome + " --outfmt sam");
    REQUIRE(sam.code == 0);
    const auto paf = run_program("align --backend cpu -q " + q + " " + genome + " --outfmt paf");
    REQUIRE(paf.code == 0);
    std::map<std::string, std::string> paf_mapq;
    for (const auto& l : lines_of(paf.out)) {
        const auto f = fields_of(l);
        if (!paf_mapq.count(f.at(0))) paf_mapq[f[0]] = f.at(11);
    }
    const auto recs = primaries(sam.out);
    for (const auto& r : reads) {
        INFO(r.name);
        REQUIRE(recs.count(r.name));
        const auto& f = recs.at(r.name);
        CHECK(f[2] == r.contig);
        const int mapq = std::stoi(f[4]);
        CHECK(paf_mapq.at(r.name) == f[4]);
        if (r.kind == read::tied) {
            CHECK(mapq == 0);
            // The primary: the first copy along the subject (the end cell first in row-major order).
            const std::size_t pos = std::stoul(f[3]);
            CHECK(pos >= r.first_copy + 1);
            CHECK(pos <= r.first_copy + 150);
        } else if (r.kind == read::diverged) {
            CHECK(mapq > 3);
            CHECK(mapq < 60);
            CHECK(f[3] == std::to_string(r.first_copy + 1));
        } else {
            CHECK(mapq == 60);
        }
    }
}

TEST_CASE("SAM header lists every database sequence in database order, so samtools cat keeps reads on their contigs",
          "[sam][cli]") {
    std::mt19937_64 rng(5);
    const auto g = make_genome(rng);
    temp_dir dir("swgpu-sq");
    // chrB and chrC have no hit in the first run, chrA none in the second.
    const auto genome = write(dir, "genome.fa", ">chrA\n" + g.chr_a + "\n>chrB\n" + g.chr_b + "\n>chrC\n" + g.chr_c + "\n");
    const auto r1 = write(dir, "r1.fa", ">ra\n" + g.chr_a.substr(16000, 150) + "\n");
    const auto r2 = write(dir, "r2.fa", ">rc\n" + g.chr_c.substr(6000, 150) + "\n");
    const std::string sq = "@SQ\tSN:chrA\tLN:20000\n@SQ\tSN:chrB\tLN:8000\n@SQ\tSN:chrC\tLN:20000\n";
    for (const auto& [reads, contig] : std::vector<std::pair<std::string, std::string>>{{r1, "chrA"}, {r2, "chrC"}}) {
        for (const std::string& db : {genome, (dir / "genome")}) {
            if (db != genome) REQUIRE(run_program("makedb -q " + genome + " " + (dir / "genome")).code == 0);
            const auto sam = run_program("align --backend cpu -q " + reads + " " + db + " --outfmt sam");
            REQUIRE(sam.code == 0);
            INFO(reads << " " << db);
            CHECK(sam.out.find(sq) != std::string::npos);
            const auto recs = primaries(sam.out);
            REQUIRE(recs.size() == 1);
            CHECK(recs.begin()->second.at(2) == contig);
        }
    }
    // samtools cat of the two runs keeps each read on its contig.
    const auto s1 = run_program("align --backend cpu -q " + r1 + " " + genome + " --outfmt sam -o " + (dir / "1.sam"));
    const auto s2 = run_program("align --backend cpu -q " + r2 + " " + genome + " --outfmt sam -o " + (dir / "2.sam"));
    REQUIRE(s1.code == 0);
    REQUIRE(s2.code == 0);
    if (std::system("samtools --version >/dev/null 2>&1") == 0) {
        for (const std::string k : {"1", "2"})
            REQUIRE(std::system(("samtools view -b -o " + (dir / (k + ".bam")) + " " + (dir / (k + ".sam"))).c_str()) == 0);
        REQUIRE(std::system(("samtools cat -o " + (dir / "cat.bam") + " " + (dir / "1.bam") + " " + (dir / "2.bam") +
                             " 2>/dev/null").c_str()) == 0);
        REQUIRE(std::system(("samtools view " + (dir / "cat.bam") + " > " + (dir / "cat.txt")).c_str()) == 0);
        const auto recs = primaries(swgpu::testing::slurp(dir / "cat.txt"));
        CHECK(recs.at("ra").at(2) == "chrA");
        CHECK(recs.at("rc").at(2) == "chrC");
    }
}

TEST_CASE("reads: IUPAC letters printed as read, zero-length reads unmapped", "[sam][cli]") {
    std::mt19937_64 rng(9);
    const auto g = make_genome(rng);
    temp_dir dir("swgpu-iupac-sam");
    const auto genome = write(dir, "genome.fa", ">chrA\n" + g.chr_a + "\n>chrB\n" + g.chr_b + "\n");
    std::string plus = g.chr_a.substr(16000, 150), minus = g.chr_b.substr(6500, 150);
    plus[40] = 'R';
    plus[90] = 'y';
    minus[20] = 'K';
    minus = swgpu::reverse_complement(minus);  // K -> M
    const std::string qual(150, 'I');
    const auto fq = write(dir, "reads.fq", "@p\n" + plus + "\n+\n" + qual + "\n@empty\n\n+\n\n@m\n" + minus + "\n+\n" +
                                               qual + "\n@empty2\n\n+\n\n");
    const auto sam = run_program("align --backend cpu -q " + fq + " " + genome + " --outfmt sam");
    REQUIRE(sam.code == 0);
    std::vector<std::vector<std::string>> recs;
    for (const auto& l : lines_of(sam.out))
        if (!l.empty() && l[0] != '@') recs.push_back(fields_of(l));
    REQUIRE(recs.size() == 4);  // in read order
    std::string plus_upper = plus;
    plus_upper[90] = 'Y';
    CHECK(recs[0][0] == "p");
    CHECK(recs[0][9] == plus_upper);
    CHECK(recs[1][0] == "empty");
    CHECK(recs[1][1] == "4");
    CHECK(recs[1][9] == "*");
    CHECK(recs[1][10] == "*");
    CHECK(recs[2][0] == "m");
    CHECK(recs[2][1] == "16");
    CHECK(recs[2][9] == swgpu::reverse_complement(minus));  // SEQ on the forward strand, the K kept
    CHECK(recs[2][9].find('K') != std::string::npos);
    CHECK(recs[3][0] == "empty2");
    CHECK(recs[3][1] == "4");
    // qseq prints the letters as read too; the empty reads print nothing in tabular output.
    const auto tab = run_program("align --backend cpu -q " + fq + " " + genome + " --outfmt '6 qseqid qseq' -k 1");
    REQUIRE(tab.code == 0);
    const auto lines = lines_of(tab.out);
    REQUIRE(lines.size() == 2);
    CHECK(fields_of(lines[0]).at(1).find('R') != std::string::npos);
    CHECK(fields_of(lines[0]).at(1).find('Y') != std::string::npos);
    CHECK(fields_of(lines[1]).at(1).find('M') != std::string::npos);
    // Every read empty: an error naming the file.
    const auto none = write(dir, "none.fq", "@e\n\n+\n\n");
    const auto n = run_program("align --backend cpu " + none + " " + genome);
    CHECK(n.code == 1);
}

TEST_CASE("split reads with --max-hsps: parts apart on the read are supplementary with SA:Z, overlapping ones secondary",
          "[sam][mapq][cli]") {
    std::mt19937_64 rng(11);
    const auto g = make_genome(rng);
    temp_dir dir("swgpu-split");
    const auto genome = write(dir, "genome.fa", ">chrA\n" + g.chr_a + "\n>chrB\n" + g.chr_b + "\n");
    // A chimeric read: 100 bases from chrA:16001 then 80 from chrA:18501 (same contig and strand); the repeat's read:
    // both copies of chrA's duplication align it whole.
    const std::string chimera = g.chr_a.substr(16000, 100) + g.chr_a.substr(18500, 80);
    const std::string repeat = g.chr_a.substr(g.a1 + 200, 150);
    const auto q = write(dir, "q.fa", ">chimera\n" + chimera + "\n>repeat\n" + repeat + "\n");
    const auto sam = run_program("align --backend cpu -q " + q + " " + genome + " --outfmt sam --max-hsps 2 -k 1");
    REQUIRE(sam.code == 0);
    std::vector<std::vector<std::string>> recs;
    for (const auto& l : lines_of(sam.out))
        if (!l.empty() && l[0] != '@') recs.push_back(fields_of(l));
    REQUIRE(recs.size() == 4);
    // The chimera: primary on the 100 bases (its local alignment may run a few bases past the junction), MAPQ 60 (its
    // other part is not another placement of them), and a supplementary record for the 80; each names the other in
    // SA:Z (RNAME, POS, strand, CIGAR, MAPQ, NM).
    CHECK(recs[0][0] == "chimera");
    CHECK(recs[0][1] == "0");
    CHECK(recs[0][3] == "16001");
    CHECK(recs[0][4] == "60");
    CHECK(recs[1][1] == "2048");
    CHECK(recs[1][3] == "18501");
    CHECK(recs[1][5] == "100S80M");
    CHECK(recs[1][9] == chimera);  // soft clips: SEQ whole
    const auto nm = [](const std::vector<std::string>& f) {
        for (const auto& x : f)
            if (x.rfind("NM:i:", 0) == 0) return x.substr(5);
        return std::string("?");
    };
    CHECK_THAT(sam.out, Catch::Contains("SA:Z:chrA,18501,+,100S80M," + recs[1][4] + "," + nm(recs[1]) + ";"));
    CHECK_THAT(sam.out, Catch::Contains("SA:Z:chrA,16001,+," + recs[0][5] + ",60," + nm(recs[0]) + ";"));
    // The repeat: its second alignment overlaps the first on the read: secondary, no SA:Z; MAPQ 0.
    CHECK(recs[2][0] == "repeat");
    CHECK(recs[2][1] == "0");
    CHECK(recs[2][4] == "0");
    CHECK(recs[3][1] == "256");
    CHECK(recs[2].back().rfind("SA:Z", 0) != 0);
    // Without --max-hsps: one record each, the chimera's primary as before.
    const auto one = run_program("align --backend cpu -q " + q + " " + genome + " --outfmt sam -k 1");
    REQUIRE(one.code == 0);
    CHECK(one.out.find("SA:Z") == std::string::npos);
    CHECK(one.out.find("chimera\t0\tchrA\t16001\t60\t" + recs[0][5] + "\t") != std::string::npos);
}

TEST_CASE("SAM header of a database of more than 100,000 sequences: the subjects with hits, and a @CO line saying so",
          "[sam][cli]") {
    std::mt19937_64 rng(13);
    temp_dir dir("swgpu-many-sq");
    const auto dna = [&](std::size_t n) {
        std::string s(n, 'A');
        for (auto& c : s) c = "ACGT"[rng() % 4];
        return s;
    };
    std::string db;
    db.reserve(100'001 * 40);
    std::string target;
    for (int k = 0; k < 100'001; ++k) {
        const std::string seq = dna(24);
        if (k == 77'777) target = seq;
        db += ">c" + std::to_string(k) + "\n" + seq + "\n";
    }
    const auto dbf = write(dir, "many.fa", db);
    const auto q = write(dir, "q.fa", ">r\n" + target + "\n");
    const auto sam = run_program("align --backend cpu -q " + q + " " + dbf + " --outfmt sam --no-evalue");
    REQUIRE(sam.code == 0);
    std::size_t sq = 0;
    for (const auto& l : lines_of(sam.out)) sq += l.rfind("@SQ\t", 0) == 0;
    CHECK(sq == 1);
    CHECK_THAT(sam.out, Catch::Contains("@SQ\tSN:c77777\tLN:24\n") &&
                            Catch::Contains("@CO\t@SQ lines for the subjects with hits only: the database has more than "
                                            "100000 sequences"));
}
