// Bit scores and E-values against the numbers NCBI BLAST+ 2.12.0 prints (docs/conventions.md).
//
// Every expected value below was printed by blastp or blastn (tabular -outfmt 6 with the columns
// "qseqid sseqid evalue bitscore score qlen slen"), never by swgpu. The databases were made with makeblastdb from:
//   db20k:  uniprot_db20k.fasta.gz of the project's reference data (20,000 sequences, 9,055,569 residues)
//   demo:   data/demo_db.fa (1,000 sequences, 483,479 residues)
//   phage:  the lambda phage genome (lambda_phage.fa.gz) cut into 31 pieces of 300..3000 bp (48,502 bp)
//   phage2: those 31 pieces and 4 copies with 5, 10, 15 and 20 % of bases replaced at random (155 seqs, 242,510 bp)
// and the queries were classic20_queries.fa, data/demo_queries.fa, one query of uniprot_query500.fasta.gz
// (F1K021, 92 aa), a 7-residue peptide, and 12 mutated pieces of the phage genome of 42..1001 bp.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/align/scoring.hpp"
#include "core/align/statistics.hpp"

using namespace swgpu;

namespace {

struct blast_line {
    int score;
    std::uint64_t query_length, subject_length;
    const char* evalue;     // as BLAST printed it
    const char* bit_score;  // as BLAST printed it
};

scoring protein(const char* matrix, int open, int extend) {
    return {substitution_matrix::builtin(matrix), {open, extend}, seq_type::protein};
}

scoring dna(int match, int mismatch, int open, int extend) {
    return {substitution_matrix::match_mismatch(match, mismatch), {open, extend}, seq_type::dna};
}

void check_lines(const evalue_calculator& ec, const std::vector<blast_line>& lines) {
    for (const auto& l : lines) {
        INFO("score " << l.score << ", query " << l.query_length << ", subject " << l.subject_length
                      << ": E = " << ec.evalue(l.score, l.query_length, l.subject_length)
                      << ", bits = " << ec.bit_score(l.score));
        CHECK(format_evalue(ec.evalue(l.score, l.query_length, l.subject_length)) == l.evalue);
        CHECK(format_bit_score(ec.bit_score(l.score)) == l.bit_score);
    }
}

}  // namespace

TEST_CASE("the E-value example of docs/conventions.md is BLAST's", "[stats]") {
    // blastp -query F1K021.fa -db db20k -comp_based_stats 0 -seg no [-dbsize 1370000] -outfmt "6 ..."
    //   F1K021 (92 aa) against F1K003 (92 aa): score 487, 192 bits, 7.48e-66 (1.13e-66 with -dbsize 1370000)
    const auto sc = protein("BLOSUM62", 11, 1);
    check_lines(evalue_calculator(sc, 9'055'569, 20'000), {{487, 92, 92, "7.48e-66", "192"}});
    check_lines(evalue_calculator(sc, 1'370'000, 20'000), {{487, 92, 92, "1.13e-66", "192"}});
    // The plain Karlin-Altschul E-value K·(m − ℓ)·(D − N·ℓ)·e^{−λS} that docs/conventions.md contrasts: BLAST computes it
    // when OLD_FSC is set in the environment ("OLD_FSC=1 blastp ... -dbsize 1370000" prints 4.80e-51, and its text
    // output reports "Effective search space used: 34650000", i.e. ℓ = 37).
    const evalue_calculator ec(sc, 1'370'000, 20'000);
    const auto& p = ec.params();
    const auto ell = length_adjustment(p.K, p.alpha / p.lambda, p.beta, 92, 1'370'000, 20'000);
    CHECK(ell == 37);
    const double plain = p.K * (92.0 - ell) * (1'370'000.0 - 20'000.0 * ell) * std::exp(-p.lambda * 487);
    CHECK(format_evalue(plain) == "4.80e-51");
    CHECK(ec.evalue(487, 92, 92) < plain * 1e-14);  // Spouge's correction: 15 orders of magnitude here
}

TEST_CASE("BLOSUM62 11/1 bit scores and E-values equal blastp's over the whole range", "[stats]") {
    // blastp -query classic20_queries.fa -db db20k -comp_based_stats 0 -seg no -evalue 10 -max_target_seqs 500
    //   (15,498 lines; all agree; these are a sample from 0.0 to 9.8)
    check_lines(evalue_calculator(protein("BLOSUM62", 11, 1), 9'055'569, 20'000),
                {
                    {2064, 729, 715, "0.0", "799"},
                    {1714, 5147, 4379, "0.0", "664"},
                    {1592, 5147, 4379, "6.42e-177", "617"},
                    {1530, 5147, 4389, "1.14e-169", "593"},
                    {1448, 5478, 2848, "8.38e-161", "562"},
                    {1285, 3564, 3565, "1.42e-141", "499"},
                    {989, 729, 714, "7.63e-124", "385"},
                    {1024, 2005, 1681, "2.13e-113", "399"},
                    {952, 5478, 2926, "2.20e-102", "371"},
                    {837, 5478, 2918, "5.97e-89", "327"},
                    {626, 5478, 2722, "2.37e-64", "245"},
                    {581, 5478, 1224, "9.40e-60", "228"},
                    {490, 5478, 2139, "1.49e-48", "193"},
                    {439, 5478, 2138, "1.35e-42", "173"},
                    {384, 4548, 312, "4.30e-40", "152"},
                    {353, 5478, 2790, "1.61e-32", "140"},
                    {242, 5478, 866, "8.16e-20", "97.8"},
                    {219, 4061, 2790, "4.73e-17", "89.0"},
                    {193, 4061, 1733, "4.64e-14", "79.0"},
                    {172, 4061, 999, "1.11e-11", "70.9"},
                    {139, 5478, 957, "1.12e-07", "58.2"},
                    {120, 5478, 1238, "2.00e-05", "50.8"},
                    {109, 3005, 689, "1.78e-04", "46.6"},
                    {105, 4061, 1561, "8.58e-04", "45.1"},
                    {99, 2005, 658, "0.002", "42.7"},
                    {95, 5478, 2274, "0.018", "41.2"},
                    {81, 3005, 434, "0.31", "35.8"},
                    {75, 5478, 1041, "3.6", "33.5"},
                    {69, 3005, 1200, "9.8", "31.2"},
                });
}

TEST_CASE("short queries and weak hits: blastp's E-values above 10 and bit scores below 10", "[stats]") {
    // printf '>q\nMKWWCHW\n' > tiny.fa; blastp -query tiny.fa -db demo -comp_based_stats 0 -seg no -evalue 1e10
    //   -word_size 2 -threshold 1   (11,063 lines; all agree). BLAST prints bit scores below 10 with a leading space.
    check_lines(evalue_calculator(protein("BLOSUM62", 11, 1), 483'479, 1'000),
                {
                    {36, 7, 286, "1.3", "18.5"},
                    {24, 7, 1467, "88", "13.9"},
                    {22, 7, 286, "219", "13.1"},
                    {13, 7, 578, "7934", " 9.6"},
                    {10, 7, 838, "23536", " 8.5"},
                    {11, 7, 286, "17217", " 8.8"},
                    {6, 7, 333, "100056", " 6.9"},
                    {1, 7, 150, "597013", " 5.0"},
                    {1, 7, 102, "649593", " 5.0"},
                });
}

TEST_CASE("other matrices and gap costs: blastp's values", "[stats]") {
    // blastp -query data/demo_queries.fa -db db20k -comp_based_stats 0 -seg no -matrix M -gapopen O -gapextend E
    //   -evalue 100 -max_target_seqs 300, for all 82 (matrix, gap) pairs of the tables: 21,316 lines, all agree.
    struct one_pair {
        const char* matrix;
        int open, extend;
        std::vector<blast_line> lines;
    };
    const std::vector<one_pair> pairs = {
        {"BLOSUM45", 14, 2, {{201, 222, 232, "2.07e-12", "61.5"}, {119, 375, 408, "0.003", "38.4"}, {71, 375, 397, "58", "24.9"}}},
        {"BLOSUM45", 16, 1, {{318, 375, 356, "3.78e-21", "86.7"}, {110, 222, 186, "0.008", "33.9"}, {100, 375, 300, "0.27", "31.4"}}},
        {"BLOSUM50", 13, 2, {{318, 375, 356, "6.69e-22", "93.4"}, {98, 375, 311, "0.30", "32.1"}, {79, 375, 3726, "20", "26.8"}}},
        {"BLOSUM62", 11, 2, {{200, 222, 207, "5.98e-20", "89.3"}, {130, 375, 356, "1.94e-09", "59.3"}, {49, 144, 959, "33", "24.6"}}},
        {"BLOSUM62", 9, 1, {{216, 222, 207, "3.76e-18", "70.8"}, {112, 375, 408, "1.88e-04", "39.9"}, {75, 375, 104, "0.34", "28.9"}}},
        {"BLOSUM80", 10, 1, {{556, 375, 133, "3.82e-75", "243"}, {181, 222, 207, "2.45e-17", "81.9"}, {71, 375, 408, "0.10", "34.4"}}},
        {"BLOSUM80", 25, 2, {{540, 375, 133, "8.08e-80", "268"}, {78, 375, 349, "0.001", "41.0"}, {66, 222, 219, "0.038", "35.1"}}},
        {"BLOSUM90", 10, 1, {{592, 375, 133, "9.11e-79", "251"}, {136, 375, 356, "8.17e-10", "60.6"}, {110, 222, 232, "6.92e-07", "49.8"}}},
        {"PAM30", 9, 1, {{125, 375, 356, "2.98e-08", "56.2"}, {75, 222, 207, "0.043", "35.0"}, {57, 222, 379, "9.9", "27.4"}}},
        {"PAM70", 10, 1, {{607, 375, 133, "5.97e-77", "258"}, {125, 222, 219, "1.22e-08", "55.9"}, {68, 189, 755, "0.30", "32.0"}}},
        {"PAM250", 14, 2, {{240, 222, 219, "2.57e-16", "68.4"}, {109, 222, 186, "0.006", "34.0"}, {66, 222, 246, "93", "22.7"}}},
        {"PAM250", 11, 3, {{240, 222, 207, "1.31e-15", "65.9"}, {223, 375, 360, "3.73e-12", "61.6"}, {81, 375, 104, "4.4", "26.0"}}},
    };
    for (const auto& p : pairs) {
        INFO(p.matrix << " " << p.open << "/" << p.extend);
        check_lines(evalue_calculator(protein(p.matrix, p.open, p.extend), 9'055'569, 20'000), p.lines);
    }
}

TEST_CASE("DNA match/mismatch scoring: blastn's values, odd scores rounded down where blastn does", "[stats]") {
    // blastn -task blastn -dust no -query phage_queries.fa -db phage|phage2 -reward R -penalty P -gapopen O
    //   -gapextend E -evalue 1000, for all 52 (reward, penalty, gap) entries on both databases: 44,176 lines, all agree.
    // For 2/-3 and 3/-4 blastn rounds an odd score down for the E-value but not for the bit score (score 25 below).
    struct one_pair {
        int match, mismatch, open, extend;
        std::uint64_t db_residues, db_sequences;
        std::vector<blast_line> lines;
    };
    const std::vector<one_pair> pairs = {
        {2, -3, 5, 2, 48'502, 31,
         {{560, 987, 2966, "1.89e-145", "506"}, {24, 998, 2687, "5.9", "22.9"}, {22, 992, 2038, "20", "21.1"},
          {1751, 1001, 1285, "0.0", "1580"}}},
        {2, -3, 5, 2, 242'510, 155,
         {{48, 79, 2494, "5.71e-07", "44.6"}, {26, 998, 2883, "8.4", "24.7"}, {25, 998, 2883, "29", "23.8"},
          {23, 992, 2494, "102", "22.0"}, {191, 987, 2966, "2.54e-44", "173"}}},
        {3, -4, 6, 2, 242'510, 155,
         {{42, 992, 2378, "9.1", "24.6"}, {33, 992, 917, "339", "19.9"}, {35, 400, 685, "63", "20.9"},
          {237, 148, 2557, "3.58e-31", "126"}}},
        {2, -7, 4, 2, 48'502, 31,
         {{295, 992, 497, "1.90e-79", "287"}, {27, 79, 2616, "0.048", "27.0"}, {423, 987, 497, "5.67e-117", "412"}}},
        {1, -2, 2, 2, 48'502, 31, {{13, 1001, 2494, "0.91", "25.6"}, {11, 400, 542, "5.1", "21.8"}}},
        {4, -5, 6, 5, 242'510, 155, {{54, 400, 2557, "5.0", "24.1"}, {44, 1001, 2378, "216", "20.0"}}},
        {5, -4, 10, 6, 48'502, 31, {{400, 80, 2687, "4.47e-24", "97.9"}, {72, 987, 2378, "23", "20.8"}}},
        {1, -1, 0, 2, 242'510, 155, {{12, 148, 2557, "82", "17.8"}, {11, 400, 2076, "721", "16.7"}}},
    };
    for (const auto& p : pairs) {
        INFO("match " << p.match << " mismatch " << p.mismatch << " gaps " << p.open << "/" << p.extend);
        check_lines(evalue_calculator(dna(p.match, p.mismatch, p.open, p.extend), p.db_residues, p.db_sequences),
                    p.lines);
    }
}

TEST_CASE("length adjustment equals BLAST's effective search spaces", "[stats]") {
    // "Effective search space used: X" of blastp/blastn's text output (-outfmt 0) is (m − ℓ)·(D − N·ℓ).
    // blastp, BLOSUM62 11/1, F1K021 (92 aa) against db20k: 226071501 = (92 − 63)·(9055569 − 20000·63)
    CHECK(length_adjustment(0.041, 1.9 / 0.267, -30, 92, 9'055'569, 20'000) == 63);
    // blastn 2/-3 5/2 against phage2: 234469900 (q0, 1001 bp), 31163600 (q1, 148 bp), 6240780 (q2, 42 bp)
    CHECK(length_adjustment(0.41, 0.8 / 0.625, -2, 1001, 242'510, 155) == 21);
    CHECK(length_adjustment(0.41, 0.8 / 0.625, -2, 148, 242'510, 155) == 18);
    CHECK(length_adjustment(0.41, 0.8 / 0.625, -2, 42, 242'510, 155) == 16);
    // blastn 3/-4 5/2 against phage: 45264800 for q0 (1001 bp)
    CHECK(length_adjustment(0.092, 1.2 / 0.330, -13, 1001, 48'502, 31) == 42);
}

TEST_CASE("the parameters are NCBI's", "[stats]") {
    const evalue_calculator ec(protein("BLOSUM62", 11, 1), 1'000'000, 1'000);
    const auto& p = ec.params();
    // docs/conventions.md and blastp's text output ("Gapped  Lambda 0.267  K 0.0410  H 0.140  a 1.90  alpha 42.6  sigma 43.6")
    CHECK(p.lambda == 0.267);
    CHECK(p.K == 0.041);
    CHECK(p.H == 0.14);
    CHECK(p.alpha == 1.9);
    CHECK(p.beta == -30);
    CHECK(p.alpha_v == Approx(42.6).margin(0.05));
    CHECK(p.sigma == Approx(43.6).margin(0.05));
    CHECK(ec.matrix_name() == "BLOSUM62");
    // 82 protein (matrix, gap) pairs: BLOSUM45 13, BLOSUM50 15, BLOSUM62 11, BLOSUM80 9, BLOSUM90 7, PAM30 6,
    // PAM70 6, PAM250 15 (NCBI's tables less their ungapped rows).
    CHECK(gumbel_table().size() == 82);
}

TEST_CASE("supported pairs and clear errors for the others", "[stats]") {
    for (const auto& [name, gaps] : std::vector<std::pair<const char*, gap_costs>>{
             {"BLOSUM62", {11, 1}}, {"BLOSUM45", {14, 2}}, {"BLOSUM50", {13, 2}}, {"BLOSUM80", {10, 1}},
             {"BLOSUM90", {10, 1}}, {"PAM30", {9, 1}}, {"PAM70", {10, 1}}, {"PAM250", {14, 2}}}) {
        INFO(name);
        CHECK(evalue_calculator::supported(protein(name, gaps.open, gaps.extend)));
        CHECK(evalue_calculator::supported(protein(name, default_gaps(name).open, default_gaps(name).extend)));
    }
    CHECK(evalue_calculator::supported(dna(2, -3, 5, 2)));  // blastn's defaults, swgpu's DNA defaults
    {  // NUC.4.4 with its default gap costs has E-values
        scoring nuc{substitution_matrix::builtin("NUC.4.4"), {}, seq_type::dna};
        nuc.gaps = default_gaps(nuc.matrix, seq_type::dna);
        CHECK(evalue_calculator::supported(nuc));
    }

    SECTION("a gap pair outside the table names the supported ones") {
        const auto sc = protein("BLOSUM62", 5, 5);
        CHECK_FALSE(evalue_calculator::supported(sc));
        try {
            evalue_calculator ec(sc, 1000, 1);
            FAIL("no error");
        } catch (const error& e) {
            CHECK(e.code() == exit_code::bad_command_line);
            const std::string what = e.what();
            CHECK_THAT(what, Catch::Contains("BLOSUM62") && Catch::Contains("5/5") && Catch::Contains("11/1") &&
                                 Catch::Contains("--no-evalue"));
        }
    }
    SECTION("a matrix NCBI has no parameters for") {
        const auto m = substitution_matrix::parse_ncbi("   A  C\nA  1 -1\nC -1  1\n", "tiny", "tiny.txt");
        const scoring sc{m, {11, 1}, seq_type::protein};
        CHECK_FALSE(evalue_calculator::supported(sc));
        try {
            evalue_calculator ec(sc, 1000, 1);
            FAIL("no error");
        } catch (const error& e) {
            CHECK(e.code() == exit_code::bad_command_line);
            CHECK_THAT(std::string(e.what()), Catch::Contains("tiny") && Catch::Contains("BLOSUM62: ") &&
                                                  Catch::Contains("PAM250: ") && Catch::Contains("--no-evalue"));
        }
    }
    SECTION("DNA outside blastn's tables") {
        CHECK_FALSE(evalue_calculator::supported(dna(2, -3, 7, 7)));
        CHECK_FALSE(evalue_calculator::supported(dna(7, -3, 5, 2)));
        CHECK_THROWS_MATCHES(evalue_calculator(dna(2, -3, 7, 7), 1000, 1), error,
                             Catch::Matchers::Predicate<error>([](const error& e) {
                                 const std::string w = e.what();
                                 return e.code() == exit_code::bad_command_line &&
                                        w.find("5/2") != std::string::npos &&
                                        w.find("--no-evalue") != std::string::npos;
                             }));
        CHECK_THROWS_AS(evalue_calculator(dna(7, -3, 5, 2), 1000, 1), error);
    }
    SECTION("a matrix is recognised by its scores, not its name") {
        // NCBI's BLOSUM62 read from a file under another name, with older-style X scores (X against A 0): the 20
        // standard amino acids decide the statistics.
        auto text = std::string("   A  R  N  D  C  Q  E  G  H  I  L  K  M  F  P  S  T  W  Y  V  X\n");
        const auto ncbi = substitution_matrix::builtin("BLOSUM62");
        const std::string letters = "ARNDCQEGHILKMFPSTWYVX";
        for (char a : letters) {
            text += a;
            for (char b : letters) {
                const int s = (a == 'X' || b == 'X') ? ((a == 'A' || b == 'A') ? 0 : -1)
                                                     : ncbi.score(ncbi.code(a), ncbi.code(b));
                text += " " + std::to_string(s);
            }
            text += "\n";
        }
        const scoring sc{substitution_matrix::parse_ncbi(text, "my_blosum.txt", "my_blosum.txt"), {11, 1},
                         seq_type::protein};
        REQUIRE(evalue_calculator::supported(sc));
        const evalue_calculator ec(sc, 9'055'569, 20'000);
        CHECK(ec.matrix_name() == "BLOSUM62");
        CHECK(format_evalue(ec.evalue(487, 92, 92)) == "7.48e-66");
        // One standard score changed: no longer NCBI's matrix.
        text.replace(text.find("A 4"), 3, "A 5");
        const scoring changed{substitution_matrix::parse_ncbi(text, "my_blosum.txt", "my_blosum.txt"), {11, 1},
                              seq_type::protein};
        CHECK_FALSE(evalue_calculator::supported(changed));
    }
}

TEST_CASE("BLAST's tabular number formats", "[stats]") {
    // Rules of BLAST+'s tabular output (align_format_util.cpp GetScoreString, tabular.cpp SetScores), at the edges
    // of each range.
    CHECK(format_evalue(0.0) == "0.0");
    CHECK(format_evalue(9.9e-181) == "0.0");
    CHECK(format_evalue(2.0e-180) == "2.00e-180");
    CHECK(format_evalue(8.994e-4) == "8.99e-04");
    CHECK(format_evalue(0.0009) == "0.001");
    CHECK(format_evalue(0.0994) == "0.099");
    CHECK(format_evalue(0.1) == "0.10");
    CHECK(format_evalue(0.994) == "0.99");
    CHECK(format_evalue(1.0) == "1.0");
    CHECK(format_evalue(9.94) == "9.9");
    CHECK(format_evalue(10.0) == "10");
    CHECK(format_evalue(123456.7) == "123457");
    CHECK(format_bit_score(8.84) == " 8.8");
    CHECK(format_bit_score(45.06) == "45.1");
    CHECK(format_bit_score(99.9) == "99.9");
    CHECK(format_bit_score(192.9) == "192");  // truncated, not rounded
    CHECK(format_bit_score(99998.7) == "99998");
    CHECK(format_bit_score(99999.5) == "1.000e+05");
    CHECK(format_bit_score(123456.0) == "1.235e+05");
}
