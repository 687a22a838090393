// core/align/search/batcher: requests searched together are answered as each alone (the service's promise, at the
// session's level; tests/serve/test_serve.py holds the service to `swgpu align`'s bytes).
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/align/search/batcher.hpp"
#include "io/align/matrix_file.hpp"
#include "io/align/sequence_reader.hpp"

namespace {

using namespace swgpu;

// `n` pieces of the database's records (20..100 residues, ~10 % changed; every 4th random), named p0, p1, ...
sequence_set pieces(const sequence_set& db, std::size_t n, std::uint32_t seed) {
    static const char letters[] = "ACDEFGHIKLMNPQRSTVWY";
    std::mt19937 rng(seed);
    sequence_set out;
    for (std::size_t k = 0; k < n; ++k) {
        const auto rec = db[rng() % db.size()];
        const std::size_t len = std::min<std::size_t>(rec.size(), 20 + rng() % 81);
        const std::size_t at = rng() % (rec.size() - len + 1);
        std::string s(rec.begin() + static_cast<std::ptrdiff_t>(at), rec.begin() + static_cast<std::ptrdiff_t>(at + len));
        for (auto& c : s)
            if (k % 4 == 3 || rng() % 10 == 0) c = letters[rng() % 20];
        out.add("p" + std::to_string(k), std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()));
    }
    return out;
}

std::shared_ptr<resident_search> engine(const sequence_set& db, bool rich) {
    resident_search::options o;
    o.session.threads = 2;
    o.session.k = rich ? 5 : 50;
    if (rich) {
        o.session.mask = masking::seg;
        o.session.composition = true;
        o.session.max_hsps = 2;
    }
    return std::make_shared<resident_search>(io::make_scoring({seq_type::protein, rich ? "BLOSUM45" : "", {}, {}, 2, -3, true}),
                                             std::move(o), db);
}

}  // namespace

TEST_CASE("batcher: each request's share of a batch equals a search of its queries alone", "[batcher]") {
    sequence_set all = io::read_all(std::string(SWGPU_SOURCE_DIR) + "/data/demo_db.fa");
    sequence_set db;
    for (std::size_t k = 0; k < 300; ++k) db.add_record(all, k);
    for (const bool rich : {false, true}) {
        INFO((rich ? "SEG, composition-based statistics, 2 alignments a pair, BLOSUM45" : "defaults"));
        const auto batched = engine(db, rich);
        const auto alone = engine(db, rich);
        const sequence_set queries = pieces(db, 60, rich ? 2 : 1);
        // Requests of 1 to 3 queries, submitted from 6 threads at once; a wait long enough that they meet.
        search_batcher batcher({std::chrono::milliseconds(200), 1024, 1024});
        std::vector<sequence_set> requests;
        for (std::size_t k = 0; k < queries.size();) {
            sequence_set r;
            for (std::size_t n = 1 + k % 3; n > 0 && k < queries.size(); --n) r.add_record(queries, k++);
            requests.push_back(std::move(r));
        }
        std::vector<std::future<batch_share>> answers(requests.size());
        std::vector<std::thread> clients;
        for (std::size_t t = 0; t < 6; ++t)
            clients.emplace_back([&, t] {
                for (std::size_t r = t; r < requests.size(); r += 6) answers[r] = batcher.submit(batched, requests[r]);
            });
        for (auto& c : clients) c.join();
        std::size_t largest = 0;
        for (std::size_t r = 0; r < requests.size(); ++r) {
            const batch_share share = answers[r].get();
            largest = std::max(largest, share.batch_requests);
            const batch_part part = part_of(share);
            const batch_outcome own = alone->search(requests[r]);
            REQUIRE(part.queries.plus.names == own.shown.plus.names);
            REQUIRE(part.hits.size() == own.results.hits.size());
            for (std::size_t q = 0; q < part.hits.size(); ++q) {
                INFO(part.queries.plus.names[q]);
                REQUIRE(part.hits[q].size() == own.results.hits[q].size());
                for (std::size_t h = 0; h < part.hits[q].size(); ++h) {
                    const printed_hit &a = part.hits[q][h], &b = own.results.hits[q][h];
                    CHECK(a.subject == b.subject);
                    CHECK(a.score == b.score);
                    CHECK(a.aln == b.aln);
                    CHECK(a.evalue == b.evalue);
                    CHECK(a.bit_score == b.bit_score);
                    CHECK(a.stats.identities == b.stats.identities);
                }
            }
        }
        CHECK(largest > 1);
        const auto c = batcher.stats();
        CHECK(c.requests == requests.size());
        CHECK(c.batches < requests.size());
    }
}

TEST_CASE("batcher: a full queue refuses, an abandoned request is skipped, a stopped batcher refuses", "[batcher]") {
    sequence_set all = io::read_all(std::string(SWGPU_SOURCE_DIR) + "/data/demo_db.fa");
    sequence_set db;
    for (std::size_t k = 0; k < 20; ++k) db.add_record(all, k);
    const auto e = engine(db, false);
    const sequence_set q = pieces(db, 1, 3);
    search_batcher batcher({std::chrono::milliseconds(300), 1024, 2});
    auto gone = std::make_shared<std::atomic<bool>>(true);
    auto skipped = batcher.submit(e, q, gone);
    auto kept = batcher.submit(e, q);
    CHECK_THROWS_AS(batcher.submit(e, q), search_batcher::busy);
    CHECK_THROWS_AS(skipped.get(), search_batcher::busy);
    CHECK(kept.get().count == 1);
    batcher.stop();
    CHECK_THROWS_AS(batcher.submit(e, q), search_batcher::busy);
}
