// A chunk spread over several workers (core/align/search/multi_device.hpp): the runs cover the chunk in order and balance residues, and
// the merged hits are exactly one worker's, for any number of workers, with or without preparation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/search/multi_device.hpp"
#include "tests/align/sequence_generators.hpp"

namespace {

using namespace swgpu;

sequence_set random_set(std::mt19937_64& rng, std::size_t n, std::size_t max_length, const scoring& sc,
                        const std::string& prefix) {
    sequence_set s;
    for (std::size_t k = 0; k < n; ++k)
        s.add(prefix + std::to_string(k),
              testing::random_sequence(rng, testing::random_length(rng, max_length), "ACDEFGHIKLMNPQRSTVWY", sc.matrix));
    s.encoded = true;
    return s;
}

// Queries that are relatives of some subjects, so that hits have real scores and ties.
sequence_set related_queries(std::mt19937_64& rng, const sequence_set& db, std::size_t n, const scoring& sc) {
    sequence_set q;
    for (std::size_t k = 0; k < n; ++k) {
        const auto s = db[rng() % db.size()];
        q.add("q" + std::to_string(k),
              testing::mutate(rng, {s.begin(), s.end()}, 0.2, 2, 5, "ACDEFGHIKLMNPQRSTVWY", sc.matrix));
    }
    q.encoded = true;
    return q;
}

struct marked final : prepared_chunk {
    std::size_t worker = 0;
};

}  // namespace

namespace {

using preparer = std::function<std::unique_ptr<prepared_chunk>(const sequence_set&)>;

// A spread over workers made of score passes (and preparers), as the GPUs' are.
spread_backend spread_of(const std::vector<score_pass>& passes, const std::vector<preparer>& preparers = {}) {
    std::vector<std::unique_ptr<search_backend>> workers;
    for (std::size_t k = 0; k < passes.size(); ++k) {
        auto w = std::make_unique<function_backend>(passes[k]);
        if (!preparers.empty()) w->preparer = preparers[k];
        workers.push_back(std::move(w));
    }
    return spread_backend(std::move(workers));
}

}  // namespace

TEST_CASE("spread_runs: consecutive non-empty runs covering the chunk, balanced by residues", "[spread]") {
    std::mt19937_64 rng(5);
    const scoring sc{substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein};
    for (const std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(7), std::size_t(300)}) {
        const sequence_set db = random_set(rng, n, 400, sc, "s");
        std::size_t longest = 0;
        for (std::size_t k = 0; k < db.size(); ++k) longest = std::max(longest, db.length(k));
        for (const std::size_t parts : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(8)}) {
            INFO("subjects " << n << ", parts " << parts);
            const auto runs = spread_runs(db, parts);
            REQUIRE(runs.size() == std::min(parts, n));
            std::size_t next = 0;
            for (const auto& r : runs) {
                CHECK(r.first == next);
                CHECK(r.count > 0);
                next = r.first + r.count;
                const auto residues = db.offsets[r.first + r.count] - db.offsets[r.first];
                if (n >= 8 * parts) CHECK(double(residues) <= double(db.total_residues()) / double(parts) + double(longest));
            }
            CHECK(next == n);
        }
    }
}

TEST_CASE("spread_backend: the hits of 1 to 5 workers are one worker's, byte for byte", "[spread]") {
    std::mt19937_64 rng(6);
    const scoring sc{substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein};
    sequence_set db = random_set(rng, 240, 300, sc, "s");
    // Duplicated subjects give tied scores across runs: the merge must order them by subject index.
    for (std::size_t k = 0; k < 20; ++k) db.add("dup" + std::to_string(k), db[k * 3]);
    const sequence_set queries = related_queries(rng, db, 9, sc);
    thread_pool pool(2);
    for (const std::size_t max_hits : {std::size_t(1), std::size_t(4), std::size_t(500)}) {
        search_options opt;
        opt.max_hits = max_hits;
        opt.subject_offset = 1000;
        const auto want = search_cpu(queries, db, sc, opt, pool);
        for (const std::size_t workers : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(5)}) {
            for (const bool prepared : {false, true}) {
                INFO("max_hits " << max_hits << ", workers " << workers << ", prepared " << prepared);
                std::vector<score_pass> passes;
                std::vector<preparer> preparers;
                std::atomic<int> used_prepared{0}, wrong{0};  // Catch's assertions are not for worker threads
                for (std::size_t w = 0; w < workers; ++w) {
                    passes.push_back([&, w](const sequence_set& q, const sequence_set& d, const search_options& o) {
                        if (o.on_final) ++wrong;
                        if (const auto* m = dynamic_cast<const marked*>(o.prepared)) {
                            if (m->worker != w || !m->made_from(d)) ++wrong;
                            ++used_prepared;
                        }
                        thread_pool own(1);
                        return search_cpu(q, d, sc, o, own);
                    });
                    preparers.push_back([w](const sequence_set& run) -> std::unique_ptr<prepared_chunk> {
                        auto m = std::make_unique<marked>();
                        m->worker = w;
                        m->key = run.residues.data();
                        m->residues = run.total_residues();
                        m->sequences = run.size();
                        return m;
                    });
                }
                spread_backend spread = spread_of(passes, preparers);
                std::unique_ptr<prepared_chunk> ahead;
                search_options o = opt;
                if (prepared) {
                    ahead = spread.prepare(db);
                    o.prepared = ahead.get();
                }
                CHECK(spread.score(queries, db, o) == want);
                CHECK(wrong == 0);
                if (prepared) CHECK(used_prepared == int(workers));
                else if (workers > 1) CHECK(used_prepared == 0);
            }
        }
    }
}

TEST_CASE("spread_backend: early delivery passes a query on once every worker delivered it, on the caller's thread",
          "[spread]") {
    std::mt19937_64 rng(8);
    const scoring sc{substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein};
    const sequence_set db = random_set(rng, 120, 300, sc, "s");
    const sequence_set queries = related_queries(rng, db, 12, sc);
    thread_pool pool(2);
    search_options opt;
    opt.max_hits = 5;
    const auto want = search_cpu(queries, db, sc, opt, pool);
    for (const std::size_t workers : {std::size_t(2), std::size_t(3)}) {
        INFO("workers " << workers);
        // Worker w delivers queries in batches of w + 1, in its own order (reversed for odd w), and leaves the last
        // query of worker 0's order undelivered (the caller takes it from the returned hits).
        std::vector<score_pass> passes;
        for (std::size_t w = 0; w < workers; ++w)
            passes.push_back([&, w](const sequence_set& q, const sequence_set& d, const search_options& o) {
                thread_pool own(1);
                search_options plain = o;
                plain.on_final = nullptr;
                auto hits = search_cpu(q, d, sc, plain, own);
                std::vector<std::uint32_t> order(q.size());
                for (std::uint32_t k = 0; k < order.size(); ++k) order[k] = k;
                if (w % 2) std::reverse(order.begin(), order.end());
                std::vector<std::uint32_t> listed;
                for (const std::uint32_t k : order) {
                    if (k == q.size() - 1) continue;
                    listed.push_back(k);
                    if (listed.size() == w + 1) {
                        std::this_thread::sleep_for(std::chrono::milliseconds(2 * w));
                        o.on_final(listed, hits);
                        listed.clear();
                    }
                }
                if (!listed.empty()) o.on_final(listed, hits);
                return hits;
            });
        spread_backend spread = spread_of(passes);
        const auto caller = std::this_thread::get_id();
        std::vector<int> times(queries.size(), 0);
        search_options o = opt;
        o.on_final = [&](std::span<const std::uint32_t> listed, const std::vector<std::vector<score_hit>>& hits) {
            CHECK(std::this_thread::get_id() == caller);
            for (const std::uint32_t q : listed) {
                ++times[q];
                CHECK(hits[q] == want[q]);
            }
        };
        CHECK(spread.score(queries, db, o) == want);
        for (std::size_t q = 0; q + 1 < queries.size(); ++q) CHECK(times[q] == 1);
        CHECK(times.back() == 0);
    }
}

TEST_CASE("spread_backend: a worker's error reaches the caller after every worker is done", "[spread]") {
    std::mt19937_64 rng(7);
    const scoring sc{substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein};
    const sequence_set db = random_set(rng, 50, 100, sc, "s");
    const sequence_set queries = related_queries(rng, db, 3, sc);
    std::atomic<int> finished{0};
    std::vector<score_pass> passes;
    for (int w = 0; w < 3; ++w)
        passes.push_back([&, w](const sequence_set& q, const sequence_set& d, const search_options& o) {
            if (w == 1) throw error(exit_code::out_of_memory, "test: out of device memory");
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            thread_pool own(1);
            auto hits = search_cpu(q, d, sc, o, own);
            ++finished;
            return hits;
        });
    spread_backend spread = spread_of(passes);
    try {
        (void)spread.score(queries, db, search_options{});
        FAIL("no error");
    } catch (const error& e) {
        CHECK(e.code() == exit_code::out_of_memory);
    }
    CHECK(finished == 2);
}
