// Searches of many small requests against one resident database, batched (the service's core: `swgpu serve`).
//
// resident_search is a search session (session.hpp) composed for one scoring, with the database held encoded as
// resident_records (prepared for the backend at the first search: on a GPU, packed and copied once). search_batcher
// queues requests; requests for the same resident_search (equal settings) that arrive within `wait` of the oldest
// waiting one are searched as one pass over the database, at most `max_queries` queries at a time, one batch after
// another on one thread (each batch has the whole backend). Each request's share of a batch is what a search of its
// queries alone gives: every step of a search is per query (the score pass's top hits, E-values from the query's
// length and the whole database's size, masking, composition-based statistics, further alignments, the order of a
// query's hits by E-value, score, subject index and strand), and a batch's queries are the requests' in arrival order.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "core/align/scoring.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/search/session.hpp"
#include "core/align/sequence.hpp"

namespace swgpu {

// One batch's search: its queries as read (what outputs print), and the results.
struct batch_outcome {
    query_strands shown;
    // DNA queries with letters the matrix reads as another (IUPAC codes): their letters as read, upper case (the
    // command line prints them so: results_view::query_letters).
    std::optional<sequence_set> query_letters;
    search_results results;
};

class resident_search {
public:
    struct options {
        search_session::options session;
        bool search_plus = true, search_minus = false;  // DNA: the strands searched
        seq_type type = seq_type::protein;
    };
    // `database` as letters (read by a face), kept encoded (a caller that keeps its letters passes a copy). The session
    // is composed for `sc` here.
    resident_search(scoring sc, options o, sequence_set database);
    ~resident_search();
    resident_search(const resident_search&) = delete;
    resident_search& operator=(const resident_search&) = delete;

    // The queries (letters, not encoded; at least one, none empty) searched: one search at a time.
    batch_outcome search(const sequence_set& queries);
    const scoring& sc() const { return sc_; }
    seq_type type() const { return type_; }
    std::uint64_t unknown_residues() const { return unknown_; }
    const sequence_set& database() const { return db_->records(); }
    const search_session& session() const { return *session_; }

private:
    scoring sc_;
    seq_type type_;
    bool plus_, minus_;
    std::uint64_t unknown_ = 0;
    std::unique_ptr<search_session> session_;
    std::unique_ptr<resident_records> db_;
};

// A request's share of a batch: queries [first, first + count) of it.
struct batch_share {
    std::shared_ptr<resident_search> engine;
    std::shared_ptr<const batch_outcome> batch;
    std::size_t first = 0, count = 0;
    std::size_t batch_requests = 0;  // requests searched in the batch
};

// The share as a search of its queries alone gives it: the queries (as read), their hits and their searched hits.
struct batch_part {
    query_strands queries;
    std::optional<sequence_set> query_letters;
    std::vector<std::vector<printed_hit>> hits;
    std::span<const std::vector<strand_hit>> searched;
};
batch_part part_of(const batch_share& share);

class search_batcher {
public:
    struct options {
        std::chrono::microseconds wait{3000};  // the longest a request waits for others to join its batch
        std::size_t max_queries = 1024;        // queries per batch (a request with more is one batch alone)
        std::size_t max_waiting = 1024;        // requests waiting; more are refused (busy)
    };
    explicit search_batcher(options o);
    ~search_batcher();  // stop()
    search_batcher(const search_batcher&) = delete;
    search_batcher& operator=(const search_batcher&) = delete;

    // Queues `queries` (letters) for `engine`. Throws busy when max_waiting requests wait (or after stop()). Errors of
    // the search (swgpu::error, bad_alloc) arrive through the future. `abandoned`, when set, skips the request if its
    // batch has not started (its caller stopped waiting).
    std::future<batch_share> submit(std::shared_ptr<resident_search> engine, sequence_set queries,
                                     std::shared_ptr<std::atomic<bool>> abandoned = nullptr);
    // Refuses new requests, searches those queued, and ends the thread.
    void stop();

    struct counters {
        std::uint64_t batches = 0, requests = 0, queries = 0, failed_batches = 0;
        std::size_t waiting = 0;  // requests queued now
        bool searching = false;
    };
    counters stats() const;

    // Thrown by submit when the queue is full.
    struct busy : std::runtime_error {
        using std::runtime_error::runtime_error;
    };

private:
    struct request {
        std::shared_ptr<resident_search> engine;
        sequence_set queries;
        std::shared_ptr<std::atomic<bool>> abandoned;
        std::promise<batch_share> answer;
        std::chrono::steady_clock::time_point arrived;
    };
    void run();
    void search(std::vector<request>& batch);

    options opt_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<request> queue_;
    bool stopping_ = false;
    counters stats_;
    std::thread thread_;
};

}  // namespace swgpu
