// Rung 3 of the test ladder: core's Smith-Waterman-Gotoh (score pass, end cell, traceback, engine schedules) against
// the textbook Gotoh of tests/reference on random, adversarial and real pairs.
#include <catch2/catch.hpp>

#include <numeric>
#include <random>

#include "core/align/sequence.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/sw_engine.hpp"
#include "io/align/sequence_reader.hpp"
#include "tests/reference/textbook_gotoh.hpp"
#include "tests/align/sequence_generators.hpp"

using namespace swgpu;
using namespace swgpu::testing;

namespace {

std::string ops_string(const alignment& a) {
    std::string s;
    for (const auto& o : a.ops) s.append(o.len, o.op);
    return s;
}

reference::gotoh_result textbook(const codes& q, const codes& s, const scoring& sc) {
    return reference::textbook_gotoh(
        q, s, [&](std::uint8_t a, std::uint8_t b) { return long(sc.matrix.score(a, b)); }, sc.gaps.open, sc.gaps.extend);
}

void require_same(const alignment& got, const reference::gotoh_result& ref, const codes& q, const codes& s,
                  const scoring& sc) {
    REQUIRE(got.score == ref.score);
    REQUIRE(got.query_end == ref.qend);
    REQUIRE(got.subject_end == ref.send);
    REQUIRE(got.query_begin == ref.qbeg);
    REQUIRE(got.subject_begin == ref.sbeg);
    REQUIRE(ops_string(got) == ref.ops);
    REQUIRE(rescore(got, q, s, sc) == got.score);
}

scoring protein_scoring(const char* matrix, int open, int extend) {
    return {substitution_matrix::builtin(matrix), {open, extend}, seq_type::protein};
}
scoring dna_scoring(int match, int mismatch, int open, int extend) {
    return {substitution_matrix::match_mismatch(match, mismatch), {open, extend}, seq_type::dna};
}

}  // namespace

TEST_CASE("score, end cell and traceback equal textbook Gotoh on 10,000 random pairs", "[sw]") {
    std::mt19937_64 rng(2024);
    const std::vector<scoring> protein = {protein_scoring("BLOSUM62", 11, 1), protein_scoring("BLOSUM45", 14, 2),
                                          protein_scoring("PAM30", 9, 1), protein_scoring("BLOSUM62", 0, 1)};
    const std::vector<scoring> dna = {dna_scoring(2, -3, 5, 2), dna_scoring(1, -1, 2, 1),
                                      scoring{substitution_matrix::builtin("NUC.4.4"), {10, 1}, seq_type::dna}};
    int pairs = 0, ties = 0;
    for (int k = 0; k < 10000; ++k) {
        const bool is_dna = k % 5 >= 3;
        const auto& sc = is_dna ? dna[k % dna.size()] : protein[k % protein.size()];
        auto [q, s] = random_pair(rng, 2000, is_dna ? dna4 : protein20, sc.matrix);
        INFO("pair " << k << " lengths " << q.size() << " x " << s.size() << " gaps " << sc.gaps.open << "/"
                     << sc.gaps.extend << " matrix " << sc.matrix.name());
        const auto ref = textbook(q, s, sc);
        const auto end = sw_score(q, s, sc);
        REQUIRE(end.score == ref.score);
        REQUIRE(end.query_end == ref.qend);
        REQUIRE(end.subject_end == ref.send);
        require_same(sw_traceback(q, s, sc, end), ref, q, s, sc);
        ++pairs;
        ties += ref.cells_with_max > 1;
    }
    REQUIRE(pairs == 10000);
    REQUIRE(ties > 100);  // the tie rule was exercised
}

TEST_CASE("checkpointed traceback under tight memory budgets equals the full-matrix traceback", "[sw]") {
    std::mt19937_64 rng(7);
    const auto sc = protein_scoring("BLOSUM62", 11, 1);
    for (int k = 0; k < 150; ++k) {
        auto [q, s] = random_pair(rng, 1500, protein20, sc.matrix);
        const auto full = sw_align(q, s, sc, {.memory_budget = std::size_t(1) << 34});
        for (std::size_t budget : {std::size_t(0), std::size_t(256), std::size_t(5000), std::size_t(100000)}) {
            INFO("pair " << k << " budget " << budget);
            REQUIRE(sw_align(q, s, sc, {.memory_budget = budget}) == full);
        }
    }
}

TEST_CASE("edge cases: length 1, nothing positive, all identical, all mismatching, long gaps", "[sw]") {
    const auto sc = protein_scoring("BLOSUM62", 11, 1);
    const auto& m = sc.matrix;
    SECTION("single residues") {
        const auto a = encode_letters("W", m), b = encode_letters("W", m), c = encode_letters("P", m);
        const auto ab = sw_align(a, b, sc);
        REQUIRE(ab.score == 11);
        REQUIRE(cigar_string(ab.ops) == "1M");
        REQUIRE(sw_align(a, c, sc).score == 0);  // W/P scores -4: no local alignment
        REQUIRE(sw_align(a, c, sc).ops.empty());
    }
    SECTION("a gap is taken when it pays and placed by the tie rule") {
        // 10 W + 10 C against 10 W + 5 A + 10 C: joining both halves across a 5-residue gap (11 + 5 = 16) beats
        // every ungapped placement (W/W 11, C/C 9, C/A 0: at most 110 + 45).
        const auto q = encode_letters("WWWWWWWWWWCCCCCCCCCC", m), s = encode_letters("WWWWWWWWWWAAAAACCCCCCCCCC", m);
        const auto ref = textbook(q, s, sc);
        require_same(sw_align(q, s, sc), ref, q, s, sc);
        REQUIRE(ref.score == 110 + 90 - 16);  // both halves joined across a 5-residue gap (11 + 5·1)
        REQUIRE(ref.ops == std::string(10, 'M') + std::string(5, 'D') + std::string(10, 'M'));
    }
    SECTION("all identical letters: ties everywhere") {
        const auto q = encode_letters(std::string(40, 'A'), m), s = encode_letters(std::string(60, 'A'), m);
        const auto a = sw_align(q, s, sc);
        REQUIRE(a.score == 160);
        REQUIRE(a.query_end == 39);
        REQUIRE(a.subject_end == 39);  // first maximal cell in row-major order
        require_same(a, textbook(q, s, sc), q, s, sc);
    }
}

TEST_CASE("overflow-prone long identical pairs: 16-bit engine pass detects saturation and recomputes in 32 bits",
          "[sw][engine]") {
    const auto sc = protein_scoring("BLOSUM62", 11, 1);
    thread_pool pool(2);
    // W against W scores 11: 3100 W's score 34100 > 32767, a score no 16-bit lane can hold.
    const auto w = encode_letters(std::string(3100, 'W'), sc.matrix);
    for (auto schedule : {cpu_schedule::naive, cpu_schedule::rowscan, cpu_schedule::tiled}) {
        const auto r = sw_score_engine(w, w, sc, schedule, &pool);
        REQUIRE(r.recomputed_wide);
        REQUIRE(r.end.score == 34100);
        REQUIRE(r.end.query_end == 3099);
        REQUIRE(r.end.subject_end == 3099);
    }
    REQUIRE(sw_score(w, w, sc).score == 34100);
    // Just below the limit no recomputation is needed.
    const auto shorter = encode_letters(std::string(2000, 'W'), sc.matrix);
    REQUIRE_FALSE(sw_score_engine(shorter, shorter, sc, cpu_schedule::rowscan).recomputed_wide);
}

TEST_CASE("every engine schedule equals the score pass on random pairs, 16-bit and 32-bit", "[sw][engine]") {
    std::mt19937_64 rng(99);
    thread_pool pool(3);
    const auto protein = protein_scoring("BLOSUM62", 11, 1);
    const auto dna = dna_scoring(2, -3, 5, 2);
    for (int k = 0; k < 400; ++k) {
        const auto& sc = k % 3 == 2 ? dna : protein;
        auto [q, s] = random_pair(rng, 700, k % 3 == 2 ? dna4 : protein20, sc.matrix);
        const auto ref = sw_score(q, s, sc);
        for (auto schedule : {cpu_schedule::naive, cpu_schedule::rowscan, cpu_schedule::rowscan_map, cpu_schedule::tiled})
            for (bool wide : {false, true}) {
                INFO("pair " << k << " schedule " << int(schedule) << " wide " << wide);
                REQUIRE(sw_score_engine(q, s, sc, schedule, &pool, wide).end == ref);
            }
    }
}

TEST_CASE("real pairs: bundled demo queries against the bundled database equal textbook Gotoh", "[sw]") {
    const auto sc = protein_scoring("BLOSUM62", 11, 1);
    auto queries = io::read_all(std::string(SWGPU_SOURCE_DIR) + "/data/demo_queries.fa");
    auto db = io::read_all(std::string(SWGPU_SOURCE_DIR) + "/data/demo_db.fa");
    encode(queries, sc.matrix);
    encode(db, sc.matrix);
    REQUIRE(queries.size() == 4);
    REQUIRE(db.size() == 1000);
    int compared = 0;
    for (std::size_t qi = 0; qi < queries.size(); ++qi)
        for (std::size_t si = 0; si < db.size(); si += 7) {
            const codes q(queries[qi].begin(), queries[qi].end()), s(db[si].begin(), db[si].end());
            INFO(queries.names[qi] << " vs " << db.names[si]);
            require_same(sw_align(q, s, sc), textbook(q, s, sc), q, s, sc);
            ++compared;
        }
    REQUIRE(compared == 4 * 143);
}
