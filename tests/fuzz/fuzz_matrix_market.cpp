// libFuzzer target: Matrix Market files as `swgpu levels --matrix` reads them (io/arrays/matrix_market.hpp): the
// banner (object, coordinate or array, field, symmetry, any case), comments, the size line (a lying entry count or
// row count), entries (out-of-range indices, duplicates, symmetric mirrors, NaN and infinities, missing values).
// Byte 0 picks the triangle (bit 0: upper) and --require-triangular (bit 1); the file is the rest. A result must be a
// well-formed triangular CSR matrix with every diagonal entry.
#include "core/numerics/levels.hpp"
#include "core/tuning.hpp"
#include "io/arrays/matrix_market.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace swgpu;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const tuning::scoped_override memory("host.memory_mib=1024");
    if (size == 0) return 0;
    const auto part = data[0] & 1 ? levels::triangle::upper : levels::triangle::lower;
    const bool require = data[0] & 2;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        io::dropped_entries dropped;
        const levels::csr_matrix m = io::parse_matrix_market_triangle(text, "fuzz.mtx", part, require, &dropped);
        if (m.rows < 1 || m.row_ptr.size() != static_cast<std::size_t>(m.rows) + 1 || m.row_ptr[0] != 0 ||
            m.col.size() != m.val.size() || m.row_ptr.back() != static_cast<std::int64_t>(m.col.size()))
            fuzz::fuzz_abort("malformed CSR arrays");
        for (std::int64_t i = 0; i < m.rows; ++i) {
            const auto b = m.row_ptr[static_cast<std::size_t>(i)], e = m.row_ptr[static_cast<std::size_t>(i) + 1];
            if (e <= b) fuzz::fuzz_abort("a row without entries");
            for (auto k = b; k < e; ++k) {
                const auto j = m.col[static_cast<std::size_t>(k)];
                if (j < 0 || j >= m.rows || (k > b && j <= m.col[static_cast<std::size_t>(k) - 1]))
                    fuzz::fuzz_abort("columns out of range or not ascending");
                if (part == levels::triangle::upper ? j < i : j > i) fuzz::fuzz_abort("an entry outside the triangle");
            }
        }
        if (require && dropped.count) fuzz::fuzz_abort("entries dropped with require_triangular");
        const auto level = levels::triangular_levels(m, part);
        if (static_cast<std::int64_t>(level.size()) != m.rows) fuzz::fuzz_abort("levels of another size");
    } catch (const error& e) {
        fuzz::expect(e, true);
    }
    return 0;
}
