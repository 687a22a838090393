// Rung 1 of the test ladder: the laws of the operator pairs and of map composition, on random values.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>

#include "core/engine/executors.hpp"
#include "core/engine/linear_map.hpp"
#include "core/engine/operator_pair.hpp"

using namespace swgpu;

namespace {

template <class T>
T random_value(std::mt19937_64& rng) {
    if constexpr (std::is_floating_point_v<T>) return std::uniform_real_distribution<T>(-4, 4)(rng);
    else if constexpr (std::is_unsigned_v<T>) return static_cast<T>(rng());
    else return std::uniform_int_distribution<T>(-1000, 1000)(rng);
}

// Integer pairs are checked exactly: (max,+) over small ints, (+,·) and (+,+) over uint64 (a ring modulo 2^64, so
// associativity and distributivity hold exactly even when products wrap).
template <class Op>
void check_laws(std::uint64_t seed) {
    using T = typename Op::value;
    std::mt19937_64 rng(seed);
    for (int k = 0; k < 2000; ++k) {
        const T x = random_value<T>(rng), y = random_value<T>(rng), z = random_value<T>(rng), w = random_value<T>(rng);
        REQUIRE(Op::acc(Op::acc(x, y), z) == Op::acc(x, Op::acc(y, z)));
        REQUIRE(Op::acc(x, y) == Op::acc(y, x));
        REQUIRE(Op::acc(x, Op::identity()) == x);
        REQUIRE(Op::dist(x, Op::dist_identity()) == x);
        if constexpr (Op::dist_distributes) REQUIRE(Op::dist(Op::acc(x, y), w) == Op::acc(Op::dist(x, w), Op::dist(y, w)));
        // power(w, k) is w distributed k times
        T p = Op::dist_identity();
        const int n = static_cast<int>(rng() % 9);
        for (int t = 0; t < n; ++t) p = Op::dist(p, w);
        REQUIRE(Op::power(w, n) == p);
    }
}

template <class Op>
void check_map_composition(std::uint64_t seed) {
    using T = typename Op::value;
    using M = linear_map<Op>;
    std::mt19937_64 rng(seed);
    bool found_noncommuting = false;
    for (int k = 0; k < 2000; ++k) {
        const M a{random_value<T>(rng), random_value<T>(rng)}, b{random_value<T>(rng), random_value<T>(rng)},
            c{random_value<T>(rng), random_value<T>(rng)};
        const T x = random_value<T>(rng);
        // composition is application in order, and associative
        REQUIRE(then(a, b)(x) == b(a(x)));
        REQUIRE(then(then(a, b), c)(x) == then(a, then(b, c))(x));
        REQUIRE(then(M::identity_map(), a)(x) == a(x));
        REQUIRE(then(a, M::identity_map())(x) == a(x));
        if (then(a, b)(x) != then(b, a)(x)) found_noncommuting = true;
    }
    // ... but not commutative: order matters along a row
    if constexpr (!Op::dist_is_acc) REQUIRE(found_noncommuting);
}

// A problem over a pair that is not a Theorem 1 pair: the compensation schedule must not accept it.
struct fmod_problem {
    using op = fmod_plus<double>;
    using cell = double;
    using gathered = double;
    index_t rows() const { return 1; }
    index_t cols() const { return 1; }
    double top(index_t) const { return 0; }
    double left(index_t) const { return 0; }
    double incoming(index_t) const { return 0; }
    double gather(index_t, index_t, double, double) const { return 0; }
    linear_map<op> carry(index_t, index_t, double) const { return {0, 0}; }
    double finish(index_t, index_t, double g, double) { return g; }
};

template <class P>
concept naive_accepts = requires(P& p) { run_naive(p); };
template <class P>
concept tiled_accepts = requires(P& p, thread_pool& pool) { run_tiled(p, pool); };
template <class P>
concept rowscan_accepts = requires(P& p) { run_rowscan(p); };

}  // namespace

TEST_CASE("operator pairs obey their laws", "[algebra]") {
    check_laws<max_plus<std::int64_t>>(1);
    check_laws<max_plus<int>>(2);
    check_laws<plus_times<std::uint64_t>>(3);
    check_laws<plus_plus<std::uint64_t>>(4);
}

TEST_CASE("integer (max,+) never goes below -inf, so weights compose exactly at its edge", "[algebra]") {
    using Op = max_plus<std::int32_t>;
    const std::int32_t inf = Op::identity();
    std::mt19937_64 rng(5);
    for (int k = 0; k < 20000; ++k) {
        // values around -inf (inputs may even lie below it) and ordinary ones
        const auto value = [&] { return rng() % 2 ? inf + std::int32_t(rng() % 21) - 10 : std::int32_t(rng() % 2001) - 1000; };
        const std::int32_t x = value(), y = value();
        const std::int32_t a = -std::int32_t(rng() % 6), b = -std::int32_t(rng() % 6), w = std::int32_t(rng() % 11) - 5;
        REQUIRE(Op::dist(inf, w) == inf);
        REQUIRE(Op::dist(x, w) >= inf);
        if (x <= inf) REQUIRE(Op::dist(x, w) == inf);
        // descending weights compose: two steps equal one step of the summed weight (what a scan's regrouping uses)
        REQUIRE(Op::dist(Op::dist(x, a), b) == Op::dist(x, a + b));
        REQUIRE(Op::dist(Op::acc(x, y), w) == Op::acc(Op::dist(x, w), Op::dist(y, w)));
    }
}

TEST_CASE("maps compose associatively, not commutatively", "[algebra]") {
    check_map_composition<max_plus<std::int64_t>>(5);
    check_map_composition<plus_times<std::uint64_t>>(6);
    check_map_composition<plus_plus<std::uint64_t>>(7);
}

TEST_CASE("the weighted composite equals the composite of maps", "[algebra]") {
    std::mt19937_64 rng(8);
    for (int k = 0; k < 1000; ++k) {
        using Op = max_plus<std::int64_t>;
        const std::int64_t w = -static_cast<std::int64_t>(rng() % 5), b1 = rng() % 100, b2 = rng() % 100;
        const int l1 = 1 + static_cast<int>(rng() % 7), l2 = 1 + static_cast<int>(rng() % 7);
        const linear_map<Op> m1{Op::power(w, l1), b1}, m2{Op::power(w, l2), b2};
        REQUIRE(then(m1, m2).b == then_weighted<Op>(b1, w, l2, b2));
        REQUIRE(then(m1, m2).a == Op::power(w, l1 + l2));
    }
}

TEST_CASE("Theorem 1 conditions are compile-time traits", "[algebra]") {
    STATIC_REQUIRE(theorem1_pair<max_plus<int>>);
    STATIC_REQUIRE(theorem1_pair<plus_times<float>>);
    STATIC_REQUIRE(theorem1_pair<plus_plus<std::int64_t>>);
    STATIC_REQUIRE_FALSE(theorem1_pair<fmod_plus<double>>);
    STATIC_REQUIRE(wavefront_problem<fmod_problem>);
    STATIC_REQUIRE_FALSE(compensable_problem<fmod_problem>);
    // The dependency-preserving executors accept it; the compensation executor does not.
    STATIC_REQUIRE(naive_accepts<fmod_problem>);
    STATIC_REQUIRE(tiled_accepts<fmod_problem>);
    STATIC_REQUIRE_FALSE(rowscan_accepts<fmod_problem>);
}
