#include "gpu/align/db_layout.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace swgpu::gpu {

int class_of(std::uint32_t length, std::span<const length_class> classes) {
    const auto it = std::find_if(classes.begin(), classes.end(),
                                 [length](const length_class& c) { return length <= c.max_length; });
    return it == classes.end() ? static_cast<int>(classes.size()) - 1 : static_cast<int>(it - classes.begin());
}

thread_pool& host_pool() {
    static thread_pool pool;
    return pool;
}

packed_db plan_database(const sequence_set& db, std::span<const length_class> classes) {
    const std::string where = db.source.empty() ? std::string("database") : db.source;
    if (!db.encoded && !db.empty())
        throw input_error(where, "the database is not encoded with the scoring matrix; encode it before searching");
    if (db.size() >= 0xffffffffu)
        throw input_error(where, "more than 4294967294 subjects in one search; split the database into chunks");

    packed_db out;
    const std::size_t n = db.size();
    out.original.resize(n);
    std::iota(out.original.begin(), out.original.end(), 0u);
    std::size_t longest = 0;
    for (std::size_t s = 0; s < n; ++s) longest = std::max(longest, db.length(s));
    if (longest <= (std::size_t(1) << 22)) {
        // Counting sort by length: stable, linear.
        std::vector<std::uint32_t> start(longest + 2, 0);
        for (std::size_t s = 0; s < n; ++s) ++start[db.length(s) + 1];
        for (std::size_t l = 1; l < start.size(); ++l) start[l] += start[l - 1];
        for (std::size_t s = 0; s < n; ++s) out.original[start[db.length(s)]++] = static_cast<std::uint32_t>(s);
    } else {
        std::stable_sort(out.original.begin(), out.original.end(),
                         [&db](std::uint32_t a, std::uint32_t b) { return db.length(a) < db.length(b); });
    }

    out.offset.resize(n);
    out.length.resize(n);
    std::uint64_t at = pad_run;
    for (std::size_t k = 0; k < n; ++k) {
        const std::uint32_t s = out.original[k];
        if (db.length(s) > 0xffffffffu)
            throw input_error(where + ":" + db.names[s], "a subject longer than 4294967295 residues is not supported");
        out.offset[k] = at;
        out.length[k] = static_cast<std::uint32_t>(db.length(s));
        at += db.length(s) + pad_run;
        out.total_residues += db.length(s);
    }
    out.max_length = n ? out.length.back() : 0;
    out.residue_bytes = at;

    // Class c starts at the first non-empty subject longer than every earlier class's max_length.
    out.class_begin.resize(classes.size() + 1);
    std::uint32_t lower = 1;  // empty subjects belong to no class
    for (std::size_t c = 0; c < classes.size(); ++c) {
        out.class_begin[c] = static_cast<std::uint32_t>(
            std::lower_bound(out.length.begin(), out.length.end(), lower) - out.length.begin());
        lower = classes[c].max_length == 0xffffffffu ? 0xffffffffu : classes[c].max_length + 1;
    }
    out.class_begin[classes.size()] = static_cast<std::uint32_t>(n);
    return out;
}

void fill_database(const sequence_set& db, const packed_db& plan, int letters, std::uint8_t pad_code,
                   std::uint8_t* dst) {
    // Pads and residues, and the check of the codes, in parallel chunks of about 1 MB (a fresh buffer's pages are
    // first touched by the threads that fill them).
    const std::string where = db.source.empty() ? std::string("database") : db.source;
    const std::size_t n = plan.size();
    std::vector<std::size_t> chunk_begin{0};
    for (std::size_t k = 0, bytes = 0; k < n; ++k) {
        bytes += plan.length[k] + pad_run;
        if (bytes >= (std::size_t(1) << 20)) {
            chunk_begin.push_back(k + 1);
            bytes = 0;
        }
    }
    if (chunk_begin.back() != n) chunk_begin.push_back(n);
    std::fill(dst + plan.residue_bytes - pad_run, dst + plan.residue_bytes, pad_code);  // after the last subject
    host_pool().parallel_for(chunk_begin.size() - 1, [&](std::size_t c) {
        for (std::size_t k = chunk_begin[c]; k < chunk_begin[c + 1]; ++k) {
            const std::uint32_t s = plan.original[k];
            const auto seq = db[s];
            std::uint8_t* to = dst + plan.offset[k];
            std::fill(to - pad_run, to, pad_code);
            std::uint8_t largest = 0;
            for (std::size_t i = 0; i < seq.size(); ++i) {
                to[i] = seq[i];
                largest = seq[i] > largest ? seq[i] : largest;
            }
            if (largest >= letters) {
                const auto bad = *std::find_if(seq.begin(), seq.end(), [&](std::uint8_t x) { return x >= letters; });
                throw input_error(where + ":" + db.names[s],
                                  "residue code " + std::to_string(bad) + " is outside the matrix of " +
                                      std::to_string(letters) + " letters; encode the database with the same matrix");
            }
        }
    });
}

packed_db pack_database(const sequence_set& db, int letters, std::uint8_t pad_code,
                        std::span<const length_class> classes) {
    packed_db out = plan_database(db, classes);
    out.residues.reset(new std::uint8_t[out.residue_bytes]);  // uninitialized: fill_database's threads touch it first
    fill_database(db, out, letters, pad_code, out.residues.get());
    return out;
}

}  // namespace swgpu::gpu
