// The one registry of CPU instruction sets (core/align/simd/isa.hpp) and the three kernel families registered under
// it: the inter-sequence score pass (interseq), the alignment of a hit of known score (align_scored) and the long-pair
// row groups (long_pair_rows). Each family's kernels against the scalar reference: [search], [alignfast], [long]; here,
// the registry, and the three families forced to one instruction set at a time on the same pairs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/align/letter_codes.hpp"
#include "core/align/long_pair/long_pair.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/simd/align_scored.hpp"
#include "core/align/simd/interseq.hpp"
#include "core/align/simd/isa.hpp"
#include "core/align/simd/long_pair_rows.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/thread_pool.hpp"
#include "tests/align/sequence_generators.hpp"

using namespace swgpu;
using namespace swgpu::testing;

namespace {

constexpr simd::isa every_isa[] = {simd::isa::portable, simd::isa::sse41, simd::isa::avx2, simd::isa::avx512bw};

bool contains(std::span<const simd::isa> isas, simd::isa x) {
    return std::find(isas.begin(), isas.end(), x) != isas.end();
}

// The available instruction sets a family has kernels for, in order.
std::vector<simd::isa> available_but(simd::isa missing) {
    std::vector<simd::isa> v;
    for (const auto x : simd::available_isas())
        if (x != missing) v.push_back(x);
    return v;
}

}  // namespace

TEST_CASE("instruction sets: ascending from portable, the best last, each one the CPU runs", "[isa]") {
    const auto isas = simd::available_isas();
    REQUIRE(!isas.empty());
    REQUIRE(isas.front() == simd::isa::portable);
    for (std::size_t k = 1; k < isas.size(); ++k) REQUIRE(isas[k - 1] < isas[k]);
    REQUIRE(simd::best_isa() == isas.back());
    REQUIRE(simd::cpu_supports(simd::isa::portable));
#if defined(SWGPU_X86_KERNELS)
    // Every instruction set the CPU runs is available (this binary has kernels for all of them).
    for (const auto x : every_isa) {
        INFO(simd::isa_name(x));
        REQUIRE(contains(isas, x) == simd::cpu_supports(x));
    }
    // A CPU that runs one runs those below it.
    for (std::size_t k = 1; k < std::size(every_isa); ++k)
        if (simd::cpu_supports(every_isa[k])) REQUIRE(simd::cpu_supports(every_isa[k - 1]));
#else
    REQUIRE(isas.size() == 1);
#endif
    std::set<std::string> names;
    for (const auto x : every_isa) names.insert(simd::isa_name(x));
    REQUIRE(names == std::set<std::string>{"portable", "sse41", "avx2", "avx512bw"});
}

TEST_CASE("instruction sets: each family has a kernel for each available instruction set it supports", "[isa]") {
    // interseq: sse41 (16 and 8 lanes), avx2 (32, 16), avx512bw (64, 32); portable is the scalar sw_score.
    REQUIRE(interseq::kernels_for(simd::isa::portable) == nullptr);
    std::vector<simd::isa> interseq_isas;
    for (const auto* k : interseq::available_kernels()) interseq_isas.push_back(k->isa);
    REQUIRE(interseq_isas == available_but(simd::isa::portable));
    const auto* best = interseq_isas.empty() ? nullptr : interseq::kernels_for(interseq_isas.back());
    REQUIRE(interseq::best_kernels() == best);
    for (const auto x : interseq_isas) {
        INFO(simd::isa_name(x));
        const interseq::kernel_set* k = interseq::kernels_for(x);
        REQUIRE(k != nullptr);
        REQUIRE(k->isa == x);
        const unsigned bytes = x == simd::isa::sse41 ? 16 : x == simd::isa::avx2 ? 32 : 64;
        REQUIRE(k->lanes8 == bytes);
        REQUIRE(k->lanes16 == bytes / 2);
    }

    // align_scored: portable, avx2, avx512bw.
    const auto align_isas = align_scored_isas();
    REQUIRE(std::vector<simd::isa>(align_isas.begin(), align_isas.end()) == available_but(simd::isa::sse41));

    // long-pair row groups: portable (4 lanes of 32 bits), avx2 (8), avx512bw (16).
    std::vector<simd::isa> rows_isas;
    for (const auto& k : long_pair::rows::available_kernels()) {
        INFO(simd::isa_name(k.isa));
        REQUIRE(k.run != nullptr);
        REQUIRE(k.lanes == (k.isa == simd::isa::portable ? 4 : k.isa == simd::isa::avx2 ? 8 : 16));
        REQUIRE(long_pair::rows::kernel_for(k.isa).run == k.run);
        rows_isas.push_back(k.isa);
    }
    REQUIRE(rows_isas == available_but(simd::isa::sse41));
    REQUIRE(long_pair::rows::best_kernel().isa == rows_isas.back());
    REQUIRE(long_pair::rows::kernel_for(simd::isa::sse41).run == nullptr);
}

TEST_CASE("instruction sets: the three families forced to each one agree with the scalar code on the same pairs",
          "[isa]") {
    std::mt19937_64 rng(20261126);
    const scoring sc{substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein};
    sequence_set queries, db;
    for (int k = 0; k < 3; ++k) {
        const auto q = random_sequence(rng, 60 + rng() % 300, protein20, sc.matrix);
        queries.add("q" + std::to_string(k), q);
        for (int r = 0; r < 12; ++r) {
            const auto s = r % 3 == 0 ? mutate(rng, q, 0.2, 3, 20, protein20, sc.matrix)
                                      : random_sequence(rng, 1 + rng() % 500, protein20, sc.matrix);
            db.add("s" + std::to_string(db.size()), s);
        }
    }
    queries.encoded = db.encoded = true;
    thread_pool pool(2);
    search_options opt;
    opt.max_hits = db.size();
    const auto scalar_hits = interseq::search_cpu_with(nullptr, queries, db, sc, opt, pool);

    for (const auto x : simd::available_isas()) {
        INFO(simd::isa_name(x));
        if (const interseq::kernel_set* k = interseq::kernels_for(x))
            REQUIRE(interseq::search_cpu_with(k, queries, db, sc, opt, pool) == scalar_hits);
        const auto rows = long_pair::rows::kernel_for(x);
        for (std::size_t q = 0; q < queries.size(); ++q)
            for (std::size_t s = 0; s < db.size(); ++s) {
                INFO("query " << q << " subject " << s);
                const sw_end want = sw_score(queries[q], db[s], sc);
                if (contains(align_scored_isas(), x)) {
                    const auto got = sw_align_scored(queries[q], db[s], sc, want.score, {}, x);
                    REQUIRE(got == sw_align(queries[q], db[s], sc));
                }
                if (rows.run && s % 4 == 0) {
                    const double leaf = double(long_pair::cpu_backend::tile) * long_pair::cpu_backend::tile;
                    long_pair::cpu_backend be(queries[q], db[s], sc, pool, 4096, leaf, rows.lanes);
                    REQUIRE(long_pair::score(be, std::int64_t(queries[q].size()), std::int64_t(db[s].size()), sc) ==
                            want);
                }
            }
    }
}

TEST_CASE("letters to codes: every instruction set gives the matrix's code of every byte and counts the unknown", "[isa]") {
    std::mt19937 rng(77);
    for (const auto& m : {substitution_matrix::builtin("BLOSUM62"), substitution_matrix::match_mismatch(2, -3)}) {
        const letter_codes codes(m);
        // Mostly letters (the vector path), with runs holding every other byte value (the portable path per 32 bytes).
        std::vector<std::uint8_t> in(10000);
        for (std::size_t i = 0; i < in.size(); ++i)
            in[i] = (i / 300) % 3 == 2 ? static_cast<std::uint8_t>(rng()) : static_cast<std::uint8_t>(0x40 + rng() % 64);
        for (int c = 0; c < 256; ++c) in[5000 + static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c);
        for (const auto use : simd::available_isas())
            for (const std::size_t begin : {std::size_t(0), std::size_t(1), std::size_t(31)})
                for (const std::size_t n : {std::size_t(0), std::size_t(5), std::size_t(32), std::size_t(33), in.size() - begin}) {
                    INFO(simd::isa_name(use) << " from " << begin << ", " << n << " bytes");
                    std::vector<std::uint8_t> out(n, 0xff), expected(n);
                    std::uint64_t unknown = 0;
                    for (std::size_t i = 0; i < n; ++i) {
                        expected[i] = m.code(static_cast<char>(in[begin + i]));
                        unknown += !m.known(static_cast<char>(in[begin + i]));
                    }
                    CHECK(encode_letters(codes, in.data() + begin, out.data(), n, use) == unknown);
                    CHECK(out == expected);
                    std::vector<std::uint8_t> same(in.begin() + static_cast<std::ptrdiff_t>(begin),
                                                   in.begin() + static_cast<std::ptrdiff_t>(begin + n));
                    CHECK(encode_letters(codes, same.data(), same.data(), n, use) == unknown);  // in place
                    CHECK(same == expected);
                }
    }
}
