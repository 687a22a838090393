#include "app/align/search_session.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <span>

#include "core/progress.hpp"
#include "core/align/long_pair/long_pair.hpp"
#include "core/align/long_pair/runner.hpp"
#include "core/align/placement.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/statistics.hpp"
#include "core/tuning.hpp"
#include "io/align/matrix_file.hpp"
#include "gpu/gpu.hpp"

namespace swgpu::app {

using clock = std::chrono::steady_clock;

namespace {


// "--gpu-mem": bytes, or a number with K, M or G (powers of 1024). Empty: 0, the backend's default (what is free).

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

}  // namespace

scoring make_scoring(const scoring_request& r) {
    scoring sc{r.type == seq_type::dna && r.matrix.empty() ? substitution_matrix::match_mismatch(r.match, r.mismatch)
               : r.matrix.empty()                          ? substitution_matrix::builtin("BLOSUM62")
                                                           : matrix_from_option(r.matrix),
               {}, r.type};
    sc.gaps = default_gaps(sc.matrix, r.type);
    if (r.gap_open) sc.gaps.open = *r.gap_open;
    if (r.gap_extend) sc.gaps.extend = *r.gap_extend;
    validate(sc);
    if (r.evalues && !evalue_calculator::supported(sc))
        evalue_calculator(sc, 0, 0);  // throws the usage error that names the supported pairs
    return sc;
}

search_session::search_session(options opt, std::chrono::steady_clock::time_point started)
    : opt_(std::move(opt)), started_(started) {
    if (opt_.use_gpu) gpus_ = std::make_unique<gpu::gpu_search>(opt_.gpu, started_);  // starts them in the background
}

search_session::~search_session() = default;

// The backend for `sc` (every CPU thread, or the GPUs), then windows and long pairs around it, then the pipeline's
// options.
void search_session::compose(const scoring& sc) {
    sc_ = &sc;
    pool_ = std::make_unique<thread_pool>(static_cast<unsigned>(opt_.threads));
    progress_ = std::make_unique<progress_line>(opt_.progress);
    if (gpus_) {
        // Printed alignments on the GPU after the search, the largest on the CPU threads beside it; or with
        // --gpu-align cpu on the CPU threads while the GPU searches for the last queries, the GPU then running the
        // queries in batches, two in flight, which costs it about 1.5 %.
        gpu::gpu_search::backend_options how;
        how.align = opt_.alignments && opt_.gpu_align != "cpu";
        how.overlap = opt_.alignments && opt_.gpu_align == "cpu";
        how.timing = &gpu_aligned_;
        base_ = gpus_->backend(sc, how);
        if (!gpus_->description().empty()) info(gpus_->description());
    } else {
        base_ = std::make_unique<cpu_search_backend>(sc, *pool_);
    }
    backend_ = base_.get();
    compose_long_pairs(sc);
    run_.max_hits = opt_.max_hits;
    run_.evalues = opt_.evalues;
    run_.max_evalue = opt_.max_evalue;
    run_.alignments = opt_.alignments;
}

// Short queries against long subjects through windows (not with --mode pairwise, where every pair is a long pair);
// long pairs (--mode: pairwise, or auto for pairs of at least long.auto_cells cells whose shorter side has
// long.auto_min_side residues, the CPU's own values on the CPU) each on
// the whole of the backend, with a progress display on a terminal.
void search_session::compose_long_pairs(const scoring& sc) {
    const auto long_backend = [this](std::span<const std::uint8_t> q, std::span<const std::uint8_t> d) {
        std::unique_ptr<long_pair::backend> be = base_->long_pair_backend(q, d);
        // --long-policy (the GPU's forward kernels; auto: the faster by data/long_pair_policy.tsv for the pair's cells)
        const double cells = double(q.size()) * double(d.size());
        be->use_policy(opt_.long_policy == "compensation" ||
                               (opt_.long_policy == "auto" &&
                                long_pair::fastest_policy(cells) == long_pair::policy::compensation)
                           ? long_pair::policy::compensation
                           : long_pair::policy::antidiagonal);
        // On a terminal: the forward pass's fraction done and the time left, then the traceback.
        const std::string what = "swgpu: long pair " + std::to_string(q.size()) + " x " + std::to_string(d.size());
        be->progress = [progress = progress_.get(), what, start = clock::now()](double fraction) {
            if (fraction < 0) {
                progress->show(what + ": tracing back");
                return;
            }
            const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
            progress->show(what + ": forward pass " + progress_bar(fraction, elapsed));
        };
        return be;
    };
    long_pairs_ = std::make_unique<long_pair::runner>(sc, long_backend, opt_.alignments);
    long_pairs_->on_start = [progress = progress_.get()](std::size_t m, std::size_t n) {
        progress->show("swgpu: aligning a long pair (" + std::to_string(m) + " x " + std::to_string(n) + " residues)");
    };
    long_pairs_->on_batch = [progress = progress_.get()](std::size_t pairs, double cells) {
        progress->show("swgpu: aligning " + std::to_string(pairs) + " long pairs (" +
                       std::to_string(static_cast<long long>(cells / 1e9)) + " G cells)");
    };
    long_pairs_->on_aligned = [this](const std::string& what) {
        progress_->clear();
        info(what);
    };
    if (opt_.mode != "pairwise") {
        windows_ = std::make_unique<subject_windows>(sc);
        windowed_ = std::make_unique<windowed_backend>(*backend_, *windows_);
        backend_ = windowed_.get();
    }
    split_long_pairs::predicate is_long;
    if (opt_.mode == "pairwise") is_long = [](std::size_t, std::size_t) { return true; };
    else if (opt_.mode == "auto") {
        // Pairs of at least `cells` cells whose shorter sequence has `side` residues go pairwise: per backend, from
        // measurements (data/tuning.tsv; a CPU pair of 11 kbp took 0.56 s through the database pass against 0.10 s
        // pairwise on 2 cores, where the GPU's database kernel is the faster up to about 2^27 cells).
        const std::string arch = gpus_ ? gpu::architecture(opt_.gpu.device) : std::string("*");
        const double cells = tuning::real(gpus_ ? "long.auto_cells" : "long.auto_cells_cpu", arch);
        const auto side = static_cast<std::size_t>(
            std::max<std::int64_t>(1, tuning::integer(gpus_ ? "long.auto_min_side" : "long.auto_min_side_cpu", arch)));
        is_long = [cells, side](std::size_t a, std::size_t b) {
            return std::min(a, b) >= side && double(a) * double(b) >= cells;
        };
    }
    if (is_long) {
        split_ = std::make_unique<split_long_pairs>(*backend_, std::move(is_long), *long_pairs_);
        backend_ = split_.get();
    }
}

std::optional<int> search_session::best_apart(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                              int score, const alignment& primary, int floor) const {
    if (windows_)
        if (auto through = windows_->best_apart(scored_pair{query, subject, score}, primary, floor)) return through;
    if (double(query.size()) * double(subject.size()) > placement_cells) return std::nullopt;
    return swgpu::best_apart(query, subject, 0, primary, *sc_);
}

// The pipeline, with a progress display on a terminal: a bar and the time left for a database that knows its size
// (.swdb), how much was searched for a FASTA file.
search_results search_session::search(const query_strands& queries, chunk_source& database, std::uint64_t total) {
    search_results results = search_and_finish(
        queries, *sc_, run_, database, *backend_, *pool_, [this, total](const scan_progress& p) {
            // The whole database's residues: a .swdb knows them; a file read in chunks once its last chunk is read.
            const std::uint64_t whole = total > 0 ? total : p.last_chunk ? p.residues + p.chunk_residues : 0;
            const double at = double(p.residues) + p.chunk_fraction * double(p.chunk_residues);
            if (whole > 0 && p.residues >= whole) {
                progress_->show("swgpu: database searched; computing " +
                                std::string(opt_.alignments ? "alignments" : "E-values") + " of the best hits");
            } else if (whole > 0) {
                const double elapsed = std::chrono::duration<double>(clock::now() - started_).count();
                progress_->show("swgpu: searching " + progress_bar(at / double(whole), elapsed));
            } else {
                progress_->show("swgpu: searched " + std::to_string(p.sequences) + " database sequences (" +
                                std::to_string(p.residues) + " residues)");
            }
        });
    progress_->clear();
    return results;
}

}  // namespace swgpu::app
