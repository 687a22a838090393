#include "app/align/align_run.hpp"

#include <algorithm>
#include <iostream>
#include <limits>

#include "core/align/composition.hpp"
#include "core/align/search/session.hpp"
#include "gpu/gpu.hpp"
#include "io/align/database_stream.hpp"
#include "io/align/matrix_file.hpp"
#include "io/output_file.hpp"
#include "io/process_group.hpp"

namespace swgpu::app {

using clock = std::chrono::steady_clock;

align_run::align_run(align_settings settings, given_options given, std::string command_line)
    : s_(std::move(settings)),
      given_(given),
      command_line_(std::move(command_line)),
      started_(clock::now()),
      group_(io::process_group::world()),
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

// Queries, typed (io/align/query_files.hpp: core/align/sequence.hpp's rule, every record checked against its file).
// With --batch, each listed file is read and typed on its own, as a run with it alone would, and held against the
// database's type.
bool align_run::read_queries() {
    io::query_reading how;
    how.read = *read_options_;
    how.read.keep_qualities = fmt_.kind == io::format_kind::sam;  // base qualities are kept for SAM's QUAL only
    if (!auto_type_) how.type = s_.seqtype == "dna" ? seq_type::dna : seq_type::protein;
    how.warning = [this](const std::string& text) { warning(text); };
    how.refuse = [this](std::size_t entry, const error& e) { refuse(entry, e); };
    if (batch_.empty()) {
        type_ = io::read_query_file(q_, s_.query, how);
    } else {
        const std::vector<seq_type> types = io::read_batch_files(q_, batch_, how);
        info(std::to_string(batch_.size()) + " query files from " + s_.batch);
        if (auto_type_ && !q_.files.empty()) {
            // Each file is held against the database's type, as alone: the first chunk is read now to know it.
            open_database();
            io::keep_database_type(q_, types, database_->type(), s_.db, batch_, how);
        }
        type_ = !auto_type_ ? (s_.seqtype == "dna" ? seq_type::dna : seq_type::protein)
                : database_ ? database_->type()
                            : seq_type::protein;  // every file refused
    }
    if (q_.files.empty()) return false;
    check_settings_for_type(checked_values(), type_, settings_face::command_line);
    return true;
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
    io::prepare_batch_outputs(s_.out, batch_, writes);  // the -o folder of --batch outputs created when missing
    if (!s_.dotplot.empty() && writes) dotplot_ = std::make_unique<io::output_file>(s_.dotplot);
}

void align_run::warn_unknown_letters(const std::string& source, std::uint64_t unknown) const {
    if (const std::string text = io::unknown_letters_warning(source, unknown, sc_->matrix, type_); !text.empty())
        warning(text);
}

// Encoded; DNA is searched on the strands asked for. With --batch each file on its own (a letter its matrix cannot
// read refuses that file only), then the files one after the other.
bool align_run::encode_queries() {
    const io::query_encoding how{
        sc_->matrix, type_, type_ == seq_type::protein || s_.strand != "minus",
        type_ == seq_type::dna && s_.strand != "plus",
        [this](const std::string& source, std::uint64_t unknown) { warn_unknown_letters(source, unknown); },
        [this](std::size_t entry, const error& e) { refuse(entry, e); }};
    if (batch_.empty()) io::encode_query_file(q_, s_.query, how);
    else if (!io::encode_batch_files(q_, s_.batch, how)) return false;
    q_.files.clear();
    if (q_.strands.plus.size() > std::numeric_limits<std::uint32_t>::max() / 2)
        throw input_error(s_.query, "too many queries for one run; split the file");
    info(std::to_string(q_.strands.size()) + " queries, " + std::to_string(q_.strands.plus.total_residues()) +
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
    const std::uint64_t n = session_->mask(q_.strands, masking_, m);
    info(std::string(seg ? "SEG" : "DUST") + " masked " + std::to_string(n) + " of the queries' " +
         std::to_string(q_.strands.plus.total_residues()) + " residues as " + std::string(1, m.letter(m.fallback_code())));
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
        io::share_search(group_, run, [this](const std::string& text) { info(text); });
        const int size = group_.size();
        info(std::to_string(size) + " MPI ranks; rank r searches chunks r, r + " + std::to_string(size) + ", r + " +
             std::to_string(2 * size) + ", ... of " + std::to_string(database_->chunk_residues()) + " residues");
    }
}

// The search, then the steps after the score pass in their one order (the session's: composition, the printed k,
// further alignments per pair, identities on the queries' letters as read, SAM's and PAF's placements).
search_results align_run::search() {
    search_results results = session_->search(q_.strands, masking_, *database_, database_->total_residues());
    scanned_ = results.score_pass_done;
    finished_ = results.finished;
    return results;
}

}  // namespace swgpu::app
