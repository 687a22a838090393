#include "app/align/align_command.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "app/align/gpu_share.hpp"
#include "app/align/process_group.hpp"
#include "core/error.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/long_pair/long_pair.hpp"
#include "core/align/search/subject_windows.hpp"
#include "core/align/scoring.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/search/multi_device.hpp"
#include "core/align/sequence.hpp"
#include "core/align/statistics.hpp"
#include "core/align/strand.hpp"
#include "core/thread_pool.hpp"
#include "gpu/engine/engine.hpp"
#include "gpu/gpu.hpp"
#include "io/output_file.hpp"
#include "io/align/dotplot.hpp"
#include "io/align/database_file.hpp"
#include "io/align/matrix_file.hpp"
#include "io/align/output.hpp"
#include "io/align/sequence_reader.hpp"

namespace swgpu::app {

namespace {

// --mode auto: pairs of at least default_long_pair_cells cells whose shorter sequence has this many residues are
// aligned as long pairs.
constexpr std::size_t long_pair_min_side = 4096;

// "--gpu-mem": bytes, or a number with K, M or G (powers of 1024). Empty: 0, the backend's default (what is free).
std::size_t parse_gpu_mem(const std::string& text) {
    if (text.empty()) return 0;
    std::size_t pos = 0;
    unsigned long long value = 0;
    try {
        value = std::stoull(text, &pos);
    } catch (const std::exception&) {
        pos = 0;
    }
    std::size_t unit = 1;
    if (pos > 0 && pos + 1 == text.size()) {
        switch (text[pos]) {
            case 'k': case 'K': unit = std::size_t(1) << 10; break;
            case 'm': case 'M': unit = std::size_t(1) << 20; break;
            case 'g': case 'G': unit = std::size_t(1) << 30; break;
            default: pos = 0;
        }
        if (pos) ++pos;
    }
    if (pos == 0 || pos != text.size() || text[0] == '-')
        throw usage_error("--gpu-mem '" + text + "' is not a size; give bytes or a number with K, M or G, e.g. 4G");
    const std::size_t bytes = static_cast<std::size_t>(value) * unit;
    if (bytes < (std::size_t(16) << 20))
        throw usage_error("--gpu-mem " + text + " is below the minimum of 16M");
    return bytes;
}

}  // namespace

namespace {

// Messages on stderr: warnings and notices unless -q, information only with -v.
struct messages {
    bool verbose = false, quiet = false;
    void warning(const std::string& text) const {
        if (!quiet) std::cerr << "swgpu: warning: " << text << '\n';
    }
    void notice(const std::string& text) const {
        if (!quiet) std::cerr << "swgpu: " << text << '\n';
    }
    void info(const std::string& text) const {
        if (verbose && !quiet) std::cerr << "swgpu: " << text << '\n';
    }
};

// A one-line progress display, only when stderr is a terminal (docs/conventions.md); erased when done.
class progress_line {
public:
    explicit progress_line(bool enabled) : enabled_(enabled && ::isatty(STDERR_FILENO) == 1) {}
    ~progress_line() { clear(); }
    void show(const std::string& text) {
        if (!enabled_) return;
        std::cerr << '\r' << text << std::string(width_ > text.size() ? width_ - text.size() : 0, ' ') << std::flush;
        width_ = text.size();
    }
    void clear() {
        if (!enabled_ || width_ == 0) return;
        std::cerr << '\r' << std::string(width_, ' ') << '\r' << std::flush;
        width_ = 0;
    }

private:
    bool enabled_;
    std::size_t width_ = 0;
};

// One line of a --batch list: a query file and where its output goes.
struct batch_entry {
    std::string query, out;
};

// Reads a --batch list: "QUERY [OUTPUT]" per line (fields split at a tab when the line has one, else at blanks),
// blank lines and lines starting with # skipped. OUTPUT defaults to the query file's name with .out appended, in
// `folder` (-o; the current folder when -o is absent or '-').
std::vector<batch_entry> read_batch(const std::string& list, const std::string& folder) {
    std::ifstream in(list);
    if (!in) throw input_error(list, "cannot read the --batch list");
    const std::filesystem::path dir = folder.empty() || folder == "-" ? std::filesystem::path(".") : std::filesystem::path(folder);
    std::vector<batch_entry> out;
    std::set<std::string> outputs;
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const auto first = line.find_first_not_of(" \t");
        if (first == std::string::npos || line[first] == '#') continue;
        std::vector<std::string> fields;
        const char* separators = line.find('\t') != std::string::npos ? "\t" : " ";
        for (std::size_t at = 0; at < line.size();) {
            const auto end = std::min(line.find_first_of(separators, at), line.size());
            if (end > at) fields.push_back(line.substr(at, end - at));
            at = end + 1;
        }
        if (fields.size() > 2)
            throw input_error(list + ":" + std::to_string(number), "expected QUERY [OUTPUT], found " +
                                                                       std::to_string(fields.size()) + " fields");
        batch_entry e{fields[0], fields.size() == 2
                                     ? fields[1]
                                     : (dir / (std::filesystem::path(fields[0]).filename().string() + ".out")).string()};
        if (e.query == "-") throw input_error(list + ":" + std::to_string(number), "stdin cannot be a --batch query file");
        if (!outputs.insert(e.out).second)
            throw input_error(list + ":" + std::to_string(number), "output " + e.out + " is listed twice");
        out.push_back(std::move(e));
    }
    if (out.empty()) throw input_error(list, "the --batch list names no query file");
    return out;
}

// Fails with an output error unless the folder of `path` exists and is writable.
void check_writable_folder(const std::string& path) {
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    if (!std::filesystem::is_directory(dir) || ::access(dir.c_str(), W_OK) != 0)
        throw output_error(path, "its folder does not exist or is not writable");
}

// "[#########...........]  45 %, about 12 s left": a bar of 20, the percentage, and the time left at the rate so far.
std::string progress_bar(double fraction, double elapsed_s) {
    fraction = std::clamp(fraction, 0.0, 1.0);
    const int filled = static_cast<int>(fraction * 20 + 0.5);
    std::string s = "[" + std::string(filled, '#') + std::string(20 - filled, '.') + "] ";
    s += std::to_string(static_cast<int>(fraction * 100)) + " %";
    if (fraction > 0.02 && fraction < 1)
        s += ", about " + std::to_string(static_cast<long long>(elapsed_s * (1 - fraction) / fraction + 0.5)) + " s left";
    return s;
}

std::string seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f s", s);
    return buf;
}
std::string seconds(std::chrono::steady_clock::duration d) { return seconds(std::chrono::duration<double>(d).count()); }

std::string type_name(seq_type t) { return t == seq_type::dna ? "DNA" : "protein"; }

bool file_exists(const std::string& path) {
    struct stat st{};
    return ::stat(path.c_str(), &st) == 0;
}

// --matrix: a built-in name, or a file. A word that is neither is reported as an unknown name (a command-line error)
// rather than as a missing file.
substitution_matrix matrix_from_option(const std::string& name_or_path) {
    if (name_or_path.find('/') == std::string::npos && !file_exists(name_or_path)) {
        bool builtin = false;
        for (const auto& n : substitution_matrix::builtin_names()) {
            std::string a = n, b = name_or_path;
            for (auto& c : a) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            for (auto& c : b) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            builtin = builtin || a == b || b == "EDNAFULL";
        }
        if (!builtin) return substitution_matrix::builtin(name_or_path);  // throws the usage error listing names
    }
    return io::load_matrix(name_or_path);
}

// Words of `text` in lines of at most `width` characters, continuation lines indented by `indent`.
std::string wrapped(const std::string& text, const std::string& indent, std::size_t width) {
    std::string out, line;
    std::size_t at = 0;
    while (at < text.size()) {
        auto end = text.find(' ', at);
        if (end == std::string::npos) end = text.size();
        const std::string word = text.substr(at, end - at);
        at = end + 1;
        if (!line.empty() && line.size() + 1 + word.size() > width) {
            out += line + "\n" + indent;
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    return out + line;
}

}  // namespace

std::string conventions_text() {
    return "Conventions:\n"
           "  Gap costs follow BLAST: a gap of length k costs OPEN + k*EXTEND, both positive (BLAST 11/1 is\n"
           "    parasail/SSW/EMBOSS open 12 extend 1). Defaults: protein BLOSUM62 11/1 (BLOSUM45 14/2, BLOSUM50 13/2,\n"
           "    BLOSUM80/90 10/1, PAM30 9/1, PAM70 10/1, PAM250 14/2); DNA match 2, mismatch -3, gaps 5/2\n"
           "    (NUC.4.4 10/6).\n"
           "  Type (--seqtype auto): DNA when at least 90 % of the letters are ACGTUN, else protein; the queries\n"
           "    (each --batch file on its own) and the database by the same rule, every record checked against its\n"
           "    file. IUPAC codes (R Y K M S W B D H V) score as N with --match/--mismatch (NUC.4.4 scores them).\n"
           "  Outputs (-o, --dotplot, --batch outputs) never replace an input: naming one is an error (exit 2).\n"
           "  DNA queries are searched on both strands (--strand); a minus-strand hit is the reverse-complemented\n"
           "    query against the subject, printed with sstart > send (tabular, json, pair) and flag 16 (SAM).\n"
           "  Coordinates are 1-based and inclusive. Ids are the first word of the FASTA header.\n"
           "  Order: queries in input order; a query's hits by score (desc), then subject index in the database\n"
           "    (asc), then plus strand first. -k keeps a query's k best hits; those with an E-value above -e are\n"
           "    then dropped. One (the optimal) alignment per query, subject and strand.\n"
           "  Ties: the end cell is the maximal cell with the smallest query end, then the smallest subject end;\n"
           "    traceback prefers the diagonal over a gap in the subject over a gap in the query, and closing a\n"
           "    gap over extending it. Every backend and thread count prints byte-identical output.\n"
           "  E-values and bit scores as blastp -comp_based_stats 0 -seg no (Spouge's finite-size correction,\n"
           "    NCBI's parameters), from the whole database's size; --no-evalue prints NA instead.\n"
           "  --db-chunk only bounds memory: the database is read once, in chunks, with the same result.\n"
           "Output (--outfmt): 6 | \"6 COLUMN ...\" | 7 | \"7 COLUMN ...\" | sam | pair | json | \"json COLUMN ...\"\n"
           "  6 = qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore (BLAST).\n"
           "  Columns: std (the 12 above) " + wrapped(io::column_names(), "    ", 100) + "\n"
           "  sam: @SQ per subject with a hit, AS:i raw score, NM:i, ZE:f E-value, soft clips; queries without\n"
           "    hits as unmapped records. json: one object per hit and line, keys = column names.\n"
           "  Results go to stdout or -o FILE (written to a temporary name, renamed when complete).\n"
           "Exit codes: 0 success, 1 bad input data, 2 bad command line, 3 runtime or device failure (also\n"
           "  --backend gpu without a usable GPU), 4 out of memory, 5 output could not be written.\n";
}

align_command::align_command(CLI::App& app) {
    sub_ = app.add_subcommand("align", "Search every query against every database sequence (Smith-Waterman-Gotoh)");
    auto* sub = sub_;
    sub->add_option("QUERY", s_.query, "Query sequences: FASTA/FASTQ, plain or gzip/bgzip, '-' for stdin, or "
                                       "FILE:NAME:BEG-END for a region of an indexed FASTA (not with --batch)");
    sub->add_option("DB", s_.db, "Database sequences (same forms as QUERY), or a database made by swgpu makedb (PREFIX.swdb)");
    sub->add_option("--batch", s_.batch,
                    "A file listing query files, one per line (QUERY [OUTPUT]; # starts a comment): all are searched "
                    "in one pass over DB, and each gets its own output file, the one a run with that QUERY alone "
                    "writes (OUTPUT, else the query file's name with .out appended, in the -o directory, default "
                    "the current one). Then give only DB");

    matrix_ = sub->add_option("--matrix", s_.matrix,
                              "Substitution matrix: a built-in name (" + [] {
                                  std::string l;
                                  for (const auto& n : substitution_matrix::builtin_names())
                                      l += (l.empty() ? "" : ", ") + n;
                                  return l;
                              }() + ") or a file in NCBI text format [default: BLOSUM62 for protein, "
                                    "--match/--mismatch for DNA]");
    gap_open_ = sub->add_option("--gap-open", s_.gap_open, "Gap open penalty, BLAST convention [default: per matrix]");
    gap_extend_ =
        sub->add_option("--gap-extend", s_.gap_extend, "Gap extension penalty, BLAST convention [default: per matrix]");
    match_ = sub->add_option("--match", s_.match, "DNA match reward")->capture_default_str();
    mismatch_ = sub->add_option("--mismatch", s_.mismatch, "DNA mismatch score (negative)")->capture_default_str();
    match_->excludes(matrix_);
    mismatch_->excludes(matrix_);
    sub->add_option("--seqtype", s_.seqtype,
                    "Sequence type; auto: DNA when at least 90 % of the letters are ACGTUN, for the queries (each "
                    "--batch file on its own) and the database alike")
        ->check(CLI::IsMember({"auto", "protein", "dna"}))
        ->capture_default_str();
    strand_ = sub->add_option("--strand", s_.strand, "DNA strands of the query to search")
                  ->check(CLI::IsMember({"both", "plus", "minus"}))
                  ->capture_default_str();
    sub->add_option("-k,--max-target-seqs", s_.max_target_seqs, "Hits kept per query")->capture_default_str();
    auto* evalue = sub->add_option("-e,--evalue", s_.evalue, "Print hits with an E-value up to this")
                       ->capture_default_str();
    auto* no_evalue = sub->add_flag("--no-evalue", s_.no_evalue,
                                    "No statistics: print raw scores only (E-value and bit score are NA)");
    evalue->excludes(no_evalue);
    sub->add_option("--outfmt", s_.outfmt, "Output format: 6, \"6 COLUMN ...\", 7, sam, paf, pair, json (see below)")
        ->capture_default_str();
    sub->add_option("-o,--out", s_.out, "Output file, written atomically [default: stdout]");
    sub->add_option("-t,--threads", s_.threads, "CPU threads; 0 = one per hardware thread")->capture_default_str();
    sub->add_option("--backend", s_.backend,
                    "auto: the GPU when one is usable, else the CPU (with a notice); gpu without a usable GPU is "
                    "an error (exit 3)")
        ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
        ->capture_default_str();
    sub->add_option("--db-chunk", s_.db_chunk, "Read the database in chunks of about this many residues (bounds "
                                               "memory; same output)")
        ->capture_default_str();
    sub->add_option("--gpu-mem", s_.gpu_mem,
                    "Device memory the GPU backend may use, in bytes or with K, M, G (e.g. 4G) [default: what is "
                    "free]; a database that does not fit is searched in slices with the same output");
    sub->add_option("--gpus", s_.gpus,
                    "Number of GPUs the score pass of database search spreads over: the first N of those visible "
                    "(CUDA_VISIBLE_DEVICES chooses them); 0 = all. The database is cut by residues; same output")
        ->capture_default_str();
    sub->add_option("--gpu-align", s_.gpu_align,
                    "With the GPU backend, where the printed alignments are computed: gpu (auto) aligns them on the "
                    "GPU after the search, the largest pairs on CPU threads beside it; cpu aligns them on CPU threads "
                    "while the GPU searches for the last queries. Same output either way")
        ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
        ->capture_default_str();
    sub->add_option("--mode", s_.mode,
                    "How pairs are scored: search runs every pair through the database-search pass; pairwise aligns "
                    "each (query, subject) pair with the whole GPU (or every CPU thread) in linear memory, for long "
                    "sequences; auto takes pairwise for pairs of at least 2^27 cells whose shorter sequence has at "
                    "least 4096 residues. Same output either way")
        ->check(CLI::IsMember({"auto", "search", "pairwise"}))
        ->capture_default_str();
    sub->add_option("--long-policy", s_.long_policy,
                    "Score pass of long pairs on the GPU: antidiagonal (bands of rows, cells along anti-diagonals in "
                    "each tile), compensation (the engine's tiles with the compensation weighted scan; score only: "
                    "alignments still come from the bands), auto: the faster by the measurements in "
                    "data/long_pair_policy.tsv. Same output either way")
        ->check(CLI::IsMember({"auto", "antidiagonal", "compensation"}))
        ->capture_default_str();
    sub->add_flag("--eqx", s_.eqx, "CIGARs (cigar column, SAM, PAF cg:Z) with = for identities and X for mismatches");
    sub->add_option("--dotplot", s_.dotplot, "Also write an SVG dot plot of the printed alignments to this file");
    sub->add_flag("--skip-bad", s_.skip_bad, "Skip bad sequence records with a warning instead of failing");
    auto* verbose = sub->add_flag("-v,--verbose", s_.verbose, "Report what is done on stderr");
    auto* quiet = sub->add_flag("-q,--quiet", s_.quiet, "Only errors on stderr");
    verbose->excludes(quiet);
    sub->footer(conventions_text());
}

int align_command::run(const std::string& command_line) {
    process_group& group = process_group::world();
    if (group.size() == 1) return run_here(command_line);
    // Under MPI an error of one rank ends every rank (the others would wait for it forever): the error's line, then
    // MPI_Abort with its exit code.
    try {
        return run_here(command_line);
    } catch (const error& e) {
        group.abort(static_cast<int>(e.code()), e.what());
    } catch (const std::bad_alloc&) {
        group.abort(static_cast<int>(exit_code::out_of_memory), "out of memory");
    } catch (const std::exception& e) {
        group.abort(static_cast<int>(exit_code::runtime_failure), e.what());
    }
}

int align_command::run_here(const std::string& command_line) {
    using clock = std::chrono::steady_clock;
    const auto started = clock::now();
    process_group& group = process_group::world();
    // Under MPI, rank 0 speaks for the run.
    const messages msg{s_.verbose && group.rank() == 0, s_.quiet || group.rank() != 0};

    // Options that need no input to check.
    io::output_format fmt = io::parse_outfmt(s_.outfmt);
    fmt.eqx = s_.eqx;
    if (s_.max_target_seqs < 1)
        throw usage_error("-k/--max-target-seqs must be at least 1 (got " + std::to_string(s_.max_target_seqs) + ")");
    if (!(s_.evalue > 0)) throw usage_error("-e/--evalue must be positive");
    if (s_.db_chunk < 1) throw usage_error("--db-chunk must be at least 1 residue (got " + std::to_string(s_.db_chunk) + ")");
    if (s_.gpus < 0) throw usage_error("--gpus must be 0 (every GPU) or more (got " + std::to_string(s_.gpus) + ")");
    std::size_t gpu_mem = parse_gpu_mem(s_.gpu_mem);
    if (s_.threads < 0 || s_.threads > 4096)
        throw usage_error("-t/--threads must lie within 0..4096 (0: one per hardware thread; got " +
                          std::to_string(s_.threads) + ")");
    if (gap_open_->count() && s_.gap_open < 0)
        throw usage_error("--gap-open must be >= 0 (got " + std::to_string(s_.gap_open) + ")");
    if (gap_extend_->count() && s_.gap_extend < 1)
        throw usage_error("--gap-extend must be >= 1 (got " + std::to_string(s_.gap_extend) + ")");
    // Positionals: QUERY DB, or with --batch only DB.
    if (!s_.batch.empty()) {
        if (!s_.db.empty()) throw usage_error("with --batch, give only DB (the queries come from " + s_.batch + ")");
        if (s_.query.empty()) throw usage_error("DB is required");
        s_.db = std::move(s_.query);
        s_.query = s_.batch;  // for messages; the files are the list's
        if (!s_.dotplot.empty()) throw usage_error("--dotplot draws one run's alignments; it does not go with --batch");
    } else {
        if (s_.query.empty()) throw usage_error("QUERY is required");
        if (s_.db.empty()) throw usage_error("DB is required");
    }
    if (s_.query == "-" && s_.db == "-") throw usage_error("QUERY and DB cannot both be stdin ('-')");
    const std::vector<batch_entry> batch = s_.batch.empty() ? std::vector<batch_entry>{} : read_batch(s_.batch, s_.out);

    // No output may replace an input or another output (checked before anything is read or written).
    {
        std::vector<io::named_file> outputs, inputs;
        if (batch.empty()) outputs.push_back({"-o", s_.out});
        if (!s_.dotplot.empty()) outputs.push_back({"--dotplot", s_.dotplot});
        for (const auto& b : batch) outputs.push_back({"the output of --batch entry " + b.query + ",", b.out});
        if (batch.empty()) {
            inputs.push_back({"the query file", io::parse_source(s_.query).path});
        } else {
            inputs.push_back({"the --batch list", s_.batch});
            for (const auto& b : batch) inputs.push_back({"the query file", io::parse_source(b.query).path});
        }
        inputs.push_back({"the database", s_.db != "-" && io::is_database_file(s_.db)
                                              ? io::database_path(s_.db)
                                              : io::parse_source(s_.db).path});
        if (!s_.matrix.empty() && file_exists(s_.matrix)) inputs.push_back({"the --matrix file", s_.matrix});
        io::refuse_overwriting(outputs, inputs);
    }

    // Under MPI, the ranks of a host take its GPUs in turn, each making its own the only one visible before the first
    // CUDA call (app/align/gpu_share.hpp), and ranks that share a GPU share its memory.
    std::optional<rank_gpu> shared_gpu;
    if (group.size() > 1 && s_.backend != "cpu") {
        int device_files = 0;
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator("/dev", ec)) {
            const std::string name = e.path().filename().string();
            if (name.size() > 6 && name.rfind("nvidia", 0) == 0 &&
                std::all_of(name.begin() + 6, name.end(), [](unsigned char c) { return std::isdigit(c); }))
                ++device_files;
        }
        shared_gpu = gpu_for_rank(std::getenv("CUDA_VISIBLE_DEVICES"), device_files, group.local_rank(),
                                  group.local_size());
        if (shared_gpu) ::setenv("CUDA_VISIBLE_DEVICES", shared_gpu->visible.c_str(), 1);
    }
    // The backend, before any work: --backend gpu without a device is a device failure (exit 3).
    const bool use_gpu = s_.backend == "gpu" || (s_.backend == "auto" && gpu::available());
    if (s_.backend == "gpu" && !gpu::available())
        throw runtime_failure("--backend gpu: no usable GPU (" + gpu::build_info() +
                              "); use --backend cpu, or --backend auto to fall back to the CPU");
    if (s_.backend == "auto" && !use_gpu)
        msg.notice("no usable GPU (" + gpu::build_info() + "); searching on the CPU");
    int gpu_device = 0;
    if (use_gpu && group.size() > 1) {
        const int n = std::max(1, gpu::device_count());
        int sharing = 0;
        if (shared_gpu && n == 1) {  // this rank's GPU alone is visible
            sharing = shared_gpu->sharing;
        } else {  // the runtime saw every GPU anyway (started before), or none was known: pick among them
            gpu_device = group.local_rank() % n;
            sharing = (group.local_size() - gpu_device + n - 1) / n;
        }
        gpu::use_device(gpu_device);
        if (sharing > 1 && gpu_mem == 0) gpu_mem = gpu::free_memory(gpu_device) / 8 * 7 / sharing;
    }
    // Starting the GPU's context takes a noticeable fraction of a second: overlap it with reading the inputs.
    double gpus_started = 0;  // seconds from the start to every GPU's context (written by the warm-up, read after it)
    std::shared_future<void> gpu_ready;  // shared: the workers of several GPUs wait on it from their threads
    // With alignments to compute on the GPU, device memory for them is mapped then too (not with --gpu-mem: the
    // search may use all of that budget).
    const bool keep_align_memory = gpu_mem == 0 && io::needs_alignments(fmt) && s_.gpu_align != "cpu";
    // The other GPUs of a spread score pass start then too, a thread each (one process drives them all; under MPI,
    // each rank its own).
    if (use_gpu)
        gpu_ready = std::async(std::launch::async, [keep_align_memory, gpu_device, one_process = group.size() == 1,
                                                    gpus = s_.gpus, &gpus_started, started] {
                        std::vector<std::jthread> others;  // joined when cleared, or when a failure unwinds
                        if (one_process) {
                            const int n = gpu::device_count();
                            const int used = gpus == 0 ? n : std::min(gpus, n);
                            for (int d = 1; d < used; ++d) others.emplace_back([d] { gpu::start_context(d); });
                        }
                        gpu::use_device(gpu_device);
                        gpu::warm_up(keep_align_memory);
                        others.clear();
                        gpus_started = std::chrono::duration<double>(clock::now() - started).count();
                    }).share();

    io::read_options ropt;
    ropt.skip_bad = s_.skip_bad;
    ropt.on_skip = [&msg](const std::string& m) { msg.warning(m + "; record skipped (--skip-bad)"); };
    ropt.on_warning = [&msg](const std::string& m) { msg.warning(m); };

    // --batch: a query file that a run with it alone would refuse is refused here, with the same message, before its
    // error line goes out; the other files are searched and written, and the run ends with the first refused file's
    // exit code (rank 0 speaks under MPI).
    std::vector<std::pair<std::size_t, error>> refusals;  // (entry of the list, why)
    const auto refuse = [&](std::size_t k, const error& e) {
        if (group.rank() == 0) std::cerr << "swgpu: error: " << e.what() << '\n';
        refusals.emplace_back(k, e);
    };

    // DB is a FASTA/FASTQ file (or region), or a database written by `swgpu makedb`; opened when first needed.
    std::optional<io::sequence_reader> db_text;
    std::optional<io::database_file> db_file;
    const auto open_db = [&] {
        if (db_text || db_file) return;
        if (s_.db != "-" && io::is_database_file(s_.db)) db_file.emplace(s_.db);
        else db_text.emplace(s_.db, ropt);
    };
    // On the GPU the first chunks are smaller (an eighth of --db-chunk, then a quarter, a half): the device starts
    // after a short read, and the reader thread stays ahead of it from then on. Under MPI every rank cuts the chunks
    // alike whatever its backend (a rank whose GPU is unusable searches on its CPU), since rank r searches chunk k
    // when k mod P = r.
    // Under MPI the chunks are --db-chunk / P residues: rank r searches chunk k when k mod P = r, and P times as many
    // chunks keep the ranks' shares within about 2 % of each other (computed from this schedule: whole chunks of 10^8
    // residues would give the busiest of 4 ranks 10 % more than its share of db20k x100, of 8 ranks 33 %).
    const std::uint64_t db_chunk_option = static_cast<std::uint64_t>(s_.db_chunk);
    const std::uint64_t db_chunk = group.size() > 1
                                       ? std::max<std::uint64_t>(1, db_chunk_option / std::uint64_t(group.size()))
                                       : db_chunk_option;
    std::uint64_t chunk_limit = use_gpu || group.size() > 1 ? std::max<std::uint64_t>(1, db_chunk / 8) : db_chunk;
    // --seqtype auto types the queries, and the database by its first chunk, with one rule (core/align/sequence.hpp); every
    // record of both is checked against its file's type, so a mixed file is an error naming its first odd record.
    const bool auto_type = s_.seqtype == "auto";
    seq_type db_type = seq_type::protein;
    bool first_chunk = true;
    std::uint64_t db_records_read = 0;
    const auto read_db_chunk = [&](sequence_set& chunk) {
        const std::uint64_t limit = chunk_limit;
        chunk_limit = std::min(db_chunk, chunk_limit * 2);
        if (!(db_file ? db_file->read_chunk(chunk, limit) : db_text->read_chunk(chunk, limit))) return false;
        if (auto_type) {
            if (first_chunk) db_type = detect_type(chunk);
            if (const auto k = first_disagreeing(chunk, db_type); k < chunk.size())
                throw_mixed_types(chunk, k, db_type, db_records_read + 1);
        }
        db_records_read += chunk.size();
        first_chunk = false;
        return true;
    };
    const auto types_disagree = [&](seq_type queries_type, const std::string& query_file) {
        return usage_error(query_file + ": the queries look like " + type_name(queries_type) + " but the database " +
                           s_.db + " looks like " + type_name(db_type) +
                           " (DNA: at least 90 % of the letters are ACGTUN); give --seqtype dna or --seqtype "
                           "protein to search both as that type");
    };
    std::optional<sequence_set> first_chunk_ahead;  // --batch: the database's first chunk, read to type it early

    // Queries, typed. With --batch, each listed file is read and typed on its own, as a run with it alone would.
    const auto typed = [&](const sequence_set& set) {
        if (!auto_type) return s_.seqtype == "dna" ? seq_type::dna : seq_type::protein;
        const seq_type t = detect_type(set);
        if (const auto k = first_disagreeing(set, t); k < set.size()) throw_mixed_types(set, k, t);
        return t;
    };
    std::vector<sequence_set> query_files;  // letters of each accepted file (one file without --batch)
    std::vector<std::size_t> query_entry;   // each one's entry in the --batch list
    seq_type type = seq_type::protein;
    if (batch.empty()) {
        sequence_set q = io::read_all(s_.query, ropt);
        if (q.empty()) throw input_error(s_.query, "no sequences found");
        type = typed(q);
        query_files.push_back(std::move(q));
        query_entry.push_back(0);
    } else {
        std::vector<seq_type> types;
        for (std::size_t k = 0; k < batch.size(); ++k) {
            try {
                sequence_set one = io::read_all(batch[k].query, ropt);
                if (one.empty()) throw input_error(batch[k].query, "no sequences found");
                types.push_back(typed(one));
                query_files.push_back(std::move(one));
                query_entry.push_back(k);
            } catch (const error& e) {
                refuse(k, e);
            }
        }
        msg.info(std::to_string(batch.size()) + " query files from " + s_.batch);
        if (auto_type && !query_files.empty()) {
            // Each file is held against the database's type, as alone: the first chunk is read now to know it.
            open_db();
            sequence_set chunk;
            if (read_db_chunk(chunk)) first_chunk_ahead = std::move(chunk);
            std::size_t kept = 0;
            for (std::size_t i = 0; i < query_files.size(); ++i) {
                if (types[i] != db_type) {
                    refuse(query_entry[i], types_disagree(types[i], batch[query_entry[i]].query));
                    continue;
                }
                if (kept != i) {  // (a self-move would empty the set)
                    query_files[kept] = std::move(query_files[i]);
                    query_entry[kept] = query_entry[i];
                }
                ++kept;
            }
            query_files.resize(kept);
            query_entry.resize(kept);
        }
        type = auto_type ? db_type : s_.seqtype == "dna" ? seq_type::dna : seq_type::protein;
    }
    const auto finish_refused = [&] {
        std::sort(refusals.begin(), refusals.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        if (group.rank() == 0)
            std::cerr << "swgpu: error: " << refusals.size() << " of the " << batch.size() << " query files of "
                      << s_.batch << " were refused (above); the outputs of the others were written\n";
        return static_cast<int>(refusals.front().second.code());
    };
    if (query_files.empty()) return finish_refused();  // --batch, every file refused
    if (type == seq_type::protein) {
        if (match_->count() || mismatch_->count())
            throw usage_error("--match/--mismatch score DNA, but the queries are protein; use --matrix, or "
                              "--seqtype dna");
        if (strand_->count())
            throw usage_error("--strand applies to DNA, but the queries are protein; or give --seqtype dna");
    }

    // Scoring.
    scoring sc{type == seq_type::dna && s_.matrix.empty() ? substitution_matrix::match_mismatch(s_.match, s_.mismatch)
               : s_.matrix.empty()                        ? substitution_matrix::builtin("BLOSUM62")
                                                          : matrix_from_option(s_.matrix),
               {}, type};
    sc.gaps = default_gaps(sc.matrix, type);
    if (gap_open_->count()) sc.gaps.open = s_.gap_open;
    if (gap_extend_->count()) sc.gaps.extend = s_.gap_extend;
    validate(sc);
    if (!s_.no_evalue && !evalue_calculator::supported(sc))
        evalue_calculator(sc, 0, 0);  // throws the usage error that names the supported pairs
    msg.info("scoring: " + io::describe_scoring(sc) + "; " + type_name(type) + (use_gpu ? "; GPU" : "; CPU"));

    // Fail on an unwritable destination before the search (with --batch the files are opened as they are written,
    // but their folders are checked now).
    std::optional<io::output_file> out;
    // Under MPI, rank 0 writes.
    const bool writes = group.rank() == 0;
    if (batch.empty() && writes) out.emplace(s_.out);
    for (const auto& b : batch) check_writable_folder(b.out);
    std::optional<io::output_file> dotplot_file;
    if (!s_.dotplot.empty() && writes) dotplot_file.emplace(s_.dotplot);

    // Encode; DNA is searched on the strands asked for. With --batch each file on its own (a letter its matrix cannot
    // read refuses that file only), then the files one after the other: file k of the list holds queries
    // [batch_first[j], batch_first[j + 1]) where batch_files[j] = k.
    query_strands queries;
    queries.search_plus = type == seq_type::protein || s_.strand != "minus";
    queries.search_minus = type == seq_type::dna && s_.strand != "plus";
    const auto unknown_letters = [&](const std::string& source, std::uint64_t unknown) {
        if (!unknown) return;
        msg.warning(source + ": " + std::to_string(unknown) + " residues are not letters of " + sc.matrix.name() +
                    (type == seq_type::dna ? " (IUPAC ambiguity codes such as R, Y, K, or X)" : "") +
                    " and were read as " + std::string(1, sc.matrix.letter(sc.matrix.fallback_code())));
    };
    std::vector<std::size_t> batch_first{0}, batch_files;
    if (batch.empty()) {
        queries.plus = std::move(query_files.front());
        if (queries.search_minus) queries.minus = reverse_complement(queries.plus);
        unknown_letters(s_.query, encode(queries.plus, sc.matrix));
        if (queries.search_minus) encode(queries.minus, sc.matrix);
    } else {
        for (std::size_t i = 0; i < query_files.size(); ++i) {
            sequence_set& plus = query_files[i];
            sequence_set minus;
            try {
                if (queries.search_minus) minus = reverse_complement(plus);
                unknown_letters(plus.source, encode(plus, sc.matrix));
                if (queries.search_minus) encode(minus, sc.matrix);
            } catch (const error& e) {
                refuse(query_entry[i], e);
                continue;
            }
            for (std::size_t q = 0; q < plus.size(); ++q) {
                queries.plus.add(std::move(plus.names[q]), plus[q]);
                if (queries.search_minus) queries.minus.add(std::move(minus.names[q]), minus[q]);
            }
            sequence_set{}.residues.swap(plus.residues);  // freed as it is copied
            batch_first.push_back(queries.plus.size());
            batch_files.push_back(query_entry[i]);
        }
        if (batch_files.empty()) return finish_refused();
        queries.plus.source = queries.minus.source = s_.batch;
        queries.plus.encoded = queries.minus.encoded = true;
    }
    query_files.clear();
    if (queries.plus.size() > std::numeric_limits<std::uint32_t>::max() / 2)
        throw input_error(s_.query, "too many queries for one run; split the file");
    msg.info(std::to_string(queries.size()) + " queries, " + std::to_string(queries.plus.total_residues()) +
             " residues, from " + s_.query);

    // The score pass over the database, chunk by chunk.
    thread_pool pool(static_cast<unsigned>(s_.threads));
    open_db();
    const chunk_reader next_chunk = [&](sequence_set& chunk) {
        if (first_chunk_ahead) {
            chunk = std::move(*first_chunk_ahead);
            first_chunk_ahead.reset();
            return true;
        }
        const bool was_first = first_chunk;
        if (!read_db_chunk(chunk)) return false;
        if (was_first && auto_type && db_type != type) throw types_disagree(type, s_.query);
        return true;
    };
    score_pass search;
    if (use_gpu)
        search = [&sc, gpu_mem, &gpu_ready](const sequence_set& q, const sequence_set& d, const search_options& o) {
            if (gpu_ready.valid()) gpu_ready.get();  // rethrows a device failure of the warm-up
            search_options budgeted = o;
            budgeted.device_memory = gpu_mem;
            return gpu::search(q, d, sc, budgeted);
        };
    else
        search = [&sc, &pool](const sequence_set& q, const sequence_set& d, const search_options& o) {
            return search_cpu(q, d, sc, o, pool);
        };
    // Several GPUs: the score pass spread over them, each chunk cut by residues (core/align/search/multi_device.hpp). Every GPU gets
    // --gpu-mem (or what it has free). SWGPU_LOGICAL_DEVICES=K (a test option) makes each GPU count K times, the K
    // workers of a GPU sharing its memory: the multi-GPU path, exercised on one GPU.
    std::optional<spread_pass> spread;
    std::vector<int> long_devices;  // long pairs split their forward pass over these (one device: empty)
    if (use_gpu && group.size() == 1) {  // under MPI, each rank drives one GPU
        const int physical = gpu::device_count();
        const int used = s_.gpus == 0 ? physical : std::min(s_.gpus, physical);
        int logical = 1;
        if (const char* e = std::getenv("SWGPU_LOGICAL_DEVICES")) logical = std::clamp(std::atoi(e), 1, 64);
        if (used * logical > 1) {
            for (int d = 0; d < used; ++d)
                for (int k = 0; k < logical; ++k) long_devices.push_back(d);
            std::vector<score_pass> passes;
            std::vector<chunk_preparer> preparers;
            for (int d = 0; d < used; ++d) {
                std::size_t memory = gpu_mem;
                if (logical > 1) memory = (gpu_mem ? gpu_mem : gpu::free_memory(d) / 8 * 7) / logical;
                for (int k = 0; k < logical; ++k) {
                    passes.push_back([&sc, d, memory, gpu_ready](const sequence_set& q, const sequence_set& db,
                                                                 const search_options& o) {
                        if (gpu_ready.valid()) gpu_ready.get();
                        gpu::use_device(d);
                        search_options budgeted = o;
                        budgeted.device_memory = memory;
                        return gpu::search(q, db, sc, budgeted);
                    });
                    preparers.push_back([&sc, d, gpu_mem](const sequence_set& run) {
                        gpu::use_device(d);
                        return gpu::prepare_chunk(run, sc, gpu_mem);
                    });
                }
            }
            spread.emplace(std::move(passes), std::move(preparers));
            search = [&spread](const sequence_set& q, const sequence_set& d, const search_options& o) {
                return (*spread)(q, d, o);
            };
            msg.info("score pass spread over " + std::to_string(spread->workers()) + " workers (" +
                     std::to_string(used) + " GPU(s)" +
                     (logical > 1 ? " x " + std::to_string(logical) + " logical devices" : std::string()) + ")");
        }
    }
    progress_line progress(!s_.quiet);
    // Long pairs (--mode): scored one at a time on the whole GPU, or on every CPU thread, in linear memory
    // (core/align/long_pair/long_pair.hpp). With alignments to print, the score pass of a long pair computes its alignment too and keeps
    // it for the finishing step, so the pair's forward pass runs once.
    const bool wants_alignments = io::needs_alignments(fmt) || dotplot_file.has_value();
    std::map<std::tuple<std::uint64_t, std::uint64_t, int>, alignment> long_alignments;
    const auto residues_hash = [](std::span<const std::uint8_t> r) {
        std::uint64_t h = 1469598103934665603ull ^ r.size();
        for (auto c : r) h = (h ^ c) * 1099511628211ull;
        return h;
    };
    const auto long_backend = [&](std::span<const std::uint8_t> q, std::span<const std::uint8_t> d)
        -> std::unique_ptr<long_pair::backend> {
        std::unique_ptr<long_pair::backend> be;
        if (use_gpu) {
            if (gpu_ready.valid()) gpu_ready.get();
            be = gpu::long_pair_backend(q, d, sc, gpu_mem, long_devices);
        } else {
            be = std::make_unique<long_pair::cpu_backend>(q, d, sc, pool);
        }
        // On a terminal: the forward pass's fraction done and the time left, then the traceback.
        const std::string what = "swgpu: long pair " + std::to_string(q.size()) + " x " + std::to_string(d.size());
        be->progress = [&progress, what, start = clock::now()](double fraction) {
            if (fraction < 0) {
                progress.show(what + ": tracing back");
                return;
            }
            const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
            progress.show(what + ": forward pass " + progress_bar(fraction, elapsed));
        };
        return be;
    };
    std::size_t long_pairs = 0;
    double long_cells = 0, long_seconds = 0;
    const auto align_long = [&](std::span<const std::uint8_t> q, std::span<const std::uint8_t> d) {
        const auto t0 = clock::now();
        auto be = long_backend(q, d);
        long_pair::timing t;
        alignment a = long_pair::align(*be, std::int64_t(q.size()), std::int64_t(d.size()), sc, &t);
        ++long_pairs;
        long_cells += double(q.size()) * double(d.size());
        long_seconds += std::chrono::duration<double>(clock::now() - t0).count();
        progress.clear();
        msg.info("long pair " + std::to_string(q.size()) + " x " + std::to_string(d.size()) + ": score " +
                 std::to_string(a.score) + ", forward pass " + seconds(t.forward_s) + ", end cell " + seconds(t.end_s) +
                 ", traceback " + seconds(t.traceback_s));
        return a;
    };
    long_pair_split split;
    if (s_.mode == "pairwise") split.long_pair = [](std::size_t, std::size_t) { return true; };
    else if (s_.mode == "auto")
        split.long_pair = [](std::size_t a, std::size_t b) {
            return std::min(a, b) >= long_pair_min_side && double(a) * double(b) >= default_long_pair_cells;
        };
    split.long_score = [&](const sequence_set& qset, std::size_t qi, const sequence_set& dset, std::size_t di) {
        const auto q = qset[qi], d = dset[di];
        progress.show("swgpu: aligning a long pair (" + std::to_string(q.size()) + " x " + std::to_string(d.size()) +
                      " residues)");
        if (wants_alignments) {
            alignment a = align_long(q, d);
            const int score = a.score;
            long_alignments[{residues_hash(q), residues_hash(d), score}] = std::move(a);
            return score;
        }
        const auto t0 = clock::now();
        const double cells = double(q.size()) * double(d.size());
        const bool compensation = use_gpu && (s_.long_policy == "compensation" ||
                                              (s_.long_policy == "auto" &&
                                               long_pair::fastest_policy(cells) == long_pair::policy::compensation));
        int score = 0;
        if (compensation) {
            if (gpu_ready.valid()) gpu_ready.get();
            gpu::schedule_choice choice;
            choice.sched = gpu::schedule::tiled_p2p;
            score = gpu::sw_score(q, d, sc, choice).end.score;
        } else {
            auto be = long_backend(q, d);
            score = long_pair::score(*be, std::int64_t(q.size()), std::int64_t(d.size()), sc).score;
        }
        ++long_pairs;
        long_cells += double(q.size()) * double(d.size());
        long_seconds += std::chrono::duration<double>(clock::now() - t0).count();
        return score;
    };
    // Short queries against long subjects (reads against a genome): the subjects in overlapping windows, so that the
    // search pass runs at database speed (core/align/search/subject_windows.hpp); the alignments of such hits come from the
    // windows that reach the score. Not with --mode pairwise, where every pair is a long pair.
    subject_windows windows(sc);
    if (s_.mode != "pairwise") {
        search = [inner = search, &windows](const sequence_set& q, const sequence_set& d, const search_options& o) {
            return windows.search(q, d, o, inner);
        };
    }
    if (split.long_pair) {
        search = [inner = search, &split](const sequence_set& q, const sequence_set& d, const search_options& o) {
            return split_score_pass(q, d, o, inner, split);
        };
    }
    search_run_options run;
    run.max_hits = static_cast<std::size_t>(s_.max_target_seqs);
    run.evalues = !s_.no_evalue;
    run.max_evalue = s_.evalue;
    run.alignments = wants_alignments;
    if (use_gpu && !std::getenv("SWGPU_NO_PREPARE")) {
        if (spread) run.prepare = [&spread](const sequence_set& chunk) { return spread->prepare(chunk); };
        else
            run.prepare = [&sc, gpu_mem, gpu_device](const sequence_set& chunk) {
                gpu::use_device(gpu_device);
                return gpu::prepare_chunk(chunk, sc, gpu_mem);
            };
    }
    if (s_.mode != "pairwise")
        run.window_aligner = [&windows](const scored_pair& p) { return windows.align(p); };
    if (split.long_pair) {
        run.long_min_cells = s_.mode == "pairwise" ? 0 : default_long_pair_cells;
        run.long_min_side = s_.mode == "pairwise" ? 0 : long_pair_min_side;
        run.long_aligner = [&](const scored_pair& p) {
            const auto it = long_alignments.find({residues_hash(p.query), residues_hash(p.subject), p.score});
            if (it != long_alignments.end()) return it->second;
            return align_long(p.query, p.subject);
        };
    }
    // With the GPU backend the alignments are computed on the GPU after the search (the largest pairs on the CPU
    // threads beside it), or with --gpu-align cpu on the CPU threads while the GPU searches for the last queries (the
    // GPU then runs the queries in batches, two in flight, which costs it about 1.5 %).
    gpu::align_timing gpu_aligned;
    if (use_gpu && run.alignments) {
        if (s_.gpu_align == "cpu") {
            run.overlap = true;
        } else {
            run.device_aligner = [&sc, gpu_mem, &gpu_aligned](std::span<const scored_pair> pairs) {
                return gpu::align_scored(pairs, sc, gpu_mem, &gpu_aligned);
            };
        }
    }
    // MPI: chunk k is searched by rank k mod P; rank 0 merges every rank's scan (core/align/search/pipeline.hpp, merge_scan).
    if (group.size() > 1) {
        const int rank = group.rank(), size = group.size();
        run.searched_here = [rank, size](std::size_t chunk) { return chunk % std::size_t(size) == std::size_t(rank); };
        if (db_file)  // the other ranks' chunks are passed without reading them (same chunk sizes as next_chunk)
            run.skip_chunk = [&](std::uint64_t& residues, std::uint64_t& sequences) {
                if (first_chunk_ahead) {  // read ahead to type the database (--batch): passed as it is
                    residues = first_chunk_ahead->total_residues();
                    sequences = first_chunk_ahead->size();
                    first_chunk_ahead.reset();
                    return true;
                }
                const std::uint64_t limit = chunk_limit;
                chunk_limit = std::min(db_chunk, chunk_limit * 2);
                const bool skipped = db_file->skip_chunk(limit, residues, sequences);
                db_records_read += sequences;  // records of later chunks keep their numbers in messages
                return skipped;
            };
        run.combine = [&group, &msg, max_hits = static_cast<std::size_t>(s_.max_target_seqs)](database_scan&& mine) -> std::optional<database_scan> {
            auto parts = group.gather({false, pack_scan(mine)});
            if (!parts) return std::nullopt;
            for (std::size_t r = 1; r < parts->size(); ++r) merge_scan(mine, unpack_scan((*parts)[r].bytes), max_hits);
            msg.info("merged the scans of " + std::to_string(parts->size()) + " MPI ranks");
            return std::move(mine);
        };
        msg.info(std::to_string(size) + " MPI ranks; rank r searches chunks r, r + " + std::to_string(size) +
                 ", r + " + std::to_string(2 * size) + ", ... of " + std::to_string(db_chunk) + " residues");
    }
    const auto exhausted = [&] { return db_file ? db_file->exhausted() : db_text->exhausted(); };
    const search_results results =
        search_and_finish(queries, sc, run, next_chunk, exhausted, search, pool, [&](const scan_progress& p) {
            // A database file knows its size: a bar and the time left. A FASTA file: how much was searched.
            const std::uint64_t total = db_file ? db_file->total_residues() : 0;
            if (total > 0 && p.residues >= total) {
                progress.show("swgpu: database searched; computing " +
                              std::string(wants_alignments ? "alignments" : "E-values") + " of the best hits");
            } else if (total > 0) {
                const double elapsed = std::chrono::duration<double>(clock::now() - started).count();
                progress.show("swgpu: searching " + progress_bar(double(p.residues) / double(total), elapsed));
            } else {
                progress.show("swgpu: searched " + std::to_string(p.sequences) + " database sequences (" +
                              std::to_string(p.residues) + " residues)");
            }
        });
    if (!results.finished_here) return 0;  // another rank finishes and writes
    const database_scan& scan = results.scan;
    const auto& hits = results.hits;
    const auto scanned = results.score_pass_done;
    const auto finished = clock::now();
    progress.clear();
    unknown_letters(s_.db, scan.unknown_residues);
    if (db_text && db_text->records_skipped())
        msg.warning(s_.db + ": " + std::to_string(db_text->records_skipped()) + " records skipped (--skip-bad)");
    msg.info("database " + s_.db + ": " + std::to_string(scan.sequences) + " sequences, " +
             std::to_string(scan.residues) + " residues, " + std::to_string(scan.chunks) + " chunk(s); score pass " +
             seconds(scanned - started) + " (backend " + seconds(scan.backend_s) + ", waiting for the reader " +
             seconds(scan.reader_wait_s) + ", of which for the first chunk " + seconds(scan.first_chunk_wait_s) +
             "; start-up before the scan " +
             seconds(scan.began > started ? std::chrono::duration<double>(scan.began - started).count() : 0.0) +
             (gpu_ready.valid() ? (gpu_ready.wait(), ", GPUs started " + seconds(gpus_started) + " after the start")
                                 : std::string()) +
             ", keeping hit subjects " + seconds(scan.keep_subjects_s) + ")");

    if (batch.empty()) {
        io::run_header header{SWGPU_VERSION, command_line, s_.query, s_.db};
        io::write_results(fmt, header, io::results_view{sc, queries, scan, hits}, *out);
        if (dotplot_file) io::write_dotplot(io::results_view{sc, queries, scan, hits}, *dotplot_file);
        out->commit();
        if (dotplot_file) dotplot_file->commit();
    }
    // --batch: each file's queries and hits, written as a run with that file alone writes them.
    for (std::size_t j = 0; j < batch_files.size(); ++j) {
        const std::size_t k = batch_files[j], b = batch_first[j], e = batch_first[j + 1];
        query_strands part;
        part.search_plus = queries.search_plus;
        part.search_minus = queries.search_minus;
        part.plus.source = batch[k].query;
        part.minus.source = batch[k].query;
        part.plus.encoded = queries.plus.encoded;
        part.minus.encoded = queries.minus.encoded;
        for (std::size_t q = b; q < e; ++q) {
            part.plus.add(queries.plus.names[q], queries.plus[q]);
            if (queries.search_minus) part.minus.add(queries.minus.names[q], queries.minus[q]);
        }
        const std::vector<std::vector<printed_hit>> part_hits(hits.begin() + static_cast<std::ptrdiff_t>(b),
                                                              hits.begin() + static_cast<std::ptrdiff_t>(e));
        io::output_file file(batch[k].out);
        io::run_header header{SWGPU_VERSION, command_line, batch[k].query, s_.db};
        io::write_results(fmt, header, io::results_view{sc, part, scan, part_hits}, file);
        file.commit();
    }
    if (long_pairs > 0)
        msg.info(std::to_string(long_pairs) + " long pair(s) aligned pairwise: " + seconds(long_seconds) + ", " +
                 std::to_string(long_cells / std::max(long_seconds, 1e-9) / 1e9) + " GCUPS");

    std::size_t printed = 0;
    for (const auto& h : hits) printed += h.size();
    std::string finishing = (run.alignments ? "alignments " : "E-values (the format prints no alignment) ") +
                            seconds(finished - scanned) + " after the score pass";
    if (gpu_aligned.pairs > 0)
        finishing += " (" + std::to_string(gpu_aligned.pairs) + " on the GPU in " + seconds(gpu_aligned.total_s) +
                     ", kernel " + seconds(gpu_aligned.kernel_s) + ")";
    if (results.queries_finished_during_search > 0)
        finishing += " (" + std::to_string(results.queries_finished_during_search) + " of " +
                     std::to_string(queries.size()) + " queries finished during it)";
    msg.info(std::to_string(printed) + " hits written to " +
             (batch.empty() ? out->name() : std::to_string(batch_files.size()) + " files") + "; " + finishing +
             ", output " + seconds(clock::now() - finished));
    return refusals.empty() ? 0 : finish_refused();
}

}  // namespace swgpu::app
