// Rungs 2 and 4 of the test ladder on the CPU: for random problems of every operator pair, the compensation schedule
// (rowscan, with the weighted scan and with the general map scan) and the tiled schedule equal the naive executor.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/engine/executors.hpp"
#include "core/engine/operator_pair.hpp"

using namespace swgpu;

namespace {

// The general recurrence of the paper over any pair:
//   A[i][j] = (A[i][j-1] ∘ w0) ◇ (A[i-1][j] ∘ w1[i]) ◇ (A[i-1][j-1] ∘ w2[i]) ◇ c[i][j]
// with the in-row weight w0 either constant per row (weighted scan) or varying per cell (general map scan).
// x_j, the value entering cell j, is A[i][j-1] ∘ w0; the map is x ↦ (x ◇ Ã) ∘ w0, i.e. a = w0 and b = Ã ∘ w0 (or, when ∘
// is ◇, b = Ã). Every finished cell is recorded in `out`.
template <class Op, bool Constant>
struct general_problem {
    using op = Op;
    using T = typename Op::value;
    using cell = T;
    using gathered = T;
    static constexpr bool constant_weight = Constant;

    index_t m, n;
    const T* c;       // m x n
    const T* w0;      // per row (constant) or m x n (varying)
    const T* w1;      // per row
    const T* w2;      // per row
    const T* top_b;   // n + 1 values: row -1, columns -1..n-1
    const T* left_b;  // m values: column -1
    T* out;           // m x n

    T in_weight(index_t i, index_t j) const { return Constant ? w0[i] : w0[i * n + j]; }
    index_t rows() const { return m; }
    index_t cols() const { return n; }
    T top(index_t j) const { return top_b[j + 1]; }
    T left(index_t i) const { return left_b[i]; }
    T incoming(index_t i) const { return Op::dist(left_b[i], in_weight(i, 0)); }
    T weight(index_t i) const { return w0[i]; }
    T gather(index_t i, index_t j, T up, T diag) const {
        return Op::acc(Op::acc(Op::dist(up, w1[i]), Op::dist(diag, w2[i])), c[i * n + j]);
    }
    linear_map<Op> carry(index_t i, index_t j, T g) const {
        // the weight that carries A[i][j] into cell j+1
        const T w = (Constant || j + 1 >= n) ? in_weight(i, j) : in_weight(i, j + 1);
        if constexpr (Op::dist_is_acc) return {w, g};
        else return {w, Op::dist(g, w)};
    }
    T finish(index_t i, index_t j, T g, T x) {
        const T a = Op::acc(g, x);
        out[i * n + j] = a;
        return a;
    }
};

template <class T>
std::vector<T> random_values(std::mt19937_64& rng, std::size_t count, double lo, double hi) {
    std::vector<T> v(count);
    for (auto& x : v) {
        if constexpr (std::is_floating_point_v<T>) x = static_cast<T>(std::uniform_real_distribution<double>(lo, hi)(rng));
        else x = static_cast<T>(std::uniform_int_distribution<long long>(static_cast<long long>(lo), static_cast<long long>(hi))(rng));
    }
    return v;
}

template <class Op, bool Constant>
struct instance {
    using T = typename Op::value;
    index_t m, n;
    std::vector<T> c, w0, w1, w2, top_b, left_b;
    instance(std::mt19937_64& rng, index_t m_, index_t n_, double lo, double hi, double wlo, double whi)
        : m(m_), n(n_) {
        c = random_values<T>(rng, static_cast<std::size_t>(m * n), lo, hi);
        w0 = random_values<T>(rng, static_cast<std::size_t>(Constant ? m : m * n), wlo, whi);
        w1 = random_values<T>(rng, static_cast<std::size_t>(m), wlo, whi);
        w2 = random_values<T>(rng, static_cast<std::size_t>(m), wlo, whi);
        top_b = random_values<T>(rng, static_cast<std::size_t>(n + 1), lo, hi);
        left_b = random_values<T>(rng, static_cast<std::size_t>(m), lo, hi);
    }
    general_problem<Op, Constant> problem(std::vector<T>& out) const {
        out.assign(static_cast<std::size_t>(m * n), T{});
        return {m, n, c.data(), w0.data(), w1.data(), w2.data(), top_b.data(), left_b.data(), out.data()};
    }
};

const std::vector<std::pair<index_t, index_t>> shapes = {
    {1, 1}, {1, 2}, {2, 1}, {2, 2}, {1, 64}, {64, 1}, {3, 31}, {31, 32}, {32, 33}, {33, 65}, {5, 127}, {17, 129}, {100, 300}};

template <class Op, bool Constant>
void check_exact(std::uint64_t seed, double lo, double hi, double wlo, double whi) {
    using T = typename Op::value;
    std::mt19937_64 rng(seed);
    thread_pool pool(3);
    auto all_shapes = shapes;
    for (int r = 0; r < 6; ++r) all_shapes.push_back({1 + static_cast<index_t>(rng() % 90), 1 + static_cast<index_t>(rng() % 400)});
    for (auto [m, n] : all_shapes) {
        INFO("shape " << m << " x " << n);
        instance<Op, Constant> inst(rng, m, n, lo, hi, wlo, whi);
        std::vector<T> ref, got;
        auto p0 = inst.problem(ref);
        run_naive(p0);
        for (index_t block : {1, 3, 32, 64}) {
            auto p = inst.problem(got);
            run_rowscan(p, {.block = block, .force_map_scan = false});
            REQUIRE(got == ref);
            auto q = inst.problem(got);
            run_rowscan(q, {.block = block, .force_map_scan = true});
            REQUIRE(got == ref);
        }
        for (auto [tr, tc] : std::vector<std::pair<index_t, index_t>>{{1, 1}, {7, 5}, {2, 64}, {64, 256}, {1000, 1000}}) {
            auto p = inst.problem(got);
            run_tiled(p, pool, {.tile_rows = tr, .tile_cols = tc});
            REQUIRE(got == ref);
        }
    }
}

}  // namespace

TEST_CASE("(max,+): rowscan and tiled equal naive exactly", "[engine]") {
    check_exact<max_plus<std::int64_t>, true>(11, -50, 50, -6, 2);
    check_exact<max_plus<std::int64_t>, false>(12, -50, 50, -6, 2);
    check_exact<max_plus<int>, true>(13, -1000, 1000, -30, 0);
}

TEST_CASE("(+,·) over integers modulo 2^64: rowscan and tiled equal naive exactly", "[engine]") {
    check_exact<plus_times<std::uint64_t>, true>(21, 0, 1e9, 0, 1e6);
    check_exact<plus_times<std::uint64_t>, false>(22, 0, 1e9, 0, 1e6);
}

TEST_CASE("(+,+) over integers modulo 2^64: rowscan and tiled equal naive exactly", "[engine]") {
    // Path counts grow past 2^63 on the larger shapes: unsigned, so that they wrap (signed overflow is undefined).
    check_exact<plus_plus<std::uint64_t>, true>(31, -1000, 1000, -10, 10);
    check_exact<plus_plus<std::uint64_t>, false>(32, -1000, 1000, -10, 10);
}

// Floats: re-association changes rounding. With |weights| <= 0.5 every contribution decays geometrically along a path,
// so |A| <= 4 max|c| and each value is a sum whose terms the scan regroups in at most log2(block) + #blocks levels;
// each regrouping adds at most one rounding of the running value. A relative bound of 1e-9 on doubles (~4500 ulps)
// is far above that and far below any real error (a missed or doubled term changes a value by >= 1e-3 here).
TEST_CASE("(+,·) over doubles: rowscan within the stated bound, tiled exact", "[engine]") {
    std::mt19937_64 rng(41);
    thread_pool pool(2);
    for (auto [m, n] : shapes) {
        instance<plus_times<double>, true> inst(rng, m, n, 0.001, 1, -0.5, 0.5);
        std::vector<double> ref, got;
        auto p0 = inst.problem(ref);
        run_naive(p0);
        auto p = inst.problem(got);
        run_rowscan(p);
        for (std::size_t k = 0; k < ref.size(); ++k) REQUIRE(std::abs(got[k] - ref[k]) <= 1e-9 * (1 + std::abs(ref[k])));
        auto q = inst.problem(got);
        run_tiled(q, pool, {.tile_rows = 3, .tile_cols = 7});
        REQUIRE(got == ref);  // same operations in the same order per cell
    }
}

TEST_CASE("a pair outside Theorem 1 runs on naive and tiled, identically", "[engine]") {
    std::mt19937_64 rng(51);
    thread_pool pool(3);
    for (auto [m, n] : shapes) {
        instance<fmod_plus<double>, true> inst(rng, m, n, 0, 2000, 0, 700);
        std::vector<double> ref, got;
        auto p0 = inst.problem(ref);
        run_naive(p0);
        auto p = inst.problem(got);
        run_tiled(p, pool, {.tile_rows = 4, .tile_cols = 9});
        REQUIRE(got == ref);
        // and the recurrence really is fmod's: every value lies in [0, modulus)
        for (double v : ref) REQUIRE((v > -1e-6 && v < fmod_plus<double>::modulus));
    }
}
