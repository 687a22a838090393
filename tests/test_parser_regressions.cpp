// What the fuzz targets (tests/fuzz, scripts/fuzz.sh) found in the parsers of outside data, and the size checks added
// with them: each input is a one-line bad-input error, refused before anything of the size its header lies about is
// allocated (the memory allowed is set far above the machine's here, so that only the parser's own check can refuse).
#include <catch2/catch.hpp>

#include <tiffio.h>
#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/lying_tiff.hpp"
#include "core/error.hpp"
#include "core/numerics/levels.hpp"
#include "core/numerics/sat.hpp"
#include "core/tuning.hpp"
#include "io/align/batch_list.hpp"
#include "io/align/database_file.hpp"
#include "io/align/sequence_reader.hpp"
#include "io/arrays/image.hpp"
#include "io/arrays/loop_indices.hpp"
#include "io/arrays/matrix_market.hpp"
#include "io/arrays/npy.hpp"
#include "tests/cli_support.hpp"

namespace {

using namespace swgpu;
using testing::temp_dir;
namespace fs = std::filesystem;

template <class F>
error caught(F&& f) {
    try {
        f();
    } catch (const error& e) {
        return e;
    }
    FAIL("no swgpu::error thrown");
    return error(exit_code::success, "");
}

bool one_line(const error& e) { return std::string(e.what()).find('\n') == std::string::npos; }

// Far more memory than any machine has: only the parsers' own checks refuse.
constexpr const char* unlimited = "host.memory_mib=1000000000";

void put_u32_be(std::string& s, std::size_t at, std::uint32_t v) {
    for (int k = 0; k < 4; ++k) s[at + k] = static_cast<char>((v >> (24 - 8 * k)) & 0xff);
}

}  // namespace

TEST_CASE("PGM/PPM: a header of up to 2^32 - 1 x 2^32 - 1 pixels is checked against the bytes present first", "[fuzz][sat]") {
    // Before, the array was allocated first: 2^64 * 6 bytes overflowed index_t (undefined) and asked for an absurd
    // allocation.
    const auto e = caught([] { io::parse_pnm("P6 4294967295 4294967295 65535\nxx", "big.ppm"); });
    CHECK(e.code() == exit_code::bad_input);
    CHECK(std::string(e.what()) ==
          "big.ppm: the PGM/PPM data is truncated: 110680464390717702150 bytes expected, 2 present");
    const auto small = caught([] { io::parse_pnm("P5 3 2 255\nabcde", "small.pgm"); });
    CHECK(std::string(small.what()) == "small.pgm: the PGM/PPM data is truncated: 6 bytes expected, 5 present");
    CHECK(io::parse_pnm("P5 3 2 255\nabcdef", "ok.pgm").bytes() == 6);
}

TEST_CASE("PNG: a header announcing more pixels than its compressed data holds is refused before allocating", "[fuzz][sat]") {
    const tuning::scoped_override memory(unlimited);
    temp_dir dir;
    sat::array a(sat::dtype::u8, 1, 1, 4);
    io::write_png(a, dir / "one.png");
    std::string png = testing::slurp(dir / "one.png");
    REQUIRE(io::decode_png(png, "one.png").lanes == 4);
    // IHDR (at 8: length, type, then width and height) says 30000 x 30000 RGBA: 3.6 GB from a few bytes of IDAT.
    put_u32_be(png, 16, 30000);
    put_u32_be(png, 20, 30000);
    put_u32_be(png, 29, static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(png.data() + 12), 17)));
    const auto e = caught([&] { io::decode_png(png, "lying.png"); });
    CHECK(e.code() == exit_code::bad_input);
    CHECK(one_line(e));
    CHECK(std::string(e.what()).find("lying.png: not a valid PNG: the header announces a 30000 x 30000 image, more than "
                                     "its ") == 0);
}

TEST_CASE("TIFF: a header announcing more pixels than its strips hold is refused before allocating", "[fuzz][sat]") {
    temp_dir dir;
    // 100000 x 100000 grey pixels (10 GB) with one row of data: with the memory to hold it, the strips refuse it.
    REQUIRE(write_lying_tiff(dir / "huge.tif"));
    const tuning::scoped_override memory(unlimited);
    const auto e = caught([&] { io::read_array(dir / "huge.tif"); });
    CHECK(e.code() == exit_code::bad_input);
    CHECK(one_line(e));
    CHECK(std::string(e.what()).find("huge.tif: not a valid TIFF: the header announces 10000000000 bytes of pixels, "
                                     "more than its strips' 100000 bytes hold") != std::string::npos);
}

TEST_CASE("Matrix Market: a size line with more rows than entries is refused without the arrays of every row", "[fuzz][levels]") {
    const tuning::scoped_override memory(unlimited);
    // 2^31 - 2 rows announced: the CSR row pointers alone were 17 GB, allocated before the missing diagonal was
    // found. The same first missing (or zero) diagonal entry is named as for a matrix of the rows present.
    const std::string head = "%%MatrixMarket matrix coordinate real general\n";
    const auto message = [&](const std::string& size, const std::string& entries, levels::triangle part) {
        const auto e = caught([&] { io::parse_matrix_market_triangle(head + size + entries, "m.mtx", part); });
        CHECK(e.code() == exit_code::bad_input);
        return std::string(e.what());
    };
    for (const auto part : {levels::triangle::lower, levels::triangle::upper}) {
        const std::string zero = "1 1 1\n2 2 0\n", gap = "1 1 1\n3 3 2\n2 1 5\n1 2 5\n";
        CHECK(message("2147483646 2147483646 2\n", zero, part) == "m.mtx: row 2 has a zero on the diagonal; the triangular system is singular");
        CHECK(message("3 3 2\n", zero, part) == "m.mtx: row 2 has a zero on the diagonal; the triangular system is singular");
        CHECK(message("2147483646 2147483646 4\n", gap, part) == "m.mtx: row 2 has no diagonal entry; a triangular solve needs every T[i][i] != 0");
        CHECK(message("3 3 4\n", gap, part) == message("2147483646 2147483646 4\n", gap, part));
        CHECK(message("1000 1000 1\n", "1 1 1\n", part) == "m.mtx: row 2 has no diagonal entry; a triangular solve needs every T[i][i] != 0");
    }
    // Symmetric files mirror into the triangle; duplicates summed to zero are a zero diagonal.
    const auto sym = caught([&] {
        io::parse_matrix_market_triangle("%%MatrixMarket matrix coordinate real symmetric\n100000 100000 3\n1 1 2\n1 1 -2\n2 1 3\n",
                                         "s.mtx", levels::triangle::upper);
    });
    CHECK(std::string(sym.what()) == "s.mtx: row 1 has a zero on the diagonal; the triangular system is singular");
}

TEST_CASE(".npy: header text quoted in messages is one printable line", "[fuzz][sat]") {
    // A descr that never closes its parenthesis ran to the end of the header, newline included, into the message.
    std::string dict = "{'descr':('<i8', 'fortran_order': False, 'shape': (5,), }";
    dict += '\n';
    std::string npy = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(dict.size()) + '\0' + dict;
    const auto e = caught([&] { io::parse_npy(npy, "bad.npy"); });
    CHECK(e.code() == exit_code::bad_input);
    CHECK(one_line(e));
    CHECK(std::string(e.what()).find("\\x0a") != std::string::npos);
    std::string shape = io::npy_header(sat::dtype::u8, "(2,\t\x01)");
    const auto s = caught([&] { io::parse_npy(shape + "ab", "shape.npy"); });
    CHECK(std::string(s.what()) == "shape.npy: the .npy shape '(2,\\x09\\x01)' is malformed");
}

TEST_CASE(".swdb: a length order out of order and a lying longest sequence are corrupt", "[fuzz][makedb]") {
    temp_dir dir;
    std::ofstream(dir / "s.fa") << ">a\nACDE\n>b\nWW\n>c\nMKV\n";
    io::write_database(dir / "s.fa", dir / "s");
    const std::string good = testing::slurp(dir / "s.swdb");
    REQUIRE(io::database_file(dir / "s.swdb").longest() == 4);
    const auto with = [&](std::size_t at, std::uint64_t value, int bytes) {
        std::string b = good;
        for (int k = 0; k < bytes; ++k) b[at + k] = static_cast<char>((value >> (8 * k)) & 0xff);
        std::ofstream(dir / "bad.swdb", std::ios::binary) << b;
        const auto e = caught([&] { io::database_file db(dir / "bad.swdb"); });
        CHECK(e.code() == exit_code::bad_input);
        return std::string(e.what());
    };
    CHECK(with(32, 1000000, 8).find("corrupt database header (longest sequence)") != std::string::npos);
    // The order (after the header, the 9 residues and 3 name bytes, each padded to 8, and both offset tables of 4
    // entries) is 0 2 1: lengths 4 3 2. Swapped: 2 0 1.
    const std::size_t order = 48 + 16 + 8 + 2 * 4 * 8;  // format 3: a 48-byte header
    CHECK(with(order, 2, 4).find("corrupt database length order") != std::string::npos);  // 2 2 1: a repeat
    std::string swapped = good;
    std::swap(swapped[order], swapped[order + 4]);
    std::ofstream(dir / "swapped.swdb", std::ios::binary) << swapped;
    CHECK(std::string(caught([&] { io::database_file db(dir / "swapped.swdb"); }).what()).find("corrupt database length order") !=
          std::string::npos);
}

TEST_CASE("a --batch list parses from text as from its file", "[fuzz][align]") {
    const auto list = io::parse_batch_list("q1.fa\n# c\n\n q2.fa\tout2\r\n/a/q3.fa /abs/o3\n", "l.txt", "outs");
    REQUIRE(list.size() == 3);
    CHECK(list[0].query == "q1.fa");
    CHECK(list[0].out == "outs/q1.fa.out");
    CHECK(list[1].query == " q2.fa");  // a tab on the line: blanks belong to the names
    CHECK(list[1].out == "outs/out2");
    CHECK(list[2].out == "/abs/o3");
    CHECK(std::string(caught([] { io::parse_batch_list("a\nb c d\n", "l.txt", ""); }).what()) ==
          "l.txt:2: expected QUERY [OUTPUT], found 3 fields");
    CHECK(std::string(caught([] { io::parse_batch_list("a/q\nb/q\n", "l.txt", "-"); }).what()) ==
          "l.txt:2: output ./q.out is listed twice");
    CHECK(std::string(caught([] { io::parse_batch_list("# only\n\n", "l.txt", ""); }).what()) ==
          "l.txt: the --batch list names no query file");
    temp_dir dir;
    std::ofstream(dir / "list") << "x.fa y\n";
    CHECK(io::read_batch_list(dir / "list", "")[0].out == "./y");
    CHECK(caught([&] { io::read_batch_list(dir / "missing", ""); }).code() == exit_code::bad_input);
}

TEST_CASE("loop index arrays from .npy arrays in memory", "[fuzz][levels]") {
    const auto npy = [](std::vector<std::int64_t> v, const std::string& shape) {
        std::string b = io::npy_header(sat::dtype::i64, shape);
        b.append(reinterpret_cast<const char*>(v.data()), v.size() * 8);
        return io::parse_npy(b, "x.npy");
    };
    levels::indirect_loop loop;
    io::set_loop_writes(loop, npy({0, 3, 1}, "(3,)"), "w.npy");
    io::set_loop_reads(loop, npy({1, 2, 0, 0, 3, 3}, "(3, 2)"), "r.npy");
    io::set_loop_locations(loop, -1, 0, "w.npy");
    CHECK(loop.locations == 4);
    CHECK(loop.reads_per_iteration == 2);
    CHECK(std::string(caught([&] { io::set_loop_reads(loop, npy({1, 2}, "(2,)"), "r.npy"); }).what()) ==
          "r.npy: has 2 rows of reads; --writes has 3 iterations (mismatched lengths)");
    levels::indirect_loop wide;
    CHECK(std::string(caught([&] { io::set_loop_writes(wide, npy({1, 2, 3, 4}, "(2, 2)"), "w.npy"); }).what()) ==
          "w.npy: write indices must be a vector (n,)");
    levels::indirect_loop big;
    io::set_loop_writes(big, npy({0, 2000000000}, "(2,)"), "w.npy");
    const tuning::scoped_override memory("host.memory_mib=1024");
    CHECK(caught([&] { io::set_loop_locations(big, -1, 0, "w.npy"); }).code() == exit_code::out_of_memory);
    CHECK(std::string(caught([&] { io::set_loop_locations(big, 5, 0, "w.npy"); }).what()).find("w.npy: write index 2000000000") == 0);
}

TEST_CASE("regions: a nameless sequence cannot be selected, a region with a NUL byte is refused", "[fuzz][input]") {
    temp_dir dir;
    // faidx indexes '>' alone under the empty name; "{}" (and a region cut short by a NUL byte) selected it, and a
    // record without a name came out, where reading the file whole refuses it.
    std::ofstream(dir / "g.fa") << ">\r\nACGT\n>b\nAC\n";
    const auto e = caught([&] { io::read_region(dir / "g.fa", "{}"); });
    CHECK(e.code() == exit_code::bad_input);
    CHECK(std::string(e.what()).find("g.fa:{}: the sequence's header has no name; write one right after '>'") !=
          std::string::npos);
    const auto nul = caught([&] { io::read_region(dir / "g.fa", std::string("b\0", 2)); });
    CHECK(nul.code() == exit_code::bad_input);
    CHECK(std::string(nul.what()).find("the region holds a NUL byte") != std::string::npos);
    CHECK(one_line(nul));
    CHECK(io::read_region(dir / "g.fa", "b:2").length(0) == 1);
}

TEST_CASE("loop index arrays: an index of 2^63 - 1 is refused without overflow", "[fuzz][levels]") {
    std::string w = io::npy_header(sat::dtype::i64, "(2,)");
    const std::int64_t v[2] = {0, INT64_MAX};
    w.append(reinterpret_cast<const char*>(v), sizeof v);
    levels::indirect_loop loop;
    io::set_loop_writes(loop, io::parse_npy(w, "w.npy"), "w.npy");
    CHECK(std::string(caught([&] { io::set_loop_locations(loop, -1, 0, "w.npy"); }).what()) ==
          "w.npy: more than 2^31-1 iterations or array elements; split the loop");
}

TEST_CASE("a region with an exponent in its positions is refused at once, a name that looks so is read", "[fuzz][align]") {
    // HTSlib multiplies by ten once per unit of an exponent: "chr1:1E6666666666" took 5 s (found by fuzz_region, a
    // timeout under the fuzzer). Positions are plain integers; a sequence named like that is still found.
    temp_dir dir;
    std::ofstream(dir / "g.fa") << ">chr1\nACGTACGTAC\n>x:1e5\nGGGG\n";
    for (const std::string region : {"chr1:1E6666666666", "chr1:1e5-2e5", "chr1:001066666666666666E6666666666[,.0"}) {
        const auto start = std::chrono::steady_clock::now();
        const auto e = caught([&] { io::read_region(dir / "g.fa", region); });
        CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 0.5);
        CHECK(e.code() == exit_code::bad_input);
        CHECK(std::string(e.what()).find("positions are plain integers") != std::string::npos);
    }
    const auto named = io::read_region(dir / "g.fa", "x:1e5");
    REQUIRE(named.size() == 1);
    CHECK(named.length(0) == 4);
    CHECK(io::read_region(dir / "g.fa", "chr1:2-5").length(0) == 4);
}
