#include "core/finish.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include "core/error.hpp"
#include "core/strand.hpp"
#include "core/sw_align_fast.hpp"

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

}  // namespace

database_scan scan_database(const query_strands& queries, const scoring& sc, std::size_t max_hits,
                            const chunk_reader& next_chunk, const score_pass& search,
                            const std::function<void(const scan_progress&)>& progress) {
    if (!queries.search_plus && !queries.search_minus) throw usage_error("no strand selected to search");
    if (queries.search_minus && queries.minus.size() != queries.size())
        throw runtime_failure("minus-strand queries do not match the plus-strand queries");
    const searched_set searched(queries);
    database_scan scan;
    std::vector<std::vector<score_hit>> top(searched.set->size());  // per searched record, across chunks
    search_options opt;
    opt.max_hits = max_hits;
    opt.min_score = 1;

    for (;;) {
        sequence_set chunk;
        if (!next_chunk(chunk)) break;
        if (chunk.empty()) continue;
        const std::uint64_t first = scan.sequences;
        if (first + chunk.size() > std::numeric_limits<std::uint32_t>::max())
            throw input_error(chunk.source, "the database holds more than 4,294,967,295 sequences; split it");
        scan.unknown_residues += encode(chunk, sc.matrix);
        opt.subject_offset = static_cast<std::uint32_t>(first);
        merge_hits(top, search(*searched.set, chunk, opt), max_hits);
        scan.residues += chunk.total_residues();
        scan.sequences += chunk.size();
        ++scan.chunks;

        // Keep the subjects the running top hits refer to; forget those no hit refers to any more.
        std::set<std::uint32_t> referenced;
        for (const auto& hits : top)
            for (const auto& h : hits) referenced.insert(h.subject);
        for (auto it = scan.subjects.begin(); it != scan.subjects.end();)
            it = referenced.count(it->first) ? std::next(it) : scan.subjects.erase(it);
        for (auto id : referenced) {
            if (id < first || id >= scan.sequences) continue;
            const std::size_t local = id - first;
            auto seq = chunk[local];
            scan.subjects.emplace(id, subject_record{chunk.names[local], {seq.begin(), seq.end()}});
        }
        if (progress) progress({scan.chunks, scan.residues, scan.sequences});
    }

    // Per query, the two strands' lists merged. Each strand list holds that strand's best max_hits, so the best
    // max_hits of the union are among them.
    scan.hits.assign(queries.size(), {});
    for (std::size_t r = 0; r < top.size(); ++r) {
        auto& out = scan.hits[searched.query(r)];
        for (const auto& h : top[r]) out.push_back({h.score, h.subject, searched.str(r, queries)});
    }
    for (auto& hits : scan.hits) {
        std::sort(hits.begin(), hits.end(), [](const strand_hit& a, const strand_hit& b) { return better(a, b); });
        if (hits.size() > max_hits) hits.resize(max_hits);
    }
    return scan;
}

std::vector<std::vector<printed_hit>> finish_hits(const database_scan& scan, const query_strands& queries,
                                                  const scoring& sc, const finish_options& opt, thread_pool& pool) {
    std::vector<std::vector<printed_hit>> out(queries.size());
    struct job {
        std::size_t query, slot;
    };
    std::vector<job> jobs;
    for (std::size_t q = 0; q < queries.size() && q < scan.hits.size(); ++q) {
        for (const auto& h : scan.hits[q]) {
            printed_hit p;
            p.subject = h.subject;
            p.str = h.str;
            p.score = h.score;
            if (opt.statistics) {
                const auto it = scan.subjects.find(h.subject);
                if (it == scan.subjects.end()) throw runtime_failure("a hit refers to a subject that was not kept");
                p.has_statistics = true;
                p.bit_score = opt.statistics->bit_score(h.score);
                p.evalue = opt.statistics->evalue(h.score, queries.plus.length(q), it->second.residues.size());
                if (!(p.evalue <= opt.max_evalue)) continue;
            }
            out[q].push_back(std::move(p));
            jobs.push_back({q, out[q].size() - 1});
        }
    }

    // Alignments of the printed hits only, from the score the backend found (sw_align_scored: the alignment sw_align
    // gives, without a second full score pass); each job writes its own slot. Jobs go largest first so that the last
    // ones to start are short and the threads finish together.
    const auto cells = [&](const job& j) {
        const auto& p = out[j.query][j.slot];
        const auto it = scan.subjects.find(p.subject);
        const double n = it == scan.subjects.end() ? 0.0 : static_cast<double>(it->second.residues.size());
        return static_cast<double>(queries.plus.length(j.query)) * n;
    };
    std::stable_sort(jobs.begin(), jobs.end(), [&](const job& a, const job& b) { return cells(a) > cells(b); });
    pool.parallel_for(jobs.size(), [&](std::size_t k) {
        auto& p = out[jobs[k].query][jobs[k].slot];
        const auto it = scan.subjects.find(p.subject);
        if (it == scan.subjects.end()) throw runtime_failure("a hit refers to a subject that was not kept");
        const auto query = queries.residues(jobs[k].query, p.str);
        const auto subject = it->second.span();
        auto aln = sw_align_scored(query, subject, sc, p.score, opt.traceback);
        if (!aln || aln->score != p.score || rescore(*aln, query, subject, sc) != p.score)
            throw runtime_failure("query " + queries.plus.names[jobs[k].query] + " against subject " +
                                  it->second.name + ": the score pass reported " + std::to_string(p.score) +
                                  ", which is not the best local score of the pair" +
                                  "; please report this with the input files");
        p.aln = std::move(*aln);
        p.stats = stats_of(p.aln, query, subject, sc.matrix);
    });
    return out;
}

blast_coordinates blast_view(const printed_hit& h, std::size_t query_length) {
    const auto& a = h.aln;
    const auto L = static_cast<std::int64_t>(query_length);
    if (h.str == strand::plus) return {a.query_begin + 1, a.query_end + 1, a.subject_begin + 1, a.subject_end + 1};
    // Minus: reverse-complemented query [b, e] is plus-strand query [L-1-e, L-1-b]; the subject is read backwards.
    return {L - a.query_end, L - a.query_begin, a.subject_end + 1, a.subject_begin + 1};
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

}  // namespace swgpu
