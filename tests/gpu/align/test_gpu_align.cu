// gpu::align_scored (gpu/align/hit_alignments.cu) against the CPU: for every pair and given score, the GPU's answer is the CPU's
// sw_align_scored answer (the same alignment, or both nullopt), and with the true score that is sw_align's alignment,
// which the [sw] tests check against textbook Gotoh. Random protein and DNA pairs under several scorings, strip and
// word edges, long and overflow-prone pairs, wrong scores, and memory budgets that force batches or leave pairs out.
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/align/smith_waterman.hpp"
#include "core/align/simd/align_scored.hpp"
#include "gpu/gpu.hpp"
#include "tests/gpu/harness.hpp"
#include "tests/align/sequence_generators.hpp"

namespace {

using namespace swgpu;
using namespace swgpu::testing;

scoring protein_scoring(const char* matrix, int open, int extend) {
    return {substitution_matrix::builtin(matrix), {open, extend}, seq_type::protein};
}
scoring dna_scoring(int match, int mismatch, int open, int extend) {
    return {substitution_matrix::match_mismatch(match, mismatch), {open, extend}, seq_type::dna};
}

struct case_pair {
    codes q, s;
    int score;  // the score handed over (the true one unless a test says otherwise)
};

// Aligns all pairs on the GPU in one call and checks each against the CPU. Returns how many the GPU aligned.
std::size_t check_against_cpu(const std::vector<case_pair>& cases, const scoring& sc, std::size_t device_memory = 0) {
    std::vector<scored_pair> pairs;
    for (const auto& c : cases) pairs.push_back({c.q, c.s, c.score});
    const auto got = gpu::align_scored(pairs, sc, device_memory);
    REQUIRE(got.size() == cases.size());
    std::size_t aligned = 0;
    for (std::size_t k = 0; k < cases.size(); ++k) {
        const auto& c = cases[k];
        const auto want = sw_align_scored(c.q, c.s, sc, c.score);
        if (got[k]) ++aligned;
        if (device_memory == 0 && want.has_value() != got[k].has_value()) {
            std::fprintf(stderr, "pair %zu (%zu x %zu, score %d): CPU %s, GPU %s\n", k, c.q.size(), c.s.size(), c.score,
                         want ? "aligned" : "nullopt", got[k] ? "aligned" : "nullopt");
            CHECK(want.has_value() == got[k].has_value());
        }
        if (want && got[k] && !(*want == *got[k])) {
            std::fprintf(stderr, "pair %zu (%zu x %zu, score %d): GPU %s at %lld,%lld vs CPU %s at %lld,%lld\n", k,
                         c.q.size(), c.s.size(), c.score, cigar_string(got[k]->ops).c_str(),
                         static_cast<long long>(got[k]->query_begin), static_cast<long long>(got[k]->subject_begin),
                         cigar_string(want->ops).c_str(), static_cast<long long>(want->query_begin),
                         static_cast<long long>(want->subject_begin));
            CHECK(*want == *got[k]);
        }
    }
    return aligned;
}

}  // namespace

GPU_TEST("gpu align: 4,000 random protein and DNA pairs give sw_align's alignments") {
    std::mt19937_64 rng(2026);
    const std::vector<scoring> scorings = {protein_scoring("BLOSUM62", 11, 1), protein_scoring("BLOSUM45", 14, 2),
                                           protein_scoring("PAM30", 9, 1),     protein_scoring("BLOSUM62", 0, 1),
                                           dna_scoring(2, -3, 5, 2),           dna_scoring(1, -1, 2, 1)};
    for (const auto& sc : scorings) {
        const bool dna = sc.type == seq_type::dna;
        std::vector<case_pair> cases;
        for (int k = 0; k < 4000 / static_cast<int>(scorings.size()); ++k) {
            auto [q, s] = random_pair(rng, 1200, dna ? dna4 : protein20, sc.matrix);
            const int score = sw_score(q, s, sc).score;
            cases.push_back({std::move(q), std::move(s), score});
        }
        // With the true scores the GPU aligns every pair.
        CHECK_EQ(check_against_cpu(cases, sc), cases.size());
        for (std::size_t k = 0; k < cases.size(); k += 97)
            CHECK(*sw_align_scored(cases[k].q, cases[k].s, sc, cases[k].score) == sw_align(cases[k].q, cases[k].s, sc));
    }
}

GPU_TEST("gpu align: strip and word edges, length 1, long and overflow-prone pairs") {
    std::mt19937_64 rng(7);
    const scoring sc = protein_scoring("BLOSUM62", 11, 1);
    std::vector<case_pair> cases;
    const auto add = [&](codes q, codes s) {
        const int score = sw_score(q, s, sc).score;
        cases.push_back({std::move(q), std::move(s), score});
    };
    // Query lengths around the 128-row strips and the 4 rows a lane holds; subject lengths around the 8-cell words.
    for (const std::size_t m : {1, 2, 3, 4, 5, 31, 32, 33, 127, 128, 129, 255, 256, 257, 513})
        for (const std::size_t n : {1, 7, 8, 9, 16, 17, 300}) {
            const codes q = random_sequence(rng, m, protein20, sc.matrix);
            add(q, mutate(rng, q, 0.2, 2, 4, protein20, sc.matrix));
            add(q, random_sequence(rng, n, protein20, sc.matrix));
        }
    // Identical long sequences (scores far beyond 16 bits), a long subject against a short query and the reverse.
    add(encode_letters(std::string(3000, 'W'), sc.matrix), encode_letters(std::string(3000, 'W'), sc.matrix));
    const codes long_s = random_sequence(rng, 20000, protein20, sc.matrix);
    add(codes(long_s.begin() + 9000, long_s.begin() + 9400), long_s);
    add(long_s, codes(long_s.begin() + 15000, long_s.begin() + 15300));
    // The end cell in the first strips of a query of many strips (the other warps of the pair give up theirs), and in
    // the last strip of a query whose strips go round 2, 4 and 8 warps.
    const codes piece(long_s.begin() + 100, long_s.begin() + 400);
    codes early = piece;
    const codes tail = random_sequence(rng, 3000, protein20, sc.matrix);
    early.insert(early.end(), tail.begin(), tail.end());
    add(early, piece);
    for (const std::size_t m : {384, 385, 1024, 1100, 2049}) {
        codes late = random_sequence(rng, m - 100, protein20, sc.matrix);
        late.insert(late.end(), piece.begin(), piece.begin() + 100);
        add(late, piece);
    }
    // Many hits of one query (the query is sent once).
    const codes shared = random_sequence(rng, 400, protein20, sc.matrix);
    for (int k = 0; k < 50; ++k) add(shared, mutate(rng, shared, 0.1 * (k % 5), k % 4, 30, protein20, sc.matrix));
    CHECK_EQ(check_against_cpu(cases, sc), cases.size());
}

GPU_TEST("gpu align: a score that is not the pair's best is answered as the CPU answers it") {
    std::mt19937_64 rng(99);
    const scoring sc = protein_scoring("BLOSUM62", 11, 1);
    std::vector<case_pair> cases;
    for (int k = 0; k < 300; ++k) {
        auto [q, s] = random_pair(rng, 600, protein20, sc.matrix);
        const int best = sw_score(q, s, sc).score;
        // Above the best (no cell reaches it), below it (some cell exceeds it, or an earlier cell reaches it), zero.
        const int given = k % 3 == 0 ? best + 1 : k % 3 == 1 ? std::max(1, best - 1 - static_cast<int>(rng() % 5)) : 0;
        cases.push_back({std::move(q), std::move(s), given});
    }
    const std::size_t aligned = check_against_cpu(cases, sc);
    CHECK(aligned < cases.size());
}

GPU_TEST("gpu align: a small memory budget gives the same alignments in batches, and leaves out what cannot fit") {
    std::mt19937_64 rng(31);
    const scoring sc = dna_scoring(2, -3, 5, 2);
    std::vector<case_pair> cases;
    for (int k = 0; k < 200; ++k) {
        const codes q = random_sequence(rng, 50 + rng() % 700, dna4, sc.matrix);
        codes s = mutate(rng, q, 0.1, 2, 20, dna4, sc.matrix);
        const int score = sw_score(q, s, sc).score;
        cases.push_back({q, std::move(s), score});
    }
    // One big pair: 4000 x 4000 cells need about 8 MB of trace.
    const codes big = random_sequence(rng, 4000, dna4, sc.matrix);
    cases.push_back({big, big, sw_score(big, big, sc).score});
    // 2 MB: many batches; the big pair does not fit and is left to the caller.
    std::vector<scored_pair> pairs;
    for (const auto& c : cases) pairs.push_back({c.q, c.s, c.score});
    const auto got = gpu::align_scored(pairs, sc, std::size_t(2) << 20);
    CHECK(!got.back().has_value());
    for (std::size_t k = 0; k + 1 < cases.size(); ++k) {
        REQUIRE(got[k].has_value());
        CHECK(*got[k] == sw_align(cases[k].q, cases[k].s, sc));
    }
    CHECK_EQ(check_against_cpu(cases, sc), cases.size());
}

GPU_TEST("sanitize: gpu align, warps sharing pairs and giving up strips") {
    // Small enough for compute-sanitizer: pairs of 1 to 12 strips (1, 2, 4 and 8 warps each), ends early and late.
    std::mt19937_64 rng(5);
    const scoring sc = protein_scoring("BLOSUM62", 11, 1);
    std::vector<case_pair> cases;
    for (const std::size_t m : {1, 100, 300, 600, 1100, 1500}) {
        const codes q = random_sequence(rng, m, protein20, sc.matrix);
        for (const std::size_t n : {1, 40, 200}) {
            codes s = n < m ? codes(q.begin() + (m - n) / 2, q.begin() + (m - n) / 2 + n) : q;
            cases.push_back({q, s, sw_score(q, s, sc).score});
            codes r = random_sequence(rng, n, protein20, sc.matrix);
            cases.push_back({q, r, sw_score(q, r, sc).score});
        }
    }
    CHECK_EQ(check_against_cpu(cases, sc), cases.size());
}
