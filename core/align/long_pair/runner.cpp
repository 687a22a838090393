#include "core/align/long_pair/runner.hpp"

#include <chrono>
#include <cstdio>
#include <utility>

namespace swgpu::long_pair {

namespace {

using clock = std::chrono::steady_clock;

// FNV-1a over the residues and their count: the key of a kept alignment, with the other sequence's and the score.
std::uint64_t residues_hash(std::span<const std::uint8_t> r) {
    std::uint64_t h = 1469598103934665603ull ^ r.size();
    for (auto c : r) h = (h ^ c) * 1099511628211ull;
    return h;
}

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f s", s);
    return buf;
}

}  // namespace

runner::runner(const scoring& sc, backend_factory make, bool keep_alignments)
    : sc_(sc), make_(std::move(make)), keep_(keep_alignments) {}

alignment runner::align_now(std::span<const std::uint8_t> q, std::span<const std::uint8_t> d) {
    const auto t0 = clock::now();
    auto be = make_(q, d);
    timing t;
    alignment a = long_pair::align(*be, std::int64_t(q.size()), std::int64_t(d.size()), sc_, &t);
    ++pairs_;
    cells_ += double(q.size()) * double(d.size());
    seconds_ += std::chrono::duration<double>(clock::now() - t0).count();
    if (on_aligned)
        on_aligned("long pair " + std::to_string(q.size()) + " x " + std::to_string(d.size()) + ": score " +
                   std::to_string(a.score) + ", forward pass " + seconds_text(t.forward_s) + ", end cell " +
                   seconds_text(t.end_s) + ", traceback " + seconds_text(t.traceback_s));
    return a;
}

int runner::score(std::span<const std::uint8_t> q, std::span<const std::uint8_t> d) {
    if (on_start) on_start(q.size(), d.size());
    if (keep_) {
        alignment a = align_now(q, d);
        const int s = a.score;
        kept_[{residues_hash(q), residues_hash(d), s}] = std::move(a);
        return s;
    }
    const auto t0 = clock::now();
    const double cells = double(q.size()) * double(d.size());
    auto be = make_(q, d);
    const int s = long_pair::score(*be, std::int64_t(q.size()), std::int64_t(d.size()), sc_).score;
    ++pairs_;
    cells_ += cells;
    seconds_ += std::chrono::duration<double>(clock::now() - t0).count();
    return s;
}

std::vector<int> runner::scores(std::span<const pair_view> pairs) {
    std::vector<int> out(pairs.size(), 0);
    if (pairs.size() == 1) {
        out[0] = score(pairs[0].first, pairs[0].second);
        return out;
    }
    for (std::size_t from = 0; from < pairs.size(); from += batch_pairs) {
        const std::size_t to = std::min(pairs.size(), from + batch_pairs);
        std::vector<long_pair::batch_pair> jobs;
        double cells = 0;
        for (std::size_t b = from; b < to; ++b) {
            const auto [q, d] = pairs[b];
            jobs.push_back({[this, q, d] { return make_(q, d); }, std::int64_t(q.size()), std::int64_t(d.size())});
            cells += double(q.size()) * double(d.size());
        }
        if (on_batch) on_batch(jobs.size(), cells);
        const auto t0 = clock::now();
        std::vector<alignment> got = long_pair::run_batch(jobs, sc_, keep_);
        const double took = std::chrono::duration<double>(clock::now() - t0).count();
        for (std::size_t b = from; b < to; ++b) {
            const auto [q, d] = pairs[b];
            alignment& a = got[b - from];
            out[b] = a.score;
            if (keep_) kept_[{residues_hash(q), residues_hash(d), a.score}] = std::move(a);
        }
        pairs_ += jobs.size();
        cells_ += cells;
        seconds_ += took;
        if (on_aligned)
            on_aligned(std::to_string(jobs.size()) + " long pairs side by side (" + std::to_string(cells / 1e9) +
                       " G cells): " + seconds_text(took));
    }
    return out;
}

alignment runner::align(const scored_pair& p) {
    const auto it = kept_.find({residues_hash(p.query), residues_hash(p.subject), p.score});
    if (it != kept_.end()) return it->second;
    return align_now(p.query, p.subject);
}

}  // namespace swgpu::long_pair
