// Collinear blocks (--zdrop Z, core/align/zdrop.hpp): the blocks of a path against the rule walked one cell at a
// time, written here; scores that re-scoring gives; no change where the rule does not cut; and the command line on
// lambda against a copy with an inversion and a deletion (data/lambda_phage.fa.gz), in the tabular format, SAM and PAF.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/align/alignment.hpp"
#include "core/align/hsps.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/zdrop.hpp"
#include "io/align/sequence_reader.hpp"
#include "tests/align/sequence_generators.hpp"
#include "tests/cli_support.hpp"

using namespace swgpu;
using namespace swgpu::testing;

namespace {

scoring dna(int match, int mismatch, int open, int extend) {
    return {substitution_matrix::match_mismatch(match, mismatch), {open, extend}, seq_type::dna};
}

// The rule walked one alignment column at a time (a gap column costs o + e when it opens a run, e after), the blocks in
// path order as (score, first column, last column): the definition of zdrop.hpp without its shortcut of whole gap runs.
struct column_block {
    long score, first, last;
    bool operator==(const column_block&) const = default;
};
std::vector<column_block> blocks_by_columns(const alignment& a, const codes& q, const codes& s, const scoring& sc,
                                            long z) {
    std::vector<long> delta, di;  // per column: its score, and (i - j) after it
    long i = a.query_begin, j = a.subject_begin;
    for (const auto& o : a.ops)
        for (std::uint32_t k = 0; k < o.len; ++k) {
            if (o.op == 'M') {
                delta.push_back(sc.matrix.score(q[static_cast<std::size_t>(i)], s[static_cast<std::size_t>(j)]));
                ++i, ++j;
            } else {
                delta.push_back(-(k == 0 ? sc.gaps.open + sc.gaps.extend : sc.gaps.extend));
                (o.op == 'I' ? i : j) += 1;
            }
            di.push_back(i - j);
        }
    const long n = static_cast<long>(delta.size()), e = sc.gaps.extend;
    std::vector<column_block> out;
    long c = 0;
    while (c < n) {
        const long from = c;
        long S = 0, M = 0, top = -1;  // top: the column after which S last reached M
        const auto diag_at = [&](long col) { return col < 0 || col < from ? (from == 0 ? a.query_begin - a.subject_begin : di[from - 1]) : di[col]; };
        for (;;) {
            if (c == n) {
                if (M > 0) out.push_back({M, from, top});
                break;
            }
            S += delta[c];
            ++c;
            if (S > 0 && S >= M) {
                M = S, top = c - 1;
                continue;
            }
            const long top_diag = top < 0 ? diag_at(-1) : diag_at(top);
            if (S <= 0 || M - S > z + e * std::labs(di[c - 1] - top_diag)) {
                if (M > 0) {
                    out.push_back({M, from, top});
                    c = top + 1;
                }
                break;
            }
        }
    }
    return out;
}

// The columns of `b` within its parent path `a` (b must be a part of it): (first, last).
std::pair<long, long> columns_in(const alignment& a, const alignment& b) {
    long col = 0, i = a.query_begin, j = a.subject_begin, first = -1, last = -1;
    for (const auto& o : a.ops)
        for (std::uint32_t k = 0; k < o.len; ++k) {
            if (i == b.query_begin && j == b.subject_begin && first < 0 && o.op == 'M') first = col;
            if (o.op != 'D') ++i;
            if (o.op != 'I') ++j;
            if (i == b.query_end + 1 && j == b.subject_end + 1 && o.op == 'M') last = col;
            ++col;
        }
    return {first, last};
}

std::string revcomp(std::string s) {
    std::reverse(s.begin(), s.end());
    for (auto& c : s) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : c;
    return s;
}

// The score of BLAST's qseq/sseq rows (affine gaps, BLAST convention), recomputed from the letters.
long rescore_rows(const std::string& qs, const std::string& ss, int match, int mismatch, int open, int extend) {
    long score = 0;
    char gap = 0;  // the kind of the gap run open, 0 none
    for (std::size_t k = 0; k < qs.size(); ++k) {
        const char kind = qs[k] == '-' ? 'q' : ss[k] == '-' ? 's' : 0;
        if (kind) {
            score -= extend + (kind != gap ? open : 0);
        } else {
            score += qs[k] == ss[k] ? match : mismatch;
        }
        gap = kind;
    }
    return score;
}

std::string lambda_genome() {
    const std::string path = from_env_or("SWGPU_SOURCE_DIR", SWGPU_SOURCE_DIR) + "/data/lambda_phage.fa.gz";
    const sequence_set set = io::read_all(path);
    REQUIRE(set.size() == 1);
    const auto r = set[0];
    return std::string(r.begin(), r.end());
}

}  // namespace

TEST_CASE("zdrop: the blocks of a path are the rule walked a column at a time, each re-scoring to its score",
          "[zdrop]") {
    std::mt19937_64 rng(47);
    const std::vector<scoring> scorings = {dna(2, -3, 5, 2), dna(1, -1, 2, 1), dna(1, -4, 0, 3)};
    int cut = 0, unchanged = 0;
    for (int k = 0; k < 150; ++k) {
        const scoring& sc = scorings[k % scorings.size()];
        // Related pieces separated by unrelated stretches and an inverted piece: paths that the rule cuts.
        const codes a = random_sequence(rng, 200 + rng() % 400, dna4, sc.matrix);
        codes b = mutate(rng, a, 0.05 * (k % 4), 2, 30, dna4, sc.matrix);
        const std::size_t at = rng() % b.size(), len = std::min<std::size_t>(b.size() - at, 20 + rng() % 150);
        std::reverse(b.begin() + static_cast<long>(at), b.begin() + static_cast<long>(at + len));
        hsp_options opt;
        opt.max_hsps = 3;
        const auto paths = sw_align_hsps(a, b, sc, opt);
        for (const alignment& path : paths) {
            for (const int z : {0, 3, 10, 25, 60, 200, max_zdrop}) {
                INFO("pair " << k << ", Z " << z << ", path score " << path.score);
                const auto blocks = zdrop_blocks(path, a, b, sc, z);
                const auto want = blocks_by_columns(path, a, b, sc, z);
                REQUIRE(blocks.size() == want.size());
                // zdrop_blocks gives them best first (score, then along the path): the same set.
                std::vector<column_block> got;
                for (const alignment& x : blocks) {
                    CHECK(rescore(x, a, b, sc) == x.score);
                    CHECK(x.score > 0);
                    CHECK(x.ops.front().op == 'M');
                    CHECK(x.ops.back().op == 'M');
                    const auto [first, last] = columns_in(path, x);
                    got.push_back({x.score, first, last});
                }
                for (std::size_t m = 1; m < blocks.size(); ++m) CHECK(blocks[m].score <= blocks[m - 1].score);
                std::vector<column_block> sorted_want = want;
                std::stable_sort(sorted_want.begin(), sorted_want.end(),
                                 [](const column_block& x, const column_block& y) { return x.score > y.score; });
                CHECK(got == sorted_want);
                // Few blocks asked for: the best of them.
                const auto two = zdrop_blocks(path, a, b, sc, z, 2);
                REQUIRE(two.size() == std::min<std::size_t>(2, blocks.size()));
                for (std::size_t m = 0; m < two.size(); ++m) CHECK(two[m] == blocks[m]);
                if (blocks.size() == 1 && blocks[0] == path) ++unchanged;
                else ++cut;
            }
            // Not cut: the alignment itself (every prefix of an optimal local alignment scores more than 0).
            CHECK(zdrop_blocks(path, a, b, sc, max_zdrop) == std::vector<alignment>{path});
        }
    }
    CHECK(cut > 100);
    CHECK(unchanged > 100);
}

TEST_CASE("zdrop: a gap in one sequence is forgiven, a drop no gap explains is cut", "[zdrop]") {
    const scoring sc = dna(2, -3, 5, 2);
    std::mt19937_64 rng(5);
    std::string x(600, 'A');
    for (auto& c : x) c = "ACGT"[rng() % 4];
    const auto enc = [&](const std::string& s) { return encode_letters(s, sc.matrix); };
    // A 100-base deletion: the drop is 5 + 2·100 against Z + 2·100: cut only when Z < 5 (the gap opening).
    const codes q = enc(x), s = enc(x.substr(0, 300) + x.substr(400));
    const alignment with_gap = sw_align(q, s, sc);
    REQUIRE(with_gap.ops.size() == 3);
    CHECK(zdrop_blocks(with_gap, q, s, sc, 5) == std::vector<alignment>{with_gap});
    const auto cut = zdrop_blocks(with_gap, q, s, sc, 4);
    REQUIRE(cut.size() == 2);  // the two sides, each exact (the gap may sit a base or two off by chance matches)
    CHECK(cut[0].score + cut[1].score == with_gap.score + 5 + 2 * 100);
    CHECK(cut[0].query_begin == 0);
    CHECK(cut[1].query_end == 599);
    CHECK(cut[0].ops.size() == 1);
    CHECK(cut[1].ops.size() == 1);
    // 300 unrelated bases against 300 others between two exact sides of 400: the optimal alignment runs through them
    // (800 + 800 beats either side) and no gap explains the drop there: cut, a block each side.
    std::string a = x.substr(0, 400), b = a;
    for (int k = 0; k < 300; ++k) a += "ACGT"[rng() % 4], b += "ACGT"[rng() % 4];
    std::string side(400, 'A');
    for (auto& c : side) c = "ACGT"[rng() % 4];
    a += side, b += side;
    const codes qa = enc(a), qb = enc(b);
    const alignment through = sw_align(qa, qb, sc);
    INFO(cigar_string(through.ops) << " " << through.score);
    REQUIRE(through.query_begin == 0);
    REQUIRE(through.query_end == 1099);
    CHECK(zdrop_blocks(through, qa, qb, sc, max_zdrop) == std::vector<alignment>{through});
    const auto two = zdrop_blocks(through, qa, qb, sc, 20, 2);
    REQUIRE(two.size() == 2);
    const alignment& left = two[0].query_begin == 0 ? two[0] : two[1];
    const alignment& right = two[0].query_begin == 0 ? two[1] : two[0];
    CHECK(left.query_begin == 0);
    CHECK(left.query_end >= 399);
    CHECK(left.query_end <= 430);  // the side, and a few chance matches past it
    CHECK(right.query_begin >= 670);
    CHECK(right.query_begin <= 700);
    CHECK(right.query_end == 1099);
    CHECK(rescore(left, qa, qb, sc) == left.score);
    CHECK(rescore(right, qa, qb, sc) == right.score);
}

TEST_CASE("zdrop: lambda against a copy with a 5 kbp inversion and a 1 kbp deletion gives its three blocks",
          "[zdrop][cli][long]") {
    const std::string lambda = lambda_genome();
    REQUIRE(lambda.size() == 48502);
    // The copy: lambda[0, 20000) + inverted lambda[20000, 25000) + lambda[25000, 35000) + lambda[36000, end).
    const std::string copy = lambda.substr(0, 20000) + revcomp(lambda.substr(20000, 5000)) +
                             lambda.substr(25000, 10000) + lambda.substr(36000);
    temp_dir dir;
    const std::string qf = from_env_or("SWGPU_SOURCE_DIR", SWGPU_SOURCE_DIR) + "/data/lambda_phage.fa.gz";
    const std::string sf = dir / "copy.fa";
    {
        std::ofstream out(sf);
        out << ">copy\n" << copy << "\n";
    }
    const std::string pair = "align " + qf + " " + sf + " --backend cpu -q ";
    const std::string cols = " --outfmt '6 qstart qend sstart send score sstrand qseq sseq'";

    // Without --zdrop: one plus-strand alignment through the inversion, as before (golden), and the minus one.
    const auto plain = run_program(pair + "--outfmt '6 qstart qend sstart send score sstrand'");
    REQUIRE(plain.code == 0);
    CHECK(plain.out == "1\t48502\t1\t47502\t78811\tplus\n19999\t25002\t25002\t19999\t10008\tminus\n");

    const auto r = run_program(pair + "--zdrop 400 --max-hsps 3 -e 1e-10" + cols);
    REQUIRE(r.code == 0);
    INFO(r.out);
    std::vector<std::vector<std::string>> rows;
    for (const auto& l : lines_of(r.out)) rows.push_back(fields_of(l));
    const auto near = [](const std::string& v, long want) { return std::abs(std::stol(v) - want) <= 30; };
    const auto found = [&](long qs, long qe, long ss, long se, const std::string& strand) {
        return std::count_if(rows.begin(), rows.end(), [&](const auto& f) {
            return f[5] == strand && near(f[0], qs) && near(f[1], qe) && near(f[2], ss) && near(f[3], se);
        });
    };
    CHECK(found(1, 20000, 1, 20000, "plus") == 1);           // left of the inversion
    CHECK(found(25001, 48502, 25001, 47502, "plus") == 1);   // right of it, across the deletion (one gap)
    CHECK(found(20001, 25000, 25000, 20001, "minus") == 1);  // the inversion
    CHECK(rows.size() == 3);
    std::set<long> scores;
    for (const auto& f : rows) {
        CHECK(std::stol(f[4]) == rescore_rows(f[6], f[7], 2, -3, 5, 2));  // each block re-scores to its score
        scores.insert(std::stol(f[4]));
    }
    // The best block first: the right side, then the left side (the same pair), then the minus strand's.
    REQUIRE(rows.size() == 3);
    CHECK(rows[0][5] == "plus");
    CHECK(rows[1][5] == "plus");
    CHECK(std::stol(rows[0][4]) > std::stol(rows[1][4]));

    // SAM: the best block primary, the two others supplementary (2048) with SA:Z on the primary listing them; PAF:
    // a line each; AS:i the blocks' scores.
    const auto sam = run_program(pair + "--zdrop 400 --max-hsps 3 -e 1e-10 -k 2 --outfmt sam");
    REQUIRE(sam.code == 0);
    std::vector<std::vector<std::string>> records;
    for (const auto& l : lines_of(sam.out))
        if (!l.empty() && l[0] != '@') records.push_back(fields_of(l));
    REQUIRE(records.size() == 3);
    CHECK(records[0][1] == "0");
    CHECK(records[1][1] == "2048");
    CHECK(records[2][1] == "2064");  // supplementary, minus strand
    std::set<long> as;
    for (std::size_t k = 0; k < records.size(); ++k) {
        std::string sa;
        for (const auto& f : records[k]) {
            if (f.rfind("AS:i:", 0) == 0) as.insert(std::stol(f.substr(5)));
            if (f.rfind("SA:Z:", 0) == 0) sa = f.substr(5);
        }
        CHECK(std::count(sa.begin(), sa.end(), ';') == 2);  // every part lists the two others
    }
    CHECK(as == scores);
    const auto paf = run_program(pair + "--zdrop 400 --max-hsps 3 -e 1e-10 --outfmt paf");
    REQUIRE(paf.code == 0);
    std::set<long> paf_scores;
    for (const auto& l : lines_of(paf.out))
        for (const auto& f : fields_of(l))
            if (f.rfind("AS:i:", 0) == 0) paf_scores.insert(std::stol(f.substr(5)));
    CHECK(lines_of(paf.out).size() == 3);
    CHECK(paf_scores == scores);
}

TEST_CASE("zdrop: a genome against a relative with three inversions and two translocations gives every block",
          "[zdrop][cli][long]") {
    // A random 24 kbp genome in 12 pieces of 2 kbp; the relative inverts pieces 2, 6 and 9 and swaps pieces 4 and
    // 7 (two translocations: each moves to the other's place).
    std::mt19937_64 rng(2026);
    std::string g(24000, 'A');
    for (auto& c : g) c = "ACGT"[rng() % 4];
    const auto piece = [&](int k) { return g.substr(static_cast<std::size_t>(k) * 2000, 2000); };
    const std::vector<int> order = {0, 1, 2, 3, 7, 5, 6, 4, 8, 9, 10, 11};
    const std::set<int> inverted = {2, 6, 9};
    std::string rel;
    for (const int k : order) rel += inverted.count(k) ? revcomp(piece(k)) : piece(k);
    temp_dir dir;
    const std::string gf = dir / "g.fa", rf = dir / "r.fa";
    std::ofstream(gf) << ">g\n" << g << "\n";
    std::ofstream(rf) << ">r\n" << rel << "\n";
    const auto r = run_program("align " + gf + " " + rf + " --backend cpu -q --zdrop 400 --max-hsps 12 -e 1e-10 "
                               "--outfmt '6 qstart qend sstart send score sstrand qseq sseq'");
    REQUIRE(r.code == 0);
    INFO(r.out);
    std::vector<std::vector<std::string>> rows;
    for (const auto& l : lines_of(r.out)) rows.push_back(fields_of(l));
    // Every piece of the genome is covered by a block on its strand, at its place in the relative: consecutive
    // collinear pieces (0-1, 10-11 and so on) may share one block.
    for (int k = 0; k < 12; ++k) {
        const long qs = k * 2000 + 1, qe = qs + 1999;
        const long at = std::find(order.begin(), order.end(), k) - order.begin();
        const long ss = at * 2000 + 1, se = ss + 1999;
        const bool minus = inverted.count(k) > 0;
        const bool covered = std::any_of(rows.begin(), rows.end(), [&](const auto& f) {
            const long q0 = std::stol(f[0]), q1 = std::stol(f[1]), s0 = std::stol(f[2]), s1 = std::stol(f[3]);
            if ((f[5] == "minus") != minus) return false;
            // The block holds the piece (up to 30 bases at each end) on the piece's diagonal in the relative.
            if (q0 > qs + 30 || q1 < qe - 30) return false;
            return minus ? std::labs((s0 + q0) - (se + qs)) <= 30 : std::labs((s0 - q0) - (ss - qs)) <= 30;
        });
        INFO("piece " << k);
        CHECK(covered);
    }
    for (const auto& f : rows) CHECK(std::stol(f[4]) == rescore_rows(f[6], f[7], 2, -3, 5, 2));
}

TEST_CASE("zdrop: a negative Z, a Z that is not a number and protein queries are one error line, exit 2", "[zdrop][cli]") {
    const std::string src = from_env_or("SWGPU_SOURCE_DIR", SWGPU_SOURCE_DIR);
    const std::string protein = "align " + src + "/data/demo_queries.fa " + src + "/data/demo_db.fa --backend cpu";
    temp_dir dir;
    const std::string fa = dir / "d.fa";
    std::ofstream(fa) << ">d\nACGTACGTTGCAACGTAGGCTAGCTAGGATCGATCGAT\n";
    const std::string dna = "align " + fa + " " + fa + " --backend cpu";
    for (const std::string& args : {dna + " --zdrop -1", dna + " --zdrop -400", dna + " --zdrop abc",
                                    protein + " --zdrop 400", protein + " --zdrop 400 --max-hsps 3"}) {
        INFO(args);
        const auto r = run_program(args);
        CHECK(r.code == 2);
        CHECK(one_error_line(r.err));
        CHECK(r.out.empty());
    }
    CHECK_THAT(run_program(dna + " --zdrop -5").err, Catch::Contains("--zdrop must be 0 or more (got -5)"));
    CHECK_THAT(run_program(protein + " --zdrop 400").err, Catch::Contains("--zdrop cuts DNA alignments"));
    // Z = 0 is valid (cut at any drop no gap explains), and an alignment without such a drop is printed as it is.
    const auto zero = run_program(dna + " --zdrop 0 --outfmt '6 qstart qend score'");
    CHECK(zero.code == 0);
    CHECK(zero.out == run_program(dna + " --outfmt '6 qstart qend score'").out);
}
