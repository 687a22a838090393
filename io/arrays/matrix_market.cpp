#include "io/arrays/matrix_market.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "io/arrays/npy.hpp"
#include "io/memory.hpp"

namespace swgpu::io {

namespace {

std::string lower_case(std::string_view s) {
    std::string r(s);
    for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
}

// Reads lines of a text one at a time, counting them (1-based) for messages.
struct line_reader {
    std::string_view text;
    std::size_t pos = 0;
    std::int64_t number = 0;
    bool next(std::string_view& line) {
        if (pos >= text.size()) return false;
        const std::size_t end = text.find('\n', pos);
        const std::size_t stop = end == std::string_view::npos ? text.size() : end;
        line = text.substr(pos, stop - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        pos = stop + 1;
        ++number;
        return true;
    }
};

bool blank(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t'; });
}

// The next whitespace-separated field of `s`, advancing it; empty at the end.
std::string_view field(std::string_view& s) {
    std::size_t b = 0;
    while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
    std::size_t e = b;
    while (e < s.size() && s[e] != ' ' && s[e] != '\t') ++e;
    const std::string_view f = s.substr(b, e - b);
    s.remove_prefix(e);
    return f;
}

template <class T>
bool number(std::string_view f, T& v) {
    if (f.empty()) return false;
    if (f.front() == '+') f.remove_prefix(1);
    const auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    return ec == std::errc() && p == f.data() + f.size();
}

struct triplet {
    std::int32_t row, col;
    double val;
};

// The banner's fields as this reader accepts them: a sparse (coordinate) real, integer or pattern matrix, general or
// symmetric.
struct banner {
    bool pattern = false, symmetric = false;
};

banner read_banner(line_reader& in, const std::function<std::string()>& where, const std::string& name) {
    std::string_view line;
    if (!in.next(line) || line.rfind("%%MatrixMarket", 0) != 0)
        throw input_error(name + ":1", "not a Matrix Market file (the first line must start with %%MatrixMarket)");
    std::string_view rest = line.substr(14);
    const std::string object = lower_case(field(rest)), format = lower_case(field(rest)), type = lower_case(field(rest)),
                      symmetry = lower_case(field(rest));
    if (object != "matrix") throw input_error(where(), "object '" + object + "' is not supported; give a matrix");
    if (format == "array")
        throw input_error(where(), "the array (dense) format is not supported; give a sparse matrix in coordinate format");
    if (format != "coordinate") throw input_error(where(), "format '" + format + "' is not supported; give coordinate");
    if (type != "real" && type != "integer" && type != "pattern" && type != "double")
        throw input_error(where(), "field '" + type + "' is not supported; give real, integer or pattern");
    if (symmetry != "general" && symmetry != "symmetric")
        throw input_error(where(), "symmetry '" + symmetry + "' is not supported; give general or symmetric");
    return {type == "pattern", symmetry == "symmetric"};
}

// The size line: a square matrix of at least one and fewer than 2^31 rows; returns (rows, entries).
std::pair<std::int64_t, std::int64_t> read_size(line_reader& in, const std::function<std::string()>& where) {
    std::string_view line;
    bool sized = false;
    while (!sized && in.next(line)) sized = !(line.empty() || line[0] == '%' || blank(line));
    if (!sized) throw input_error(where(), "truncated: no size line 'rows cols entries'");
    std::int64_t rows = 0, cols = 0, entries = 0;
    std::string_view s = line;
    if (!number(field(s), rows) || !number(field(s), cols) || !number(field(s), entries) || !blank(s) || rows < 0 ||
        cols < 0 || entries < 0)
        throw input_error(where(), "malformed size line; expected 'rows cols entries' (three non-negative integers)");
    if (rows != cols)
        throw input_error(where(), "the matrix is " + std::to_string(rows) + " x " + std::to_string(cols) +
                                       "; a triangular solve needs a square matrix");
    if (rows == 0) throw input_error(where(), "the matrix is empty (0 x 0)");
    if (rows >= std::numeric_limits<std::int32_t>::max())
        throw input_error(where(), "2^31 rows or more are not supported");
    return {rows, entries};
}

// The entries in the triangle `part` (a symmetric matrix's mirror entry where it falls in it), in file order; every
// entry checked, their count against the size line.
std::vector<triplet> read_entries(line_reader& in, const std::function<std::string()>& where, const std::string& name,
                                  const banner& b, std::int64_t rows, std::int64_t entries, levels::triangle part,
                                  bool require_triangular, dropped_entries* dropped) {
    const bool upper = part == levels::triangle::upper;
    std::vector<triplet> kept;
    kept.reserve(static_cast<std::size_t>(std::min<std::int64_t>({entries, 1 << 26, static_cast<std::int64_t>(in.text.size() / 4 + 1)})));
    std::int64_t seen = 0, nonfinite = 0;
    std::string first_nonfinite;  // "entry (i, j) is nan", on line first_line
    std::int64_t first_line = 0;
    std::string_view line;
    while (in.next(line)) {
        if (line.empty() || line[0] == '%' || blank(line)) continue;
        if (seen == entries)
            throw input_error(where(), "more entries than the " + std::to_string(entries) + " the size line announces");
        std::string_view s = line;
        std::int64_t i = 0, j = 0;
        double v = 1.0;
        if (!number(field(s), i) || !number(field(s), j) || (!b.pattern && !number(field(s), v)) || !blank(s))
            throw input_error(where(), b.pattern ? "malformed entry; expected 'row column' (1-based integers)"
                                                 : "malformed entry; expected 'row column value'");
        if (i < 1 || i > rows || j < 1 || j > rows)
            throw input_error(where(), "entry (" + std::to_string(i) + ", " + std::to_string(j) +
                                           ") is outside the " + std::to_string(rows) + " x " + std::to_string(rows) +
                                           " matrix");
        ++seen;
        if (!std::isfinite(v)) {  // counted, and the first named once the whole file is read
            if (nonfinite++ == 0)
                first_nonfinite = "entry (" + std::to_string(i) + ", " + std::to_string(j) + ") is " +
                                  (std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
            if (nonfinite == 1) first_line = in.number;
            continue;
        }
        auto r = static_cast<std::int32_t>(i - 1), c = static_cast<std::int32_t>(j - 1);
        if (b.symmetric && (upper ? r > c : r < c)) std::swap(r, c);  // the mirror entry is the one in the triangle
        if (upper ? r > c : r < c) {
            if (require_triangular)
                throw input_error(where(), "entry (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside the " +
                                               (upper ? "upper" : "lower") +
                                               " triangle, and a triangular matrix was required (--require-triangular)");
            if (dropped && dropped->count++ == 0) *dropped = {1, i, j, in.number};
            continue;
        }
        kept.push_back({r, c, v});
    }
    if (seen < entries)
        throw input_error(where(), "truncated: " + std::to_string(seen) + " of the " + std::to_string(entries) +
                                       " entries the size line announces");
    if (nonfinite > 0)
        throw input_error(name + ":" + std::to_string(first_line),
                          first_nonfinite + ", the first of " + std::to_string(nonfinite) +
                              (nonfinite == 1 ? " value" : " values") +
                              " in the file that are not finite (NaN or infinity); give finite values");
    return kept;
}

// CSR: counting sort by row (stable, so duplicates keep file order), then columns ascending within each row, duplicates
// summed.
levels::csr_matrix to_csr(std::vector<triplet> kept, std::int64_t rows) {
    levels::csr_matrix m;
    m.rows = rows;
    m.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
    for (const auto& t : kept) ++m.row_ptr[static_cast<std::size_t>(t.row) + 1];
    for (std::size_t r = 1; r < m.row_ptr.size(); ++r) m.row_ptr[r] += m.row_ptr[r - 1];
    std::vector<triplet> sorted(kept.size());
    {
        std::vector<std::int64_t> next(m.row_ptr.begin(), m.row_ptr.end() - 1);
        for (const auto& t : kept) sorted[static_cast<std::size_t>(next[static_cast<std::size_t>(t.row)]++)] = t;
    }
    kept = {};
    m.col.reserve(sorted.size());
    m.val.reserve(sorted.size());
    std::int64_t out = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        const auto b = sorted.begin() + m.row_ptr[static_cast<std::size_t>(r)], e = sorted.begin() + m.row_ptr[static_cast<std::size_t>(r) + 1];
        std::stable_sort(b, e, [](const triplet& x, const triplet& y) { return x.col < y.col; });
        m.row_ptr[static_cast<std::size_t>(r)] = out;
        for (auto t = b; t != e; ++t) {
            if (t != b && t->col == (t - 1)->col) {
                m.val.back() += t->val;
                continue;
            }
            m.col.push_back(t->col);
            m.val.push_back(t->val);
            ++out;
        }
    }
    m.row_ptr[static_cast<std::size_t>(rows)] = out;
    return m;
}

}  // namespace

levels::csr_matrix parse_matrix_market_triangle(std::string_view text, const std::string& name, levels::triangle part,
                                                bool require_triangular, dropped_entries* dropped) {
    line_reader in{text};
    const std::function<std::string()> where = [&] { return name + ":" + std::to_string(in.number); };
    const banner b = read_banner(in, where, name);
    const auto [rows, entries] = read_size(in, where);
    // The memory of the read (triplets, their sorted copy, the CSR arrays: about 48 bytes an entry, 16 a row) and
    // of the solve (b, x, levels and the rows grouped by level: about 48 bytes a row), refused before it is taken.
    // An entry line takes at least 4 bytes ("i j\n"), so the file's length bounds the entries a size line announces.
    const auto possible = std::min<std::int64_t>(entries, static_cast<std::int64_t>((text.size() - std::min(text.size(), in.pos)) / 4 + 1));
    check_memory(static_cast<double>(rows) * 64 + static_cast<double>(possible) * 48,
                 where() + ": a matrix of " + std::to_string(rows) + " rows and " + std::to_string(entries) +
                     " entries takes about this much memory to read and solve",
                 "solve a smaller matrix");
    std::vector<triplet> kept = read_entries(in, where, name, b, rows, entries, part, require_triangular, dropped);
    // Every row needs its diagonal entry: with fewer entries than rows (a size line announcing more rows than the file
    // holds), one of the first kept + 1 rows lacks it. check_triangular names the first such row from those rows
    // alone, without the CSR arrays of every row announced.
    if (static_cast<std::int64_t>(kept.size()) < rows) {
        const auto head = static_cast<std::int64_t>(kept.size()) + 1;
        std::vector<triplet> first(kept);
        std::erase_if(first, [&](const triplet& t) { return t.row >= head; });
        levels::check_triangular(to_csr(std::move(first), head), part, name);
    }
    levels::csr_matrix m = to_csr(std::move(kept), rows);
    levels::check_triangular(m, part, name);
    return m;
}

levels::csr_matrix read_matrix_market_triangle(const std::string& path, levels::triangle part, bool require_triangular,
                                               dropped_entries* dropped) {
    return parse_matrix_market_triangle(read_file_bytes(path), path, part, require_triangular, dropped);
}

std::string dropped_entries_warning(const std::string& path, const dropped_entries& dropped, levels::triangle part) {
    const bool upper = part == levels::triangle::upper;
    return "swgpu: warning: " + path + ":" + std::to_string(dropped.line) + ": entry (" + std::to_string(dropped.row) +
           ", " + std::to_string(dropped.col) + ") is outside the " + (upper ? "upper" : "lower") + " triangle; " +
           std::to_string(dropped.count) + (dropped.count == 1 ? " entry" : " entries") +
           " outside it are left out of the solve (give " + (upper ? "--lower" : "--upper") +
           " to solve with the other triangle, --require-triangular to refuse them)\n";
}

}  // namespace swgpu::io
