#include "io/align/sequence_reader.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <span>
#include <string_view>
#include <vector>

#include <htslib/bgzf.h>
#include <htslib/faidx.h>
#include <htslib/hts_log.h>
#include <htslib/kstring.h>
#include <htslib/kseq.h>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "io/align/database_file.hpp"
#include "io/align/fasta_blocks.hpp"

namespace swgpu::io {

namespace {

using namespace fasta_blocks;

// The byte source under kstream. kstream keeps the count returned by its read hook in an int and treats anything but
// 0 as data, so the -1 that bgzf_read returns for a truncated or corrupt stream would make it loop forever. The hook
// reports such a failure as end of input and remembers it; the reader checks `failed` after every line.
struct bgzf_source {
    BGZF* fp = nullptr;
    bool failed = false;
    int read_errno = 0;  // where the file itself could not be read (an I/O error, not bad compressed data): errno
    // Bytes the parallel parse read ahead and left to the sequential parser: delivered before the file's next bytes.
    std::string prefix;
    std::size_t prefix_at = 0;
    bool failed_after_prefix = false;  // the read after the prefix failed: `failed` once the prefix is delivered
};

int read_bgzf(bgzf_source* src, void* buf, int len) {
    if (src->prefix_at < src->prefix.size()) {
        const std::size_t n = std::min(static_cast<std::size_t>(len), src->prefix.size() - src->prefix_at);
        std::memcpy(buf, src->prefix.data() + src->prefix_at, n);
        src->prefix_at += n;
        if (src->prefix_at == src->prefix.size()) {
            std::string().swap(src->prefix);
            src->prefix_at = 0;
        }
        return static_cast<int>(n);
    }
    if (src->failed_after_prefix) {
        src->failed_after_prefix = false;
        src->failed = true;
    }
    if (src->failed) return 0;
    errno = 0;
    const ssize_t n = bgzf_read(src->fp, buf, static_cast<std::size_t>(len));
    if (n < 0) {
        src->failed = true;
        if ((src->fp->errcode & BGZF_ERR_IO) && errno != 0) src->read_errno = errno;
        return 0;
    }
    return static_cast<int>(n);
}

// kstream's buffer: every read of the file asks for this many bytes, so the parallel parse reads in the same steps
// (a failed read loses the same bytes).
constexpr int read_step = 65536;

// In this unnamed namespace, kstream_t and its functions are private to this file.
KSTREAM_INIT(bgzf_source*, read_bgzf, read_step)

// HTSlib reports its own errors on stderr ("[E::bgzf_read] ..."); ours say the same with file and record, in one line.
// The log level is process-wide, so it is lowered only while this file's HTSlib calls run.
class quiet_htslib {
public:
    quiet_htslib() : saved_(hts_get_log_level()) { hts_set_log_level(HTS_LOG_OFF); }
    ~quiet_htslib() { hts_set_log_level(saved_); }
    quiet_htslib(const quiet_htslib&) = delete;
    quiet_htslib& operator=(const quiet_htslib&) = delete;

private:
    htsLogLevel saved_;
};

std::span<const std::uint8_t> as_span(const std::string& s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

bool file_exists(const std::string& path) {
    struct stat st{};
    return ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

// True when `a` was modified before `b` (both exist).
bool older_than(const std::string& a, const std::string& b) {
    struct stat sa{}, sb{};
    if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
    if (sa.st_mtim.tv_sec != sb.st_mtim.tv_sec) return sa.st_mtim.tv_sec < sb.st_mtim.tv_sec;
    return sa.st_mtim.tv_nsec < sb.st_mtim.tv_nsec;
}

// HTSlib 1.16's faidx_fetch_seq64 divides by a sequence's residues per line, which fai_build3 records as 0 when the
// first line of a sequence holds no letter (NUL bytes, for instance): check the index entry before fetching.
// The .fai columns are NAME, LENGTH, OFFSET, LINEBASES, LINEWIDTH (FASTQ indexes add QUALOFFSET).
bool fai_entry_usable(const std::string& fai_path, const std::string& name) {
    std::ifstream in(fai_path);
    std::string line;
    while (std::getline(in, line)) {
        const auto tab = line.find('\t');
        if (tab == std::string::npos || std::string_view(line).substr(0, tab) != name) continue;
        long long length = 0, offset = 0, bases = 0, width = 0;
        return std::sscanf(line.c_str() + tab + 1, "%lld\t%lld\t%lld\t%lld", &length, &offset, &bases, &width) == 4 &&
               length >= 0 && offset >= 0 && bases > 0 && width >= bases;
    }
    return false;
}

std::string directory_of(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

// Errors of the file as a whole (it cannot be opened, is a directory, ...).
void check_openable(const std::string& path, const std::string& shown) {
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        throw input_error(shown, "is a directory; give a FASTA or FASTQ file");
}

std::string open_failure(int err) {
    // Opening reads the first block (to tell plain from compressed data): EIO there is the device, not the path.
    if (err == EIO) return std::string("read failed before the first line (") + std::strerror(err) + ")";
    return std::string("cannot open for reading: ") + (err ? std::strerror(err) : "unknown error") +
           "; check the path and its permissions";
}

// Regions HTSlib would misread or take long over: a NUL byte (it reads a C string: cut short, to an empty name say)
// and positions with an exponent ("1e5", multiplied out one power of ten at a time: "chr1:1E6666666666" took 5 s,
// larger ones longer). Positions are plain integers here; a sequence named like that is still a name.
void refuse_unreadable(const std::string& region, const faidx_t* fai, const std::string& where) {
    if (region.find('\0') != std::string::npos) throw input_error(where, "the region holds a NUL byte");
    const auto colon = region.rfind(':');
    if (colon == std::string::npos || faidx_has_seq(fai, region.c_str())) return;
    const std::string tail = region.substr(colon + 1);
    // A number HTSlib would read with an exponent: digits (and commas), then 'e' or 'E', at BEG or END.
    const auto exponent_after = [&tail](std::size_t at) {
        const std::size_t digits_end = std::min(tail.find_first_not_of("0123456789,", at), tail.size());
        return digits_end > at && digits_end < tail.size() && (tail[digits_end] == 'e' || tail[digits_end] == 'E');
    };
    const std::size_t dash = tail.find('-');
    if (exponent_after(0) || (dash != std::string::npos && exponent_after(dash + 1)))
        throw input_error(where, "positions are plain integers (1-based, commas allowed, no exponent): write NAME:BEG "
                                 "or NAME:BEG-END");
}

}  // namespace

sequence_source parse_source(const std::string& spec) {
    if (spec == "-" || file_exists(spec)) return {spec, ""};
    for (auto colon = spec.rfind(':'); colon != std::string::npos && colon > 0; colon = spec.rfind(':', colon - 1)) {
        const std::string prefix = spec.substr(0, colon);
        if (file_exists(prefix)) return {prefix, spec.substr(colon + 1)};
    }
    return {spec, ""};
}

std::vector<std::string> index_files(const sequence_source& source) {
    if (source.region.empty() || source.path == "-") return {};
    std::vector<std::string> out = {source.path + ".fai"};
    if (BGZF* probe = bgzf_open(source.path.c_str(), "r")) {
        if (bgzf_compression(probe) == 2) out.push_back(source.path + ".gzi");
        bgzf_close(probe);
    }
    return out;
}

struct sequence_reader::impl {
    std::string path;   // as given ("-" for stdin)
    std::string shown;  // the file in messages
    read_options opt;

    // Reading a whole file: BGZF under kstream, one line at a time with one line of lookahead.
    bgzf_source src;
    kstream_t* ks = nullptr;
    kstring_t line{0, 0, nullptr};
    std::uint64_t line_no = 0;
    bool pending = false;  // `line` holds a line that was read but not consumed (a header that ended a record)
    bool at_end = false;

    // Reading a region: the one record, fetched when the reader is made.
    bool region_mode = false;
    bool region_done = false;
    std::string region_name;
    record_origin region_origin;  // where the region lies in its sequence

    std::string name, residues;  // the record being read
    std::string title;           // its header after the marker, trailing blanks dropped
    std::string raw, quality;    // with keep_qualities, a FASTQ record's sequence lines and quality lines as read
    std::uint64_t records_seen = 0, added = 0, skipped = 0;
    std::uint64_t without_id = 0;  // headers where '>' or '@' is followed by a blank
    bool reported_without_id = false;
    bool in_record = false;  // a header was read and its record is not complete

    enum class outcome { record, bad, end };

    // The parallel parse of a whole file (see the header): batches of bytes read in kstream's steps, cut into blocks
    // of whole records parsed on the reader threads, their records handed out in order. `fast` until a block is left
    // to the sequential parser, which then reads the rest of the file.
    bool fast = false;
    std::size_t block_bytes = 0;
    std::size_t batch_bytes = 0;
    byte_buffer batch;
    std::size_t batch_tail = 0;  // the blocks cover [0, batch_tail); the rest starts the next batch
    bool batch_ended = false;    // the file's end, or a failed read, is in the batch
    bool first_batch = true;
    std::vector<fast_block> blocks;
    std::vector<fast_block> spare;  // the storage of blocks handed out, for the next batch's
    std::size_t block_at = 0, record_at = 0, residue_at = 0;
    fast_record* fast_current = nullptr;  // the record next_fast returned, and its residues
    std::span<const std::uint8_t> fast_residues;

    ~impl() {
        if (ks) ks_destroy(ks);
        if (src.fp) bgzf_close(src.fp);
        std::free(line.s);
    }

    std::string where_of(std::string_view record_name, std::uint64_t record, std::uint64_t at_line) const {
        std::string where = shown + ":";
        if (!record_name.empty())
            where += printable(record_name) + " (record " + std::to_string(record) + ", line ";
        else
            where += "record " + std::to_string(record) + " (line ";
        return where + std::to_string(at_line) + ")";
    }
    std::string record_where(std::uint64_t at_line) const { return where_of(name, records_seen, at_line); }

    // The read that failed filled kstream's buffer ahead of the parser, so the failure is known to lie after the
    // last complete line, not on a particular line.
    [[noreturn]] void read_failed() const {
        const std::string what = (line_no ? "read failed after line " + std::to_string(line_no)
                                          : std::string("read failed before the first line")) +
                                 (src.read_errno ? " (" + std::string(std::strerror(src.read_errno)) + ")"
                                                 : std::string(": the compressed data is truncated or corrupt, or the "
                                                               "device reported an error; re-create or re-download "
                                                               "the file"));
        if (!in_record) throw input_error(shown, what);
        std::string where = shown + ":";
        where += name.empty() ? "record " + std::to_string(records_seen) : printable(name) + " (record " +
                                                                               std::to_string(records_seen) + ")";
        throw input_error(where, what);
    }

    void open_file() {
        if (path == "-") {
            const int fd = ::dup(0);
            if (fd < 0 || !(src.fp = bgzf_dopen(fd, "r"))) {
                const int err = errno;
                if (fd >= 0) ::close(fd);
                throw input_error(shown, open_failure(err));
            }
        } else {
            check_openable(path, shown);
            errno = 0;
            src.fp = bgzf_open(path.c_str(), "r");
            if (!src.fp) throw input_error(shown, open_failure(errno));
            // A bgzip file cut at a block boundary decompresses without error; only the missing end-of-file block
            // shows that records were lost.
            if (bgzf_compression(src.fp) == 2 && bgzf_check_EOF(src.fp) == 0)
                throw input_error(shown, "the bgzip file has no end-of-file block: it is truncated; re-create or "
                                         "re-download it");
            struct stat st{};
            if (opt.parallel && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
                fast = true;
                block_bytes = opt.parse_block ? opt.parse_block : std::size_t(4) << 20;
                batch_bytes = block_bytes * 2 * reader_threads();
                return;
            }
        }
        ks = ks_init(&src);
    }

    // Reads the next batch and parses its blocks; false at the end of the file.
    bool load_batch() {
        batch.drop_front(batch_tail);
        batch_tail = 0;
        blocks.clear();
        block_at = record_at = residue_at = 0;
        // The last record start whose header line is whole in the batch: the record before it is complete there (the
        // sequential parser ends a record when it has read the next header line).
        const auto last_whole = [this] {
            const void* nl = memrchr(batch.data.get(), '\n', batch.size);
            return nl ? last_record_start(batch.data.get(),
                                          static_cast<std::size_t>(static_cast<const char*>(nl) - batch.data.get()) + 1)
                      : std::size_t(0);
        };
        std::size_t want = batch_bytes, cut = 0;
        batch.reserve(want + read_step);
        bool rest_sequential = false;  // the sequential parser reads from `cut` on
        for (;;) {
            while (!batch_ended && batch.size < want) {
                batch.reserve(batch.size + read_step);
                const int got = read_bgzf(&src, batch.data.get() + batch.size, read_step);
                if (got <= 0) {
                    batch_ended = true;
                    // Known to the sequential parser only when it has read the bytes before (read_sequentially_from).
                    std::swap(src.failed, src.failed_after_prefix);
                } else {
                    batch.size += static_cast<std::size_t>(got);
                }
            }
            if (first_batch && batch.size > 0 && batch.data[0] != '>') {  // not FASTA as this parse reads it
                rest_sequential = true;
                break;
            }
            if (batch_ended) {
                if (src.failed_after_prefix) {  // what the sequential parser reports depends on where it stops
                    cut = last_whole();
                    rest_sequential = true;
                } else {
                    cut = batch.size;
                }
                break;
            }
            cut = last_whole();
            if (cut > 0) break;
            if (batch.size >= 4 * batch_bytes) {  // one record this long: no parallel parse to gain, memory to lose
                rest_sequential = true;
                break;
            }
            want = std::max(want, batch.size) * 2;
        }
        const char* data = batch.data.get();
        const std::size_t pieces = std::max<std::size_t>(1, cut / block_bytes);
        for (std::size_t k = 0, begin = 0; begin < cut; ++k) {
            const std::size_t end =
                k + 1 >= pieces ? cut : next_record_start(data, std::max(begin + 1, cut / pieces * (k + 1)), cut);
            blocks.push_back(fast_block::of(begin, end));
            if (!spare.empty()) {  // storage of a block read before: no new pages to fault in
                blocks.back().residues = std::move(spare.back().residues);
                blocks.back().records = std::move(spare.back().records);
                spare.pop_back();
            }
            begin = end;
        }
        if (rest_sequential) blocks.push_back(fast_block::of(cut, batch.size, true));
        first_batch = false;
        batch_tail = rest_sequential || batch_ended ? batch.size : cut;
        if (blocks.empty()) return false;
        const auto parse = [&](std::size_t k) {
            fast_block& b = blocks[k];
            if (!b.sequential) parse_block(std::string_view(data + b.begin, b.end - b.begin), opt, b);
        };
        if (blocks.size() == 1) parse(0);
        else reader_pool().parallel_for(blocks.size(), parse);
        return true;
    }

    // From here on the sequential parser reads the file, from byte `from` of the batch.
    void read_sequentially_from(std::size_t from) {
        src.prefix.assign(batch.data.get() + from, batch.size - from);
        src.prefix_at = 0;
        batch.release();
        blocks = {};
        spare = {};
        fast = false;
        fast_current = nullptr;
        ks = ks_init(&src);
    }

    // The next record of the parallel parse, as parse_record returns it: a good one is fast_current.
    outcome next_fast(std::string& problem) {
        fast_current = nullptr;
        for (;;) {
            if (block_at == blocks.size()) {
                if (!load_batch()) return outcome::end;
                continue;
            }
            fast_block& b = blocks[block_at];
            if (b.sequential) {
                read_sequentially_from(b.begin);
                return parse_record(problem);
            }
            if (record_at == b.records.size()) {
                line_no += b.lines;
                b.residues.clear();
                b.records.clear();
                spare.push_back(std::move(b));
                ++block_at;
                record_at = residue_at = 0;
                continue;
            }
            fast_record& f = b.records[record_at++];
            ++records_seen;
            const std::uint64_t first = residue_at;
            residue_at = f.residues_end;
            if (f.no_id && ++without_id == 1 && opt.on_warning)
                opt.on_warning(where_of(f.name, records_seen, line_no + f.header_line) + no_id_warning('>'));
            if (record_at == b.records.size()) name = f.name;  // as the sequential parser has it, should it take over
            if (f.bad) {
                problem = where_of(f.name, records_seen, line_no + f.problem_line) + ": " + f.problem;
                return outcome::bad;
            }
            fast_current = &f;
            fast_residues = {reinterpret_cast<const std::uint8_t*>(b.residues.data()) + first,
                             static_cast<std::size_t>(f.residues_end - first)};
            return outcome::record;
        }
    }

    bool next_line() {
        if (pending) {
            pending = false;
            return true;
        }
        const int r = ks_getuntil(ks, KS_SEP_LINE, &line, nullptr);
        if (src.failed) read_failed();
        // ks_getuntil returns the length as an int; only "no data at end of input" is -1 with nothing read.
        if (r < 0 && line.l == 0) return false;
        ++line_no;
        while (line.l > 0 && line.s[line.l - 1] == '\r') --line.l;
        if (line_no == 1 && line.l >= 3 && std::memcmp(line.s, "\xEF\xBB\xBF", 3) == 0) {  // UTF-8 byte order mark
            std::memmove(line.s, line.s + 3, line.l - 3);
            line.l -= 3;
        }
        return true;
    }

    std::string_view current() const { return {line.s ? line.s : "", line.l}; }

    bool blank() const {
        for (std::size_t k = 0; k < line.l; ++k)
            if (line.s[k] != ' ' && line.s[k] != '\t') return false;
        return true;
    }

    // A problem with the record's content: fatal unless skip_bad; with skip_bad the first one is kept and the rest of
    // the record is consumed.
    void content_problem(std::string& problem, std::uint64_t at_line, const std::string& what) const {
        if (!opt.skip_bad) throw input_error(record_where(at_line), what);
        if (problem.empty()) problem = record_where(at_line) + ": " + what;
    }

    // Appends the residues of the current line to `residues`.
    void append_residues(std::string& problem) {
        if (!problem.empty()) return;
        const auto* s = reinterpret_cast<const unsigned char*>(line.s);
        for (std::size_t k = 0; k < line.l; ++k) {
            switch (byte_kinds[s[k]]) {
                case byte_kind::residue: residues.push_back(static_cast<char>(s[k])); break;
                case byte_kind::dropped: break;
                case byte_kind::invalid:
                    content_problem(problem, line_no,
                                    invalid_residue(s[k], " at column " + std::to_string(k + 1)));
                    return;
            }
        }
    }

    // The qualities of the residues kept: a blank dropped from the sequence lines drops its quality too.
    void keep_residue_qualities() {
        if (raw.size() == residues.size()) return;
        std::size_t kept = 0;
        for (std::size_t k = 0; k < raw.size(); ++k)
            if (byte_kinds[static_cast<unsigned char>(raw[k])] == byte_kind::residue) quality[kept++] = quality[k];
        quality.resize(kept);
    }

    // The header line: the record's name and title, and what is wrong with it.
    void take_header(std::string_view header, std::uint64_t header_line, std::string& problem) {
        std::size_t b = 1;
        while (b < header.size() && is_space(static_cast<unsigned char>(header[b]))) ++b;
        std::size_t e = b;
        while (e < header.size() && !is_space(static_cast<unsigned char>(header[e]))) ++e;
        name.assign(header.substr(b, e - b));
        std::size_t t = header.size();
        while (t > e && is_space(static_cast<unsigned char>(header[t - 1]))) --t;
        title.assign(header.substr(b, t - b));
        if (b > 1 && !name.empty() && ++without_id == 1 && opt.on_warning)
            opt.on_warning(record_where(header_line) + no_id_warning(header[0]));
        if (header.find('\r') != std::string_view::npos)
            throw input_error(record_where(header_line),
                              "the header holds a carriage return: the file has old Mac (CR-only) line ends; convert "
                              "them with tr '\\r' '\\n'");
        if (header.find('\0') != std::string_view::npos)
            content_problem(problem, header_line, "NUL byte in the header: the file is binary or corrupt");
        if (name.empty())
            content_problem(problem, header_line,
                            std::string("the header has no name; write one right after '") + header[0] + "'");

    }

    // The sequence lines up to the next header (FASTA) or the '+' line (FASTQ); returns their characters, which a
    // FASTQ quality must match.
    std::uint64_t read_sequence_lines(bool fastq, std::string& problem) {
        std::uint64_t sequence_chars = 0;
        for (;;) {
            if (!next_line()) {
                if (fastq)
                    throw input_error(record_where(line_no),
                                      "the FASTQ record ends without a '+' line: a FASTQ record is a '@NAME' line, "
                                      "sequence, a '+' line and a quality of the same length");
                break;
            }
            const std::string_view l = current();
            if (!l.empty() && (l[0] == '>' || l[0] == '@')) {
                if (fastq)
                    throw input_error(record_where(line_no),
                                      "'" + printable(l, 30) +
                                          "' comes before this FASTQ record's '+' line: a FASTQ record is a '@NAME' "
                                          "line, sequence, a '+' line and a quality of the same length");
                pending = true;
                break;
            }
            if (fastq && !l.empty() && l[0] == '+') break;
            sequence_chars += l.size();
            if (fastq && opt.keep_qualities) raw += l;
            append_residues(problem);
        }
        return sequence_chars;
    }

    // A FASTQ record's quality lines, as many characters as the sequence had.
    void read_quality(std::uint64_t sequence_chars, std::string& problem) {
        std::uint64_t quality_chars = 0, quality_lines = 0;
        while (quality_chars < sequence_chars) {
            if (!next_line())
                throw input_error(record_where(line_no),
                                  "the quality ends after " + std::to_string(quality_chars) +
                                      " characters at the end of the input, but the sequence has " +
                                      std::to_string(sequence_chars) +
                                      ": the file is truncated or the quality is missing");
            ++quality_lines;
            const std::string_view q = current();
            for (std::size_t k = 0; k < q.size(); ++k)
                if (q[k] < '!' || q[k] > '~') {
                    const auto c = static_cast<unsigned char>(q[k]);
                    content_problem(problem, line_no,
                                    "quality character " +
                                        (c > ' ' && c < 0x7f ? "'" + std::string(1, q[k]) + "'" : hex_byte(c)) +
                                        " at column " + std::to_string(k + 1) +
                                        " is outside '!'..'~' (Phred+33)");
                    break;
                }
            quality_chars += q.size();
            if (opt.keep_qualities) quality += q;
        }
        if (quality_chars != sequence_chars)
            throw input_error(record_where(line_no),
                              "the quality has " + std::to_string(quality_chars) + " characters over " +
                                  std::to_string(quality_lines) + " line(s), the sequence " +
                                  std::to_string(sequence_chars) +
                                  ": a quality line is too short or too long, or a line is missing");
    }

    outcome parse_record(std::string& problem) {
        // `name` keeps the previous record's name until the next header: a line that should have been a header is
        // reported against the record it follows.
        problem.clear();
        residues.clear();
        raw.clear();
        quality.clear();
        in_record = false;
        do {
            if (!next_line()) return outcome::end;
        } while (blank());
        const std::string_view header = current();
        if (header[0] != '>' && header[0] != '@') {
            if (records_seen == 0) throw input_error(shown + ":line " + std::to_string(line_no), leading_junk(header));
            throw input_error(record_where(line_no),
                              "'" + printable(header, 30) +
                                  "' follows the quality of this FASTQ record where the next header ('@' or '>') "
                                  "should be: is the quality longer than the sequence?");
        }
        ++records_seen;
        in_record = true;
        const bool fastq = header[0] == '@';
        const std::uint64_t header_line = line_no;
        take_header(header, header_line, problem);
        const std::uint64_t sequence_chars = read_sequence_lines(fastq, problem);
        if (fastq) read_quality(sequence_chars, problem);

        if (problem.empty() && residues.empty() && !opt.allow_empty)
            content_problem(problem, header_line, no_residues);
        if (fastq && opt.keep_qualities && problem.empty()) keep_residue_qualities();
        in_record = false;
        return problem.empty() ? outcome::record : outcome::bad;
    }

    void open_region(const std::string& region) {
        if (path == "-")
            throw input_error("stdin", "a region (" + printable(region) +
                                           ") needs an indexed FASTA file; stdin cannot be indexed");
        check_openable(path, shown);
        errno = 0;
        BGZF* probe = bgzf_open(path.c_str(), "r");
        if (!probe) throw input_error(shown, open_failure(errno));
        const int compression = bgzf_compression(probe);
        bgzf_close(probe);
        if (compression == 1)
            throw input_error(shown, "is gzip-compressed, and regions need an uncompressed or bgzip-compressed FASTA "
                                     "file: recompress it with gzip -dc FILE | bgzip > FILE.bgz");

        const std::string fai_path = path + ".fai", gzi_path = path + ".gzi";
        const bool need_index = !file_exists(fai_path) || older_than(fai_path, path) ||
                                (compression == 2 && (!file_exists(gzi_path) || older_than(gzi_path, path)));
        if (need_index && fai_build3(path.c_str(), nullptr, nullptr) != 0) {
            const std::string index = compression == 2 ? fai_path + " and " + gzi_path : fai_path;
            if (::access(directory_of(path).c_str(), W_OK) != 0)
                throw input_error(shown, "regions need the index " + index +
                                             ", which is missing or older than the file and cannot be written there "
                                             "(directory not writable); index a writable copy with samtools faidx");
            throw input_error(shown, "cannot index the file for regions: faidx needs FASTA in which every line of a "
                                     "sequence but its last has the same length and records have no blank lines; "
                                     "samtools faidx FILE shows the first problem");
        }
        faidx_t* fai = fai_load3(path.c_str(), nullptr, nullptr, 0);
        if (!fai)
            throw input_error(shown, "cannot load the index " + fai_path + "; delete it (and any .gzi) to rebuild it");
        struct fai_closer {
            faidx_t* f;
            ~fai_closer() { fai_destroy(f); }
        } closer{fai};

        const std::string where = shown + ":" + printable(region);
        refuse_unreadable(region, fai, where);
        int tid = -1;
        hts_pos_t beg = 0, end = 0;
        const char* rest = fai_parse_region(fai, region.c_str(), &tid, &beg, &end, 0);
        if (!rest || *rest != '\0' || tid < 0 || tid >= faidx_nseq(fai)) {
            const int count = faidx_nseq(fai);
            const std::string example = count > 0 ? std::string(", e.g. ") + printable(faidx_iseq(fai, 0)) : "";
            throw input_error(where, "no such sequence in the index, or not a region: write NAME, NAME:BEG or "
                                     "NAME:BEG-END (1-based, inclusive, BEG <= END; {NAME}:BEG-END when NAME holds "
                                     "':'); the file has " + std::to_string(count) + " sequence(s)" + example);
        }
        if (beg < 0) throw input_error(where, "positions are 1-based: BEG must be at least 1");
        // HTSlib reads an END of 0 as "to the end of the sequence"; here it is the typo it almost always is.
        const auto colon = region.rfind(':'), dash = region.rfind('-');
        const bool end_given = colon != std::string::npos && dash != std::string::npos && dash > colon &&
                               dash + 1 < region.size();  // NAME:BEG-END (NAME and NAME:BEG read to the end)
        if (end_given && region.find_first_not_of('0', dash + 1) == std::string::npos)
            throw input_error(where, "positions are 1-based: END must be at least 1 (leave END out to read to the "
                                     "end of the sequence)");
        const char* seq_name = faidx_iseq(fai, tid);
        // faidx indexes a header of no name ('>' alone) under the empty name, which "{}" selects; read whole, such a
        // record is refused, and so it is here.
        if (*seq_name == '\0')
            throw input_error(where, "the sequence's header has no name; write one right after '>'");
        const hts_pos_t length = faidx_seq_len(fai, seq_name);
        if (beg >= length)
            throw input_error(where, "the region starts at " + std::to_string(beg + 1) + ", after the end of " +
                                         printable(seq_name) + " (length " + std::to_string(length) + ")");
        if (end > length) {
            if (end_given && opt.on_warning)
                opt.on_warning(where + ": the region ends past the end of " + printable(seq_name) + " (length " +
                               std::to_string(length) + "); reading " + std::to_string(beg + 1) + "-" +
                               std::to_string(length));
            end = length;
        }
        if (end <= beg) throw input_error(where, "the region is empty: BEG must not exceed END");
        if (!fai_entry_usable(fai_path, seq_name))
            throw input_error(where, "the index entry of " + printable(seq_name) +
                                         " is unusable: a line of the sequence holds no residues; fix the FASTA (or "
                                         "delete " + fai_path + " if it is stale)");
        hts_pos_t got = 0;
        char* fetched = faidx_fetch_seq64(fai, seq_name, beg, end - 1, &got);
        if (!fetched || got != end - beg) {
            std::free(fetched);
            throw input_error(where, "cannot read the region: the file is truncated or changed after indexing; "
                                     "delete " + fai_path + " to rebuild the index");
        }
        residues.assign(fetched, static_cast<std::size_t>(got));
        std::free(fetched);

        // Named for its sequence, in whose coordinates output prints it (BLAST's -subject_loc, SAM's @SQ).
        region_name = seq_name;
        region_origin = {std::string(), static_cast<std::uint64_t>(beg), static_cast<std::uint64_t>(length)};
        name = region_name;
        records_seen = 1;
        for (std::size_t k = 0; k < residues.size(); ++k) {
            const auto c = static_cast<unsigned char>(residues[k]);
            if (byte_kinds[c] != byte_kind::residue)
                throw input_error(where, invalid_residue(c, " at residue " + std::to_string(k + 1)));
        }
        region_mode = true;
    }
};

sequence_reader::sequence_reader(const std::string& spec, read_options opt)
    : sequence_reader(parse_source(spec), std::move(opt)) {}

sequence_reader::sequence_reader(const sequence_source& source, read_options opt) : p_(std::make_unique<impl>()) {
    quiet_htslib quiet;
    p_->path = source.path;
    p_->shown = source.path == "-" ? "stdin" : printable(source.path, 200);
    p_->opt = std::move(opt);
    if (source.region.empty())
        p_->open_file();
    else
        p_->open_region(source.region);
}

sequence_reader::~sequence_reader() = default;

bool sequence_reader::exhausted() const { return p_->region_mode ? p_->region_done : p_->at_end; }

bool sequence_reader::read_chunk(sequence_set& out, std::uint64_t max_residues) {
    quiet_htslib quiet;
    impl& r = *p_;
    if (out.source.empty()) out.source = r.path;
    if (r.region_mode) {
        if (r.region_done) return false;
        out.add(r.region_name, as_span(r.residues), r.region_origin);
        r.region_done = true;
        ++r.added;
        return true;
    }
    std::uint64_t added_residues = 0;
    bool any = false;
    std::string problem;
    while (!r.at_end && (max_residues == 0 || added_residues < max_residues)) {
        switch (r.fast ? r.next_fast(problem) : r.parse_record(problem)) {
            case impl::outcome::end: r.at_end = true; break;
            case impl::outcome::bad:
                ++r.skipped;
                if (r.opt.on_skip) r.opt.on_skip(problem);
                break;
            case impl::outcome::record:
                if (r.fast_current) {  // the parallel parse kept a title only where it is kept here
                    fast_record& f = *r.fast_current;
                    if (!f.title.empty())
                        out.add(std::move(f.name), r.fast_residues, record_origin{std::move(f.title), 0, 0});
                    else
                        out.add(std::move(f.name), r.fast_residues);
                    added_residues += r.fast_residues.size();
                    r.fast_current = nullptr;
                    ++r.added;
                    any = true;
                    break;
                }
                // An origin only for a header that says more than its id: most databases' headers are bare ids.
                if (r.opt.keep_titles && r.title.size() > r.name.size())
                    out.add(r.name, as_span(r.residues), record_origin{r.title, 0, 0});
                else
                    out.add(r.name, r.residues);
                out.add_quality(r.quality);
                added_residues += r.residues.size();
                ++r.added;
                any = true;
                break;
        }
    }
    if (r.at_end && !r.reported_without_id) {
        r.reported_without_id = true;
        if (r.without_id > 1 && r.opt.on_warning)
            r.opt.on_warning(r.shown + ": " + std::to_string(r.without_id) +
                             " records in all have a header with no id; their ids are the first words of their "
                             "descriptions");
    }
    if (r.at_end && r.added == 0) {
        if (r.records_seen == 0)
            throw input_error(r.shown, r.line_no == 0 ? "the file is empty; give a FASTA or FASTQ file with records"
                                                      : "no records, only blank lines; give a FASTA or FASTQ file "
                                                        "with records");
        throw input_error(r.shown, "every record (" + std::to_string(r.skipped) +
                                       ") was bad and skipped; nothing is left to align");
    }
    return any;
}

std::uint64_t sequence_reader::records_read() const { return p_->added; }
std::uint64_t sequence_reader::records_skipped() const { return p_->skipped; }

sequence_set read_all(const std::string& spec, read_options opt) {
    sequence_reader r(spec, std::move(opt));
    sequence_set s;
    r.read_chunk(s, 0);
    return s;
}

sequence_set read_region(const std::string& path, const std::string& region, read_options opt) {
    sequence_reader r(sequence_source{path, region}, std::move(opt));
    sequence_set s;
    r.read_chunk(s, 0);
    return s;
}

void add_given_record(sequence_set& set, std::size_t k, const std::string& name, const std::string& residues) {
    const std::string where = set.source + ":" + (name.empty() ? "record " + std::to_string(k + 1) : name);
    if (name.empty()) throw input_error(where, "the sequence has no name");
    if (residues.empty()) throw input_error(where, "the sequence has no residues");
    for (const char c : residues)
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '*'))
            throw input_error(where, "'" + std::string(1, c) + "' is not a residue: letters and '*' only");
    set.add(name, residues);
}

}  // namespace swgpu::io
