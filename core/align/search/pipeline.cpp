#include "core/align/search/pipeline.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <future>
#include <limits>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/tuning.hpp"
#include "core/align/strand.hpp"
#include "core/align/simd/align_scored.hpp"

namespace swgpu {

namespace {

// The query set handed to the backend: the plus strand, the minus strand, or both (plus records first, then minus).
struct searched_set {
    sequence_set combined;          // only used when both strands are searched
    const sequence_set* set = nullptr;
    std::size_t queries = 0;        // number of queries (plus-strand records)

    explicit searched_set(const query_strands& q) : queries(q.size()) {
        if (q.search_plus && q.search_minus) {
            combined.source = q.plus.source;
            combined.encoded = true;
            combined.residues.reserve(q.plus.residues.size() + q.minus.residues.size());
            for (const auto* s : {&q.plus, &q.minus})
                for (std::size_t k = 0; k < s->size(); ++k) combined.add(s->names[k], (*s)[k]);
            set = &combined;
        } else {
            set = q.search_minus ? &q.minus : &q.plus;
        }
    }
    // Searched record r is query `query(r)` on strand `str(r)`.
    std::size_t query(std::size_t r) const { return r % queries; }
    strand str(std::size_t r, const query_strands& q) const {
        if (q.search_plus && q.search_minus) return r < queries ? strand::plus : strand::minus;
        return q.search_minus ? strand::minus : strand::plus;
    }
};

// The subject a hit refers to, as the finishing step sees it.
struct subject_ref {
    const std::string* name = nullptr;
    std::span<const std::uint8_t> residues;
};

// One printed hit to align: out[query][slot], against `subject`.
struct align_job {
    std::size_t query = 0, slot = 0;
    subject_ref subject;
};

// The printed hits of one query, without alignments: bit scores, E-values from the whole database, the threshold.
// Appends an align_job per printed hit when alignments are asked for.
template <class Resolve>
std::vector<printed_hit> printed_hits_of(std::size_t q, const std::vector<strand_hit>& hits, const query_strands& queries,
                                         const finish_options& opt, const Resolve& resolve, std::vector<align_job>& jobs) {
    std::vector<printed_hit> out;
    for (const auto& h : hits) {
        printed_hit p;
        p.subject = h.subject;
        p.str = h.str;
        p.score = h.score;
        const subject_ref subject = resolve(h.subject);
        if (opt.statistics) {
            p.has_statistics = true;
            p.bit_score = opt.statistics->bit_score(h.score);
            p.evalue = opt.statistics->evalue(h.score, queries.plus.length(q), subject.residues.size());
            if (!(p.evalue <= opt.max_evalue)) continue;
        }
        out.push_back(std::move(p));
        if (opt.alignments) jobs.push_back({q, out.size() - 1, subject});
    }
    return out;
}

// The alignments of printed hits from the score the backend found (sw_align_scored: the alignment sw_align gives,
// without a second full score pass); each job writes its own slot. Jobs go largest first so that the last ones to
// start are short and the threads finish together. With a device aligner, the jobs of at most device_max_cells cells
// go to it (from a thread of their own) while the pool aligns the larger ones; what it leaves is aligned on the pool
// after. Every alignment, wherever it was computed, must re-score to the backend's score.
void align_printed(std::vector<align_job>& jobs, std::vector<std::vector<printed_hit>>& out,
                   const query_strands& queries, const scoring& sc, const finish_options& opt, thread_pool& pool) {
    const auto cells = [&](const align_job& j) {
        return static_cast<double>(queries.plus.length(j.query)) * static_cast<double>(j.subject.residues.size());
    };
    std::stable_sort(jobs.begin(), jobs.end(), [&](const align_job& a, const align_job& b) { return cells(a) > cells(b); });
    const auto pair_of = [&](const align_job& j) {
        const auto& p = out[j.query][j.slot];
        return scored_pair{queries.residues(j.query, p.str), j.subject.residues, p.score};
    };
    // aln: computed elsewhere, or nullopt to compute it here.
    const auto finish_one = [&](const align_job& j, std::optional<alignment> aln) {
        check_cancelled();
        auto& p = out[j.query][j.slot];
        const scored_pair pair = pair_of(j);
        if (!aln && opt.backend) aln = opt.backend->align_here(pair);
        if (!aln) aln = sw_align_scored(pair.query, pair.subject, sc, p.score, opt.traceback);
        if (!aln || aln->score != p.score || rescore(*aln, pair.query, pair.subject, sc) != p.score)
            throw runtime_failure("query " + queries.plus.names[j.query] + " against subject " + *j.subject.name +
                                  ": the score pass reported " + std::to_string(p.score) +
                                  ", which is not the best local score of the pair" +
                                  "; please report this with the input files");
        p.aln = std::move(*aln);
        p.stats = stats_of(p.aln, pair.query, pair.subject, sc.matrix);
    };
    // Long pairs first, one at a time, each with the whole of its backend (jobs are sorted by cells, largest first).
    search_backend* const backend = opt.backend;
    if (backend) {
        const auto is_long = [&](const align_job& j) {
            return backend->is_long_pair(queries.plus.length(j.query), j.subject.residues.size());
        };
        const auto rest = std::stable_partition(jobs.begin(), jobs.end(), is_long);
        for (auto it = jobs.begin(); it != rest; ++it) finish_one(*it, backend->align_long_pair(pair_of(*it)));
        jobs.erase(jobs.begin(), rest);
    }
    std::size_t split = jobs.size();  // jobs[split..] go to the backend's batch aligner
    if (backend && backend->batch_align_cells() > 0)
        split = static_cast<std::size_t>(std::partition_point(jobs.begin(), jobs.end(), [&](const align_job& j) {
                                              return cells(j) > backend->batch_align_cells();
                                          }) - jobs.begin());
    if (split == jobs.size()) {
        pool.parallel_for(jobs.size(), [&](std::size_t k) { finish_one(jobs[k], std::nullopt); });
        return;
    }
    std::vector<scored_pair> pairs;
    for (std::size_t k = split; k < jobs.size(); ++k) pairs.push_back(pair_of(jobs[k]));
    auto device = std::async(std::launch::async, [&] { return backend->align(pairs); });
    try {
        pool.parallel_for(split, [&](std::size_t k) { finish_one(jobs[k], std::nullopt); });
    } catch (...) {
        device.wait();
        throw;
    }
    auto done = device.get();
    if (done.size() != pairs.size()) throw runtime_failure("internal error: the device aligner lost pairs");
    pool.parallel_for(pairs.size(), [&](std::size_t k) { finish_one(jobs[split + k], std::move(done[k])); });
}

// Aligns batches of printed hits on `pool` from a thread of its own, while the thread that posts them goes on (with
// the score pass). close() waits for every batch and rethrows the first failure.
class background_aligner {
public:
    background_aligner(std::vector<std::vector<printed_hit>>& out, const query_strands& queries, const scoring& sc,
                       const finish_options& opt, thread_pool& pool)
        : thread_([this, &out, &queries, &sc, &opt, &pool] {
              for (;;) {
                  std::vector<align_job> jobs;
                  {
                      std::unique_lock lock(m_);
                      ready_.wait(lock, [this] { return closed_ || !queue_.empty(); });
                      if (queue_.empty()) return;
                      jobs = std::move(queue_.front());
                      queue_.pop_front();
                  }
                  if (failed_) continue;  // drain without work after a failure
                  try {
                      align_printed(jobs, out, queries, sc, opt, pool);
                  } catch (...) {
                      std::lock_guard lock(m_);
                      error_ = std::current_exception();
                      failed_ = true;
                  }
              }
          }) {}
    background_aligner(const background_aligner&) = delete;
    background_aligner& operator=(const background_aligner&) = delete;
    ~background_aligner() {  // on an error elsewhere: the batches still queued are dropped
        if (thread_.joinable()) {
            {
                std::lock_guard lock(m_);
                closed_ = true;
                failed_ = true;
            }
            ready_.notify_one();
            thread_.join();
        }
    }

    void post(std::vector<align_job> jobs) {
        if (jobs.empty()) return;
        {
            std::lock_guard lock(m_);
            queue_.push_back(std::move(jobs));
        }
        ready_.notify_one();
    }
    void close() {
        {
            std::lock_guard lock(m_);
            closed_ = true;
        }
        ready_.notify_one();
        thread_.join();
        if (error_) std::rethrow_exception(error_);
    }

private:
    std::mutex m_;
    std::condition_variable ready_;
    std::deque<std::vector<align_job>> queue_;
    bool closed_ = false;
    std::atomic<bool> failed_{false};
    std::exception_ptr error_;
    std::thread thread_;  // last: starts after the members it uses
};

// Finishing queries while the last chunk is searched (search_and_finish with overlap).
struct early_finish {
    const query_strands& queries;
    const scoring& sc;
    const search_run_options& run;
    search_backend& backend;
    thread_pool& pool;
    std::optional<evalue_calculator> statistics;
    finish_options opt;
    std::vector<std::vector<printed_hit>> out;
    std::vector<bool> finished;  // per query
    std::size_t during_search = 0;
    // The aligner's threads: two fewer than the caller's pool, so that the thread driving the backend (and the
    // system) keep a core each while the alignments run beside the search.
    std::optional<thread_pool> aligner_pool;
    std::optional<background_aligner> aligner;

    // The last chunk starts; the database holds `residues` in `sequences` in all.
    void begin(std::uint64_t residues, std::uint64_t sequences) {
        if (run.evalues) statistics.emplace(sc, residues, sequences);
        opt.statistics = statistics ? &*statistics : nullptr;
        opt.max_evalue = run.max_evalue;
        opt.traceback = run.traceback;
        opt.alignments = run.alignments;
        opt.backend = &backend;
        out.assign(queries.size(), {});
        finished.assign(queries.size(), false);
        aligner_pool.emplace(std::max(1u, pool.size() > 2 ? pool.size() - 2 : 1u));
        aligner.emplace(out, queries, sc, opt, *aligner_pool);
    }
    bool started() const { return aligner.has_value(); }
};

// The hits of query q from the running top hits of its searched records: the strands merged in better() order.
std::vector<strand_hit> query_hits(std::size_t q, const std::vector<std::vector<score_hit>>& top,
                                   const searched_set& searched, const query_strands& queries, std::size_t max_hits) {
    std::vector<strand_hit> out;
    for (std::size_t r = q; r < top.size(); r += searched.queries)
        for (const auto& h : top[r]) out.push_back({h.score, h.subject, searched.str(r, queries), h.rank});
    std::sort(out.begin(), out.end(), [](const strand_hit& a, const strand_hit& b) { return better(a, b); });
    if (out.size() > max_hits) out.resize(max_hits);
    return out;
}

// A chunk as the reader thread hands it over: read, encoded, prepared by the backend; with the sizes of the chunks
// before it that another process searches (read and counted only).
struct fetched_chunk {
    bool ok = false;    // false at the end of the database
    bool last = false;  // the reader was exhausted by this chunk
    sequence_set chunk;
    std::uint64_t unknown = 0;
    std::unique_ptr<prepared_chunk> prepared;
    chunk_source::kept_chunk kept;  // a chunk the source keeps (chunk above then empty)
    const sequence_set& records() const { return kept.chunk ? *kept.chunk : chunk; }
    const prepared_chunk* preparation() const { return kept.chunk ? kept.prepared : prepared.get(); }
    std::uint64_t skipped_residues = 0, skipped_sequences = 0;
    std::size_t skipped_chunks = 0;
    double read_s = 0, encode_s = 0, prepare_s = 0;  // the reader thread's time in each step
    std::chrono::steady_clock::time_point began;     // when the reader thread began the chunk
    bool to_prepare = false;  // read for this process, not yet prepared by the backend
};

// The score pass over a database, in named steps: fetch() on the reader thread, then per chunk score() (or
// score_last_early() for the last one when queries are finished during it) and keep_subjects(), then result().
class scanner {
public:
    scanner(const query_strands& queries, const scoring& sc, const hit_selection& selection, chunk_source& source,
            search_backend& backend, const chunk_filter& searched_here)
        : queries_(queries), sc_(sc), max_hits_(selection.max_hits), source_(source), backend_(backend),
          searched_here_(searched_here), searched_(checked(queries)),
          strands_(searched_.set->size() / std::max<std::size_t>(1, searched_.queries)), top_(searched_.set->size()) {
        scan_.began = std::chrono::steady_clock::now();
        opt_.max_hits = max_hits_;
        opt_.min_score = 1;
        opt_.rank_by_evalue = selection.rank_by_evalue;
    }

    database_scan run(const std::function<void(const scan_progress&)>& progress, early_finish* early,
                      std::chrono::steady_clock::time_point* searched_at);

private:
    static const query_strands& checked(const query_strands& queries) {
        if (!queries.search_plus && !queries.search_minus) throw usage_error("no strand selected to search");
        if (queries.search_minus && queries.minus.size() != queries.size())
            throw runtime_failure("minus-strand queries do not match the plus-strand queries");
        return queries;
    }
    fetched_chunk fetch();
    fetched_chunk fetch_kept();
    void prepare(fetched_chunk& f);
    fetched_chunk read_then_prepare(std::future<fetched_chunk> read);
    void score(const sequence_set& chunk);
    void score_last_early(const sequence_set& chunk, std::uint64_t first, early_finish& early);
    void keep_subjects(const sequence_set& chunk, std::uint64_t first);
    double timed(const std::function<void()>& work) {
        const auto t0 = std::chrono::steady_clock::now();
        work();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }

    const query_strands& queries_;
    const scoring& sc_;
    const std::size_t max_hits_;
    chunk_source& source_;
    search_backend& backend_;
    const chunk_filter& searched_here_;
    const searched_set searched_;
    const std::size_t strands_;
    std::vector<std::vector<score_hit>> top_;  // per searched record, across chunks
    search_options opt_;
    database_scan scan_;
    std::size_t fetched_ = 0;  // non-empty chunks read (reader thread)
    // The reader's stages (data/tuning.tsv, search.reader_stages): 2 reads chunk k + 2 while chunk k + 1 is
    // prepared and chunk k scored (three chunks in memory); 1 reads and prepares chunk k + 1 in turn while chunk k is
    // scored (two).
    const bool staged_ = tuning::integer("search.reader_stages") >= 2;
    std::future<fetched_chunk> reading_;  // the read started by read_then_prepare, handed to the next one
    std::chrono::steady_clock::time_point* searched_at_ = nullptr;
    const bool profiled_ = tuning::flag("search.profile");
    // Progress inside a chunk (report_cells): cells scored so far, reports a quarter of a second apart at most, one
    // at a time.
    std::atomic<double> cells_done_{0};
    std::mutex progress_lock_;
    std::chrono::steady_clock::time_point last_report_{};
    void report_cells(const std::function<void(const scan_progress&)>& progress, const sequence_set& chunk, bool last);
};

// Has the backend report the cells it scores (on any of its threads), passed on as the part of `chunk` done.
void scanner::report_cells(const std::function<void(const scan_progress&)>& progress, const sequence_set& chunk,
                           bool last) {
    const double chunk_cells = double(searched_.set->total_residues()) * double(chunk.total_residues());
    opt_.on_cells = nullptr;
    if (!progress || chunk_cells <= 0) return;
    cells_done_ = 0;
    opt_.on_cells = [this, &progress, &chunk, chunk_cells, last](double cells) {
        const double done = cells_done_.fetch_add(cells) + cells;
        const std::unique_lock<std::mutex> lock(progress_lock_, std::try_to_lock);
        if (!lock.owns_lock()) return;
        const auto now = std::chrono::steady_clock::now();
        if (now - last_report_ < std::chrono::milliseconds(250)) return;
        last_report_ = now;
        progress({scan_.chunks, scan_.residues, scan_.sequences, std::min(1.0, done / chunk_cells),
                  chunk.total_residues(), last});
    };
}

// The reader thread's step: the next chunk this process searches, read and encoded (prepare() then has the backend
// prepare it), while the chunks before it are prepared and searched. The source is only ever called from that thread, one call
// at a time. Chunks another process searches are read and counted on the way (neither encoded nor prepared), or
// passed unread where the source can skip: their reading overlaps the search too.
fetched_chunk scanner::fetch() {
    fetched_chunk f;
    f.began = std::chrono::steady_clock::now();
    const auto pass_on = [&](std::uint64_t residues, std::uint64_t sequences) {
        ++fetched_;
        f.skipped_residues += residues;
        f.skipped_sequences += sequences;
        ++f.skipped_chunks;
    };
    if (source_.keeps_chunks()) return fetch_kept();
    for (;;) {
        if (searched_here_ && source_.can_skip() && !searched_here_(fetched_)) {  // passed without reading it
            std::uint64_t residues = 0, sequences = 0;
            f.ok = source_.skip(residues, sequences);
            if (!f.ok) return f;
            pass_on(residues, sequences);
            if (source_.exhausted()) {
                f.ok = false;
                return f;
            }
            continue;
        }
        const bool encoded = source_.encodes_while_reading();  // then read_s includes the encoding
        f.read_s += timed([&] {
            f.ok = encoded ? source_.next_encoded(f.chunk, sc_.matrix, f.unknown) : source_.next(f.chunk);
        });
        if (!f.ok) return f;
        f.last = source_.exhausted();
        if (f.chunk.empty()) {
            if (f.last) return f;
            continue;
        }
        if (!searched_here_ || searched_here_(fetched_)) break;
        pass_on(f.chunk.total_residues(), f.chunk.size());
        f.chunk = sequence_set{};
        f.unknown = 0;  // counted by the process that searches the chunk
        if (f.last) {
            f.ok = false;
            return f;
        }
    }
    ++fetched_;
    if (!f.chunk.encoded) f.encode_s = timed([&] { f.unknown = encode(f.chunk, sc_.matrix); });
    f.to_prepare = true;
    return f;
}

// The backend's preparation of a chunk read for this process (the GPU's packing and copy to the device).
void scanner::prepare(fetched_chunk& f) {
    if (!f.to_prepare) return;
    f.to_prepare = false;
    f.prepare_s = timed([&] { f.prepared = backend_.prepare(f.chunk); });
}

// The preparing stage: waits for its chunk's read, starts the next chunk's read at once (so that reading chunk k + 2
// overlaps preparing chunk k + 1 and scoring chunk k), then prepares. The next read is handed over in reading_, which
// the scan takes only after this call has returned.
fetched_chunk scanner::read_then_prepare(std::future<fetched_chunk> read) {
    fetched_chunk f = read.get();
    if (f.ok && !f.last) reading_ = std::async(std::launch::async, [this] { return fetch(); });
    prepare(f);
    return f;
}

// fetch() from a source that keeps its chunks: the next one this process searches, in place.
fetched_chunk scanner::fetch_kept() {
    fetched_chunk f;
    for (;;) {
        f.kept = source_.next_kept(backend_);
        f.ok = f.kept.chunk != nullptr;
        if (!f.ok) return f;
        f.last = source_.exhausted();
        const sequence_set& chunk = *f.kept.chunk;
        if (!chunk.empty() && (!searched_here_ || searched_here_(fetched_))) break;
        if (!chunk.empty()) {
            ++fetched_;
            f.skipped_residues += chunk.total_residues();
            f.skipped_sequences += chunk.size();
            ++f.skipped_chunks;
        }
        f.kept = {};
        if (f.last) {
            f.ok = false;
            return f;
        }
    }
    ++fetched_;
    f.unknown = f.kept.unknown;
    return f;
}

// A chunk's hits merged into the running top hits.
void scanner::score(const sequence_set& chunk) {
    std::vector<std::vector<score_hit>> hits;
    scan_.backend_s += timed([&] { hits = backend_.score(*searched_.set, chunk, opt_); });
    merge_hits(top_, hits, max_hits_);
    if (searched_at_) *searched_at_ = std::chrono::steady_clock::now();
}

// The last chunk, with queries finished as the backend reports them final: each query's printed hits are posted to
// the background aligner once every strand of it is in. A subject is in this chunk or kept from an earlier one
// (scan_.subjects is not touched until the aligner is done).
void scanner::score_last_early(const sequence_set& chunk, std::uint64_t first, early_finish& early) {
    early.begin(scan_.residues + chunk.total_residues(), scan_.sequences + chunk.size());
    const auto resolve = [&](std::uint32_t id) {
        if (id >= first) {
            const std::size_t local = id - first;
            return subject_ref{&chunk.names[local], chunk[local]};
        }
        const auto it = scan_.subjects.find(id);
        if (it == scan_.subjects.end()) throw runtime_failure("a hit refers to a subject that was not kept");
        return subject_ref{&it->second.name, it->second.span()};
    };
    std::vector<bool> record_done(top_.size(), false);
    std::vector<std::size_t> strands_done(queries_.size(), 0);
    // Takes the chunk's hits of the listed records into the running top hits; finishes the queries whose every strand
    // is in.
    const auto take = [&](std::span<const std::uint32_t> records, const std::vector<std::vector<score_hit>>& hits) {
        std::vector<align_job> jobs;
        for (const std::size_t r : records) {
            if (r >= top_.size() || record_done[r]) continue;
            record_done[r] = true;
            merge_query_hits(top_[r], hits[r], max_hits_);
            const std::size_t q = searched_.query(r);
            if (++strands_done[q] < strands_) continue;
            early.out[q] = printed_hits_of(q, query_hits(q, top_, searched_, queries_, max_hits_), queries_, early.opt,
                                           resolve, jobs);
            early.finished[q] = true;
        }
        early.aligner->post(std::move(jobs));
    };
    search_options last = opt_;
    last.on_final = [&](std::span<const std::uint32_t> records, const std::vector<std::vector<score_hit>>& hits) {
        take(records, hits);
    };
    try {
        std::vector<std::vector<score_hit>> hits;
        scan_.backend_s += timed([&] { hits = backend_.score(*searched_.set, chunk, last); });
        if (searched_at_) *searched_at_ = std::chrono::steady_clock::now();
        early.during_search = static_cast<std::size_t>(std::count(early.finished.begin(), early.finished.end(), true));
        std::vector<std::uint32_t> all(top_.size());
        std::iota(all.begin(), all.end(), 0u);
        take(all, hits);  // the records the backend did not deliver early (all, for some backends)
        early.aligner->close();
    } catch (...) {
        early.aligner.reset();  // stops it while the chunk its jobs point into still exists
        throw;
    }
}

// Keeps the subjects the running top hits refer to (copied out of the chunk); forgets those no hit refers to any more.
void scanner::keep_subjects(const sequence_set& chunk, std::uint64_t first) {
    std::set<std::uint32_t> referenced;
    for (const auto& hits : top_)
        for (const auto& h : hits) referenced.insert(h.subject);
    for (auto it = scan_.subjects.begin(); it != scan_.subjects.end();)
        it = referenced.count(it->first) ? std::next(it) : scan_.subjects.erase(it);
    for (auto id : referenced) {
        if (id < first || id >= scan_.sequences) continue;
        const std::size_t local = id - first;
        auto seq = chunk[local];
        scan_.subjects.emplace(id, subject_record{chunk.names[local], {seq.begin(), seq.end()}, chunk.origin(local)});
    }
}

database_scan scanner::run(const std::function<void(const scan_progress&)>& progress, early_finish* early,
                           std::chrono::steady_clock::time_point* searched_at) {
    searched_at_ = searched_at;  // when the backend's last score pass returned
    // The next chunk, read and prepared: by one stage, or by two (the read of the chunk after it then under way).
    const auto next = [this](std::future<fetched_chunk> read) {
        if (!staged_ || source_.keeps_chunks())
            return std::async(std::launch::async, [this] {
                fetched_chunk f = fetch();
                prepare(f);
                return f;
            });
        return std::async(std::launch::async, [this, r = std::move(read)]() mutable { return read_then_prepare(std::move(r)); });
    };
    std::future<fetched_chunk> ahead =
        next(staged_ && !source_.keeps_chunks() ? std::async(std::launch::async, [this] { return fetch(); })
                                                : std::future<fetched_chunk>{});
    std::future<void> dropped;  // a searched chunk is freed on another thread too
    for (;;) {
        check_cancelled();
        fetched_chunk f;
        const double waited = timed([&] { f = ahead.get(); });
        scan_.reader_wait_s += waited;
        scan_.read_s += f.read_s;
        scan_.encode_s += f.encode_s;
        scan_.prepare_s += f.prepare_s;
        if (scan_.chunks == 0 && scan_.first_chunk_wait_s == 0) scan_.first_chunk_wait_s = waited;
        scan_.residues += f.skipped_residues;
        scan_.sequences += f.skipped_sequences;
        scan_.chunks += f.skipped_chunks;
        if (!f.ok) break;
        if (!f.last) ahead = next(std::move(reading_));
        else ahead = std::async(std::launch::deferred, [] { return fetched_chunk{}; });
        const sequence_set& chunk = f.records();
        if (chunk.empty()) continue;
        const std::uint64_t first = scan_.sequences;
        if (first + chunk.size() > std::numeric_limits<std::uint32_t>::max())
            throw input_error(chunk.source, "the database holds more than 4,294,967,295 sequences; split it");
        scan_.unknown_residues += f.unknown;
        opt_.subject_offset = static_cast<std::uint32_t>(first);
        opt_.prepared = f.preparation();
        report_cells(progress, chunk, f.last);
        if (early && f.last) score_last_early(chunk, first, *early);
        else score(chunk);
        scan_.residues += chunk.total_residues();
        scan_.sequences += chunk.size();
        ++scan_.chunks;
        if (profiled_) {  // SWGPU_TUNE=search.profile=1: the reader's steps of each chunk, on stderr
            const auto ms = [&](std::chrono::steady_clock::time_point t) {
                return std::chrono::duration<double, std::milli>(t - scan_.began).count();
            };
            std::fprintf(stderr, "swgpu: pipeline: chunk %zu (%.1f M residues): reader began at %.1f ms, read %.1f ms "
                         "(%.2f G residues/s), encoded %.1f, prepared %.1f; the scan waited %.1f ms for it; scored by "
                         "%.1f ms\n", scan_.chunks, chunk.total_residues() / 1e6, ms(f.began), f.read_s * 1e3,
                         f.read_s > 0 ? chunk.total_residues() / f.read_s / 1e9 : 0.0, f.encode_s * 1e3,
                         f.prepare_s * 1e3, waited * 1e3, ms(std::chrono::steady_clock::now()));
        }
        scan_.keep_subjects_s += timed([&] { keep_subjects(chunk, first); });
        opt_.on_cells = nullptr;
        if (progress) progress({scan_.chunks, scan_.residues, scan_.sequences, 0, 0, f.last});
        dropped = std::async(std::launch::async, [this, old = std::move(f)]() mutable {
            old.prepared.reset();
            if (!old.kept.chunk) source_.recycle(std::move(old.chunk));
            old = fetched_chunk{};
        });
    }
    // Per query, the two strands' lists merged. Each strand list holds that strand's best max_hits, so the best
    // max_hits of the union are among them.
    scan_.hits.assign(queries_.size(), {});
    for (std::size_t q = 0; q < queries_.size(); ++q)
        scan_.hits[q] = query_hits(q, top_, searched_, queries_, max_hits_);
    return std::move(scan_);
}

}  // namespace

database_scan scan_database(const query_strands& queries, const scoring& sc, const hit_selection& selection,
                            chunk_source& database, search_backend& backend,
                            const std::function<void(const scan_progress&)>& progress,
                            const chunk_filter& searched_here) {
    return scanner(queries, sc, selection, database, backend, searched_here).run(progress, nullptr, nullptr);
}

std::vector<std::vector<printed_hit>> finish_hits(const database_scan& scan, const query_strands& queries,
                                                  const scoring& sc, const finish_options& opt, thread_pool& pool) {
    const auto resolve = [&](std::uint32_t id) {
        const auto it = scan.subjects.find(id);
        if (it == scan.subjects.end()) throw runtime_failure("a hit refers to a subject that was not kept");
        return subject_ref{&it->second.name, it->second.span()};
    };
    std::vector<std::vector<printed_hit>> out(queries.size());
    std::vector<align_job> jobs;
    for (std::size_t q = 0; q < queries.size() && q < scan.hits.size(); ++q)
        out[q] = printed_hits_of(q, scan.hits[q], queries, opt, resolve, jobs);
    align_printed(jobs, out, queries, sc, opt, pool);
    return out;
}

search_results search_and_finish(const query_strands& queries, const scoring& sc, const search_run_options& opt,
                                 chunk_source& database, search_backend& backend, thread_pool& pool,
                                 const std::function<void(const scan_progress&)>& progress) {
    search_results res;
    early_finish early{queries, sc, opt, backend, pool, {}, {}, {}, {}, 0, {}, {}};
    res.score_pass_done = std::chrono::steady_clock::now();
    const bool overlap = backend.leaves_threads_idle() && !opt.combine;
    // Protein hits are ranked by E-value when E-values are on: the order needs only the matrix's parameters, not the
    // database's size (core/align/evalue_rank.hpp).
    const std::optional<evalue_calculator> ranking =
        opt.evalues ? std::optional<evalue_calculator>(std::in_place, sc, 0, 0) : std::nullopt;
    const hit_selection selection(opt.max_hits, ranking ? ranking->ranking() : nullptr);
    const auto started = std::chrono::steady_clock::now();
    res.scan = scanner(queries, sc, selection, database, backend, opt.searched_here)
                   .run(progress, overlap ? &early : nullptr, &res.score_pass_done);
    // SWGPU_TUNE=search.profile=1 (a measurement switch): where the pipeline's time went, on stderr.
    const auto profile = [&, profiled = tuning::flag("search.profile")](const char* finishing) {
        if (!profiled) return;
        const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
        std::fprintf(stderr, "swgpu: pipeline: scan %.1f ms (backend %.1f, keeping subjects %.1f), %s %.1f ms\n",
                     ms(started, res.score_pass_done), res.scan.backend_s * 1e3, res.scan.keep_subjects_s * 1e3,
                     finishing, ms(res.score_pass_done, std::chrono::steady_clock::now()));
    };
    if (opt.combine) {
        auto merged = opt.combine(std::move(res.scan));
        res.score_pass_done = std::chrono::steady_clock::now();
        if (!merged) {
            res.scan = database_scan{};
            res.finished_here = false;
            return res;
        }
        res.scan = std::move(*merged);
    }
    if (early.started()) {
        res.statistics = std::move(early.statistics);
        res.hits = std::move(early.out);
        res.queries_finished_during_search = early.during_search;
        profile("finished during the search, then");
        return res;
    }
    if (opt.evalues) res.statistics.emplace(sc, res.scan.residues, res.scan.sequences);
    finish_options fopt;
    fopt.statistics = res.statistics ? &*res.statistics : nullptr;
    fopt.max_evalue = opt.max_evalue;
    fopt.traceback = opt.traceback;
    fopt.alignments = opt.alignments;
    fopt.backend = &backend;
    res.hits = finish_hits(res.scan, queries, sc, fopt, pool);
    profile("finishing");
    return res;
}

blast_coordinates blast_view(const printed_hit& h, std::size_t query_length) {
    const auto& a = h.aln;
    const auto L = static_cast<std::int64_t>(query_length);
    if (h.str == strand::plus) return {a.query_begin + 1, a.query_end + 1, a.subject_begin + 1, a.subject_end + 1};
    // Minus: reverse-complemented query [b, e] is plus-strand query [L-1-e, L-1-b]; the subject is read backwards.
    return {L - a.query_end, L - a.query_begin, a.subject_end + 1, a.subject_begin + 1};
}

blast_coordinates whole_sequence_view(const printed_hit& h, const query_strands& queries, std::size_t query,
                                      const subject_record& subject) {
    blast_coordinates c = blast_view(h, queries.plus.length(query));
    const auto q = static_cast<std::int64_t>(queries.plus.origin(query).offset);
    const auto s = static_cast<std::int64_t>(subject.origin.offset);
    return {c.qstart + q, c.qend + q, c.sstart + s, c.send + s};
}

std::pair<std::string, std::string> printed_rows(const printed_hit& h, const query_strands& queries, std::size_t query,
                                                 const subject_record& subject, const substitution_matrix& m) {
    auto rows = aligned_rows(h.aln, queries.residues(query, h.str), subject.span(), m);
    if (h.str == strand::minus) {
        rows.first = reverse_complement(rows.first);
        rows.second = reverse_complement(rows.second);
    }
    return rows;
}

std::vector<std::vector<score_hit>> split_score_pass(const sequence_set& queries, const sequence_set& db,
                                                     const search_options& opt, const score_pass& search,
                                                     const long_pair_split& split) {
    // Long subjects, and the shortest query that is long with one of them: queries from that length on are scored
    // as long pairs against every long subject, shorter ones by the search pass.
    std::vector<std::size_t> long_subjects;
    std::size_t threshold = SIZE_MAX;
    std::size_t longest_query = 0, longest_subject = 0;
    for (std::size_t q = 0; q < queries.size(); ++q) longest_query = std::max(longest_query, queries.length(q));
    for (std::size_t s = 0; s < db.size(); ++s) longest_subject = std::max(longest_subject, db.length(s));
    if (!split.long_pair(longest_query, longest_subject)) return search(queries, db, opt);  // monotone: none is long
    for (std::size_t s = 0; s < db.size(); ++s) {
        if (!split.long_pair(longest_query, db.length(s))) continue;
        long_subjects.push_back(s);
        for (std::size_t q = 0; q < queries.size(); ++q)
            if (queries.length(q) < threshold && split.long_pair(queries.length(q), db.length(s)))
                threshold = queries.length(q);
    }
    // No long pair in this chunk: the search pass alone, with early delivery as the caller asked (the list of the
    // short subjects is made only when there are long ones: a resident database is searched again and again).
    if (long_subjects.empty()) return search(queries, db, opt);
    std::vector<std::size_t> short_subjects;
    short_subjects.reserve(db.size() - long_subjects.size());
    for (std::size_t s = 0, l = 0; s < db.size(); ++s) {
        if (l < long_subjects.size() && long_subjects[l] == s) ++l;
        else short_subjects.push_back(s);
    }
    std::vector<std::vector<score_hit>> hits(queries.size());
    std::vector<std::size_t> all_q(queries.size()), short_q, long_q;
    for (std::size_t q = 0; q < queries.size(); ++q) {
        all_q[q] = q;
        (queries.length(q) >= threshold ? long_q : short_q).push_back(q);
    }
    search_subset(queries, all_q, db, short_subjects, opt, search, hits);
    search_subset(queries, short_q, db, long_subjects, opt, search, hits);
    std::vector<std::pair<std::size_t, std::size_t>> long_pairs;
    for (std::size_t s : long_subjects)
        for (std::size_t q : long_q) long_pairs.emplace_back(q, s);
    std::vector<int> long_scores;
    if (split.long_scores) long_scores = split.long_scores(queries, db, long_pairs);
    for (std::size_t k = 0; k < long_pairs.size(); ++k) {
        const auto [q, s] = long_pairs[k];
        const int score = split.long_scores ? long_scores[k] : split.long_score(queries, q, db, s);
        if (score > 0 && score >= opt.min_score)
            hits[q].push_back(ranked_hit(score, static_cast<std::uint32_t>(s) + opt.subject_offset, queries.length(q),
                                         db.length(s), opt));
    }
    order_hits(hits, opt.max_hits);
    return hits;
}

void search_subset(const sequence_set& queries, std::span<const std::size_t> qs, const sequence_set& db,
                   std::span<const std::size_t> ss, const search_options& opt, const score_pass& search,
                   std::vector<std::vector<score_hit>>& hits) {
    if (qs.empty() || ss.empty()) return;
    search_options sub = opt;
    sub.on_final = nullptr;
    sub.subject_offset = 0;
    auto subset = [](const sequence_set& from, std::span<const std::size_t> keep) {
        sequence_set out;
        out.source = from.source;
        out.encoded = from.encoded;
        for (std::size_t k : keep) out.add(from.names[k], from[k]);
        return out;
    };
    const bool all_queries = qs.size() == queries.size(), all_subjects = ss.size() == db.size();
    const sequence_set qset = all_queries ? sequence_set{} : subset(queries, qs);
    const sequence_set sset = all_subjects ? sequence_set{} : subset(db, ss);
    const auto found = search(all_queries ? queries : qset, all_subjects ? db : sset, sub);
    for (std::size_t k = 0; k < found.size(); ++k)
        for (auto h : found[k]) {
            h.subject = static_cast<std::uint32_t>(ss[h.subject]) + opt.subject_offset;
            hits[qs[k]].push_back(h);
        }
}

void order_hits(std::vector<std::vector<score_hit>>& hits, std::size_t max_hits) {
    for (auto& h : hits) {
        std::sort(h.begin(), h.end(), [](const score_hit& a, const score_hit& b) { return better(a, b); });
        if (h.size() > max_hits) h.resize(max_hits);
    }
}

}  // namespace swgpu
