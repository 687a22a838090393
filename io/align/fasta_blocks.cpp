#include "io/align/fasta_blocks.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace swgpu::io::fasta_blocks {

bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string hex_byte(unsigned char c) {
    char b[8];
    std::snprintf(b, sizeof b, "0x%02X", c);
    return b;
}

// A name or a byte string made safe for a one-line message: control and non-ASCII bytes as \xNN, cut at `max` bytes.
std::string printable(std::string_view s, std::size_t max) {
    std::string out;
    for (std::size_t k = 0; k < s.size(); ++k) {
        if (k == max) {
            out += "...";
            break;
        }
        const auto c = static_cast<unsigned char>(s[k]);
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02X", c);
            out += b;
        }
    }
    return out;
}

// Why a byte is not a residue, and what to do.
// `at` says where in the record: " at column C" (of the line the message names) or " at residue K".
std::string invalid_residue(unsigned char c, const std::string& at) {
    if (c == 0) return "NUL byte" + at + ": the file is binary or corrupt; give a FASTA or FASTQ text file";
    if (c == '-' || c == '.')
        return std::string("gap character '") + static_cast<char>(c) + "'" + at +
               ": swgpu reads unaligned sequences; remove the gaps first (e.g. sed '/^>/!s/[-.]//g')";
    if (c >= 0x80)
        return "non-ASCII byte " + hex_byte(c) + at +
               ": sequences must be ASCII letters; is this a FASTA or FASTQ file?";
    if (c < 0x20 || c == 0x7f)
        return "control byte " + hex_byte(c) + at + ": the file is binary or corrupt; give a FASTA or FASTQ text file";
    if (c >= '0' && c <= '9')
        return std::string("digit '") + static_cast<char>(c) + "'" + at +
               " is not a residue: sequence lines hold letters and '*' only (numbered lines, as in GenBank files, are "
               "not FASTA)";
    return std::string("'") + static_cast<char>(c) + "'" + at +
           " is not a residue: sequence lines hold letters and '*' only";
}

// The first non-blank line of the input is not a header: describe what it looks like.
std::string leading_junk(std::string_view line) {
    const auto u = [&](std::size_t k) { return static_cast<unsigned char>(line[k]); };
    std::size_t binary = 0;
    const std::size_t n = std::min<std::size_t>(line.size(), 256);
    for (std::size_t k = 0; k < n; ++k)
        if (u(k) == 0 || (u(k) < 0x20 && !is_space(u(k))) || u(k) == 0x7f) ++binary;
    std::string first_bytes;
    for (std::size_t k = 0; k < std::min<std::size_t>(line.size(), 4); ++k)
        first_bytes += (k ? " " : "") + hex_byte(u(k)).substr(2);
    if (line.substr(0, 7) == "SWGPUDB")
        return "a swgpu database (written by swgpu makedb), not FASTA or FASTQ: swgpu align takes it as DB only; "
               "queries and makedb take FASTA or FASTQ files";
    if (line.size() >= 2 && u(0) == 0x1f && u(1) == 0x8b)
        return "gzip data inside gzip data: decompress the file once (gzip -dc) and give the result";
    if (binary > 0)
        return "binary data, not FASTA or FASTQ (starts with bytes " + first_bytes +
               "); give a FASTA or FASTQ file, plain or gzip/bgzip-compressed";
    return "'" + printable(line, 30) +
           "' comes before the first header: FASTA records start with a '>NAME' line, FASTQ records with '@NAME'";
}

std::string no_id_warning(char marker) {
    return ": the header has no id ('" + std::string(1, marker) +
           "' is followed by a blank), so the first word of its description is taken as the id";
}

const char* const no_residues = "the record has no residues; remove it or give it a sequence";

// Parses `text`, which starts with a header line and ends at a header line or the end of the file. Anything this
// parse does not reproduce exactly leaves the block to the sequential parser (`sequential`): a block that does not
// start with '>' (the file's first: a byte order mark, blank lines, junk, FASTQ), a line starting with '@' (a FASTQ
// header to the sequential parser), a header holding a carriage return, and any content problem without skip_bad
// (all of them errors, which the sequential parser then reports).
void parse_block(std::string_view text, const read_options& opt, fast_block& b) {
    if (text.empty() || text[0] != '>') {
        b.sequential = true;
        return;
    }
    b.residues.reserve(text.size());
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    std::size_t pos = 0, record_start = 0;
    std::uint64_t line = 0;
    fast_record* rec = nullptr;
    // A content problem: the record's first one is kept (skip_bad); without skip_bad it is an error.
    const auto problem = [&](std::uint64_t at_line, std::string what) {
        if (!opt.skip_bad) return false;
        if (!rec->bad) {
            rec->bad = true;
            rec->problem_line = at_line;
            rec->problem = std::move(what);
            b.residues.resize(record_start);
        }
        return true;
    };
    const auto finish = [&] {
        if (!rec) return true;
        if (!rec->bad && b.residues.size() == record_start && !opt.allow_empty &&
            !problem(rec->header_line, no_residues))
            return false;
        rec->residues_end = b.residues.size();
        return true;
    };
    while (pos < n) {
        const void* nl = std::memchr(s + pos, '\n', n - pos);
        const std::size_t end = nl ? static_cast<std::size_t>(static_cast<const unsigned char*>(nl) - s) : n;
        const std::size_t from = pos;
        pos = nl ? end + 1 : n;
        ++line;
        std::size_t len = end - from;
        while (len > 0 && s[from + len - 1] == '\r') --len;
        const unsigned char* l = s + from;
        if (len > 0 && l[0] == '@') {
            b.sequential = true;
            return;
        }
        if (len > 0 && l[0] == '>') {
            if (!finish()) {
                b.sequential = true;
                return;
            }
            const std::string_view header(text.data() + from, len);
            if (header.find('\r') != std::string_view::npos) {
                b.sequential = true;
                return;
            }
            rec = &b.records.emplace_back();
            record_start = b.residues.size();
            rec->header_line = line;
            std::size_t hb = 1;
            while (hb < len && is_space(l[hb])) ++hb;
            std::size_t he = hb;
            while (he < len && !is_space(l[he])) ++he;
            rec->name.assign(header.substr(hb, he - hb));
            std::size_t ht = len;
            while (ht > he && is_space(l[ht - 1])) --ht;
            if (opt.keep_titles && ht - hb > rec->name.size()) rec->title.assign(header.substr(hb, ht - hb));
            rec->no_id = hb > 1 && !rec->name.empty();
            if ((header.find('\0') != std::string_view::npos &&
                 !problem(line, "NUL byte in the header: the file is binary or corrupt")) ||
                (rec->name.empty() && !problem(line, "the header has no name; write one right after '>'"))) {
                b.sequential = true;
                return;
            }
            continue;
        }
        if (!rec) {  // not reached: a block starts with a header
            b.sequential = true;
            return;
        }
        if (rec->bad) continue;
        std::size_t k = 0;
        while (k < len && byte_kinds[l[k]] == byte_kind::residue) ++k;
        b.residues.append(reinterpret_cast<const char*>(l), k);
        for (; k < len; ++k) {
            const byte_kind kind = byte_kinds[l[k]];
            if (kind == byte_kind::residue) {
                b.residues.push_back(static_cast<char>(l[k]));
            } else if (kind == byte_kind::invalid) {
                if (!problem(line, invalid_residue(l[k], " at column " + std::to_string(k + 1)))) {
                    b.sequential = true;
                    return;
                }
                break;
            }
        }
    }
    if (!finish()) {
        b.sequential = true;
        return;
    }
    b.lines = line;
}

// The start of the line after the last '\n' before `end`, if that line starts with '>' and is whole (a '\n' ends it
// before `complete`); 0 when there is none.
std::size_t last_record_start(const char* s, std::size_t complete) {
    std::size_t limit = complete > 0 ? complete - 1 : 0;  // a '\n' at q < complete - 1 starts a line before `complete`
    while (limit > 0) {
        const void* q = memrchr(s, '\n', limit);
        if (!q) return 0;
        const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(q) - s);
        if (s[at + 1] == '>') return at + 1;
        limit = at;
    }
    return 0;
}

// The first record start (a '>' after a '\n') in [from, end), or end.
std::size_t next_record_start(const char* s, std::size_t from, std::size_t end) {
    std::size_t at = from > 0 ? from - 1 : 0;
    while (at < end) {
        const void* q = std::memchr(s + at, '\n', end - at);
        if (!q) return end;
        const std::size_t p = static_cast<std::size_t>(static_cast<const char*>(q) - s) + 1;
        if (p < end && s[p] == '>' && p >= from) return p;
        at = p;
    }
    return end;
}
}  // namespace swgpu::io::fasta_blocks
