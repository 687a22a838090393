// search_and_finish: the same printed hits as scan_database + finish_hits, whether or not the backend delivers queries
// early (search_options::on_final) and the alignments run during the score pass; protein and DNA on both strands, one
// and several database chunks, with and without E-values and alignments; a failing alignment is an error, not a hang.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/statistics.hpp"
#include "core/align/strand.hpp"
#include "core/thread_pool.hpp"

using namespace swgpu;

namespace {

using records = std::vector<std::pair<std::string, std::string>>;

std::string random_text(std::mt19937_64& rng, std::size_t n, const std::string& alphabet) {
    std::string s(n, ' ');
    for (auto& c : s) c = alphabet[rng() % alphabet.size()];
    return s;
}

std::string name(char prefix, std::size_t k) {
    std::string n(1, prefix);
    n += std::to_string(k);
    return n;
}

// A database of random sequences of spread lengths (1 included), and queries that are mutated pieces of some of them
// (real hits with distinct scores) or unrelated.
std::pair<records, records> make_data(std::uint64_t seed, std::size_t subjects, std::size_t queries,
                                      const std::string& alphabet) {
    std::mt19937_64 rng(seed);
    records db, q;
    for (std::size_t k = 0; k < subjects; ++k)
        db.push_back({name('s', k), random_text(rng, k == 0 ? 1 : 1 + rng() % 400, alphabet)});
    for (std::size_t k = 0; k < queries; ++k) {
        std::string s;
        if (k % 4 == 3) {
            s = random_text(rng, 5 + rng() % 200, alphabet);
        } else {
            const std::string& src = db[1 + rng() % (subjects - 1)].second;
            const std::size_t b = rng() % src.size(), len = std::min<std::size_t>(src.size() - b, 20 + rng() % 300);
            s = src.substr(b, len) + random_text(rng, rng() % 20, alphabet);
            for (auto& c : s)
                if (rng() % 8 == 0) c = alphabet[rng() % alphabet.size()];
        }
        q.push_back({name('q', k), s});
    }
    return {db, q};
}

struct setup {
    scoring sc;
    query_strands queries;
};

setup make_setup(const records& q, scoring sc, bool plus, bool minus) {
    setup s{std::move(sc), {}};
    for (const auto& [n, r] : q) s.queries.plus.add(n, r);
    s.queries.plus.source = "q.fa";
    s.queries.search_plus = plus;
    s.queries.search_minus = minus;
    if (minus) s.queries.minus = reverse_complement(s.queries.plus);
    encode(s.queries.plus, s.sc.matrix);
    if (minus) encode(s.queries.minus, s.sc.matrix);
    return s;
}

// Reads `db` in chunks of `chunk_records` records (0: one chunk); tells its end unless `knows_end` is false.
struct chunked_db final : chunk_source {
    chunked_db(const records& d, std::size_t records_per_chunk, bool tells_end = true)
        : db(d), chunk_records(records_per_chunk), knows_end(tells_end) {}
    const records& db;
    std::size_t chunk_records;
    bool knows_end = true;
    std::size_t read = 0;
    std::function<void()> on_next;  // called at each next()
    bool next(sequence_set& chunk) override {
        if (on_next) on_next();
        if (read >= db.size()) return false;
        chunk.source = "db.fa";
        const std::size_t n = chunk_records ? chunk_records : db.size();
        for (std::size_t k = 0; k < n && read < db.size(); ++k, ++read) chunk.add(db[read].first, db[read].second);
        return true;
    }
    bool exhausted() const override { return knows_end && read >= db.size(); }
};

// search_cpu, which delivers its records early in shuffled ranges (as a GPU backend's batches would) when `early`,
// optionally lying about the score of one hit.
struct test_backend {
    const scoring& sc;
    thread_pool& pool;  // the pool the finishing step uses too: the backend must not use it while it delivers
    bool early = true;
    bool lie = false;
    bool fail_after_delivery = false;  // throws (as a device running out of memory would) after delivering
    std::uint64_t seed = 1;
    std::atomic<int> deliveries{0};
    std::vector<std::vector<score_hit>> operator()(const sequence_set& q, const sequence_set& d, const search_options& o) {
        thread_pool own(2);
        auto hits = search_cpu(q, d, sc, o, own);
        if (lie)
            for (auto& v : hits)
                if (!v.empty()) {
                    v.front().score += 1;
                    break;
                }
        if (early && o.on_final) {
            std::mt19937_64 rng(seed);
            std::vector<std::pair<std::size_t, std::size_t>> ranges;
            for (std::size_t b = 0; b < q.size();) {
                const std::size_t n = std::min<std::size_t>(q.size() - b, 1 + rng() % 17);
                ranges.push_back({b, n});
                b += n;
            }
            std::shuffle(ranges.begin(), ranges.end(), rng);
            ranges.resize(ranges.size() * 3 / 4);  // the rest only through the returned vector
            for (const auto& [b, n] : ranges) {
                std::vector<std::uint32_t> listed(n);
                for (std::size_t k = 0; k < n; ++k) listed[k] = static_cast<std::uint32_t>(b + n - 1 - k);  // any order
                o.on_final(listed, hits);
                ++deliveries;
            }
            if (fail_after_delivery) throw error(exit_code::out_of_memory, "test: out of device memory");
        }
        return hits;
    }
};

struct reference_result {
    database_scan scan;
    std::vector<std::vector<printed_hit>> hits;
};

reference_result reference(const setup& s, const records& db, std::size_t chunk_records, std::size_t max_hits,
                           bool evalues, bool alignments) {
    thread_pool pool(2);
    chunked_db reader{db, chunk_records};
    cpu_search_backend cpu(s.sc, pool);
    reference_result r;
    // With E-values, protein hits are ranked by E-value (DNA's by score: ranking() is null for DNA).
    const std::optional<evalue_calculator> ranking =
        evalues ? std::optional<evalue_calculator>(std::in_place, s.sc, 0, 0) : std::nullopt;
    r.scan = scan_database(s.queries, s.sc, hit_selection(max_hits, ranking ? ranking->ranking() : nullptr), reader, cpu);
    std::optional<evalue_calculator> stats;
    finish_options fo;
    if (evalues) {
        stats.emplace(s.sc, r.scan.residues, r.scan.sequences);
        fo.statistics = &*stats;
    }
    fo.alignments = alignments;
    r.hits = finish_hits(r.scan, s.queries, s.sc, fo, pool);
    return r;
}

void check_same(const search_results& got, const reference_result& want) {
    REQUIRE(got.hits.size() == want.hits.size());
    CHECK(got.scan.hits == want.scan.hits);
    CHECK(got.scan.residues == want.scan.residues);
    CHECK(got.scan.sequences == want.scan.sequences);
    CHECK(got.scan.subjects.size() == want.scan.subjects.size());
    std::size_t printed = 0;
    for (std::size_t q = 0; q < want.hits.size(); ++q) {
        REQUIRE(got.hits[q].size() == want.hits[q].size());
        for (std::size_t k = 0; k < want.hits[q].size(); ++k) {
            const auto& a = got.hits[q][k];
            const auto& b = want.hits[q][k];
            CHECK(a.subject == b.subject);
            CHECK(a.str == b.str);
            CHECK(a.score == b.score);
            CHECK(a.aln == b.aln);
            CHECK(a.stats.columns == b.stats.columns);
            CHECK(a.stats.identities == b.stats.identities);
            CHECK(a.has_statistics == b.has_statistics);
            CHECK(a.evalue == b.evalue);  // the same computation on the same numbers: bit-identical
            CHECK(a.bit_score == b.bit_score);
            // BLAST's order: E-value ascending (below 1e-180, all printed 0.0, by score).
            if (k > 0 && a.has_statistics) {
                const auto& before = got.hits[q][k - 1];
                CHECK((before.evalue <= a.evalue || a.evalue < 1e-180));
                if (before.evalue == a.evalue) CHECK(before.score >= a.score);
            }
            ++printed;
        }
    }
    CHECK(printed > want.hits.size());  // the data has real hits
}

search_results run_overlapped(const setup& s, const records& db, std::size_t chunk_records, std::size_t max_hits,
                              bool evalues, bool alignments, test_backend& backend, thread_pool& pool,
                              bool reader_knows_end = true) {
    chunked_db reader{db, chunk_records, reader_knows_end};
    search_run_options opt;
    opt.max_hits = max_hits;
    opt.evalues = evalues;
    opt.alignments = alignments;
    function_backend device([&](const sequence_set& q, const sequence_set& d, const search_options& o) {
        return backend(q, d, o);
    });
    device.threads_idle = true;  // as a GPU's: the pool finishes queries while it searches
    return search_and_finish(s.queries, s.sc, opt, reader, device, pool);
}

}  // namespace

TEST_CASE("search_and_finish: early delivery and overlapped alignments give finish_hits' results, protein",
          "[finish]") {
    const auto [db, q] = make_data(11, 160, 90, "ACDEFGHIKLMNPQRSTVWY");
    const setup s = make_setup(q, {substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein},
                               true, false);
    thread_pool pool(3);
    for (const std::size_t chunk : {std::size_t(0), std::size_t(45)}) {
        for (const bool evalues : {true, false}) {
            for (const bool alignments : {true, false}) {
                INFO("chunk records " << chunk << ", evalues " << evalues << ", alignments " << alignments);
                const auto want = reference(s, db, chunk, 7, evalues, alignments);
                test_backend backend{s.sc, pool};
                backend.seed = chunk + 2 * evalues + alignments;
                const auto got = run_overlapped(s, db, chunk, 7, evalues, alignments, backend, pool);
                check_same(got, want);
                CHECK(backend.deliveries > 0);
                CHECK(got.queries_finished_during_search > 0);
                CHECK(got.queries_finished_during_search < q.size());
                if (!alignments)
                    for (const auto& hits : got.hits)
                        for (const auto& h : hits) CHECK(h.aln.ops.empty());
            }
        }
    }
}

TEST_CASE("search_and_finish: DNA on both strands, a query is final only when both strands are in", "[finish]") {
    const auto [db, q] = make_data(12, 120, 70, "ACGT");
    const setup s = make_setup(q, {substitution_matrix::match_mismatch(2, -3), gap_costs{5, 2}, seq_type::dna}, true,
                               true);
    thread_pool pool(2);
    for (const std::size_t chunk : {std::size_t(0), std::size_t(50)}) {
        const auto want = reference(s, db, chunk, 5, true, true);
        test_backend backend{s.sc, pool};
        backend.seed = 100 + chunk;
        const auto got = run_overlapped(s, db, chunk, 5, true, true, backend, pool);
        check_same(got, want);
        bool minus = false;
        for (const auto& hits : got.hits)
            for (const auto& h : hits) minus = minus || h.str == strand::minus;
        CHECK(minus);
    }
}

TEST_CASE("search_and_finish: without early delivery, or when the reader cannot tell its end, the same results",
          "[finish]") {
    const auto [db, q] = make_data(13, 100, 40, "ACDEFGHIKLMNPQRSTVWY");
    const setup s = make_setup(q, {substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein},
                               true, false);
    thread_pool pool(2);
    const auto want = reference(s, db, 30, 10, true, true);
    {
        test_backend backend{s.sc, pool};
        backend.early = false;
        const auto got = run_overlapped(s, db, 30, 10, true, true, backend, pool);
        check_same(got, want);
        CHECK(got.queries_finished_during_search == 0);
    }
    {
        test_backend backend{s.sc, pool};
        const auto got = run_overlapped(s, db, 30, 10, true, true, backend, pool, false);
        check_same(got, want);
        CHECK(backend.deliveries == 0);  // on_final is only offered for a chunk known to be the last
    }
}

TEST_CASE("search_and_finish: a score the alignment does not confirm is an error, also during the score pass",
          "[finish]") {
    const auto [db, q] = make_data(14, 80, 60, "ACDEFGHIKLMNPQRSTVWY");
    const setup s = make_setup(q, {substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein},
                               true, false);
    thread_pool pool(2);
    test_backend backend{s.sc, pool};
    backend.lie = true;
    try {
        run_overlapped(s, db, 0, 5, true, true, backend, pool);
        FAIL("a wrong score was printed");
    } catch (const error& e) {
        CHECK(e.code() == exit_code::runtime_failure);
        CHECK_THAT(std::string(e.what()), Catch::Contains("not the best local score"));
    }
}

TEST_CASE("search_and_finish: a backend failing after early deliveries fails the search cleanly", "[finish]") {
    const auto [db, q] = make_data(15, 120, 80, "ACDEFGHIKLMNPQRSTVWY");
    const setup s = make_setup(q, {substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein},
                               true, false);
    thread_pool pool(3);
    test_backend backend{s.sc, pool};
    backend.fail_after_delivery = true;
    try {
        run_overlapped(s, db, 0, 10, true, true, backend, pool);
        FAIL("the backend's failure was lost");
    } catch (const error& e) {
        CHECK(e.code() == exit_code::out_of_memory);
    }
    CHECK(backend.deliveries > 0);
}

TEST_CASE("search_and_finish: a device aligner takes the hits up to its cell limit, the pool the rest", "[finish]") {
    const auto [db, q] = make_data(16, 140, 60, "ACDEFGHIKLMNPQRSTVWY");
    const setup s = make_setup(q, {substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein},
                               true, false);
    thread_pool pool(3);
    const auto want = reference(s, db, 50, 8, true, true);
    // A stand-in for the GPU: aligns every other pair it is given and leaves the others (nullopt) to the pool.
    std::size_t given = 0, largest = 0, left = 0;
    const double limit = 20000;
    search_run_options opt;
    opt.max_hits = 8;
    function_backend device([&](const sequence_set& qs, const sequence_set& d, const search_options& o) {
        return search_cpu(qs, d, s.sc, o, pool);
    });
    device.aligner_cells = limit;
    device.aligner = [&](std::span<const scored_pair> pairs) {
        std::vector<std::optional<alignment>> out(pairs.size());
        for (std::size_t k = 0; k < pairs.size(); ++k) {
            largest = std::max(largest, pairs[k].query.size() * pairs[k].subject.size());
            if (k % 2) ++left;
            else out[k] = sw_align(pairs[k].query, pairs[k].subject, s.sc);
        }
        given += pairs.size();
        return out;
    };
    chunked_db reader{db, 50, false};
    const auto got = search_and_finish(s.queries, s.sc, opt, reader, device, pool);
    check_same(got, want);
    std::size_t printed = 0, small = 0;
    for (std::size_t qi = 0; qi < got.hits.size(); ++qi)
        for (const auto& h : got.hits[qi]) {
            ++printed;
            if (double(s.queries.plus.length(qi)) * double(got.scan.subjects.at(h.subject).residues.size()) <= limit)
                ++small;
        }
    CHECK(given == small);
    CHECK(given > 0);
    CHECK(given < printed);  // some pairs are above the limit: the pool aligned them
    CHECK(left > 0);
    CHECK(double(largest) <= limit);

    // An alignment from the device that does not re-score to the backend's score is an error.
    device.aligner = [&](std::span<const scored_pair> pairs) {
        std::vector<std::optional<alignment>> out(pairs.size());
        for (std::size_t k = 0; k < pairs.size(); ++k) {
            out[k] = sw_align(pairs[k].query, pairs[k].subject, s.sc);
            if (!out[k]->ops.empty() && k == pairs.size() / 2) out[k]->ops.front().op = 'I';
        }
        return out;
    };
    chunked_db again{db, 50, false};
    try {
        search_and_finish(s.queries, s.sc, opt, again, device, pool);
        FAIL("a wrong device alignment was printed");
    } catch (const error& e) {
        CHECK_THAT(std::string(e.what()), Catch::Contains("not the best local score"));
    }
}

namespace {

// What a backend prepares ahead: here only the chunk's identity and the thread that prepared it.
struct recorded_chunk final : prepared_chunk {
    std::thread::id made_on;
};

}  // namespace

TEST_CASE("search_and_finish: each chunk is prepared on the reader thread and handed to its own score pass",
          "[finish]") {
    const auto [db, q] = make_data(14, 130, 30, "ACDEFGHIKLMNPQRSTVWY");
    const setup s = make_setup(q, {substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein},
                               true, false);
    thread_pool pool(2);
    for (const bool overlap : {false, true}) {
        INFO("overlap " << overlap);
        const auto want = reference(s, db, 17, 6, true, true);
        chunked_db reader{db, 17};
        std::atomic<int> prepared{0}, used{0}, read_on_caller{0}, not_encoded{0};  // wrong chunks (no Catch off the caller)
        const auto caller = std::this_thread::get_id();
        search_run_options opt;
        opt.max_hits = 6;
        function_backend device([&](const sequence_set& qs, const sequence_set& d, const search_options& o) {
            const auto* p = dynamic_cast<const recorded_chunk*>(o.prepared);
            // the chunk it was made from (not a stale one), made on another thread
            if (!p || !p->made_from(d) || p->made_on == std::this_thread::get_id()) ++not_encoded;
            ++used;
            return search_cpu(qs, d, s.sc, o, pool);
        });
        device.threads_idle = overlap;
        device.preparer = [&](const sequence_set& chunk) -> std::unique_ptr<prepared_chunk> {
            if (!chunk.encoded) ++not_encoded;
            auto p = std::make_unique<recorded_chunk>();
            p->key = chunk.residues.data();
            p->residues = chunk.total_residues();
            p->sequences = chunk.size();
            p->made_on = std::this_thread::get_id();
            ++prepared;
            return p;
        };
        reader.on_next = [&] {
            if (std::this_thread::get_id() == caller) ++read_on_caller;
        };
        const auto got = search_and_finish(s.queries, s.sc, opt, reader, device, pool);
        check_same(got, want);
        CHECK(not_encoded == 0);
        CHECK(prepared == 8);  // 130 records in chunks of 17
        CHECK(used == 8);
        CHECK(read_on_caller == 0);
        CHECK(got.scan.chunks == 8);
    }
}

TEST_CASE("search_and_finish: an error of the reader thread reaches the caller", "[finish]") {
    const auto [db, q] = make_data(15, 60, 10, "ACDEFGHIKLMNPQRSTVWY");
    const setup s = make_setup(q, {substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein},
                               true, false);
    thread_pool pool(2);
    chunked_db reader{db, 20};
    int calls = 0;
    reader.on_next = [&] {
        if (++calls == 2) throw input_error("db.fa", "a bad record");
    };
    cpu_search_backend cpu(s.sc, pool);
    search_run_options opt;
    CHECK_THROWS_AS(search_and_finish(s.queries, s.sc, opt, reader, cpu, pool), error);
}

TEST_CASE("scans of shares of the chunks, packed, unpacked and merged, are the scan of one process", "[finish]") {
    const auto [db, q] = make_data(16, 150, 25, "ACGT");
    const setup s = make_setup(q, {substitution_matrix::match_mismatch(2, -3), gap_costs{5, 2}, seq_type::dna}, true,
                               true);
    thread_pool pool(2);
    const score_pass pass = [&](const sequence_set& qs, const sequence_set& d, const search_options& o) {
        return search_cpu(qs, d, s.sc, o, pool);
    };
    for (const std::size_t max_hits : {std::size_t(1), std::size_t(6)}) {
        const auto want = reference(s, db, 11, max_hits, true, true);
        for (const std::size_t processes : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(20)}) {
            INFO("max_hits " << max_hits << ", processes " << processes);
            database_scan merged;
            for (std::size_t rank = 0; rank < processes; ++rank) {
                chunked_db reader{db, 11};
                std::size_t searched = 0;
                const score_pass counted = [&](const sequence_set& qs, const sequence_set& d, const search_options& o) {
                    ++searched;
                    return pass(qs, d, o);
                };
                function_backend backend(counted);
                auto part = scan_database(s.queries, s.sc, max_hits, reader, backend, {},
                                          [&](std::size_t chunk) { return chunk % processes == rank; });
                CHECK(part.residues == want.scan.residues);  // every process counts the whole database
                CHECK(part.sequences == want.scan.sequences);
                CHECK(searched == (14 + processes - 1 - rank) / processes);  // 150 records in chunks of 11: 14
                auto copy = unpack_scan(pack_scan(part));
                CHECK(copy.hits == part.hits);
                CHECK(copy.subjects.size() == part.subjects.size());
                if (rank == 0) merged = std::move(copy);
                else merge_scan(merged, std::move(copy), max_hits);
            }
            CHECK(merged.hits == want.scan.hits);
            CHECK(merged.residues == want.scan.residues);
            CHECK(merged.sequences == want.scan.sequences);
            // Every subject a kept hit refers to, as read (one process also keeps those of its per-strand lists).
            for (const auto& list : want.scan.hits)
                for (const auto& h : list) {
                    REQUIRE(merged.subjects.count(h.subject) == 1);
                    CHECK(merged.subjects.at(h.subject).name == want.scan.subjects.at(h.subject).name);
                    CHECK(merged.subjects.at(h.subject).residues == want.scan.subjects.at(h.subject).residues);
                }
            // and the printed hits finished from it
            evalue_calculator stats(s.sc, merged.residues, merged.sequences);
            finish_options fo;
            fo.statistics = &stats;
            const auto printed = finish_hits(merged, s.queries, s.sc, fo, pool);
            REQUIRE(printed.size() == want.hits.size());
            for (std::size_t k = 0; k < printed.size(); ++k) {
                REQUIRE(printed[k].size() == want.hits[k].size());
                for (std::size_t h = 0; h < printed[k].size(); ++h) {
                    CHECK(printed[k][h].aln == want.hits[k][h].aln);
                    CHECK(printed[k][h].evalue == want.hits[k][h].evalue);
                }
            }
        }
    }
}

namespace {

// A source that keeps its chunks encoded across searches and prepares each once per backend (a resident database).
struct kept_db final : chunk_source {
    std::vector<sequence_set> chunks;
    std::vector<std::unique_ptr<prepared_chunk>> prepared;
    std::size_t at = 0;
    int prepares = 0;
    bool exhausted() const override { return at >= chunks.size(); }
    bool next(sequence_set&) override {
        FAIL("next() called on a source that keeps its chunks");
        return false;
    }
    bool keeps_chunks() const override { return true; }
    kept_chunk next_kept(search_backend& backend) override {
        if (at >= chunks.size()) return {};
        const std::size_t k = at++;
        if (!prepared[k]) {
            prepared[k] = backend.prepare(chunks[k]);
            ++prepares;
        }
        return {&chunks[k], prepared[k].get(), 0};
    }
};

}  // namespace

TEST_CASE("search_and_finish: chunks a source keeps are read in place and prepared once across searches",
          "[finish]") {
    const auto [db, q] = make_data(17, 130, 30, "ACDEFGHIKLMNPQRSTVWY");
    const setup s = make_setup(q, {substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein},
                               true, false);
    thread_pool pool(2);
    const auto want = reference(s, db, 17, 6, true, true);
    kept_db source;
    chunked_db reader{db, 17};
    for (sequence_set c; reader.next(c); c = sequence_set{}) {
        encode(c, s.sc.matrix);
        source.chunks.push_back(std::move(c));
    }
    source.prepared.resize(source.chunks.size());
    int used = 0;
    function_backend device([&](const sequence_set& qs, const sequence_set& d, const search_options& o) {
        const auto* p = dynamic_cast<const recorded_chunk*>(o.prepared);
        REQUIRE(p != nullptr);
        CHECK(p->made_from(d));  // the kept chunk itself, not a copy
        ++used;
        return search_cpu(qs, d, s.sc, o, pool);
    });
    device.preparer = [&](const sequence_set& chunk) -> std::unique_ptr<prepared_chunk> {
        auto p = std::make_unique<recorded_chunk>();
        p->key = chunk.residues.data();
        p->residues = chunk.total_residues();
        p->sequences = chunk.size();
        return p;
    };
    search_run_options opt;
    opt.max_hits = 6;
    for (int search = 0; search < 2; ++search) {
        INFO("search " << search);
        source.at = 0;
        const auto got = search_and_finish(s.queries, s.sc, opt, source, device, pool);
        check_same(got, want);
        CHECK(got.scan.chunks == 8);
    }
    CHECK(source.prepares == 8);  // once per chunk, not once per search
    CHECK(used == 16);
}

TEST_CASE("scan progress: the CPU reports the part of a chunk scored, the last chunk known as last", "[finish]") {
    const auto [db, q] = make_data(18, 120, 40, "ACDEFGHIKLMNPQRSTVWY");
    const setup s = make_setup(q, {substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}, seq_type::protein},
                               true, false);
    thread_pool pool(2);
    cpu_search_backend cpu(s.sc, pool);
    chunked_db reader{db, 0};  // one chunk, known to be the last once read
    std::mutex m;
    std::vector<scan_progress> seen;
    const auto scan = scan_database(s.queries, s.sc, 5, reader, cpu, [&](const scan_progress& p) {
        const std::lock_guard<std::mutex> lock(m);
        seen.push_back(p);
    });
    REQUIRE(seen.size() >= 2);  // at least one report inside the chunk, then the chunk's end
    const auto& inside = seen.front();
    CHECK(inside.chunks == 0);
    CHECK(inside.chunk_fraction > 0);
    CHECK(inside.chunk_fraction <= 1);
    CHECK(inside.chunk_residues == scan.residues);
    CHECK(inside.last_chunk);
    const auto& end = seen.back();
    CHECK(end.chunks == 1);
    CHECK(end.residues == scan.residues);
    CHECK(end.chunk_fraction == 0);
    CHECK(end.last_chunk);
    for (std::size_t k = 1; k + 1 < seen.size(); ++k) CHECK(seen[k].chunk_fraction >= seen[k - 1].chunk_fraction);
}
