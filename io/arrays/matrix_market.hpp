// Matrix Market (.mtx) files in, as the triangle of a square sparse matrix in CSR form (core/numerics/levels.hpp).
//
// Accepted: "%%MatrixMarket matrix coordinate real|integer|pattern general|symmetric" (keywords in any case), '%'
// comment lines, a size line "rows cols entries", then one "i j [value]" line per entry, 1-based. Pattern entries are
// 1. A symmetric file stores one triangle (by the standard the lower; an upper one is accepted too) and means both:
// its entries are mirrored as needed. Entries given twice are summed in file order (as SciPy and SuiteSparse do).
// The triangle asked for keeps the diagonal; entries outside it are dropped, or refused with `require_triangular`.
//
// Refused, as input_error naming FILE:LINE: a missing or foreign banner, the array (dense) format, complex or
// Hermitian or skew-symmetric matrices, a non-square matrix, a malformed or truncated line, an index outside the
// matrix, fewer or more entries than the size line announces, a missing or zero diagonal entry, an entry outside the
// triangle with `require_triangular`, and matrices of 2^31 rows or more. Values that are NaN or infinite (anywhere in
// the file, in the triangle or not) are refused once the file is read: FILE:LINE of the first, and their count.
// A matrix whose reading and solve would need more memory than is available (io/memory.hpp; estimated from the size
// line) is refused before it is allocated, as out_of_memory (exit 4) naming FILE:LINE of the size line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/numerics/levels.hpp"

namespace swgpu::io {

// The entries of a general file outside the triangle asked for, which the solve leaves out: how many, and the first
// (1-based, as in the file) with its line. A symmetric file's mirrored entries are not counted.
struct dropped_entries {
    std::int64_t count = 0;
    std::int64_t row = 0, col = 0, line = 0;
};

levels::csr_matrix parse_matrix_market_triangle(std::string_view text, const std::string& name, levels::triangle part,
                                                bool require_triangular = false, dropped_entries* dropped = nullptr);
levels::csr_matrix read_matrix_market_triangle(const std::string& path, levels::triangle part,
                                               bool require_triangular = false, dropped_entries* dropped = nullptr);
// The warning `swgpu levels` gives when entries of `path` outside the triangle `part` were left out (an upper factor
// solved without --upper would otherwise be solved with its diagonal only, without a word); one line.
std::string dropped_entries_warning(const std::string& path, const dropped_entries& dropped, levels::triangle part);

}  // namespace swgpu::io
