// sw_align_scored (core/sw_align_fast.hpp) against sw_align, whose alignments the [sw] tests check against textbook
// Gotoh: the same end cell under the tie rule and the same traceback choices, for every instruction set this CPU runs.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "core/sequence.hpp"
#include "core/smith_waterman.hpp"
#include "core/sw_align_fast.hpp"
#include "io/sequence_reader.hpp"
#include "tests/reference/textbook_gotoh.hpp"
#include "tests/sequence_generators.hpp"

using namespace swgpu;
using namespace swgpu::testing;

namespace {

scoring protein_scoring(const char* matrix, int open, int extend) {
    return {substitution_matrix::builtin(matrix), {open, extend}, seq_type::protein};
}
scoring dna_scoring(int match, int mismatch, int open, int extend) {
    return {substitution_matrix::match_mismatch(match, mismatch), {open, extend}, seq_type::dna};
}

std::vector<align_isa> isas() { return available_align_isas(); }

// The alignment of every instruction set, given the true score, equals sw_align.
void require_same_as_sw_align(const codes& q, const codes& s, const scoring& sc, const traceback_options& opt = {}) {
    const alignment want = sw_align(q, s, sc);
    for (const auto isa : isas()) {
        INFO("isa " << align_isa_name(isa) << " lengths " << q.size() << " x " << s.size() << " score " << want.score);
        const auto got = sw_align_scored(q, s, sc, want.score, opt, isa);
        REQUIRE(got.has_value());
        REQUIRE(*got == want);
    }
}

}  // namespace

TEST_CASE("scored alignment equals sw_align on 10,000 random protein and DNA pairs", "[alignfast]") {
    std::mt19937_64 rng(515);
    const std::vector<scoring> protein = {protein_scoring("BLOSUM62", 11, 1), protein_scoring("BLOSUM45", 14, 2),
                                          protein_scoring("PAM30", 9, 1), protein_scoring("BLOSUM62", 0, 1)};
    const std::vector<scoring> dna = {dna_scoring(2, -3, 5, 2), dna_scoring(1, -1, 2, 1),
                                      scoring{substitution_matrix::builtin("NUC.4.4"), {10, 1}, seq_type::dna}};
    int ties = 0;
    for (int k = 0; k < 10000; ++k) {
        const bool is_dna = k % 5 >= 3;
        const auto& sc = is_dna ? dna[k % dna.size()] : protein[k % protein.size()];
        auto [q, s] = random_pair(rng, 1000, is_dna ? dna4 : protein20, sc.matrix);
        INFO("pair " << k << " gaps " << sc.gaps.open << "/" << sc.gaps.extend << " matrix " << sc.matrix.name());
        require_same_as_sw_align(q, s, sc);
        // Ties counted on the small pairs, where the textbook's full matrices are cheap.
        if (q.size() * s.size() < 40000)
            ties += reference::textbook_gotoh(
                        q, s, [&](std::uint8_t a, std::uint8_t b) { return long(sc.matrix.score(a, b)); },
                        sc.gaps.open, sc.gaps.extend)
                        .cells_with_max > 1;
    }
    REQUIRE(ties > 100);  // the tie rule was exercised
}

TEST_CASE("scored alignment: length 1, long gaps, all-identical letters, scores beyond 16 bits", "[alignfast]") {
    const auto sc = protein_scoring("BLOSUM62", 11, 1);
    const auto& m = sc.matrix;
    SECTION("single residues") {
        require_same_as_sw_align(encode_letters("W", m), encode_letters("W", m), sc);
        require_same_as_sw_align(encode_letters("W", m), encode_letters("AWA", m), sc);
        require_same_as_sw_align(encode_letters("AWA", m), encode_letters("W", m), sc);
        for (const auto isa : isas()) {
            const auto none = sw_align_scored(encode_letters("W", m), encode_letters("P", m), sc, 0, {}, isa);
            REQUIRE(none.has_value());
            REQUIRE(none->ops.empty());
        }
    }
    SECTION("long gaps in both sequences") {
        std::mt19937_64 rng(3);
        for (int k = 0; k < 20; ++k) {
            const auto a = random_sequence(rng, 300 + rng() % 700, protein20, m);
            auto b = a;
            b.erase(b.begin() + 50, b.begin() + 50 + 20 + rng() % 200);                 // gap in the subject
            const auto ins = random_sequence(rng, 30 + rng() % 300, protein20, m);
            b.insert(b.end() - 40, ins.begin(), ins.end());                              // gap in the query
            require_same_as_sw_align(a, b, sc);
            require_same_as_sw_align(b, a, sc);
        }
    }
    SECTION("all identical letters: ties everywhere") {
        require_same_as_sw_align(encode_letters(std::string(40, 'A'), m), encode_letters(std::string(60, 'A'), m), sc);
        require_same_as_sw_align(encode_letters(std::string(333, 'L'), m), encode_letters(std::string(77, 'L'), m), sc);
    }
    SECTION("identical long pairs scoring beyond 32767 (32-bit lanes)") {
        // W/W scores 11: 3100 W's score 34100.
        const auto w = encode_letters(std::string(3100, 'W'), m);
        require_same_as_sw_align(w, w, sc);
        std::mt19937_64 rng(11);
        const auto a = random_sequence(rng, 7000, protein20, m);  // about 5.4 per residue: > 32767
        auto b = mutate(rng, a, 0.02, 4, 60, protein20, m);
        require_same_as_sw_align(a, a, sc);
        require_same_as_sw_align(a, b, sc);
    }
}

TEST_CASE("scored alignment under tight memory budgets equals sw_align", "[alignfast]") {
    std::mt19937_64 rng(8);
    const auto sc = protein_scoring("BLOSUM62", 11, 1);
    for (int k = 0; k < 60; ++k) {
        const auto a = random_sequence(rng, 200 + rng() % 1500, protein20, sc.matrix);
        const auto b = mutate(rng, a, 0.2, 3, 40, protein20, sc.matrix);
        for (std::size_t budget : {std::size_t(0), std::size_t(4000), std::size_t(60000), std::size_t(400000)}) {
            INFO("pair " << k << " budget " << budget);
            require_same_as_sw_align(a, b, sc, {.memory_budget = budget});
        }
    }
}

TEST_CASE("scored alignment refuses a score that is not the pair's best", "[alignfast]") {
    std::mt19937_64 rng(21);
    const auto sc = protein_scoring("BLOSUM62", 11, 1);
    for (int k = 0; k < 50; ++k) {
        const auto a = random_sequence(rng, 50 + rng() % 500, protein20, sc.matrix);
        const auto b = mutate(rng, a, 0.3, 2, 10, protein20, sc.matrix);
        const int best = sw_score(a, b, sc).score;
        for (const auto isa : isas()) {
            INFO("pair " << k << " isa " << align_isa_name(isa));
            REQUIRE_FALSE(sw_align_scored(a, b, sc, best + 1, {}, isa).has_value());  // no cell reaches it
            REQUIRE_FALSE(sw_align_scored(a, b, sc, -1, {}, isa).has_value());
        }
    }
    // A score below the best is refused where the first row reaching it exceeds it.
    const auto w = encode_letters("WWWW", sc.matrix);
    for (const auto isa : isas()) REQUIRE_FALSE(sw_align_scored(w, w, sc, 40, {}, isa).has_value());
}

TEST_CASE("scored alignment equals sw_align on real pairs: bundled queries against the bundled database",
          "[alignfast]") {
    auto queries = io::read_all(std::string(SWGPU_SOURCE_DIR) + "/data/demo_queries.fa");
    auto db = io::read_all(std::string(SWGPU_SOURCE_DIR) + "/data/demo_db.fa");
    for (const auto& sc : {protein_scoring("BLOSUM62", 11, 1), protein_scoring("BLOSUM45", 14, 2)}) {
        sequence_set qs = queries, ds = db;
        encode(qs, sc.matrix);
        encode(ds, sc.matrix);
        int compared = 0;
        for (std::size_t qi = 0; qi < qs.size(); ++qi)
            for (std::size_t si = qi; si < ds.size(); si += 5) {
                INFO(qs.names[qi] << " vs " << ds.names[si]);
                const codes q(qs[qi].begin(), qs[qi].end()), s(ds[si].begin(), ds[si].end());
                require_same_as_sw_align(q, s, sc);
                require_same_as_sw_align(s, q, sc);
                ++compared;
            }
        REQUIRE(compared >= 4 * 199);
    }
}
