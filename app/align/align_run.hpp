// One run of `swgpu align`, in named steps: the options checked, the files resolved (no output may replace an input),
// the backend chosen and its GPUs started, the queries read and typed, the scoring made, the outputs opened, the
// queries encoded, the score pass composed (CPU or GPUs, subject windows, long pairs), the search run through the
// session (core/align/search/session.hpp: the pipeline, then the steps after the score pass), the results written
// and the run reported. align_command parses the
// command line into align_settings; this class does the rest, and algorithms live in core/, gpu/ and io/.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/align/align_command.hpp"
#include "core/align/scoring.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/search/refinements.hpp"
#include "core/align/search/settings_check.hpp"
#include "core/error.hpp"
#include "io/align/batch_list.hpp"
#include "io/align/output.hpp"
#include "io/align/query_files.hpp"

namespace swgpu::io {
class database_stream;
class process_group;
class output_file;
struct read_options;
}  // namespace swgpu::io

namespace swgpu {
class search_session;
}

namespace swgpu::app {

// Which options the command line gave explicitly (their defaults depend on the sequence type).
struct given_options {
    bool gap_open = false, gap_extend = false, match = false, mismatch = false, strand = false;
    bool max_target_seqs = false, evalue = false;  // SAM has defaults of its own
    bool zdrop = false;
};

class align_run {
public:
    align_run(align_settings settings, given_options given, std::string command_line);
    ~align_run();
    align_run(const align_run&) = delete;
    align_run& operator=(const align_run&) = delete;

    // The whole run; returns the exit code (0, or the first refused --batch file's) and throws swgpu::error.
    int run();

    // One line of a --batch list: a query file and where its output goes (io/align/batch_list.hpp).
    using batch_entry = io::batch_entry;

private:
    void check_options();
    search_values checked_values() const;
    void resolve_files();
    void check_memory();
    void choose_backend();
    bool read_queries();  // false: every --batch file was refused
    void make_scoring();
    void open_outputs();
    bool encode_queries();  // false: every --batch file was refused
    void mask_queries();
    void compose_score_pass();
    search_results search();
    void report(const search_results& results);
    void write(const search_results& results);
    void open_database();
    void refuse(std::size_t entry, const error& e);
    int finish_refused();
    void warn_unknown_letters(const std::string& source, std::uint64_t unknown) const;

    align_settings s_;
    given_options given_;
    std::string command_line_;
    std::chrono::steady_clock::time_point started_;
    io::process_group& group_;
    bool verbose_ = false, quiet_ = false;  // rank 0 speaks for an MPI run
    bool cpu_fallback_ = false;             // a GPU backend was built but no GPU could be used
    void info(const std::string& text) const;
    void warning(const std::string& text) const;
    void notice(const std::string& text) const;

    io::output_format fmt_;
    std::string read_group_;  // SAM's @RG fields (io::parse_read_group)
    std::size_t gpu_mem_ = 0;
    std::vector<batch_entry> batch_;
    bool use_gpu_ = false;
    int gpu_device_ = 0;
    std::unique_ptr<io::read_options> read_options_;
    std::unique_ptr<io::database_stream> database_;
    bool auto_type_ = true;

    // The queries: as read, typed, then encoded (io/align/query_files.hpp); a --batch file refused, with why.
    io::query_files q_;
    std::vector<std::pair<std::size_t, error>> refusals_;  // (entry of the list, why)
    seq_type type_ = seq_type::protein;
    // With --seg or --dust, the queries are searched and aligned masked; the output shows them as read.
    query_masking masking_;
    const query_strands& shown() const { return masking_.shown(q_.strands); }

    std::optional<scoring> sc_;
    std::unique_ptr<io::output_file> out_, dotplot_;
    std::unique_ptr<search_session> session_;
    std::chrono::steady_clock::time_point scanned_, finished_;
};

}  // namespace swgpu::app
