// The CPU score pass of database search: every kernel set this CPU runs (and the scalar path) must give, for every
// (query, subject) pair, the score of the scalar 32-bit sw_score, and the hit lists of the search contract
// (search.hpp): score descending, subject ascending, at most max_hits, min_score honoured, subject_offset added.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/simd/interseq.hpp"
#include "core/align/statistics.hpp"

namespace {

using namespace swgpu;
using codes = std::vector<std::uint8_t>;
using hit_lists = std::vector<std::vector<score_hit>>;

codes random_codes(std::mt19937_64& rng, std::size_t n, int letters) {
    codes c(n);
    for (auto& x : c) x = static_cast<std::uint8_t>(rng() % static_cast<unsigned>(letters));
    return c;
}

// A relative of s: substitutions at `rate` and a few indels, so that scores spread far above the random ones.
codes relative(std::mt19937_64& rng, const codes& s, double rate, int letters) {
    codes r;
    std::uniform_real_distribution<double> u(0, 1);
    for (const auto x : s) {
        const double p = u(rng);
        if (p < rate) r.push_back(static_cast<std::uint8_t>(rng() % static_cast<unsigned>(letters)));
        else if (p < rate * 1.1) continue;  // deletion
        else r.push_back(x);
        if (u(rng) < rate * 0.1) r.push_back(static_cast<std::uint8_t>(rng() % static_cast<unsigned>(letters)));
    }
    if (r.empty()) r.push_back(s.empty() ? 0 : s[0]);
    return r;
}

codes repeat(const std::string& letters, std::size_t times, const substitution_matrix& m) {
    codes c;
    for (std::size_t k = 0; k < times; ++k)
        for (const char l : letters) c.push_back(m.code(l));
    return c;
}

sequence_set make_set(const std::vector<codes>& seqs, const std::string& prefix) {
    sequence_set set;
    for (std::size_t k = 0; k < seqs.size(); ++k) set.add(prefix + std::to_string(k), seqs[k]);
    set.encoded = true;
    return set;
}

// The contract computed the slow way: sw_score on every pair, then sort and cut.
hit_lists reference(const sequence_set& queries, const sequence_set& db, const scoring& sc, const search_options& opt) {
    hit_lists out(queries.size());
    for (std::size_t q = 0; q < queries.size(); ++q) {
        for (std::size_t s = 0; s < db.size(); ++s) {
            const int score = sw_score(queries[q], db[s], sc).score;
            if (score >= std::max(1, opt.min_score))
                out[q].push_back({score, static_cast<std::uint32_t>(s) + opt.subject_offset});
        }
        std::sort(out[q].begin(), out[q].end(), [](const score_hit& a, const score_hit& b) {
            return a.score != b.score ? a.score > b.score : a.subject < b.subject;
        });
        if (out[q].size() > opt.max_hits) out[q].resize(opt.max_hits);
    }
    return out;
}

// The scalar path (nullptr) and every kernel set this CPU runs.
std::vector<const interseq::kernel_set*> variants() {
    std::vector<const interseq::kernel_set*> v{nullptr};
    for (const auto* k : interseq::available_kernels()) v.push_back(k);
    return v;
}
std::string name_of(const interseq::kernel_set* k) { return k ? simd::isa_name(k->isa) : "scalar"; }

// The first n records of a set.
sequence_set prefix(const sequence_set& set, std::size_t n) {
    sequence_set out;
    for (std::size_t k = 0; k < n; ++k) out.add(set.names[k], set[k]);
    out.encoded = true;
    return out;
}

hit_lists restrict_to(const hit_lists& all, std::uint32_t subjects, std::size_t max_hits) {
    hit_lists out(all.size());
    for (std::size_t q = 0; q < all.size(); ++q) {
        for (const auto& h : all[q])
            if (h.subject < subjects && out[q].size() < max_hits) out[q].push_back(h);
    }
    return out;
}

// Checks every variant against the reference on every prefix of db whose size is around a lane count.
void check_all_pairs(const sequence_set& queries, const sequence_set& db, const scoring& sc, thread_pool& pool) {
    search_options all;
    all.max_hits = db.size();
    const hit_lists want = reference(queries, db, sc, all);
    std::vector<std::size_t> sizes;
    for (std::size_t n : {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129})
        if (n < db.size()) sizes.push_back(n);
    sizes.push_back(db.size());
    for (const auto* k : variants()) {
        for (const auto n : sizes) {
            INFO("kernels " << name_of(k) << ", " << n << " subjects");
            const sequence_set part = prefix(db, n);
            search_options opt;
            opt.max_hits = n;
            CHECK(interseq::search_cpu_with(k, queries, part, sc, opt, pool) ==
                  restrict_to(want, static_cast<std::uint32_t>(n), n));
        }
    }
}

// Lengths at the edges of lanes and of the kernels' column groups, and longer ones.
std::vector<std::size_t> adversarial_lengths() {
    return {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 250, 513};
}

std::vector<codes> random_db(std::mt19937_64& rng, const std::vector<codes>& queries, std::size_t n, int letters,
                             std::size_t max_len) {
    std::vector<codes> db;
    for (const auto len : adversarial_lengths()) db.push_back(random_codes(rng, len, letters));
    while (db.size() < n) {
        const auto pick = rng() % 4;
        if (pick == 0) db.push_back(relative(rng, queries[rng() % queries.size()], 0.2, letters));
        else if (pick == 1) db.push_back(relative(rng, queries[rng() % queries.size()], 0.5, letters));
        else db.push_back(random_codes(rng, 1 + rng() % max_len, letters));
    }
    std::shuffle(db.begin(), db.end(), rng);
    return db;
}

}  // namespace

TEST_CASE("search_cpu: every kernel set equals sw_score on every pair, protein", "[search]") {
    std::mt19937_64 rng(20261122);
    const auto m = substitution_matrix::builtin("BLOSUM62");
    const int letters = m.size();  // every code, including B J Z X * (codes >= 16 use the second look-up half)
    std::vector<codes> q;
    for (std::size_t len : {1, 2, 3, 16, 33, 120, 400}) q.push_back(random_codes(rng, len, letters));
    const auto db = make_set(random_db(rng, q, 150, letters, 300), "s");
    const auto queries = make_set(q, "q");
    thread_pool pool(2);
    for (const gap_costs gaps : {gap_costs{11, 1}, gap_costs{0, 1}, gap_costs{5, 3}, gap_costs{300, 200}}) {
        INFO("gaps " << gaps.open << "/" << gaps.extend);
        check_all_pairs(queries, db, scoring{m, gaps, seq_type::protein}, pool);
    }
}

TEST_CASE("search_cpu: every kernel set equals sw_score on every pair, DNA", "[search]") {
    std::mt19937_64 rng(7);
    const auto m = substitution_matrix::match_mismatch(2, -3);
    std::vector<codes> q;
    for (std::size_t len : {1, 2, 17, 64, 300}) q.push_back(random_codes(rng, len, 4));
    const auto db = make_set(random_db(rng, q, 140, 5, 400), "s");  // 5 letters: N too
    const auto queries = make_set(q, "q");
    thread_pool pool(3);
    check_all_pairs(queries, db, scoring{m, {5, 2}, seq_type::dna}, pool);
    // Scores too large for 8-bit lanes to be worth trying: the search starts with 16-bit lanes.
    check_all_pairs(queries, db, scoring{substitution_matrix::match_mismatch(100, -100), {50, 20}, seq_type::dna},
                    pool);
}

// Sequences made of runs of letters: {{"W", 3}, {"A", 1}} is WWWA.
codes runs(std::initializer_list<std::pair<const char*, std::size_t>> parts, const substitution_matrix& m) {
    codes c;
    for (const auto& [letters, times] : parts) {
        const auto r = repeat(letters, times, m);
        c.insert(c.end(), r.begin(), r.end());
    }
    return c;
}

// Every variant against the reference, for identical-pair scores at the edges of the lane types.
void check_edges(const std::vector<codes>& q, std::vector<codes> d, const scoring& sc, const std::vector<int>& best) {
    std::mt19937_64 rng(3);
    for (int k = 0; k < 40; ++k) d.push_back(random_codes(rng, 1 + rng() % 200, std::min(20, sc.matrix.size())));
    std::shuffle(d.begin(), d.end(), rng);
    const auto queries = make_set(q, "q"), db = make_set(d, "s");
    thread_pool pool(2);
    search_options all;
    all.max_hits = db.size();
    const auto want = reference(queries, db, sc, all);
    for (std::size_t k = 0; k < best.size(); ++k) REQUIRE(want[k].front().score == best[k]);
    for (const auto* k : variants()) {
        INFO("kernels " << name_of(k));
        CHECK(interseq::search_cpu_with(k, queries, db, sc, all, pool) == want);
    }
}

TEST_CASE("search_cpu: scores beyond 8 and 16 bits are exact", "[search]") {
    // 8-bit lanes hold H in 0..255, 16-bit lanes 0..65535; a lane that reaches the top may have saturated and its
    // subject is recomputed wider. Identical pairs score the sum of the diagonal.
    SECTION("BLOSUM62: 8 bits, then 16, then 32") {
        const auto m = substitution_matrix::builtin("BLOSUM62");  // W:W 11, C:C 9, A:A 4
        const std::vector<codes> q{runs({{"W", 22}, {"A", 3}}, m),             // 254: the largest kept from 8 bits
                                   runs({{"W", 22}, {"A", 1}, {"C", 1}}, m),   // 255
                                   runs({{"W", 5958}, {"A", 1}}, m)};          // 65542: beyond 16 bits
        std::vector<codes> d = q;
        d.push_back(repeat("W", 24, m));  // 264 against the others
        d.push_back(repeat("W", 23, m));  // 253
        d.push_back(repeat("WCA", 100, m));
        check_edges(q, d, scoring{m, {11, 1}, seq_type::protein}, {254, 255, 65542});
    }
    SECTION("large scores: 16 bits first, then 32") {
        const auto m = substitution_matrix::parse_ncbi(
            "   A    C    G    T    N\n"
            "A 127 -100 -100 -100 -100\n"
            "C -100 100 -100 -100 -100\n"
            "G -100 -100  1 -100 -100\n"
            "T -100 -100 -100 50 -100\n"
            "N -100 -100 -100 -100 -100\n",
            "edges", "test");
        const std::vector<codes> q{runs({{"A", 516}, {"G", 2}}, m),             // 65534: the largest kept from 16
                                   runs({{"A", 516}, {"G", 3}}, m),             // 65535
                                   runs({{"A", 516}, {"G", 10}}, m),            // 65542
                                   runs({{"A", 500}, {"T", 9}, {"C", 40}}, m),  // 67950
                                   runs({{"A", 2}}, m)};                        // 254
        std::vector<codes> d = q;
        d.push_back(runs({{"A", 515}, {"C", 1}, {"A", 1}}, m));
        d.push_back(runs({{"G", 700}}, m));
        check_edges(q, d, scoring{m, {3, 2}, seq_type::dna}, {65534, 65535, 65542, 67950, 254});
    }
}

// The E-value order computed the slow way: every pair's score, its E-value from evalue_calculator for a database of
// `db_residues`, then E-value ascending, score descending, subject ascending (BLAST's order), cut at max_hits.
std::vector<std::vector<std::pair<int, std::uint32_t>>> by_evalue(const sequence_set& queries, const sequence_set& db,
                                                                  const scoring& sc, std::size_t max_hits) {
    const evalue_calculator stats(sc, db.total_residues(), db.size());
    std::vector<std::vector<std::pair<int, std::uint32_t>>> out(queries.size());
    for (std::size_t q = 0; q < queries.size(); ++q) {
        struct row {
            double e;
            int score;
            std::uint32_t subject;
        };
        std::vector<row> rows;
        for (std::size_t s = 0; s < db.size(); ++s) {
            const int score = sw_score(queries[q], db[s], sc).score;
            if (score > 0)
                rows.push_back({stats.evalue(score, queries.length(q), db.length(s)), score, static_cast<std::uint32_t>(s)});
        }
        std::sort(rows.begin(), rows.end(), [](const row& a, const row& b) {
            if (a.e != b.e) return a.e < b.e;
            return a.score != b.score ? a.score > b.score : a.subject < b.subject;
        });
        for (std::size_t k = 0; k < std::min(max_hits, rows.size()); ++k) out[q].push_back({rows[k].score, rows[k].subject});
    }
    return out;
}

std::vector<std::vector<std::pair<int, std::uint32_t>>> pairs_of(const hit_lists& hits) {
    std::vector<std::vector<std::pair<int, std::uint32_t>>> out(hits.size());
    for (std::size_t q = 0; q < hits.size(); ++q)
        for (const auto& h : hits[q]) out[q].push_back({h.score, h.subject});
    return out;
}

TEST_CASE("search_cpu: ranked by E-value, the hits with the smallest E-values in BLAST's order", "[search]") {
    // Subjects of every length, relatives of the queries among them, so that a short subject's weaker hit often has a
    // smaller E-value than a long subject's stronger one.
    std::mt19937_64 rng(29);
    const auto m = substitution_matrix::builtin("BLOSUM62");
    const scoring sc{m, {11, 1}, seq_type::protein};
    std::vector<codes> qs;
    for (const std::size_t len : {30, 120, 400}) qs.push_back(random_codes(rng, len, 20));
    std::vector<codes> d;
    for (int k = 0; k < 300; ++k) {
        const codes& q = qs[rng() % qs.size()];
        const std::size_t at = rng() % q.size(), len = std::min<std::size_t>(q.size() - at, 8 + rng() % 60);
        codes piece = relative(rng, codes(q.begin() + long(at), q.begin() + long(at + len)), 0.3, 20);
        codes flank = random_codes(rng, rng() % 2 ? rng() % 20 : 500 + rng() % 2500, 20);
        piece.insert(piece.begin(), flank.begin(), flank.begin() + long(flank.size() / 2));
        piece.insert(piece.end(), flank.begin() + long(flank.size() / 2), flank.end());
        d.push_back(rng() % 4 ? piece : random_codes(rng, 1 + rng() % 900, 20));
    }
    const auto queries = make_set(qs, "q"), db = make_set(d, "s");
    const evalue_calculator ranking(sc, 0, 0);
    REQUIRE(ranking.ranking() != nullptr);
    thread_pool pool(2);
    bool order_differs = false;
    for (const std::size_t max_hits : {1, 5, 40, 300}) {
        const auto want = by_evalue(queries, db, sc, max_hits);
        search_options by_score;
        by_score.max_hits = max_hits;
        order_differs |= pairs_of(reference(queries, db, sc, by_score)) != want;
        for (const auto* k : variants()) {
            INFO("kernels " << name_of(k) << ", max_hits " << max_hits);
            search_options opt;
            opt.max_hits = max_hits;
            opt.rank_by_evalue = *ranking.ranking();
            const auto got = interseq::search_cpu_with(k, queries, db, sc, opt, pool);
            CHECK(pairs_of(got) == want);
            // Chunks merged give one search's hits.
            hit_lists merged(queries.size());
            for (std::size_t first = 0; first < db.size(); first += 70) {
                sequence_set part;
                for (std::size_t s = first; s < std::min(db.size(), first + 70); ++s) part.add(db.names[s], db[s]);
                part.encoded = true;
                search_options o = opt;
                o.subject_offset = static_cast<std::uint32_t>(first);
                merge_hits(merged, interseq::search_cpu_with(k, queries, part, sc, o, pool), max_hits);
            }
            CHECK(merged == got);
        }
    }
    CHECK(order_differs);  // the data tells the two orders apart
}

TEST_CASE("search_cpu: ties are ordered by subject, max_hits and min_score cut the list", "[search]") {
    std::mt19937_64 rng(11);
    const auto m = substitution_matrix::builtin("BLOSUM62");
    const scoring sc{m, {11, 1}, seq_type::protein};
    const codes query = random_codes(rng, 80, 20);
    const codes close = relative(rng, query, 0.2, 20), far = relative(rng, query, 0.5, 20);
    std::vector<codes> d;
    for (int k = 0; k < 100; ++k) {
        const auto pick = rng() % 3;
        d.push_back(pick == 0 ? close : pick == 1 ? far : random_codes(rng, 10 + rng() % 90, 20));
    }
    const auto queries = make_set({query, far}, "q"), db = make_set(d, "s");
    thread_pool pool(2);
    for (const auto* k : variants()) {
        for (const std::size_t max_hits : {1, 3, 10, 1000}) {
            for (const int min_score : {1, 30, 60}) {
                INFO("kernels " << name_of(k) << ", max_hits " << max_hits << ", min_score " << min_score);
                search_options opt;
                opt.max_hits = max_hits;
                opt.min_score = min_score;
                opt.subject_offset = 1000;
                const auto got = interseq::search_cpu_with(k, queries, db, sc, opt, pool);
                CHECK(got == reference(queries, db, sc, opt));
                for (const auto& hits : got) {
                    CHECK(hits.size() <= max_hits);
                    for (std::size_t h = 0; h < hits.size(); ++h) {
                        CHECK(hits[h].score >= min_score);
                        CHECK(hits[h].subject >= 1000);
                        if (h > 0 && hits[h].score == hits[h - 1].score) CHECK(hits[h].subject > hits[h - 1].subject);
                    }
                }
            }
        }
    }
}

TEST_CASE("search_cpu: any thread count gives the same hits, merged chunks equal one search", "[search]") {
    std::mt19937_64 rng(5);
    const auto m = substitution_matrix::builtin("BLOSUM62");
    const scoring sc{m, {11, 1}, seq_type::protein};
    std::vector<codes> q;
    for (int k = 0; k < 9; ++k) q.push_back(random_codes(rng, 1 + rng() % 300, 20));
    const auto d = random_db(rng, q, 300, 20, 400);
    const auto queries = make_set(q, "q"), db = make_set(d, "s");
    search_options opt;
    opt.max_hits = 7;
    opt.min_score = 25;
    thread_pool one(1);
    const auto single = search_cpu(queries, db, sc, opt, one);
    CHECK(single == reference(queries, db, sc, opt));
    for (const unsigned threads : {2u, 3u, 8u}) {
        thread_pool pool(threads);
        INFO(threads << " threads");
        CHECK(search_cpu(queries, db, sc, opt, pool) == single);
        for (const auto* k : variants()) {
            INFO("kernels " << name_of(k));
            CHECK(interseq::search_cpu_with(k, queries, db, sc, opt, pool) == single);
        }
    }
    // The database in uneven chunks, each searched with its offset, merged.
    thread_pool pool(2);
    hit_lists merged;
    const std::size_t cuts[] = {0, 1, 40, 41, 170, d.size()};
    for (std::size_t c = 0; c + 1 < std::size(cuts); ++c) {
        sequence_set chunk;
        for (std::size_t s = cuts[c]; s < cuts[c + 1]; ++s) chunk.add(db.names[s], db[s]);
        chunk.encoded = true;
        search_options o = opt;
        o.subject_offset = static_cast<std::uint32_t>(cuts[c]);
        merge_hits(merged, search_cpu(queries, chunk, sc, o, pool), opt.max_hits);
    }
    CHECK(merged == single);
}

TEST_CASE("search_cpu: empty sequences, empty sets and unencoded input", "[search]") {
    const auto m = substitution_matrix::builtin("BLOSUM62");
    const scoring sc{m, {11, 1}, seq_type::protein};
    const codes w = repeat("W", 5, m);
    const auto queries = make_set({w, {}, w}, "q");
    const auto db = make_set({{}, w, {}, repeat("W", 3, m)}, "s");
    thread_pool pool(2);
    const hit_lists want{{{55, 1}, {33, 3}}, {}, {{55, 1}, {33, 3}}};
    for (const auto* k : variants()) {
        INFO("kernels " << name_of(k));
        CHECK(interseq::search_cpu_with(k, queries, db, sc, {}, pool) == want);
        CHECK(interseq::search_cpu_with(k, queries, make_set({}, "s"), sc, {}, pool) == hit_lists(3));
        CHECK(interseq::search_cpu_with(k, make_set({}, "q"), db, sc, {}, pool).empty());
    }
    sequence_set letters;
    letters.add("raw", std::string("WWW"));  // letters, not codes
    letters.source = "raw.fa";
    CHECK_THROWS_AS(search_cpu(letters, db, sc, {}, pool), swgpu::error);
    CHECK_THROWS_AS(search_cpu(queries, letters, sc, {}, pool), swgpu::error);
}
