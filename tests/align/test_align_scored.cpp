// sw_align_scored (core/align/simd/align_scored.hpp) against sw_align, whose alignments the [sw] tests check against textbook
// Gotoh: the same end cell under the tie rule and the same traceback choices, for every instruction set this CPU runs.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "core/align/sequence.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/simd/align_scored.hpp"
#include "io/align/sequence_reader.hpp"
#include "tests/reference/textbook_gotoh.hpp"
#include "tests/align/sequence_generators.hpp"

using namespace swgpu;
using namespace swgpu::testing;

namespace {

scoring protein_scoring(const char* matrix, int open, int extend) {
    return {substitution_matrix::builtin(matrix), {open, extend}, seq_type::protein};
}
scoring dna_scoring(int match, int mismatch, int open, int extend) {
    return {substitution_matrix::match_mismatch(match, mismatch), {open, extend}, seq_type::dna};
}

std::span<const simd::isa> isas() { return align_scored_isas(); }

// The alignment of every instruction set, given the true score, equals sw_align (under each memory budget).
void require_same_as_sw_align(const codes& q, const codes& s, const scoring& sc,
                              const std::vector<traceback_options>& options = {traceback_options{}}) {
    const alignment want = sw_align(q, s, sc);
    for (const auto& opt : options)
        for (const auto isa : isas()) {
            INFO("isa " << simd::isa_name(isa) << " lengths " << q.size() << " x " << s.size() << " score "
                        << want.score << " budget " << opt.memory_budget);
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
            // b = a[0, 50) + a[50 + cut, end - 40) + inserted + a[end - 40, end): a gap in each sequence.
            const std::size_t cut = 20 + rng() % 200;
            const auto ins = random_sequence(rng, 30 + rng() % 300, protein20, m);
            codes b;
            for (std::size_t x = 0; x < a.size(); ++x) {
                if (x == a.size() - 40) b.insert(b.end(), ins.begin(), ins.end());
                if (x < 50 || x >= 50 + cut) b.push_back(a[x]);
            }
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

TEST_CASE("scored alignment equals sw_align on long related pairs (tracebacks across many blocks and lanes)",
          "[alignfast]") {
    std::mt19937_64 rng(77);
    const auto protein = protein_scoring("BLOSUM62", 11, 1);
    const auto dna = dna_scoring(2, -3, 5, 2);
    for (int k = 0; k < 18; ++k) {
        const bool is_dna = k % 3 == 2;
        const auto& sc = is_dna ? dna : protein;
        const auto& alphabet = is_dna ? dna4 : protein20;
        // A related core (substitutions, short and long indels) inside unrelated flanks of different lengths, so
        // that the alignment starts and ends away from the matrix edges.
        const auto core = random_sequence(rng, 1500 + rng() % 2500, alphabet, sc.matrix);
        auto q = random_sequence(rng, rng() % 800, alphabet, sc.matrix);
        auto s = random_sequence(rng, rng() % 800, alphabet, sc.matrix);
        const auto relative = mutate(rng, core, 0.15 + 0.1 * (k % 4), 6, k % 2 ? 80 : 8, alphabet, sc.matrix);
        q.insert(q.end(), core.begin(), core.end());
        s.insert(s.end(), relative.begin(), relative.end());
        const auto tail = random_sequence(rng, rng() % 600, alphabet, sc.matrix);
        s.insert(s.end(), tail.begin(), tail.end());
        INFO("pair " << k);
        require_same_as_sw_align(q, s, sc);
    }
}

TEST_CASE("scored alignment under tight memory budgets equals sw_align", "[alignfast]") {
    std::mt19937_64 rng(8);
    const auto sc = protein_scoring("BLOSUM62", 11, 1);
    // 0 and 4000 bytes: no room for checkpoints (sw_traceback from pass 1's end cell); the others: wider spacings.
    std::vector<traceback_options> budgets;
    for (std::size_t budget : {std::size_t(0), std::size_t(4000), std::size_t(60000), std::size_t(400000)})
        budgets.push_back({.memory_budget = budget});
    for (int k = 0; k < 25; ++k) {
        const auto a = random_sequence(rng, 200 + rng() % 1500, protein20, sc.matrix);
        const auto b = mutate(rng, a, 0.2, 3, 40, protein20, sc.matrix);
        INFO("pair " << k);
        require_same_as_sw_align(a, b, sc, budgets);
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
            INFO("pair " << k << " isa " << simd::isa_name(isa));
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
