// From a backend's score pass to the hits that are printed (docs/architecture.md).
//
//   scan_database()  reads the database chunk by chunk through a callback, runs a backend's score pass on each chunk,
//                    keeps the best hits of every query across chunks (merge_hits: the same result as one pass over the
//                    whole database), keeps a copy of the subjects those hits refer to, and counts the whole
//                    database's residues and sequences (for E-values) on the way. The database is read once, by a
//                    reader thread that reads, encodes and prepares chunk k + 1 (search_backend::prepare: the GPU's
//                    packing) while chunk k is searched.
//   finish_hits()    orders the hits (better(): E-value asc when ranked by E-value, score desc, subject index asc,
//                    plus strand before minus), computes bit scores and E-values from the whole database's size, drops hits above the E-value threshold, then computes
//                    the alignment of every remaining hit (end cell + traceback, core/align/smith_waterman.hpp) and checks
//                    that it re-scores to the backend's score.
//
// Strands. A DNA query searched on the minus strand is its reverse complement aligned against the subject as given.
// A printed_hit keeps that alignment (the orientation SAM reports, flag 16); blast_view() and printed_rows() turn it
// into BLAST's view (query on the plus strand, subject coordinates descending: sstart > send).
//
// -k (max_hits) counts hits: the k best (score, subject, strand) hits of a query are kept before the E-value
// threshold is applied, and a subject may be reported once per strand. With E-values on, protein hits are ranked and
// kept by E-value (core/align/evalue_rank.hpp: a short subject's hit may beat a long subject's hit of a higher
// score), as BLAST does; DNA E-values fall as the score rises, so the orders agree there.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/align/alignment.hpp"
#include "core/align/scoring.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/search/search_backend.hpp"
#include "core/align/sequence.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/statistics.hpp"
#include "core/align/simd/align_scored.hpp"
#include "core/thread_pool.hpp"

namespace swgpu {

enum class strand : std::uint8_t { plus, minus };

// The queries as searched. `plus` always holds every query (it names and numbers them); `minus` holds their reverse
// complements, in the same order, when the minus strand is searched. Both encoded with the scoring's matrix.
struct query_strands {
    sequence_set plus;
    sequence_set minus;
    bool search_plus = true;
    bool search_minus = false;
    std::size_t size() const { return plus.size(); }
    // The searched strand of query q: what alignments of that strand refer to.
    std::span<const std::uint8_t> residues(std::size_t q, strand s) const {
        return s == strand::plus ? plus[q] : minus[q];
    }
};

struct strand_hit {
    int score = 0;
    std::uint32_t subject = 0;  // global index in the database
    strand str = strand::plus;
    double rank = 0;            // as score_hit's: evalue_rank() when ranked by E-value, else 0
    bool operator==(const strand_hit&) const = default;
};

// The deterministic order of docs/conventions.md: E-value asc (when ranked by it), score desc, subject index asc;
// then the plus strand first.
inline bool better(const strand_hit& a, const strand_hit& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.score != b.score) return a.score > b.score;
    if (a.subject != b.subject) return a.subject < b.subject;
    return a.str < b.str;
}

// A database record that a kept hit refers to (encoded residues).
struct subject_record {
    std::string name;
    std::vector<std::uint8_t> residues;
    record_origin origin;  // the header line, and where a region lies in its whole sequence (output only)
    std::span<const std::uint8_t> span() const { return residues; }
};

struct database_scan {
    std::vector<std::vector<strand_hit>> hits;          // per query, ordered by better(), at most max_hits
    std::map<std::uint32_t, subject_record> subjects;   // every subject that some hit in `hits` refers to
    std::uint64_t residues = 0;                         // the whole database
    std::uint64_t sequences = 0;
    std::uint64_t unknown_residues = 0;                 // database letters not in the matrix (read as X or N)
    std::size_t chunks = 0;
    double reader_wait_s = 0;  // time the score pass waited for chunks to be read, encoded and prepared
    double backend_s = 0;      // time in the backend's score pass calls
    // Where the rest of this process's score pass went (-v; not merged across processes): the wait for the first
    // chunk (part of reader_wait_s), keeping the subjects of the running top hits, and when the scan began.
    double first_chunk_wait_s = 0;
    double keep_subjects_s = 0;
    // The reader thread's time: reading chunks from the source, encoding them, preparing them for the backend.
    double read_s = 0, encode_s = 0, prepare_s = 0;
    std::chrono::steady_clock::time_point began{};
};

// The database of a search as the pipeline reads it: chunks of records, as letters (io::database_stream reads files).
class chunk_source {
public:
    virtual ~chunk_source() = default;
    // Appends the next records to an empty set; false at the end of the database.
    virtual bool next(sequence_set& chunk) = 0;
    // The next chunk encoded with `m` (encode()), `unknown` its letters not in m; false at the end. By default next(),
    // then encode(); a source that copies residues out of a file (a .swdb) encodes them in the same pass, and says so
    // here (the pipeline then times the two as one step).
    virtual bool encodes_while_reading() const { return false; }
    virtual bool next_encoded(sequence_set& chunk, const substitution_matrix& m, std::uint64_t& unknown) {
        if (!next(chunk)) return false;
        unknown = encode(chunk, m);
        return true;
    }
    // True once the source is known to hold no more chunks (false: it cannot tell before next() says so). The
    // pipeline calls it right after next(): a chunk known to be the last lets it finish queries during its search.
    virtual bool exhausted() const { return false; }
    // Moves past the next chunk without reading its records, giving its residues and sequences; false at the end.
    // Only where can_skip() (a .swdb's chunk table): a process then passes the chunks other processes search at no cost.
    virtual bool can_skip() const { return false; }
    virtual bool skip(std::uint64_t& residues, std::uint64_t& sequences) {
        (void)residues, (void)sequences;
        return false;
    }

    // A searched chunk handed back, from another thread than next()'s: a source may keep its storage for a later
    // chunk (its pages already in memory: a fresh chunk of 10^8 residues costs as many page faults on the reader
    // thread as copying it).
    virtual void recycle(sequence_set&& spent) { (void)spent; }

    // A source that keeps its chunks encoded across searches (a resident database: app/swgpu/swgpu.hpp's `database`) hands
    // them in place instead (keeps_chunks(); next() is then not called): the pipeline neither copies nor encodes them,
    // and takes their preparation for `backend` from the source, which makes it once (backend.prepare) and keeps it,
    // on the GPU, for the next searches. A kept chunk with a null `chunk` ends the database.
    struct kept_chunk {
        const sequence_set* chunk = nullptr;      // encoded; lives as long as the source
        const prepared_chunk* prepared = nullptr;  // may be null
        std::uint64_t unknown = 0;                 // letters read as X or N when it was encoded
    };
    virtual bool keeps_chunks() const { return false; }
    virtual kept_chunk next_kept(search_backend& backend) {
        (void)backend;
        return {};
    }
};

// A chunk_source of functions (for tests, and callers holding their records in memory).
using chunk_reader = std::function<bool(sequence_set& chunk)>;
class function_chunks final : public chunk_source {
public:
    explicit function_chunks(chunk_reader next, std::function<bool()> exhausted = {})
        : next_(std::move(next)), exhausted_(std::move(exhausted)) {}
    bool next(sequence_set& chunk) override { return next_(chunk); }
    bool exhausted() const override { return exhausted_ && exhausted_(); }

private:
    chunk_reader next_;
    std::function<bool()> exhausted_;
};

// A score pass with the contract of search_cpu (core/align/search/score_pass.hpp): the shape in which the decorators
// of search_backend.hpp hand their inner backend's pass to the functions below that cut a chunk.
using score_pass = std::function<std::vector<std::vector<score_hit>>(const sequence_set& queries, const sequence_set& db,
                                                                     const search_options& opt)>;
// How far a scan has come: the chunks, residues and sequences done, and the part of the chunk being scored (from the
// backend's on_cells; the CPU reports it), its residues, and whether it is known to be the database's last.
struct scan_progress {
    std::size_t chunks = 0;
    std::uint64_t residues = 0, sequences = 0;
    double chunk_fraction = 0;
    std::uint64_t chunk_residues = 0;
    bool last_chunk = false;
};

// Which chunks this process searches (chunk index from 0, empty chunks not counted); the others are read and counted
// (residues, sequences: the whole database's size, for E-values) but neither encoded nor searched (their unknown
// residues are counted by the process that searches them). Several processes that each
// search their share and merge their scans (merge_scan) give the scan of one process.
using chunk_filter = std::function<bool(std::size_t chunk)>;

// Which hits of each query a scan keeps: the max_hits best in the order of better(), ranked by E-value with
// rank_by_evalue's parameters when it is set (evalue_calculator::ranking()), by score otherwise.
struct hit_selection {
    std::size_t max_hits = 500;
    std::optional<spouge_shape> rank_by_evalue;
    hit_selection(std::size_t k = 500, const spouge_shape* ranking = nullptr) : max_hits(k) {
        if (ranking) rank_by_evalue = *ranking;
    }
};

// The database's chunks scored by `backend`, each prepared by it on a reader thread while the chunk before is scored.
database_scan scan_database(const query_strands& queries, const scoring& sc, const hit_selection& selection,
                            chunk_source& database, search_backend& backend,
                            const std::function<void(const scan_progress&)>& progress = {},
                            const chunk_filter& searched_here = {});

// A scan as bytes and back, to send it to another process (same build, same byte order).
std::string pack_scan(const database_scan& scan);
database_scan unpack_scan(std::string_view bytes);
// Merges the scan of other chunks of the same database (another process's share) into `into`: per query the best
// max_hits of both (better()), the subjects they refer to. The database's size is taken as it is (every process
// counts every chunk).
void merge_scan(database_scan& into, database_scan&& other, std::size_t max_hits);

struct printed_hit {
    std::uint32_t subject = 0;
    strand str = strand::plus;
    int score = 0;
    alignment aln;          // the searched strand of the query (reverse complement for minus) against the subject
    alignment_stats stats;  // identities, positives, gaps, ... of `aln` (strand-independent)
    bool has_statistics = false;
    double bit_score = 0, evalue = 0;  // meaningful when has_statistics
    // The best score of an alignment of the same pair that shares no aligned pair with this one (another placement of
    // a read on the same subject and strand, for MAPQ); -1: not computed.
    int apart = -1;
};

// Pairs from this many cells on are long pairs (see search_session's --mode auto and split_score_pass).
inline constexpr double default_long_pair_cells = double(1 << 27);

struct finish_options {
    const evalue_calculator* statistics = nullptr;  // null: no E-values and no E-value threshold (--no-evalue)
    double max_evalue = 10;                         // hits with a larger E-value are dropped (BLAST keeps E <= max)
    traceback_options traceback;
    // false: the printed hits carry score, E-value and bit score only (aln and stats empty), for output that prints
    // no alignment column; no traceback runs.
    bool alignments = true;
    // Where alignments are computed besides `pool` (null: on the pool alone). Long pairs (is_long_pair) first, one
    // at a time with the whole backend (align_long_pair); then the pairs of at most batch_align_cells() cells go to
    // its align() (a GPU) while the pool aligns the larger ones (a CPU thread finishes one large pair sooner than one
    // warp does); the pool tries align_here() first (windows).
    search_backend* backend = nullptr;
};

// Per query (in input order), the printed hits in the order of better(). Throws runtime_failure when an alignment does
// not re-score to its backend's score (a backend bug must never print a wrong alignment).
std::vector<std::vector<printed_hit>> finish_hits(const database_scan& scan, const query_strands& queries,
                                                  const scoring& sc, const finish_options& opt, thread_pool& pool);

// The whole of a search: scan_database, then finish_hits, with the same results; E-values from the whole database's
// size. When the backend leaves the CPU threads idle while it searches (leaves_threads_idle) and reports hits early
// through search_options::on_final, the alignments of queries whose hits are final are computed on `pool` while it
// searches for the others: that happens in the database's last chunk, known to be last when the source says so.
struct search_run_options {
    std::size_t max_hits = 500;
    bool evalues = true;        // false: no E-values and no threshold (--no-evalue)
    double max_evalue = 10;
    bool alignments = true;     // see finish_options
    traceback_options traceback;
    // Several processes (MPI): this one searches the chunks searched_here accepts (passing the others unread where
    // the source can skip); combine then receives its scan and returns the merged scan of every process on the one
    // that finishes and prints, nullopt on the others (which then finish nothing). No early finishing then.
    chunk_filter searched_here;
    std::function<std::optional<database_scan>(database_scan&&)> combine;
};
struct search_results {
    database_scan scan;
    std::optional<evalue_calculator> statistics;       // when E-values were asked for
    std::vector<std::vector<printed_hit>> hits;        // per query, as finish_hits gives them
    std::size_t queries_finished_during_search = 0;    // aligned while the backend was still searching
    std::chrono::steady_clock::time_point score_pass_done;  // when the backend's last search returned
    std::chrono::steady_clock::time_point finished;  // when the hits were finished, before the steps after them
    bool finished_here = true;  // false on the processes that left finishing to another one (combine)
};
search_results search_and_finish(const query_strands& queries, const scoring& sc, const search_run_options& opt,
                                 chunk_source& database, search_backend& backend, thread_pool& pool,
                                 const std::function<void(const scan_progress&)>& progress = {});

// Which pairs of a score pass are long pairs, scored one at a time by `long_score` (a whole-device or all-thread
// computation) instead of by the database-search pass. `long_pair(query length, subject length)` decides; it must
// grow with both lengths (a pair that is long stays long when either sequence is longer).
struct long_pair_split {
    // Monotone: a pair that is long stays long when either side grows (so a chunk whose longest subject is not long
    // with the longest query holds no long pair, found without asking about every subject).
    std::function<bool(std::size_t query_length, std::size_t subject_length)> long_pair;
    // The best local score of queries[q] against db[s].
    std::function<int(const sequence_set& queries, std::size_t q, const sequence_set& db, std::size_t s)> long_score;
    // Optional: the best local scores of several pairs (q, s) at once; long_score is then not used.
    std::function<std::vector<int>(const sequence_set& queries, const sequence_set& db,
                                   std::span<const std::pair<std::size_t, std::size_t>> pairs)>
        long_scores;
};
// The score pass `search` with long pairs taken out: subjects that are long with some query are searched only with the
// queries shorter than every query that is long with one of them; the pairs left are given to long_score. The result
// is the one `search` alone would give (exact scores either way). Early delivery (on_final) is passed on only when the
// chunk holds no long pair.
std::vector<std::vector<score_hit>> split_score_pass(const sequence_set& queries, const sequence_set& db,
                                                     const search_options& opt, const score_pass& search,
                                                     const long_pair_split& split);

// The score pass `search` over queries[qs] against db[ss] (qs and ss index the sets; sets are copied only when they
// are a proper subset), each hit appended to hits[q] with its subject as an index into db plus opt.subject_offset.
// Early delivery is not used. For score passes that split a chunk (split_score_pass, subject_windows).
void search_subset(const sequence_set& queries, std::span<const std::size_t> qs, const sequence_set& db,
                   std::span<const std::size_t> ss, const search_options& opt, const score_pass& search,
                   std::vector<std::vector<score_hit>>& hits);
// Each query's hits in the order of better(), at most max_hits.
void order_hits(std::vector<std::vector<score_hit>>& hits, std::size_t max_hits);

// 1-based inclusive coordinates as BLAST prints them: the query on the plus strand (qstart <= qend); for a minus-strand
// hit the subject runs backwards (sstart > send).
struct blast_coordinates {
    std::int64_t qstart = 0, qend = 0, sstart = 0, send = 0;
};
blast_coordinates blast_view(const printed_hit& h, std::size_t query_length);
// blast_view in the coordinates of the whole sequences: a query or subject that is a region of a longer sequence
// (record_origin) has the residues before the region added, as BLAST's -query_loc and -subject_loc print them.
blast_coordinates whole_sequence_view(const printed_hit& h, const query_strands& queries, std::size_t query,
                                      const subject_record& subject);

// The aligned rows with '-' for gaps as BLAST prints them (qseq, sseq): for a minus-strand hit both rows of the
// searched alignment reverse-complemented, so the query reads on its plus strand and the subject on its minus strand.
std::pair<std::string, std::string> printed_rows(const printed_hit& h, const query_strands& queries, std::size_t query,
                                                 const subject_record& subject, const substitution_matrix& m);

}  // namespace swgpu
