// Long pairs on the GPU (gpu/align/long_pair*.cu) against the CPU: the same score, end cell and alignment as sw_align (which
// the [sw] host tests check against textbook Gotoh) and as the CPU long-pair backend, for random and related pairs
// around band, chunk and grid edges; grids forced down to several levels with small budgets; pairs large enough to
// run several generations of bands through the rings.
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/align/long_pair/long_pair.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/thread_pool.hpp"
#include "core/tuning.hpp"
#include "gpu/engine/engine.hpp"
#include "tests/gpu/engine/sw_on_engine.hpp"
#include "gpu/gpu.hpp"
#include "tests/gpu/harness.hpp"
#include "tests/align/sequence_generators.hpp"

namespace {

using namespace swgpu;
using namespace swgpu::testing;

scoring dna_scoring(int match, int mismatch, int open, int extend) {
    return {substitution_matrix::match_mismatch(match, mismatch), {open, extend}, seq_type::dna};
}

bool same(const alignment& a, const alignment& b) { return a == b; }

void check_pair(const codes& q, const codes& s, const scoring& sc, std::size_t budget, const char* what,
                std::vector<int> devices = {}, long_pair::policy policy = long_pair::policy::antidiagonal) {
    auto be = gpu::long_pair_backend(q, s, sc, budget, devices);
    be->use_policy(policy);
    const auto m = std::int64_t(q.size()), n = std::int64_t(s.size());
    const auto want = sw_align(q, s, sc);
    const auto end = long_pair::score(*be, m, n, sc);
    const auto got = long_pair::align(*be, m, n, sc);
    if (end.score != want.score || end.query_end != want.query_end || end.subject_end != want.subject_end ||
        !same(got, want)) {
        std::fprintf(stderr, "%s %zu x %zu: GPU score %d end %lld,%lld begin %lld,%lld; CPU score %d end %lld,%lld begin %lld,%lld\n",
                     what, q.size(), s.size(), got.score, (long long)got.query_end, (long long)got.subject_end,
                     (long long)got.query_begin, (long long)got.subject_begin, want.score, (long long)want.query_end,
                     (long long)want.subject_end, (long long)want.query_begin, (long long)want.subject_begin);
        CHECK(false);
    }
    CHECK(rescore(got, q, s, sc) == got.score);
}

// Four pairs (query rows q0 + [0, qspan), subjects alternately related to the query and random of s0 + [0, sspan)
// residues) through a split over `devices`, each with a small grid budget (several levels) and with one level.
void check_split_pairs(std::mt19937_64& rng, const scoring& sc, const std::vector<int>& devices, const char* what,
                       unsigned q0, unsigned qspan, unsigned s0, unsigned sspan) {
    for (int k = 0; k < 4; ++k) {
        const auto q = random_sequence(rng, q0 + rng() % qspan, dna4, sc.matrix);
        const auto s = k % 2 ? mutate(rng, q, 0.04, 8, 80, dna4, sc.matrix)
                             : random_sequence(rng, s0 + rng() % sspan, dna4, sc.matrix);
        check_pair(q, s, sc, std::size_t(1) << 16, what, devices);
        check_pair(q, s, sc, 0, what, devices);
    }
}

// A pair large enough for many bands through every border, split over `devices` and aligned `reps` times (a moving
// error is a race), against one device.
void check_large_split(const codes& q, const codes& s, const scoring& sc, const std::vector<int>& devices, int reps) {
    auto one = gpu::long_pair_backend(q, s, sc, std::size_t(64) << 20);
    const auto want = long_pair::align(*one, std::int64_t(q.size()), std::int64_t(s.size()), sc);
    auto split = gpu::long_pair_backend(q, s, sc, std::size_t(64) << 20, devices);
    for (int rep = 0; rep < reps; ++rep)
        CHECK(long_pair::align(*split, std::int64_t(q.size()), std::int64_t(s.size()), sc) == want);
}

}  // namespace

GPU_TEST("long_pair: GPU rectangles give sw_align's alignment on random and related pairs (sanitize)") {
    std::mt19937_64 rng(77);
    const std::vector<scoring> scorings = {dna_scoring(2, -3, 5, 2), dna_scoring(1, -1, 2, 1),
                                           {substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein}};
    for (int k = 0; k < 24; ++k) {
        const auto& sc = scorings[k % scorings.size()];
        const auto& alphabet = sc.type == seq_type::dna ? dna4 : protein20;
        auto [q, s] = random_pair(rng, 3000, alphabet, sc.matrix);
        if (k % 2 == 0) {
            q = random_sequence(rng, 500 + rng() % 3000, alphabet, sc.matrix);
            s = mutate(rng, q, 0.05, 5, 200, alphabet, sc.matrix);
        }
        check_pair(q, s, sc, 0, "random");
    }
}

GPU_TEST("long_pair: every forward entry (both cell codes of the anti-diagonal bands, the compensation method, 16-bit cells) gives sw_align's alignment (sanitize)") {
    // Entries 0-8 (long.entry): bands of 32, 16 and 8 rows per lane for each kernel; entry 9: 16-bit cells (DNA here;
    // BLOSUM62's 20 letters take the default). The compensation method's lanes
    // share one column and scan the vertical gap; its grids are the bands' bit for bit, so the whole alignment (forward
    // pass, checkpoints, recomputed blocks) must be sw_align's. Shapes cross lanes, bands, chunks of 32 columns and
    // band generations; gap costs include a long open and a larger extend.
    std::mt19937_64 rng(808);
    const std::vector<scoring> scorings = {dna_scoring(2, -3, 5, 2), dna_scoring(3, -4, 20, 3),
                                           {substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein}};
    for (int entry = 0; entry <= 9; ++entry) {
        const tuning::scoped_override force("long.entry=" + std::to_string(entry));
        for (const auto& [m, n] : std::vector<std::pair<std::size_t, std::size_t>>{
                 {1, 1}, {1, 40}, {33, 1}, {255, 31}, {257, 33}, {1023, 700}, {1025, 2049}, {4100, 3000}}) {
            for (const auto& sc : scorings) {
                const auto& alphabet = sc.type == seq_type::dna ? dna4 : protein20;
                const auto q = random_sequence(rng, m, alphabet, sc.matrix);
                auto s = random_sequence(rng, n, alphabet, sc.matrix);
                if (m > 8 && n > 8) std::copy_n(q.begin(), std::min(m, n) / 2, s.begin() + std::min<std::size_t>(3, n / 4));
                check_pair(q, s, sc, 0, ("entry " + std::to_string(entry)).c_str());
            }
        }
        const auto q = random_sequence(rng, 9000, dna4, scorings[0].matrix);
        const auto s = mutate(rng, q, 0.04, 10, 100, dna4, scorings[0].matrix);
        check_pair(q, s, scorings[0], std::size_t(1) << 16, ("entry " + std::to_string(entry) + ", small grid").c_str());
    }
}

GPU_TEST("long_pair: 16-bit cells near the edge of 16 bits (large scores, wide spans between neighbours) and beyond it give sw_align's alignment (sanitize)") {
    // 16-bit cells hold each value relative to a base per 16 rows; the kernel is taken where 80·(σmax + oe) + 2·oe + 256
    // < 16384. Match 60 / mismatch -60, gaps 90 + 30·k: σmax + oe = 180, so a chunk's values span up to about 9,000
    // around their base, and related pairs score far past 32767 (bases move with them). Match 100 / mismatch -100,
    // gaps 150 + 50·k is past the bound: 32-bit cells. DNA with N (5 letters): 32-bit cells. The same alignments as
    // sw_align either way, on random and related pairs across bands and chunks.
    std::mt19937_64 rng(4242);
    const tuning::scoped_override force("long.entry=9");
    for (const auto& sc : {dna_scoring(60, -60, 90, 30), dna_scoring(100, -100, 150, 50), dna_scoring(2, -3, 5, 2)}) {
        for (const auto& [m, n] : std::vector<std::pair<std::size_t, std::size_t>>{
                 {1, 1}, {40, 3}, {1023, 1025}, {1025, 2100}, {3000, 2500}}) {
            const auto q = random_sequence(rng, m, dna4, sc.matrix);
            auto s = random_sequence(rng, n, dna4, sc.matrix);
            check_pair(q, s, sc, 0, "16-bit cells, random");
            const auto r = mutate(rng, q, 0.03, 10, 100, dna4, sc.matrix);
            check_pair(q, r, sc, 0, "16-bit cells, related");
        }
        const auto q = random_sequence(rng, 9000, dna4, sc.matrix);
        const auto r = mutate(rng, q, 0.02, 10, 100, dna4, sc.matrix);
        check_pair(q, r, sc, std::size_t(1) << 16, "16-bit cells, 9 kbp, small grid");
        auto with_n = r;
        for (std::size_t k = 100; k < with_n.size(); k += 997) with_n[k] = encode_letters("N", sc.matrix)[0];
        check_pair(q, with_n, sc, 0, "16-bit cells, subject with N");
    }
}

GPU_TEST("long_pair: the compensation policy (--long-policy compensation) gives sw_align's alignment, with bands of each height") {
    // The policy picks the compensation kernel with the bands' own rule (the largest bands that still fill the GPU:
    // 1024, 512 or 256 rows by the pair's rows), so pairs of a few hundred to 40,000 rows reach every height; grids of
    // several levels (small budgets) recompute blocks with thinner bands.
    std::mt19937_64 rng(6161);
    const std::vector<scoring> scorings = {dna_scoring(2, -3, 5, 2), dna_scoring(1, -1, 2, 1),
                                           {substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein}};
    const auto comp = long_pair::policy::compensation;
    for (const auto& sc : scorings) {
        const auto& alphabet = sc.type == seq_type::dna ? dna4 : protein20;
        for (const auto& [m, n] : std::vector<std::pair<std::size_t, std::size_t>>{
                 {1, 1}, {31, 2000}, {700, 1500}, {2049, 1023}, {5000, 5000}}) {
            const auto q = random_sequence(rng, m, alphabet, sc.matrix);
            check_pair(q, random_sequence(rng, n, alphabet, sc.matrix), sc, 0, "compensation policy, random", {}, comp);
            if (m > 30) check_pair(q, mutate(rng, q, 0.04, 8, 80, alphabet, sc.matrix), sc, 0, "compensation policy, related", {}, comp);
        }
        const auto q = random_sequence(rng, 12000, alphabet, sc.matrix);
        check_pair(q, mutate(rng, q, 0.04, 8, 80, alphabet, sc.matrix), sc, std::size_t(1) << 16,
                   "compensation policy, small grid", {}, comp);
    }
    const auto sc = scorings[0];
    const auto q = random_sequence(rng, 40000, dna4, sc.matrix);
    check_pair(q, mutate(rng, q, 0.05, 20, 200, dna4, sc.matrix), sc, 0, "compensation policy, 40 kbp", {}, comp);
}

GPU_TEST("long_pair: band, chunk and grid edges; tiny grid budgets force several levels") {
    std::mt19937_64 rng(3);
    const auto sc = dna_scoring(2, -3, 5, 2);
    for (std::int64_t m : {1, 31, 127, 128, 129, 511, 512, 513, 1025}) {
        for (std::int64_t n : {1, 31, 32, 33, 1023, 1024, 1025, 2049}) {
            const auto q = random_sequence(rng, std::size_t(m), dna4, sc.matrix);
            auto s = random_sequence(rng, std::size_t(n), dna4, sc.matrix);
            if (m > 8 && n > 8) std::copy_n(q.begin(), std::min(q.size(), s.size()) / 2, s.begin() + std::min<std::size_t>(3, s.size() / 4));
            check_pair(q, s, sc, 0, "edges");
        }
    }
    for (std::size_t budget : {std::size_t(16) << 20, std::size_t(1) << 10}) {
        const auto q = random_sequence(rng, 6000, dna4, sc.matrix);
        const auto s = mutate(rng, q, 0.03, 10, 100, dna4, sc.matrix);
        check_pair(q, s, sc, budget, "budget");
    }
}

GPU_TEST("long_pair: 60 kbp related pair, several band generations, equals the CPU long-pair backend") {
    std::mt19937_64 rng(11);
    const auto sc = dna_scoring(2, -3, 5, 2);
    const auto q = random_sequence(rng, 60000, dna4, sc.matrix);
    const auto s = mutate(rng, q, 0.05, 40, 500, dna4, sc.matrix);
    auto be = gpu::long_pair_backend(q, s, sc);
    thread_pool pool(0);
    long_pair::cpu_backend cpu(q, s, sc, pool);
    const auto got = long_pair::align(*be, std::int64_t(q.size()), std::int64_t(s.size()), sc);
    const auto want = long_pair::align(cpu, std::int64_t(q.size()), std::int64_t(s.size()), sc);
    CHECK(got == want);
    CHECK(got.score == sw_score(q, s, sc).score);
    CHECK(rescore(got, q, s, sc) == got.score);
}

GPU_TEST("long_pair: both score-pass policies (anti-diagonal bands, compensation tiles) give sw_score's score and end") {
    std::mt19937_64 rng(21);
    const auto sc = dna_scoring(2, -3, 5, 2);
    for (int k = 0; k < 6; ++k) {
        const auto q = random_sequence(rng, 2000 + rng() % 6000, dna4, sc.matrix);
        const auto s = k % 2 ? mutate(rng, q, 0.05, 4, 50, dna4, sc.matrix) : random_sequence(rng, 3000, dna4, sc.matrix);
        const auto want = sw_score(q, s, sc);
        auto be = gpu::long_pair_backend(q, s, sc);
        CHECK(long_pair::score(*be, std::int64_t(q.size()), std::int64_t(s.size()), sc) == want);
        gpu::schedule_choice choice;
        choice.sched = gpu::schedule::tiled_p2p;
        CHECK(gpu::sw_score(q, s, sc, choice).end == want);
    }
}

GPU_TEST("long_pair: a forward pass split by columns (long.split=columns) over 2, 3 and 5 logical devices gives sw_align's alignment") {
    // Every rectangle is split (long.split_cells=0, long.split_forced=1); a small budget makes K the smallest spacing,
    // so the parts have few block columns each, the last one partial, and the end cell and the path cross parts.
    const tuning::scoped_override split("long.split_cells=0,long.split_forced=1,long.split=columns");
    std::mt19937_64 rng(29);
    const auto sc = dna_scoring(2, -3, 5, 2);
    for (const int parts : {2, 3, 5})
        check_split_pairs(rng, sc, std::vector<int>(static_cast<std::size_t>(parts), 0), "split", 3000, 5000, 4000, 6000);
    const auto q = random_sequence(rng, 60000, dna4, sc.matrix);
    const auto s = mutate(rng, q, 0.05, 40, 500, dna4, sc.matrix);
    check_large_split(q, s, sc, {0, 0, 0}, 1);
}

GPU_TEST("long_pair: a forward pass split by rows into slabs (the default) gives sw_align's alignment") {
    // Slabs of K rows (forced splits), dealt to 2 and 3 logical devices (run one after the other) and, on a machine
    // with several GPUs, to every GPU (at once: each slab's first band reads the slab above's bottom row as it is
    // written); the path crosses slabs.
    const tuning::scoped_override split("long.split_cells=0,long.split_forced=1,long.split=rows");
    std::mt19937_64 rng(37);
    const auto sc = dna_scoring(2, -3, 5, 2);
    std::vector<std::vector<int>> layouts = {{0, 0}, {0, 0, 0}};
    if (gpu::device_count() > 1) {
        std::vector<int> all(static_cast<std::size_t>(gpu::device_count()));
        for (std::size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int>(d);
        layouts.push_back(all);
    }
    for (const auto& devices : layouts) {
        check_split_pairs(rng, sc, devices, "row slabs", 4000, 6000, 3000, 5000);
        const auto q = random_sequence(rng, 70000, dna4, sc.matrix);
        const auto s = mutate(rng, q, 0.05, 40, 500, dna4, sc.matrix);
        check_large_split(q, s, sc, devices, 2);
    }
}

GPU_TEST("long_pair: a forward pass split over every GPU of the machine (parts at once) gives sw_align's alignment") {
    // With distinct physical devices the parts run at the same time, each waiting on the flags its left neighbour
    // raises in mapped host memory: the race a split over logical devices (run one after the other) cannot show.
    const int count = gpu::device_count();
    if (count < 2) {
        std::printf("  (one GPU: the concurrent split is checked on machines with several)\n");
        return;
    }
    const tuning::scoped_override every("long.split_cells=0,long.split_forced=1");
    std::mt19937_64 rng(31);
    const auto sc = dna_scoring(2, -3, 5, 2);
    std::vector<int> all(static_cast<std::size_t>(count));
    for (int d = 0; d < count; ++d) all[static_cast<std::size_t>(d)] = d;
    for (const char* split : {"columns", "rows"}) {
        const tuning::scoped_override by(std::string("long.split=") + split);
        for (const auto& devices : {std::vector<int>{0, 1}, all, std::vector<int>{1, 0}})
            check_split_pairs(rng, sc, devices, split, 3000, 5000, 4000, 6000);
        const auto q = random_sequence(rng, 120000, dna4, sc.matrix);
        const auto s = mutate(rng, q, 0.05, 40, 500, dna4, sc.matrix);
        check_large_split(q, s, sc, all, 3);
        // The grids gathered through host memory, as between GPUs that cannot reach each other's memory.
        const tuning::scoped_override staged("long.peer=0");
        check_large_split(q, s, sc, all, 1);
    }
}

GPU_TEST("long_pair: a batch of pairs side by side on the GPU (contigs against a genome) gives each pair's sw_align") {
    std::mt19937_64 rng(2029);
    for (const auto& sc : {dna_scoring(2, -3, 5, 2),
                           scoring{substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein}}) {
        const bool dna = sc.type == seq_type::dna;
        const std::string& letters = dna ? dna4 : protein20;
        // A "genome" of 30 kbp and 24 "contigs" of 0.1-5 kbp: most copied from it with mutations (both orientations
        // of a DNA pair are two pairs), some random, one of a single residue; and one pair of another subject.
        const auto genome = random_sequence(rng, 30000, letters, sc.matrix);
        const auto other = random_sequence(rng, 9000, letters, sc.matrix);
        std::vector<std::pair<codes, const codes*>> seqs;
        for (int k = 0; k < 24; ++k) {
            const std::size_t len = k == 0 ? 1 : 100 + rng() % 5000;
            if (k % 4 == 3) {
                seqs.emplace_back(random_sequence(rng, len, letters, sc.matrix), &genome);
            } else {
                const std::size_t at = rng() % (genome.size() - len);
                codes piece(genome.begin() + at, genome.begin() + at + len);
                seqs.emplace_back(mutate(rng, piece, 0.03, 4, 40, letters, sc.matrix), &genome);
            }
        }
        seqs.emplace_back(random_sequence(rng, 3000, letters, sc.matrix), &other);
        std::vector<alignment> want;
        for (const auto& [q, s] : seqs) want.push_back(sw_align(q, *s, sc));
        for (const auto policy : {long_pair::policy::antidiagonal, long_pair::policy::compensation})
            for (const bool traceback : {false, true}) {
                std::vector<long_pair::batch_pair> jobs;
                for (const auto& [q, s] : seqs)
                    jobs.push_back({[&sc, policy, q = std::span<const std::uint8_t>(q), s = std::span<const std::uint8_t>(*s)] {
                                        auto be = gpu::long_pair_backend(q, s, sc, 0, {});
                                        be->use_policy(policy);
                                        return be;
                                    },
                                    std::int64_t(q.size()), std::int64_t(s->size())});
                const auto got = long_pair::run_batch(jobs, sc, traceback);
                int wrong = 0;
                for (std::size_t k = 0; k < seqs.size(); ++k) {
                    const bool ok = traceback ? got[k] == want[k] : got[k].score == want[k].score;
                    if (!ok && wrong++ < 5)
                        std::fprintf(stderr, "batch pair %zu (%zu x %zu, traceback %d, policy %d): GPU score %d, sw_align %d\n",
                                     k, seqs[k].first.size(), seqs[k].second->size(), int(traceback), int(policy),
                                     got[k].score, want[k].score);
                }
                CHECK(wrong == 0);
            }
        // The pairs did share the GPU: a contig's pass takes a part of it, under either policy, the two in passes of
        // different kinds (different kernels never run side by side).
        auto be = gpu::long_pair_backend(seqs[1].first, genome, sc, 0, {});
        const long_pair::rect area{0, std::int64_t(seqs[1].first.size()), 0, std::int64_t(genome.size())};
        const auto shape = be->sharing(area, 100000);
        CHECK(shape.units > 0);
        CHECK(shape.units < shape.capacity);
        be->use_policy(long_pair::policy::compensation);
        const auto comp_shape = be->sharing(area, 100000);
        CHECK(comp_shape.units > 0);
        CHECK(comp_shape.kind != shape.kind);
    }
}
