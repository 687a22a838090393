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
    // Early delivery (opt.on_final): a query's hits are final once every worker has delivered its own; the workers'
    // deliveries are merged as they come (on their threads) and passed on from this thread, the caller's.
    struct early_state {
        std::mutex m;
        std::condition_variable changed;
        std::vector<std::vector<score_hit>> merged;
        std::vector<std::uint32_t> delivered_by;  // per query, the workers that delivered it
        std::vector<std::uint32_t> ready;          // final, not yet passed on
        std::size_t workers_done = 0;
    };
    std::unique_ptr<early_state> early;
    if (opt.on_final) {
        early = std::make_unique<early_state>();
        early->merged.resize(queries.size());
        early->delivered_by.assign(queries.size(), 0);
    }
    std::vector<std::future<std::vector<std::vector<score_hit>>>> running;
    for (std::size_t k = 0; k < n; ++k) {
        search_options o = opt;
        o.on_final = nullptr;
        if (early)
            o.on_final = [e = early.get(), n, max_hits = opt.max_hits](std::span<const std::uint32_t> listed,
                                                                     const std::vector<std::vector<score_hit>>& hits) {
                const std::lock_guard<std::mutex> lock(e->m);
                for (const std::uint32_t q : listed) {
                    merge_query_hits(e->merged[q], hits[q], max_hits);
                    if (++e->delivered_by[q] == n) e->ready.push_back(q);
                }
                e->changed.notify_one();
            };
        o.subject_offset = opt.subject_offset + static_cast<std::uint32_t>(ready->runs[k].first);
        o.prepared = ready->parts[k].get();
        running.push_back(std::async(std::launch::async, [this, k, o, &queries, ready, e = early.get()] {
            struct done_guard {
                early_state* e;
                ~done_guard() {
                    if (!e) return;
                    const std::lock_guard<std::mutex> lock(e->m);
                    ++e->workers_done;
                    e->changed.notify_one();
                }
            } guard{e};
            return workers_[k]->score(queries, ready->sets[k], o);
        }));
    }
    if (early) {
        std::vector<std::vector<score_hit>> delivered(queries.size());
        std::unique_lock<std::mutex> lock(early->m);
        for (;;) {
            early->changed.wait(lock, [&] { return !early->ready.empty() || early->workers_done == n; });
            std::vector<std::uint32_t> now = std::move(early->ready);
            early->ready.clear();
            for (const std::uint32_t q : now) delivered[q] = early->merged[q];
            const bool all_done = early->workers_done == n;
            lock.unlock();
            if (!now.empty()) {
                try {
                    opt.on_final(now, delivered);
                } catch (...) {  // the workers still use the chunk: wait for them, then pass the error on
                    for (auto& r : running) r.wait();
                    throw;
                }
            }
            lock.lock();
            if (all_done && early->ready.empty()) break;
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
