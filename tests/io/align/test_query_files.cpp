// The queries of a search as swgpu align takes them (io/align/query_files.hpp): one file with its zero-length reads
// taken out, --batch files read, typed, held against the database's type and encoded each on its own.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/align/scoring.hpp"
#include "io/align/query_files.hpp"
#include "tests/cli_support.hpp"

using namespace swgpu;
using namespace swgpu::testing;

namespace {

void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

struct refusals {
    std::vector<std::pair<std::size_t, std::string>> seen;
    io::query_reading reading() {
        io::query_reading how;
        how.warning = [](const std::string&) {};
        how.refuse = [this](std::size_t entry, const error& e) { seen.emplace_back(entry, e.what()); };
        return how;
    }
};

}  // namespace

TEST_CASE("query files: one file's zero-length reads are taken out and kept, a file of them only is refused",
          "[input]") {
    const temp_dir dir("swgpu-queries");
    write_file(dir / "reads.fq", "@e1\n\n+\n\n@r1\nACGTACGTAC\n+\nIIIIIIIIII\n@e2\n\n+\n\n@r2\nGGGCCCAAAT\n+\nIIIIIIIIII\n");
    refusals r;
    io::query_files q;
    CHECK(io::read_query_file(q, dir / "reads.fq", r.reading()) == seq_type::dna);
    REQUIRE(q.files.size() == 1);
    CHECK(q.files[0].size() == 2);
    CHECK(q.files[0].names[0] == "r1");
    CHECK(q.empty_at == std::vector<std::size_t>{0, 2});
    CHECK(q.empty_reads.names == std::vector<std::string>{"e1", "e2"});
    write_file(dir / "empty.fq", "@e1\n\n+\n\n");
    io::query_files none;
    CHECK_THROWS_WITH(io::read_query_file(none, dir / "empty.fq", r.reading()),
                      Catch::Contains("no record has residues (1 empty records)"));
}

TEST_CASE("query files: --batch files read and typed each on its own, refused alone, encoded end to end", "[input]") {
    const temp_dir dir("swgpu-queries");
    write_file(dir / "a.fa", ">a1\nACGTACGTACGT\n>a2\nTTTTGGGGCCCC\n");
    write_file(dir / "p.fa", ">p1\nMKVLAAGIVGLLLAQ\n");
    write_file(dir / "b.fa", ">b1\nACGTACGTACGTACGTACGTRY\n");
    const std::vector<io::batch_entry> batch{{dir / "a.fa", "a.out"}, {dir / "missing.fa", "m.out"},
                                             {dir / "p.fa", "p.out"}, {dir / "b.fa", "b.out"}};
    refusals r;
    const io::query_reading how = r.reading();
    io::query_files q;
    const std::vector<seq_type> types = io::read_batch_files(q, batch, how);
    REQUIRE(r.seen.size() == 1);
    CHECK(r.seen[0].first == 1);
    CHECK(types == std::vector<seq_type>{seq_type::dna, seq_type::protein, seq_type::dna});
    io::keep_database_type(q, types, seq_type::dna, "db.fa", batch, how);
    REQUIRE(r.seen.size() == 2);
    CHECK(r.seen[1].first == 2);
    CHECK_THAT(r.seen[1].second, Catch::Contains("db.fa"));
    CHECK(q.entries == std::vector<std::size_t>{0, 3});

    const scoring sc{substitution_matrix::match_mismatch(2, -3), gap_costs{5, 2}, seq_type::dna};
    std::vector<std::pair<std::string, std::uint64_t>> unknown;
    const io::query_encoding encoding{sc.matrix, seq_type::dna, true, true,
                                      [&](const std::string& source, std::uint64_t n) { unknown.emplace_back(source, n); },
                                      how.refuse};
    REQUIRE(io::encode_batch_files(q, "list.txt", encoding));
    CHECK(q.strands.plus.size() == 3);
    CHECK(q.strands.minus.size() == 3);
    CHECK(q.strands.plus.source == "list.txt");
    CHECK(q.batch_first == std::vector<std::size_t>{0, 2, 3});
    CHECK(q.batch_files == std::vector<std::size_t>{0, 3});
    REQUIRE(unknown.size() == 2);
    CHECK(unknown[1].second == 2);  // R and Y of b.fa
    CHECK(io::unknown_letters_warning(unknown[1].first, 2, sc.matrix, seq_type::dna).find("2 residues are not letters") !=
          std::string::npos);
    CHECK(io::unknown_letters_warning("x", 0, sc.matrix, seq_type::dna).empty());
}
