// SEG and DUST (core/align/masking.hpp): known low-complexity strings are masked and complex ones are not; the
// intervals equal segmasker's and dustmasker's (Debian package ncbi-blast+) where those are installed; `swgpu align
// --seg yes` prints the scores and E-values of `blastp -seg yes -comp_based_stats 0`, `--dust yes` those of
// `blastn -dust yes -soft_masking false`.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "core/align/masking.hpp"
#include "core/align/sequence.hpp"
#include "io/align/sequence_reader.hpp"
#include "tests/cli_support.hpp"

using namespace swgpu;
using swgpu::testing::fields_of;
using swgpu::testing::lines_of;
using swgpu::testing::run_program;
using swgpu::testing::slurp;
using swgpu::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

const fs::path source_dir = SWGPU_SOURCE_DIR;

std::span<const std::uint8_t> bytes(const std::string& s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::size_t masked_residues(const std::vector<masked_interval>& v) {
    std::vector<bool> at;
    for (const auto& iv : v) {
        if (at.size() <= iv.end) at.resize(iv.end + 1);
        for (std::size_t p = iv.begin; p <= iv.end; ++p) at[p] = true;
    }
    return std::size_t(std::count(at.begin(), at.end(), true));
}

// A fixed generator, so that the data are the same on every machine.
struct generator {
    std::uint64_t state = 0x2545f4914f6cdd1dull;
    std::uint64_t operator()(std::uint64_t bound) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % bound;
    }
    std::string letters(const std::string& alphabet, std::size_t n) {
        std::string s;
        for (std::size_t k = 0; k < n; ++k) s += alphabet[(*this)(alphabet.size())];
        return s;
    }
};

const std::string amino_acids = "ACDEFGHIKLMNPQRSTVWY";

// Proteins with low-complexity stretches (runs, short periods, biased compositions) inside random ones, and DNA with
// microsatellites, runs and biased stretches inside random bases.
std::vector<std::string> generated(bool dna, std::size_t count) {
    generator g;
    std::vector<std::string> out;
    const std::string alphabet = dna ? "ACGT" : amino_acids;
    for (std::size_t k = 0; k < count; ++k) {
        std::string s = g.letters(alphabet, 5 + g(dna ? 1500 : 600));
        for (std::uint64_t i = g(5); i > 0; --i) {
            std::string unit = g.letters(g(3) == 0 ? alphabet.substr(0, 3) : alphabet, 1 + g(7));
            std::string stretch;
            for (std::uint64_t r = 2 + g(25); r > 0; --r) stretch += unit;
            for (char& c : stretch)
                if (g(10) == 0) c = alphabet[g(alphabet.size())];
            s.insert(g(s.size() + 1), stretch);
        }
        out.push_back(s);
    }
    return out;
}

std::optional<std::string> program(const std::string& name) {
    const char* path = std::getenv("PATH");
    if (!path) return std::nullopt;
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
        if (!dir.empty() && ::access((fs::path(dir) / name).c_str(), X_OK) == 0) return (fs::path(dir) / name).string();
    return std::nullopt;
}

bool installed(const std::string& tool, const std::string& what) {
    if (program(tool)) return true;
    WARN(tool << " is not installed (Debian package ncbi-blast+): " << what << " skipped");
    return false;
}

int shell(const std::string& command) {
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// segmasker's or dustmasker's "-outfmt interval" output: per record (in file order) its intervals, sorted.
std::vector<std::vector<masked_interval>> read_intervals(const std::string& path) {
    std::vector<std::vector<masked_interval>> out;
    for (const auto& line : lines_of(slurp(path))) {
        if (line.rfind(">", 0) == 0) {
            out.emplace_back();
        } else if (const auto dash = line.find(" - "); dash != std::string::npos && !out.empty()) {
            out.back().push_back({std::stoull(line.substr(0, dash)), std::stoull(line.substr(dash + 3))});
        }
    }
    for (auto& v : out)
        std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
            return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
        });
    return out;
}

// Every record's intervals against the tool's: how many records agree exactly.
struct agreement {
    std::size_t records = 0, identical = 0, intervals = 0;
    std::string first_difference;
};

template <typename Finder>
agreement compare_with_tool(const std::vector<std::string>& seqs, const std::string& tool, Finder find) {
    temp_dir tmp("swgpu-masking");
    {
        std::ofstream f(tmp / "in.fa");
        for (std::size_t k = 0; k < seqs.size(); ++k) f << ">r" << k << "\n" << seqs[k] << "\n";
    }
    REQUIRE(shell(tool + " -in '" + (tmp / "in.fa") + "' -outfmt interval -out '" + (tmp / "out.txt") +
                  "' 2>/dev/null") == 0);
    const auto theirs = read_intervals(tmp / "out.txt");
    REQUIRE(theirs.size() == seqs.size());
    agreement a;
    for (std::size_t k = 0; k < seqs.size(); ++k) {
        const auto mine = find(bytes(seqs[k]));
        ++a.records;
        a.intervals += theirs[k].size();
        if (mine == theirs[k]) ++a.identical;
        else if (a.first_difference.empty()) a.first_difference = "record r" + std::to_string(k);
    }
    return a;
}

std::vector<std::string> records_of(const fs::path& file) {
    const sequence_set set = io::read_all(file.string());
    std::vector<std::string> out;
    for (std::size_t k = 0; k < set.size(); ++k)
        out.emplace_back(reinterpret_cast<const char*>(set[k].data()), set.length(k));
    return out;
}

}  // namespace

TEST_CASE("SEG masks known low-complexity stretches and leaves complex sequences alone", "[masking]") {
    // segmasker masks residues 22-41 (0-based) of this protein: its run of 20 prolines.
    const std::string q = "MKTAYIAKQRQISFVKSHFSRQPPPPPPPPPPPPPPPPPPPPQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEV"
                          "VHSLAKWKR";
    CHECK(seg_intervals(bytes(q)) == std::vector<masked_interval>{{22, 41}});
    // The 20 amino acids in turn: every window holds 12 different letters (entropy 3.58 bits, above hicut 2.5).
    std::string complex;
    for (int k = 0; k < 10; ++k) complex += amino_acids;
    CHECK(seg_intervals(bytes(complex)).empty());
    // Shorter than a window: nothing to measure.
    CHECK(seg_intervals(bytes(std::string("QQQQQQQQQQQ"))).empty());
    CHECK(seg_intervals(bytes(std::string(12, 'Q'))) == std::vector<masked_interval>{{0, 11}});
    // Letters outside the 20 amino acids have no composition: a window holding more than 2 triggers nothing.
    CHECK(seg_intervals(bytes(std::string(40, 'X'))).empty());
    // A biased stretch (only S and G) inside a complex protein is masked, and the masked part stays near it.
    const std::string sg = complex.substr(0, 60) + "SGSGGSSGSGSGGGSSGSGSGSSG" + complex.substr(60, 60);
    const auto sg_masked = seg_intervals(bytes(sg));
    REQUIRE(!sg_masked.empty());
    CHECK(sg_masked.front().begin >= 50);
    CHECK(sg_masked.back().end <= 94);
    CHECK(masked_residues(sg_masked) >= 20);
}

TEST_CASE("DUST masks microsatellites and runs, not random bases", "[masking]") {
    generator g;
    const std::string left = g.letters("ACGT", 100), right = g.letters("ACGT", 100);
    std::string ca;
    for (int k = 0; k < 30; ++k) ca += "CA";
    const auto masked = dust_intervals(bytes(left + ca + right));
    REQUIRE(masked.size() == 1);
    CHECK(masked[0].begin <= 100);
    CHECK(masked[0].begin >= 97);
    CHECK(masked[0].end >= 159);
    CHECK(masked[0].end <= 162);
    CHECK(dust_intervals(bytes(std::string(50, 'A'))) == std::vector<masked_interval>{{0, 49}});
    CHECK(masked_residues(dust_intervals(bytes(g.letters("ACGT", 2000)))) < 100);  // chance repeats only
    CHECK(dust_intervals(bytes(std::string("AAA"))).empty());  // no two triplets
}

TEST_CASE("masking a set masks both strands and counts what it masked", "[masking]") {
    const substitution_matrix m = substitution_matrix::match_mismatch(2, -3);
    generator g;
    const std::string left = g.letters("ACGT", 80), right = g.letters("ACGT", 80);
    const std::string s = left + std::string(40, 'T') + right;
    sequence_set plus, minus;
    plus.add("s", s);
    std::string rc(s.rbegin(), s.rend());
    for (char& c : rc) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
    minus.add("s", rc);
    encode(plus, m);
    encode(minus, m);
    const std::uint8_t n = m.code('N');
    const std::uint64_t masked = mask_low_complexity(plus, &minus, m, masking::dust, n);
    const auto iv = dust_intervals(bytes(s));
    REQUIRE(iv.size() == 1);
    CHECK(masked == iv[0].end - iv[0].begin + 1);
    for (std::size_t p = 0; p < s.size(); ++p) {
        const bool inside = p >= iv[0].begin && p <= iv[0].end;
        CHECK((plus[0][p] == n) == inside);
        CHECK((minus[0][s.size() - 1 - p] == n) == inside);
    }
}

TEST_CASE("SEG's intervals equal segmasker's", "[masking][crosscheck]") {
    if (!installed("segmasker", "cross-check of SEG against segmasker")) return;
    const auto find = [](std::span<const std::uint8_t> s) { return seg_intervals(s); };
    const auto demo = compare_with_tool(records_of(source_dir / "data/demo_db.fa"), "segmasker", find);
    INFO("demo_db.fa: " << demo.identical << " of " << demo.records << " records identical (" << demo.intervals
                        << " intervals); first difference " << demo.first_difference);
    CHECK(demo.identical == demo.records);
    CHECK(demo.intervals > 500);
    const auto gen = compare_with_tool(generated(false, 400), "segmasker", find);
    INFO("generated: " << gen.identical << " of " << gen.records << " records identical (" << gen.intervals
                       << " intervals); first difference " << gen.first_difference);
    CHECK(gen.identical == gen.records);
}

TEST_CASE("DUST's intervals equal dustmasker's", "[masking][crosscheck]") {
    if (!installed("dustmasker", "cross-check of DUST against dustmasker")) return;
    const auto find = [](std::span<const std::uint8_t> s) { return dust_intervals(s); };
    const auto phage = compare_with_tool(records_of(source_dir / "tests/data/crosscheck/lambda_pieces.fa"),
                                         "dustmasker", find);
    INFO("lambda_pieces.fa: " << phage.identical << " of " << phage.records << " identical; "
                              << phage.first_difference);
    CHECK(phage.identical == phage.records);
    const auto gen = compare_with_tool(generated(true, 400), "dustmasker", find);
    INFO("generated: " << gen.identical << " of " << gen.records << " records identical (" << gen.intervals
                       << " intervals); first difference " << gen.first_difference);
    CHECK(gen.identical == gen.records);
    CHECK(gen.intervals > 300);
}

namespace {

// The demo database's records with the most residues SEG masks, as queries (FASTA text).
std::string masked_queries(std::size_t count) {
    const auto recs = records_of(source_dir / "data/demo_db.fa");
    const sequence_set set = io::read_all((source_dir / "data/demo_db.fa").string());
    std::vector<std::pair<std::size_t, std::size_t>> by_mask;  // (masked residues, record)
    for (std::size_t k = 0; k < recs.size(); ++k) by_mask.emplace_back(masked_residues(seg_intervals(bytes(recs[k]))), k);
    std::sort(by_mask.begin(), by_mask.end(), std::greater<>());
    std::string fasta;
    for (std::size_t i = 0; i < count; ++i) fasta += ">" + set.names[by_mask[i].second] + "\n" + recs[by_mask[i].second] + "\n";
    return fasta;
}

// "qseqid sseqid" -> the rest of the line, for the lines of a tabular output.
std::map<std::string, std::vector<std::string>> by_pair(const std::string& text) {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& line : lines_of(text)) {
        const auto f = fields_of(line);
        if (f.size() >= 3) out.emplace(f[0] + " " + f[1], std::vector<std::string>(f.begin() + 2, f.end()));
    }
    return out;
}

}  // namespace

TEST_CASE("align --seg yes prints blastp -seg yes's scores, E-values and identities", "[masking][crosscheck]") {
    if (!installed("blastp", "cross-check of --seg yes against blastp") ||
        !installed("makeblastdb", "cross-check of --seg yes against blastp"))
        return;
    temp_dir tmp("swgpu-seg");
    const std::string db = (source_dir / "data/demo_db.fa").string();
    {
        std::ofstream f(tmp / "q.fa");
        f << masked_queries(6);
    }
    REQUIRE(shell("makeblastdb -in '" + db + "' -dbtype prot -out '" + (tmp / "demo") + "' >/dev/null 2>&1") == 0);
    const std::string columns = "'6 qseqid sseqid score evalue bitscore nident positive qstart qend sstart send'";
    REQUIRE(shell("blastp -seg yes -comp_based_stats 0 -query '" + (tmp / "q.fa") + "' -db '" + (tmp / "demo") +
                  "' -evalue 10 -max_target_seqs 1000 -max_hsps 1 -outfmt " + columns + " -out '" + (tmp / "b.tsv") +
                  "' 2>/dev/null") == 0);
    const auto r = run_program("align '" + (tmp / "q.fa") + "' '" + db + "' --seg yes -k 1000 --outfmt " + columns);
    REQUIRE(r.code == 0);
    const auto ours = by_pair(r.out), blast = by_pair(slurp(tmp / "b.tsv"));
    std::size_t same_score = 0, same_line = 0, same_place = 0, same_identities = 0;
    std::string first_difference;
    for (const auto& [pair, theirs] : blast) {
        const auto it = ours.find(pair);
        if (it == ours.end() || it->second[0] != theirs[0]) continue;  // BLAST's heuristic found less than the optimum
        ++same_score;
        if (theirs[1] == it->second[1] && theirs[2] == it->second[2]) ++same_line;
        else if (first_difference.empty()) first_difference = pair;
        // Identities and positives count the query's letters as read; an equal-scoring alignment between the same
        // ends may place a gap elsewhere (docs/align.md, "Ties"), so most, not all, agree.
        if (std::equal(theirs.begin() + 5, theirs.end(), it->second.begin() + 5)) {
            ++same_place;
            same_identities += theirs[3] == it->second[3] && theirs[4] == it->second[4];
        }
    }
    const auto unmasked = run_program("align '" + (tmp / "q.fa") + "' '" + db + "' -k 1000 --outfmt " + columns);
    INFO(blast.size() << " blastp lines, " << same_score << " with swgpu's score, " << same_line
                      << " of them with the same E-value and bit score (first difference " << first_difference << "); "
                      << same_identities << " of " << same_place << " between the same ends with the same identities");
    CHECK(same_score >= blast.size() / 2);
    CHECK(same_score >= 6);
    CHECK(same_line == same_score);
    CHECK(same_identities * 10 >= same_place * 8);
    CHECK(unmasked.out != r.out);  // the masks change the scores
}

TEST_CASE("align --dust yes prints blastn -dust yes -soft_masking false's scores and E-values",
          "[masking][crosscheck]") {
    if (!installed("blastn", "cross-check of --dust yes against blastn") ||
        !installed("makeblastdb", "cross-check of --dust yes against blastn"))
        return;
    temp_dir tmp("swgpu-dust");
    const std::string db = (source_dir / "tests/data/crosscheck/lambda_pieces.fa").string();
    // Queries: pieces of the database with microsatellites put in, so that masks fall inside the alignments.
    {
        const auto recs = records_of(db);
        generator g;
        std::ofstream f(tmp / "q.fa");
        for (std::size_t k = 0; k < 6; ++k) {
            const std::string& r = recs[k % recs.size()];
            const std::size_t len = std::min<std::size_t>(r.size(), 400), at = g(r.size() - len + 1);
            std::string piece = r.substr(at, len);
            std::string rep;
            for (int i = 0; i < 12; ++i) rep += "GA";
            piece.insert(len / 2, rep);
            f << ">dq" << k << "\n" << piece << "\n";
        }
    }
    REQUIRE(shell("makeblastdb -in '" + db + "' -dbtype nucl -out '" + (tmp / "phage") + "' >/dev/null 2>&1") == 0);
    const std::string columns = "'6 qseqid sseqid score evalue bitscore qstart qend sstart send'";
    REQUIRE(shell("blastn -task blastn -dust yes -soft_masking false -reward 2 -penalty -3 -gapopen 5 -gapextend 2 "
                  "-strand plus -query '" + (tmp / "q.fa") + "' -db '" + (tmp / "phage") +
                  "' -evalue 10 -max_target_seqs 1000 -max_hsps 1 -outfmt " + columns + " -out '" + (tmp / "b.tsv") +
                  "' 2>/dev/null") == 0);
    const auto r = run_program("align '" + (tmp / "q.fa") + "' '" + db + "' --dust yes --strand plus -k 1000 --outfmt " +
                               columns);
    REQUIRE(r.code == 0);
    const auto ours = by_pair(r.out), blast = by_pair(slurp(tmp / "b.tsv"));
    std::size_t same_score = 0, same_line = 0;
    for (const auto& [pair, theirs] : blast) {
        const auto it = ours.find(pair);
        if (it == ours.end() || it->second[0] != theirs[0]) continue;
        ++same_score;
        same_line += theirs[1] == it->second[1] && theirs[2] == it->second[2];
    }
    INFO(blast.size() << " blastn lines, " << same_score << " with swgpu's score, " << same_line
                      << " with the same E-value and bit score");
    CHECK(same_score >= 6);
    CHECK(same_line == same_score);
}

TEST_CASE("align refuses --seg and --dust for the other sequence type", "[masking][cli]") {
    const std::string q = (source_dir / "data/demo_queries.fa").string(), db = (source_dir / "data/demo_db.fa").string();
    const auto dust = run_program("align '" + q + "' '" + db + "' --dust yes");
    CHECK(dust.code == 2);
    CHECK(swgpu::testing::one_error_line(dust.err));
    const std::string phage = (source_dir / "tests/data/crosscheck/lambda_pieces.fa").string();
    const auto seg = run_program("align '" + phage + "' '" + phage + "' --seg yes");
    CHECK(seg.code == 2);
    CHECK(swgpu::testing::one_error_line(seg.err));
    CHECK(run_program("align '" + q + "' '" + db + "' --seg maybe").code == 2);
}
