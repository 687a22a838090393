// align_run's last steps (app/align/align_run.hpp): what -v reports of the run, and the results written (each --batch
// entry's, the queries without a hit included).
#include "app/align/align_run.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "core/align/long_pair/runner.hpp"
#include "core/align/search/session.hpp"
#include "core/align/statistics.hpp"
#include "io/align/database_stream.hpp"
#include "io/align/dotplot.hpp"
#include "io/output_file.hpp"

namespace swgpu::app {

using clock = std::chrono::steady_clock;

namespace {

std::string seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f s", s);
    return buf;
}

std::string seconds(std::chrono::steady_clock::duration d) { return seconds(std::chrono::duration<double>(d).count()); }

}  // namespace

void align_run::report(const search_results& results) {
    const database_scan& scan = results.scan;
    warn_unknown_letters(s_.db, scan.unknown_residues);
    if (const std::string odd = database_->nucleotide_like_warning(); !odd.empty()) warning(odd);
    if (database_->records_skipped())
        warning(s_.db + ": " + std::to_string(database_->records_skipped()) + " records skipped (--skip-bad)");
    info("database " + s_.db + ": " + std::to_string(scan.sequences) + " sequences, " +
         std::to_string(scan.residues) + " residues, " + std::to_string(scan.chunks) + " chunk(s); score pass " +
         seconds(scanned_ - started_) + " (backend " + seconds(scan.backend_s) + ", waiting for the reader " +
         seconds(scan.reader_wait_s) + ", of which for the first chunk " + seconds(scan.first_chunk_wait_s) +
         "; the reader read " + seconds(scan.read_s) +
         (database_->encodes_while_reading() ? " (encoding as it read)" : ", encoded " + seconds(scan.encode_s)) +
         ", prepared " +
         seconds(scan.prepare_s) +
         "; start-up before the scan " +
         seconds(scan.began > started_ ? std::chrono::duration<double>(scan.began - started_).count() : 0.0) +
         (session_->devices() ? ", GPUs started " + seconds(session_->devices()->started_after()) + " after the start"
                           : std::string()) +
         ", keeping hit subjects " + seconds(scan.keep_subjects_s) + ")");
}

// One query file that held zero-length reads: they go back to their places, without hits (SAM: unmapped records).
void align_run::write_with_empty(const search_results& results) {
    const query_strands& searched_queries = shown();
    query_strands all;
    all.search_plus = searched_queries.search_plus;
    all.search_minus = searched_queries.search_minus;
    all.plus.source = searched_queries.plus.source;
    all.minus.source = searched_queries.minus.source;
    all.plus.encoded = searched_queries.plus.encoded;
    all.minus.encoded = searched_queries.minus.encoded;
    std::vector<std::vector<printed_hit>> hits;
    std::vector<std::vector<strand_hit>> kept;
    std::optional<sequence_set> letters;
    if (query_letters_) letters.emplace();
    const std::size_t n = searched_queries.size() + empty_at_.size();
    for (std::size_t k = 0, e = 0, q = 0; k < n; ++k) {
        if (e < empty_at_.size() && empty_at_[e] == k) {
            all.plus.add_record(empty_reads_, e);
            if (letters) letters->add(empty_reads_.names[e], empty_reads_[e]);
            if (all.search_minus) all.minus.add_record(empty_reads_, e);
            hits.emplace_back();
            kept.emplace_back();
            ++e;
            continue;
        }
        all.plus.add_record(searched_queries.plus, q);
        if (letters) letters->add((*query_letters_).names[q], (*query_letters_)[q]);
        if (all.search_minus) all.minus.add_record(searched_queries.minus, q);
        hits.push_back(results.hits[q]);
        kept.push_back(q < results.scan.hits.size() ? results.scan.hits[q] : std::vector<strand_hit>{});
        ++q;
    }
    io::run_header header{SWGPU_VERSION, command_line_, s_.query, s_.db, read_group_};
    header.references = database_->listed();
    header.references_capped = fmt_.kind == io::format_kind::sam && !header.references;
    const evalue_calculator* statistics = results.statistics ? &*results.statistics : nullptr;
    io::results_view view{*sc_, all, results.scan, hits, kept, statistics};
    view.query_letters = letters ? &*letters : nullptr;
    view.split_reads = s_.max_hsps > 1 || s_.zdrop >= 0;
    io::write_results(fmt_, header, view, *out_);
    if (dotplot_) io::write_dotplot(io::results_view{*sc_, all, results.scan, hits}, *dotplot_);
    io::commit_all({out_.get(), dotplot_.get()});
}

// The results: one file, or with --batch each file's queries and hits, written as a run with that file alone writes
// them; then what the finishing cost (-v).
void align_run::write(const search_results& results) {
    const scoring& sc = *sc_;
    const database_scan& scan = results.scan;
    const auto& hits = results.hits;
    const evalue_calculator* statistics = results.statistics ? &*results.statistics : nullptr;
    const std::span<const std::vector<strand_hit>> searched(scan.hits);
    if (batch_.empty() && !empty_at_.empty()) {
        write_with_empty(results);
    } else if (batch_.empty()) {
        io::run_header header{SWGPU_VERSION, command_line_, s_.query, s_.db, read_group_};
        header.references = database_->listed();
        header.references_capped = fmt_.kind == io::format_kind::sam && !header.references;
        io::results_view view{sc, shown(), scan, hits, searched, statistics};
        view.query_letters = query_letters_ ? &*query_letters_ : nullptr;
        view.split_reads = s_.max_hsps > 1 || s_.zdrop >= 0;
        io::write_results(fmt_, header, view, *out_);
        if (dotplot_) io::write_dotplot(io::results_view{sc, shown(), scan, hits}, *dotplot_);
        io::commit_all({out_.get(), dotplot_.get()});  // a failure to write one leaves neither
    }
    for (std::size_t j = 0; j < batch_files_.size(); ++j) {
        const std::size_t k = batch_files_[j], b = batch_first_[j], e = batch_first_[j + 1];
        query_strands part;
        part.search_plus = queries_.search_plus;
        part.search_minus = queries_.search_minus;
        part.plus.source = batch_[k].query;
        part.minus.source = batch_[k].query;
        part.plus.encoded = queries_.plus.encoded;
        part.minus.encoded = queries_.minus.encoded;
        for (std::size_t q = b; q < e; ++q) {
            part.plus.add_record(shown().plus, q);
            if (queries_.search_minus) part.minus.add(shown().minus.names[q], shown().minus[q]);
        }
        const std::vector<std::vector<printed_hit>> part_hits(hits.begin() + static_cast<std::ptrdiff_t>(b),
                                                              hits.begin() + static_cast<std::ptrdiff_t>(e));
        io::output_file file(batch_[k].out);
        io::run_header header{SWGPU_VERSION, command_line_, batch_[k].query, s_.db, read_group_};
        header.references = database_->listed();
        header.references_capped = fmt_.kind == io::format_kind::sam && !header.references;
        io::results_view view{sc, part, scan, part_hits, searched.subspan(b, e - b), statistics};
        view.split_reads = s_.max_hsps > 1 || s_.zdrop >= 0;
        io::write_results(fmt_, header, view, file);
        file.commit();
    }
    if (session_->long_pairs().pairs() > 0)
        info(std::to_string(session_->long_pairs().pairs()) + " long pair(s) aligned pairwise: " +
             seconds(session_->long_pairs().seconds()) + ", " +
             std::to_string(session_->long_pairs().cells() / std::max(session_->long_pairs().seconds(), 1e-9) / 1e9) + " GCUPS");
    std::size_t printed = 0;
    for (const auto& h : hits) printed += h.size();
    std::string finishing = (session_->pipeline().alignments ? "alignments " : "E-values (the format prints no alignment) ") +
                            seconds(finished_ - scanned_) + " after the score pass";
    const search_devices::aligned_on_device on_gpu =
        session_->devices() ? session_->devices()->aligned() : search_devices::aligned_on_device{};
    if (on_gpu.pairs > 0)
        finishing += " (" + std::to_string(on_gpu.pairs) + " on the GPU in " + seconds(on_gpu.total_s) + ", kernel " +
                     seconds(on_gpu.kernel_s) + ")";
    if (results.queries_finished_during_search > 0)
        finishing += " (" + std::to_string(results.queries_finished_during_search) + " of " +
                     std::to_string(queries_.size()) + " queries finished during it)";
    info(std::to_string(printed) + " hits written to " +
         (batch_.empty() ? out_->name() : std::to_string(batch_files_.size()) + " files") + "; " + finishing +
         ", output " + seconds(clock::now() - finished_));
}

}  // namespace swgpu::app
