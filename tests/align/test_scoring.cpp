// Scoring conventions users rely on (docs/conventions.md).
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "core/align/scoring.hpp"
#include "core/align/sequence.hpp"
#include "core/align/smith_waterman.hpp"

using namespace swgpu;

TEST_CASE("built-in matrices are NCBI's", "[scoring]") {
    const auto names = substitution_matrix::builtin_names();
    for (const char* n : {"BLOSUM45", "BLOSUM50", "BLOSUM62", "BLOSUM80", "BLOSUM90", "PAM30", "PAM70", "PAM250", "NUC.4.4"})
        REQUIRE(std::find(names.begin(), names.end(), n) != names.end());
    const auto b62 = substitution_matrix::builtin("blosum62");
    REQUIRE(b62.letters() == "ARNDCQEGHILKMFPSTWYVBJZX*");
    auto s = [&](char a, char b) { return b62.score(b62.code(a), b62.code(b)); };
    REQUIRE(s('A', 'A') == 4);
    REQUIRE(s('W', 'W') == 11);
    REQUIRE(s('C', 'C') == 9);
    REQUIRE(s('X', 'A') == -1);  // NCBI's current BLOSUM62: X scores -1 against every letter
    REQUIRE(s('*', 'A') == -4);
    REQUIRE(s('*', '*') == 1);
    for (int a = 0; a < b62.size(); ++a)
        for (int b = 0; b < b62.size(); ++b)
            REQUIRE(b62.score(std::uint8_t(a), std::uint8_t(b)) == b62.score(std::uint8_t(b), std::uint8_t(a)));
    const auto nuc = substitution_matrix::builtin("EDNAFULL");
    REQUIRE(nuc.score(nuc.code('A'), nuc.code('A')) == 5);
    REQUIRE(nuc.score(nuc.code('A'), nuc.code('C')) == -4);
}

TEST_CASE("default gap costs follow BLAST", "[scoring]") {
    REQUIRE(default_gaps("BLOSUM62").open == 11);
    REQUIRE(default_gaps("BLOSUM62").extend == 1);
    REQUIRE(default_gaps("BLOSUM45").open == 14);
    REQUIRE(default_gaps("PAM30").open == 9);
    // NUC.4.4 (5/-4): blastn's 5/2 has no E-value parameters there; 10/6 is the first pair that has.
    REQUIRE(default_gaps("NUC.4.4").open == 10);
    REQUIRE(default_gaps("NUC.4.4").extend == 6);
    REQUIRE(default_gaps("EDNAFULL").open == 10);
    REQUIRE(default_gaps("match2/mismatch-3").open == 5);
}

TEST_CASE("alphabet mapping: case, U as T, unknown letters to X or N", "[scoring]") {
    const auto b62 = substitution_matrix::builtin("BLOSUM62");
    sequence_set p;
    p.add("p1", std::string("acdwUO"));
    REQUIRE(encode(p, b62) == 2);  // U and O are not BLOSUM62 letters
    REQUIRE(decode(p[0], b62) == "ACDWXX");

    const auto dna = substitution_matrix::match_mismatch(2, -3);
    sequence_set d;
    d.add("d1", std::string("acgtuRN"));
    REQUIRE(encode(d, dna) == 1);  // R
    REQUIRE(decode(d[0], dna) == "ACGTTNN");
    REQUIRE(dna.score(dna.code('A'), dna.code('A')) == 2);
    REQUIRE(dna.score(dna.code('A'), dna.code('G')) == -3);
    REQUIRE(dna.score(dna.code('N'), dna.code('N')) == -3);
}

TEST_CASE("sequence type detection", "[scoring]") {
    sequence_set d, p;
    d.add("d", std::string("ACGTNacgtnU"));
    p.add("p", std::string("ACGTE"));
    REQUIRE(detect_type(d) == seq_type::dna);
    REQUIRE(detect_type(p) == seq_type::protein);
}

TEST_CASE("bad scoring parameters are clear errors", "[scoring]") {
    auto code_of = [](auto&& f) {
        try {
            f();
        } catch (const error& e) {
            return e.code();
        }
        return exit_code::success;
    };
    REQUIRE(code_of([] { substitution_matrix::builtin("BLOSUM63"); }) == exit_code::bad_command_line);
    REQUIRE(code_of([] { substitution_matrix::match_mismatch(0, -3); }) == exit_code::bad_command_line);
    REQUIRE(code_of([] { substitution_matrix::match_mismatch(2, 1); }) == exit_code::bad_command_line);
    scoring sc{substitution_matrix::builtin("BLOSUM62"), {11, 0}, seq_type::protein};
    REQUIRE(code_of([&] { validate(sc); }) == exit_code::bad_command_line);
    sc.gaps = {-1, 1};
    REQUIRE(code_of([&] { validate(sc); }) == exit_code::bad_command_line);
    REQUIRE(code_of([] { substitution_matrix::parse_ncbi("   A  B\nA 1 2\n", "m", "m.txt"); }) == exit_code::bad_input);
    REQUIRE(code_of([] { substitution_matrix::parse_ncbi("A B\nA 1 2\nB 2 x\n", "m", "m.txt"); }) == exit_code::bad_input);
    try {
        substitution_matrix::parse_ncbi("A B\nA 1 2\nB 2\n", "m", "m.txt");
        FAIL("ragged matrix accepted");
    } catch (const error& e) {
        REQUIRE(std::string(e.what()).find("m.txt:3") != std::string::npos);
    }
}

TEST_CASE("encoding a large set in slices on threads: every residue, unknown letters counted, errors name the record",
          "[scoring]") {
    // 12 M residues: several slices of 4 Mi residues; unknown letters at slice edges and inside records that cross
    // them.
    const auto m = substitution_matrix::builtin("BLOSUM62");
    const std::string amino = "ARNDCQEGHILKMFPSTWYV";
    sequence_set set;
    set.source = "big.fa";
    std::uint64_t x = 7;
    for (int k = 0; k < 3000; ++k) {
        std::string s(4000, 'A');
        for (auto& c : s) c = amino[((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 33) % 20];
        set.add("r" + std::to_string(k), s);
    }
    const std::vector<std::uint64_t> odd = {0, (1u << 22) - 1, 1u << 22, (1u << 23) + 1, set.residues.size() - 1};
    for (const auto p : odd) set.residues[p] = '1';
    sequence_set copy = set;
    CHECK(encode(set, m) == odd.size());
    for (std::size_t p = 0; p < set.residues.size(); ++p) {
        const char want = std::find(odd.begin(), odd.end(), p) != odd.end() ? '1' : char(copy.residues[p]);
        REQUIRE(set.residues[p] == m.code(want));
    }
    // A matrix without X: unknown letters are counted in every slice and take the code added for them.
    const auto no_x = substitution_matrix::parse_ncbi("   A  R\nA  4 -1\nR -1  5\n", "AR", "ar.txt");
    sequence_set two;
    two.source = "big.fa";
    for (int k = 0; k < 2000; ++k) two.add("s" + std::to_string(k), std::string(4000, k % 2 ? 'A' : 'R'));
    two.residues[1999 * 4000 + 17] = 'Q';
    two.residues[1500 * 4000 + 3] = 'W';
    CHECK(encode(two, no_x) == 2);
    CHECK(two.residues[1999 * 4000 + 17] == no_x.fallback_code());
    CHECK(two.residues[1500 * 4000 + 3] == no_x.fallback_code());
}

namespace {

// BLOSUM62's rows and columns of the 20 amino acids and '*' (no B, J, Z, X), in NCBI text format.
std::string blosum62_without_x() {
    const auto b62 = substitution_matrix::builtin("BLOSUM62");
    const std::string keep = "ARNDCQEGHILKMFPSTWYV*";
    std::string text = "# BLOSUM62 without B J Z X\n  ";
    for (char c : keep) text += std::string(" ") + c;
    text += "\n";
    for (char a : keep) {
        text += a;
        for (char b : keep) text += " " + std::to_string(b62.score(b62.code(a), b62.code(b)));
        text += "\n";
    }
    return text;
}

}  // namespace

TEST_CASE("a matrix without X scores unknown letters with its lowest score against every letter", "[scoring]") {
    const auto m = substitution_matrix::parse_ncbi(blosum62_without_x(), "B62-noX", "b62nox.txt");
    CHECK(m.letters() == "ARNDCQEGHILKMFPSTWYV*");  // the file's letters
    CHECK(m.min_score() == -4);                     // BLOSUM62's lowest, e.g. W/C... and '*' against any residue
    REQUIRE(m.fallback_added());
    REQUIRE(m.size() == 22);
    CHECK(m.letter(m.fallback_code()) == 'X');
    for (const char unknown : {'B', 'Z', 'J', 'U', 'O', 'X', '1'}) {
        INFO(unknown);
        CHECK_FALSE(m.known(unknown));
        CHECK(m.code(unknown) == m.fallback_code());  // not N (asparagine), which the code before took
        for (int c = 0; c < m.size(); ++c) {
            CHECK(m.score(m.code(unknown), std::uint8_t(c)) == -4);
            CHECK(m.score(std::uint8_t(c), m.code(unknown)) == -4);
        }
    }
    // WWWBWWW against WWWNWWW, BLAST's 11/1: six W/W pairs of 11 and B against N at -4, so 66 - 4 = 62 (read as N,
    // N/N's 6 gave 72). Against WWWBWWW, B/B scores -4 as well.
    sequence_set q, s;
    q.add("q", std::string("WWWBWWW"));
    s.add("n", std::string("WWWNWWW"));
    s.add("b", std::string("WWWBWWW"));
    CHECK(encode(q, m) == 1);
    CHECK(encode(s, m) == 1);
    const scoring sc{m, {11, 1}, seq_type::protein};
    CHECK(sw_score(q[0], s[0], sc).score == 62);
    CHECK(sw_score(q[0], s[1], sc).score == 62);

    // A matrix that has X keeps it: BLOSUM62's X row (-1 against every letter).
    const auto b62 = substitution_matrix::builtin("BLOSUM62");
    CHECK_FALSE(b62.fallback_added());
    CHECK(b62.score(b62.code('O'), b62.code('W')) == -1);
    // DNA: N, else X, else an added N at the lowest score.
    const auto acgt = substitution_matrix::parse_ncbi("   A  C  G  T\nA  5 -4 -4 -4\nC -4  5 -4 -4\n"
                                                      "G -4 -4  5 -4\nT -4 -4 -4  5\n", "ACGT", "acgt.txt");
    REQUIRE(acgt.fallback_added());
    CHECK(acgt.letter(acgt.fallback_code()) == 'N');
    CHECK(acgt.score(acgt.code('R'), acgt.code('A')) == -4);
    CHECK(acgt.score(acgt.code('U'), acgt.code('T')) == 5);  // U still reads as T
}
