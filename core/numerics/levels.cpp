#include "core/numerics/levels.hpp"

#include <algorithm>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <thread>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/numerics/finite.hpp"

namespace swgpu::levels {

namespace {

// Sequential loops look for a stop request (core/cancel.hpp) every 65,536 rows or iterations: well under 100 ms.
constexpr std::uint64_t every_rows = 0xffff;

// Rows (or iterations) per task of the thread pool; a level narrower than two tasks runs on the calling thread,
// where waking the pool would cost more than the level.
constexpr std::int64_t chunk = 2048;

template <class F>
void for_level(const level_sets& sets, level_t l, thread_pool& pool, F&& body) {
    const std::int64_t begin = sets.offsets[static_cast<std::size_t>(l) - 1], end = sets.offsets[static_cast<std::size_t>(l)];
    const std::int64_t width = end - begin;
    if (width < 2 * chunk || pool.size() == 1) {
        for (std::int64_t p = begin; p < end; ++p) body(sets.order[static_cast<std::size_t>(p)]);
        return;
    }
    const auto tasks = static_cast<std::size_t>((width + chunk - 1) / chunk);
    pool.parallel_for(tasks, [&](std::size_t t) {
        const std::int64_t b = begin + static_cast<std::int64_t>(t) * chunk, e = std::min(end, b + chunk);
        for (std::int64_t p = b; p < e; ++p) body(sets.order[static_cast<std::size_t>(p)]);
    });
}

}  // namespace

std::int64_t level_sets::max_width() const {
    std::int64_t w = 0;
    for (level_t l = 1; l <= count(); ++l) w = std::max(w, width(l));
    return w;
}

level_sets group_by_level(std::vector<level_t> level) {
    level_sets s;
    level_t top = 0;
    for (const level_t l : level) top = std::max(top, l);
    s.offsets.assign(static_cast<std::size_t>(top) + 1, 0);
    for (const level_t l : level) ++s.offsets[static_cast<std::size_t>(l)];
    for (std::size_t l = 1; l < s.offsets.size(); ++l) s.offsets[l] += s.offsets[l - 1];
    // offsets[l] now counts levels <= l; place iteration i of level l at offsets[l-1] + rank, ascending.
    std::vector<std::int64_t> next(s.offsets.begin(), s.offsets.end() - (s.offsets.empty() ? 0 : 1));
    s.order.resize(level.size());
    for (std::size_t i = 0; i < level.size(); ++i)
        s.order[static_cast<std::size_t>(next[static_cast<std::size_t>(level[i]) - 1]++)] = static_cast<std::int32_t>(i);
    s.level = std::move(level);
    return s;
}

// ---- generic indirect loops ----------------------------------------------------------------------------------------

const char* body_name(loop_body b) {
    switch (b) {
        case loop_body::sum: return "sum";
        case loop_body::max: return "max";
        case loop_body::fmod: return "fmod";
        case loop_body::wsum: return "wsum";
        case loop_body::dot: return "dot";
    }
    return "?";
}

std::optional<loop_body> parse_body(std::string_view name) {
    for (const loop_body b : {loop_body::sum, loop_body::max, loop_body::fmod, loop_body::wsum, loop_body::dot})
        if (name == body_name(b)) return b;
    return std::nullopt;
}

std::string body_mismatch(const body_spec& b, int k) {
    const auto given = b.coefficients.size();
    switch (b.kind) {
        case loop_body::wsum:
            if (given != static_cast<std::size_t>(k))
                return "the wsum body takes one coefficient per read; " + std::to_string(given) + " given for " +
                       std::to_string(k) + " reads per iteration";
            return {};
        case loop_body::dot:
            if (given != 2) return "the dot body takes two coefficients (alpha, beta); " + std::to_string(given) + " given";
            if (k % 2 == 0)
                return "the dot body reads the written element and then pairs of factors (an odd number of reads); " +
                       std::to_string(k) + " reads per iteration given";
            return {};
        default:
            if (given != 0) return std::string("the ") + body_name(b.kind) + " body takes no coefficients";
            return {};
    }
}

void check_loop(const indirect_loop& loop, const std::string& where) {
    constexpr std::int64_t limit = std::numeric_limits<std::int32_t>::max();
    if (loop.locations <= 0) throw input_error(where, "the loop's array has no element");
    if (loop.locations > limit || loop.iterations() > limit)
        throw input_error(where, "more than 2^31-1 iterations or array elements; split the loop");
    if (loop.reads_per_iteration < 0 ||
        static_cast<std::int64_t>(loop.reads.size()) != loop.iterations() * loop.reads_per_iteration)
        throw input_error(where, "the read indices (" + std::to_string(loop.reads.size()) +
                                     ") are not one row of k per iteration (" + std::to_string(loop.iterations()) +
                                     " iterations); give reads as an (n,) or (n, k) array with n = len(writes)");
    const auto check = [&](const std::vector<std::int64_t>& idx, const char* what) {
        for (std::size_t k = 0; k < idx.size(); ++k)
            if (idx[k] < 0 || idx[k] >= loop.locations)
                throw input_error(where, std::string(what) + " index " + std::to_string(idx[k]) + " at element " +
                                             std::to_string(k) + " is outside the array [0, " +
                                             std::to_string(loop.locations) + ")");
    };
    check(loop.writes, "write");
    check(loop.reads, "read");
}

namespace {

// What the inspector knows of a location: the level of its last writer and the highest level of a reader since that
// write (side by side: one cache line per location visited, the loop's accesses being random).
struct location_state {
    level_t writer = 0, reader = 0;
};

// The level of iteration i (one more than the highest level it depends on), updating the locations' state.
inline level_t inspect(const indirect_loop& loop, std::size_t k, std::size_t i, location_state* loc) {
    location_state& w = loc[loop.writes[i]];
    level_t l = std::max(w.writer, w.reader);  // output and anti dependences
    const std::int64_t* r = loop.reads.data() + i * k;
    for (std::size_t x = 0; x < k; ++x) l = std::max(l, loc[r[x]].writer);
    ++l;
    for (std::size_t x = 0; x < k; ++x) {
        level_t& rl = loc[r[x]].reader;
        rl = std::max(rl, l);
    }
    // Readers before this write are at lower levels than l; later ones depend on this writer.
    w.writer = l;
    w.reader = 0;
    return l;
}

}  // namespace

std::vector<level_t> loop_levels(const indirect_loop& loop) {
    const auto n = static_cast<std::size_t>(loop.iterations());
    const auto k = static_cast<std::size_t>(loop.reads_per_iteration);
    std::vector<location_state> loc(static_cast<std::size_t>(loop.locations));
    std::vector<level_t> level(n);
    for (std::size_t i = 0; i < n; ++i) {
        if ((i & every_rows) == 0) check_cancelled();
        level[i] = inspect(loop, k, i, loc.data());
    }
    return level;
}

namespace {

// One iteration: A[W[i]] = f(A[R[i][0]], ..., A[R[i][k-1]]), the reads folded into f as they are made.
inline void run_iteration(const indirect_loop& loop, const body_spec& b, double* a, std::size_t i) {
    const int k = loop.reads_per_iteration;
    const std::int64_t* r = loop.reads.data() + i * static_cast<std::size_t>(k);
    const double v = apply_body(b.kind, b.coefficients.data(), k, [&](int j) { return a[r[j]]; });
    a[loop.writes[i]] = v;
}

}  // namespace

void run_sequential(const indirect_loop& loop, const body_spec& b, std::span<double> a) {
    for (std::size_t i = 0; i < static_cast<std::size_t>(loop.iterations()); ++i) {
        if ((i & every_rows) == 0) check_cancelled();
        run_iteration(loop, b, a.data(), i);
    }
}

void run_by_levels(const indirect_loop& loop, const body_spec& b, const level_sets& sets, std::span<double> a,
                   thread_pool& pool) {
    for (level_t l = 1; l <= sets.count(); ++l) {
        check_cancelled();
        for_level(sets, l, pool, [&](std::int32_t i) { run_iteration(loop, b, a.data(), static_cast<std::size_t>(i)); });
    }
}

std::vector<level_t> run_pipelined(const indirect_loop& loop, const body_spec& b, std::span<double> a, thread_pool& pool,
                                   std::size_t per_chunk) {
    const auto n = static_cast<std::size_t>(loop.iterations());
    const auto k = static_cast<std::size_t>(loop.reads_per_iteration);
    if (per_chunk == 0) per_chunk = std::max<std::size_t>(65536, n / 4);
    const std::size_t chunks = (n + per_chunk - 1) / per_chunk;
    std::vector<level_t> level(n);
    struct grouped {
        std::vector<std::int64_t> offsets;  // per level from `first`, into order
        std::vector<std::int32_t> order;    // the chunk's iterations by (level, iteration)
    };
    std::vector<grouped> ready(chunks);
    std::size_t inspected = 0;
    std::mutex m;
    std::condition_variable cv;
    std::thread inspector([&] {
        std::vector<location_state> loc(static_cast<std::size_t>(loop.locations));
        for (std::size_t c = 0; c < chunks; ++c) {
            const std::size_t lo = c * per_chunk, hi = std::min(n, lo + per_chunk);
            level_t low = std::numeric_limits<level_t>::max(), high = 0;
            for (std::size_t i = lo; i < hi; ++i) {
                const level_t l = level[i] = inspect(loop, k, i, loc.data());
                low = std::min(low, l);
                high = std::max(high, l);
            }
            grouped g;  // counting sort of the chunk by level
            g.offsets.assign(static_cast<std::size_t>(high - low) + 2, 0);
            for (std::size_t i = lo; i < hi; ++i) ++g.offsets[static_cast<std::size_t>(level[i] - low) + 1];
            for (std::size_t x = 1; x < g.offsets.size(); ++x) g.offsets[x] += g.offsets[x - 1];
            g.order.resize(hi - lo);
            std::vector<std::int64_t> next(g.offsets.begin(), g.offsets.end() - 1);
            for (std::size_t i = lo; i < hi; ++i)
                g.order[static_cast<std::size_t>(next[static_cast<std::size_t>(level[i] - low)]++)] = static_cast<std::int32_t>(i);
            {
                const std::lock_guard<std::mutex> lock(m);
                ready[c] = std::move(g);
                inspected = c + 1;
            }
            cv.notify_one();
        }
    });
    for (std::size_t c = 0; c < chunks; ++c) {
        {
            std::unique_lock<std::mutex> lock(m);
            cv.wait(lock, [&] { return inspected > c; });
        }
        grouped g = std::move(ready[c]);
        level_sets sets;  // the chunk's levels, numbered from 1, for for_level
        sets.offsets = std::move(g.offsets);
        sets.order = std::move(g.order);
        for (level_t l = 1; l <= sets.count(); ++l)
            for_level(sets, l, pool, [&](std::int32_t i) { run_iteration(loop, b, a.data(), static_cast<std::size_t>(i)); });
    }
    inspector.join();
    return level;
}

// ---- sparse triangular solves -------------------------------------------------------------------------------------

csr_matrix triangle_from_csr(const csr_view& m, triangle part, const std::string& where) {
    if (m.rows < 0 || m.cols < 0) throw input_error(where, "a negative matrix extent");
    if (m.rows != m.cols)
        throw input_error(where, "the matrix is " + std::to_string(m.rows) + " x " + std::to_string(m.cols) +
                                     "; a triangular solve needs a square matrix");
    if (m.rows == 0) throw input_error(where, "the matrix is empty (0 x 0)");
    if (m.rows >= std::numeric_limits<std::int32_t>::max()) throw input_error(where, "2^31 rows or more are not supported");
    const auto rows = static_cast<std::size_t>(m.rows);
    if (m.indptr.size() != rows + 1)
        throw input_error(where, "indptr has " + std::to_string(m.indptr.size()) + " entries; " +
                                     std::to_string(rows + 1) + " expected (rows + 1)");
    if (m.indices.size() != m.data.size())
        throw input_error(where, "indices and data differ in length");
    if (m.indptr[0] != 0 || m.indptr[rows] != static_cast<std::int64_t>(m.indices.size()))
        throw input_error(where, "indptr must start at 0 and end at the number of entries");
    for (std::size_t r = 0; r < rows; ++r)
        if (m.indptr[r + 1] < m.indptr[r]) throw input_error(where, "indptr must not decrease");
    if (const numerics::nonfinite bad = numerics::find_nonfinite(std::span<const double>(m.data)); bad.count > 0)
        throw input_error(where, "the matrix " + numerics::nonfinite_message(bad, "entry " + std::to_string(bad.first) +
                                                                                      " of data"));
    const bool upper = part == triangle::upper;
    csr_matrix t;
    t.rows = m.rows;
    t.row_ptr.assign(rows + 1, 0);
    std::vector<std::pair<std::int32_t, double>> row;
    for (std::size_t r = 0; r < rows; ++r) {
        row.clear();
        for (auto k = static_cast<std::size_t>(m.indptr[r]); k < static_cast<std::size_t>(m.indptr[r + 1]); ++k) {
            const std::int64_t c = m.indices[k];
            if (c < 0 || c >= m.cols)
                throw input_error(where, "row " + std::to_string(r + 1) + " has an entry in column " +
                                             std::to_string(c + 1) + ", outside the " + std::to_string(m.rows) + " x " +
                                             std::to_string(m.cols) + " matrix");
            const auto i = static_cast<std::int64_t>(r);
            if (upper ? c < i : c > i) continue;
            row.emplace_back(static_cast<std::int32_t>(c), m.data[k]);
        }
        std::stable_sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        for (std::size_t k = 0; k < row.size(); ++k) {
            if (k > 0 && row[k].first == row[k - 1].first) {
                t.val.back() += row[k].second;
                continue;
            }
            t.col.push_back(row[k].first);
            t.val.push_back(row[k].second);
        }
        t.row_ptr[r + 1] = static_cast<std::int64_t>(t.col.size());
    }
    check_triangular(t, part, where);
    return t;
}

void check_triangular(const csr_matrix& t, triangle part, const std::string& where) {
    const bool upper = part == triangle::upper;
    for (std::int64_t i = 0; i < t.rows; ++i) {
        const std::int64_t b = t.row_ptr[static_cast<std::size_t>(i)], e = t.row_ptr[static_cast<std::size_t>(i) + 1];
        const std::string row = "row " + std::to_string(i + 1);
        for (std::int64_t k = b; k < e; ++k) {
            const std::int64_t j = t.col[static_cast<std::size_t>(k)];
            if (upper ? j < i : j > i)
                throw input_error(where, row + " has an entry in column " + std::to_string(j + 1) + ", outside the " +
                                             (upper ? "upper" : "lower") + " triangle");
        }
        const std::int64_t d = upper ? b : e - 1;
        if (b == e || t.col[static_cast<std::size_t>(d)] != i)
            throw input_error(where, row + " has no diagonal entry; a triangular solve needs every T[i][i] != 0");
        if (t.val[static_cast<std::size_t>(d)] == 0.0)
            throw input_error(where, row + " has a zero on the diagonal; the triangular system is singular");
    }
}

std::vector<level_t> triangular_levels(const csr_matrix& t, triangle part) {
    const bool upper = part == triangle::upper;
    std::vector<level_t> level(static_cast<std::size_t>(t.rows));
    for (std::int64_t p = 0; p < t.rows; ++p) {
        if ((p & every_rows) == 0) check_cancelled();
        const std::int64_t i = upper ? t.rows - 1 - p : p;
        std::int64_t k = t.row_ptr[static_cast<std::size_t>(i)], e = t.row_ptr[static_cast<std::size_t>(i) + 1];
        if (upper) ++k; else --e;
        level_t l = 0;
        for (; k < e; ++k) l = std::max(l, level[static_cast<std::size_t>(t.col[static_cast<std::size_t>(k)])]);
        level[static_cast<std::size_t>(i)] = l + 1;
    }
    return level;
}

void triangular_solve_sequential(const csr_matrix& t, triangle part, std::span<const double> b, std::span<double> x) {
    const bool upper = part == triangle::upper;
    for (std::int64_t p = 0; p < t.rows; ++p) {
        if ((p & every_rows) == 0) check_cancelled();
        const std::int64_t i = upper ? t.rows - 1 - p : p;
        x[static_cast<std::size_t>(i)] =
            solve_row(t.row_ptr.data(), t.col.data(), t.val.data(), x.data(), b[static_cast<std::size_t>(i)], i, upper);
    }
}

void triangular_solve(const csr_matrix& t, triangle part, const level_sets& sets, std::span<const double> b,
                      std::span<double> x, thread_pool& pool) {
    const bool upper = part == triangle::upper;
    for (level_t l = 1; l <= sets.count(); ++l)
    {
        check_cancelled();  // between levels: a Python call stops within a level's time (core/cancel.hpp)
        for_level(sets, l, pool, [&](std::int32_t i) {
            x[static_cast<std::size_t>(i)] =
                solve_row(t.row_ptr.data(), t.col.data(), t.val.data(), x.data(), b[static_cast<std::size_t>(i)], i, upper);
        });
    }
}

}  // namespace swgpu::levels
