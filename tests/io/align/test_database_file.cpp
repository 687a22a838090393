// `swgpu makedb` databases: written from FASTA, read back identical (names, residues, order), chunked reads equal one
// read, corrupt files are clear errors.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <zlib.h>

#include "core/error.hpp"
#include "io/align/database_file.hpp"
#include "io/align/database_stream.hpp"
#include "io/align/sequence_reader.hpp"

using namespace swgpu;
namespace fs = std::filesystem;

namespace {
fs::path temp_dir() {
    auto d = fs::temp_directory_path() / ("swgpu_db_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}
}  // namespace

TEST_CASE("a database written from the demo FASTA reads back record for record", "[makedb]") {
    const auto dir = temp_dir();
    const std::string fasta = std::string(SWGPU_SOURCE_DIR) + "/data/demo_db.fa";
    const std::string prefix = (dir / "demo").string();
    REQUIRE(io::write_database(fasta, prefix) == 1000);
    REQUIRE(io::is_database_file(prefix));
    REQUIRE_FALSE(io::is_database_file(fasta));
    for (const auto& e : fs::directory_iterator(dir))  // the temporary file was renamed
        REQUIRE(e.path().filename().string().find(".swgpu-") == std::string::npos);

    const auto ref = io::read_all(fasta);
    io::database_file db(prefix);
    REQUIRE(db.size() == ref.size());
    REQUIRE(db.total_residues() == ref.total_residues());
    std::size_t longest = 0;
    for (std::size_t k = 0; k < ref.size(); ++k) {
        REQUIRE(db.name(k) == ref.names[k]);
        auto r = db.residues(k);
        std::string want(ref[k].begin(), ref[k].end());
        std::transform(want.begin(), want.end(), want.begin(), ::toupper);
        REQUIRE(std::string(r.begin(), r.end()) == want);
        longest = std::max(longest, ref.length(k));
    }
    REQUIRE(db.longest() == longest);
    // length order: a permutation, longest first, ties by index
    auto order = db.length_order();
    for (std::size_t k = 1; k < order.size(); ++k) {
        const auto a = ref.length(order[k - 1]), b = ref.length(order[k]);
        REQUIRE((a > b || (a == b && order[k - 1] < order[k])));
    }

    io::database_file chunked(prefix + ".swdb");
    sequence_set all;
    int chunks = 0;
    while (true) {
        sequence_set c;
        if (!chunked.read_chunk(c, 50000)) break;
        ++chunks;
        for (std::size_t k = 0; k < c.size(); ++k) all.add(c.names[k], c[k]);
    }
    REQUIRE(chunks > 5);
    REQUIRE(all.names == ref.names);
    REQUIRE(all.offsets == ref.offsets);

    // Skipping every other chunk passes exactly the records a read would have read (counts), and the next read
    // starts after them; reading into a set that already holds records appends.
    io::database_file skipping(prefix);
    sequence_set odd;
    std::uint64_t skipped_residues = 0, skipped_sequences = 0;
    for (int c = 0;; ++c) {
        if (c % 2 == 0) {
            std::uint64_t r = 0, n = 0;
            if (!skipping.skip_chunk(50000, r, n)) break;
            REQUIRE(n > 0);
            skipped_residues += r;
            skipped_sequences += n;
        } else if (!skipping.read_chunk(odd, 50000)) {
            break;
        }
    }
    REQUIRE(skipping.exhausted());
    REQUIRE(skipped_residues + odd.total_residues() == ref.total_residues());
    REQUIRE(skipped_sequences + odd.size() == ref.size());
    sequence_set expect;
    io::database_file again(prefix);
    for (int c = 0;; ++c) {
        sequence_set chunk;
        if (!again.read_chunk(chunk, 50000)) break;
        if (c % 2 == 1)
            for (std::size_t k = 0; k < chunk.size(); ++k) expect.add(chunk.names[k], chunk[k]);
    }
    REQUIRE(odd.names == expect.names);
    REQUIRE(odd.offsets == expect.offsets);
    REQUIRE(odd.residues == expect.residues);
    fs::remove_all(dir);
}

TEST_CASE("corrupt or foreign database files are bad-input errors", "[makedb]") {
    const auto dir = temp_dir();
    const std::string prefix = (dir / "small").string();
    {
        std::ofstream f(dir / "small.fa");
        f << ">a one\nACDE\n>b\nWW\n";
    }
    io::write_database((dir / "small.fa").string(), prefix);
    auto code_of = [](const std::string& p) {
        try {
            io::database_file db(p);
        } catch (const error& e) {
            return e.code();
        }
        return exit_code::success;
    };
    REQUIRE(code_of(prefix) == exit_code::success);
    // truncated
    fs::copy_file(prefix + ".swdb", dir / "trunc.swdb");
    fs::resize_file(dir / "trunc.swdb", fs::file_size(dir / "trunc.swdb") - 8);
    REQUIRE(code_of((dir / "trunc").string()) == exit_code::bad_input);
    // foreign
    {
        std::ofstream f(dir / "foreign.swdb", std::ios::binary);
        f << std::string(200, 'x');
    }
    REQUIRE(code_of((dir / "foreign").string()) == exit_code::bad_input);
    REQUIRE(code_of((dir / "missing").string()) == exit_code::bad_input);
    // unwritable output
    try {
        io::write_database((dir / "small.fa").string(), (dir / "no_such_dir" / "x").string());
        FAIL("write into a missing directory succeeded");
    } catch (const error& e) {
        REQUIRE(e.code() == exit_code::output_failed);
    }
    fs::remove_all(dir);
}

TEST_CASE("swgpu makedb + align on the database prints what align on the FASTA prints", "[makedb][cli]") {
    const auto dir = temp_dir();
    const std::string bin = SWGPU_BINARY, src = SWGPU_SOURCE_DIR;
    const std::string prefix = (dir / "demo").string();
    auto sh = [](const std::string& cmd) { return std::system(cmd.c_str()); };
    REQUIRE(sh(bin + " makedb -q " + src + "/data/demo_db.fa " + prefix) == 0);
    REQUIRE(sh(bin + " align -t 2 --outfmt '6 std score cigar' " + src + "/data/demo_queries.fa " + src +
               "/data/demo_db.fa > " + (dir / "fasta.tsv").string() + " 2>/dev/null") == 0);
    REQUIRE(sh(bin + " align -t 2 --outfmt '6 std score cigar' " + src + "/data/demo_queries.fa " + prefix +
               ".swdb > " + (dir / "swdb.tsv").string() + " 2>/dev/null") == 0);
    std::ifstream a(dir / "fasta.tsv"), b(dir / "swdb.tsv");
    const std::string sa((std::istreambuf_iterator<char>(a)), {}), sb((std::istreambuf_iterator<char>(b)), {});
    REQUIRE(sa.size() > 1000);
    REQUIRE(sa == sb);
    // a missing source is exit code 1 with one swgpu: line and no database left behind
    const int rc = sh(bin + " makedb " + (dir / "missing.fa").string() + " " + (dir / "x").string() + " 2> " +
                      (dir / "err.txt").string());
    REQUIRE(WEXITSTATUS(rc) == 1);
    std::ifstream e(dir / "err.txt");
    std::string line;
    std::getline(e, line);
    REQUIRE(line.rfind("swgpu: error: ", 0) == 0);
    REQUIRE_FALSE(fs::exists(dir / "x.swdb"));
    fs::remove_all(dir);
}

TEST_CASE("a database changed after makedb: damaged residues name their records when read, damaged tables or names fail at open", "[makedb][cli]") {
    // 2,600 records of 1,000 residues: three checksum blocks of 2^20 residues (the last one short).
    const auto dir = temp_dir();
    const std::string fasta = (dir / "big.fa").string(), prefix = (dir / "big").string();
    {
        std::ofstream f(fasta);
        std::uint64_t x = 3;
        for (int k = 0; k < 2600; ++k) {
            f << ">s" << k << "\n";
            for (int j = 0; j < 1000; ++j) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                f << "ACDEFGHIKLMNPQRSTVWY"[(x >> 33) % 20];
            }
            f << "\n";
        }
    }
    REQUIRE(io::write_database(fasta, prefix) == 2600);
    const std::string good_path = prefix + ".swdb";
    std::string good;
    {
        std::ifstream in(good_path, std::ios::binary);
        good.assign(std::istreambuf_iterator<char>(in), {});
    }
    const std::size_t residues_at = 48;  // right after the header (format 3)
    REQUIRE(good.substr(residues_at, 4) != std::string(4, '\0'));
    int made = 0;
    const auto damaged = [&](std::size_t at, char now) {
        std::string b = good;
        REQUIRE(b[at] != now);
        b[at] = now;
        const std::string p = (dir / ("damaged" + std::to_string(++made) + ".swdb")).string();
        std::ofstream(p, std::ios::binary) << b;
        return p;
    };
    const auto message = [](auto&& f) -> std::string {
        try {
            f();
        } catch (const error& e) {
            CHECK(e.code() == exit_code::bad_input);
            return e.what();
        }
        return "";
    };
    // One letter changed into another valid one in the second block (residue 1,500,000: record 1501, s1500).
    const std::string one = damaged(residues_at + 1500000, good[residues_at + 1500000] == 'A' ? 'C' : 'A');
    const auto whole = message([&] {
        io::database_file db(one);
        sequence_set all;
        db.read_chunk(all, 0);
    });
    CHECK_THAT(whole, Catch::Contains("damaged1.swdb: residues of records 1049-2098 (s1048 to s2097) do not match the "
                                      "checksum makedb wrote") &&
                          Catch::Contains("rebuild it with swgpu makedb"));
    {  // the same when the residues are encoded as they are copied (the search's path)
        const auto m = substitution_matrix::builtin("BLOSUM62");
        CHECK_THAT(message([&] {
                       io::database_file db(one);
                       sequence_set all;
                       std::uint64_t unknown = 0;
                       db.read_chunk(all, 0, &m, &unknown);
                   }),
                   Catch::Contains("residues of records 1049-2098 (s1048 to s2097) do not match the checksum"));
    }
    {
        // Chunks before the damaged block read; the one reaching it fails; a chunk skipped unread is not checked.
        io::database_file db(one);
        sequence_set some;
        REQUIRE(db.read_chunk(some, 1000000));
        CHECK(some.size() == 1000);
        CHECK_THAT(message([&] { db.read_chunk(some, 1000000); }), Catch::Contains("records 1049-2098"));
        io::database_file skipping(one);
        std::uint64_t r = 0, n = 0;
        REQUIRE(skipping.skip_chunk(2200000, r, n));
        CHECK(n == 2200);
        REQUIRE(skipping.read_chunk(some, 0));
        CHECK(skipping.exhausted());
        CHECK(std::string(skipping.name(2599)) == "s2599");
        CHECK_THAT(message([&] { (void)skipping.residues(1500); }), Catch::Contains("records 1049-2098"));
    }
    // A name or an offset changed: refused when opened.
    const std::size_t names_at = residues_at + 2600000;  // the residues take a multiple of 8 bytes
    CHECK_THAT(message([&] { io::database_file db(damaged(names_at + 1, '9')); }),
               Catch::Contains("its header, tables or names do not match the checksum makedb wrote"));
    // The program: exit 1 and one line, no output.
    const std::string bin = SWGPU_BINARY;
    std::ofstream(dir / "q.fa") << ">q\n" << good.substr(residues_at + 1499990, 60) << "\n";
    const int rc = std::system((bin + " align " + (dir / "q.fa").string() + " " + one + " -o " + (dir / "hits.tsv").string() +
                                " 2> " + (dir / "err.txt").string())
                                   .c_str());
    CHECK(WEXITSTATUS(rc) == 1);
    std::ifstream e(dir / "err.txt");
    const std::string err((std::istreambuf_iterator<char>(e)), {});
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
    CHECK_THAT(err, Catch::StartsWith("swgpu: error: ") && Catch::Contains("records 1049-2098"));
    CHECK_FALSE(fs::exists(dir / "hits.tsv"));
    fs::remove_all(dir);
}

TEST_CASE("chunks encoded as they are read equal chunks read as letters, then encoded, in recycled storage too",
          "[makedb]") {
    // Records of 1 to 3,000 residues with letters outside the matrix (counted as unknown), over several checksum
    // blocks, read in chunks that start and end inside blocks.
    const auto dir = temp_dir();
    const std::string fasta = (dir / "mixed.fa").string(), prefix = (dir / "mixed").string();
    {
        std::ofstream f(fasta);
        std::uint64_t x = 7;
        for (int k = 0; k < 1500; ++k) {
            f << ">m" << k << " title " << k << "\n";
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            const int length = 1 + static_cast<int>((x >> 33) % 3000);
            for (int j = 0; j < length; ++j) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                f << "ACDEFGHIKLMNPQRSTVWYBZXUOJ"[(x >> 33) % 26];
            }
            f << "\n";
        }
    }
    REQUIRE(io::write_database(fasta, prefix) == 1500);
    const auto m = substitution_matrix::builtin("BLOSUM62");
    for (const std::uint64_t chunk : {std::uint64_t(0), std::uint64_t(700000), std::uint64_t(5000)}) {
        io::database_file letters(prefix), codes(prefix);
        sequence_set recycled;  // a spent chunk's storage: stale residues, no records
        recycled.residues.assign(3000000, 0xee);
        for (;;) {
            sequence_set a;
            const bool more = letters.read_chunk(a, chunk);
            sequence_set& b = recycled;
            b.names.clear();
            b.offsets.assign(1, 0);
            b.encoded = false;
            std::uint64_t unknown = 99;
            REQUIRE(codes.read_chunk(b, chunk, &m, &unknown) == more);
            if (!more) break;
            const std::uint64_t expected_unknown = encode(a, m);
            CHECK(unknown == expected_unknown);
            CHECK(b.encoded);
            CHECK(b.names == a.names);
            CHECK(b.offsets == a.offsets);
            CHECK(b.residues == a.residues);
        }
        CHECK(codes.exhausted());
    }
    {  // appended to a set that holds encoded records already
        io::database_file codes(prefix);
        sequence_set both;
        std::uint64_t u1 = 0, u2 = 0;
        REQUIRE(codes.read_chunk(both, 400000, &m, &u1));
        REQUIRE(codes.read_chunk(both, 0, &m, &u2));
        io::database_file letters(prefix);
        sequence_set all;
        REQUIRE(letters.read_chunk(all, 0));
        CHECK(u1 + u2 == encode(all, m));
        CHECK(both.names == all.names);
        CHECK(both.offsets == all.offsets);
        CHECK(both.residues == all.residues);
    }
    fs::remove_all(dir);
}

TEST_CASE("a .swdb stream takes storage for its largest chunk once: the ramp's chunks read as before, in place",
          "[makedb]") {
    const auto dir = temp_dir();
    const std::string fasta = (dir / "ramp.fa").string(), prefix = (dir / "ramp").string();
    {
        std::ofstream f(fasta);
        std::uint64_t x = 11;
        for (int k = 0; k < 1200; ++k) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            f << ">r" << k << "\n" << std::string(1 + static_cast<std::size_t>((x >> 33) % 2000), "ACDEFGHIKLMNPQRSTVWY"[k % 20])
              << "\n";
        }
    }
    REQUIRE(io::write_database(fasta, prefix) == 1200);
    // The chunks of a ramp of 1/8, 1/4, 1/2, then whole chunks of 200,000 residues, each read into a fresh set.
    const std::vector<std::uint64_t> limits{25000, 50000, 100000, 200000};
    std::vector<sequence_set> expected;
    {
        io::database_file file(prefix);
        const std::uint64_t largest = file.largest_chunk(limits);
        std::uint64_t seen = 0;
        for (std::size_t k = 0;; ++k) {
            sequence_set c;
            if (!file.read_chunk(c, limits[std::min(k, limits.size() - 1)])) break;
            seen = std::max(seen, c.total_residues());
            expected.push_back(std::move(c));
        }
        CHECK(largest == seen);
        CHECK(file.largest_chunk(limits) == 0);  // nothing left
        CHECK(expected.size() > 6);
    }
    // The stream, two chunks in memory at once as in a search, the searched one handed back: the same chunks, and
    // after the first two no chunk takes new storage.
    io::database_stream::options o;
    o.chunk_residues = 200000;
    o.ramp = true;
    io::database_stream stream(prefix, o);
    std::vector<const std::uint8_t*> storage;
    sequence_set held;
    for (std::size_t k = 0;; ++k) {
        sequence_set c;
        if (!stream.next(c)) break;
        REQUIRE(k < expected.size());
        CHECK(c.names == expected[k].names);
        CHECK(c.offsets == expected[k].offsets);
        CHECK(c.residues == expected[k].residues);
        CHECK(c.residues.capacity() >= 200000);
        if (std::find(storage.begin(), storage.end(), c.residues.data()) == storage.end())
            storage.push_back(c.residues.data());
        if (!held.empty()) stream.recycle(std::move(held));
        held = std::move(c);
    }
    CHECK(storage.size() == 2);
    // The FASTA file as a stream: storage for a chunk taken first, the same chunks as the reader's (not typed here:
    // typing makes the first chunk hold type_window residues).
    o.auto_type = false;
    io::database_stream text(fasta, o);
    io::sequence_reader reader(fasta);
    for (std::size_t k = 0;; ++k) {
        sequence_set c, r;
        const bool more = text.next(c);
        REQUIRE(reader.read_chunk(r, limits[std::min(k, limits.size() - 1)]) == more);
        if (!more) break;
        CHECK(c.names == r.names);
        CHECK(c.offsets == r.offsets);
        CHECK(c.residues == r.residues);
        CHECK(c.residues.capacity() >= std::min<std::uint64_t>(limits[std::min(k, limits.size() - 1)], 1200));
    }
    // A database known to fit in one chunk (a .swdb's residues, a plain file's bytes) is read whole despite the ramp;
    // one residue short of that, the ramp cuts it (its first chunk is at most an eighth).
    std::uint64_t total = 0;
    for (const auto& c : expected) total += c.total_residues();
    const std::uint64_t fasta_bytes = fs::file_size(fasta);
    for (const bool swdb : {true, false}) {
        const std::uint64_t fits = swdb ? total : fasta_bytes;
        for (const std::uint64_t chunk : {fits, fits - 1}) {
            o.chunk_residues = chunk;
            io::database_stream s(swdb ? prefix : fasta, o);
            std::vector<std::uint64_t> sizes;
            for (sequence_set c; s.next(c);) sizes.push_back(c.total_residues());
            INFO((swdb ? "swdb" : "fasta") << ", chunk " << chunk);
            if (chunk == fits) {
                CHECK(sizes == std::vector<std::uint64_t>{total});
            } else {
                CHECK(sizes.size() > 1);
                CHECK(sizes.front() <= chunk / 8 + 2000);  // a chunk ends with the record that crosses its limit
            }
        }
    }
    fs::remove_all(dir);
}

TEST_CASE("a database truncated while it is read: one error line and exit 1, not a bus error", "[makedb]") {
    // Copied over in place while a search maps it: reading its lost pages is a SIGBUS, which the reader turns into
    // the error convention (and removes the outputs' temporary files). Run in a child process, which exits.
    const auto dir = temp_dir();
    const std::string fasta = (dir / "t.fa").string(), prefix = (dir / "t").string();
    {
        std::ofstream f(fasta);
        for (int k = 0; k < 64; ++k) f << ">s" << k << "\n" << std::string(20000, "ACDEFGHIKL"[k % 10]) << "\n";
    }
    REQUIRE(io::write_database(fasta, prefix) == 64);
    const std::string db = prefix + ".swdb", err = (dir / "err.txt").string();
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, STDERR_FILENO);
        try {
            io::database_file f(db);
            if (::truncate(db.c_str(), 4096) != 0) ::_exit(90);
            sequence_set all;
            f.read_chunk(all, 0);
        } catch (...) {
            ::_exit(91);
        }
        ::_exit(92);  // read what is no longer there without a fault
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    std::ifstream e(err);
    const std::string text((std::istreambuf_iterator<char>(e)), {});
    CHECK(text == "swgpu: error: " + db + ": the database file changed (it shrank) while it was read; rebuild it with "
                                          "swgpu makedb, where no search reads it, and run again\n");
    fs::remove_all(dir);
}

TEST_CASE("a .swdb of format 3 says its type, format 2 (no type word) is still read, its records typed as FASTA's",
          "[makedb][seqtype]") {
    const auto dir = temp_dir();
    const std::string fasta = (dir / "p.fa").string();
    std::ofstream(fasta) << ">p1\nMKVLAAGIEWTRSDFHKLMNPQ\n>polyA\n" << std::string(60, 'A') << "\n";
    io::write_database(fasta, (dir / "p3").string());
    io::database_file v3((dir / "p3.swdb").string());
    REQUIRE(v3.type());
    CHECK(*v3.type() == seq_type::protein);
    CHECK(!v3.type_forced());
    io::write_database(fasta, (dir / "d3").string(), {}, seq_type::dna);
    io::database_file forced((dir / "d3.swdb").string());
    CHECK(*forced.type() == seq_type::dna);
    CHECK(forced.type_forced());

    // Format 2: the same file without the type word (bytes 40..47), its checksum of the header and tables recomputed
    // with zlib as format 2 wrote it.
    std::ifstream in(dir / "p3.swdb", std::ios::binary);
    std::ostringstream buf;
    buf << in.rdbuf();
    std::string b = buf.str();
    std::string v2 = b.substr(0, 40) + b.substr(48);
    v2[7] = '2';
    std::uint64_t n = 0, r = 0, names = 0;
    std::memcpy(&n, v2.data() + 8, 8);
    std::memcpy(&r, v2.data() + 16, 8);
    std::memcpy(&names, v2.data() + 24, 8);
    const auto pad8 = [](std::uint64_t x) { return (x + 7) & ~std::uint64_t(7); };
    const std::uint64_t names_at = 40 + pad8(r), sums_at = names_at + pad8(names) + 16 * (n + 1) + pad8(4 * n);
    const std::uint64_t blocks = (r + (1u << 20) - 1) >> 20;
    uLong crc = crc32(0, nullptr, 0);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(v2.data()), 40);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(v2.data() + names_at), static_cast<uInt>(sums_at - names_at));
    const auto meta = static_cast<std::uint32_t>(crc);
    std::memcpy(v2.data() + sums_at + 4 * blocks, &meta, 4);
    std::ofstream(dir / "p2.swdb", std::ios::binary) << v2;
    io::database_file old((dir / "p2.swdb").string());
    CHECK(!old.type());
    CHECK(old.size() == 2);
    sequence_set all;
    REQUIRE(old.read_chunk(all));
    CHECK(std::string(all[1].begin(), all[1].end()) == std::string(60, 'A'));
    fs::remove_all(dir);
}
