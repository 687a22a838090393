// The CPU score pass: inter-sequence SIMD kernels (core/align/simd/interseq.hpp) on the database packed into lane streams,
// 8-bit lanes first, saturated subjects again in 16 bits, saturated 16-bit ones again in 32 bits (sw_score).
//
// Work is split into tasks (query, block of subjects): few queries against a big database still give every thread
// many tasks, many queries give one task per query. Tasks run largest first (query length x block cells), so the
// last ones to finish are small. Each task keeps its best max_hits; the blocks of a query are merged at the end, in
// the order of better(), so the result does not depend on the thread count.
#include "core/align/search/score_pass.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <string>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/simd/interseq.hpp"

namespace swgpu {

namespace {

// The 8-bit stage pays when most subjects fit in it: when 8-bit lanes have room for this many best matches.
constexpr int min_matches_in_8bit = 8;
// Tasks per thread to aim for: enough that the largest-first order balances the threads.
constexpr std::size_t tasks_per_thread = 16;

void keep_best(std::vector<score_hit>& hits, std::size_t max_hits) {
    if (hits.size() <= max_hits) return;
    std::nth_element(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(max_hits), hits.end(), better);
    hits.resize(max_hits);
}

void sort_and_trim(std::vector<score_hit>& hits, std::size_t max_hits) {
    keep_best(hits, max_hits);
    std::sort(hits.begin(), hits.end(), better);
}

void check_codes(const sequence_set& set, const scoring& sc, const char* what) {
    const auto letters = static_cast<std::uint8_t>(sc.matrix.size());
    for (std::size_t k = 0; k < set.size(); ++k)
        for (const auto c : set[k])
            if (c >= letters)
                throw runtime_failure((set.source.empty() ? std::string(what) : set.source) + ":" + set.names[k] +
                                      ": residue code " + std::to_string(c) + " is not a letter of matrix " +
                                      sc.matrix.name() + "; encode the sequences with the search's matrix first");
}

// Cuts [0, weights.size()) into at most `parts` contiguous ranges of nearly equal total weight; returns the bounds.
std::vector<std::size_t> split_by_weight(const std::vector<double>& weights, std::size_t parts) {
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    std::vector<std::size_t> bounds{0};
    double seen = 0;
    for (std::size_t k = 0; k < weights.size(); ++k) {
        seen += weights[k];
        const double target = total * static_cast<double>(bounds.size()) / static_cast<double>(parts);
        if (seen >= target && k + 1 < weights.size() && bounds.size() < parts) bounds.push_back(k + 1);
    }
    bounds.push_back(weights.size());
    return bounds;
}

struct task {
    std::size_t query = 0, block = 0;
    double work = 0;
};

// Tasks for every (query, block), largest first.
std::vector<task> make_tasks(const sequence_set& queries, const std::vector<std::size_t>& bounds,
                             const std::vector<double>& block_weight) {
    std::vector<task> tasks;
    for (std::size_t q = 0; q < queries.size(); ++q) {
        if (queries.length(q) == 0) continue;  // scores 0 against everything: no hits
        for (std::size_t b = 0; b + 1 < bounds.size(); ++b)
            tasks.push_back({q, b, static_cast<double>(queries.length(q)) * block_weight[b]});
    }
    std::stable_sort(tasks.begin(), tasks.end(), [](const task& a, const task& b) { return a.work > b.work; });
    return tasks;
}

std::size_t block_count(std::size_t n_queries, std::size_t units, const thread_pool& pool) {
    const std::size_t want = tasks_per_thread * pool.size();
    return std::clamp<std::size_t>((want + n_queries - 1) / std::max<std::size_t>(n_queries, 1), 1,
                                   std::max<std::size_t>(units, 1));
}

// Hits of all tasks, merged per query.
std::vector<std::vector<score_hit>> merge_tasks(std::size_t n_queries, const std::vector<task>& tasks,
                                                std::vector<std::vector<score_hit>>& task_hits,
                                                std::size_t max_hits) {
    std::vector<std::vector<score_hit>> out(n_queries);
    for (std::size_t k = 0; k < tasks.size(); ++k) {
        auto& v = out[tasks[k].query];
        v.insert(v.end(), task_hits[k].begin(), task_hits[k].end());
    }
    for (auto& v : out) sort_and_trim(v, max_hits);
    return out;
}

// Every pair with sw_score: for CPUs without the kernels, and matrices of 32 letters (no code left for padding).
std::vector<std::vector<score_hit>> search_scalar(const sequence_set& queries, const sequence_set& db,
                                                  const scoring& sc, const search_options& opt, thread_pool& pool) {
    std::vector<double> weight(db.size());
    for (std::size_t s = 0; s < db.size(); ++s) weight[s] = static_cast<double>(db.length(s));
    const auto bounds = split_by_weight(weight, block_count(queries.size(), db.size(), pool));
    std::vector<double> block_weight;
    for (std::size_t b = 0; b + 1 < bounds.size(); ++b)
        block_weight.push_back(std::accumulate(weight.begin() + static_cast<std::ptrdiff_t>(bounds[b]),
                                               weight.begin() + static_cast<std::ptrdiff_t>(bounds[b + 1]), 0.0));
    const auto tasks = make_tasks(queries, bounds, block_weight);
    const int floor = std::max(1, opt.min_score);
    std::vector<std::vector<score_hit>> task_hits(tasks.size());
    pool.parallel_for(tasks.size(), [&](std::size_t k) {
        check_cancelled();
        const task& tk = tasks[k];
        auto& hits = task_hits[k];
        for (std::size_t s = bounds[tk.block]; s < bounds[tk.block + 1]; ++s) {
            const int score = sw_score(queries[tk.query], db[s], sc).score;
            if (score >= floor)
                hits.push_back(ranked_hit(score, static_cast<std::uint32_t>(s) + opt.subject_offset,
                                          queries.length(tk.query), db.length(s), opt));
            if (hits.size() >= 2 * opt.max_hits + 64) keep_best(hits, opt.max_hits);
        }
        keep_best(hits, opt.max_hits);
        if (opt.on_cells) opt.on_cells(double(queries.length(tk.query)) * block_weight[tk.block]);
    });
    return merge_tasks(queries.size(), tasks, task_hits, opt.max_hits);
}

// Reports each score of a kernel run to on_score, and the subjects whose lanes saturated to `saturated`.
void collect(const interseq::packed_batch& pb, const std::vector<int>& scores, const auto& on_score,
             std::vector<std::uint32_t>& saturated) {
    for (std::size_t k = 0; k < pb.reported.size(); ++k) {
        const std::uint32_t subject = pb.reported[k];
        if (subject == interseq::packed_batch::no_subject) continue;
        if (scores[k] < 0) saturated.push_back(subject);
        else on_score(subject, scores[k]);
    }
}

std::vector<std::vector<score_hit>> search_interseq(const interseq::kernel_set& ks, const interseq::score_tables& t,
                                                    const sequence_set& queries, const sequence_set& db,
                                                    const scoring& sc, const search_options& opt,
                                                    thread_pool& pool) {
    const bool start_8bit = t.limit8 >= min_matches_in_8bit * std::max(1, sc.matrix.max_score());
    const unsigned lanes = start_8bit ? ks.lanes8 : ks.lanes16;
    const interseq::batch_kernel first_kernel = start_8bit ? ks.score8 : ks.score16;

    // Blocks of consecutive subjects with about equal residues, each one batch; a block should fill its lanes many
    // times over, or the streams cannot even out.
    std::vector<double> weight(db.size());
    std::size_t nonempty = 0;
    for (std::size_t s = 0; s < db.size(); ++s) {
        weight[s] = static_cast<double>(db.length(s));
        nonempty += db.length(s) > 0;
    }
    const auto bounds = split_by_weight(weight, block_count(queries.size(), nonempty / (8 * lanes), pool));
    const std::size_t n_blocks = bounds.size() - 1;
    std::vector<interseq::packed_batch> blocks(n_blocks);
    pool.parallel_for(n_blocks, [&](std::size_t b) {
        std::vector<std::uint32_t> subjects(bounds[b + 1] - bounds[b]);
        std::iota(subjects.begin(), subjects.end(), static_cast<std::uint32_t>(bounds[b]));
        interseq::pack_batch(db, subjects, lanes, ks.columns_per_pass, t.pad, blocks[b]);
    });
    std::vector<double> block_weight(n_blocks);
    for (std::size_t b = 0; b < n_blocks; ++b) block_weight[b] = static_cast<double>(blocks[b].n_columns);
    const auto tasks = make_tasks(queries, bounds, block_weight);
    const int floor = std::max(1, opt.min_score);

    std::vector<std::vector<score_hit>> task_hits(tasks.size());
    pool.parallel_for(tasks.size(), [&](std::size_t k) {
        check_cancelled();
        const task& tk = tasks[k];
        const auto query = queries[tk.query];
        auto& hits = task_hits[k];
        const auto on_score = [&](std::uint32_t subject, int score) {
            if (score < floor) return;
            hits.push_back(ranked_hit(score, subject + opt.subject_offset, query.size(), db.length(subject), opt));
            if (hits.size() >= 2 * opt.max_hits + 64) keep_best(hits, opt.max_hits);
        };
        std::vector<std::byte> scratch(interseq::scratch_bytes(query.size()));
        std::vector<std::uint32_t> saturated, wide;
        const interseq::packed_batch& pb = blocks[tk.block];
        std::vector<int> scores(pb.reported.size());
        first_kernel(query, pb.view(), t, scratch.data(), scores.data());
        collect(pb, scores, on_score, saturated);
        if (start_8bit && !saturated.empty()) {
            interseq::packed_batch pb16;
            interseq::pack_batch(db, saturated, ks.lanes16, ks.columns_per_pass, t.pad, pb16);
            scores.resize(pb16.reported.size());
            ks.score16(query, pb16.view(), t, scratch.data(), scores.data());
            collect(pb16, scores, on_score, wide);
        } else {
            wide.swap(saturated);
        }
        for (const auto subject : wide) on_score(subject, sw_score(query, db[subject], sc).score);
        keep_best(hits, opt.max_hits);
        if (opt.on_cells) {
            double residues = 0;
            for (std::size_t s = bounds[tk.block]; s < bounds[tk.block + 1]; ++s) residues += double(db.length(s));
            opt.on_cells(double(query.size()) * residues);
        }
    });
    return merge_tasks(queries.size(), tasks, task_hits, opt.max_hits);
}

}  // namespace

namespace interseq {

std::vector<std::vector<score_hit>> search_cpu_with(const kernel_set* kernels, const sequence_set& queries,
                                                    const sequence_set& db, const scoring& sc,
                                                    const search_options& opt, thread_pool& pool) {
    if (opt.max_hits == 0 || queries.empty() || db.empty()) return std::vector<std::vector<score_hit>>(queries.size());
    if (static_cast<std::uint64_t>(db.size()) + opt.subject_offset > std::numeric_limits<std::uint32_t>::max())
        throw usage_error("a database of more than 4294967295 sequences is not supported");
    check_codes(queries, sc, "queries");
    check_codes(db, sc, "database");
    const auto tables = kernels ? make_score_tables(sc) : std::nullopt;
    if (!tables) return search_scalar(queries, db, sc, opt, pool);
    return search_interseq(*kernels, *tables, queries, db, sc, opt, pool);
}

}  // namespace interseq

std::vector<std::vector<score_hit>> search_cpu(const sequence_set& queries, const sequence_set& db, const scoring& sc,
                                               const search_options& opt, thread_pool& pool) {
    return interseq::search_cpu_with(interseq::best_kernels(), queries, db, sc, opt, pool);
}

void merge_hits(std::vector<std::vector<score_hit>>& into, const std::vector<std::vector<score_hit>>& chunk,
                std::size_t max_hits) {
    if (into.size() < chunk.size()) into.resize(chunk.size());
    for (std::size_t q = 0; q < chunk.size(); ++q) merge_query_hits(into[q], chunk[q], max_hits);
}

void merge_query_hits(std::vector<score_hit>& into, const std::vector<score_hit>& chunk, std::size_t max_hits) {
    into.insert(into.end(), chunk.begin(), chunk.end());
    sort_and_trim(into, max_hits);
}

}  // namespace swgpu
