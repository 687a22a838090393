// Rung 3, second oracle: seqan3's align_pairwise (same gap convention: a gap of length k costs open + k·extend) on
// 10,000 random protein and DNA pairs. Scores must be equal; end coordinates must be equal whenever the optimum is
// reached in a single cell (with ties, each tool applies its own documented rule; ours is checked against the textbook
// in test_smith_waterman.cpp).
#include <catch2/catch.hpp>

#include <random>
#include <seqan3/alignment/configuration/all.hpp>
#include <seqan3/alignment/pairwise/align_pairwise.hpp>
#include <seqan3/alignment/scoring/aminoacid_scoring_scheme.hpp>
#include <seqan3/alignment/scoring/nucleotide_scoring_scheme.hpp>
#include <seqan3/alphabet/aminoacid/aa27.hpp>
#include <seqan3/alphabet/nucleotide/dna4.hpp>

#include "core/align/smith_waterman.hpp"
#include "tests/reference/textbook_gotoh.hpp"
#include "tests/align/sequence_generators.hpp"

using namespace swgpu;
using namespace swgpu::testing;

namespace {

// seqan3's scoring matrix over aa27, filled from our matrix by letter (letters our matrix lacks score as its X).
seqan3::aminoacid_scoring_scheme<int> seqan3_scheme(const substitution_matrix& m) {
    seqan3::aminoacid_scoring_scheme<int> scheme;
    typename seqan3::aminoacid_scoring_scheme<int>::matrix_type table{};
    for (std::size_t a = 0; a < seqan3::alphabet_size<seqan3::aa27>; ++a)
        for (std::size_t b = 0; b < seqan3::alphabet_size<seqan3::aa27>; ++b) {
            const char la = seqan3::aa27{}.assign_rank(a).to_char(), lb = seqan3::aa27{}.assign_rank(b).to_char();
            table[a][b] = m.score(m.code(la), m.code(lb));
        }
    scheme.set_custom_matrix(table);
    return scheme;
}

template <class Alphabet>
std::vector<Alphabet> to_seqan3(const codes& c, const substitution_matrix& m) {
    std::vector<Alphabet> out(c.size());
    for (std::size_t k = 0; k < c.size(); ++k) out[k].assign_char(m.letter(c[k]));
    return out;
}

template <class Alphabet, class Scheme>
void compare(int count, std::uint64_t seed, const scoring& sc, const Scheme& scheme, const std::string& alphabet) {
    std::mt19937_64 rng(seed);
    auto cfg = seqan3::align_cfg::method_local{} | seqan3::align_cfg::scoring_scheme{scheme} |
               seqan3::align_cfg::gap_cost_affine{seqan3::align_cfg::open_score{-sc.gaps.open},
                                                  seqan3::align_cfg::extension_score{-sc.gaps.extend}} |
               seqan3::align_cfg::output_score{} | seqan3::align_cfg::output_end_position{};
    int unique = 0;
    for (int k = 0; k < count; ++k) {
        auto [q, s] = random_pair(rng, 2000, alphabet, sc.matrix);
        const auto qa = to_seqan3<Alphabet>(q, sc.matrix), sa = to_seqan3<Alphabet>(s, sc.matrix);
        auto results = seqan3::align_pairwise(std::tie(qa, sa), cfg);
        const auto& r = *results.begin();
        const auto ours = sw_score(q, s, sc);
        INFO("pair " << k << " lengths " << q.size() << " x " << s.size());
        REQUIRE(ours.score == r.score());
        if (ours.score == 0) continue;
        // the textbook tells whether the maximum is unique
        const auto ref = reference::textbook_gotoh(
            q, s, [&](std::uint8_t a, std::uint8_t b) { return long(sc.matrix.score(a, b)); }, sc.gaps.open, sc.gaps.extend);
        if (ref.cells_with_max == 1) {
            REQUIRE(ours.query_end == static_cast<std::int64_t>(r.sequence1_end_position()) - 1);
            REQUIRE(ours.subject_end == static_cast<std::int64_t>(r.sequence2_end_position()) - 1);
            ++unique;
        }
    }
    REQUIRE(unique > count / 4);
}

}  // namespace

TEST_CASE("scores and end cells equal seqan3 on 6,000 protein pairs", "[seqan3][sw]") {
    const scoring sc{substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein};
    compare<seqan3::aa27>(6000, 314, sc, seqan3_scheme(sc.matrix), protein20);
}

TEST_CASE("scores and end cells equal seqan3 on 4,000 DNA pairs", "[seqan3][sw]") {
    const scoring sc{substitution_matrix::match_mismatch(2, -3), {5, 2}, seq_type::dna};
    compare<seqan3::dna4>(4000, 271, sc,
                          seqan3::nucleotide_scoring_scheme{seqan3::match_score{2}, seqan3::mismatch_score{-3}}, dna4);
}
