#include "core/align/search/session.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "core/align/long_pair/long_pair.hpp"
#include "core/align/long_pair/runner.hpp"
#include "core/align/placement.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/statistics.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "core/tuning.hpp"

namespace swgpu {

using clock = std::chrono::steady_clock;

search_session::options search_session::options_of(const search_values& v) {
    options o;
    o.k = static_cast<std::size_t>(v.max_target_seqs);
    o.evalues = v.evalues;
    o.evalue = v.evalue;
    o.composition = v.comp_based_stats == 1;
    o.max_hsps = v.max_hsps;
    o.zdrop = v.zdrop.value_or(-1);
    if (v.seg) o.mask = masking::seg;
    if (v.dust) o.mask = masking::dust;
    return o;
}

search_session::search_session(options opt, std::chrono::steady_clock::time_point started)
    : opt_(std::move(opt)), started_(started) {}

search_session::~search_session() = default;

// The backend for `sc` (every CPU thread, or the GPUs), then windows and long pairs around it, then the pipeline's
// options.
void search_session::compose(const scoring& sc) {
    sc_ = &sc;
    if (opt_.composition) composition_.emplace(sc.matrix);
    pool_ = std::make_unique<thread_pool>(static_cast<unsigned>(opt_.threads));
    progress_ = std::make_unique<progress_line>(opt_.progress);
    if (opt_.devices) {
        // Printed alignments on the GPU after the search, the largest on the CPU threads beside it; or on the CPU
        // threads while the GPU searches for the last queries, the GPU then running the queries in batches, two in
        // flight, which costs it about 1.5 %.
        search_devices::backend_options how;
        how.align = opt_.alignments && !opt_.align_on_cpu;
        how.overlap = opt_.alignments && opt_.align_on_cpu;
        base_ = opt_.devices->backend(sc, how);
        if (!opt_.devices->description().empty()) info(opt_.devices->description());
    } else {
        base_ = std::make_unique<cpu_search_backend>(sc, *pool_);
    }
    backend_ = base_.get();
    compose_long_pairs(sc);
    // The hits kept per query; with composition-based statistics, the preliminary hits that it then rescores.
    run_.max_hits = std::max(opt_.k, opt_.keep_at_least);
    run_.evalues = opt_.evalues;
    run_.max_evalue = opt_.evalue;
    if (composition_) {
        run_.max_hits = composition_preliminary_hits(run_.max_hits);
        run_.max_evalue = composition_preliminary_evalue(opt_.evalue);
    }
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
        be->use_policy(opt_.policy == long_policy::compensation ||
                               (opt_.policy == long_policy::automatic &&
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
    if (opt_.mode != pair_mode::pairwise) {
        windows_ = std::make_unique<subject_windows>(sc);
        windowed_ = std::make_unique<windowed_backend>(*backend_, *windows_);
        backend_ = windowed_.get();
    }
    split_long_pairs::predicate is_long;
    if (opt_.mode == pair_mode::pairwise) is_long = [](std::size_t, std::size_t) { return true; };
    else if (opt_.mode == pair_mode::automatic) {
        // Pairs of at least `cells` cells whose shorter sequence has `side` residues go pairwise: per backend, from
        // measurements (data/tuning.tsv; a CPU pair of 11 kbp took 0.56 s through the database pass against 0.10 s
        // pairwise on 2 cores, where the GPU's database kernel is the faster up to about 2^27 cells).
        const bool gpus = opt_.devices != nullptr;
        const std::string arch = gpus ? opt_.devices->architecture() : std::string("*");
        const double cells = tuning::real(gpus ? "long.auto_cells" : "long.auto_cells_cpu", arch);
        const auto side = static_cast<std::size_t>(
            std::max<std::int64_t>(1, tuning::integer(gpus ? "long.auto_min_side" : "long.auto_min_side_cpu", arch)));
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
// (.swdb), how much was searched for a FASTA file; then the steps after the score pass where this process finishes.
search_results search_session::search(const query_strands& queries, const query_masking& masking,
                                      chunk_source& database, std::uint64_t total) {
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
    results.finished = clock::now();
    if (results.finished_here) refine(results, queries, masking);
    return results;
}

std::uint64_t search_session::mask(query_strands& queries, query_masking& masking,
                                   const substitution_matrix& m) const {
    if (!opt_.mask) return 0;
    return masking.mask(queries, m, *opt_.mask);
}

// The steps after the score pass in their one order (refinements.hpp, refine_results): composition, the printed k
// (the pipeline kept keep_at_least per query for SAM: the scan's hits give MAPQ), further alignments per pair,
// identities on the queries' letters as read, and SAM's and PAF's placements.
void search_session::refine(search_results& results, const query_strands& queries,
                            const query_masking& masking) const {
    refinement_options o;
    o.composition = composition_ ? &*composition_ : nullptr;
    o.k = opt_.k;
    o.evalue = opt_.evalue;
    o.evalues = opt_.evalues;
    o.max_hsps = opt_.max_hsps;
    o.zdrop = opt_.zdrop;
    o.threads = opt_.threads;
    o.progress = opt_.progress;
    o.alignments = run_.alignments;
    if (opt_.placements) o.placements = [&](search_results& r) { add_placements(r, queries); };
    // On GPUs, the further alignments of long pairs on the first GPU (forbidden steps on the device).
    if (opt_.devices)
        o.long_backend = [this](std::span<const std::uint8_t> q, std::span<const std::uint8_t> s) {
            return base_->long_pair_backend(q, s);
        };
    const std::size_t linear = refine_results(results, queries, masking, *sc_, o);
    if (linear > 0)
        info("--max-hsps: " + std::to_string(linear) + " long pair(s) searched again in linear memory, a forward pass "
             "per further alignment");
}

// SAM's and PAF's MAPQ see a read's best other placement on the subject and strand of its primary hit, not only those
// on other subjects and strands: for each query's first printed hit, the best alignment of its pair apart from it.
void search_session::add_placements(search_results& results, const query_strands& queries) const {
    if (!results.statistics) return;  // MAPQ 255 without statistics
    std::vector<std::size_t> todo;
    for (std::size_t q = 0; q < results.hits.size(); ++q)
        if (!results.hits[q].empty() && results.hits[q].front().aln.score > 0) todo.push_back(q);
    const evalue_calculator& stats = *results.statistics;
    pool_->parallel_for(todo.size(), [&](std::size_t k) {
        printed_hit& h = results.hits[todo[k]].front();
        const auto& subject = results.scan.subjects.at(h.subject).residues;
        // Placements more than 20 bits below the primary leave MAPQ at 60 (io::mapping_quality): not looked for.
        const double per_point = stats.bit_score(h.score) - stats.bit_score(h.score - 1);
        const int floor = per_point > 0 ? h.score - static_cast<int>(std::ceil(20.0 / per_point)) : 0;
        if (auto apart = best_apart(queries.residues(todo[k], h.str), subject, h.score, h.aln, floor))
            h.apart = *apart;
    });
}

bool resident_records::next(sequence_set&) {
    throw runtime_failure("internal error: resident records are read in place");
}

chunk_source::kept_chunk resident_records::next_kept(search_backend& backend) {
    if (given_) return {};
    given_ = true;
    if (prepared_for_ != &backend) {
        prepared_ = backend.prepare(records_);
        prepared_for_ = &backend;
    }
    return {&records_, prepared_.get(), unknown_};
}

}  // namespace swgpu
