// libFuzzer target: `.swdb` databases (io/align/database_file.hpp) as `swgpu align` maps them: the magic and format
// version, the header (counts, residues, name bytes, longest), the residue and name offset tables, the length order,
// truncated files and files whose header lies. The input is written to a file and opened; an accepted database is
// read whole, then again in small chunks with every other chunk skipped unread, and every record checked.
#include "core/align/sequence.hpp"
#include "io/align/database_file.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace swgpu;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string path = fuzz::scratch_path("db.swdb");
    static fuzz::scratch_cleanup cleanup{{path}};
    fuzz::write_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
    try {
        io::database_file db(path);
        const std::uint64_t n = db.size();
        std::uint64_t residues = 0, longest = 0;
        for (std::uint64_t k = 0; k < n; ++k) {
            if (db.residues(k).empty() || db.name(k).empty()) fuzz::fuzz_abort("an empty record or name");
            residues += db.residues(k).size();
            longest = std::max<std::uint64_t>(longest, db.residues(k).size());
        }
        if (residues != db.total_residues() || longest != db.longest()) fuzz::fuzz_abort("totals that lie");
        const auto order = db.length_order();
        for (std::size_t k = 1; k < order.size(); ++k)
            if (db.residues(order[k - 1]).size() < db.residues(order[k]).size()) fuzz::fuzz_abort("length order out of order");
        sequence_set all;
        while (db.read_chunk(all, 0)) {
        }
        if (all.size() != n || all.total_residues() != residues || !db.exhausted()) fuzz::fuzz_abort("a whole read lost records");
        io::database_file again(path);
        sequence_set some;
        std::uint64_t seen = 0, seen_residues = 0;
        for (int k = 0;; ++k) {
            if (k % 2) {
                std::uint64_t r = 0, s = 0;
                if (!again.skip_chunk(5, r, s)) break;
                seen += s;
                seen_residues += r;
            } else {
                const std::size_t before = some.size();
                const std::uint64_t before_residues = some.total_residues();
                if (!again.read_chunk(some, 5)) break;
                seen += some.size() - before;
                seen_residues += some.total_residues() - before_residues;
            }
        }
        if (seen != n || seen_residues != residues) fuzz::fuzz_abort("chunks that lose or repeat records");
    } catch (const error& e) {
        fuzz::expect(e);
    }
    return 0;
}
