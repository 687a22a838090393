#include "core/align/search/multi_device.hpp"

#include <condition_variable>
#include <exception>
#include <future>
#include <mutex>
#include <span>
#include <utility>

#include "core/error.hpp"
#include "core/align/long_pair/long_pair.hpp"

namespace swgpu {

std::vector<subject_run> spread_runs(const sequence_set& db, std::size_t parts) {
    std::vector<subject_run> runs;
    const std::size_t n = db.size();
    if (n == 0 || parts == 0) return runs;
    parts = std::min(parts, n);
    const double total = static_cast<double>(db.total_residues());
    std::size_t first = 0;
    for (std::size_t k = 0; k < parts && first < n; ++k) {
        std::size_t end = n;
        if (k + 1 < parts) {
            // The run ends where the residues before it reach (k + 1) / parts of the total, leaving at least one
            // subject for each later run.
            const double goal = total * double(k + 1) / double(parts);
            end = first + 1;
            while (end < n - (parts - k - 1) && double(db.offsets[end]) < goal) ++end;
        }
        runs.push_back({first, end - first});
        first = end;
    }
    return runs;
}

spread_backend::spread_backend(std::vector<std::unique_ptr<search_backend>> workers) : workers_(std::move(workers)) {
    if (workers_.empty()) throw runtime_failure("internal error: a spread score pass needs a worker");
    for (const auto& w : workers_)
        if (!w) throw runtime_failure("internal error: a spread score pass has an empty worker");
}

namespace {

sequence_set run_set(const sequence_set& db, const subject_run& r) {
    sequence_set s;
    s.source = db.source;
    s.encoded = db.encoded;
    const std::uint64_t b = db.offsets[r.first], e = db.offsets[r.first + r.count];
    s.residues.assign(db.residues.begin() + static_cast<std::ptrdiff_t>(b), db.residues.begin() + static_cast<std::ptrdiff_t>(e));
    s.offsets.reserve(r.count + 1);
    for (std::size_t k = 1; k <= r.count; ++k) s.offsets.push_back(db.offsets[r.first + k] - b);
    s.names.assign(db.names.begin() + static_cast<std::ptrdiff_t>(r.first),
                   db.names.begin() + static_cast<std::ptrdiff_t>(r.first + r.count));
    return s;
}

}  // namespace

std::unique_ptr<prepared_chunk> spread_backend::prepare(const sequence_set& chunk) {
    if (workers_.size() == 1) return workers_[0]->prepare(chunk);
    auto p = std::make_unique<spread_chunk>();
    p->key = chunk.residues.data();
    p->residues = chunk.total_residues();
    p->sequences = chunk.size();
    p->runs = spread_runs(chunk, workers_.size());
    p->sets.resize(p->runs.size());
    p->parts.resize(p->runs.size());
    // The runs are copied out and prepared (packed, copied to their GPUs) at once, a thread each: one reader thread
    // doing them one after the other fell behind GPUs that search a run each.
    std::vector<std::future<void>> preparing;
    for (std::size_t k = 0; k < p->runs.size(); ++k)
        preparing.push_back(std::async(std::launch::async, [this, k, &chunk, &p] {
            p->sets[k] = run_set(chunk, p->runs[k]);
            p->parts[k] = workers_[k]->prepare(p->sets[k]);
        }));
    std::exception_ptr failed;
    for (auto& f : preparing) {
        try {
            f.get();
        } catch (...) {
            if (!failed) failed = std::current_exception();
        }
    }
    if (failed) std::rethrow_exception(failed);
    return p;
}

namespace {

// Early delivery over several workers: a query's hits are final once every worker has delivered its own. The
// workers' deliveries are merged as they come (take(), on their threads) and passed on from the caller's thread
// (pass_on(), until every worker is done).
class merged_deliveries {
public:
    merged_deliveries(std::size_t queries, std::size_t workers, std::size_t max_hits)
        : workers_(workers), max_hits_(max_hits), merged_(queries), delivered_by_(queries, 0) {}

    void take(std::span<const std::uint32_t> listed, const std::vector<std::vector<score_hit>>& hits) {
        const std::lock_guard<std::mutex> lock(m_);
        for (const std::uint32_t q : listed) {
            merge_query_hits(merged_[q], hits[q], max_hits_);
            if (++delivered_by_[q] == workers_) ready_.push_back(q);
        }
        changed_.notify_one();
    }
    void worker_done() {
        const std::lock_guard<std::mutex> lock(m_);
        ++workers_done_;
        changed_.notify_one();
    }
    void pass_on(const decltype(search_options::on_final)& on_final) {
        std::vector<std::vector<score_hit>> delivered(merged_.size());
        std::unique_lock<std::mutex> lock(m_);
        for (;;) {
            changed_.wait(lock, [&] { return !ready_.empty() || workers_done_ == workers_; });
            std::vector<std::uint32_t> now = std::move(ready_);
            ready_.clear();
            for (const std::uint32_t q : now) delivered[q] = merged_[q];
            const bool all_done = workers_done_ == workers_;
            lock.unlock();
            if (!now.empty()) on_final(now, delivered);
            lock.lock();
            if (all_done && ready_.empty()) break;
        }
    }

private:
    const std::size_t workers_, max_hits_;
    std::mutex m_;
    std::condition_variable changed_;
    std::vector<std::vector<score_hit>> merged_;
    std::vector<std::uint32_t> delivered_by_;  // per query, the workers that delivered it
    std::vector<std::uint32_t> ready_;          // final, not yet passed on
    std::size_t workers_done_ = 0;
};

}  // namespace

std::vector<std::vector<score_hit>> spread_backend::score(const sequence_set& queries, const sequence_set& db,
                                                          const search_options& opt) {
    if (workers_.size() == 1) return workers_[0]->score(queries, db, opt);
    const auto* ready = dynamic_cast<const spread_chunk*>(opt.prepared);
    std::unique_ptr<spread_chunk> made;
    if (!ready || !ready->made_from(db)) {
        made = std::make_unique<spread_chunk>();
        made->runs = spread_runs(db, workers_.size());
        for (const auto& r : made->runs) made->sets.push_back(run_set(db, r));
        made->parts.resize(made->runs.size());
        ready = made.get();
    }
    const std::size_t n = ready->runs.size();
    std::unique_ptr<merged_deliveries> early;
    if (opt.on_final) early = std::make_unique<merged_deliveries>(queries.size(), n, opt.max_hits);
    std::vector<std::future<std::vector<std::vector<score_hit>>>> running;
    for (std::size_t k = 0; k < n; ++k) {
        search_options o = opt;
        o.on_final = nullptr;
        if (early)
            o.on_final = [e = early.get()](std::span<const std::uint32_t> listed,
                                           const std::vector<std::vector<score_hit>>& hits) { e->take(listed, hits); };
        o.subject_offset = opt.subject_offset + static_cast<std::uint32_t>(ready->runs[k].first);
        o.prepared = ready->parts[k].get();
        running.push_back(std::async(std::launch::async, [this, k, o, &queries, ready, e = early.get()] {
            struct done_guard {
                merged_deliveries* e;
                ~done_guard() {
                    if (e) e->worker_done();
                }
            } guard{e};
            return workers_[k]->score(queries, ready->sets[k], o);
        }));
    }
    if (early) {
        try {
            early->pass_on(opt.on_final);
        } catch (...) {  // the workers still use the chunk: wait for them, then pass the error on
            for (auto& r : running) r.wait();
            throw;
        }
    }
    // Every worker is waited for before an error is passed on (they use the chunk).
    std::vector<std::vector<score_hit>> hits(queries.size());
    std::exception_ptr failed;
    for (auto& r : running) {
        try {
            merge_hits(hits, r.get(), opt.max_hits);
        } catch (...) {
            if (!failed) failed = std::current_exception();
        }
    }
    if (failed) std::rethrow_exception(failed);
    return hits;
}

std::unique_ptr<long_pair::backend> spread_backend::long_pair_backend(std::span<const std::uint8_t> query,
                                                                      std::span<const std::uint8_t> subject) {
    return workers_[0]->long_pair_backend(query, subject);
}

}  // namespace swgpu
