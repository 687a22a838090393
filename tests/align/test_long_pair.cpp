// Long pairs (core/align/long_pair/long_pair.hpp) on the CPU backend: the grid-and-recompute method gives sw_align's score, end cell
// and alignment, checked against the textbook Gotoh of tests/reference; tiny leaves and budgets force every level of
// the recursion (grids inside grids, walks leaving blocks through both edges in every state).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "core/align/hsps.hpp"
#include "core/cancel.hpp"
#include "core/tuning.hpp"
#include "core/align/long_pair/long_pair.hpp"
#include "core/align/simd/long_pair_rows.hpp"
#include "core/align/smith_waterman.hpp"
#include "tests/reference/textbook_gotoh.hpp"
#include "tests/align/sequence_generators.hpp"

using namespace swgpu;
using namespace swgpu::testing;

namespace {

std::string ops_string(const alignment& a) {
    std::string s;
    for (const auto& o : a.ops) s.append(o.len, o.op);
    return s;
}

scoring dna_scoring(int match, int mismatch, int open, int extend) {
    return {substitution_matrix::match_mismatch(match, mismatch), {open, extend}, seq_type::dna};
}

// DNA scored with more than two values (transitions cost less than transversions): the CPU kernel then picks σ per
// subject letter instead of comparing letters.
scoring transition_scoring() {
    const char* text =
        "   A  C  G  T\n"
        "A  2 -3 -1 -3\n"
        "C -3  2 -3 -1\n"
        "G -1 -3  2 -3\n"
        "T -3 -1 -3  2\n";
    return {substitution_matrix::parse_ncbi(text, "transitions", "test"), {5, 2}, seq_type::dna};
}

}  // namespace

TEST_CASE("long pairs on the CPU equal textbook Gotoh (score, end, start, CIGAR) under tight grids", "[long]") {
    std::mt19937_64 rng(31);
    thread_pool pool(4);
    const std::vector<scoring> scorings = {
        dna_scoring(2, -3, 5, 2), dna_scoring(1, -1, 2, 1), transition_scoring(),
        {substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein},
        {substitution_matrix::builtin("BLOSUM62"), {0, 1}, seq_type::protein}};
    // (grid budget in bytes, leaf cells): from one level to several, and leaves of a few tiles.
    const std::vector<std::pair<std::size_t, double>> settings = {
        {std::size_t(1) << 30, 1 << 20}, {4096, 256.0 * 256}, {1 << 14, 300.0 * 300}, {100, 256.0 * 600}};
    for (int k = 0; k < 160; ++k) {
        const auto& sc = scorings[k % scorings.size()];
        const bool dna = sc.type == seq_type::dna;
        auto [q, s] = random_pair(rng, 2500, dna ? dna4 : protein20, sc.matrix);
        if (k % 4 == 0) {  // related long pairs with long gaps: paths that cross many blocks
            q = random_sequence(rng, 1500 + rng() % 1500, dna ? dna4 : protein20, sc.matrix);
            s = mutate(rng, q, 0.05, 6, 300, dna ? dna4 : protein20, sc.matrix);
        }
        const auto ref = reference::textbook_gotoh(
            q, s, [&](std::uint8_t a, std::uint8_t b) { return long(sc.matrix.score(a, b)); }, sc.gaps.open,
            sc.gaps.extend);
        const auto& [budget, leaf] = settings[k % settings.size()];
        INFO("pair " << k << " lengths " << q.size() << " x " << s.size() << " budget " << budget << " leaf " << leaf);
        // Every vector kernel this CPU runs, in turn (4, 8 and 16 lanes).
        const auto kernels = long_pair::rows::available_kernels();
        long_pair::cpu_backend be(q, s, sc, pool, budget, leaf, kernels[k % kernels.size()].lanes);
        const auto end = long_pair::score(be, std::int64_t(q.size()), std::int64_t(s.size()), sc);
        REQUIRE(end.score == ref.score);
        REQUIRE(end.query_end == ref.qend);
        REQUIRE(end.subject_end == ref.send);
        const auto a = long_pair::align(be, std::int64_t(q.size()), std::int64_t(s.size()), sc);
        REQUIRE(a.score == ref.score);
        REQUIRE(a.query_begin == ref.qbeg);
        REQUIRE(a.subject_begin == ref.sbeg);
        REQUIRE(ops_string(a) == ref.ops);
        REQUIRE(rescore(a, q, s, sc) == a.score);
    }
}

TEST_CASE("long pairs: tile edges, one residue against many, identical pairs", "[long]") {
    thread_pool pool(3);
    const auto sc = dna_scoring(2, -3, 5, 2);
    std::mt19937_64 rng(5);
    const std::int64_t t = long_pair::cpu_backend::tile;
    for (std::int64_t m : {std::int64_t(1), t - 1, t, t + 1, 2 * t + 1}) {
        for (std::int64_t n : {std::int64_t(1), t - 1, t, t + 1, 3 * t}) {
            const auto q = random_sequence(rng, std::size_t(m), dna4, sc.matrix);
            auto s = random_sequence(rng, std::size_t(n), dna4, sc.matrix);
            if (n > 10 && m > 10) std::copy_n(q.begin(), std::min<std::size_t>(q.size(), s.size()) / 2, s.begin() + 3);
            INFO(m << " x " << n);
            for (const auto& kernel : long_pair::rows::available_kernels()) {
                long_pair::cpu_backend be(q, s, sc, pool, 64, 256.0 * 256, kernel.lanes);
                REQUIRE(long_pair::align(be, m, n, sc) == sw_align(q, s, sc));
            }
        }
    }
    SECTION("leaves asked smaller than one tile are one tile (the walk ends)") {
        const auto q = random_sequence(rng, 900, dna4, sc.matrix);
        const auto s = random_sequence(rng, 1100, dna4, sc.matrix);
        long_pair::cpu_backend be(q, s, sc, pool, 1 << 12, 100.0);
        CHECK(be.leaf_cells() == 256.0 * 256);
        REQUIRE(long_pair::align(be, 900, 1100, sc) == sw_align(q, s, sc));
    }
    SECTION("identical 3000-residue pair: one diagonal, ties at every cell of it") {
        const auto q = random_sequence(rng, 3000, dna4, sc.matrix);
        long_pair::cpu_backend be(q, q, sc, pool, 1 << 12, 256.0 * 256);
        const auto a = long_pair::align(be, 3000, 3000, sc);
        REQUIRE(a.score == 6000);
        REQUIRE(cigar_string(a.ops) == "3000M");
        REQUIRE(a == sw_align(q, q, sc));
    }
}

TEST_CASE("long pairs: the CPU's forward tasks of several tiles give one tile's grids on any number of threads", "[long]") {
    // Tasks of 1, 2, 3 and 5 tiles per side (partial at the edges; fewer where the threads would idle), on 1 to 7
    // threads, in waves and in the dataflow schedule, over square, narrow and tall rectangles, with grids of a few
    // tiles: the same end, alignment and grids.
    std::mt19937_64 rng(41);
    const auto sc = dna_scoring(2, -3, 5, 2);
    const std::int64_t t = long_pair::cpu_backend::tile;
    struct shape {
        std::size_t m, n;
    };
    for (const shape sh : {shape{3000, 2600}, shape{5200, 3100}, shape{2 * t + 7, 4000}, shape{4000, t - 3}, shape{600, 700}}) {
        const auto q = random_sequence(rng, sh.m, dna4, sc.matrix);
        auto s = mutate(rng, q, 0.05, 6, 100, dna4, sc.matrix);
        s.resize(std::min(s.size(), sh.n));
        while (s.size() < sh.n) s.push_back(q[s.size() % q.size()]);
        const auto want = sw_align(q, s, sc);
        const auto m = std::int64_t(q.size()), n = std::int64_t(s.size());
        for (const char* schedule : {"waves", "dataflow"}) {
            for (const int task : {1, 2, 3, 5}) {
                const tuning::scoped_override tiles("long.cpu_task_tiles=" + std::to_string(task) +
                                                    ",long.cpu_schedule=" + schedule);
                for (const unsigned threads : {1u, 2u, 3u, 7u}) {
                    INFO(sh.m << " x " << sh.n << ", tasks of " << task << " tiles, " << threads << " threads, "
                              << schedule);
                    thread_pool pool(threads);
                    long_pair::cpu_backend be(q, s, sc, pool, 1 << 14, 256.0 * 256);
                    REQUIRE(long_pair::score(be, m, n, sc) == sw_score(q, s, sc));
                    REQUIRE(long_pair::align(be, m, n, sc) == want);
                }
            }
        }
    }
}

TEST_CASE("long pairs: the CPU's 16-bit cells relative to each group's corner give the 32-bit cells' grids", "[long]") {
    // long.cpu_narrow 1 (16-bit cells where rows::narrow_fits allows) against 0 (32-bit cells), for every kernel: the
    // grids' lines and block maxima equal number for number, over related pairs whose scores pass 16384 (the floor
    // then at -32768) and random ones (scores near 0, the floor at -corner), tiles with a last partial group, DNA by
    // two values and by letter, protein by letter (20 letters); a scoring beyond the bound runs 32-bit cells both ways.
    // Then the trace of a rectangle, both ways.
    std::mt19937_64 rng(57);
    thread_pool pool(3);
    const std::vector<scoring> scorings = {dna_scoring(2, -3, 5, 2), transition_scoring(),
                                           {substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein},
                                           dna_scoring(100, -90, 60, 20)};  // (2·32 + 256 + 2)·(100 + 160) > 16384
    CHECK(long_pair::rows::narrow_fits(32, 256, 2, 7));
    CHECK(long_pair::rows::narrow_fits(32, 256, 11, 12));
    CHECK(!long_pair::rows::narrow_fits(32, 256, 100, 80));
    const auto lines_of = [](const long_pair::grid& g) {
        const auto* l = dynamic_cast<const long_pair::host_grid_lines*>(g.lines.get());
        REQUIRE(l != nullptr);
        const auto plain = [](const auto& v) { return std::vector<int>(v.begin(), v.end()); };
        return std::vector<std::vector<int>>{plain(l->row_h), plain(l->row_e), plain(l->col_h), plain(l->col_f), g.block_max};
    };
    for (const auto& sc : scorings) {
        const bool dna = sc.type == seq_type::dna;
        const auto& alphabet = dna ? dna4 : protein20;
        for (const auto& [m, related] : std::vector<std::pair<std::size_t, bool>>{{12000, true}, {3000, false}, {1000, true}}) {
            const auto q = random_sequence(rng, m + rng() % 97, alphabet, sc.matrix);
            const auto s = related ? mutate(rng, q, 0.03, 6, 60, alphabet, sc.matrix) : random_sequence(rng, m, alphabet, sc.matrix);
            const long_pair::rect area{0, std::int64_t(q.size()), 0, std::int64_t(s.size())};
            const auto b = long_pair::borders::matrix_edge(area, sc);
            for (const auto& kernel : long_pair::rows::available_kernels()) {
                INFO(sc.matrix.name() << " " << q.size() << " x " << s.size() << ", " << kernel.lanes << " lanes");
                std::vector<std::vector<int>> got[2];
                for (const int narrow : {0, 1}) {
                    const tuning::scoped_override cells("long.cpu_narrow=" + std::to_string(narrow));
                    long_pair::cpu_backend be(q, s, sc, pool, 1 << 20, 256.0 * 256, kernel.lanes);
                    long_pair::grid g;
                    be.forward(area, b, 512, g);
                    got[narrow] = lines_of(g);
                }
                REQUIRE(got[1] == got[0]);
                if (related && m >= 12000 && sc.gaps.open < 60) CHECK(*std::max_element(got[1][4].begin(), got[1][4].end()) > 16384);
                // The trace of a rectangle (its strips of 512 columns in 16-bit cells, a partial last group): the
                // same nibbles and the same first cell holding the best score.
                const long_pair::rect part{0, std::min<std::int64_t>(area.r1, 1100), 0, std::min<std::int64_t>(area.c1, 1300)};
                const auto target = sw_score(codes(q.begin(), q.begin() + part.r1), codes(s.begin(), s.begin() + part.c1), sc).score;
                long_pair::trace traced[2];
                for (const int narrow : {0, 1}) {
                    const tuning::scoped_override cells("long.cpu_narrow=" + std::to_string(narrow));
                    long_pair::cpu_backend be(q, s, sc, pool, 1 << 20, 256.0 * 256, kernel.lanes);
                    be.trace_rect(part, long_pair::borders::matrix_edge(part, sc), target, traced[narrow]);
                }
                REQUIRE(traced[1].nibbles == traced[0].nibbles);
                REQUIRE(traced[1].hit_i == traced[0].hit_i);
                REQUIRE(traced[1].hit_j == traced[0].hit_j);
                CHECK(traced[1].hit_i >= 0);
            }
        }
    }
}

TEST_CASE("long pairs: a CPU forward pass asked to stop ends with the interruption on every thread count", "[long]") {
    // Asked before the pass starts, and while its tasks run and wait on one another (a 30 kbp pair takes far longer
    // than 2 ms on any thread count): every task leaves, and the pass ends with exit code "interrupted".
    std::mt19937_64 rng(43);
    const auto sc = dna_scoring(2, -3, 5, 2);
    const auto q = random_sequence(rng, 30000, dna4, sc.matrix);
    const auto s = mutate(rng, q, 0.05, 6, 100, dna4, sc.matrix);
    for (const char* schedule : {"waves", "dataflow"})
    for (unsigned threads : {1u, 3u, 8u})
        for (int delay_ms : {0, 2}) {
            INFO(threads << " threads, asked after " << delay_ms << " ms, " << schedule);
            const tuning::scoped_override order(std::string("long.cpu_schedule=") + schedule);
            thread_pool pool(threads);
            long_pair::cpu_backend be(q, s, sc, pool);
            std::thread asker([delay_ms] {
                std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
                request_cancel();
            });
            if (delay_ms == 0) asker.join();
            exit_code code = exit_code::success;
            try {
                (void)long_pair::score(be, std::int64_t(q.size()), std::int64_t(s.size()), sc);
            } catch (const error& e) {
                code = e.code();
            }
            if (asker.joinable()) asker.join();
            withdraw_cancel();
            CHECK(code == exit_code::interrupted);
        }
}

TEST_CASE("long pairs: the CPU trace of a rectangle holds every cell's source and gap bits, and the first target", "[long]") {
    // Each cell's nibble as core/align/long_pair/long_pair.hpp defines it, computed here cell by cell from random borders, against
    // the vector kernel's (every kernel this CPU runs), on shapes around the vector widths; the target is a value
    // the rectangle reaches, so the first cell holding it in row-major order is known.
    std::mt19937_64 rng(11);
    thread_pool pool(2);
    for (const auto& sc : {dna_scoring(2, -3, 5, 2), transition_scoring()}) {
        const int oe = sc.gaps.open + sc.gaps.extend, ext = sc.gaps.extend;
        // (rows, columns): around the vector widths, and past the kernel's strips of 2048 columns.
        std::vector<std::pair<std::int64_t, std::int64_t>> shapes;
        for (const std::int64_t rows : {1, 2, 3, 7, 16, 17, 33, 64})
            for (const std::int64_t cols : {1, 2, 5, 15, 16, 40}) shapes.emplace_back(rows, cols);
        for (const auto& shape : {std::pair<std::int64_t, std::int64_t>{3, 2049}, {17, 4100}, {2, 4096}}) shapes.push_back(shape);
        for (const auto& kernel : long_pair::rows::available_kernels())
            for (const auto& [rows, cols] : shapes) {
                const auto q = random_sequence(rng, 200, dna4, sc.matrix);
                auto s = random_sequence(rng, 4200, dna4, sc.matrix);
                // A related stretch: long diagonals; past the first strip, the best of them there.
                if (cols <= 2048) std::copy_n(q.begin() + 20, 60, s.begin() + 30);
                else std::copy_n(q.begin() + 20, 60, s.begin() + 2130);
                long_pair::cpu_backend be(q, s, sc, pool, 1 << 20, 1 << 20, kernel.lanes);
                const long_pair::rect area{20, 20 + rows, 30, 30 + cols};
                std::uniform_int_distribution<int> val(0, 12);
                long_pair::borders b;
                for (std::int64_t j = 0; j <= cols; ++j) b.top_h.push_back(val(rng));
                for (std::int64_t j = 0; j < cols; ++j) b.top_e.push_back(val(rng) - oe);
                for (std::int64_t i = 0; i < rows; ++i) b.left_h.push_back(val(rng));
                for (std::int64_t i = 0; i < rows; ++i) b.left_f.push_back(val(rng) - oe);
                // The reference, row by row.
                std::vector<int> hprev(b.top_h), e(b.top_e), nib(static_cast<std::size_t>(rows * cols));
                std::vector<int> hval(nib.size());
                for (std::int64_t i = 0; i < rows; ++i) {
                    std::vector<int> hcur(static_cast<std::size_t>(cols + 1));
                    hcur[0] = b.left_h[static_cast<std::size_t>(i)];
                    int f = b.left_f[static_cast<std::size_t>(i)];
                    for (std::int64_t j = 0; j < cols; ++j) {
                        const auto J = static_cast<std::size_t>(j);
                        const int d = hprev[J] + sc.matrix.score(q[static_cast<std::size_t>(20 + i)],
                                                                 s[static_cast<std::size_t>(30 + j)]);
                        const int h = std::max({0, d, e[J], f});
                        const int src = h == 0 ? 0 : h == d ? 1 : h == e[J] ? 2 : 3;
                        const int en = std::max(e[J] - ext, h - oe), fn = std::max(f - ext, h - oe);
                        const auto c = static_cast<std::size_t>(i * cols + j);
                        nib[c] = src | (en == h - oe ? 4 : 0) | (fn == h - oe ? 8 : 0);
                        hval[c] = h;
                        hcur[J + 1] = h;
                        e[J] = en;
                        f = fn;
                    }
                    hprev = hcur;  // hcur[0], this row's left border, is the next row's diagonal at column 0
                }
                const int target = *std::max_element(hval.begin(), hval.end());
                long_pair::trace tr;
                be.trace_rect(area, b, target, tr);
                INFO(kernel.lanes << " lanes, " << rows << " x " << cols);
                for (std::int64_t i = 0; i < rows; ++i)
                    for (std::int64_t j = 0; j < cols; ++j)
                        REQUIRE(tr.at(area.r0 + i, area.c0 + j) == nib[static_cast<std::size_t>(i * cols + j)]);
                if (target > 0) {
                    const auto first = std::find(hval.begin(), hval.end(), target) - hval.begin();
                    REQUIRE(tr.hit_i == area.r0 + first / cols);
                    REQUIRE(tr.hit_j == area.c0 + first % cols);
                } else {
                    REQUIRE(tr.hit_i == -1);
                }
            }
    }
}

namespace {

// A CPU backend that says it shares its device (long_pair::run_batch): `units` of a capacity of 4 in `kind`, or none,
// and lets `tracebacks` pairs trace at once. Its forward passes count the units and kinds running at once, and take a
// little longer so that they overlap; its traces count the pairs tracing at once.
struct share_log {
    std::mutex lock;
    std::size_t in_flight_units = 0, most_units = 0;
    int running = 0, most_running = 0;
    std::set<long long> kinds;  // of the passes running now
    bool over_capacity = false, mixed_kinds = false, unshared_beside_others = false;
    std::set<const void*> tracing;  // the backends tracing now
    std::size_t most_tracing = 0;
};

class sharing_backend final : public long_pair::backend {
public:
    sharing_backend(std::span<const std::uint8_t> q, std::span<const std::uint8_t> s, const scoring& sc,
                    thread_pool& pool, std::size_t units, long long kind, share_log& log, std::size_t tracebacks = 1)
        : inner_(q, s, sc, pool, 1 << 14, 256.0 * 256), units_(units), kind_(kind), log_(log), tracebacks_(tracebacks) {}
    void forward(const long_pair::rect& area, const long_pair::borders& b, std::int64_t K,
                 long_pair::grid& out) override {
        const bool first = area.r0 == 0 && area.c0 == 0 && !forwarded_;
        forwarded_ = true;
        if (first) {
            std::lock_guard<std::mutex> g(log_.lock);
            if (granted_ == 0 && log_.running > 0) log_.unshared_beside_others = true;
            log_.in_flight_units += granted_;
            log_.most_units = std::max(log_.most_units, log_.in_flight_units);
            log_.over_capacity |= log_.in_flight_units > 4;
            ++log_.running;
            log_.most_running = std::max(log_.most_running, log_.running);
            if (granted_) {
                log_.mixed_kinds |= !log_.kinds.empty() && !log_.kinds.count(kind_);
                log_.kinds.insert(kind_);
            }
        }
        if (first) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        inner_.forward(area, b, K, out);
        if (first) {
            std::lock_guard<std::mutex> g(log_.lock);
            log_.in_flight_units -= granted_;
            --log_.running;
            if (log_.running == 0) log_.kinds.clear();
        }
    }
    void trace_rect(const long_pair::rect& area, const long_pair::borders& b, int target,
                    long_pair::trace& out) override {
        {
            std::lock_guard<std::mutex> g(log_.lock);
            log_.tracing.insert(this);
            log_.most_tracing = std::max(log_.most_tracing, log_.tracing.size());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        inner_.trace_rect(area, b, target, out);
        std::lock_guard<std::mutex> g(log_.lock);
        log_.tracing.erase(this);
    }
    std::size_t concurrent_tracebacks() const override { return tracebacks_; }
    std::int64_t spacing_multiple() const override { return inner_.spacing_multiple(); }
    double leaf_cells() const override { return inner_.leaf_cells(); }
    std::size_t grid_budget() const override { return inner_.grid_budget(); }
    share_shape sharing(const long_pair::rect&, std::int64_t) const override { return {units_, 4, kind_}; }
    void share(std::size_t units, std::int64_t) override { granted_ = units; }

private:
    long_pair::cpu_backend inner_;
    std::size_t units_;
    long long kind_;
    share_log& log_;
    std::size_t granted_ = 0;
    bool forwarded_ = false;
    std::size_t tracebacks_;
};

}  // namespace

TEST_CASE("long pairs in a batch: each pair's score and alignment as alone, shares within capacity, one kind at a time, tracebacks side by side", "[long]") {
    thread_pool pool(2);
    std::mt19937_64 rng(77);
    const auto sc = dna_scoring(2, -3, 5, 2);
    std::vector<std::pair<codes, codes>> seqs;
    for (int k = 0; k < 14; ++k) {
        auto q = random_sequence(rng, 200 + rng() % 1400, dna4, sc.matrix);
        auto s = k % 3 == 0 ? mutate(rng, q, 0.08, 4, 60, dna4, sc.matrix) : random_sequence(rng, 300 + rng() % 2000, dna4, sc.matrix);
        seqs.emplace_back(std::move(q), std::move(s));
    }
    seqs.emplace_back(codes{}, random_sequence(rng, 50, dna4, sc.matrix));  // an empty query: score 0
    for (const int kinds : {1, 2}) {
        const std::size_t tracebacks = kinds == 1 ? 1 : 3;  // pairs tracing at once
        for (const bool traceback : {false, true}) {
            share_log log;
            std::vector<long_pair::batch_pair> jobs;
            for (std::size_t k = 0; k < seqs.size(); ++k) {
                const auto& [q, s] = seqs[k];
                // units 1..3 of 4; every fifth pair does not share (units 0).
                const std::size_t units = k % 5 == 4 ? 0 : 1 + k % 3;
                const long long kind = kinds == 1 ? 7 : 7 + static_cast<long long>(k % 2);
                jobs.push_back({[&, q = std::span<const std::uint8_t>(q), s = std::span<const std::uint8_t>(s), units,
                                 kind] { return std::make_unique<sharing_backend>(q, s, sc, pool, units, kind, log, tracebacks); },
                                std::int64_t(q.size()), std::int64_t(s.size())});
            }
            const auto got = long_pair::run_batch(jobs, sc, traceback);
            REQUIRE(got.size() == seqs.size());
            for (std::size_t k = 0; k < seqs.size(); ++k) {
                const auto& [q, s] = seqs[k];
                INFO("pair " << k << " " << q.size() << " x " << s.size() << " traceback " << traceback);
                const alignment ref = sw_align(q, s, sc);
                if (traceback) REQUIRE(got[k] == ref);
                else REQUIRE(got[k].score == ref.score);
            }
            INFO("kinds " << kinds << " traceback " << traceback);
            CHECK_FALSE(log.over_capacity);
            CHECK_FALSE(log.mixed_kinds);
            CHECK_FALSE(log.unshared_beside_others);
            CHECK(log.most_running >= 2);  // passes did run side by side
            CHECK(log.most_tracing <= tracebacks);
            if (traceback && tracebacks > 1) CHECK(log.most_tracing >= 2);  // pairs did trace side by side
        }
    }
}

TEST_CASE("long pairs in a batch on the CPU: pairs side by side on pools of their own give sw_align's alignments", "[long]") {
    thread_pool pool(3);
    std::mt19937_64 rng(78);
    const auto sc = dna_scoring(1, -2, 3, 1);
    const auto genome = random_sequence(rng, 6000, dna4, sc.matrix);
    std::vector<codes> contigs;
    for (int k = 0; k < 9; ++k) {
        const std::size_t len = 100 + rng() % 1200, at = rng() % (genome.size() - len);
        contigs.push_back(mutate(rng, codes(genome.begin() + at, genome.begin() + at + len), 0.05, 3, 20, dna4, sc.matrix));
    }
    for (const bool traceback : {false, true}) {
        std::vector<long_pair::batch_pair> jobs;
        for (const auto& c : contigs)
            jobs.push_back({[&, q = std::span<const std::uint8_t>(c)] {
                                return std::make_unique<long_pair::cpu_backend>(q, genome, sc, pool, 1 << 16, 256.0 * 256);
                            },
                            std::int64_t(c.size()), std::int64_t(genome.size())});
        const auto got = long_pair::run_batch(jobs, sc, traceback);
        for (std::size_t k = 0; k < contigs.size(); ++k) {
            INFO("contig " << k << " of " << contigs[k].size() << " traceback " << traceback);
            const alignment ref = sw_align(contigs[k], genome, sc);
            if (traceback) REQUIRE(got[k] == ref);
            else REQUIRE(got[k].score == ref.score);
        }
    }
}

TEST_CASE("several alignments of a long pair (align_more) equal the full-matrix Waterman-Eggert's, under tight grids", "[long][hsps]") {
    // core/align/hsps.hpp's sw_align_hsps (every matrix in full) is the reference: the same alignments, in order, for
    // random, related and rearranged pairs (an inverted or repeated segment gives further alignments of high score),
    // each vector kernel in turn, grids from one level to several and leaves of a few tiles.
    std::mt19937_64 rng(47);
    thread_pool pool(3);
    const std::vector<scoring> scorings = {
        dna_scoring(2, -3, 5, 2), dna_scoring(1, -1, 2, 1), transition_scoring(),
        {substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein}};
    const std::vector<std::pair<std::size_t, double>> settings = {
        {std::size_t(1) << 30, 1 << 20}, {4096, 256.0 * 256}, {1 << 14, 300.0 * 300}, {100, 256.0 * 600}};
    const auto kernels = long_pair::rows::available_kernels();
    int further = 0;
    for (int k = 0; k < 24; ++k) {
        const auto& sc = scorings[k % scorings.size()];
        const bool dna = sc.type == seq_type::dna;
        const std::string& alphabet = dna ? dna4 : protein20;
        codes q = random_sequence(rng, 900 + rng() % 900, alphabet, sc.matrix), s;
        if (k % 3 == 0) {  // unrelated
            s = random_sequence(rng, 800 + rng() % 800, alphabet, sc.matrix);
        } else {  // related, with a segment repeated (and reversed every other time) further on
            s = mutate(rng, q, 0.06, 4, 60, alphabet, sc.matrix);
            const std::size_t at = rng() % (q.size() / 2), len = 150 + rng() % 250;
            codes seg(q.begin() + static_cast<std::ptrdiff_t>(at), q.begin() + static_cast<std::ptrdiff_t>(std::min(q.size(), at + len)));
            if (k % 2) std::reverse(seg.begin(), seg.end());
            s.insert(s.end(), seg.begin(), seg.end());
        }
        hsp_options opt;
        opt.max_hsps = 4;
        opt.min_score = 20;
        const auto want = sw_align_hsps(q, s, sc, opt);
        const auto& [budget, leaf] = settings[k % settings.size()];
        INFO("pair " << k << " lengths " << q.size() << " x " << s.size() << " budget " << budget << " leaf " << leaf);
        long_pair::cpu_backend be(q, s, sc, pool, budget, leaf, kernels[k % kernels.size()].lanes);
        const auto first = long_pair::align(be, std::int64_t(q.size()), std::int64_t(s.size()), sc);
        const auto got = long_pair::align_more(q, s, sc, pool, first, opt.max_hsps, opt.min_score, budget, leaf,
                                               kernels[(k + 1) % kernels.size()].lanes);
        REQUIRE(got.size() == want.size());  // none when even the best scores below min_score
        for (std::size_t x = 0; x < got.size(); ++x) {
            INFO("alignment " << x);
            CHECK(got[x].score == want[x].score);
            CHECK(got[x].query_begin == want[x].query_begin);
            CHECK(got[x].query_end == want[x].query_end);
            CHECK(got[x].subject_begin == want[x].subject_begin);
            CHECK(got[x].subject_end == want[x].subject_end);
            CHECK(ops_string(got[x]) == ops_string(want[x]));
        }
        further += static_cast<int>(got.size()) - 1;
    }
    CHECK(further >= 30);  // the rearranged pairs do have further alignments
}

TEST_CASE("long pairs: --long-policy auto follows data/long_pair_policy.tsv, the faster policy of the nearest measured size", "[long]") {
    // Read the table from the source tree (the program compiles in its own copy): at each measured size the faster
    // policy, and between two sizes the one nearer on a log scale; rows with "-" are skipped.
    std::ifstream in(std::string(SWGPU_SOURCE_DIR) + "/data/long_pair_policy.tsv");
    REQUIRE(in);
    std::vector<std::pair<double, long_pair::policy>> rows;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#' || line.rfind("cells", 0) == 0) continue;
        std::istringstream fields(line);
        std::string cells, anti, comp;
        fields >> cells >> anti >> comp;
        if (anti == "-" || comp == "-") continue;
        rows.emplace_back(std::stod(cells), std::stod(comp) > std::stod(anti) ? long_pair::policy::compensation
                                                                            : long_pair::policy::antidiagonal);
    }
    REQUIRE(rows.size() >= 2);
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t k = 0; k < rows.size(); ++k) {
        CHECK(long_pair::fastest_policy(rows[k].first) == rows[k].second);
        if (k + 1 < rows.size()) {  // a little to each side of the geometric middle of two neighbouring sizes
            const double middle = std::sqrt(rows[k].first * rows[k + 1].first);
            CHECK(long_pair::fastest_policy(middle * 0.9) == rows[k].second);
            CHECK(long_pair::fastest_policy(middle * 1.1) == rows[k + 1].second);
        }
    }
    CHECK(long_pair::fastest_policy(1.0) == rows.front().second);
    CHECK(long_pair::fastest_policy(1e18) == rows.back().second);
}
