// What `swgpu align` writes after its search, in one place for every program that prints what it prints (the command
// line; a server answering with the same bytes): one query file's results, its zero-length reads back in their places
// without hits, with the dot plot; a --batch run's files, each written as a run with that file alone writes it.
//
// Inputs: the search's results (core/align/search/pipeline.hpp, search_results), the queries as the output shows them,
// the scoring, and the report's settings (format, headers); output: a text_sink (an output file, or a text_buffer:
// report_text gives the bytes as a string).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/align/scoring.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/search/session.hpp"
#include "io/align/output.hpp"
#include "io/output_file.hpp"

namespace swgpu::io {

// How the results are printed and what the headers say: the same for every file of a run.
struct report_settings {
    output_format format;       // parse_outfmt, with eqx
    std::string version;        // the program's version, for SAM's @PG
    std::string command_line;   // SAM's @PG CL
    std::string db_source;      // DB as given
    std::string read_group;     // SAM's @RG fields (parse_read_group); empty: none
    // Every database sequence in database order (database_stream::listed()); null: SAM's header lists the subjects
    // with a printed hit, and says so when the format is SAM.
    const std::vector<std::pair<std::string, std::uint64_t>>* references = nullptr;
    bool split_reads = false;   // several alignments per pair (--max-hsps > 1, --zdrop): SAM's supplementary records
};

// The queries of one query file as the output shows them.
struct report_queries {
    std::string source;                      // QUERY as given (headers)
    const query_strands& shown;              // the searched queries as read (query_masking::shown), encoded
    const sequence_set* letters = nullptr;   // their plus strands' letters as read, where the matrix reads some letters
                                             // as others (IUPAC codes in reads); null: the matrix's letters
    // Zero-length reads taken out before the search: their positions among the file's records, and the records.
    std::span<const std::size_t> empty_at = {};
    const sequence_set* empty_reads = nullptr;
};

// One query file's results in settings.format to `out`, and their dot plot to `dotplot` when given. Commits neither
// (io::commit_all commits both, so that a failure to write one leaves neither). Throws what write_results throws.
void write_report(const report_settings& settings, const report_queries& queries, const scoring& sc,
                  const search_results& results, text_sink& out, text_sink* dotplot = nullptr);

// The bytes write_report writes to `out`.
std::string report_text(const report_settings& settings, const report_queries& queries, const scoring& sc,
                        const search_results& results);

// One query file of a --batch run: its searched queries are [first, end) of the run's, and its results go to `out`.
struct batch_file {
    std::string query, out;
    std::size_t first = 0, end = 0;
};

// A --batch run's results: each file's queries and hits written to its own output file as a run with that file alone
// writes them, and committed, in the order of `files`.
void write_batch_reports(const report_settings& settings, const query_strands& shown, const scoring& sc,
                         const search_results& results, std::span<const batch_file> files);

// What -v says of a search (stderr lines without "swgpu: "). The score pass: the database's size and what the pass
// took from the run's start (`started`) to its end (`scanned`), the reader's share, and the GPUs' start-up (when
// `gpus_started_after` holds its seconds).
struct scan_times {
    std::chrono::steady_clock::time_point started, scanned;
    bool encodes_while_reading = false;
    std::optional<double> gpus_started_after;
};
std::string scan_summary(const std::string& db, const database_scan& scan, const scan_times& t);
// Long pairs aligned pairwise: their count, seconds and GCUPS.
std::string long_pairs_summary(std::size_t pairs, double seconds, double cells);
// The hits written (to `written_to`) and what finishing took: alignments (or E-values only) after the score pass,
// those made on the GPU, queries finished during the search (of `queries`), and the output's time since `finished`.
std::string written_summary(const search_results& results, const std::string& written_to, bool alignments,
                            std::chrono::steady_clock::duration finishing, const search_devices::aligned_on_device& on_gpu,
                            std::size_t queries, std::chrono::steady_clock::duration output);

}  // namespace swgpu::io
