// Several local alignments per pair (core/align/hsps.hpp): against a textbook Waterman-Eggert written here (three
// full matrices of long, a std::set of forbidden pairs, recomputed from scratch for every alignment), against
// sw_align for the first alignment, and against lalign36 (FASTA's SIM implementation) where it is installed.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/align/hsps.hpp"
#include "core/align/placement.hpp"
#include "core/error.hpp"
#include "core/align/smith_waterman.hpp"
#include "tests/align/sequence_generators.hpp"

using namespace swgpu;
using namespace swgpu::testing;

namespace {

struct textbook_hsp {
    long score = 0, qbeg = 0, qend = 0, sbeg = 0, send = 0;
    std::string ops;
};

// Greedy non-intersecting local alignments, by the book: each round recomputes H, E, F over the whole matrix with
// the diagonal step into every pair aligned before forbidden, takes the first best cell in row-major order and walks
// back (diagonal before E before F; a gap closes before it extends).
std::vector<textbook_hsp> textbook_waterman_eggert(const codes& q, const codes& s, const scoring& sc, int rounds) {
    const long m = static_cast<long>(q.size()), n = static_cast<long>(s.size());
    const long open = sc.gaps.open, ext = sc.gaps.extend, NEG = -(1L << 40);
    std::set<std::pair<long, long>> forbidden;
    std::vector<textbook_hsp> out;
    for (int round = 0; round < rounds; ++round) {
        std::vector<std::vector<long>> H(m + 1, std::vector<long>(n + 1, 0)), E(m + 1, std::vector<long>(n + 1, NEG)),
            F(m + 1, std::vector<long>(n + 1, NEG));
        long best = 0, bi = 0, bj = 0;
        for (long i = 1; i <= m; ++i)
            for (long j = 1; j <= n; ++j) {
                E[i][j] = std::max(E[i - 1][j] - ext, H[i - 1][j] - open - ext);
                F[i][j] = std::max(F[i][j - 1] - ext, H[i][j - 1] - open - ext);
                long h = std::max({0L, E[i][j], F[i][j]});
                if (!forbidden.count({i, j})) h = std::max(h, H[i - 1][j - 1] + sc.matrix.score(q[i - 1], s[j - 1]));
                H[i][j] = h;
                if (h > best) best = h, bi = i, bj = j;
            }
        if (best <= 0) break;
        textbook_hsp r;
        r.score = best;
        r.qend = bi - 1;
        r.send = bj - 1;
        long i = bi, j = bj;
        char state = 'H';
        std::string rev;
        while (true) {
            if (state == 'H') {
                if (H[i][j] == 0) break;
                if (!forbidden.count({i, j}) && H[i][j] == H[i - 1][j - 1] + sc.matrix.score(q[i - 1], s[j - 1])) {
                    rev += 'M';
                    --i, --j;
                } else if (H[i][j] == E[i][j]) {
                    state = 'E';
                } else {
                    state = 'F';
                }
            } else if (state == 'E') {
                rev += 'I';
                if (E[i][j] == H[i - 1][j] - open - ext) state = 'H';
                --i;
            } else {
                rev += 'D';
                if (F[i][j] == H[i][j - 1] - open - ext) state = 'H';
                --j;
            }
            if (state == 'H' && (i == 0 || j == 0)) break;
        }
        r.qbeg = i;
        r.sbeg = j;
        r.ops.assign(rev.rbegin(), rev.rend());
        long a = i + 1, b = j + 1;
        for (char op : r.ops) {
            if (op == 'M') forbidden.insert({a, b});
            if (op != 'D') ++a;
            if (op != 'I') ++b;
        }
        out.push_back(r);
    }
    return out;
}

std::string ops_of(const alignment& a) {
    std::string s;
    for (const auto& o : a.ops) s.append(o.len, o.op);
    return s;
}

scoring dna(int match, int mismatch, int open, int extend) {
    return {substitution_matrix::match_mismatch(match, mismatch), {open, extend}, seq_type::dna};
}

// A pair with repeats: pieces of q copied into s (some twice, some mutated), so several good alignments exist.
std::pair<codes, codes> repeated_pair(std::mt19937_64& rng, const std::string& letters, const substitution_matrix& m) {
    const codes q = random_sequence(rng, 60 + rng() % 200, letters, m);
    codes s = random_sequence(rng, 20 + rng() % 60, letters, m);
    for (int k = 0; k < 3; ++k) {
        const std::size_t len = 10 + rng() % 40, at = rng() % (q.size() - std::min(q.size() - 1, len));
        codes piece(q.begin() + at, q.begin() + std::min(q.size(), at + len));
        piece = mutate(rng, piece, 0.1, 1, 3, letters, m);
        s.insert(s.end(), piece.begin(), piece.end());
        const codes filler = random_sequence(rng, 5 + rng() % 40, letters, m);
        s.insert(s.end(), filler.begin(), filler.end());
    }
    return {q, s};
}


// The best H of the textbook's matrices with the diagonal step into every pair that `primary` aligns forbidden (pairs
// outside the matrix ignored).
long textbook_apart(const codes& q, const codes& s, const scoring& sc, const alignment& primary) {
    const long m = static_cast<long>(q.size()), n = static_cast<long>(s.size());
    const long open = sc.gaps.open, ext = sc.gaps.extend, NEG = -(1L << 40);
    std::set<std::pair<long, long>> forbidden;
    long i = primary.query_begin + 1, j = primary.subject_begin + 1;
    for (const auto& op : primary.ops)
        for (std::uint32_t k = 0; k < op.len; ++k) {
            if (op.op == 'M') forbidden.insert({i, j});
            if (op.op != 'D') ++i;
            if (op.op != 'I') ++j;
        }
    std::vector<std::vector<long>> H(m + 1, std::vector<long>(n + 1, 0)), E(m + 1, std::vector<long>(n + 1, NEG)),
        F(m + 1, std::vector<long>(n + 1, NEG));
    long best = 0;
    for (long a = 1; a <= m; ++a)
        for (long b = 1; b <= n; ++b) {
            E[a][b] = std::max(E[a - 1][b] - ext, H[a - 1][b] - open - ext);
            F[a][b] = std::max(F[a][b - 1] - ext, H[a][b - 1] - open - ext);
            long h = std::max({0L, E[a][b], F[a][b]});
            if (!forbidden.count({a, b})) h = std::max(h, H[a - 1][b - 1] + sc.matrix.score(q[a - 1], s[b - 1]));
            H[a][b] = h;
            best = std::max(best, h);
        }
    return best;
}
}  // namespace

TEST_CASE("max_hsps: non-intersecting alignments equal a textbook Waterman-Eggert, the first is sw_align's", "[hsps]") {
    std::mt19937_64 rng(41);
    const std::vector<scoring> scorings = {dna(2, -3, 5, 2), dna(1, -1, 2, 1),
                                           {substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein},
                                           {substitution_matrix::builtin("BLOSUM62"), {0, 1}, seq_type::protein}};
    int several = 0;
    for (int k = 0; k < 120; ++k) {
        const auto& sc = scorings[k % scorings.size()];
        const std::string& letters = sc.type == seq_type::dna ? dna4 : protein20;
        auto [q, s] = k % 3 == 0 ? random_pair(rng, 150, letters, sc.matrix) : repeated_pair(rng, letters, sc.matrix);
        if (k % 2) std::swap(q, s);
        hsp_options opt;
        opt.max_hsps = 6;
        const auto got = sw_align_hsps(q, s, sc, opt);
        const auto want = textbook_waterman_eggert(q, s, sc, 6);
        INFO("pair " << k << ": " << q.size() << " x " << s.size());
        REQUIRE(got.size() == want.size());
        several += got.size() > 2;
        for (std::size_t h = 0; h < got.size(); ++h) {
            INFO("alignment " << h);
            CHECK(got[h].score == want[h].score);
            CHECK(got[h].query_begin == want[h].qbeg);
            CHECK(got[h].query_end == want[h].qend);
            CHECK(got[h].subject_begin == want[h].sbeg);
            CHECK(got[h].subject_end == want[h].send);
            CHECK(ops_of(got[h]) == want[h].ops);
            CHECK(rescore(got[h], q, s, sc) == got[h].score);
            if (h > 0) CHECK(got[h].score <= got[h - 1].score);
        }
        if (!got.empty()) CHECK(got[0] == sw_align(q, s, sc));
    }
    CHECK(several > 40);  // the pairs did hold several alignments
}

TEST_CASE("best_apart: the second Waterman-Eggert alignment of the primary's part of the query, whole subject or a part",
          "[hsps][mapq]") {
    // MAPQ's other placement on the same subject: the textbook's second alignment of the query's aligned part, by
    // score only in linear memory; over a part of the subject, the best alignment inside the part that avoids the
    // primary's pairs.
    std::mt19937_64 rng(43);
    const std::vector<scoring> scorings = {dna(2, -3, 5, 2), dna(1, -1, 2, 1),
                                           {substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein}};
    for (int k = 0; k < 90; ++k) {
        const auto& sc = scorings[k % scorings.size()];
        const std::string& letters = sc.type == seq_type::dna ? dna4 : protein20;
        auto [q, s] = k % 3 == 0 ? random_pair(rng, 150, letters, sc.matrix) : repeated_pair(rng, letters, sc.matrix);
        if (k % 2) std::swap(q, s);
        INFO("pair " << k << ": " << q.size() << " x " << s.size());
        const auto want = textbook_waterman_eggert(q, s, sc, 2);
        if (want.empty()) continue;
        const alignment first = sw_align(q, s, sc);
        // The primary's part of the query, and the primary in its coordinates.
        const codes seg(q.begin() + first.query_begin, q.begin() + first.query_end + 1);
        alignment in_seg = first;
        in_seg.query_begin = 0;
        in_seg.query_end -= first.query_begin;
        CHECK(best_apart(q, s, 0, first, sc) == textbook_apart(seg, s, sc, in_seg));
        if (seg.size() == q.size()) CHECK(best_apart(q, s, 0, first, sc) == (want.size() > 1 ? want[1].score : 0));
        // A part [b, e) of the subject: the textbook over the part alone, with the primary's pairs that fall in it.
        const std::size_t b = rng() % s.size(), e = b + 1 + rng() % (s.size() - b);
        const codes part(s.begin() + static_cast<std::ptrdiff_t>(b), s.begin() + static_cast<std::ptrdiff_t>(e));
        alignment shifted = in_seg;  // the same pairs in the part's coordinates
        shifted.subject_begin -= static_cast<std::int64_t>(b);
        shifted.subject_end -= static_cast<std::int64_t>(b);
        // Pairs outside the part never meet its cells; the textbook forbids the pairs of `shifted` that land in it.
        CHECK(best_apart(q, part, static_cast<std::int64_t>(b), first, sc) == textbook_apart(seg, part, sc, shifted));
    }
}

TEST_CASE("max_hsps: no two alignments share an aligned pair, min_score and max_hsps stop the search", "[hsps]") {
    std::mt19937_64 rng(42);
    const scoring sc{substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein};
    for (int k = 0; k < 30; ++k) {
        const auto [q, s] = repeated_pair(rng, protein20, sc.matrix);
        hsp_options opt;
        opt.max_hsps = 20;
        const auto all = sw_align_hsps(q, s, sc, opt);
        std::set<std::pair<std::int64_t, std::int64_t>> pairs;
        for (const auto& a : all) {
            std::int64_t i = a.query_begin, j = a.subject_begin;
            for (const auto& op : a.ops)
                for (std::uint32_t n = 0; n < op.len; ++n) {
                    if (op.op == 'M') CHECK(pairs.insert({i, j}).second);
                    if (op.op != 'D') ++i;
                    if (op.op != 'I') ++j;
                }
        }
        opt.max_hsps = 2;
        const auto two = sw_align_hsps(q, s, sc, opt);
        CHECK(two.size() == std::min<std::size_t>(2, all.size()));
        for (std::size_t h = 0; h < two.size(); ++h) CHECK(two[h] == all[h]);
        if (all.size() >= 2) {
            opt.max_hsps = 20;
            opt.min_score = all[1].score + 1;  // only the alignments scoring more than the second
            const auto above = sw_align_hsps(q, s, sc, opt);
            CHECK(above.size() >= 1);
            for (const auto& a : above) CHECK(a.score >= opt.min_score);
        }
    }
    hsp_options opt;
    opt.max_cells = 100;
    const codes a(20, 1), b(20, 1);
    bool refused = false;
    try {
        (void)sw_align_hsps(a, b, sc, opt);
    } catch (const error& e) {
        refused = e.code() == exit_code::bad_command_line;
    }
    CHECK(refused);
}

TEST_CASE("max_hsps: the scores lalign36 (SIM, FASTA 36) reports for the same pairs", "[hsps]") {
    if (std::system("command -v lalign36 >/dev/null 2>&1") != 0) {
        WARN("lalign36 not installed (Debian fasta3): skipped");
        return;
    }
    std::mt19937_64 rng(43);
    const auto dir = std::filesystem::temp_directory_path() / ("swgpu-lalign-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    int compared = 0;
    // Protein under BLOSUM62 11/1, and DNA +2/-3 with gaps 5/2 on the forward strand (lalign36 -n -3).
    const scoring protein{substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein};
    const scoring nucleotide = dna(2, -3, 5, 2);
    for (int k = 0; k < 20; ++k) {
        const bool is_dna = k % 2 == 1;
        const scoring& sc = is_dna ? nucleotide : protein;
        const auto [q, s] = repeated_pair(rng, is_dna ? dna4 : protein20, sc.matrix);
        const auto text = [&](const codes& c) {
            std::string t;
            for (auto x : c) t += sc.matrix.letters()[x];
            return t;
        };
        std::ofstream(dir / "q.fa") << ">q\n" << text(q) << "\n";
        std::ofstream(dir / "s.fa") << ">s\n" << text(s) << "\n";
        // lalign36's gaps: -f the opening, -g each residue (BLAST's 11/1 as -f -11 -g -1); -E 1e6 keeps every
        // alignment it finds, -K the number wanted.
        const std::string how = is_dna ? "-n -3 -r +2/-3 -f -5 -g -2" : "-p -s BL62 -f -11 -g -1";
        const std::string cmd = "lalign36 -q " + how + " -E 1000000 -K 5 '" + (dir / "q.fa").string() +
                                "' '" + (dir / "s.fa").string() + "' > '" + (dir / "out").string() + "' 2>&1";
        REQUIRE(std::system(cmd.c_str()) == 0);
        std::ifstream in(dir / "out");
        std::vector<int> theirs;
        std::vector<std::array<long, 4>> spans;  // 1-based query begin, end, subject begin, end
        for (std::string line; std::getline(in, line);) {
            if (const auto at = line.find("Waterman-Eggert score: "); at != std::string::npos)
                theirs.push_back(std::stoi(line.substr(at + 23)));
            if (const auto at = line.find(" overlap ("); at != std::string::npos) {
                std::array<long, 4> v{};
                if (std::sscanf(line.c_str() + at + 10, "%ld-%ld:%ld-%ld", &v[0], &v[1], &v[2], &v[3]) == 4)
                    spans.push_back(v);
            }
        }
        REQUIRE(spans.size() == theirs.size());
        hsp_options opt;
        opt.max_hsps = static_cast<int>(theirs.size());
        const auto ours = sw_align_hsps(q, s, sc, opt);
        INFO("pair " << k << (is_dna ? " (DNA)" : " (protein)") << ": lalign36 found " << theirs.size());
        REQUIRE(ours.size() == theirs.size());
        // An alignment of equal score traced along another path (lalign36 may keep a longer one) forbids other pairs,
        // and the alignments after it may differ: scores compared up to the first alignment whose span differs.
        for (std::size_t h = 0; h < ours.size(); ++h) {
            INFO("alignment " << h << ": ours " << ours[h].score << ", lalign36 " << theirs[h]);
            CHECK(ours[h].score == theirs[h]);
            ++compared;
            const std::array<long, 4> mine{ours[h].query_begin + 1, ours[h].query_end + 1, ours[h].subject_begin + 1,
                                           ours[h].subject_end + 1};
            if (mine != spans[h]) break;
        }
    }
    std::filesystem::remove_all(dir);
    CHECK(compared >= 20);
}

TEST_CASE("max_hsps with a wide matrix: the standard matrix widened gives the same alignments, the first sw_align_wide's", "[hsps]") {
    std::mt19937_64 rng(61);
    const scoring sc{substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein};
    wide_matrix same;
    for (int a = 0; a < substitution_matrix::max_letters; ++a)
        for (int b = 0; b < substitution_matrix::max_letters; ++b)
            same.scores[static_cast<std::size_t>(a * substitution_matrix::max_letters + b)] =
                sc.matrix.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b));
    // A matrix of 32 times the scores, with gaps 32 times: the alignments of the standard one, scores times 32.
    wide_matrix times32 = same;
    for (auto& v : times32.scores) v *= 32;
    hsp_options opt;
    opt.max_hsps = 5;
    for (int k = 0; k < 40; ++k) {
        const auto [q, s] = repeated_pair(rng, "ACDEFGHIKLMNPQRSTVWY", sc.matrix);
        const auto want = sw_align_hsps(q, s, sc, opt);
        const auto got = sw_align_hsps_wide(q, s, same, 11, 1, opt);
        const auto scaled = sw_align_hsps_wide(q, s, times32, 11 * 32, 32, opt);
        REQUIRE(got.size() == want.size());
        REQUIRE(scaled.size() == want.size());
        for (std::size_t x = 0; x < want.size(); ++x) {
            CHECK(got[x].score == want[x].score);
            CHECK(ops_of(got[x]) == ops_of(want[x]));
            CHECK(got[x].query_begin == want[x].query_begin);
            CHECK(got[x].subject_begin == want[x].subject_begin);
            CHECK(scaled[x].score == 32 * want[x].score);
            CHECK(ops_of(scaled[x]) == ops_of(want[x]));
        }
        if (!got.empty()) {
            const alignment first = sw_align_wide(q, s, times32, 11 * 32, 32);
            CHECK(first.score == scaled[0].score);
            CHECK(ops_of(first) == ops_of(scaled[0]));
            CHECK(first.query_begin == scaled[0].query_begin);
        }
    }
}
