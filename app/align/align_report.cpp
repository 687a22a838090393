// align_run's last steps (app/align/align_run.hpp): what -v reports of the run, and the results written (each --batch
// entry's, the queries without a hit included).
#include "app/align/align_run.hpp"

#include <optional>

#include "core/align/long_pair/runner.hpp"
#include "core/align/search/session.hpp"
#include "io/align/database_stream.hpp"
#include "io/align/report.hpp"
#include "io/output_file.hpp"

namespace swgpu::app {

using clock = std::chrono::steady_clock;

void align_run::report(const search_results& results) {
    const database_scan& scan = results.scan;
    warn_unknown_letters(s_.db, scan.unknown_residues);
    if (const std::string odd = database_->nucleotide_like_warning(); !odd.empty()) warning(odd);
    if (database_->records_skipped())
        warning(s_.db + ": " + std::to_string(database_->records_skipped()) + " records skipped (--skip-bad)");
    const search_devices* gpus = session_->devices();
    info(io::scan_summary(s_.db, scan,
                          {started_, scanned_, database_->encodes_while_reading(),
                           gpus ? std::optional<double>(gpus->started_after()) : std::nullopt}));
}

// The results (io/align/report.hpp): one file, or with --batch each file's queries and hits, written as a run with
// that file alone writes them; then what the finishing cost (-v).
void align_run::write(const search_results& results) {
    io::report_settings settings{fmt_, SWGPU_VERSION, command_line_, s_.db, read_group_, database_->listed(),
                                 s_.max_hsps > 1 || s_.zdrop >= 0};
    if (batch_.empty()) {
        io::report_queries queries{s_.query, shown(), q_.letters ? &*q_.letters : nullptr, q_.empty_at,
                                   &q_.empty_reads};
        io::write_report(settings, queries, *sc_, results, *out_, dotplot_.get());
        io::commit_all({out_.get(), dotplot_.get()});  // a failure to write one leaves neither
    }
    io::write_batch_reports(settings, shown(), *sc_, results, io::batch_files_of(q_, batch_));
    const long_pair::runner& long_pairs = session_->long_pairs();
    if (long_pairs.pairs() > 0) info(io::long_pairs_summary(long_pairs.pairs(), long_pairs.seconds(), long_pairs.cells()));
    const search_devices::aligned_on_device on_gpu =
        session_->devices() ? session_->devices()->aligned() : search_devices::aligned_on_device{};
    info(io::written_summary(results, batch_.empty() ? out_->name() : std::to_string(q_.batch_files.size()) + " files",
                             session_->pipeline().alignments, finished_ - scanned_, on_gpu, q_.strands.size(),
                             clock::now() - finished_));
}

}  // namespace swgpu::app
