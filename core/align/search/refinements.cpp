#include "core/align/search/refinements.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <limits>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/progress.hpp"
#include "core/align/alignment.hpp"
#include "core/align/hsps.hpp"
#include "core/align/long_pair/long_pair.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/statistics.hpp"
#include "core/align/zdrop.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "core/tuning.hpp"

namespace swgpu {

namespace {

// `work` (which takes items until none is left) on min(items, threads) threads, the caller's one of them (threads 0:
// one per hardware thread).
template <class Work>
void on_threads(std::size_t items, int threads, const Work& work) {
    const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t n = std::min<std::size_t>(items, threads > 0 ? static_cast<std::size_t>(threads) : hardware);
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < n; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
}

}  // namespace

std::uint64_t query_masking::mask(query_strands& queries, const substitution_matrix& m, masking kind) {
    unmasked_ = queries;
    active_ = true;
    return mask_low_complexity(queries.plus, queries.search_minus ? &queries.minus : nullptr, m, kind,
                               m.fallback_code());
}

void query_masking::unmask_hits(search_results& results, const substitution_matrix& m, bool alignments) const {
    if (!active_ || !alignments) return;
    for (std::size_t q = 0; q < results.hits.size(); ++q)
        for (printed_hit& h : results.hits[q])
            h.stats = stats_of(h.aln, unmasked_.residues(q, h.str), results.scan.subjects.at(h.subject).span(), m);
}

void adjust_composition(search_results& results, const query_strands& queries, const scoring& sc,
                        const composition_adjustment& adjustment, std::size_t k, double max_evalue, int threads) {
    if (!results.statistics) return;
    const evalue_calculator& stats = *results.statistics;
    // First every hit's S' (its score pass under M', on the threads), which ranks it; then the traceback of the hits
    // kept (E <= max_evalue, the first k), the only ones printed: 811 of 4,555 on 47 UniProt queries against 3,000
    // proteins, whose tracebacks took most of the time when every hit had one (docs/performance.md).
    std::vector<aa_composition> compositions(results.hits.size());
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    std::vector<std::vector<sw_end>> adjusted(results.hits.size());  // S' and its end cell (score 0: not aligned)
    for (std::size_t q = 0; q < results.hits.size(); ++q) {
        compositions[q] = composition_of(queries.residues(q, strand::plus), sc.matrix);
        adjusted[q].resize(results.hits[q].size());
        for (std::size_t i = 0; i < results.hits[q].size(); ++i) pairs.emplace_back(q, i);
    }
    // The pair's M' (SEG on the subject unless near-identical to the query under the standard alignment, which the
    // output may already carry), as adjust() makes it; made twice for a printed hit, which is cheap beside its passes.
    const auto prepare = [&](std::size_t q, const printed_hit& h) {
        const auto query = queries.residues(q, strand::plus);
        const auto subject = results.scan.subjects.at(h.subject).span();
        const alignment standard = h.aln.ops.empty() ? sw_align(query, subject, sc) : h.aln;
        return adjustment.prepare(query, compositions[q], subject, standard);
    };
    std::atomic<std::size_t> next{0};
    on_threads(pairs.size(), threads, [&] {
        for (std::size_t t; (t = next++) < pairs.size();) {
            const auto [q, i] = pairs[t];
            printed_hit& h = results.hits[q][i];
            composition_adjustment::prepared r = prepare(q, h);
            if (!r.ready) continue;
            const auto query = queries.residues(q, strand::plus);
            composition_adjustment::score(query, r, sc.gaps);
            if (!r.aligned) continue;
            adjusted[q][i] = {r.aln.score, r.aln.query_end, r.aln.subject_end};
            h.score = unscale_score(r.aln.score);
            h.evalue = stats.evalue_of_score(double(r.aln.score) / composition_scale, query.size(),
                                             results.scan.subjects.at(h.subject).span().size());
            h.bit_score = stats.bit_score(h.score);
            h.has_statistics = true;
        }
    });
    std::vector<std::pair<std::size_t, std::size_t>> kept_pairs;  // (query, index in the kept list)
    std::vector<std::vector<sw_end>> kept_ends(results.hits.size());
    for (std::size_t q = 0; q < results.hits.size(); ++q) {
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < results.hits[q].size(); ++i)
            if (adjusted[q][i].score > 0 && results.hits[q][i].evalue <= max_evalue) order.push_back(i);
        std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
            const printed_hit &a = results.hits[q][x], &b = results.hits[q][y];
            if (a.evalue != b.evalue) return a.evalue < b.evalue;
            if (a.score != b.score) return a.score > b.score;
            return a.subject < b.subject;
        });
        if (order.size() > k) order.resize(k);
        std::vector<printed_hit> kept;
        for (const std::size_t i : order) {
            kept_pairs.emplace_back(q, kept.size());
            kept.push_back(std::move(results.hits[q][i]));
            kept_ends[q].push_back(adjusted[q][i]);
        }
        results.hits[q] = std::move(kept);
    }
    next = 0;
    on_threads(kept_pairs.size(), threads, [&] {
        for (std::size_t t; (t = next++) < kept_pairs.size();) {
            const auto [q, i] = kept_pairs[t];
            printed_hit& h = results.hits[q][i];
            composition_adjustment::prepared r = prepare(q, h);
            const sw_end& end = kept_ends[q][i];
            r.aln.score = end.score, r.aln.query_end = end.query_end, r.aln.subject_end = end.subject_end;
            r.aligned = true;
            const auto query = queries.residues(q, strand::plus);
            composition_adjustment::trace(query, r, sc.gaps);
            h.aln = std::move(r.aln);
            h.aln.score = h.score;
            h.stats = stats_of(h.aln, query, results.scan.subjects.at(h.subject).span(), sc.matrix);
        }
    });
}

namespace {

// add_hsps in its steps: the printed hits as pairs, the further alignments of the smaller pairs a pair a thread and of
// the larger ones one at a time on all threads, then each hit followed by its own.
class hsp_finder {
public:
    hsp_finder(search_results& results, const query_strands& searched, const query_strands& shown, const scoring& sc,
               int max_hsps, double max_evalue, const composition_adjustment* composition, int zdrop,
               const long_backend_factory& long_backend)
        : results_(results), searched_(searched), shown_(shown), sc_(sc), max_hsps_(max_hsps), max_evalue_(max_evalue),
          composition_(composition), stats_(results.statistics ? &*results.statistics : nullptr),
          small_cells_(tuning::real("long.hsp_cells")), zdrop_(zdrop), long_backend_(long_backend) {
        for (std::size_t q = 0; q < results.hits.size(); ++q)
            for (std::size_t i = 0; i < results.hits[q].size(); ++i) pairs_.emplace_back(q, i);
        more_.resize(pairs_.size());
        dropped_.assign(pairs_.size(), 0);
        best_block_.assign(pairs_.size(), 0);
    }

    // Pairs of at most long.hsp_cells cells, a pair a thread.
    void small_pairs(int threads) {
        std::atomic<std::size_t> next{0};
        std::exception_ptr failed;
        std::mutex failure;
        on_threads(pairs_.size(), threads, [&] {
            thread_pool one(1);  // runs on this thread
            for (std::size_t t; (t = next++) < pairs_.size();) {
                try {
                    if (cells(t) > small_cells_) continue;
                    if (composition_) under_composition(t);
                    else by_long_pair(t, one);
                } catch (...) {
                    std::lock_guard<std::mutex> g(failure);
                    if (!failed) failed = std::current_exception();
                    next = pairs_.size();
                }
            }
        });
        if (failed) std::rethrow_exception(failed);
    }

    // Larger pairs one after the other, each on all the threads, with a progress line; under composition-based
    // statistics they keep their one alignment. Returns how many.
    std::size_t large_pairs(int threads, bool progress) {
        std::size_t done = 0;
        std::unique_ptr<thread_pool> pool;
        progress_line line(progress);
        for (std::size_t t = 0; t < pairs_.size(); ++t) {
            if (cells(t) <= small_cells_ || composition_) continue;
            if (!pool) pool = std::make_unique<thread_pool>(static_cast<unsigned>(std::max(threads, 0)));
            const std::string what = "swgpu: --max-hsps, long pair " + std::to_string(query(t).size()) + " x " +
                                     std::to_string(subject(t).size()) + ": alignment ";
            auto start = std::chrono::steady_clock::now();  // of the pass of alignment `shown`
            int shown = 0;
            by_long_pair(t, *pool, [&](int k, double fraction) {
                if (fraction < 0) return line.show(what + std::to_string(k) + ", tracing back");
                if (k != shown) shown = k, start = std::chrono::steady_clock::now();
                const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                line.show(what + std::to_string(k) + ", forward pass " + progress_bar(fraction, elapsed));
            }, true);
            line.clear();
            if (max_hsps_ > 1) ++done;  // with --max-hsps 1 (--zdrop alone) nothing was searched again
        }
        return done;
    }

    // Each hit followed by its further alignments (BLAST prints a subject's HSPs together, best first). With --zdrop,
    // the pairs left without a block are dropped and the others ordered again by their best block.
    void interleave() {
        for (std::size_t q = 0, t = 0; q < results_.hits.size(); ++q) {
            std::vector<std::vector<printed_hit>> groups;
            for (std::size_t i = 0; i < results_.hits[q].size(); ++i, ++t) {
                if (zdrop_ >= 0 && q < results_.scan.hits.size())  // MAPQ's other placements: the pair's best block
                    for (strand_hit& kept : results_.scan.hits[q])
                        if (kept.subject == results_.hits[q][i].subject && kept.str == results_.hits[q][i].str)
                            kept.score = best_block_[t];
                if (dropped_[t]) continue;
                groups.emplace_back();
                groups.back().push_back(std::move(results_.hits[q][i]));
                for (auto& extra : more_[t]) groups.back().push_back(std::move(extra));
            }
            if (zdrop_ >= 0)
                std::stable_sort(groups.begin(), groups.end(), [](const auto& x, const auto& y) {
                    const printed_hit &a = x.front(), &b = y.front();
                    if (a.has_statistics && b.has_statistics && a.evalue != b.evalue) return a.evalue < b.evalue;
                    if (a.score != b.score) return a.score > b.score;
                    if (a.subject != b.subject) return a.subject < b.subject;
                    return a.str == strand::plus && b.str != strand::plus;
                });
            std::vector<printed_hit> with;
            for (auto& g : groups)
                for (auto& h : g) with.push_back(std::move(h));
            results_.hits[q] = std::move(with);
        }
    }

private:
    const printed_hit& hit(std::size_t t) const { return results_.hits[pairs_[t].first][pairs_[t].second]; }
    printed_hit& hit(std::size_t t) { return results_.hits[pairs_[t].first][pairs_[t].second]; }
    std::span<const std::uint8_t> query(std::size_t t) const { return searched_.residues(pairs_[t].first, hit(t).str); }
    std::span<const std::uint8_t> subject(std::size_t t) const { return results_.scan.subjects.at(hit(t).subject).span(); }
    double cells(std::size_t t) const { return double(query(t).size()) * double(subject(t).size()); }

    // The hit's alignment (computed here when the output carried none), then the further ones by the long-pair method
    // with forbidden steps (the CPU's vector kernel; faster than full matrices even for short pairs: the demo's 37
    // hits with --max-hsps 5 took 0.24 s that way, 0.08-0.17 s this way on 2 threads).
    // `on_device`: the further alignments on long_backend_'s backend where there is one (the larger pairs).
    void by_long_pair(std::size_t t, thread_pool& pool, const std::function<void(int, double)>& progress = {},
                      bool on_device = false) {
        const auto q = query(t), s = subject(t);
        std::function<std::unique_ptr<long_pair::backend>()> make;
        if (on_device && long_backend_) make = [&] { return long_backend_(q, s); };
        alignment first = hit(t).aln;
        if (first.ops.empty()) {
            long_pair::cpu_backend be(q, s, sc_, pool);
            first = long_pair::align(be, static_cast<std::int64_t>(q.size()), static_cast<std::int64_t>(s.size()), sc_);
        }
        if (zdrop_ < 0) {
            keep(t, long_pair::align_more(q, s, sc_, pool, std::move(first), max_hsps_, 1, std::size_t(1) << 30,
                                          double(1 << 20), 0, progress, {}, make));
            return;
        }
        // --zdrop: stop the further alignments once the best max_hsps blocks are settled.
        std::vector<int> scores;  // of the blocks that pass -e, of the alignments seen so far
        std::size_t seen = 0;
        const auto enough = [&](const std::vector<alignment>& found) {
            for (; seen < found.size(); ++seen)
                for (const alignment& b : zdrop_blocks(found[seen], q, s, sc_, zdrop_, std::size_t(max_hsps_)))
                    if (passes(t, b.score)) scores.push_back(b.score);
            const int last = found.back().score;  // no later alignment, nor any of its blocks, scores more
            if (!passes(t, last)) return true;
            if (scores.size() < std::size_t(max_hsps_)) return false;
            std::nth_element(scores.begin(), scores.begin() + (max_hsps_ - 1), scores.end(), std::greater<>());
            return scores[std::size_t(max_hsps_ - 1)] >= last;
        };
        keep_blocks(t, long_pair::align_more(q, s, sc_, pool, std::move(first), max_hsps_, 1, std::size_t(1) << 30,
                                             double(1 << 20), 0, progress, enough, make));
    }

    // Whether a score of pair t passes -e (every positive score without statistics).
    bool passes(std::size_t t, int score) const {
        if (score <= 0) return false;
        if (!stats_) return true;
        return stats_->evalue(score, searched_.plus.length(pairs_[t].first), subject(t).size()) <= max_evalue_;
    }

    // --zdrop: the blocks of pair t's alignments (the first the hit's), the best max_hsps that pass -e printed, the
    // best in the hit's place; none: the pair is dropped.
    void keep_blocks(std::size_t t, std::vector<alignment> found) {
        printed_hit& h = hit(t);
        if (found.empty() || found[0].score != h.score)
            throw runtime_failure("internal error: the first of a pair's alignments (--zdrop) scores " +
                                  std::to_string(found.empty() ? 0 : found[0].score) + ", its hit " +
                                  std::to_string(h.score));
        const std::size_t q = pairs_[t].first;
        const auto query = searched_.residues(q, h.str), s = subject(t);
        std::vector<alignment> blocks;  // best first; equal scores in the order found (alignment, then path)
        for (const alignment& a : found)
            for (alignment& b : zdrop_blocks(a, query, s, sc_, zdrop_, std::size_t(max_hsps_)))
                blocks.push_back(std::move(b));
        std::stable_sort(blocks.begin(), blocks.end(),
                         [](const alignment& x, const alignment& y) { return x.score > y.score; });
        best_block_[t] = blocks.empty() ? 0 : blocks.front().score;
        std::size_t printed = 0;
        for (alignment& b : blocks) {
            if (printed == std::size_t(max_hsps_) || !passes(t, b.score)) break;  // scores only fall from here
            printed_hit& to = printed == 0 ? h : more_[t].emplace_back();
            if (printed > 0) to.subject = h.subject, to.str = h.str, to.has_statistics = h.has_statistics;
            to.score = b.score;
            if (stats_) {
                to.has_statistics = true;
                to.bit_score = stats_->bit_score(b.score);
                to.evalue = stats_->evalue(b.score, searched_.plus.length(q), s.size());
            }
            to.stats = stats_of(b, shown_.residues(q, h.str), s, sc_.matrix);
            to.aln = std::move(b);
            ++printed;
        }
        if (printed == 0) dropped_[t] = 1;
    }

    // Composition-based statistics: the pair's adjusted matrix M' and gaps x32 (as the hit was aligned:
    // core/align/composition.hpp), so the first is the hit's alignment and the others follow it.
    void under_composition(std::size_t t) {
        const auto q = query(t), s = subject(t);
        const auto r = composition_->adjust(q, composition_of(q, sc_.matrix), s, sw_align(q, s, sc_), sc_.gaps);
        if (!r.aligned) return;
        hsp_options opt;
        opt.max_hsps = max_hsps_;
        opt.max_cells = small_cells_;
        keep(t, sw_align_hsps_wide(q, r.searched, r.matrix, sc_.gaps.open * composition_scale,
                                   sc_.gaps.extend * composition_scale, opt));
    }

    // The alignments of pair t after its first (which must be the hit's), with their scores and E-values, while
    // E <= max_evalue.
    void keep(std::size_t t, std::vector<alignment> found) {
        const std::size_t q = pairs_[t].first;
        const printed_hit& h = hit(t);
        const auto scale = [this](int score) { return composition_ ? unscale_score(score) : score; };
        const int first = found.empty() ? 0 : scale(found[0].score);
        if (found.empty() || first != h.score)
            throw runtime_failure("internal error: the first of a pair's alignments (--max-hsps) scores " +
                                  std::to_string(first) + ", its hit " + std::to_string(h.score));
        const auto s = subject(t);
        for (std::size_t k = 1; k < found.size(); ++k) {
            printed_hit extra;
            extra.subject = h.subject;
            extra.str = h.str;
            extra.score = scale(found[k].score);
            if (stats_) {
                extra.has_statistics = true;
                extra.bit_score = stats_->bit_score(extra.score);
                extra.evalue = composition_ ? stats_->evalue_of_score(double(found[k].score) / composition_scale,
                                                                      searched_.plus.length(q), s.size())
                                            : stats_->evalue(extra.score, searched_.plus.length(q), s.size());
                if (!(extra.evalue <= max_evalue_)) break;  // scores only fall from here
            }
            found[k].score = extra.score;
            extra.stats = stats_of(found[k], shown_.residues(q, h.str), s, sc_.matrix);
            extra.aln = std::move(found[k]);
            more_[t].push_back(std::move(extra));
        }
    }

    search_results& results_;
    const query_strands& searched_;
    const query_strands& shown_;
    const scoring& sc_;
    int max_hsps_;
    double max_evalue_;
    const composition_adjustment* composition_;
    const evalue_calculator* stats_;
    double small_cells_;
    int zdrop_;                                               // --zdrop Z; -1: alignments are not cut
    const long_backend_factory& long_backend_;                // the long pairs' further alignments on a GPU
    std::vector<std::pair<std::size_t, std::size_t>> pairs_;  // (query, printed hit)
    std::vector<std::vector<printed_hit>> more_;              // per pair: its further alignments
    std::vector<char> dropped_;                               // per pair: no block passed (--zdrop)
    std::vector<int> best_block_;                             // per pair: its best block's score (--zdrop)
};

}  // namespace

std::size_t add_hsps(search_results& results, const query_strands& searched, const query_strands& shown,
                     const scoring& sc, int max_hsps, double max_evalue, int threads, bool progress,
                     const composition_adjustment* composition, int zdrop, const long_backend_factory& long_backend) {
    if (max_hsps <= 1 && zdrop < 0) return 0;
    if (zdrop >= 0 && composition)
        throw usage_error("--zdrop cuts DNA alignments; it does not go with --comp-based-stats 1 (protein)");
    hsp_finder finder(results, searched, shown, sc, std::max(max_hsps, 1), max_evalue, composition, zdrop,
                      long_backend);
    finder.small_pairs(threads);
    const std::size_t large = finder.large_pairs(threads, progress);
    finder.interleave();
    return large;
}

namespace {

// Step 2 of refine_results: a run that kept more than k hits per query prints those of the k best kept (better()'s
// order, ranks included) that it aligned.
void keep_printed(search_results& results, std::size_t k) {
    for (std::size_t q = 0; q < results.hits.size() && q < results.scan.hits.size(); ++q) {
        const auto& kept = results.scan.hits[q];
        if (kept.size() <= k) continue;
        std::set<std::pair<std::uint32_t, strand>> best;
        for (std::size_t i = 0; i < k; ++i) best.emplace(kept[i].subject, kept[i].str);
        std::erase_if(results.hits[q], [&](const printed_hit& h) { return !best.count({h.subject, h.str}); });
    }
}

}  // namespace

std::size_t refine_results(search_results& results, const query_strands& searched, const query_masking& masking,
                          const scoring& sc, const refinement_options& opt) {
    if (opt.composition) adjust_composition(results, searched, sc, *opt.composition, opt.k, opt.evalue, opt.threads);
    else keep_printed(results, opt.k);
    std::size_t linear = 0;
    if (opt.max_hsps > 1 || opt.zdrop >= 0)
        linear = add_hsps(results, searched, masking.shown(searched), sc, opt.max_hsps,
                          opt.evalues ? opt.evalue : std::numeric_limits<double>::infinity(), opt.threads, opt.progress,
                          opt.composition, opt.zdrop, opt.long_backend);
    masking.unmask_hits(results, sc.matrix, opt.alignments);
    if (opt.placements) opt.placements(results);
    return linear;
}

}  // namespace swgpu
