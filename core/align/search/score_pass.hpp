// The score pass of database search on the CPU: every query against every subject, exact scores, top hits per query.
//
// This is the contract every backend (CPU here, GPU in gpu/gpu.hpp) fulfils: for each query, the `max_hits` best
// subjects in the order of better(): by E-value when the search ranks by E-value (search_options::rank_by_evalue,
// core/align/evalue_rank.hpp), then by score (descending), then subject index (ascending); subjects scoring 0 are
// never hits. End cells and alignments of the hits are computed afterwards, by the same code for every backend, so
// output is identical.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/align/evalue_rank.hpp"
#include "core/align/scoring.hpp"
#include "core/align/sequence.hpp"
#include "core/thread_pool.hpp"

namespace swgpu {

struct score_hit {
    int score = 0;
    std::uint32_t subject = 0;  // index into the database (global index, across chunks)
    double rank = 0;            // evalue_rank() of the hit when ranking by E-value, else 0
    bool operator==(const score_hit&) const = default;
};

// Orders hits: smaller E-value first (when ranked by it), then better score, then smaller subject index.
inline bool better(const score_hit& a, const score_hit& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.score != b.score ? a.score > b.score : a.subject < b.subject;
}

// Work a backend does on a database chunk ahead of its score pass (the GPU backend sorts and packs it), done while the
// previous chunk is searched. `key` is the residue storage of the set it was made from: a backend uses it only when
// asked to search that very set (a subset made from it, say, has other storage and is prepared again).
struct prepared_chunk {
    virtual ~prepared_chunk() = default;
    const std::uint8_t* key = nullptr;
    std::uint64_t residues = 0;
    std::size_t sequences = 0;
    bool made_from(const sequence_set& db) const {
        return key == db.residues.data() && residues == db.total_residues() && sequences == db.size();
    }
};

struct search_options {
    std::size_t max_hits = 500;     // per query
    int min_score = 1;              // hits below this raw score are dropped (from an E-value threshold, say)
    std::uint32_t subject_offset = 0;  // added to subject indices (for a database read in chunks)
    std::size_t device_memory = 0;     // GPU backend: bytes of device memory it may use (0: what is free)
    // Optional early delivery: a backend may call this, from the calling thread and before it returns, once the hits
    // of the listed queries are final; `hits` is indexed by query and holds, for those queries, exactly what the
    // returned vector will hold. Each query is delivered at most once; a backend that never calls it is correct too
    // (the caller then takes every query from the returned vector). It lets a caller work on the first queries' hits
    // (alignments, say) while the backend searches for the others.
    std::function<void(std::span<const std::uint32_t> queries, const std::vector<std::vector<score_hit>>& hits)>
        on_final;
    // Optional: the backend's preparation of the database chunk (see prepared_chunk); ignored unless made from db.
    const prepared_chunk* prepared = nullptr;
    // Hits ordered by E-value with these parameters (core/align/evalue_rank.hpp) rather than by score: a backend gives
    // each hit its rank with ranked_hit().
    std::optional<spouge_shape> rank_by_evalue;
    // Optional: told, from any of the backend's threads (so it must be thread-safe), of the query x subject cells it
    // has just scored; a backend that never calls it is correct too (progress then moves chunk by chunk).
    std::function<void(double cells)> on_cells;
};

// A hit of a query of `query_length` residues against a subject of `subject_length`, ranked as `opt` asks.
inline score_hit ranked_hit(int score, std::uint32_t subject, std::size_t query_length, std::size_t subject_length,
                            const search_options& opt) {
    if (!opt.rank_by_evalue) return {score, subject, 0.0};
    const double m = double(query_length == 0 ? 1 : query_length), n = double(subject_length == 0 ? 1 : subject_length);
    return {score, subject, evalue_rank(*opt.rank_by_evalue, score, m, n)};
}

// One vector per query, each sorted by better() and at most max_hits long. Queries and db must be encoded with the
// scoring's matrix. Multithreaded on `pool`.
std::vector<std::vector<score_hit>> search_cpu(const sequence_set& queries, const sequence_set& db, const scoring& sc,
                                               const search_options& opt, thread_pool& pool);

// Merges the hits of one database chunk into the running top hits of each query (same order and limit).
void merge_hits(std::vector<std::vector<score_hit>>& into, const std::vector<std::vector<score_hit>>& chunk,
                std::size_t max_hits);
// The same for one query.
void merge_query_hits(std::vector<score_hit>& into, const std::vector<score_hit>& chunk, std::size_t max_hits);

}  // namespace swgpu
