// Long pairs (core/align/long_pair/long_pair.hpp) on the CPU backend: the grid-and-recompute method gives sw_align's score, end cell
// and alignment, checked against the textbook Gotoh of tests/reference; tiny leaves and budgets force every level of
// the recursion (grids inside grids, walks leaving blocks through both edges in every state).
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "core/align/long_pair/long_pair.hpp"
#include "core/align/simd/long_pair_rows.hpp"
#include "core/align/smith_waterman.hpp"
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

scoring dna_scoring(int match, int mismatch, int open, int extend) {
    return {substitution_matrix::match_mismatch(match, mismatch), {open, extend}, seq_type::dna};
}

// DNA scored with more than two values (transitions cost less than transversions): the CPU kernel then picks σ per
// subject letter instead of comparing letters.
scoring transition_scoring() {
    const char* text =
        "   A  C  G  T\n"
        "A  2 -3 -1 -3\n"
        "C -3  2 -3 -1\n"
        "G -1 -3  2 -3\n"
        "T -3 -1 -3  2\n";
    return {substitution_matrix::parse_ncbi(text, "transitions", "test"), {5, 2}, seq_type::dna};
}

}  // namespace

TEST_CASE("long pairs on the CPU equal textbook Gotoh (score, end, start, CIGAR) under tight grids", "[long]") {
    std::mt19937_64 rng(31);
    thread_pool pool(4);
    const std::vector<scoring> scorings = {
        dna_scoring(2, -3, 5, 2), dna_scoring(1, -1, 2, 1), transition_scoring(),
        {substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein},
        {substitution_matrix::builtin("BLOSUM62"), {0, 1}, seq_type::protein}};
    // (grid budget in bytes, leaf cells): from one level to several, and leaves of a few tiles.
    const std::vector<std::pair<std::size_t, double>> settings = {
        {std::size_t(1) << 30, 1 << 20}, {4096, 256.0 * 256}, {1 << 14, 300.0 * 300}, {100, 256.0 * 600}};
    for (int k = 0; k < 160; ++k) {
        const auto& sc = scorings[k % scorings.size()];
        const bool dna = sc.type == seq_type::dna;
        auto [q, s] = random_pair(rng, 2500, dna ? dna4 : protein20, sc.matrix);
        if (k % 4 == 0) {  // related long pairs with long gaps: paths that cross many blocks
            q = random_sequence(rng, 1500 + rng() % 1500, dna ? dna4 : protein20, sc.matrix);
            s = mutate(rng, q, 0.05, 6, 300, dna ? dna4 : protein20, sc.matrix);
        }
        const auto ref = reference::textbook_gotoh(
            q, s, [&](std::uint8_t a, std::uint8_t b) { return long(sc.matrix.score(a, b)); }, sc.gaps.open,
            sc.gaps.extend);
        const auto& [budget, leaf] = settings[k % settings.size()];
        INFO("pair " << k << " lengths " << q.size() << " x " << s.size() << " budget " << budget << " leaf " << leaf);
        // Every vector kernel this CPU runs, in turn (4, 8 and 16 lanes).
        const auto kernels = long_pair::rows::available_kernels();
        long_pair::cpu_backend be(q, s, sc, pool, budget, leaf, kernels[k % kernels.size()].lanes);
        const auto end = long_pair::score(be, std::int64_t(q.size()), std::int64_t(s.size()), sc);
        REQUIRE(end.score == ref.score);
        REQUIRE(end.query_end == ref.qend);
        REQUIRE(end.subject_end == ref.send);
        const auto a = long_pair::align(be, std::int64_t(q.size()), std::int64_t(s.size()), sc);
        REQUIRE(a.score == ref.score);
        REQUIRE(a.query_begin == ref.qbeg);
        REQUIRE(a.subject_begin == ref.sbeg);
        REQUIRE(ops_string(a) == ref.ops);
        REQUIRE(rescore(a, q, s, sc) == a.score);
    }
}

TEST_CASE("long pairs: tile edges, one residue against many, identical pairs", "[long]") {
    thread_pool pool(3);
    const auto sc = dna_scoring(2, -3, 5, 2);
    std::mt19937_64 rng(5);
    const std::int64_t t = long_pair::cpu_backend::tile;
    for (std::int64_t m : {std::int64_t(1), t - 1, t, t + 1, 2 * t + 1}) {
        for (std::int64_t n : {std::int64_t(1), t - 1, t, t + 1, 3 * t}) {
            const auto q = random_sequence(rng, std::size_t(m), dna4, sc.matrix);
            auto s = random_sequence(rng, std::size_t(n), dna4, sc.matrix);
            if (n > 10 && m > 10) std::copy_n(q.begin(), std::min<std::size_t>(q.size(), s.size()) / 2, s.begin() + 3);
            INFO(m << " x " << n);
            for (const auto& kernel : long_pair::rows::available_kernels()) {
                long_pair::cpu_backend be(q, s, sc, pool, 64, 256.0 * 256, kernel.lanes);
                REQUIRE(long_pair::align(be, m, n, sc) == sw_align(q, s, sc));
            }
        }
    }
    SECTION("leaves asked smaller than one tile are one tile (the walk ends)") {
        const auto q = random_sequence(rng, 900, dna4, sc.matrix);
        const auto s = random_sequence(rng, 1100, dna4, sc.matrix);
        long_pair::cpu_backend be(q, s, sc, pool, 1 << 12, 100.0);
        CHECK(be.leaf_cells() == 256.0 * 256);
        REQUIRE(long_pair::align(be, 900, 1100, sc) == sw_align(q, s, sc));
    }
    SECTION("identical 3000-residue pair: one diagonal, ties at every cell of it") {
        const auto q = random_sequence(rng, 3000, dna4, sc.matrix);
        long_pair::cpu_backend be(q, q, sc, pool, 1 << 12, 256.0 * 256);
        const auto a = long_pair::align(be, 3000, 3000, sc);
        REQUIRE(a.score == 6000);
        REQUIRE(cigar_string(a.ops) == "3000M");
        REQUIRE(a == sw_align(q, q, sc));
    }
}

TEST_CASE("long pairs: the CPU trace of a rectangle holds every cell's source and gap bits, and the first target", "[long]") {
    // Each cell's nibble as core/align/long_pair/long_pair.hpp defines it, computed here cell by cell from random borders, against
    // the vector kernel's (every kernel this CPU runs), on shapes around the vector widths; the target is a value
    // the rectangle reaches, so the first cell holding it in row-major order is known.
    std::mt19937_64 rng(11);
    thread_pool pool(2);
    for (const auto& sc : {dna_scoring(2, -3, 5, 2), transition_scoring()}) {
        const int oe = sc.gaps.open + sc.gaps.extend, ext = sc.gaps.extend;
        // (rows, columns): around the vector widths, and past the kernel's strips of 2048 columns.
        std::vector<std::pair<std::int64_t, std::int64_t>> shapes;
        for (const std::int64_t rows : {1, 2, 3, 7, 16, 17, 33, 64})
            for (const std::int64_t cols : {1, 2, 5, 15, 16, 40}) shapes.emplace_back(rows, cols);
        for (const auto& shape : {std::pair<std::int64_t, std::int64_t>{3, 2049}, {17, 4100}, {2, 4096}}) shapes.push_back(shape);
        for (const auto& kernel : long_pair::rows::available_kernels())
            for (const auto& [rows, cols] : shapes) {
                const auto q = random_sequence(rng, 200, dna4, sc.matrix);
                auto s = random_sequence(rng, 4200, dna4, sc.matrix);
                // A related stretch: long diagonals; past the first strip, the best of them there.
                if (cols <= 2048) std::copy_n(q.begin() + 20, 60, s.begin() + 30);
                else std::copy_n(q.begin() + 20, 60, s.begin() + 2130);
                long_pair::cpu_backend be(q, s, sc, pool, 1 << 20, 1 << 20, kernel.lanes);
                const long_pair::rect area{20, 20 + rows, 30, 30 + cols};
                std::uniform_int_distribution<int> val(0, 12);
                long_pair::borders b;
                for (std::int64_t j = 0; j <= cols; ++j) b.top_h.push_back(val(rng));
                for (std::int64_t j = 0; j < cols; ++j) b.top_e.push_back(val(rng) - oe);
                for (std::int64_t i = 0; i < rows; ++i) b.left_h.push_back(val(rng));
                for (std::int64_t i = 0; i < rows; ++i) b.left_f.push_back(val(rng) - oe);
                // The reference, row by row.
                std::vector<int> hprev(b.top_h), e(b.top_e), nib(static_cast<std::size_t>(rows * cols));
                std::vector<int> hval(nib.size());
                for (std::int64_t i = 0; i < rows; ++i) {
                    std::vector<int> hcur(static_cast<std::size_t>(cols + 1));
                    hcur[0] = b.left_h[static_cast<std::size_t>(i)];
                    int f = b.left_f[static_cast<std::size_t>(i)];
                    for (std::int64_t j = 0; j < cols; ++j) {
                        const auto J = static_cast<std::size_t>(j);
                        const int d = hprev[J] + sc.matrix.score(q[static_cast<std::size_t>(20 + i)],
                                                                 s[static_cast<std::size_t>(30 + j)]);
                        const int h = std::max({0, d, e[J], f});
                        const int src = h == 0 ? 0 : h == d ? 1 : h == e[J] ? 2 : 3;
                        const int en = std::max(e[J] - ext, h - oe), fn = std::max(f - ext, h - oe);
                        const auto c = static_cast<std::size_t>(i * cols + j);
                        nib[c] = src | (en == h - oe ? 4 : 0) | (fn == h - oe ? 8 : 0);
                        hval[c] = h;
                        hcur[J + 1] = h;
                        e[J] = en;
                        f = fn;
                    }
                    hprev = hcur;  // hcur[0], this row's left border, is the next row's diagonal at column 0
                }
                const int target = *std::max_element(hval.begin(), hval.end());
                long_pair::trace tr;
                be.trace_rect(area, b, target, tr);
                INFO(kernel.lanes << " lanes, " << rows << " x " << cols);
                for (std::int64_t i = 0; i < rows; ++i)
                    for (std::int64_t j = 0; j < cols; ++j)
                        REQUIRE(tr.at(area.r0 + i, area.c0 + j) == nib[static_cast<std::size_t>(i * cols + j)]);
                if (target > 0) {
                    const auto first = std::find(hval.begin(), hval.end(), target) - hval.begin();
                    REQUIRE(tr.hit_i == area.r0 + first / cols);
                    REQUIRE(tr.hit_j == area.c0 + first % cols);
                } else {
                    REQUIRE(tr.hit_i == -1);
                }
            }
    }
}
