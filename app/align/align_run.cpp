#include "app/align/align_run.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <set>
#include <thread>

#include "app/align/search_session.hpp"
#include "app/align/gpu_share.hpp"
#include "app/align/process_group.hpp"
#include "core/align/search/refinements.hpp"
#include "core/align/composition.hpp"
#include "core/align/long_pair/long_pair.hpp"
#include "core/align/masking.hpp"
#include "core/align/long_pair/runner.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/sequence.hpp"
#include "core/align/statistics.hpp"
#include "core/align/strand.hpp"
#include "core/tuning.hpp"
#include "gpu/engine/engine.hpp"
#include "io/align/batch_list.hpp"
#include "io/align/database_file.hpp"
#include "io/align/database_stream.hpp"
#include "io/align/dotplot.hpp"
#include "io/align/matrix_file.hpp"
#include "io/align/sequence_reader.hpp"
#include "io/memory.hpp"
#include "io/output_file.hpp"

namespace swgpu::app {

using clock = std::chrono::steady_clock;

namespace {

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

// Fails with an output error unless the folder of `path` exists and is writable.
void check_writable_folder(const std::string& path) {
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    if (!std::filesystem::is_directory(dir) || ::access(dir.c_str(), W_OK) != 0)
        throw output_error(path, "its folder does not exist or is not writable");
}

// The most residues (or letters) the file of `spec` can hold: its size for a plain file (a .swdb too), `otherwise` for
// a compressed file or stdin.
std::uint64_t residue_bound(const std::string& spec, std::uint64_t otherwise) {
    if (spec == "-") return otherwise;
    return io::plain_file_size(io::parse_source(io::database_path(spec)).path).value_or(otherwise);
}

std::string seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f s", s);
    return buf;
}
std::string seconds(std::chrono::steady_clock::duration d) { return seconds(std::chrono::duration<double>(d).count()); }

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
    finish(results);
    report(results);
    write(results);
    if (cpu_fallback_ && !verbose_) notice("no usable GPU (" + gpu::build_info() + "); this search ran on the CPU");
    return refusals_.empty() ? 0 : finish_refused();
}

// Options that need no input to check.
void align_run::check_options() {
    fmt_ = io::parse_outfmt(s_.outfmt);
    fmt_.eqx = s_.eqx;
    // SAM is for reads against a genome: one primary record per read, and a read without a hit that could hardly
    // occur by chance (E <= 1e-3) is unmapped rather than placed by a short local hit.
    if (fmt_.kind == io::format_kind::sam) {
        if (!given_.max_target_seqs) s_.max_target_seqs = 1;
        if (!given_.evalue) s_.evalue = 1e-3;
    }
    if (!s_.read_group.empty()) {
        if (fmt_.kind != io::format_kind::sam) throw usage_error("--read-group applies to --outfmt sam");
        read_group_ = io::parse_read_group(s_.read_group);
    }
    if (s_.max_target_seqs < 1)
        throw usage_error("-k/--max-target-seqs must be at least 1 (got " + std::to_string(s_.max_target_seqs) + ")");
    if (!(s_.evalue > 0)) throw usage_error("-e/--evalue must be positive");
    if (s_.db_chunk < 1)
        throw usage_error("--db-chunk must be at least 1 residue (got " + std::to_string(s_.db_chunk) + ")");
    if (s_.gpus < 0) throw usage_error("--gpus must be 0 (every GPU) or more (got " + std::to_string(s_.gpus) + ")");
    gpu_mem_ = parse_gpu_mem(s_.gpu_mem);
    if (given_.gap_open && s_.gap_open < 0)
        throw usage_error("--gap-open must be >= 0 (got " + std::to_string(s_.gap_open) + ")");
    if (given_.gap_extend && s_.gap_extend < 1)
        throw usage_error("--gap-extend must be >= 1 (got " + std::to_string(s_.gap_extend) + ")");
    if (s_.comp_based_stats == 1 && s_.no_evalue)
        throw usage_error("--comp-based-stats 1 adjusts E-values; it does not go with --no-evalue");
    if (s_.max_hsps < 1)
        throw usage_error("--max-hsps must be at least 1 (got " + std::to_string(s_.max_hsps) + ")");
}

// Positionals (QUERY DB, or with --batch only DB), the --batch list, and no output that would replace an input or
// another output (checked before anything is read or written).
void align_run::resolve_files() {
    if (!s_.batch.empty()) {
        if (!s_.db.empty()) throw usage_error("with --batch, give only DB (the queries come from " + s_.batch + ")");
        if (s_.query.empty())
            throw usage_error("DB is required; usage: swgpu align --batch LIST DB [options]; run 'swgpu align --help'");
        s_.db = std::move(s_.query);
        s_.query = s_.batch;  // for messages; the files are the list's
        if (!s_.dotplot.empty()) throw usage_error("--dotplot draws one run's alignments; it does not go with --batch");
    } else {
        const std::string usage = "usage: swgpu align QUERY DB [options]; run 'swgpu align --help'";
        if (s_.query.empty()) throw usage_error("QUERY and DB are required; " + usage);
        if (s_.db.empty()) throw usage_error("DB is required; " + usage);
    }
    if (s_.query == "-" && s_.db == "-") throw usage_error("QUERY and DB cannot both be stdin ('-')");
    if (!s_.batch.empty()) {
        if (!s_.out.empty() && s_.out != "-" && std::filesystem::exists(s_.out) && !std::filesystem::is_directory(s_.out))
            throw usage_error("with --batch, -o names the folder of the outputs; " + s_.out + " is a file");
        batch_ = io::read_batch_list(s_.batch, s_.out);
    }

    std::vector<io::named_file> outputs, inputs;
    if (batch_.empty()) outputs.push_back({"-o", s_.out});
    if (!s_.dotplot.empty()) outputs.push_back({"--dotplot", s_.dotplot});
    for (const auto& b : batch_) outputs.push_back({"the output of --batch entry " + b.query + ",", b.out});
    // A region (FILE:NAME:BEG-END) also reads FILE's faidx index, FILE.fai (and FILE.gzi for bgzip), built when
    // missing: an output must not be one of those either.
    const auto add_sequences = [&inputs](const std::string& role, const std::string& spec) {
        const io::sequence_source source = io::parse_source(spec);
        inputs.push_back({role, source.path});
        for (const auto& index : io::index_files(source))
            inputs.push_back({role + "'s index", index, true});
    };
    if (batch_.empty()) {
        add_sequences("the query file", s_.query);
    } else {
        inputs.push_back({"the --batch list", s_.batch});
        for (const auto& b : batch_) add_sequences("the query file", b.query);
    }
    if (s_.db != "-" && io::is_database_file(s_.db)) inputs.push_back({"the database", io::database_path(s_.db)});
    else add_sequences("the database", s_.db);
    if (!s_.matrix.empty() && std::filesystem::exists(s_.matrix)) inputs.push_back({"the --matrix file", s_.matrix});
    io::refuse_overwriting(outputs, inputs);
    io::require_extension(s_.dotplot, "--dotplot", {"svg"}, "the dot plot is SVG");
}

// The memory the search holds at its peak, estimated before anything is read (docs/conventions.md, "Memory"): three
// database chunks (the one searched, the next being prepared, the one after being read), two of them with their packed
// copy, at least 5 bytes a residue, and the queries as read and encoded (twice their files' letters). A chunk is --db-chunk residues, or the
// whole database where that is smaller (a plain file's size bounds its residues; a compressed one counts as a whole
// chunk). Alignments of long pairs estimate their own memory when they are planned.
void align_run::check_memory() {
    const auto chunk = static_cast<std::uint64_t>(s_.db_chunk);
    const std::uint64_t residues = std::min(chunk, residue_bound(s_.db, chunk));
    double queries = 0;
    const auto query_letters = [&](const std::string& spec) { queries += 2.0 * double(residue_bound(spec, 0)); };
    if (batch_.empty()) query_letters(s_.query);
    for (const auto& b : batch_) query_letters(b.query);
    io::check_memory(5.0 * double(residues) + queries,
                     "the search holds three chunks of the database (up to " + std::to_string(residues) +
                         " residues each, two with their packed copies) and the queries",
                     "use a smaller --db-chunk");
}

// The backend, before any work (--backend gpu without a device is a device failure, exit 3), and the GPUs started
// in the background while the inputs are read.
void align_run::choose_backend() {
    // Under MPI, the ranks of a host take its GPUs in turn, each making its own the only one visible before the first
    // CUDA call (app/align/gpu_share.hpp), and ranks that share a GPU share its memory.
    std::optional<rank_gpu> shared_gpu;
    if (group_.size() > 1 && s_.backend != "cpu") {
        int device_files = 0;
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator("/dev", ec)) {
            const std::string name = e.path().filename().string();
            if (name.size() > 6 && name.rfind("nvidia", 0) == 0 &&
                std::all_of(name.begin() + 6, name.end(), [](unsigned char c) { return std::isdigit(c); }))
                ++device_files;
        }
        shared_gpu = gpu_for_rank(std::getenv("CUDA_VISIBLE_DEVICES"), device_files, group_.local_rank(),
                                  group_.local_size());
        if (shared_gpu) ::setenv("CUDA_VISIBLE_DEVICES", shared_gpu->visible.c_str(), 1);
    }
    use_gpu_ = s_.backend == "gpu" || (s_.backend == "auto" && gpu::available());
    if (s_.backend == "gpu" && !gpu::available())
        throw runtime_failure("--backend gpu: no usable GPU (" + gpu::build_info() +
                              "); use --backend cpu, or --backend auto to fall back to the CPU");
    // A build with a GPU backend that finds no usable GPU says so: with -v now, else once after a successful run (so
    // that an input error stays one line); a build without one never does.
    cpu_fallback_ = s_.backend == "auto" && !use_gpu_ && gpu::built_with_cuda();
    if (cpu_fallback_) info("no usable GPU (" + gpu::build_info() + "); searching on the CPU");
    if (use_gpu_ && group_.size() > 1) {
        const int n = std::max(1, gpu::device_count());
        int sharing = 0;
        if (shared_gpu && n == 1) {  // this rank's GPU alone is visible
            sharing = shared_gpu->sharing;
        } else {  // the runtime saw every GPU anyway (started before), or none was known: pick among them
            gpu_device_ = group_.local_rank() % n;
            sharing = (group_.local_size() - gpu_device_ + n - 1) / n;
        }
        gpu::use_device(gpu_device_);
        if (sharing > 1 && gpu_mem_ == 0) gpu_mem_ = gpu::free_memory(gpu_device_) / 8 * 7 / sharing;
    }
    search_session::options o;
    o.use_gpu = use_gpu_;
    o.gpu.device = gpu_device_;
    o.gpu.gpus = s_.gpus;
    // A search too small to gain from several GPUs runs on the first (each further GPU's start-up and share of every
    // chunk cost more than it saves): with every GPU asked for (--gpus 0) and the cells bounded by the files' sizes
    // below search.multi_gpu_min_cells. Unknown sizes (compressed files, stdin, --batch) keep every GPU.
    if (s_.gpus == 0 && batch_.empty() && group_.size() == 1) {
        const double cells = double(residue_bound(s_.query, 0)) * double(residue_bound(s_.db, 0));
        if (cells > 0 && cells < tuning::real("search.multi_gpu_min_cells")) o.gpu.gpus = 1;
    }
    o.gpu.one_process = group_.size() == 1;
    o.gpu.memory = gpu_mem_;
    o.gpu.keep_align_memory = gpu_mem_ == 0 && io::needs_alignments(fmt_) && s_.gpu_align != "cpu";
    // SWGPU_TUNE=search.logical_devices=K (a test option) makes each GPU count K times: the multi-GPU path on one GPU.
    o.gpu.logical = static_cast<int>(std::clamp<std::int64_t>(tuning::integer("search.logical_devices"), 1, 64));
    o.threads = s_.threads;
    o.mode = s_.mode;
    o.long_policy = s_.long_policy;
    o.gpu_align = s_.gpu_align;
    // Alignments for the format's columns, or for the dot plot (drawn by rank 0, which writes).
    o.alignments = io::needs_alignments(fmt_) || (!s_.dotplot.empty() && group_.rank() == 0);
    // SAM's MAPQ needs each read's second hit, printed or not.
    o.max_hits = static_cast<std::size_t>(s_.max_target_seqs);
    if (fmt_.kind == io::format_kind::sam) o.max_hits = std::max<std::size_t>(o.max_hits, 2);
    o.evalues = !s_.no_evalue;
    o.max_evalue = s_.evalue;
    if (s_.comp_based_stats == 1) {  // the preliminary hits that composition-based statistics then rescore
        o.max_hits = composition_preliminary_hits(o.max_hits);
        o.max_evalue = composition_preliminary_evalue(s_.evalue);
    }
    o.progress = !s_.quiet;
    o.info = [this](const std::string& text) { info(text); };
    session_ = std::make_unique<search_session>(std::move(o), started_);  // the GPUs start now, in the background
    read_options_ = std::make_unique<io::read_options>();
    read_options_->skip_bad = s_.skip_bad;
    read_options_->on_skip = [this](const std::string& m) { warning(m + "; record skipped (--skip-bad)"); };
    read_options_->on_warning = [this](const std::string& m) { warning(m); };
    auto_type_ = s_.seqtype == "auto";
}

// DB: a stream of chunks (io/align/database_stream.hpp), opened when first needed. On the GPU the first chunks ramp up
// (an eighth of --db-chunk, a quarter, a half), and under MPI every rank cuts the chunks alike whatever its backend,
// since rank r searches chunk k when k mod P = r. Under MPI the chunks are --db-chunk / P residues: P times as many
// chunks keep the ranks' shares within about 2 % of each other (computed from this schedule: whole chunks of 10^8
// residues would give the busiest of 4 ranks 10 % more than its share of db20k x100, of 8 ranks 33 %).
void align_run::open_database() {
    if (database_) return;
    io::database_stream::options o;
    const auto chunk = static_cast<std::uint64_t>(s_.db_chunk);
    o.chunk_residues = group_.size() > 1 ? std::max<std::uint64_t>(1, chunk / std::uint64_t(group_.size())) : chunk;
    o.ramp = use_gpu_ || group_.size() > 1;
    o.auto_type = auto_type_;
    o.read = *read_options_;
    o.read.keep_titles = io::prints_subject_titles(fmt_);  // a database's descriptions can outweigh its residues
    if (fmt_.kind == io::format_kind::sam) o.list_records = io::max_listed_references;  // SAM's @SQ lines
    database_ = std::make_unique<io::database_stream>(s_.db, std::move(o));
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
    scoring_request r;
    r.type = type_;
    r.matrix = s_.matrix;
    if (given_.gap_open) r.gap_open = s_.gap_open;
    if (given_.gap_extend) r.gap_extend = s_.gap_extend;
    r.match = s_.match;
    r.mismatch = s_.mismatch;
    r.evalues = !s_.no_evalue;
    sc_.emplace(app::make_scoring(r));
    if (s_.comp_based_stats == 1) composition_.emplace(sc_->matrix);
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
    const std::uint64_t n =
        masking_.mask(queries_, m, seg ? masking::seg : masking::dust);
    info(std::string(seg ? "SEG" : "DUST") + " masked " + std::to_string(n) + " of the queries' " +
         std::to_string(queries_.plus.total_residues()) + " residues as " + std::string(1, m.letter(m.fallback_code())));
}

// The score pass (search_session.hpp: the backend's, with windows and long pairs) over the database's chunks;
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

search_results align_run::search() {
    search_results results = session_->search(queries_, *database_, database_->total_residues());
    scanned_ = results.score_pass_done;
    finished_ = clock::now();
    return results;
}

// The steps after the score pass in their one order (core/align/search/refinements.hpp, refine_results): composition,
// the printed k (the pipeline kept max(k, 2) per query for SAM: the scan's hits give MAPQ), further alignments per
// pair, identities on the queries' letters as read, and SAM's and PAF's placements.
void align_run::finish(search_results& results) const {
    refinement_options o;
    o.composition = composition_ ? &*composition_ : nullptr;
    o.k = static_cast<std::size_t>(s_.max_target_seqs);
    o.evalue = s_.evalue;
    o.evalues = !s_.no_evalue;
    o.max_hsps = s_.max_hsps;
    o.threads = static_cast<int>(s_.threads);
    o.progress = !quiet_;
    o.alignments = session_->pipeline().alignments;
    o.placements = [this](search_results& r) { add_placements(r); };
    const std::size_t linear = refine_results(results, queries_, masking_, *sc_, o);
    if (linear > 0 && verbose_)
        notice("--max-hsps: " + std::to_string(linear) + " long pair(s) searched again in linear memory, a forward pass "
               "per further alignment");
}

// SAM's and PAF's MAPQ see a read's best other placement on the subject and strand of its primary hit, not only those
// on other subjects and strands: for each query's first printed hit, the best alignment of its pair apart from it.
void align_run::add_placements(search_results& results) const {
    if (fmt_.kind != io::format_kind::sam && fmt_.kind != io::format_kind::paf) return;
    if (!results.statistics) return;  // MAPQ 255 without statistics
    std::vector<std::size_t> todo;
    for (std::size_t q = 0; q < results.hits.size(); ++q)
        if (!results.hits[q].empty() && results.hits[q].front().aln.score > 0) todo.push_back(q);
    const evalue_calculator& stats = *results.statistics;
    session_->pool().parallel_for(todo.size(), [&](std::size_t k) {
        printed_hit& h = results.hits[todo[k]].front();
        const auto& subject = results.scan.subjects.at(h.subject).residues;
        // Placements more than 20 bits below the primary leave MAPQ at 60 (io::mapping_quality): not looked for.
        const double per_point = stats.bit_score(h.score) - stats.bit_score(h.score - 1);
        const int floor = per_point > 0 ? h.score - static_cast<int>(std::ceil(20.0 / per_point)) : 0;
        if (auto apart = session_->best_apart(queries_.residues(todo[k], h.str), subject, h.score, h.aln, floor))
            h.apart = *apart;
    });
}

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
         (session_->gpus() ? ", GPUs started " + seconds(session_->gpus()->started_after()) + " after the start"
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
    view.split_reads = s_.max_hsps > 1;
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
        view.split_reads = s_.max_hsps > 1;
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
        view.split_reads = s_.max_hsps > 1;
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
    if (session_->gpu_aligned().pairs > 0)
        finishing += " (" + std::to_string(session_->gpu_aligned().pairs) + " on the GPU in " + seconds(session_->gpu_aligned().total_s) +
                     ", kernel " + seconds(session_->gpu_aligned().kernel_s) + ")";
    if (results.queries_finished_during_search > 0)
        finishing += " (" + std::to_string(results.queries_finished_during_search) + " of " +
                     std::to_string(queries_.size()) + " queries finished during it)";
    info(std::to_string(printed) + " hits written to " +
         (batch_.empty() ? out_->name() : std::to_string(batch_files_.size()) + " files") + "; " + finishing +
         ", output " + seconds(clock::now() - finished_));
}

}  // namespace swgpu::app
