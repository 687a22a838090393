// `swgpu align QUERY DB [options]`: the command line of database search. Parses the options into align_settings;
// app/align/align_run.hpp runs them (io reads, core searches and finishes on a backend, io writes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "app/command.hpp"

namespace swgpu::app {

struct align_settings {
    std::string query, db;
    std::string matrix;               // empty: BLOSUM62 (protein) or --match/--mismatch (DNA)
    int gap_open = -1, gap_extend = -1;  // -1: the matrix's default
    int match = 2, mismatch = -3;
    std::string seqtype = "auto";
    std::string strand = "both";
    std::int64_t max_target_seqs = 500;  // signed: a negative count is refused, not wrapped
    double evalue = 10;
    bool no_evalue = false;
    std::string outfmt = "6";
    std::string out = "-";
    unsigned threads = 0;
    std::string backend = "auto";
    std::int64_t db_chunk = 100'000'000;
    std::string gpu_align = "auto";  // where printed alignments are computed with the GPU backend: auto/gpu, cpu
    int gpus = 0;         // GPUs the score pass spreads over (0: every visible one)
    std::string gpu_mem;  // device memory budget for the GPU backend, e.g. 512M, 8G (empty: what is free)
    std::string mode = "auto";       // auto, search, pairwise: how pairs are scored (see --mode)
    std::string long_policy = "auto";  // long pairs' score pass on the GPU: auto, antidiagonal, compensation
    std::string seg = "no";          // yes: SEG masks low-complexity protein queries (blastp -seg yes)
    std::string dust = "no";         // yes: DUST masks low-complexity DNA queries (blastn -dust yes)
    int comp_based_stats = 0;        // 1: composition-based statistics (blastp -comp_based_stats 1)
    int max_hsps = 1;                // alignments per (query, subject, strand): the best and those sharing no pair
    int zdrop = -1;                  // --zdrop Z (DNA): alignments cut into collinear blocks; -1: not given
    bool eqx = false;                // CIGARs with =/X
    std::string read_group;          // SAM's @RG fields (--read-group), as bwa mem -R takes them
    std::string batch;               // --batch LIST: query files, one output file each
    std::string dotplot;             // SVG dot plot of the printed alignments
    std::string server;              // --server URL: the search sent to `swgpu serve` (app/align/serve_command.hpp)
    bool skip_bad = false;
    bool verbose = false, quiet = false;
};

class align_command : public command {
public:
    // Adds the `align` subcommand and its options to `app`.
    explicit align_command(CLI::App& app);

private:
    // Runs a parsed command; throws swgpu::error (caught in main). `command_line` goes into SAM's @PG. The inputs
    // (query files, a region's index, the database a prefix names, a --batch list's files) are checked against the
    // outputs in align_run, which knows them once the batch list is read.
    int run(const std::string& command_line) override;
    void run_files(std::vector<io::named_file>& outputs, std::vector<io::named_file>& inputs) override;
    void add_input_options(CLI::App* sub);
    void add_scoring_options(CLI::App* sub);
    void add_hit_options(CLI::App* sub);
    void add_run_options(CLI::App* sub);
    void add_masking_options(CLI::App* sub);
    void add_report_options(CLI::App* sub);
    align_settings s_;
    CLI::Option *zdrop_ = nullptr;
    CLI::Option *gap_open_ = nullptr, *gap_extend_ = nullptr, *match_ = nullptr, *mismatch_ = nullptr,
                *strand_ = nullptr, *matrix_ = nullptr, *max_target_seqs_ = nullptr, *evalue_ = nullptr;
};

// The conventions block shown by --help (docs/conventions.md, in short).
std::string conventions_text();

}  // namespace swgpu::app
