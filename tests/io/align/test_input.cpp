// Sequences and matrix files in: malformed and hostile inputs give bad_input errors that name the file and the record
// (or line), and unusual but valid inputs are read exactly. Expected names and residues are written out by hand from
// the input text, never taken from the reader.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <htslib/bgzf.h>

#include "core/error.hpp"
#include "core/align/scoring.hpp"
#include "io/align/matrix_file.hpp"
#include "io/align/sequence_reader.hpp"

namespace {

using swgpu::exit_code;
using namespace swgpu::io;
using namespace std::string_literals;
namespace fs = std::filesystem;

// A directory of test files, removed afterwards.
class temp_dir {
public:
    temp_dir() {
        std::string pattern = (fs::temp_directory_path() / "swgpu_input_XXXXXX").string();
        if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
        path_ = pattern;
    }
    ~temp_dir() {
        std::error_code ec;
        fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(path_, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    std::string path(const std::string& name) const { return (path_ / name).string(); }

    std::string write(const std::string& name, const std::string& bytes) const {
        const std::string p = path(name);
        std::ofstream out(p, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        if (!out) throw std::runtime_error("cannot write " + p);
        return p;
    }

    // mode "wg": plain gzip; "w": bgzip (BGZF blocks and the end-of-file block), both through HTSlib.
    std::string compress(const std::string& name, const std::string& bytes, const char* mode) const {
        const std::string p = path(name);
        BGZF* f = bgzf_open(p.c_str(), mode);
        if (!f || bgzf_write(f, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()) || bgzf_close(f) != 0)
            throw std::runtime_error("cannot compress " + p);
        return p;
    }

private:
    fs::path path_;
};

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs `f`, which must throw swgpu::error with exit code bad_input; returns the message.
std::string bad_input_message(const std::function<void()>& f) {
    try {
        f();
    } catch (const swgpu::error& e) {
        CHECK(e.code() == exit_code::bad_input);
        return e.what();
    }
    FAIL("no error was thrown");
    return {};
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<std::string> names_of(const swgpu::sequence_set& s) { return s.names; }
std::vector<std::string> residues_of(const swgpu::sequence_set& s) {
    std::vector<std::string> out;
    for (std::size_t k = 0; k < s.size(); ++k) out.emplace_back(s[k].begin(), s[k].end());
    return out;
}

// Random protein records with a known text, for compressed and chunked reading.
struct generated_fasta {
    std::string text;
    std::vector<std::string> names, residues;
};
generated_fasta generate_fasta(int records, int length, unsigned seed) {
    static const char alphabet[] = "ACDEFGHIKLMNPQRSTVWY";
    std::mt19937 rng(seed);
    generated_fasta g;
    for (int r = 0; r < records; ++r) {
        g.names.push_back("seq" + std::to_string(r));
        std::string s;
        for (int k = 0; k < length + r % 7; ++k) s += alphabet[rng() % 20];
        g.residues.push_back(s);
        g.text += ">" + g.names.back() + " generated record\n";
        for (std::size_t k = 0; k < s.size(); k += 60) g.text += s.substr(k, 60) + "\n";
    }
    return g;
}

// One malformed input: its bytes, how they are stored, and the expected message: "FILE" + where + ": ..." with
// `what` in it.
enum class packing { plain, gzip, bgzip };
struct bad_case {
    const char* label;
    std::string bytes;
    packing pack;
    std::string where;  // after the file name, e.g. ":a (record 1, line 2)"; "" for errors of the whole file
    std::string what;
};

}  // namespace

TEST_CASE("malformed and hostile sequence files are bad_input errors naming file and record", "[input]") {
    temp_dir dir;
    std::string random_bytes;
    {
        std::mt19937 rng(7);
        for (int k = 0; k < 4096; ++k) random_bytes += static_cast<char>(rng() & 0xff);
        random_bytes[0] = '\x9c';  // neither '>' nor '@' nor a gzip magic byte
    }
    const std::string elf = "\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\n>a\nAC\n"s;
    const std::vector<bad_case> cases = {
        {"empty file", "", packing::plain, "", "the file is empty"},
        {"blank lines only", "\n  \n\t\n", packing::plain, "", "only blank lines"},
        {"empty gzip", "", packing::gzip, "", "the file is empty"},
        {"sequence before any header", "ACGT\n>a\nAC\n", packing::plain, ":line 1", "comes before the first header"},
        {"sequence before any header after blank lines", "\n\nMKV\n", packing::plain, ":line 3",
         "'MKV' comes before the first header"},
        {"binary file (ELF header)", elf, packing::plain, ":line 1", "binary data, not FASTA or FASTQ"},
        {"random bytes", random_bytes, packing::plain, ":line 1", "binary data"},
        {"gzip of random bytes", random_bytes, packing::gzip, ":line 1", "binary data"},
        {"NUL byte in a sequence", ">a\nAC\0GT\n"s, packing::plain, ":a (record 1, line 2)",
         "NUL byte at column 3"},
        {"NUL byte in a header", ">a b\0c\nACGT\n"s, packing::plain, ":a (record 1, line 1)",
         "NUL byte in the header"},
        {"non-ASCII bytes in a sequence", ">a\nAC\xC3\x84GT\n", packing::plain, ":a (record 1, line 2)",
         "non-ASCII byte 0xC3 at column 3"},
        {"control byte in a sequence", ">a\nMK\nAC\x01GT\n", packing::plain, ":a (record 1, line 3)",
         "control byte 0x01 at column 3"},
        {"record of digits only", ">a\nAC\n>b\n123\n", packing::plain, ":b (record 2, line 4)",
         "digit '1' at column 1 is not a residue"},
        {"record of punctuation only", ">p\n!?#\n", packing::plain, ":p (record 1, line 2)",
         "'!' at column 1 is not a residue"},
        {"gap character '-'", ">a\nAC-GT\n", packing::plain, ":a (record 1, line 2)", "gap character '-' at column 3"},
        {"gap character '.'", ">a\nACGT\nAC.GT\n", packing::plain, ":a (record 1, line 3)",
         "gap character '.' at column 3"},
        {"empty record before another", ">a\n>b\nAC\n", packing::plain, ":a (record 1, line 1)", "no residues"},
        {"empty record at the end", ">a\nAC\n>b\n", packing::plain, ":b (record 2, line 3)", "no residues"},
        {"record of blank lines only", ">a\n  \n\t\n>b\nAC\n", packing::plain, ":a (record 1, line 1)",
         "no residues"},
        {"'>' with no name", ">\nACGT\n", packing::plain, ":record 1 (line 1)", "the header has no name"},
        {"'>' followed by spaces only", ">a\nA\n>   \nAC\n", packing::plain, ":record 2 (line 3)",
         "the header has no name"},
        {"old Mac CR-only line ends", ">a\rACGT\r>b\rAC\r", packing::plain, ":a (record 1, line 1)",
         "carriage return"},
        {"FASTQ quality shorter at the end of the file", "@r1\nACGT\n+\nIII\n", packing::plain,
         ":r1 (record 1, line 4)", "the quality ends after 3 characters"},
        {"FASTQ quality shorter, next record follows", "@r1\nACGTA\n+\nIIII\n@r2\nACGT\n+\nIIII\n", packing::plain,
         ":r1 (record 1, line 5)", "the quality has 7 characters over 2 line(s), the sequence 5"},
        {"FASTQ quality longer", "@r1\nACG\n+\nIIII\n", packing::plain, ":r1 (record 1, line 4)",
         "the quality has 4 characters over 1 line(s), the sequence 3"},
        {"FASTQ without '+' line, next record follows", "@r1\nACGT\nIIII\n@r2\nAC\n+\nII\n", packing::plain,
         ":r1 (record 1, line 4)", "comes before this FASTQ record's '+' line"},
        {"FASTQ without '+' line at the end", "@r1\nACGT\n", packing::plain, ":r1 (record 1, line 2)",
         "ends without a '+' line"},
        {"FASTQ without quality", "@r1\nACGT\n+\n", packing::plain, ":r1 (record 1, line 3)",
         "the quality ends after 0 characters"},
        {"FASTQ quality with a space", "@r1\nACGT\n+\nII I\n", packing::plain, ":r1 (record 1, line 4)",
         "quality character 0x20 at column 3"},
        {"FASTQ extra line after the quality", "@r1\nAC\n+\nII\nJJ\n@r2\nA\n+\nI\n", packing::plain,
         ":r1 (record 1, line 5)", "'JJ' follows the quality"},
        {"FASTQ empty record", "@r1\n+\n\n", packing::plain, ":r1 (record 1, line 1)", "no residues"},
        {"gzip inside gzip", "\x1f\x8b\x08\0\0\0\0\0\0\x03"s, packing::gzip, ":line 1",
         "gzip data inside gzip data"},
        {"gzip header followed by garbage", "\x1f\x8b\x08\0\0\0\0\0\0\x03"s + random_bytes,
         packing::plain, "", "truncated or corrupt"},
    };
    for (std::size_t k = 0; k < cases.size(); ++k) {
        const bad_case& c = cases[k];
        INFO(c.label);
        const std::string name = "bad" + std::to_string(k) + ".fa";
        const std::string path = c.pack == packing::plain  ? dir.write(name, c.bytes)
                                 : c.pack == packing::gzip ? dir.compress(name + ".gz", c.bytes, "wg")
                                                           : dir.compress(name + ".gz", c.bytes, "w");
        const std::string message = bad_input_message([&] { read_all(path); });
        INFO(message);
        CHECK(starts_with(message, path + c.where + ": "));
        CHECK(contains(message, c.what));
        CHECK(message.find('\n') == std::string::npos);
    }
}

TEST_CASE("files that cannot be read are bad_input errors naming the file", "[input]") {
    temp_dir dir;
    const std::string fasta = dir.write("ok.fa", ">a\nAC\n");

    SECTION("missing file") {
        const std::string p = dir.path("missing.fa");
        const std::string m = bad_input_message([&] { read_all(p); });
        CHECK(starts_with(m, p + ": cannot open for reading: No such file or directory"));
    }
    SECTION("a directory") {
        const std::string m = bad_input_message([&] { read_all(dir.path("")); });
        CHECK(contains(m, ": is a directory; give a FASTA or FASTQ file"));
    }
    SECTION("a path through a regular file") {
        const std::string p = fasta + "/x.fa";
        const std::string m = bad_input_message([&] { read_all(p); });
        CHECK(starts_with(m, p + ": cannot open for reading: Not a directory"));
    }
    SECTION("an unreadable file") {
        if (::geteuid() == 0) return;  // root reads files without read permission
        const std::string p = dir.write("locked.fa", ">a\nAC\n");
        fs::permissions(p, fs::perms::none);
        const std::string m = bad_input_message([&] { read_all(p); });
        CHECK(starts_with(m, p + ": cannot open for reading: Permission denied"));
    }
    SECTION("truncated gzip") {
        const generated_fasta g = generate_fasta(3000, 100, 1);
        const std::string whole = read_bytes(dir.compress("whole.fa.gz", g.text, "wg"));
        const std::string p = dir.write("cut.fa.gz", whole.substr(0, whole.size() / 2));
        const std::string m = bad_input_message([&] { read_all(p); });
        INFO(m);
        // The cut lies in the middle of the file, so inside a record.
        CHECK(starts_with(m, p + ":seq"));
        CHECK(contains(m, "(record "));
        CHECK(contains(m, "the compressed data is truncated or corrupt"));
    }
    SECTION("bgzip without its end-of-file block") {
        const std::string whole = read_bytes(dir.compress("whole.fa.gz", ">a\nACGT\n", "w"));
        const std::string p = dir.write("cut.fa.gz", whole.substr(0, whole.size() - 28));
        const std::string m = bad_input_message([&] { read_all(p); });
        CHECK(starts_with(m, p + ": the bgzip file has no end-of-file block"));
    }
    SECTION("bgzip with a corrupt block") {
        const generated_fasta g = generate_fasta(200, 100, 2);
        std::string bytes = read_bytes(dir.compress("whole.fa.gz", g.text, "w"));
        for (std::size_t k = bytes.size() / 2; k < bytes.size() / 2 + 64; ++k) bytes[k] = static_cast<char>(~bytes[k]);
        const std::string p = dir.write("corrupt.fa.gz", bytes);
        const std::string m = bad_input_message([&] { read_all(p); });
        CHECK(starts_with(m, p));
        CHECK(contains(m, "truncated or corrupt"));
    }
}

TEST_CASE("skip_bad skips records with bad content and counts them", "[input]") {
    temp_dir dir;
    const std::string p =
        dir.write("mixed.fa", ">a\nAC\n>b\n12\n>\nMM\n>c\n\n>d\nAC-GT\n>e x\nWW\n>f\nAC\xC3\xA9\n>g\nK\n");
    std::vector<std::string> skipped;
    read_options opt;
    opt.skip_bad = true;
    opt.on_skip = [&](const std::string& m) { skipped.push_back(m); };
    sequence_reader r(p, opt);
    swgpu::sequence_set s;
    REQUIRE(r.read_chunk(s));
    CHECK(names_of(s) == std::vector<std::string>{"a", "e", "g"});
    CHECK(residues_of(s) == std::vector<std::string>{"AC", "WW", "K"});
    CHECK(r.records_read() == 3);
    CHECK(r.records_skipped() == 5);
    REQUIRE(skipped.size() == 5);
    CHECK(starts_with(skipped[0], p + ":b (record 2, line 4): digit '1'"));
    CHECK(starts_with(skipped[1], p + ":record 3 (line 5): the header has no name"));
    CHECK(starts_with(skipped[2], p + ":c (record 4, line 7): the record has no residues"));
    CHECK(starts_with(skipped[3], p + ":d (record 5, line 10): gap character '-'"));
    CHECK(starts_with(skipped[4], p + ":f (record 7, line 14): non-ASCII byte 0xC3"));
    CHECK_FALSE(r.read_chunk(s));

    SECTION("a file of bad records only is still an error") {
        const std::string all_bad = dir.write("bad.fa", ">a\n1\n>b\n-\n");
        const std::string m = bad_input_message([&] { read_all(all_bad, opt); });
        CHECK(starts_with(m, all_bad + ": every record (2) was bad and skipped"));
    }
    SECTION("structural errors are not skipped") {
        const std::string fq = dir.write("noplus.fq", "@r1\nACGT\nIIII\n@r2\nAC\n+\nII\n");
        const std::string m = bad_input_message([&] { read_all(fq, opt); });
        CHECK(starts_with(m, fq + ":r1 (record 1, line 4): "));
    }
}

TEST_CASE("unusual but valid FASTA and FASTQ are read exactly", "[input]") {
    temp_dir dir;
    SECTION("CRLF, lowercase, multi-line, no final newline") {
        const std::string p = dir.write("crlf.fa", ">sp|P1|X desc here\r\nmkv\r\nLLa\r\n>q2\r\nW");
        const auto s = read_all(p);
        CHECK(names_of(s) == std::vector<std::string>{"sp|P1|X", "q2"});
        CHECK(residues_of(s) == std::vector<std::string>{"mkvLLa", "W"});
        CHECK(s.source == p);
    }
    SECTION("one-residue records and stops") {
        const auto s = read_all(dir.write("one.fa", ">a\nM\n>b\n*\n>c\nmk*\n"));
        CHECK(names_of(s) == std::vector<std::string>{"a", "b", "c"});
        CHECK(residues_of(s) == std::vector<std::string>{"M", "*", "mk*"});
    }
    SECTION("very long header and very long line") {
        const std::string name(300, 'n');
        const std::string description(1 << 20, 'd');
        std::string residues;
        for (int k = 0; k < (1 << 20); ++k) residues += "ACDEFGHIKL"[k % 10];
        const auto s = read_all(dir.write("long.fa", ">" + name + " " + description + "\n" + residues + "\n>b\nW\n"));
        CHECK(names_of(s) == std::vector<std::string>{name, "b"});
        CHECK(residues_of(s) == std::vector<std::string>{residues, "W"});
    }
    SECTION("byte order mark, blank lines, spaces after '>', spaces in sequence lines, odd descriptions") {
        const std::string p = dir.write(
            "odd.fa", "\xEF\xBB\xBF\n\n>  id1\tdesc\nAC GT\n\n\nA\tC\n\n>id2 \x01other \xC3\xA9t\xC3\xA9\nMM\n");
        const auto s = read_all(p);
        CHECK(names_of(s) == std::vector<std::string>{"id1", "id2"});
        CHECK(residues_of(s) == std::vector<std::string>{"ACGTAC", "MM"});
    }
    SECTION("FASTQ: multi-line, '@' and '+' starting quality lines, CRLF, '+NAME'") {
        const std::string p =
            dir.write("odd.fq", "@r1 desc\r\nACGT\r\nAC\r\n+r1 desc\r\n@III\r\n+I\r\n@r2\nA\n+\n@\n\n@r3\nnnn\n+\n!!~");
        const auto s = read_all(p);
        CHECK(names_of(s) == std::vector<std::string>{"r1", "r2", "r3"});
        CHECK(residues_of(s) == std::vector<std::string>{"ACGTAC", "A", "nnn"});
    }
    SECTION("FASTA and FASTQ records in one file") {
        const auto s = read_all(dir.write("both.txt", ">a\nAC\n@b\nGT\n+\nII\n>c\nM\n"));
        CHECK(names_of(s) == std::vector<std::string>{"a", "b", "c"});
        CHECK(residues_of(s) == std::vector<std::string>{"AC", "GT", "M"});
    }
    SECTION("gzip, bgzip and concatenated gzip members read as the plain file") {
        const generated_fasta g = generate_fasta(1500, 120, 3);  // about 200 KB: several BGZF blocks
        for (const char* mode : {"wg", "w"}) {
            const auto s = read_all(dir.compress(std::string("g") + mode + ".fa.gz", g.text, mode));
            CHECK(names_of(s) == g.names);
            CHECK(residues_of(s) == g.residues);
        }
        const std::size_t half = g.text.find(">seq700 ");
        const std::string a = read_bytes(dir.compress("a.gz", g.text.substr(0, half), "wg"));
        const std::string b = read_bytes(dir.compress("b.gz", g.text.substr(half), "wg"));
        const auto s = read_all(dir.write("ab.fa.gz", a + b));
        CHECK(names_of(s) == g.names);
        CHECK(residues_of(s) == g.residues);
    }
    SECTION("\"-\" reads stdin, compressed or not") {
        const std::string p = dir.compress("in.fq.gz", "@r1\nACGT\n+\nIIII\n", "wg");
        const int saved = ::dup(0);
        const int fd = ::open(p.c_str(), O_RDONLY);
        REQUIRE((saved >= 0 && fd >= 0));
        ::dup2(fd, 0);
        ::close(fd);
        swgpu::sequence_set s;
        std::string failure;
        try {
            s = read_all("-");
        } catch (const std::exception& e) {
            failure = e.what();
        }
        ::dup2(saved, 0);
        ::close(saved);
        CHECK(failure.empty());
        CHECK(names_of(s) == std::vector<std::string>{"r1"});
        CHECK(residues_of(s) == std::vector<std::string>{"ACGT"});
        CHECK(s.source == "-");
    }
    SECTION("chunks of bounded size hold the same records as one read") {
        const generated_fasta g = generate_fasta(300, 50, 4);
        sequence_reader r(dir.write("chunks.fa", g.text));
        std::vector<std::string> names, residues;
        std::vector<std::uint64_t> chunk_residues;
        for (;;) {
            swgpu::sequence_set s;
            if (!r.read_chunk(s, 1000)) break;
            chunk_residues.push_back(s.total_residues());
            for (auto& n : names_of(s)) names.push_back(n);
            for (auto& x : residues_of(s)) residues.push_back(x);
        }
        CHECK(names == g.names);
        CHECK(residues == g.residues);
        CHECK(r.records_read() == 300);
        REQUIRE(chunk_residues.size() >= 15);
        // Every chunk but the last reaches the bound, and exceeds it by less than one record.
        for (std::size_t k = 0; k + 1 < chunk_residues.size(); ++k) {
            CHECK(chunk_residues[k] >= 1000);
            CHECK(chunk_residues[k] < 1000 + 57);
        }
    }
    SECTION("the bundled demo database") {
        // data/README.md: the first 1,000 records (483,479 residues) of the UniProtKB example database.
        const auto s = read_all(std::string(SWGPU_SOURCE_DIR) + "/data/demo_db.fa");
        CHECK(s.size() == 1000);
        CHECK(s.total_residues() == 483479);
    }
}

TEST_CASE("regions of indexed FASTA files through faidx", "[input]") {
    temp_dir dir;
    // Three sequences with lines of 60 residues (faidx needs equal line lengths within a sequence).
    const generated_fasta g = generate_fasta(3, 100000, 5);
    std::string text = g.text + ">odd:name\nMKVLA\n";

    SECTION("bgzip-compressed FASTA: .fai and .gzi are built, regions cross BGZF blocks") {
        const std::string p = dir.compress("genome.fa.gz", text, "w");
        auto s = read_region(p, "seq1:70001-70100");
        CHECK(names_of(s) == std::vector<std::string>{"seq1"});
        CHECK(s.origin(0).offset == 70000);
        CHECK(s.origin(0).full_length == g.residues[1].size());
        CHECK(residues_of(s) == std::vector<std::string>{g.residues[1].substr(70000, 100)});
        CHECK(fs::exists(p + ".fai"));
        CHECK(fs::exists(p + ".gzi"));
        // A region of 90,000 residues spans several 64 KiB blocks; read again with the index present.
        s = read_all(p + ":seq2:5001-95000");
        CHECK(names_of(s) == std::vector<std::string>{"seq2"});
        CHECK(s.origin(0).offset == 5000);
        CHECK(residues_of(s) == std::vector<std::string>{g.residues[2].substr(5000, 90000)});
    }
    SECTION("plain FASTA: whole sequence, to the end, clamped end, a name holding ':'") {
        const std::string p = dir.write("genome.fa", text);
        const std::size_t len0 = g.residues[0].size();
        CHECK(residues_of(read_all(p + ":seq0")) == std::vector<std::string>{g.residues[0]});
        CHECK(names_of(read_all(p + ":seq0")) == std::vector<std::string>{"seq0"});
        CHECK(read_all(p + ":seq0").origin(0).offset == 0);
        std::vector<std::string> warnings;
        read_options opt;
        opt.on_warning = [&](const std::string& m) { warnings.push_back(m); };
        auto s = read_all(p + ":seq0:99990", opt);
        CHECK(names_of(s) == std::vector<std::string>{"seq0"});
        CHECK(s.origin(0).offset == 99989);
        CHECK(s.origin(0).full_length == len0);
        CHECK(residues_of(s) == std::vector<std::string>{g.residues[0].substr(99989)});
        CHECK(warnings.empty());
        // An END past the sequence's end is read to the end, with one warning naming the region and the length.
        s = read_all(p + ":seq0:99995-200000", opt);
        CHECK(names_of(s) == std::vector<std::string>{"seq0"});
        CHECK(residues_of(s) == std::vector<std::string>{g.residues[0].substr(99994)});
        REQUIRE(warnings.size() == 1);
        CHECK(warnings[0] == p + ":seq0:99995-200000: the region ends past the end of seq0 (length " +
                                 std::to_string(len0) + "); reading 99995-" + std::to_string(len0));
        s = read_all(p + ":{odd:name}:2-4");
        CHECK(names_of(s) == std::vector<std::string>{"odd:name"});
        CHECK(s.origin(0).offset == 1);
        CHECK(s.origin(0).full_length == 5);
        CHECK(residues_of(s) == std::vector<std::string>{"KVL"});
        CHECK(names_of(read_all(p + ":odd:name")) == std::vector<std::string>{"odd:name"});
    }
    SECTION("parse_source: existing files win, then the longest existing prefix") {
        const std::string p = dir.write("genome.fa", text);
        const std::string colon_file = dir.write("a:b.fa", ">x\nAC\n");
        CHECK(parse_source(colon_file).path == colon_file);
        CHECK(parse_source(colon_file).region.empty());
        CHECK(parse_source(p + ":seq1:1-5").path == p);
        CHECK(parse_source(p + ":seq1:1-5").region == "seq1:1-5");
        CHECK(parse_source("-").path == "-");
        CHECK(parse_source(dir.path("nothing.fa:x:1-2")).path == dir.path("nothing.fa:x:1-2"));
        CHECK(residues_of(read_all(colon_file)) == std::vector<std::string>{"AC"});
    }
    SECTION("bad regions are bad_input errors naming file and region") {
        const std::string p = dir.write("genome.fa", text);
        std::string m = bad_input_message([&] { read_all(p + ":chrX:1-10"); });
        CHECK(starts_with(m, p + ":chrX:1-10: no such sequence in the index"));
        m = bad_input_message([&] { read_all(p + ":seq1:200000-200010"); });
        CHECK(starts_with(m, p + ":seq1:200000-200010: the region starts at 200000, after the end of seq1"));
        m = bad_input_message([&] { read_all(p + ":seq1:0-10"); });
        CHECK(starts_with(m, p + ":seq1:0-10: positions are 1-based"));
        m = bad_input_message([&] { read_region("-", "seq1:1-10"); });
        CHECK(starts_with(m, "stdin: a region (seq1:1-10) needs an indexed FASTA file"));
        const std::string gz = dir.compress("plain.fa.gz", text, "wg");
        m = bad_input_message([&] { read_all(gz + ":seq1:1-10"); });
        CHECK(starts_with(m, gz + ": is gzip-compressed, and regions need an uncompressed or bgzip"));
        const std::string ragged = dir.write("ragged.fa", ">a\nACGT\nAC\nACGT\n");
        m = bad_input_message([&] { read_all(ragged + ":a:1-3"); });
        CHECK(starts_with(m, ragged + ": cannot index the file for regions"));
        m = bad_input_message([&] { read_all(p + ":seq1:5-0"); });
        CHECK(starts_with(m, p + ":seq1:5-0: positions are 1-based: END must be at least 1"));
        // Found by fuzzing: a first sequence line without letters gave an index entry of 0 residues per line,
        // on which HTSlib 1.16's faidx_fetch_seq64 divides by zero.
        const std::string no_letters = dir.write("nul_line.fa", ">s\n\0\0\0\0\0\0\0\0\nACGTA\0\0T\nAC\n>t\nMM\n"s);
        m = bad_input_message([&] { read_all(no_letters + ":s:2-3"); });
        CHECK(starts_with(m, no_letters + ":s:2-3: the index entry of s is unusable"));
        CHECK(residues_of(read_all(no_letters + ":t")) == std::vector<std::string>{"MM"});
        const std::string digits = dir.write("digits.fa", ">a\nAC1GT\n");
        m = bad_input_message([&] { read_all(digits + ":a:2-4"); });
        CHECK(starts_with(m, digits + ":a:2-4: digit '1' at residue 2 is not a residue"));
    }
    SECTION("an index that cannot be written") {
        if (::geteuid() == 0) return;  // root writes into read-only directories
        const std::string sub = dir.path("ro");
        fs::create_directory(sub);
        const std::string p = sub + "/genome.fa";
        std::ofstream(p) << text;
        fs::permissions(sub, fs::perms::owner_read | fs::perms::owner_exec);
        const std::string m = bad_input_message([&] { read_all(p + ":seq1:1-10"); });
        CHECK(contains(m, "cannot be written there"));
    }
}

TEST_CASE("load_matrix: built-in names and NCBI matrix files", "[input]") {
    temp_dir dir;
    SECTION("built-in names, any case") {
        const auto b = load_matrix("blosum62");
        CHECK(b.name() == "BLOSUM62");
        CHECK(b.score(b.code('W'), b.code('W')) == 11);  // NCBI BLOSUM62: W/W = 11, A/A = 4, W/C = -2
        CHECK(b.score(b.code('A'), b.code('A')) == 4);
        CHECK(b.score(b.code('W'), b.code('C')) == -2);
        CHECK(load_matrix("EDNAFULL").name() == "NUC.4.4");
    }
    SECTION("a copy of a built-in matrix gets its name; other files are named by their path") {
        const std::string copy =
            dir.write("BLOSUM62", read_bytes(std::string(SWGPU_SOURCE_DIR) + "/data/matrices/BLOSUM62"));
        CHECK(load_matrix(copy).name() == "BLOSUM62");
        const std::string own =
            dir.write("mine.txt", "# a test matrix\r\n   a  c  *\r\nA  2 -1 -4\r\nc -1  3 -4\r\n*  -4 -4  1");
        const auto m = load_matrix(own);
        CHECK(m.name() == own);
        CHECK(m.letters() == "AC*");
        CHECK(m.score(m.code('A'), m.code('A')) == 2);
        CHECK(m.score(m.code('c'), m.code('A')) == -1);
        CHECK(m.score(m.code('C'), m.code('C')) == 3);
        CHECK(m.score(m.code('*'), m.code('*')) == 1);
        // A file named like a built-in matrix is read when the name has a '/'.
        const std::string shadow = dir.write("PAM30", "   A  C\nA  7 -1\nC -1  9\n");
        CHECK(load_matrix(shadow).letters() == "AC");
    }
}

TEST_CASE("broken matrix files are bad_input errors naming file and line", "[input]") {
    temp_dir dir;
    struct matrix_case {
        const char* label;
        std::string text;
        std::string where;  // after the file name
        std::string what;
    };
    std::string big(2 << 20, ' ');
    const std::vector<matrix_case> cases = {
        {"empty file", "", "", "the matrix file is empty"},
        {"whitespace only", " \n\t\n", "", "the matrix file is empty"},
        {"comments only", "# just a comment\n#another\n", "", "no matrix header row"},
        {"no header: rows first", "A  4 -1\nC -1  9\n", ":1",
         "matrix header must list single letters or '*', found '4'"},
        {"ragged row", "   A  C  G\nA  1  2  3\nC  1  2\nG  1  2  3\n", ":3", "row 'C' has 2 scores; the header has 3"},
        {"non-integer score", "   A  C\nA  1  x\nC  1  2\n", ":2", "'x' is not an integer score"},
        {"fractional score", "   A  C\nA  1  1.5\nC  1  2\n", ":2", "'1.5' is not an integer score"},
        {"duplicate header letter", "   A  C  a\nA  1 2 3\n", ":1", "letter 'A' appears twice in the matrix header"},
        {"duplicate row", "   A  C\nA  1 2\nA  1 2\nC 1 2\n", ":3", "row 'A' appears twice"},
        {"row letter not in the header", "   A  C\nA  1 2\nG  1 2\n", ":3",
         "row letter 'G' is not in the matrix header"},
        {"missing row", "   A  C\nA  1 2\n", "", "matrix has no row for letter 'C'"},
        {"score out of range", "   A  C\nA  1 200\nC  1 2\n", ":2", "score 200 is outside -127..127"},
        {"score overflowing int", "   A  C\nA  1 99999999999\nC  1 2\n", ":2", "is not an integer score"},
        {"digit as a header letter", "   A  1\nA  1 2\n1  1 2\n", ":1", "found '1'"},
        {"form feed line after the header", "   A  C\n\f\nA  1 2\nC 1 2\n", "", ""},
        {"NUL byte", "   A  C\nA  1\0 2\nC 1 2\n"s, ":2", "NUL byte in the matrix file"},
        {"binary junk", "\x89PNG\r\n\x1a\n\0\0\0\rIHDR"s, ":1", "byte 0x89 in the matrix file"},
        {"far too large", "   A\nA 1\n" + big, "", "far too large for a substitution matrix"},
    };
    for (std::size_t k = 0; k < cases.size(); ++k) {
        const matrix_case& c = cases[k];
        INFO(c.label);
        const std::string path = dir.write("matrix" + std::to_string(k) + ".txt", c.text);
        if (c.what.empty()) {  // valid after all: blank lines of any whitespace are skipped
            const auto m = load_matrix(path);
            CHECK(m.letters() == "AC");
            continue;
        }
        const std::string message = bad_input_message([&] { load_matrix(path); });
        INFO(message);
        CHECK(starts_with(message, path + c.where + ": "));
        CHECK(contains(message, c.what));
        CHECK(message.find('\n') == std::string::npos);
    }

    SECTION("parse_ncbi: lines of other whitespace are blank (found by fuzzing)") {
        // A lone vertical tab made a matrix of no letters; a form feed line after the header crashed the parser.
        const std::string m = bad_input_message([] { swgpu::substitution_matrix::parse_ncbi("\v", "t", "t.mat"); });
        CHECK(starts_with(m, "t.mat: no matrix header row"));
        const auto ok =
            swgpu::substitution_matrix::parse_ncbi("\f\n   A  C\n\v\nA  1 -2\n\f \nC -2  3\n", "t", "t.mat");
        CHECK(ok.letters() == "AC");
        CHECK(ok.score(ok.code('C'), ok.code('C')) == 3);
    }
    SECTION("missing file and directory") {
        const std::string p = dir.path("nothing/here.mat");
        std::string m = bad_input_message([&] { load_matrix(p); });
        CHECK(starts_with(m, p + ": cannot open the matrix file: No such file or directory"));
        CHECK(contains(m, "BLOSUM62"));  // the built-in names are offered
        m = bad_input_message([&] { load_matrix("NO_SUCH_MATRIX"); });
        CHECK(starts_with(m, "NO_SUCH_MATRIX: cannot open the matrix file"));
        m = bad_input_message([&] { load_matrix(dir.path("")); });
        CHECK(contains(m, "is a directory, not a matrix file"));
    }
}

TEST_CASE("FASTQ base qualities are kept per residue only where asked", "[input]") {
    temp_dir dir;
    // A FASTQ record whose sequence line holds a blank (dropped, and its quality with it), a FASTA record between two
    // FASTQ records, and a multi-line FASTQ record.
    const std::string path = dir.write("r.fq", "@r1\nAC GT\n+\nABCDE\n>f1\nGGG\n@r2\nTT\nA\n+\n#$\n%\n");
    read_options keep;
    keep.keep_qualities = true;
    const auto set = read_all(path, keep);
    REQUIRE(set.size() == 3);
    CHECK(std::string(set[0].begin(), set[0].end()) == "ACGT");
    CHECK(set.quality(0) == "ABDE");
    CHECK(set.quality(1).empty());
    CHECK(set.quality(2) == "#$%");
    CHECK(set.qualities.size() == set.total_residues());

    // Without keep_qualities (databases, formats other than SAM) nothing is stored.
    const auto plain = read_all(path);
    CHECK(plain.qualities.empty());
    CHECK(plain.quality(0).empty());
    // FASTA alone stores nothing either way.
    const auto fasta = read_all(dir.write("f.fa", ">a\nACGT\n"), keep);
    CHECK(fasta.qualities.empty());
}

namespace {

// Everything a reader gives, in order: each read_chunk's records (names, residues, origins), warnings, skips, counts,
// and the error that ends the reading, if any. Two readers that agree on this agree on everything.
std::string reading_transcript(const std::string& path, read_options opt, std::uint64_t chunk) {
    std::string t;
    opt.on_skip = [&t](const std::string& m) { t += "skip " + m + "\n"; };
    opt.on_warning = [&t](const std::string& m) { t += "warn " + m + "\n"; };
    try {
        sequence_reader r(path, opt);
        for (;;) {
            swgpu::sequence_set s;
            const bool got = r.read_chunk(s, chunk);
            t += "chunk " + std::to_string(got) + " of " + std::to_string(s.size()) + ", origins " +
                 std::to_string(s.origins.size()) + ", exhausted " + std::to_string(r.exhausted()) + ", read " +
                 std::to_string(r.records_read()) + ", skipped " + std::to_string(r.records_skipped()) + "\n";
            for (std::size_t k = 0; k < s.size(); ++k) {
                const auto& o = s.origin(k);
                t += s.names[k] + "\t" + std::string(s[k].begin(), s[k].end()) + "\t" + o.title + "\t" +
                     std::to_string(o.offset) + "\t" + std::to_string(o.full_length) + "\n";
            }
            if (!got) break;
        }
    } catch (const swgpu::error& e) {
        t += "error " + std::to_string(static_cast<int>(e.code())) + " " + e.what() + "\n";
    }
    return t;
}

std::string printable_for_test(const std::string& s) {
    std::string out;
    for (const char c : s) out += c == '\n' ? std::string("\\n") : c == '\r' ? std::string("\\r") : std::string(1, c);
    return out;
}

// Random FASTA with odd but valid content (CRLF, blank lines, blanks in sequence lines, long lines, lower case,
// headers with no id, tabs and trailing blanks, empty descriptions) and, at `bad` per mille of records, bad content
// (digits, gaps, non-ASCII and control bytes, empty records, headers with no name or a NUL byte). `odd` adds a rare
// line that only the sequential parser reads (a '@' line, a carriage return inside a header).
std::string random_fasta(std::mt19937& rng, int records, int bad, bool odd) {
    const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    static const char letters[] = "ACDEFGHIKLMNPQRSTVWYacgtnx*";
    std::string t;
    const bool crlf_file = pick(3) == 0;
    for (int r = 0; r < records; ++r) {
        const std::string eol = crlf_file || pick(20) == 0 ? "\r\n" : "\n";
        const bool is_bad = pick(1000) < bad;
        const int bad_kind = is_bad ? pick(6) : -1;
        std::string header = ">";
        if (pick(30) == 0) header += pick(2) ? " " : "\t";  // no id: the description's first word is the id
        if (bad_kind == 0) {
            header += pick(2) ? "" : "  ";  // no name at all
        } else {
            header += "r" + std::to_string(r);
            if (pick(2)) header += " desc " + std::to_string(pick(100000)) + (pick(4) ? "" : " \t ");
        }
        if (bad_kind == 1) header += std::string("x\0y", 3);
        if (odd && pick(400) == 0) header += "a\rb";
        t += header + eol;
        const int lines = bad_kind == 2 ? 0 : 1 + pick(5);
        const int width = pick(10) == 0 ? 700 + pick(3000) : 1 + pick(80);
        for (int l = 0; l < lines; ++l) {
            std::string line;
            for (int k = 0; k < width; ++k) line += letters[pick(sizeof letters - 1)];
            if (pick(15) == 0) line.insert(static_cast<std::size_t>(pick(static_cast<int>(line.size()) + 1)), pick(2) ? " " : "\t");
            if (bad_kind >= 3 && l == lines / 2) {
                const char bad_bytes[] = {'7', '-', '.', '\x01', '\xC3', '\0'};
                line.insert(static_cast<std::size_t>(pick(static_cast<int>(line.size()) + 1)), 1,
                            bad_bytes[pick(6)]);
            }
            t += line + eol;
            if (pick(25) == 0) t += pick(2) ? eol : "  " + eol;  // blank lines inside a record
        }
        if (odd && pick(500) == 0) t += "@not a header" + eol;
    }
    if (!t.empty() && pick(4) == 0) {  // no final line end
        while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
    }
    return t;
}

}  // namespace

TEST_CASE("the parallel parse reads exactly what the sequential parser reads", "[input]") {
    temp_dir dir;
    std::mt19937 rng(20261128);
    int compared = 0;
    for (int file = 0; file < 24; ++file) {
        const int bad = file % 3 == 0 ? 0 : file % 3 == 1 ? 3 : 40;
        const bool odd = file % 8 == 7;
        std::string text = random_fasta(rng, 400 + static_cast<int>(rng() % 1200), bad, odd);
        if (file == 5) text = "\xEF\xBB\xBF" + text;        // a byte order mark: the sequential parser reads it all
        if (file == 10) text = "\n  \n" + text;             // blank lines before the first header
        if (file == 11) text = "junk\n" + text;             // data before the first header
        const std::string plain = dir.write("r" + std::to_string(file) + ".fa", text);
        std::vector<std::string> paths = {plain};
        if (file % 4 == 1) paths.push_back(dir.compress("r" + std::to_string(file) + ".fa.gz", text, "wg"));
        if (file % 4 == 2) paths.push_back(dir.compress("r" + std::to_string(file) + ".fa.bgz", text, "w"));
        for (const auto& path : paths) {
            for (int variant = 0; variant < 4; ++variant) {
                read_options opt;
                opt.skip_bad = variant % 2 == 1;
                opt.keep_titles = variant != 2;
                opt.allow_empty = variant == 3;
                const std::uint64_t chunks[] = {0, 1, 5000, 1 + rng() % 100000};
                const std::uint64_t chunk = chunks[(file + variant) % 4];
                read_options sequential = opt;
                sequential.parallel = false;
                const std::string expected = reading_transcript(path, sequential, chunk);
                for (const std::size_t block : {std::size_t(1), std::size_t(37), std::size_t(1000 + rng() % 20000)}) {
                    read_options parallel = opt;
                    parallel.parse_block = block;
                    INFO("file " << path << ", skip_bad " << opt.skip_bad << ", titles " << opt.keep_titles
                                 << ", allow_empty " << opt.allow_empty << ", chunk " << chunk << ", block " << block);
                    REQUIRE(reading_transcript(path, parallel, chunk) == expected);
                    ++compared;
                }
            }
        }
    }
    CHECK(compared > 0);

    SECTION("hand-made cases at block boundaries") {
        const std::vector<std::string> cases = {
            ">a\nAC\n>b\nGT\n>c\nWW\n",
            ">a\r\nAC\r\n\r\n>b x\r\n\r\nGT",
            ">a\nAC\n>\nGT\n>c d\nWW\n",
            ">a\nAC\n>b\n\n>c\nW7\n>d\nMM\n",
            "> a\nAC\n>\tb\nGT\n> c\nWW\n",
            ">a\nAC\n@b\nGT\n+\nII\n>c\nWW\n",
            ">a\nAC\n>b\n>c\nWW\n",
            ">a\nAC\n>b c\rd\nGT\n",
            ">a\nA\n>b\nC",
            ">",
            ">a",
            "",
            "\n\n",
        };
        int n = 0;
        for (const auto& text : cases) {
            const std::string path = dir.write("hand" + std::to_string(n++) + ".fa", text);
            for (const bool skip : {false, true})
                for (const std::uint64_t chunk : {0, 1, 2}) {
                    read_options opt;
                    opt.skip_bad = skip;
                    read_options sequential = opt;
                    sequential.parallel = false;
                    const std::string expected = reading_transcript(path, sequential, chunk);
                    for (std::size_t block = 1; block <= text.size() + 1; ++block) {
                        read_options parallel = opt;
                        parallel.parse_block = block;
                        INFO("case " << printable_for_test(text) << ", skip_bad " << skip << ", chunk " << chunk
                                     << ", block " << block);
                        REQUIRE(reading_transcript(path, parallel, chunk) == expected);
                    }
                }
        }
    }

    SECTION("a late bad record in a file of many blocks and batches, with and without skip_bad") {
        std::mt19937 r2(7);
        std::string text = random_fasta(r2, 3000, 0, false);
        REQUIRE(text.size() > 3 * 65536);
        const std::size_t late = text.rfind("\n>", text.size() - 5000);
        REQUIRE(late != std::string::npos);
        const std::size_t line_end = text.find('\n', late + 1);
        text.insert(line_end + 3, "-");  // a gap character in the record's first sequence line
        const std::string path = dir.write("late.fa", text);
        for (const bool skip : {false, true}) {
            read_options opt;
            opt.skip_bad = skip;
            read_options sequential = opt;
            sequential.parallel = false;
            const std::string expected = reading_transcript(path, sequential, 20000);
            CHECK(contains(expected, skip ? "skip " : "error "));
            CHECK(contains(expected, "gap character '-'"));
            for (const std::size_t block : {std::size_t(100), std::size_t(4096), std::size_t(0)}) {
                read_options parallel = opt;
                parallel.parse_block = block;
                CHECK(reading_transcript(path, parallel, 20000) == expected);
            }
        }
    }

    SECTION("a compressed file that fails to decompress part way") {
        std::mt19937 r3(11);
        const std::string text = random_fasta(r3, 4000, 0, false);
        const std::string whole = read_bytes(dir.compress("whole.fa.gz", text, "wg"));
        REQUIRE(whole.size() > 1000);
        std::vector<std::string> broken;
        broken.push_back(dir.write("cut.fa.gz", whole.substr(0, whole.size() * 2 / 3)));
        std::string corrupt = whole;
        corrupt[corrupt.size() / 2] ^= 0x55;
        broken.push_back(dir.write("corrupt.fa.gz", corrupt));
        for (const auto& path : broken)
            for (const bool skip : {false, true}) {
                read_options opt;
                opt.skip_bad = skip;
                read_options sequential = opt;
                sequential.parallel = false;
                const std::string expected = reading_transcript(path, sequential, 30000);
                CHECK(contains(expected, "error "));
                for (const std::size_t block : {std::size_t(50), std::size_t(3000), std::size_t(0)}) {
                    read_options parallel = opt;
                    parallel.parse_block = block;
                    INFO(path << ", block " << block);
                    CHECK(reading_transcript(path, parallel, 30000) == expected);
                }
            }
    }
}
