#include "core/align/search/batcher.hpp"

#include <algorithm>
#include <cctype>
#include <new>

#include "core/align/search/refinements.hpp"
#include "core/align/strand.hpp"
#include "core/error.hpp"

namespace swgpu {

using clock = std::chrono::steady_clock;

resident_search::resident_search(scoring sc, options o, sequence_set database)
    : sc_(std::move(sc)), type_(o.type), plus_(o.search_plus), minus_(o.search_minus) {
    unknown_ = encode(database, sc_.matrix);
    db_ = std::make_unique<resident_records>(std::move(database), unknown_);
    session_ = std::make_unique<search_session>(std::move(o.session), clock::now());
    session_->compose(sc_);
}

resident_search::~resident_search() = default;

// As `swgpu align` runs one query file: encoded (DNA: the strands asked for), masked, searched, finished; the queries
// as read kept for the output (with DNA's IUPAC letters as read).
batch_outcome resident_search::search(const sequence_set& letters) {
    batch_outcome out;
    query_strands q;
    q.search_plus = plus_;
    q.search_minus = minus_;
    q.plus = letters;
    if (type_ == seq_type::dna) {
        const auto& r = q.plus.residues;
        const bool iupac = std::any_of(r.begin(), r.end(), [](std::uint8_t c) {
            c = static_cast<std::uint8_t>(std::toupper(c));
            return c != 'A' && c != 'C' && c != 'G' && c != 'T';
        });
        if (iupac) {
            out.query_letters = q.plus;
            for (auto& c : out.query_letters->residues) c = static_cast<std::uint8_t>(std::toupper(c));
            out.query_letters->qualities.clear();
        }
    }
    if (q.search_minus) q.minus = reverse_complement(q.plus);
    encode(q.plus, sc_.matrix);
    if (q.search_minus) encode(q.minus, sc_.matrix);
    query_masking masking;
    session_->mask(q, masking, sc_.matrix);
    db_->rewind();
    out.results = session_->search(q, masking, *db_, db_->records().total_residues());
    out.shown = masking.shown(q);
    return out;
}

batch_part part_of(const batch_share& share) {
    const batch_outcome& b = *share.batch;
    batch_part p;
    const query_strands& all = b.shown;
    p.queries.search_plus = all.search_plus;
    p.queries.search_minus = all.search_minus;
    p.queries.plus.source = all.plus.source;
    p.queries.minus.source = all.minus.source;
    p.queries.plus.encoded = all.plus.encoded;
    p.queries.minus.encoded = all.minus.encoded;
    if (b.query_letters) p.query_letters.emplace();
    for (std::size_t q = share.first; q < share.first + share.count; ++q) {
        p.queries.plus.add_record(all.plus, q);
        if (all.search_minus) p.queries.minus.add_record(all.minus, q);
        if (b.query_letters) p.query_letters->add(b.query_letters->names[q], (*b.query_letters)[q]);
        p.hits.push_back(b.results.hits[q]);
    }
    const auto& scanned = b.results.scan.hits;
    if (share.first + share.count <= scanned.size())
        p.searched = std::span<const std::vector<strand_hit>>(scanned).subspan(share.first, share.count);
    return p;
}

search_batcher::search_batcher(options o) : opt_(o) {
    thread_ = std::thread([this] { run(); });
}

search_batcher::~search_batcher() { stop(); }

std::future<batch_share> search_batcher::submit(std::shared_ptr<resident_search> engine, sequence_set queries,
                                                std::shared_ptr<std::atomic<bool>> abandoned) {
    request r;
    r.engine = std::move(engine);
    r.queries = std::move(queries);
    r.abandoned = std::move(abandoned);
    r.arrived = clock::now();
    std::future<batch_share> answer = r.answer.get_future();
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) throw busy("the service is stopping");
        if (queue_.size() >= opt_.max_waiting)
            throw busy("the queue is full (" + std::to_string(queue_.size()) + " requests waiting)");
        queue_.push_back(std::move(r));
    }
    wake_.notify_all();
    return answer;
}

void search_batcher::stop() {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

search_batcher::counters search_batcher::stats() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    counters c = stats_;
    c.waiting = queue_.size();
    return c;
}

// The oldest request waits until `wait` after its arrival for others with its engine (less when enough queries are
// queued, or the batcher stops); then it and every queued request of its engine, in arrival order up to max_queries,
// are searched together.
void search_batcher::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        const auto engine = queue_.front().engine;
        const auto deadline = queue_.front().arrived + opt_.wait;
        const auto queued = [&] {
            std::size_t n = 0;
            for (const auto& r : queue_)
                if (r.engine == engine) n += r.queries.size();
            return n;
        };
        wake_.wait_until(lock, deadline, [&] { return stopping_ || queued() >= opt_.max_queries; });
        std::vector<request> batch;
        std::size_t queries = 0;
        for (auto it = queue_.begin(); it != queue_.end();) {
            if (it->engine == engine && (batch.empty() || queries + it->queries.size() <= opt_.max_queries)) {
                queries += it->queries.size();
                batch.push_back(std::move(*it));
                it = queue_.erase(it);
            } else {
                ++it;
            }
        }
        stats_.searching = true;
        lock.unlock();
        search(batch);
        lock.lock();
        stats_.searching = false;
    }
}

void search_batcher::search(std::vector<request>& batch) {
    std::erase_if(batch, [](request& r) {
        if (!r.abandoned || !r.abandoned->load()) return false;
        r.answer.set_exception(std::make_exception_ptr(busy("abandoned")));
        return true;
    });
    if (batch.empty()) return;
    std::shared_ptr<resident_search> engine = batch.front().engine;
    sequence_set all;
    all.source = "request";
    std::vector<std::size_t> first;
    for (auto& r : batch) {
        first.push_back(all.size());
        for (std::size_t k = 0; k < r.queries.size(); ++k) all.add_record(r.queries, k);
    }
    try {
        auto outcome = std::make_shared<const batch_outcome>(engine->search(all));
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            ++stats_.batches;
            stats_.requests += batch.size();
            stats_.queries += all.size();
        }
        for (std::size_t k = 0; k < batch.size(); ++k)
            batch[k].answer.set_value(batch_share{engine, outcome, first[k], batch[k].queries.size(), batch.size()});
    } catch (...) {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            ++stats_.failed_batches;
        }
        const std::exception_ptr failure = std::current_exception();
        for (auto& r : batch) r.answer.set_exception(failure);
    }
}

}  // namespace swgpu
