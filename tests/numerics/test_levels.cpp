// swgpu levels: the inspector-executor (core/numerics/levels.hpp, its timed CPU runs level_runs.hpp), the Matrix Market reader (io/arrays/matrix_market.hpp) and the
// command. References are written here: levels from every conflicting pair of iterations (O(n^2)), the sequential
// loop, forward/backward substitution over a dense copy of the triangle, exact integer solves.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/numerics/level_runs.hpp"
#include "core/numerics/levels.hpp"
#include "core/thread_pool.hpp"
#include "io/arrays/matrix_market.hpp"
#include "io/arrays/npy.hpp"
#include "tests/cli_support.hpp"
#include "tests/numerics/levels_workloads.hpp"

namespace {

using namespace swgpu;
using namespace swgpu::testing::loops;
namespace fs = std::filesystem;

// Levels from the definition: every earlier iteration that conflicts (writes what i reads or writes, or reads what
// i writes) is a dependence.
std::vector<levels::level_t> levels_by_pairs(const levels::indirect_loop& loop) {
    const auto n = static_cast<std::size_t>(loop.iterations());
    const auto k = static_cast<std::size_t>(loop.reads_per_iteration);
    std::vector<levels::level_t> level(n, 0);
    const auto reads_loc = [&](std::size_t it, std::int64_t loc) {
        for (std::size_t r = 0; r < k; ++r)
            if (loop.reads[it * k + r] == loc) return true;
        return false;
    };
    for (std::size_t i = 0; i < n; ++i) {
        levels::level_t l = 0;
        for (std::size_t j = 0; j < i; ++j)
            if (loop.writes[j] == loop.writes[i] || reads_loc(i, loop.writes[j]) || reads_loc(j, loop.writes[i]))
                l = std::max(l, level[j]);
        level[i] = l + 1;
    }
    return level;
}

// The bodies from their definitions (core/numerics/levels.hpp), written out separately.
double body_of(const levels::body_spec& spec, const std::vector<double>& v) {
    const levels::loop_body b = spec.kind;
    const auto& c = spec.coefficients;
    if (b == levels::loop_body::wsum) {
        double acc = 0;
        for (std::size_t r = 0; r < v.size(); ++r) acc = r == 0 ? c[r] * v[r] : acc + c[r] * v[r];
        return acc;
    }
    if (b == levels::loop_body::dot) {
        double acc = c[1] * v[0];
        for (std::size_t r = 1; r + 1 < v.size(); r += 2) acc = acc + (c[0] * v[r]) * v[r + 1];
        return acc;
    }
    double acc = 0;
    if (b == levels::loop_body::max) {
        acc = v.empty() ? 0 : v[0];
        for (const double x : v) acc = std::max(acc, x);
    } else {
        for (const double x : v) acc += x;
    }
    acc += 1;
    return b == levels::loop_body::fmod ? std::fmod(acc, 1021.0) : acc;
}

// A Matrix Market text of the lower factor pattern of a 2-D or 3-D Laplacian, with integer values: -1 off the
// diagonal, 1 on it (so x is exact for integer b).
std::string laplacian_mtx(const std::vector<int>& dims, bool unit) {
    std::int64_t n = 1;
    for (const int d : dims) n *= d;
    std::ostringstream body;
    std::int64_t nnz = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        std::vector<std::int64_t> lower;
        std::int64_t stride = 1, rem = i;
        std::vector<std::int64_t> strides;
        for (const int d : dims) {
            if (rem % d > 0) lower.push_back(i - stride);
            rem /= d;
            stride *= d;
        }
        std::sort(lower.begin(), lower.end());
        for (const auto j : lower) body << i + 1 << ' ' << j + 1 << " -1\n", ++nnz;
        body << i + 1 << ' ' << i + 1 << ' ' << (unit ? 1 : 2 * static_cast<int>(dims.size())) << '\n', ++nnz;
    }
    return "%%MatrixMarket matrix coordinate integer general\n% test\n" + std::to_string(n) + ' ' + std::to_string(n) +
           ' ' + std::to_string(nnz) + '\n' + body.str();
}

// Substitution over a dense copy, ascending columns, one rounding per step (the documented order).
std::vector<double> dense_substitution(const levels::csr_matrix& t, bool upper, const std::vector<double>& b) {
    const auto n = static_cast<std::size_t>(t.rows);
    std::vector<std::map<std::size_t, double>> rows(n);
    for (std::size_t i = 0; i < n; ++i)
        for (auto k = t.row_ptr[i]; k < t.row_ptr[i + 1]; ++k) rows[i][static_cast<std::size_t>(t.col[static_cast<std::size_t>(k)])] = t.val[static_cast<std::size_t>(k)];
    std::vector<double> x(n);
    for (std::size_t p = 0; p < n; ++p) {
        const std::size_t i = upper ? n - 1 - p : p;
        double s = b[i];
        for (const auto& [j, v] : rows[i])
            if (j != i) s = s - v * x[j];
        x[i] = s / rows[i].at(i);
    }
    return x;
}

struct temp_dir : testing::temp_dir {
    temp_dir() : testing::temp_dir("swgpu-levels") {}
};
using testing::slurp;
void put(const std::string& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

std::string npy_vector_f64(const std::vector<double>& v) {
    return io::npy_header(sat::dtype::f64, "(" + std::to_string(v.size()) + ",)") +
           std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}
std::string npy_vector_i64(const std::vector<std::int64_t>& v, const std::string& shape) {
    return io::npy_header(sat::dtype::i64, shape) + std::string(reinterpret_cast<const char*>(v.data()), v.size() * 8);
}

using testing::run_program;
testing::program_result run_swgpu(const std::string& args) { return run_program(args); }
using testing::one_error_line;

exit_code code_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const swgpu::error& e) {
        return e.code();
    }
    return exit_code::success;
}

}  // namespace

TEST_CASE("levels of indirect loops equal the definition: every dependence kind, self-dependences, empty, chains", "[levels]") {
    std::mt19937_64 rng(1);
    for (int trial = 0; trial < 200; ++trial) {
        const std::int64_t n = static_cast<std::int64_t>(rng() % 120);
        const std::int64_t locations = 1 + static_cast<std::int64_t>(rng() % 40);
        const int k = static_cast<int>(rng() % 4);
        const auto loop = random_loop(n, locations, k, rng);
        levels::check_loop(loop, "test");
        CHECK(levels::loop_levels(loop) == levels_by_pairs(loop));
    }
    levels::indirect_loop empty;
    empty.locations = 3;
    CHECK(levels::loop_levels(empty).empty());
    CHECK(levels::group_by_level({}).count() == 0);
    // A single chain: i reads what i-1 wrote.
    levels::indirect_loop chain;
    chain.locations = 100;
    chain.reads_per_iteration = 1;
    for (int i = 0; i < 100; ++i) chain.writes.push_back(i), chain.reads.push_back(i == 0 ? 0 : i - 1);
    const auto lv = levels::loop_levels(chain);
    for (int i = 0; i < 100; ++i) CHECK(lv[static_cast<std::size_t>(i)] == i + 1);
    // Self-dependence only (A[i] = f(A[i])): one level. Anti only (i writes what i+1... reads): chain of 2.
    levels::indirect_loop self;
    self.locations = 10;
    self.reads_per_iteration = 1;
    for (int i = 0; i < 10; ++i) self.writes.push_back(i), self.reads.push_back(i);
    CHECK(levels::group_by_level(levels::loop_levels(self)).count() == 1);
    levels::indirect_loop anti;
    anti.locations = 2;
    anti.reads_per_iteration = 1;
    anti.writes = {1, 0};
    anti.reads = {0, 1};  // iteration 1 writes 0, which iteration 0 read: an anti dependence
    CHECK(levels::loop_levels(anti) == std::vector<levels::level_t>{1, 2});
    levels::indirect_loop output;
    output.locations = 1;
    output.writes = {0, 0, 0};
    CHECK(levels::loop_levels(output) == std::vector<levels::level_t>{1, 2, 3});
}

TEST_CASE("the level executor, pipelined or not, equals the sequential loop for every body and thread count", "[levels]") {
    std::mt19937_64 rng(2);
    for (const unsigned threads : {1u, 2u, 4u})
        for (const auto kind : {levels::loop_body::sum, levels::loop_body::max, levels::loop_body::fmod,
                                levels::loop_body::wsum, levels::loop_body::dot}) {
            thread_pool pool(threads);
            for (const std::int64_t n : {0, 1, 7, 5000, 60000}) {
                // dot takes an odd number of reads (the written element, then pairs); the others two here.
                const int k = kind == levels::loop_body::dot ? 3 : 2;
                const auto loop = random_loop(n, std::max<std::int64_t>(1, n / 3), k, rng);
                levels::body_spec body{kind, {}};
                if (kind == levels::loop_body::wsum) body.coefficients = {0.75, -0.5};
                if (kind == levels::loop_body::dot) body.coefficients = {0.5, 0.25};  // alpha, beta
                REQUIRE(levels::body_mismatch(body, k).empty());
                std::vector<double> a(static_cast<std::size_t>(loop.locations));
                for (auto& v : a) v = static_cast<double>(rng() % 50) / 8;
                std::vector<double> ref = a;
                for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
                    std::vector<double> v;
                    for (int r = 0; r < k; ++r) v.push_back(ref[static_cast<std::size_t>(loop.reads[static_cast<std::size_t>(k) * i + static_cast<std::size_t>(r)])]);
                    ref[static_cast<std::size_t>(loop.writes[i])] = body_of(body, v);
                }
                std::vector<double> seq = a;
                levels::run_sequential(loop, body, seq);
                CHECK(seq == ref);
                // inspection pipelined with execution, chunks of every size (the default, one iteration, odd sizes)
                const auto lv = levels::loop_levels(loop);
                for (const std::size_t per_chunk : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(1000)}) {
                    std::vector<double> piped = a;
                    CHECK(levels::run_pipelined(loop, body, piped, pool, per_chunk) == lv);
                    CHECK(piped == ref);
                }
                const auto sets = levels::group_by_level(lv);
                levels::run_by_levels(loop, body, sets, a, pool);
                CHECK(a == ref);
            }
        }
    CHECK(levels::parse_body("fmod") == levels::loop_body::fmod);
    CHECK(levels::parse_body("wsum") == levels::loop_body::wsum);
    CHECK(levels::parse_body("dot") == levels::loop_body::dot);
    CHECK(!levels::parse_body("min"));
}

TEST_CASE("loop bodies: the documented formulas, any number of reads, coefficients checked", "[levels]") {
    using levels::loop_body;
    const std::vector<double> v = {3, -1.5, 8, 0.25, 2};
    const auto f = [&](loop_body b, std::vector<double> c, int k) { return levels::apply_body(b, c.data(), v.data(), k); };
    CHECK(f(loop_body::sum, {}, 0) == 1);
    CHECK(f(loop_body::sum, {}, 5) == 3 - 1.5 + 8 + 0.25 + 2 + 1);
    CHECK(f(loop_body::max, {}, 0) == 1);
    CHECK(f(loop_body::max, {}, 5) == 9);
    CHECK(f(loop_body::fmod, {}, 5) == 12.75);
    CHECK(f(loop_body::wsum, {}, 0) == 0);
    CHECK(f(loop_body::wsum, {2, 4, 0.5, -8, 1}, 5) == 6 - 6 + 4 - 2 + 2);
    CHECK(f(loop_body::dot, {2, 0.5}, 1) == 1.5);                          // beta * v0
    CHECK(f(loop_body::dot, {2, 0.5}, 5) == 1.5 + (2 * -1.5) * 8 + (2 * 0.25) * 2);
    // fmod keeps the accumulator below 1021 (the randAcc body).
    const std::vector<double> big = {1020, 5};
    CHECK(levels::apply_body(loop_body::fmod, nullptr, big.data(), 2) == 5);
    // One rounding per operation, left to right.
    const std::vector<double> c = {0.1, 0.2}, t = {3, 3};
    CHECK(levels::apply_body(loop_body::wsum, c.data(), t.data(), 2) == 0.1 * 3 + 0.2 * 3);
    // A thousand reads (more than any fixed buffer): the sum of 1..1000 plus one.
    std::vector<double> many(1000);
    for (std::size_t r = 0; r < many.size(); ++r) many[r] = static_cast<double>(r + 1);
    CHECK(levels::apply_body(loop_body::sum, nullptr, many.data(), 1000) == 500501);

    CHECK(levels::body_mismatch({loop_body::wsum, {1, 2}}, 2).empty());
    CHECK(!levels::body_mismatch({loop_body::wsum, {1, 2}}, 3).empty());
    CHECK(levels::body_mismatch({loop_body::dot, {1, 2}}, 5).empty());
    CHECK(!levels::body_mismatch({loop_body::dot, {1, 2}}, 4).empty());
    CHECK(!levels::body_mismatch({loop_body::dot, {1}}, 3).empty());
    CHECK(!levels::body_mismatch({loop_body::sum, {1}}, 1).empty());
    CHECK(levels::body_mismatch({loop_body::fmod, {}}, 0).empty());
}

TEST_CASE("the paper's workloads: levels equal the definition, every backend equals the sequential loop and the loop nest", "[levels]") {
    std::mt19937_64 rng(4);
    struct named {
        std::string name;
        workload w;
        std::vector<double> direct;
        int levels;  // per kernel; 0: not known in advance
    };
    std::vector<named> all;
    {
        auto w = rand_acc(3000, 1, rng);
        auto d = rand_acc_direct(w);
        all.push_back({"randAcc", std::move(w), std::move(d), 0});
        w = rand_acc(3000, 3, rng);
        d = rand_acc_direct(w);
        all.push_back({"randAcc3", std::move(w), std::move(d), 0});
        w = do_all(3000, rng);
        d = w.a0;
        for (auto& v : d) v = v + 1;
        all.push_back({"doAll", std::move(w), std::move(d), 1});
        w = conv2d(21, rng);
        d = conv2d_direct(w, 21);
        all.push_back({"2dconv", std::move(w), std::move(d), 1});
        w = fdtd2d(13, rng);
        d = fdtd2d_direct(w, 13);
        all.push_back({"fdtd-2d", std::move(w), std::move(d), 1});
        w = gemm(9, rng);
        d = gemm_direct(w, 9);
        all.push_back({"gemm", std::move(w), std::move(d), 1});
        w = mvt(17, rng);
        d = mvt_direct(w, 17);
        all.push_back({"mvt", std::move(w), std::move(d), 1});
    }
    thread_pool one(1), three(3);
    for (const auto& [name, w, direct, expect_levels] : all) {
        INFO(name);
        for (const auto& kn : w.kernels) {
            levels::check_loop(kn.loop, name);
            REQUIRE(levels::body_mismatch(kn.body, kn.loop.reads_per_iteration).empty());
            const auto lv = levels::loop_levels(kn.loop);
            CHECK(lv == levels_by_pairs(kn.loop));
            if (expect_levels) CHECK(levels::group_by_level(lv).count() == expect_levels);
        }
        const auto seq = run_workload(w, nullptr);
        CHECK(seq == direct);
        CHECK(run_workload(w, &one) == seq);
        CHECK(run_workload(w, &three) == seq);
    }
}

TEST_CASE("out-of-range indices and mismatched lengths are refused", "[levels]") {
    levels::indirect_loop loop;
    loop.locations = 4;
    loop.writes = {0, 4};
    CHECK(code_of([&] { levels::check_loop(loop, "w.npy"); }) == exit_code::bad_input);
    loop.writes = {0, 1};
    loop.reads_per_iteration = 1;
    loop.reads = {0};
    CHECK(code_of([&] { levels::check_loop(loop, "w.npy"); }) == exit_code::bad_input);
    loop.reads = {0, -1};
    CHECK(code_of([&] { levels::check_loop(loop, "w.npy"); }) == exit_code::bad_input);
    loop.reads = {0, 3};
    CHECK(code_of([&] { levels::check_loop(loop, "w.npy"); }) == exit_code::success);
}

TEST_CASE("Laplacian factors: level counts are the grid's diagonals, solves equal substitution exactly", "[levels]") {
    thread_pool pool(3);
    for (const auto& dims : std::vector<std::vector<int>>{{1}, {7, 5}, {40, 33}, {6, 5, 4}, {20, 17, 9}}) {
        for (const bool upper : {false, true}) {
            const auto part = upper ? levels::triangle::upper : levels::triangle::lower;
            // The upper factor is the transpose of the lower: a symmetric file gives both triangles.
            std::string text = laplacian_mtx(dims, false);
            text.replace(text.find("general"), 7, "symmetric");
            const auto t = io::parse_matrix_market_triangle(text, "lap.mtx", part);
            const auto lv = levels::triangular_levels(t, part);
            const auto sets = levels::group_by_level(lv);
            int expect = 1;
            for (const int d : dims) expect += d - 1;
            CHECK(sets.count() == expect);
            // Level of grid point (x, y, z) is x + y + z + 1 (lower) or counted from the far corner (upper).
            std::int64_t n = 1;
            for (const int d : dims) n *= d;
            for (std::int64_t i = 0; i < n; ++i) {
                std::int64_t rem = i, sum = 0;
                for (const int d : dims) sum += upper ? d - 1 - rem % d : rem % d, rem /= d;
                CHECK(lv[static_cast<std::size_t>(i)] == sum + 1);
            }
            std::mt19937_64 rng(3);
            std::vector<double> b(static_cast<std::size_t>(n)), x(b.size());
            for (auto& v : b) v = std::ldexp(static_cast<double>(rng() % 1000000), -10) - 300;
            levels::triangular_solve(t, part, sets, b, x, pool);
            CHECK(x == dense_substitution(t, upper, b));
        }
    }
}

TEST_CASE("integer triangles with a unit diagonal solve exactly", "[levels]") {
    thread_pool pool(2);
    const auto t = io::parse_matrix_market_triangle(laplacian_mtx({9, 8, 7}, true), "int.mtx", levels::triangle::lower);
    const auto sets = levels::group_by_level(levels::triangular_levels(t, levels::triangle::lower));
    std::vector<double> b(static_cast<std::size_t>(t.rows)), x(b.size());
    std::vector<std::int64_t> exact(b.size());
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 5) - 2;
    // x[i] = b[i] + sum of x over the lower neighbours, in integers.
    for (std::size_t i = 0; i < b.size(); ++i) {
        std::int64_t s = static_cast<std::int64_t>(b[i]);
        for (auto k = t.row_ptr[i]; k < t.row_ptr[i + 1] - 1; ++k) s += exact[static_cast<std::size_t>(t.col[static_cast<std::size_t>(k)])];
        exact[i] = s;
    }
    levels::triangular_solve(t, levels::triangle::lower, sets, b, x, pool);
    for (std::size_t i = 0; i < b.size(); ++i) CHECK(x[i] == static_cast<double>(exact[i]));
}

TEST_CASE("Matrix Market: fields, symmetry, duplicates, triangles", "[levels]") {
    const std::string general =
        "%%MatrixMarket matrix coordinate real general\n%c\n\n3 3 6\n1 1 2\n2 1 1.5\n2 2 4\n3 3 8\n1 3 5\n2 1 0.5\n";
    auto t = io::parse_matrix_market_triangle(general, "g.mtx", levels::triangle::lower);
    CHECK(t.row_ptr == std::vector<std::int64_t>{0, 1, 3, 4});
    CHECK(t.col == std::vector<std::int32_t>{0, 0, 1, 2});
    CHECK(t.val == std::vector<double>{2, 2.0, 4, 8});  // 1.5 + 0.5 summed; (1,3) dropped
    t = io::parse_matrix_market_triangle(general, "g.mtx", levels::triangle::upper);
    CHECK(t.col == std::vector<std::int32_t>{0, 2, 1, 2});
    CHECK(code_of([&] { (void)io::parse_matrix_market_triangle(general, "g.mtx", levels::triangle::lower, true); }) ==
          exit_code::bad_input);
    const std::string sym = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 5\n1 1\n2 2\n3 3\n2 1\n3 2\n";
    t = io::parse_matrix_market_triangle(sym, "s.mtx", levels::triangle::upper);
    CHECK(t.col == std::vector<std::int32_t>{0, 1, 1, 2, 2});
    CHECK(t.val == std::vector<double>(5, 1.0));
    CHECK(levels::triangular_levels(t, levels::triangle::upper) == std::vector<levels::level_t>{3, 2, 1});
}

TEST_CASE("Matrix Market: malformed, truncated, dense, non-square, singular files are refused", "[levels]") {
    const std::vector<std::string> bad = {
        "",
        "hello\n",
        "%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n1\n",
        "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
        "%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 0\n",
        "%%MatrixMarket matrix coordinate real general\n",
        "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n",
        "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 1\n",
        "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2\n",
        "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 x\n",
        "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n3 2 1\n",
        "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 1\n",
        "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 1 1\n",
        "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 1 1\n2 2 0\n",
        "%%MatrixMarket matrix coordinate real general\n0 0 0\n",
    };
    for (const auto& text : bad) {
        INFO(text);
        CHECK(code_of([&] { (void)io::parse_matrix_market_triangle(text, "bad.mtx", levels::triangle::lower); }) ==
              exit_code::bad_input);
    }
}

TEST_CASE("swgpu levels: solves and loops through the exact interface", "[levels][cli]") {
    temp_dir dir;
    const std::string mtx = laplacian_mtx({12, 10, 3}, false);
    put(dir / "a.mtx", mtx);
    const auto t = io::parse_matrix_market_triangle(mtx, "a.mtx", levels::triangle::lower);
    std::vector<double> b(static_cast<std::size_t>(t.rows));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(static_cast<double>(i));
    put(dir / "b.npy", npy_vector_f64(b));
    auto r = run_swgpu("levels --matrix " + (dir / "a.mtx") + " --rhs " + (dir / "b.npy") + " -o " + (dir / "x.npy") +
                       " --stats " + (dir / "s.tsv") + " --backend cpu --repeat 3 -q");
    REQUIRE(r.code == 0);
    CHECK(slurp(dir / "x.npy") == npy_vector_f64(dense_substitution(t, false, b)));
    const std::string stats = slurp(dir / "s.tsv");
    CHECK(stats.find("level\twidth\n1\t1\n2\t3\n") != std::string::npos);
    r = run_swgpu("levels --matrix " + (dir / "a.mtx") + " --upper -o " + (dir / "u.npy") + " --backend cpu -q");
    REQUIRE(r.code == 0);  // the upper triangle of a general lower-triangular file is its diagonal
    std::vector<double> ones(b.size());
    for (std::size_t i = 0; i < b.size(); ++i) ones[i] = 1.0 / 6.0;
    CHECK(slurp(dir / "u.npy") == npy_vector_f64(ones));

    // A generic loop: A[W[i]] = A[R[i][0]] + A[R[i][1]] + 1.
    std::vector<std::int64_t> w = {3, 0, 3, 1}, rd = {0, 1, 3, 3, 2, 2, 0, 1};
    put(dir / "w.npy", npy_vector_i64(w, "(4,)"));
    put(dir / "r.npy", npy_vector_i64(rd, "(4, 2)"));
    r = run_swgpu("levels --writes " + (dir / "w.npy") + " --reads " + (dir / "r.npy") + " --body sum -o " + (dir / "l.npy") +
                  " --stats " + (dir / "l.tsv") + " --backend cpu -q");
    REQUIRE(r.code == 0);
    std::vector<double> a(4, 1.0);
    for (std::size_t i = 0; i < 4; ++i) a[static_cast<std::size_t>(w[i])] = a[static_cast<std::size_t>(rd[2 * i])] + a[static_cast<std::size_t>(rd[2 * i + 1])] + 1;
    CHECK(slurp(dir / "l.npy") == npy_vector_f64(a));
    // i0 writes 3; i1 reads 3 (true) and writes 0, which i0 read (anti); i2 writes 3 again (output, anti: i1 read
    // 3); i3 reads 0 (true on i1) and writes 1, which i0 read (anti): levels 1, 2, 3, 3.
    CHECK(slurp(dir / "l.tsv").find("level\twidth\n1\t1\n2\t1\n3\t2\n") != std::string::npos);
}

TEST_CASE("swgpu levels: bad inputs give one error line, the documented exit code and no output file", "[levels][cli]") {
    temp_dir dir;
    put(dir / "ok.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 1 1\n2 2 1\n");
    put(dir / "cut.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 1 1\n");
    put(dir / "zero.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 1 1\n2 2 0\n");
    put(dir / "full.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 1\n1 2 1\n2 1 1\n2 2 1\n");
    put(dir / "dense.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n1\n");
    put(dir / "b3.npy", npy_vector_f64({1, 2, 3}));
    put(dir / "w.npy", npy_vector_i64({0, 5}, "(2,)"));
    put(dir / "w2.npy", npy_vector_i64({0, 1}, "(2,)"));
    put(dir / "r3.npy", npy_vector_i64({0, 1, 1}, "(3,)"));
    struct bad_case {
        std::string args;
        int code;
    };
    const std::string o = " -o " + (dir / "o.npy");
    const std::vector<bad_case> cases = {
        {"levels --matrix " + (dir / "cut.mtx") + o, 1},
        {"levels --matrix " + (dir / "zero.mtx") + o, 1},
        {"levels --matrix " + (dir / "dense.mtx") + o, 1},
        {"levels --matrix " + (dir / "full.mtx") + o + " --require-triangular", 1},
        {"levels --matrix " + (dir / "missing.mtx") + o, 1},
        {"levels --matrix " + (dir / "ok.mtx") + " --rhs " + (dir / "b3.npy") + o, 1},
        {"levels --writes " + (dir / "w.npy") + " --locations 3" + o, 1},
        {"levels --writes " + (dir / "w2.npy") + " --reads " + (dir / "r3.npy") + o, 1},
        {"levels --matrix " + (dir / "ok.mtx") + o + " --pipeline", 2},
        {"levels --matrix " + (dir / "ok.mtx") + " --lower --upper" + o, 2},
        {"levels --matrix " + (dir / "ok.mtx"), 2},
        {"levels --matrix " + (dir / "ok.mtx") + " -o " + (dir / "o.txt"), 2},
        {"levels" + o, 2},
        {"levels --matrix " + (dir / "ok.mtx") + " --writes " + (dir / "w2.npy") + o, 2},
        {"levels --matrix " + (dir / "ok.mtx") + " --body min" + o, 2},
        {"levels --matrix " + (dir / "ok.mtx") + " -o " + (dir / "no-such-dir/o.npy"), 5},
    };
    const std::size_t files_before = dir.count();
    for (const auto& c : cases) {
        INFO(c.args);
        const auto r = run_swgpu(c.args + " --backend cpu");
        CHECK(r.code == c.code);
        CHECK(one_error_line(r.err));
        CHECK(dir.count() == files_before);
    }
}

TEST_CASE("swgpu levels: --sequential, wsum and dot bodies, --coefficients through the command line", "[levels][cli]") {
    temp_dir dir;
    std::mt19937_64 rng(6);
    const workload w = fdtd2d(9, rng);
    put(dir / "a0.npy", npy_vector_f64(w.a0));
    std::vector<double> ref = w.a0;
    std::string cur_seq = dir / "a0.npy", cur_lv = dir / "a0.npy";
    for (const auto& kn : w.kernels) {
        put(dir / (kn.name + ".w.npy"), npy_vector_i64(kn.loop.writes, "(" + std::to_string(kn.loop.writes.size()) + ",)"));
        put(dir / (kn.name + ".r.npy"), npy_vector_i64(kn.loop.reads, "(" + std::to_string(kn.loop.writes.size()) + ", " +
                                                                         std::to_string(kn.loop.reads_per_iteration) + ")"));
        std::string coef;
        for (const double c : kn.body.coefficients) coef += (coef.empty() ? "" : ",") + std::to_string(c);
        const std::string loop = "levels --writes " + (dir / (kn.name + ".w.npy")) + " --reads " + (dir / (kn.name + ".r.npy")) +
                                 " --body wsum --coefficients " + coef;
        auto r = run_swgpu(loop + " --array " + cur_seq + " -o " + (dir / (kn.name + ".seq.npy")) + " --sequential");
        REQUIRE(r.code == 0);
        CHECK(r.err.find("sequential loop ") != std::string::npos);
        r = run_swgpu(loop + " --array " + cur_lv + " -o " + (dir / (kn.name + ".lv.npy")) + " --backend cpu -t 3");
        REQUIRE(r.code == 0);
        CHECK(r.err.find(", 1 levels (") != std::string::npos);
        CHECK(r.err.find(", total ") != std::string::npos);
        // the pipelined inspector: the same array
        r = run_swgpu(loop + " --array " + cur_lv + " -o " + (dir / (kn.name + ".pipe.npy")) + " --backend cpu -t 3 --pipeline");
        REQUIRE(r.code == 0);
        CHECK(r.err.find("pipelined, total ") != std::string::npos);
        CHECK(slurp(dir / (kn.name + ".pipe.npy")) == slurp(dir / (kn.name + ".lv.npy")));
        cur_seq = dir / (kn.name + ".seq.npy");
        cur_lv = dir / (kn.name + ".lv.npy");
        levels::run_sequential(kn.loop, kn.body, ref);  // 1, +-0.5, +-0.7 survive std::to_string's six decimals
    }
    CHECK(slurp(cur_seq) == npy_vector_f64(ref));
    CHECK(slurp(cur_lv) == npy_vector_f64(ref));

    // dot: x = beta*x + sum (alpha*a)*b over pairs; a 5-iteration chain through location 0.
    put(dir / "dw.npy", npy_vector_i64({0, 0, 1, 0, 2}, "(5,)"));
    put(dir / "dr.npy", npy_vector_i64({0, 1, 2, 0, 2, 3, 1, 0, 0, 0, 3, 3, 2, 1, 1}, "(5, 3)"));
    put(dir / "da.npy", npy_vector_f64({1, 2, 3, 4}));
    std::vector<double> a = {1, 2, 3, 4};
    const std::vector<std::int64_t> dw = {0, 0, 1, 0, 2}, dr = {0, 1, 2, 0, 2, 3, 1, 0, 0, 0, 3, 3, 2, 1, 1};
    for (std::size_t i = 0; i < 5; ++i) {
        const auto v = [&](std::size_t r) { return a[static_cast<std::size_t>(dr[3 * i + r])]; };
        a[static_cast<std::size_t>(dw[i])] = 0.5 * v(0) + (3 * v(1)) * v(2);
    }
    for (const std::string how : {" --sequential", " --backend cpu -t 1", " --backend cpu -t 2"}) {
        INFO(how);
        const auto r = run_swgpu("levels --writes " + (dir / "dw.npy") + " --reads " + (dir / "dr.npy") + " --array " +
                                 (dir / "da.npy") + " --body dot --coefficients 3,0.5 -q -o " + (dir / "d.npy") + how);
        REQUIRE(r.code == 0);
        CHECK(slurp(dir / "d.npy") == npy_vector_f64(a));
    }

    // The sequential substitution equals the levels' solve.
    const std::string mtx = laplacian_mtx({6, 5, 4}, false);
    put(dir / "a.mtx", mtx);
    REQUIRE(run_swgpu("levels --matrix " + (dir / "a.mtx") + " -o " + (dir / "x1.npy") + " --sequential -q").code == 0);
    REQUIRE(run_swgpu("levels --matrix " + (dir / "a.mtx") + " -o " + (dir / "x2.npy") + " --backend cpu -q").code == 0);
    CHECK(slurp(dir / "x1.npy") == slurp(dir / "x2.npy"));

    // Coefficients that do not fit the body or the reads, and --sequential with what it cannot do: exit 2.
    const std::string dot = "levels --writes " + (dir / "dw.npy") + " --reads " + (dir / "dr.npy") + " -o " + (dir / "e.npy");
    const std::size_t files_before = dir.count();
    for (const std::string& bad : std::vector<std::string>{" --body dot", " --body dot --coefficients 1,2,3", " --body wsum --coefficients 1,2",
                                  " --body sum --coefficients 1", " --body dot --coefficients 1,x",
                                  " --body dot --coefficients 1,inf", " --body dot --coefficients 1,2 --sequential --backend gpu",
                                  " --body dot --coefficients 1,2 --sequential --stats " + (dir / "s.tsv")}) {
        INFO(bad);
        const auto r = run_swgpu(dot + bad + (bad.find("--backend") == std::string::npos ? " --backend cpu" : ""));
        CHECK(r.code == 2);
        CHECK(one_error_line(r.err));
        CHECK(dir.count() == files_before);
    }
    const auto r = run_swgpu("levels --matrix " + (dir / "a.mtx") + " --body dot -o " + (dir / "e.npy"));
    CHECK(r.code == 2);
}

TEST_CASE("scripts/make_loops.py writes the workloads built here, swgpu runs them as the sequential loop does", "[levels][cli]") {
    // The interpreter Debian's python3-numpy belongs to (the set-up installs it); `python3` on the PATH may be another
    // one without NumPy (a pyenv shim, say).
    const std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    if (std::system((python + " -c 'import numpy' >/dev/null 2>&1").c_str()) != 0) {
        WARN(python + " with numpy is not available: scripts/make_loops.py not checked");
        return;
    }
    temp_dir dir;
    std::mt19937_64 rng(7);
    // The deterministic index arrays at --size small, as built by this file.
    const std::map<std::string, workload> built = {
        {"doAll", do_all(4096, rng)}, {"2dconv", conv2d(48, rng)}, {"fdtd-2d", fdtd2d(40, rng)},
        {"gemm", gemm(16, rng)},      {"mvt", mvt(48, rng)}};
    for (const std::string name : {"randAcc", "randAcc3", "doAll", "2dconv", "fdtd-2d", "gemm", "mvt"}) {
        INFO(name);
        const std::string out = dir / name;
        REQUIRE(std::system((python + " '" + std::string(SWGPU_SOURCE_DIR) + "/scripts/make_loops.py' " + name +
                             " --size small -o '" + out + "' >/dev/null").c_str()) == 0);
        std::ifstream tsv(out + "/loop.tsv");
        std::string line;
        std::size_t index = 0;
        std::string cur_seq = out + "/A0.npy", cur_t1 = cur_seq, cur_t3 = cur_seq;
        while (std::getline(tsv, line)) {
            std::istringstream fields(line);
            std::string kname, wfile, rfile, body, coef;
            std::getline(fields, kname, '\t');
            std::getline(fields, wfile, '\t');
            std::getline(fields, rfile, '\t');
            std::getline(fields, body, '\t');
            std::getline(fields, coef, '\t');
            if (const auto it = built.find(name); it != built.end()) {
                REQUIRE(index < it->second.kernels.size());
                const kernel& kn = it->second.kernels[index];
                CHECK(kname == kn.name);
                CHECK(body == levels::body_name(kn.body.kind));
                const sat::array wa = io::read_npy(out + "/" + wfile), ra = io::read_npy(out + "/" + rfile);
                std::vector<std::int64_t> wv(wa.elements()), rv(ra.elements());
                for (std::size_t k = 0; k < wv.size(); ++k) wv[k] = static_cast<std::int64_t>(wa.value(k));
                for (std::size_t k = 0; k < rv.size(); ++k) rv[k] = static_cast<std::int64_t>(ra.value(k));
                CHECK(wv == kn.loop.writes);
                CHECK(rv == kn.loop.reads);
            }
            const std::string args = "levels --writes '" + out + "/" + wfile + "' --reads '" + out + "/" + rfile +
                                     "' --body " + body + (coef == "-" ? "" : " --coefficients " + coef) + " -q";
            const std::string stem = out + "/" + kname;
            REQUIRE(run_swgpu(args + " --array '" + cur_seq + "' -o '" + stem + ".seq.npy' --sequential").code == 0);
            REQUIRE(run_swgpu(args + " --array '" + cur_t1 + "' -o '" + stem + ".t1.npy' --backend cpu -t 1").code == 0);
            REQUIRE(run_swgpu(args + " --array '" + cur_t3 + "' -o '" + stem + ".t3.npy' --backend cpu -t 3").code == 0);
            cur_seq = stem + ".seq.npy";
            cur_t1 = stem + ".t1.npy";
            cur_t3 = stem + ".t3.npy";
            ++index;
        }
        CHECK(index > 0);
        if (const auto it = built.find(name); it != built.end()) CHECK(index == it->second.kernels.size());
        const std::string seq = slurp(cur_seq);
        CHECK(seq.size() > 128);
        CHECK(slurp(cur_t1) == seq);
        CHECK(slurp(cur_t3) == seq);
    }
}

TEST_CASE("swgpu levels: NaN and infinite values are refused, naming the line or element and the count", "[levels][cli]") {
    // In the parser: every value of the file counts, in the triangle or not; the first is named by its line.
    const std::string nan_mtx = "%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 1\n2 1 nan\n2 2 1\n1 3 -inf\n3 3 1\n";
    std::string what;
    try {
        (void)io::parse_matrix_market_triangle(nan_mtx, "nan.mtx", levels::triangle::lower);
    } catch (const swgpu::error& e) {
        CHECK(e.code() == exit_code::bad_input);
        what = e.what();
    }
    CHECK(what == "nan.mtx:4: entry (2, 1) is nan, the first of 2 values in the file that are not finite (NaN or "
                  "infinity); give finite values");
    temp_dir dir;
    put(dir / "nan.mtx", nan_mtx);
    put(dir / "inf.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 1\n2 1 inf\n2 2 1\n");
    put(dir / "ok.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 1 1\n2 2 1\n");
    put(dir / "b.npy", npy_vector_f64({1, std::nan("")}));
    put(dir / "a0.npy", npy_vector_f64({1, 2, INFINITY, 4}));
    put(dir / "w.npy", npy_vector_i64({0, 1}, "(2,)"));
    const std::size_t files_before = dir.count();
    const std::string o = " -o " + (dir / "o.npy");
    struct bad_case {
        std::string args, message;
    };
    const std::vector<bad_case> cases = {
        {"levels --matrix " + (dir / "nan.mtx") + o, "nan.mtx:4: entry (2, 1) is nan, the first of 2 values"},
        {"levels --matrix " + (dir / "inf.mtx") + " --upper" + o, "inf.mtx:4: entry (2, 1) is inf, the first of 1 value"},
        {"levels --matrix " + (dir / "ok.mtx") + " --rhs " + (dir / "b.npy") + o,
         "b.npy: holds 1 value that is not finite (NaN or infinity), the first (nan) at index 1"},
        {"levels --writes " + (dir / "w.npy") + " --array " + (dir / "a0.npy") + o,
         "a0.npy: holds 1 value that is not finite (NaN or infinity), the first (inf) at index 2"},
    };
    for (const auto& c : cases) {
        INFO(c.args);
        const auto r = run_swgpu(c.args + " --backend cpu");
        CHECK(r.code == 1);
        CHECK(one_error_line(r.err));
        CHECK(r.err.find(c.message) != std::string::npos);
        CHECK(dir.count() == files_before);
    }
}

TEST_CASE("swgpu levels: a size line announcing more than the memory holds is refused before allocating", "[levels][cli]") {
    temp_dir dir;
    // Three lines declaring 2·10^9 rows: once the process was killed (exit 137) and left its temporary output.
    put(dir / "huge.mtx", "%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 1\n1 1 1\n");
    const std::size_t files_before = dir.count();
    const auto r = testing::run_program("levels --matrix " + (dir / "huge.mtx") + " -o " + (dir / "x.npy") + " --backend cpu",
                                        "SWGPU_TUNE=host.memory_mib=1024");
    CHECK(r.code == 4);
    CHECK(one_error_line(r.err));
    CHECK(r.err.find("huge.mtx:2: a matrix of 2000000000 rows and 1 entries takes about this much memory to read and "
                     "solve (128 GB); the memory allowed (host.memory_mib) is 1.07 GB: solve a smaller matrix") !=
          std::string::npos);
    CHECK(dir.count() == files_before);  // no x.npy, no hidden temporary file
    // A loop whose array (--locations, or one large index) would not fit.
    put(dir / "w.npy", npy_vector_i64({0, 2000000000}, "(2,)"));
    const std::size_t with_w = dir.count();
    for (const std::string& extra : {std::string(), std::string(" --locations 2000000001")}) {
        const auto l = testing::run_program("levels --writes " + (dir / "w.npy") + extra + " -o " + (dir / "a.npy") +
                                                " --backend cpu",
                                            "SWGPU_TUNE=host.memory_mib=1024");
        INFO(extra);
        CHECK(l.code == 4);
        CHECK(one_error_line(l.err));
        CHECK(l.err.find("an array of 2000000001 float64 locations") != std::string::npos);
        CHECK(l.err.find(extra.empty() ? "use smaller indices" : "use a smaller --locations") != std::string::npos);
        CHECK(dir.count() == with_w);
    }
    // The estimate in the parser, with entries bounded by the file's length: a small file announcing 10^12 entries is
    // truncated (exit 1), not refused for memory.
    CHECK(code_of([&] {
              (void)io::parse_matrix_market_triangle("%%MatrixMarket matrix coordinate real general\n3 3 1000000000000\n1 1 1\n",
                                                     "t.mtx", levels::triangle::lower);
          }) == exit_code::bad_input);
}

TEST_CASE("level runs: the CPU's solve by levels and by substitution give the sequential solution's bits", "[levels]") {
    // A lower bidiagonal system: x[0] = b[0] / 2, x[i] = (b[i] - x[i-1]) / 2. One row per level: the CPU's run takes
    // the sequential substitution (levels.cpu_sequential_width), with the same bits.
    swgpu::levels::csr_matrix t;
    t.rows = 5;
    t.row_ptr = {0};
    for (std::int64_t i = 0; i < 5; ++i) {
        if (i > 0) t.col.push_back(static_cast<std::int32_t>(i - 1)), t.val.push_back(1.0);
        t.col.push_back(static_cast<std::int32_t>(i)), t.val.push_back(2.0);
        t.row_ptr.push_back(t.nonzeros());
    }
    const std::vector<double> b{1, 2, 3, 4, 5};
    const auto reference = swgpu::levels::solve_sequentially(t, swgpu::levels::triangle::lower, b, 2);
    CHECK(reference.solve_ms.size() == 2);
    CHECK(reference.x[0] == 0.5);
    const auto cpu = swgpu::levels::solve_on_cpu(t, swgpu::levels::triangle::lower, b, 3, 2);
    CHECK(cpu.x == reference.x);
    CHECK(cpu.solve_ms.size() == 3);
    CHECK(cpu.widths == std::vector<std::int64_t>(5, 1));
    CHECK(cpu.cpu_sequential);
}
