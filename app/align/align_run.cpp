#include "app/align/align_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <limits>

#include "app/align/process_group.hpp"
#include "core/align/composition.hpp"
#include "core/align/search/session.hpp"
#include "core/align/sequence.hpp"
#include "core/align/strand.hpp"
#include "gpu/gpu.hpp"
#include "io/align/database_stream.hpp"
#include "io/align/matrix_file.hpp"
#include "io/align/sequence_reader.hpp"
#include "io/output_file.hpp"

namespace swgpu::app {

using clock = std::chrono::steady_clock;

namespace {

// Fails with an output error unless the folder of `path` exists and is writable.
void check_writable_folder(const std::string& path) {
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    if (!std::filesystem::is_directory(dir) || ::access(dir.c_str(), W_OK) != 0)
        throw output_error(path, "its folder does not exist or is not writable");
}

}  // namespace

align_run::align_run(align_settings settings, given_options given, std::string command_line)
    : s_(std::move(settings)),
      given_(given),
      command_line_(std::move(command_line)),
      started_(clock::now()),
      group_(process_group::world()),
      verbose_(s_.verbose && group_.rank() == 0),
      quiet_(s_.quiet || group_.rank() != 0) {}

align_run::~align_run() = default;

void align_run::info(const std::string& text) const {
    if (verbose_ && !quiet_) std::cerr << "swgpu: " << text << '\n';
}
void align_run::warning(const std::string& text) const {
    if (!quiet_) std::cerr << "swgpu: warning: " << text << '\n';
}
void align_run::notice(const std::string& text) const {
    if (!quiet_) std::cerr << "swgpu: " << text << '\n';
}

int align_run::run() {
    check_options();
    resolve_files();
    check_memory();
    choose_backend();
    if (!read_queries()) return finish_refused();
    make_scoring();
    open_outputs();
    if (!encode_queries()) return finish_refused();
    mask_queries();
    compose_score_pass();
    search_results results = search();
    if (!results.finished_here) return 0;  // another rank finishes and writes
    report(results);
    write(results);
    if (cpu_fallback_ && !verbose_) notice("no usable GPU (" + gpu::build_info() + "); this search ran on the CPU");
    return refusals_.empty() ? 0 : finish_refused();
}

// --batch: a query file that a run with it alone would refuse is refused here, with the same message, before its
// error line goes out; the other files are searched and written, and the run ends with the first refused file's exit
// code (rank 0 speaks under MPI).
void align_run::refuse(std::size_t entry, const error& e) {
    if (group_.rank() == 0) std::cerr << "swgpu: error: " << e.what() << '\n';
    refusals_.emplace_back(entry, e);
}

int align_run::finish_refused() {
    std::sort(refusals_.begin(), refusals_.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    if (group_.rank() == 0)
        std::cerr << "swgpu: error: " << refusals_.size() << " of the " << batch_.size() << " query files of "
                  << s_.batch << " were refused (above); the outputs of the others were written\n";
    return static_cast<int>(refusals_.front().second.code());
}

// Queries, typed (core/align/sequence.hpp's rule, every record checked against its file). With --batch, each listed
// file is read and typed on its own, as a run with it alone would, and held against the database's type.
bool align_run::read_queries() {
    const auto typed = [this](const sequence_set& set) {
        if (!auto_type_) return s_.seqtype == "dna" ? seq_type::dna : seq_type::protein;
        const seq_type t = classify(set);
        if (t == seq_type::protein) {  // records that look like DNA are protein in a protein file: said once
            nucleotide_like odd;
            odd.add(set);
            if (odd.count) warning(odd.warning(set.source));
        }
        return t;
    };
    // Base qualities are kept for SAM's QUAL only.
    io::read_options query_options = *read_options_;
    query_options.keep_qualities = fmt_.kind == io::format_kind::sam;
    if (batch_.empty()) {
        query_options.allow_empty = true;  // zero-length reads: printed without hits (SAM: unmapped), not refused
        sequence_set q = io::read_all(s_.query, query_options);
        if (q.empty()) throw input_error(s_.query, "no sequences found");
        take_out_empty(q);
        type_ = typed(q);
        query_files_.push_back(std::move(q));
        query_entry_.push_back(0);
    } else {
        std::vector<seq_type> types;
        for (std::size_t k = 0; k < batch_.size(); ++k) {
            try {
                sequence_set one = io::read_all(batch_[k].query, query_options);
                if (one.empty()) throw input_error(batch_[k].query, "no sequences found");
                types.push_back(typed(one));
                query_files_.push_back(std::move(one));
                query_entry_.push_back(k);
            } catch (const error& e) {
                refuse(k, e);
            }
        }
        info(std::to_string(batch_.size()) + " query files from " + s_.batch);
        if (auto_type_ && !query_files_.empty()) {
            // Each file is held against the database's type, as alone: the first chunk is read now to know it.
            open_database();
            const seq_type db_type = database_->type();
            std::size_t kept = 0;
            for (std::size_t i = 0; i < query_files_.size(); ++i) {
                if (types[i] != db_type) {
                    refuse(query_entry_[i], io::types_disagree(types[i], batch_[query_entry_[i]].query, db_type, s_.db));
                    continue;
                }
                if (kept != i) {  // (a self-move would empty the set)
                    query_files_[kept] = std::move(query_files_[i]);
                    query_entry_[kept] = query_entry_[i];
                }
                ++kept;
            }
            query_files_.resize(kept);
            query_entry_.resize(kept);
        }
        type_ = !auto_type_ ? (s_.seqtype == "dna" ? seq_type::dna : seq_type::protein)
                : database_ ? database_->type()
                            : seq_type::protein;  // every file refused
    }
    if (query_files_.empty()) return false;
    if (type_ == seq_type::protein) {
        if (given_.match || given_.mismatch)
            throw usage_error("--match/--mismatch score DNA, but the queries are protein; use --matrix, or "
                              "--seqtype dna");
        if (given_.strand)
            throw usage_error("--strand applies to DNA, but the queries are protein; or give --seqtype dna");
        if (s_.dust == "yes")
            throw usage_error("--dust masks DNA, but the queries are protein; use --seg yes, or --seqtype dna");
        if (given_.zdrop)
            throw usage_error("--zdrop cuts DNA alignments into collinear blocks, but the queries are protein; or give "
                              "--seqtype dna");
    } else if (s_.seg == "yes") {
        throw usage_error("--seg masks protein, but the queries are DNA; use --dust yes, or --seqtype protein");
    } else if (s_.comp_based_stats == 1) {
        throw usage_error("--comp-based-stats 1 applies to protein, but the queries are DNA");
    }
    return true;
}

// DNA reads with IUPAC codes (R, Y, K, ...): the matrix scores them as N, the output prints them as read.
void align_run::keep_query_letters() {
    if (type_ != seq_type::dna) return;
    const auto& r = queries_.plus.residues;
    const bool iupac = std::any_of(r.begin(), r.end(), [](std::uint8_t c) {
        c = static_cast<std::uint8_t>(std::toupper(c));
        return c != 'A' && c != 'C' && c != 'G' && c != 'T';
    });
    if (!iupac) return;
    query_letters_ = queries_.plus;
    for (auto& c : query_letters_->residues) c = static_cast<std::uint8_t>(std::toupper(c));
    query_letters_->qualities.clear();
}

void align_run::take_out_empty(sequence_set& q) {
    for (std::size_t k = 0; k < q.size(); ++k)
        if (q.length(k) == 0) empty_at_.push_back(k);
    if (empty_at_.empty()) return;
    if (empty_at_.size() == q.size())
        throw input_error(s_.query, "no record has residues (" + std::to_string(q.size()) + " empty records)");
    sequence_set kept;
    kept.source = q.source;
    for (std::size_t k = 0, e = 0; k < q.size(); ++k) {
        if (e < empty_at_.size() && empty_at_[e] == k) {
            empty_reads_.add_record(q, k);
            ++e;
        } else {
            kept.add_record(q, k);
        }
    }
    q = std::move(kept);
}

void align_run::make_scoring() {
    io::scoring_request r;
    r.type = type_;
    r.matrix = s_.matrix;
    if (given_.gap_open) r.gap_open = s_.gap_open;
    if (given_.gap_extend) r.gap_extend = s_.gap_extend;
    r.match = s_.match;
    r.mismatch = s_.mismatch;
    r.evalues = !s_.no_evalue;
    sc_.emplace(io::make_scoring(r));
    if (s_.comp_based_stats == 1) (void)composition_adjustment(sc_->matrix);  // an unsupported matrix refused now
    info("scoring: " + io::describe_scoring(*sc_) + "; " + std::string(type_name(type_)) + (use_gpu_ ? "; GPU" : "; CPU"));
}

// An unwritable destination fails before the search (with --batch the files are opened as they are written, but
// their folders are checked now). Under MPI, rank 0 writes.
void align_run::open_outputs() {
    const bool writes = group_.rank() == 0;
    if (batch_.empty() && writes) out_ = std::make_unique<io::output_file>(s_.out);
    if (!batch_.empty() && writes && !s_.out.empty() && s_.out != "-" && !std::filesystem::exists(s_.out)) {
        std::error_code ec;  // the -o folder of --batch outputs is created when missing
        std::filesystem::create_directories(s_.out, ec);
        if (ec) throw output_error(s_.out, "cannot create the folder of the --batch outputs: " + ec.message());
    }
    for (const auto& b : batch_) check_writable_folder(b.out);
    if (!s_.dotplot.empty() && writes) dotplot_ = std::make_unique<io::output_file>(s_.dotplot);
}

void align_run::warn_unknown_letters(const std::string& source, std::uint64_t unknown) const {
    if (!unknown) return;
    const scoring& sc = *sc_;
    const substitution_matrix& m = sc.matrix;
    const std::string fallback(1, m.letter(m.fallback_code()));
    // A matrix without its fallback letter scores them with its lowest score (core/align/scoring.hpp).
    warning(source + ": " + std::to_string(unknown) + " residues are not letters of " + m.name() +
            (type_ == seq_type::dna ? " (IUPAC ambiguity codes such as R, Y, K, or X)" : "") +
            (m.fallback_added()
                 ? ", which has no " + fallback + " row; they score its lowest score (" + std::to_string(m.min_score()) +
                       ") against every letter"
                 : " and were read as " + fallback));
}

// Encoded; DNA is searched on the strands asked for. With --batch each file on its own (a letter its matrix cannot
// read refuses that file only), then the files one after the other.
bool align_run::encode_queries() {
    const scoring& sc = *sc_;
    queries_.search_plus = type_ == seq_type::protein || s_.strand != "minus";
    queries_.search_minus = type_ == seq_type::dna && s_.strand != "plus";
    if (batch_.empty()) {
        queries_.plus = std::move(query_files_.front());
        keep_query_letters();
        if (queries_.search_minus) queries_.minus = reverse_complement(queries_.plus);
        warn_unknown_letters(s_.query, encode(queries_.plus, sc.matrix));
        if (queries_.search_minus) encode(queries_.minus, sc.matrix);
    } else {
        for (std::size_t i = 0; i < query_files_.size(); ++i) {
            sequence_set& plus = query_files_[i];
            sequence_set minus;
            try {
                if (queries_.search_minus) minus = reverse_complement(plus);
                warn_unknown_letters(plus.source, encode(plus, sc.matrix));
                if (queries_.search_minus) encode(minus, sc.matrix);
            } catch (const error& e) {
                refuse(query_entry_[i], e);
                continue;
            }
            for (std::size_t q = 0; q < plus.size(); ++q) {
                queries_.plus.add_record(plus, q);
                if (queries_.search_minus) queries_.minus.add(std::move(minus.names[q]), minus[q]);
            }
            sequence_set{}.residues.swap(plus.residues);  // freed as it is copied
            std::string{}.swap(plus.qualities);
            batch_first_.push_back(queries_.plus.size());
            batch_files_.push_back(query_entry_[i]);
        }
        if (batch_files_.empty()) return false;
        queries_.plus.source = queries_.minus.source = s_.batch;
        queries_.plus.encoded = queries_.minus.encoded = true;
    }
    query_files_.clear();
    if (queries_.plus.size() > std::numeric_limits<std::uint32_t>::max() / 2)
        throw input_error(s_.query, "too many queries for one run; split the file");
    info(std::to_string(queries_.size()) + " queries, " + std::to_string(queries_.plus.total_residues()) +
         " residues, from " + s_.query);
    return true;
}

// --seg yes / --dust yes: low-complexity residues of the queries become the matrix's X (N) on both strands, for the
// score pass and the alignments, as BLAST's hard masking (-soft_masking false) does; the queries as read are kept for
// the output, which shows their letters, identities and positives as BLAST does.
void align_run::mask_queries() {
    const bool seg = s_.seg == "yes", dust = s_.dust == "yes";
    if (!seg && !dust) return;
    const substitution_matrix& m = sc_->matrix;
    const std::uint64_t n = session_->mask(queries_, masking_, m);
    info(std::string(seg ? "SEG" : "DUST") + " masked " + std::to_string(n) + " of the queries' " +
         std::to_string(queries_.plus.total_residues()) + " residues as " + std::string(1, m.letter(m.fallback_code())));
}

// The score pass (core/align/search/session.hpp: the backend's, with windows and long pairs) over the database's chunks;
// under MPI, rank r searches chunks r, r + P, ... (the others passed unread where the database can skip) and rank 0
// merges the scans.
void align_run::compose_score_pass() {
    open_database();
    if (auto_type_) database_->expect(type_, s_.query);
    session_->compose(*sc_);
    search_run_options& run = session_->pipeline();
    if (group_.size() > 1) {
        const int rank = group_.rank(), size = group_.size();
        run.searched_here = [rank, size](std::size_t chunk) { return chunk % std::size_t(size) == std::size_t(rank); };
        run.combine = [this, max_hits = run.max_hits](database_scan&& mine) -> std::optional<database_scan> {
            auto parts = group_.gather({false, pack_scan(mine)});
            if (!parts) return std::nullopt;
            for (std::size_t r = 1; r < parts->size(); ++r) merge_scan(mine, unpack_scan((*parts)[r].bytes), max_hits);
            info("merged the scans of " + std::to_string(parts->size()) + " MPI ranks");
            return std::move(mine);
        };
        info(std::to_string(size) + " MPI ranks; rank r searches chunks r, r + " + std::to_string(size) + ", r + " +
             std::to_string(2 * size) + ", ... of " + std::to_string(database_->chunk_residues()) + " residues");
    }
}

// The search, then the steps after the score pass in their one order (the session's: composition, the printed k,
// further alignments per pair, identities on the queries' letters as read, SAM's and PAF's placements).
search_results align_run::search() {
    search_results results = session_->search(queries_, masking_, *database_, database_->total_residues());
    scanned_ = results.score_pass_done;
    finished_ = results.finished;
    return results;
}

}  // namespace swgpu::app
