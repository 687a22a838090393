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
#include "io/align/report.hpp"
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

// The results (io/align/report.hpp): one file, or with --batch each file's queries and hits, written as a run with
// that file alone writes them; then what the finishing cost (-v).
void align_run::write(const search_results& results) {
    const auto& hits = results.hits;
    io::report_settings settings{fmt_, SWGPU_VERSION, command_line_, s_.db, read_group_, database_->listed(),
                                 s_.max_hsps > 1 || s_.zdrop >= 0};
    if (batch_.empty()) {
        io::report_queries queries{s_.query, shown(), q_.letters ? &*q_.letters : nullptr, q_.empty_at,
                                   &q_.empty_reads};
        io::write_report(settings, queries, *sc_, results, *out_, dotplot_.get());
        io::commit_all({out_.get(), dotplot_.get()});  // a failure to write one leaves neither
    }
    std::vector<io::batch_file> files;
    for (std::size_t j = 0; j < q_.batch_files.size(); ++j)
        files.push_back({batch_[q_.batch_files[j]].query, batch_[q_.batch_files[j]].out, q_.batch_first[j],
                         q_.batch_first[j + 1]});
    io::write_batch_reports(settings, shown(), *sc_, results, files);
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
                     std::to_string(q_.strands.size()) + " queries finished during it)";
    info(std::to_string(printed) + " hits written to " +
         (batch_.empty() ? out_->name() : std::to_string(q_.batch_files.size()) + " files") + "; " + finishing +
         ", output " + seconds(clock::now() - finished_));
}

}  // namespace swgpu::app
