#include "core/align/search/subject_windows.hpp"

#include <algorithm>

#include "core/align/placement.hpp"

namespace swgpu {

namespace {

std::uint64_t fnv(std::span<const std::uint8_t> r, std::uint64_t h = 1469598103934665603ull) {
    for (auto c : r) h = (h ^ c) * 1099511628211ull;
    return h;
}

}  // namespace

std::size_t subject_windows::overlap(std::size_t longest_query) const {
    const std::size_t best = longest_query * static_cast<std::size_t>(std::max(1, sc_.matrix.max_score()));
    return longest_query + best / static_cast<std::size_t>(std::max(1, sc_.gaps.extend)) + 2;
}

std::size_t subject_windows::window(std::size_t longest_query) const {
    return std::max<std::size_t>(4096, 8 * overlap(longest_query));
}

subject_windows::key subject_windows::key_of(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                             int score) {
    // The subject by a sample (its first and last 4096 residues and its length): hashing a genome per hit would cost
    // more than the alignment. A sample that collides only sends the alignment to the whole-subject fallback.
    const std::size_t n = subject.size(), k = std::min<std::size_t>(n, 4096);
    const std::uint64_t sample = fnv(subject.subspan(n - k), fnv(subject.first(k)));
    return {fnv(query), sample, n, score};
}

std::vector<std::vector<score_hit>> subject_windows::search(const sequence_set& queries, const sequence_set& db,
                                                            const search_options& opt, const score_pass& inner) {
    std::size_t longest = 0;
    for (std::size_t q = 0; q < queries.size(); ++q) longest = std::max(longest, queries.length(q));
    // The long subjects first (few or none: a resident database of millions of records is searched again and again,
    // so the list of the others is made only when there are some).
    std::vector<std::size_t> cut;
    const std::size_t cut_from = 4 * window(longest);  // windowed(), computed once
    for (std::size_t s = 0; s < db.size(); ++s)
        if (db.length(s) >= cut_from) cut.push_back(s);
    if (cut.empty()) return inner(queries, db, opt);
    std::vector<std::size_t> whole;
    whole.reserve(db.size() - cut.size());
    for (std::size_t s = 0, c = 0; s < db.size(); ++s) {
        if (c < cut.size() && cut[c] == s) ++c;
        else whole.push_back(s);
    }

    std::vector<std::vector<score_hit>> hits(queries.size());
    std::vector<std::size_t> all(queries.size());
    for (std::size_t q = 0; q < queries.size(); ++q) all[q] = q;
    search_subset(queries, all, db, whole, opt, inner, hits);
    search_options sub = opt;
    sub.on_final = nullptr;
    sub.subject_offset = 0;
    sub.rank_by_evalue.reset();  // the best windows by score; the subject's hit is ranked by its whole length below
    const std::size_t V = overlap(longest), W = window(longest);
    for (std::size_t s : cut) {
        // One long subject at a time: its windows as a database, the kept_windows best windows per query.
        const auto residues = db[s];
        sequence_set windows;
        windows.source = db.source;
        windows.encoded = db.encoded;
        std::vector<std::uint64_t> starts;
        for (std::size_t at = 0;; at += W - V) {
            const std::size_t end = std::min(residues.size(), at + W);
            starts.push_back(at);
            windows.add(db.names[s], residues.subspan(at, end - at));
            if (end == residues.size()) break;
        }
        search_options wopt = sub;
        wopt.max_hits = kept_windows;
        const auto found = inner(queries, windows, wopt);
        std::lock_guard<std::mutex> g(lock_);
        for (std::size_t q = 0; q < found.size(); ++q) {
            if (found[q].empty()) continue;
            const int best = found[q].front().score;
            entry e;
            e.window = W;
            e.overlap = V;
            for (const auto& h : found[q]) {
                if (h.score == best) e.starts.push_back(starts[h.subject]);
                e.scored.emplace_back(starts[h.subject], h.score);
            }
            e.complete = e.starts.size() < kept_windows;
            std::sort(e.starts.begin(), e.starts.end());
            kept_[key_of(queries[q], residues, best)] = std::move(e);
            hits[q].push_back(ranked_hit(best, static_cast<std::uint32_t>(s) + opt.subject_offset, queries.length(q),
                                         db.length(s), opt));
        }
    }
    order_hits(hits, opt.max_hits);
    return hits;
}

std::optional<int> subject_windows::best_apart(const scored_pair& p, const alignment& primary, int floor) const {
    entry e;
    {
        std::lock_guard<std::mutex> g(lock_);
        const auto it = kept_.find(key_of(p.query, p.subject, p.score));
        if (it == kept_.end()) return std::nullopt;
        e = it->second;
    }
    std::sort(e.scored.begin(), e.scored.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    const bool whole_query = primary.query_begin == 0 && primary.query_end + 1 == static_cast<std::int64_t>(p.query.size());
    int best = 0;
    for (const auto& [start, score] : e.scored) {
        if (score <= best || score < floor) break;  // best first: no later window can do better
        const std::size_t len = std::min<std::size_t>(e.window, p.subject.size() - start);
        const auto first = static_cast<std::int64_t>(start), last = first + static_cast<std::int64_t>(len) - 1;
        if (whole_query && (last < primary.subject_begin || first > primary.subject_end)) best = score;
        else best = std::max(best, swgpu::best_apart(p.query, p.subject.subspan(start, len), first, primary, sc_));
    }
    return best;
}

std::optional<alignment> subject_windows::align(const scored_pair& p, const traceback_options& opt) const {
    entry e;
    {
        std::lock_guard<std::mutex> g(lock_);
        const auto it = kept_.find(key_of(p.query, p.subject, p.score));
        if (it == kept_.end() || !it->second.complete) return std::nullopt;
        e = it->second;
    }
    // The end cell: the first in row-major order among the windows' end cells.
    std::int64_t qend = -1, send = -1;
    for (const auto start : e.starts) {
        const std::size_t len = std::min<std::size_t>(e.window, p.subject.size() - start);
        const auto a = sw_align_scored(p.query, p.subject.subspan(start, len), sc_, p.score, opt);
        if (!a) return std::nullopt;  // the kept windows do not reach the score: not the pair they were kept for
        const std::int64_t j = a->subject_end + static_cast<std::int64_t>(start);
        if (qend < 0 || a->query_end < qend || (a->query_end == qend && j < send)) qend = a->query_end, send = j;
    }
    if (qend < 0) return std::nullopt;
    // The traceback over [end - 2V, end], where every value on the path is the subject's.
    const std::int64_t from = std::max<std::int64_t>(0, send - 2 * static_cast<std::int64_t>(e.overlap) - 2);
    auto a = sw_align_scored(p.query, p.subject.subspan(static_cast<std::size_t>(from),
                                                        static_cast<std::size_t>(send - from + 1)),
                             sc_, p.score, opt);
    if (!a || a->query_end != qend || a->subject_end + from != send) return std::nullopt;
    a->subject_begin += from;
    a->subject_end += from;
    return a;
}

}  // namespace swgpu
