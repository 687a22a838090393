// swgpu levels: the inspector-executor (core/levels.hpp), the Matrix Market reader (io/matrix_market.hpp) and the
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
#include "core/levels.hpp"
#include "core/thread_pool.hpp"
#include "io/matrix_market.hpp"
#include "io/npy.hpp"
#include "tests/cli_support.hpp"

namespace {

using namespace swgpu;
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

double body_of(levels::loop_body b, const std::vector<double>& v) {
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

levels::indirect_loop random_loop(std::int64_t n, std::int64_t locations, int k, std::mt19937_64& rng) {
    levels::indirect_loop loop;
    loop.locations = locations;
    loop.reads_per_iteration = k;
    for (std::int64_t i = 0; i < n; ++i) {
        loop.writes.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(locations)));
        for (int r = 0; r < k; ++r) loop.reads.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(locations)));
    }
    return loop;
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

TEST_CASE("the level executor equals the sequential loop for every body and thread count", "[levels]") {
    std::mt19937_64 rng(2);
    for (const unsigned threads : {1u, 2u, 4u})
        for (const auto body : {levels::loop_body::sum, levels::loop_body::max, levels::loop_body::fmod}) {
            thread_pool pool(threads);
            for (const std::int64_t n : {0, 1, 7, 5000, 60000}) {
                const auto loop = random_loop(n, std::max<std::int64_t>(1, n / 3), 2, rng);
                std::vector<double> a(static_cast<std::size_t>(loop.locations));
                for (auto& v : a) v = static_cast<double>(rng() % 50);
                std::vector<double> ref = a;
                for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
                    std::vector<double> v = {ref[static_cast<std::size_t>(loop.reads[2 * i])], ref[static_cast<std::size_t>(loop.reads[2 * i + 1])]};
                    ref[static_cast<std::size_t>(loop.writes[i])] = body_of(body, v);
                }
                const auto sets = levels::group_by_level(levels::loop_levels(loop));
                levels::run_by_levels(loop, body, sets, a, pool);
                CHECK(a == ref);
            }
        }
    CHECK(levels::parse_body("fmod") == levels::loop_body::fmod);
    CHECK(!levels::parse_body("min"));
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

TEST_CASE("Laplacian factors: level counts are the grid's diagonals; solves equal substitution exactly", "[levels]") {
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
