#include "io/arrays/loop_indices.hpp"

#include <algorithm>
#include <cstdint>

#include "core/error.hpp"
#include "io/memory.hpp"

namespace swgpu::io {

std::vector<std::int64_t> index_values(const sat::array& a, const std::string& name, std::int64_t& rows, std::int64_t& cols) {
    if (sat::is_float(a.type)) throw input_error(name, std::string("index arrays must be integers, not ") + sat::name_of(a.type));
    if (a.lanes != 1) throw input_error(name, "index arrays have one or two dimensions");
    std::vector<std::int64_t> v(a.elements());
    for (std::size_t k = 0; k < v.size(); ++k) {
        switch (a.type) {
            case sat::dtype::u64: {
                const std::uint64_t u = a.data<std::uint64_t>()[k];
                v[k] = u > static_cast<std::uint64_t>(INT64_MAX) ? -1 : static_cast<std::int64_t>(u);
                break;
            }
            case sat::dtype::i64: v[k] = a.data<std::int64_t>()[k]; break;
            default: v[k] = static_cast<std::int64_t>(a.value(k)); break;  // exact for 32-bit and narrower types
        }
    }
    rows = a.rows;
    cols = a.cols;
    return v;
}

void set_loop_writes(levels::indirect_loop& loop, const sat::array& w, const std::string& name) {
    std::int64_t wr = 0, wc = 0;
    loop.writes = index_values(w, name, wr, wc);
    if (wr != 1 && wc != 1) throw input_error(name, "write indices must be a vector (n,)");
}

void set_loop_reads(levels::indirect_loop& loop, const sat::array& r, const std::string& name) {
    const auto n = loop.iterations();
    std::int64_t rr = 0, rc = 0;
    loop.reads = index_values(r, name, rr, rc);
    // A 1-D (n,) array reads as one row of n: one read per iteration. (n, k) is k reads per iteration.
    if (rr == 1 && n != 1) rr = rc, rc = 1;
    if (rr != n)
        throw input_error(name, "has " + std::to_string(rr) + " rows of reads; --writes has " + std::to_string(n) +
                                    " iterations (mismatched lengths)");
    loop.reads_per_iteration = static_cast<int>(rc);
}

void set_loop_locations(levels::indirect_loop& loop, std::int64_t array_size, long long locations, const std::string& where) {
    if (array_size >= 0) {
        loop.locations = array_size;
    } else {
        std::int64_t top = -1;
        for (const auto v : loop.writes) top = std::max(top, v);
        for (const auto v : loop.reads) top = std::max(top, v);
        // An index of 2^63 - 1 makes no array (check_loop refuses it): no overflow on the way.
        loop.locations = locations ? locations : top == INT64_MAX ? top : top + 1;
        // A (8 bytes a location) and the inspector's last writer and reader of each (8 more), before they are taken.
        if (loop.locations > 0 && loop.locations < (1LL << 31))
            check_memory(static_cast<double>(loop.locations) * 16,
                         (locations ? "--locations " + std::to_string(locations) + " makes"
                                    : "the largest index, " + std::to_string(top) + ", makes") +
                             " an array of " + std::to_string(loop.locations) +
                             " float64 locations, with the inspector's state of each",
                         locations ? "use a smaller --locations" : "use smaller indices");
    }
    levels::check_loop(loop, where);
}

}  // namespace swgpu::io
