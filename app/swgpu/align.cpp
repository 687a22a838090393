// The library face's alignment calls (app/swgpu/align.hpp) over the same machinery as the command line: sequences
// typed by the same rule, the same scoring, the search and the steps after it run by core's search session
// (core/align/search/session.hpp).
#include "app/swgpu/align.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <mutex>
#include <tuple>

#include "app/swgpu/face.hpp"
#include "core/align/search/batcher.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/search/session.hpp"
#include "core/align/search/settings_check.hpp"
#include "core/align/sequence.hpp"
#include "core/cancel.hpp"
#include "core/tuning.hpp"
#include "gpu/align/gpu_search.hpp"
#include "gpu/gpu.hpp"
#include "io/align/database_file.hpp"
#include "io/align/database_stream.hpp"
#include "io/align/matrix_file.hpp"
#include "io/align/output.hpp"
#include "io/align/sequence_reader.hpp"

namespace swgpu {

namespace {

// Sequences handed in by a program, by the reader's rules (io::add_given_record).
sequence_set to_set(const std::vector<sequence>& records, const std::string& what) {
    sequence_set set;
    set.source = what;
    for (std::size_t k = 0; k < records.size(); ++k) io::add_given_record(set, k, records[k].name, records[k].residues);
    if (set.empty()) throw input_error(what, "no sequences given");
    return set;
}

seq_type typed(const sequence_set& set, sequence_type t) {
    if (t == sequence_type::dna) return seq_type::dna;
    if (t == sequence_type::protein) return seq_type::protein;
    return classify(set);
}

// The values core's checks read (core/align/search/settings_check.hpp), as the settings hold them: -1 leaves gap
// costs to the matrix and alignments uncut.
search_values values_of(const search_settings& s) {
    search_values v;
    v.max_target_seqs = static_cast<std::int64_t>(std::min<std::size_t>(s.max_target_seqs, INT64_MAX));
    v.evalue = s.evalue;
    v.evalues = s.evalues;
    v.gpus = s.gpus;
    if (s.gap_open != -1) v.gap_open = s.gap_open;
    if (s.gap_extend != -1) v.gap_extend = s.gap_extend;
    v.comp_based_stats = s.comp_based_stats;
    v.max_hsps = s.max_hsps;
    if (s.zdrop != -1) v.zdrop = s.zdrop;
    v.seg = s.seg;
    v.dust = s.dust;
    return v;
}

void check(const search_settings& s) {
    check_search_limits(values_of(s), settings_face::library);
    check_scoring_settings(values_of(s), settings_face::library);
    // What the command line's parser checks.
    if (s.threads < 0 || s.threads > 4096) throw usage_error("threads must lie within 0..4096");
    if (s.comp_based_stats != 0 && s.comp_based_stats != 1)
        throw usage_error("comp_based_stats must be 0 or 1 (got " + std::to_string(s.comp_based_stats) + ")");
    if (s.seg && s.dust) throw usage_error("seg masks protein and dust masks DNA; set one of them");
}

}  // namespace

bool gpu_available() { return gpu::available(); }

namespace {

using detail::wants_gpu;

// A scoring and a search session composed for it over `db` (letters, kept encoded): what one type of sequences needs
// to be searched (core/align/search/batcher.hpp).
std::unique_ptr<resident_search> make_engine(const search_settings& s, seq_type type, sequence_set db) {
    check(s);
    check_settings_for_type(values_of(s), type, settings_face::library);
    io::scoring_request r;
    r.type = type;
    r.matrix = s.matrix;
    if (s.gap_open >= 0) r.gap_open = s.gap_open;
    if (s.gap_extend >= 0) r.gap_extend = s.gap_extend;
    r.match = s.match;
    r.mismatch = s.mismatch;
    r.evalues = s.evalues;
    scoring sc = io::make_scoring(r);
    resident_search::options o;
    o.session = search_session::options_of(values_of(s));
    if (wants_gpu(s.where))
        o.session.devices = std::make_unique<gpu::gpu_search>(gpu::gpu_search::of(s.gpus, s.gpu_memory, true),
                                                              std::chrono::steady_clock::now());
    o.session.threads = s.threads;
    o.session.mode = s.mode == pair_mode::search     ? search_session::pair_mode::search
                     : s.mode == pair_mode::pairwise ? search_session::pair_mode::pairwise
                                                     : search_session::pair_mode::automatic;
    o.type = type;
    o.search_plus = type == seq_type::protein || s.strand != strands::minus;
    o.search_minus = type == seq_type::dna && s.strand != strands::plus;
    return std::make_unique<resident_search>(std::move(sc), std::move(o), std::move(db));
}

// The printed hits as BLAST's columns (the values `swgpu align` prints, before formatting).
std::vector<hit> to_hits(const search_results& r, const query_strands& queries, const scoring& sc) {
    std::vector<hit> out;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const io::results_view view{sc, queries, r.scan, r.hits};
    for (std::size_t qi = 0; qi < r.hits.size(); ++qi) {
        for (const printed_hit& h : r.hits[qi]) {
            const io::blast_values v = io::blast_values_of(view, qi, h);  // the values `swgpu align` prints
            hit x;
            x.qseqid = v.qseqid;
            x.sseqid = v.sseqid;
            x.length = static_cast<long>(v.length);
            x.pident = v.pident;
            x.mismatch = static_cast<long>(v.mismatch);
            x.gapopen = static_cast<long>(v.gapopen);
            x.qstart = static_cast<long>(v.qstart);
            x.qend = static_cast<long>(v.qend);
            x.sstart = static_cast<long>(v.sstart);
            x.send = static_cast<long>(v.send);
            x.evalue = v.has_statistics ? v.evalue : nan;
            x.bitscore = v.has_statistics ? v.bitscore : nan;
            x.score = static_cast<long>(v.score);
            x.cigar = cigar_string(h.aln.ops);
            x.qlen = static_cast<long>(v.qlen);
            x.slen = static_cast<long>(v.slen);
            x.sstrand = v.sstrand;
            x.nident = static_cast<long>(v.nident);
            x.positive = static_cast<long>(v.positive);
            x.gaps = static_cast<long>(v.gaps);
            if (!h.aln.ops.empty()) std::tie(x.qseq, x.sseq) = io::blast_rows(view, qi, h);
            out.push_back(std::move(x));
        }
    }
    return out;
}

// The search and the steps after the score pass, in the command line's order (no MAPQ here).
std::vector<hit> run_search(resident_search& engine, const sequence_set& query_letters) {
    const auto started = std::chrono::steady_clock::now();
    const batch_outcome r = engine.search(query_letters);
    const auto searched = std::chrono::steady_clock::now();
    std::vector<hit> hits = to_hits(r.results, r.shown, engine.sc());
    if (tuning::flag("search.profile")) {  // a measurement switch: the library's own share of a search
        const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
        std::fprintf(stderr, "swgpu: library search: %.1f ms, of which hits as the face's %.1f ms\n",
                     ms(started, std::chrono::steady_clock::now()), ms(searched, std::chrono::steady_clock::now()));
    }
    return hits;
}

}  // namespace

std::vector<sequence> read_sequences(const std::string& path) {
    const sequence_set set = detail::as_library_call([&] { return io::read_all(path); });
    std::vector<sequence> out;
    out.reserve(set.size());
    for (std::size_t k = 0; k < set.size(); ++k) {
        const auto r = set[k];
        out.push_back({set.names[k], std::string(r.begin(), r.end())});
    }
    return out;
}

std::vector<hit> search(const std::vector<sequence>& queries, const std::vector<sequence>& database,
                        const search_settings& settings) {
    return detail::as_library_call([&] {
        const detail::stop_scope stop(settings.stop);
        const sequence_set q = to_set(queries, "queries");
        const sequence_set db = to_set(database, "database");
        const seq_type type = typed(q, settings.type);
        if (settings.type == sequence_type::automatic && typed(db, settings.type) != type)
            throw io::types_disagree(type, "queries", typed(db, settings.type), "database");
        return run_search(*make_engine(settings, type, db), q);
    });
}

struct database::impl {
    search_settings settings;
    seq_type type = seq_type::protein;
    std::unique_ptr<resident_search> engine;
    std::mutex searching;  // one search at a time: each takes the whole backend

    void make(sequence_set letters, const search_settings& s) {
        settings = s;
        type = typed(letters, s.type);
        engine = make_engine(s, type, std::move(letters));
    }
};

database::database(const std::string& path_or_swdb, const search_settings& settings) : p_(std::make_unique<impl>()) {
    detail::as_library_call([&] { p_->make(io::read_all_records(path_or_swdb), settings); });
}

database::database(const std::vector<sequence>& records, const search_settings& settings)
    : p_(std::make_unique<impl>()) {
    detail::as_library_call([&] { p_->make(to_set(records, "database"), settings); });
}

database::~database() = default;
database::database(database&&) noexcept = default;
database& database::operator=(database&&) noexcept = default;

std::vector<hit> database::search(const std::vector<sequence>& queries) { return search(queries, p_->settings.stop); }

std::vector<hit> database::search(const std::vector<sequence>& queries, std::stop_token stop) {
    return detail::as_library_call([&] {
        const detail::stop_scope stopping(std::move(stop));
        const sequence_set q = to_set(queries, "queries");
        const seq_type type = typed(q, p_->settings.type);
        if (type != p_->type) throw io::types_disagree(type, "queries", p_->type, "database");
        const std::lock_guard<std::mutex> lock(p_->searching);
        return run_search(*p_->engine, q);
    });
}

std::size_t database::size() const { return p_->engine->database().size(); }
std::uint64_t database::residues() const { return p_->engine->database().total_residues(); }

namespace {

// align_pair's answer for a pair with no alignment of positive score: no E-value or bit score either (NaN passes no
// E-value filter).
hit no_alignment(const sequence& query, const sequence& subject) {
    hit none;
    none.evalue = std::numeric_limits<double>::quiet_NaN();
    none.bitscore = std::numeric_limits<double>::quiet_NaN();
    none.qseqid = query.name;
    none.sseqid = subject.name;
    none.qlen = static_cast<long>(query.residues.size());
    none.slen = static_cast<long>(subject.residues.size());
    return none;
}

}  // namespace

hit align_pair(const sequence& query, const sequence& subject, const search_settings& settings) {
    if (settings.max_hsps > 1)
        throw usage_error("align_pair gives one alignment; for max_hsps " + std::to_string(settings.max_hsps) +
                          " per pair, use align_pair_all");
    search_settings s = settings;
    s.max_target_seqs = 1;
    s.evalue = std::numeric_limits<double>::infinity();  // the alignment whatever its E-value
    const std::vector<hit> hits = search({query}, {subject}, s);
    return hits.empty() ? no_alignment(query, subject) : hits.front();
}

std::vector<hit> align_pair_all(const sequence& query, const sequence& subject, const search_settings& settings) {
    std::vector<hit> hits = search({query}, {subject}, settings);
    if (!hits.empty()) return hits;
    search_settings one = settings;  // none passed the E-value: the best alignment all the same
    one.max_hsps = 1;
    const hit best = align_pair(query, subject, one);
    if (best.score > 0) hits.push_back(best);
    return hits;
}

stop_calls::stop_calls() { request_cancel(); }
stop_calls::~stop_calls() { withdraw_cancel(); }

}  // namespace swgpu
