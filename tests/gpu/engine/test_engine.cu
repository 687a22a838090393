// The GPU executors against the CPU oracle run_naive (core/engine/executors.hpp) on the same problem structs: every synthetic
// problem (each operator pair, constant and row-varying weights) × every schedule, row barrier and tiled tuning entry,
// forced one by one, at warp, tile and look-back edges and random shapes up to 2^24 cells. Integer pairs and the
// small-integer (max,+) float problem must match every cell exactly; (+,·) over float within the bound at
// compare_cells. Smith-Waterman through the engine must give the score and end cell of the textbook Gotoh sw_score.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "core/engine/executors.hpp"
#include "core/align/scoring.hpp"
#include "core/align/smith_waterman.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/engine.hpp"
#include "gpu/engine/hybrid.hpp"
#include "gpu/engine/synthetic_problems.hpp"
#include "gpu/engine/tiled_p2p.cuh"
#include "tests/gpu/harness.hpp"
#include "tests/gpu/engine/sw_on_engine.hpp"

namespace {

using namespace swgpu;
using gpu::schedule;
using gpu::schedule_choice;

struct shape {
    index_t rows, cols;
};

// Every forced configuration: row_sync with each barrier, tiled_p2p with each entry and a few tile heights.
std::vector<schedule_choice> all_choices(bool force_map) {
    std::vector<schedule_choice> out;
    for (int barrier : {0, 1}) out.push_back({schedule::row_sync, barrier, -1, 0, force_map});
    for (int entry = 0; entry < gpu::tiled_tuning_entries(); ++entry)
        for (index_t tr : {index_t(0), index_t(1), index_t(7)}) out.push_back({schedule::tiled_p2p, -1, entry, tr, force_map});
    return out;
}

std::string describe(const schedule_choice& c, const shape& s) {
    std::string d = std::string(gpu::schedule_name(c.sched)) + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols);
    if (c.sched == schedule::row_sync) d += c.barrier == 1 ? " grid" : " launch";
    else d += " entry " + std::to_string(c.tiled_entry) + " tile_rows " + std::to_string(c.tile_rows);
    if (c.force_map_scan) d += " map";
    return d;
}

// Shapes at the edges: single cells, warps, the tiled entries' tile widths (128, 256, 512) and heights, row_sync's
// tile (2048), more than 32 row_sync tiles in a row (look-back beyond one window), and tall / wide / square ones.
std::vector<shape> small_shapes() {
    return {{1, 1},   {1, 2},    {2, 1},     {2, 2},    {31, 33},   {32, 32},  {33, 31},   {1, 1023}, {3, 1024},
            {2, 1025}, {5, 127}, {65, 128},  {63, 129}, {64, 255},  {33, 256}, {31, 257},  {7, 511},  {9, 512},
            {11, 513}, {3, 2047}, {4, 2048}, {5, 2049}, {2, 67585}, {1023, 3}, {1024, 1},  {1025, 2}, {100, 100}};
}
std::vector<shape> large_shapes() {
    std::mt19937_64 rng(99);
    // 2^24 cells each; 16 × 2^20 has 512 row_sync tiles per row (more than one look-back window of 256)
    std::vector<shape> s{{4096, 4096}, {64, 262144}, {16384, 1024}, {16, 1048576}};
    for (int k = 0; k < 2; ++k) {  // random shapes up to 2^24 cells
        const index_t r = index_t(1) + index_t(rng() % 4000), c = index_t(1) + index_t(rng() % ((index_t(1) << 24) / r));
        s.push_back({r, c});
    }
    return s;
}

// Exact for integer pairs and (max,+) float on small integers; for (+,·) float |gpu - cpu| <= 2e-5·max(1, |cpu|):
// values stay below 5 (weights sum to 0.8), a cell's rounding is a few ulps and the contraction keeps propagated errors
// within 5× of one step's.
template <class Problem>
bool compare_cells(const std::vector<typename Problem::cell>& got, const std::vector<typename Problem::cell>& want,
                   const std::string& what) {
    using value = typename Problem::value;
    constexpr bool bounded = std::is_same_v<typename Problem::op, plus_times<value>> && std::is_floating_point_v<value>;
    if (got.size() != want.size()) {
        ::swgpu::gputest::report(__FILE__, __LINE__, what + ": " + std::to_string(got.size()) + " cells, want " + std::to_string(want.size()));
        return false;
    }
    for (std::size_t k = 0; k < want.size(); ++k) {
        bool ok;
        if constexpr (bounded) ok = std::fabs(double(got[k]) - double(want[k])) <= 2e-5 * std::fmax(1.0, std::fabs(double(want[k])));
        else ok = got[k] == want[k];
        if (!ok) {
            ::swgpu::gputest::report(__FILE__, __LINE__, what + ": cell " + std::to_string(k) + " got " +
                                                             std::to_string(got[k]) + " want " + std::to_string(want[k]));
            return false;
        }
    }
    return true;
}

template <class Problem>
void check_problem(const char* name, bool large) {
    const bool constant = Problem::constant_weight;
    for (const shape& s : large ? large_shapes() : small_shapes()) {
        Problem p{};
        p.m = s.rows;
        p.n = s.cols;
        p.seed = 1000 + std::uint64_t(s.rows) * 7 + std::uint64_t(s.cols);
        std::vector<typename Problem::cell> want(static_cast<std::size_t>(s.rows * s.cols));
        p.out = want.data();
        run_naive(p);
        for (bool force_map : {false, true}) {
            if (force_map && !constant) continue;
            for (const auto& c : all_choices(force_map)) {
                // Large shapes: the default tile height of each entry only (tile_rows 1 over 2^24 cells is slow).
                if (large && c.sched == schedule::tiled_p2p && c.tile_rows != 0) continue;
                if (large && force_map && c.sched == schedule::row_sync && c.barrier == 0) continue;
                const auto r = gpu::run_synthetic(p, c, true);
                const std::string what = std::string(name) + " " + describe(c, s);
                if (r.report.used != c.sched) ::swgpu::gputest::report(__FILE__, __LINE__, what + ": ran another schedule");
                if (!compare_cells<Problem>(r.all_cells, want, what)) continue;
                const std::vector<typename Problem::cell> last(want.end() - s.cols, want.end());
                compare_cells<Problem>(r.last_row, last, what + " (last row)");
            }
        }
    }
}

std::vector<std::uint8_t> random_protein(std::mt19937_64& rng, std::size_t n, const substitution_matrix& m) {
    static const char letters[] = "ARNDCQEGHILKMFPSTWYV";
    std::vector<std::uint8_t> s(n);
    for (auto& c : s) c = m.code(letters[rng() % 20]);
    return s;
}

// A mutated copy, so that alignments are long and scores high.
std::vector<std::uint8_t> mutate(std::mt19937_64& rng, const std::vector<std::uint8_t>& s, const substitution_matrix& m) {
    std::vector<std::uint8_t> out;
    const auto fresh = random_protein(rng, 8, m);
    for (std::size_t k = 0; k < s.size(); ++k) {
        const auto roll = rng() % 20;
        if (roll == 0) continue;                          // deletion
        if (roll == 1) out.push_back(fresh[rng() % 8]);   // insertion
        out.push_back(roll == 2 ? fresh[rng() % 8] : s[k]);  // substitution or match
    }
    return out;
}

}  // namespace

GPU_TEST("anti-diagonal tile order enumerates every tile once, diagonal by diagonal") {
    for (auto [nti, ntj] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {1, 7}, {7, 1}, {3, 5}, {5, 3}, {4, 4}, {17, 300}, {300, 17}}) {
        std::vector<int> seen(static_cast<std::size_t>(nti * ntj), 0);
        std::int64_t prev_d = 0, prev_ti = -1;
        bool ordered = true;
        for (std::int64_t k = 0; k < nti * ntj; ++k) {
            const auto t = gpu::antidiagonal_tile(k, nti, ntj);
            if (t.ti < 0 || t.ti >= nti || t.tj < 0 || t.tj >= ntj) {
                ordered = false;
                break;
            }
            ++seen[static_cast<std::size_t>(t.ti * ntj + t.tj)];
            const std::int64_t d = t.ti + t.tj;
            if (d < prev_d || (d == prev_d && t.ti <= prev_ti)) ordered = false;
            prev_d = d;
            prev_ti = t.ti;
        }
        CHECK(ordered);
        bool once = true;
        for (int v : seen) once = once && v == 1;
        CHECK(once);
    }
}

GPU_TEST("engine (max,+) int32 equals naive") { check_problem<gpu::synthetic_problem<max_plus<std::int32_t>, false>>("max_plus<int32>", false); }
GPU_TEST("engine (max,+) float equals naive") { check_problem<gpu::synthetic_problem<max_plus<float>, false>>("max_plus<float>", false); }
GPU_TEST("engine (+,*) float within bound") { check_problem<gpu::synthetic_problem<plus_times<float>, false>>("plus_times<float>", false); }
GPU_TEST("engine (+,*) uint32 equals naive") { check_problem<gpu::synthetic_problem<plus_times<std::uint32_t>, false>>("plus_times<uint32>", false); }
GPU_TEST("engine (+,+) uint32 equals naive") { check_problem<gpu::synthetic_problem<plus_plus<std::uint32_t>, false>>("plus_plus<uint32>", false); }
GPU_TEST("engine (max,+) int32 varying weights equals naive") { check_problem<gpu::synthetic_problem<max_plus<std::int32_t>, true>>("max_plus<int32> varying", false); }
GPU_TEST("engine (+,*) float varying weights within bound") { check_problem<gpu::synthetic_problem<plus_times<float>, true>>("plus_times<float> varying", false); }

GPU_TEST("engine large shapes up to 2^24 cells") {
    check_problem<gpu::synthetic_problem<max_plus<std::int32_t>, false>>("max_plus<int32>", true);
    check_problem<gpu::synthetic_problem<plus_times<float>, false>>("plus_times<float>", true);
    check_problem<gpu::synthetic_problem<plus_plus<std::uint32_t>, false>>("plus_plus<uint32>", true);
    check_problem<gpu::synthetic_problem<plus_times<float>, true>>("plus_times<float> varying", true);
}

GPU_TEST("engine Smith-Waterman equals textbook Gotoh") {
    scoring sc{substitution_matrix::builtin("BLOSUM62"), gap_costs{11, 1}};
    std::mt19937_64 rng(31);
    std::vector<shape> shapes{{1, 1}, {1, 40}, {40, 1}, {31, 33}, {32, 32}, {33, 1025}, {1023, 129}, {1025, 2049}, {300, 67585}, {4096, 4096}};
    for (const shape& s : shapes) {
        const auto q = random_protein(rng, static_cast<std::size_t>(s.rows), sc.matrix);
        auto t = s.rows == s.cols || s.cols > 2000 ? mutate(rng, q, sc.matrix) : std::vector<std::uint8_t>{};
        const auto fill = random_protein(rng, static_cast<std::size_t>(s.cols), sc.matrix);
        t.insert(t.end(), fill.begin(), fill.end());  // the mutated query first, then random residues
        t.resize(static_cast<std::size_t>(s.cols));
        const sw_end want = sw_score(q, t, sc);
        for (bool force_map : {false, true})
            for (const auto& c : all_choices(force_map)) {
                if (s.rows * s.cols > 4'000'000 && c.sched == schedule::tiled_p2p && c.tile_rows != 0) continue;
                const auto got = gpu::sw_score(q, t, sc, c);
                if (!(got.end == want))
                    ::swgpu::gputest::report(__FILE__, __LINE__,
                                             "sw " + describe(c, s) + ": got score " + std::to_string(got.end.score) + " at (" +
                                                 std::to_string(got.end.query_end) + "," + std::to_string(got.end.subject_end) +
                                                 ") want " + std::to_string(want.score) + " at (" +
                                                 std::to_string(want.query_end) + "," + std::to_string(want.subject_end) + ")");
            }
        // The hybrid picks one of the schedules and must agree too.
        CHECK(gpu::sw_score(q, t, sc, schedule_choice{}).end == want);
    }
}

GPU_TEST("hybrid switch: planning, parsing and fitting") {
    const auto& active = gpu::active_hybrid_switch();
    CHECK(!active.candidates.empty());
    const auto wide = active.plan("sm_90", "sw", 256, index_t(1) << 22, {});
    const auto square = active.plan("sm_90", "sw", index_t(1) << 15, index_t(1) << 15, {});
    CHECK(wide.sched != schedule::hybrid && wide.barrier >= 0 && wide.tiled_entry >= 0);
    CHECK(square.sched != schedule::hybrid && square.barrier >= 0 && square.tiled_entry >= 0);
    // A fit where row_sync wins below 2^11 rows and tiled_p2p entry 1 above, at two cell counts, picks the winner at
    // every shape, and keeps a schedule the caller asked for.
    std::vector<gpu::hybrid_candidate> configs(3);
    configs[0].sched = schedule::row_sync;
    configs[1].sched = configs[2].sched = schedule::tiled_p2p;
    configs[1].tiled_entry = 0;
    configs[2].tiled_entry = 1;
    std::vector<gpu::hybrid_sample> samples;
    for (int total : {30, 26})
        for (int r = 8; r <= 15; ++r) {
            const index_t rows = index_t(1) << (r - (30 - total) / 2), cols = (index_t(1) << total) / rows;
            samples.push_back({rows, cols, {r < 11 ? 1.0 : 3.0, 2.5, r < 11 ? 2.6 : 2.0}});
        }
    const auto picked = gpu::fit_hybrid(configs, samples);
    bool all_best = true;
    for (double p : picked) all_best = all_best && p == 1.0;
    CHECK(all_best);
    gpu::hybrid_switch s;
    s.candidates = configs;
    const auto small = s.plan("sm_90", "x", 256, index_t(1) << 22, {});
    const auto big = s.plan("sm_90", "x", index_t(1) << 15, index_t(1) << 15, {});
    CHECK(small.sched == schedule::row_sync);
    CHECK(big.sched == schedule::tiled_p2p && big.tiled_entry == 1);
    const auto forced = s.plan("sm_90", "x", index_t(1) << 14, index_t(1) << 16, {schedule::tiled_p2p, -1, -1, 0, false});
    CHECK(forced.sched == schedule::tiled_p2p && forced.tiled_entry == 1);
    const auto forced_row = s.plan("sm_90", "x", index_t(1) << 15, index_t(1) << 15, {schedule::row_sync, 1, -1, 0, false});
    CHECK(forced_row.sched == schedule::row_sync && forced_row.barrier == 1);
    // Round trip through the TSV form.
    const auto back = gpu::hybrid_switch::parse(s.to_tsv("# test\n"), "test");
    REQUIRE(back.candidates.size() == 3);
    CHECK(back.plan("sm_90", "x", index_t(1) << 15, index_t(1) << 15, {}).tiled_entry == 1);
    bool threw = false;
    try {
        gpu::hybrid_switch::parse("# comment\n*\t*\trow_sync\n", "bad.tsv");
    } catch (const swgpu::error& e) {
        threw = e.code() == swgpu::exit_code::bad_input && std::string(e.what()).find("bad.tsv:2") != std::string::npos;
    }
    CHECK(threw);
}

GPU_TEST("device errors become swgpu errors with exit codes") {
    bool oom = false;
    try {
        gpu::device_buffer<char> huge(std::size_t(1) << 50);  // more than any GPU has
    } catch (const swgpu::error& e) {
        oom = e.code() == swgpu::exit_code::out_of_memory;
    }
    CHECK(oom);
    bool runtime = false;
    try {
        gpu::check_cuda(cudaErrorLaunchFailure, "a kernel", "here.cu", 1);
    } catch (const swgpu::error& e) {
        runtime = e.code() == swgpu::exit_code::runtime_failure &&
                  std::string(e.what()).find("here.cu:1") != std::string::npos;
    }
    CHECK(runtime);
    bool bad_entry = false;
    try {
        gpu::synthetic_problem<max_plus<std::int32_t>, false> p{};
        p.m = p.n = 4;
        gpu::run_synthetic(p, {schedule::tiled_p2p, -1, gpu::tiled_tuning_entries(), 0, false}, false);
    } catch (const swgpu::error& e) {
        bad_entry = e.code() == swgpu::exit_code::bad_command_line;
    }
    CHECK(bad_entry);
}

// A small configuration that still crosses tile boundaries in every schedule and scan entry, for scripts/sanitize.sh
// (compute-sanitizer memcheck and racecheck run the test executable with the filter "sanitize").
GPU_TEST("sanitize: small runs of every schedule and scan") {
    using problem = gpu::synthetic_problem<max_plus<std::int32_t>, false>;
    for (const shape s : {shape{40, 300}, shape{3, 5000}}) {
        problem p{};
        p.m = s.rows;
        p.n = s.cols;
        std::vector<std::int32_t> want(static_cast<std::size_t>(s.rows * s.cols));
        p.out = want.data();
        run_naive(p);
        for (bool force_map : {false, true})
            for (const auto& c : all_choices(force_map))
                compare_cells<problem>(gpu::run_synthetic(p, c, true).all_cells, want, "sanitize " + describe(c, s));
    }
    std::vector<float> b(20000);
    for (std::size_t j = 0; j < b.size(); ++j) b[j] = float(int(j * 7919 % 201) - 100);
    for (int e = 0; e < gpu::scan_tuning_entries(); ++e) {
        const auto got = gpu::weighted_scan<max_plus<float>>(b, -1.0f, -INFINITY, gpu::scan_kind::inclusive, e);
        float x = -INFINITY;
        bool same = true;
        for (std::size_t j = 0; j < b.size(); ++j) {
            x = std::fmax(x - 1.0f, b[j]);
            same = same && got[j] == x;
        }
        CHECK(same);
    }
}
