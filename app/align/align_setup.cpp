// align_run's steps before any input is read (app/align/align_run.hpp): the options checked, the files resolved and
// refused where an output is an input, the memory estimated, the backend chosen and the GPUs started, the database
// opened.
#include "app/align/align_run.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "core/align/search/session.hpp"
#include "core/tuning.hpp"
#include "gpu/align/gpu_search.hpp"
#include "gpu/gpu.hpp"
#include "io/align/batch_list.hpp"
#include "io/align/query_files.hpp"
#include "io/align/database_file.hpp"
#include "io/align/database_stream.hpp"
#include "io/align/sequence_reader.hpp"
#include "io/gpu_share.hpp"
#include "io/memory.hpp"
#include "io/output_file.hpp"
#include "io/process_group.hpp"

namespace swgpu::app {

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
    check_search_limits(checked_values(), settings_face::command_line);  // core/align/search/settings_check.hpp
    gpu_mem_ = io::parse_gpu_mem(s_.gpu_mem);
    check_scoring_settings(checked_values(), settings_face::command_line);
    if (!given_.zdrop) s_.zdrop = -1;
}

// The values core's checks read, as the command line gives them.
search_values align_run::checked_values() const {
    search_values v;
    v.max_target_seqs = s_.max_target_seqs;
    v.evalue = s_.evalue;
    v.evalues = !s_.no_evalue;
    v.db_chunk = s_.db_chunk;
    v.gpus = s_.gpus;
    if (given_.gap_open) v.gap_open = s_.gap_open;
    if (given_.gap_extend) v.gap_extend = s_.gap_extend;
    v.comp_based_stats = s_.comp_based_stats;
    v.max_hsps = s_.max_hsps;
    if (given_.zdrop) v.zdrop = s_.zdrop;
    v.seg = s_.seg == "yes";
    v.dust = s_.dust == "yes";
    v.match_given = given_.match || given_.mismatch;
    v.strand_given = given_.strand;
    return v;
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

    io::refuse_overwriting_inputs({s_.query, s_.db, s_.batch, s_.out, s_.dotplot, s_.matrix, batch_});
    io::require_extension(s_.dotplot, "--dotplot", {"svg"}, "the dot plot is SVG");
}

// The memory the search holds at its peak, estimated before anything is read (io/align/query_files.hpp).
void align_run::check_memory() {
    io::check_search_memory(s_.db, static_cast<std::uint64_t>(s_.db_chunk), s_.query, batch_);
}

// The backend, before any work (--backend gpu without a device is a device failure, exit 3), and the GPUs started
// in the background while the inputs are read.
void align_run::choose_backend() {
    // Under MPI, the ranks of a host take its GPUs in turn, each making its own the only one visible before the first
    // CUDA call (io/gpu_share.hpp), and ranks that share a GPU share its memory.
    std::optional<io::rank_gpu> shared_gpu;
    if (group_.size() > 1 && s_.backend != "cpu") shared_gpu = io::take_rank_gpu(group_.local_rank(), group_.local_size());
    use_gpu_ = s_.backend == "gpu" || (s_.backend == "auto" && gpu::available());
    if (s_.backend == "gpu" && !gpu::available())
        throw runtime_failure("--backend gpu: no usable GPU (" + gpu::build_info() +
                              "); use --backend cpu, or --backend auto to fall back to the CPU");
    // A build with a GPU backend that finds no usable GPU says so: with -v now, else once after a successful run (so
    // that an input error stays one line); a build without one never does.
    cpu_fallback_ = s_.backend == "auto" && !use_gpu_ && gpu::built_with_cuda();
    if (cpu_fallback_) info("no usable GPU (" + gpu::build_info() + "); searching on the CPU");
    if (use_gpu_ && group_.size() > 1) {
        const io::rank_device d = io::device_for_rank(shared_gpu, std::max(1, gpu::device_count()),
                                                      group_.local_rank(), group_.local_size());
        gpu_device_ = d.device;
        gpu::use_device(gpu_device_);
        if (d.sharing > 1 && gpu_mem_ == 0) gpu_mem_ = gpu::free_memory(gpu_device_) / 8 * 7 / d.sharing;
    }
    search_session::options o = search_session::options_of(checked_values());
    if (use_gpu_) {
        // Unknown sizes (compressed files, stdin, --batch, MPI's shares) keep every GPU.
        const double cells = s_.gpus == 0 && batch_.empty() && group_.size() == 1
                                 ? double(io::residue_bound(s_.query, 0)) * double(io::residue_bound(s_.db, 0))
                                 : 0;
        o.devices = std::make_unique<gpu::gpu_search>(  // they start now
            gpu::gpu_search::of_command_line(gpu_device_, s_.gpus, gpu_mem_,
                                             io::needs_alignments(fmt_) && s_.gpu_align != "cpu", group_.size() == 1,
                                             cells),
            started_);
    }
    o.threads = s_.threads;
    o.mode = s_.mode == "pairwise" ? search_session::pair_mode::pairwise
             : s_.mode == "search" ? search_session::pair_mode::search
                                   : search_session::pair_mode::automatic;
    o.policy = s_.long_policy == "compensation"   ? search_session::long_policy::compensation
               : s_.long_policy == "antidiagonal" ? search_session::long_policy::antidiagonal
                                                  : search_session::long_policy::automatic;
    o.align_on_cpu = s_.gpu_align == "cpu";
    // Alignments for the format's columns, or for the dot plot (drawn by rank 0, which writes).
    o.alignments = io::needs_alignments(fmt_) || (!s_.dotplot.empty() && group_.rank() == 0);
    if (fmt_.kind == io::format_kind::sam) o.keep_at_least = 2;  // SAM's MAPQ needs each read's second hit
    o.placements = fmt_.kind == io::format_kind::sam || fmt_.kind == io::format_kind::paf;
    o.progress = !s_.quiet;
    o.info = [this](const std::string& text) { info(text); };
    session_ = std::make_unique<search_session>(std::move(o), started_);
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
    o.ramp = (use_gpu_ && tuning::flag("search.ramp")) || group_.size() > 1;
    o.auto_type = auto_type_;
    o.read = *read_options_;
    o.read.keep_titles = io::prints_subject_titles(fmt_);  // a database's descriptions can outweigh its residues
    if (fmt_.kind == io::format_kind::sam) o.list_records = io::max_listed_references;  // SAM's @SQ lines
    database_ = std::make_unique<io::database_stream>(s_.db, std::move(o));
}

}  // namespace swgpu::app
