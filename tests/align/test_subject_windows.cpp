// Short queries against long subjects through windows (core/align/search/subject_windows.hpp): the same hits as the search pass
// over whole subjects, and the alignments sw_align gives, for reads from a random genome with substitutions and
// indels, on both strands, with repeats that make several windows tie (more than the 16 kept ones too: the alignment
// then falls back to the whole subject), and reads that fall on window overlaps.
#include <catch2/catch.hpp>

#include <random>

#include "core/align/search/score_pass.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/strand.hpp"
#include "core/align/search/subject_windows.hpp"
#include "tests/align/sequence_generators.hpp"

using namespace swgpu;
using namespace swgpu::testing;

TEST_CASE("subject windows: hits and alignments equal the whole-subject search and sw_align", "[windows]") {
    std::mt19937_64 rng(17);
    thread_pool pool(2);
    const scoring sc{substitution_matrix::match_mismatch(2, -3), {5, 2}, seq_type::dna};
    // A 60 kbp genome holding a 300-base repeat 3 times and a 200-base repeat 20 times, plus a short second subject.
    codes genome = random_sequence(rng, 60000, dna4, sc.matrix);
    const codes rep = random_sequence(rng, 300, dna4, sc.matrix), rep20 = random_sequence(rng, 200, dna4, sc.matrix);
    for (std::size_t at : {5000u, 23000u, 41000u}) std::copy(rep.begin(), rep.end(), genome.begin() + at);
    for (std::size_t k = 0; k < 20; ++k) std::copy(rep20.begin(), rep20.end(), genome.begin() + 45000 + k * 600);
    sequence_set db;
    db.encoded = true;
    db.add("short", std::span<const std::uint8_t>(genome).subspan(100, 3000));
    db.add("genome", genome);
    sequence_set reads;
    reads.encoded = true;
    subject_windows windows(sc);
    const std::size_t W = windows.window(150), V = windows.overlap(150);
    REQUIRE(windows.windowed(genome.size(), 150));
    for (int r = 0; r < 120; ++r) {
        std::size_t at = rng() % (genome.size() - 150);
        if (r % 6 == 0) at = 5000 + rng() % 150;                      // in the 3-copy repeat
        if (r % 6 == 1) at = 45000 + rng() % 50;                      // in the 20-copy repeat: ties beyond 16 windows
        if (r % 6 == 2) at = (W - V) * (1 + rng() % 8) - rng() % 200;  // across a window overlap
        codes read(genome.begin() + at, genome.begin() + at + 100 + rng() % 51);
        read = mutate(rng, read, 0.03, r % 3, 4, dna4, sc.matrix);
        if (r % 2) {
            std::string letters;
            for (auto c : read) letters += sc.matrix.letter(c);
            read = encode_letters(reverse_complement(letters), sc.matrix);
        }
        reads.add("read" + std::to_string(r), read);
    }
    search_options opt;
    opt.max_hits = 2;
    const score_pass inner = [&](const sequence_set& q, const sequence_set& d, const search_options& o) {
        return search_cpu(q, d, sc, o, pool);
    };
    const auto want = search_cpu(reads, db, sc, opt, pool);
    const auto got = windows.search(reads, db, opt, inner);
    REQUIRE(got == want);
    int through_windows = 0;
    for (std::size_t q = 0; q < reads.size(); ++q)
        for (const auto& h : got[q]) {
            const auto aln = windows.align({reads[q], db[h.subject], h.score});
            if (h.subject == 0) {
                CHECK(!aln);  // not scored through windows
                continue;
            }
            INFO("read " << q << " score " << h.score);
            if (aln) {
                ++through_windows;
                REQUIRE(*aln == sw_align(reads[q], db[h.subject], sc));
            }
        }
    CHECK(through_windows > 90);
}
