// Sequences in: FASTA and FASTQ, plain, gzip or bgzip, from a file or stdin, and regions of indexed FASTA files.
//
// Grammar accepted (each rule exists so that bad input is an error naming the file and record, never a silent change):
//   - A record starts with a header line: '>' (FASTA) or '@' (FASTQ). The record's name is the first word of the header
//     (whitespace separates words; leading whitespace after '>' is skipped). Blank lines may appear anywhere outside a
//     FASTQ record. Any other line before the first header is an error (data before the first header, binary data).
//   - FASTA sequence lines run to the next header line. FASTQ sequence lines run to a line starting with '+'; quality
//     lines follow until they hold as many characters as the sequence ('!'..'~' only).
//   - Line ends may be LF or CRLF; the last line needs no line end. Upper and lower case are kept as read (encode()
//     is case-insensitive).
//   - Valid residues are the ASCII letters A-Z, a-z and '*' (a stop). Spaces and tabs inside sequence lines are
//     dropped. Everything else is an error: digits, punctuation, control bytes, NUL bytes and non-ASCII bytes. The gap
//     characters '-' and '.' of aligned FASTA are rejected rather than stripped: stripping them silently would
//     renumber the columns a user may think in; the message says how to remove them.
//   - A record needs a non-empty name and at least one residue.
// Headers may hold any bytes except NUL (UTF-8 descriptions, NCBI nr's ^A separators).
//
// Error messages are "FILE:NAME (record N, line L): what, and what to do" (or "FILE:record N (line L)" when the record
// has no name, "FILE:line L" before the first record, "FILE" for the whole file), with names and bytes made printable.
// Errors inside a record's content (empty name, empty sequence, invalid residue, NUL byte, invalid quality character)
// can be skipped with read_options::skip_bad; errors of the file's structure cannot (unreadable or corrupt compressed
// data, data before the first header, a FASTQ record without '+' line or with a quality of another length), because
// after them the record boundaries are unknown.
//
// Reading is built on HTSlib: BGZF (which reads plain, gzip and bgzip data alike) under kseq.h's buffered line
// reader (kstream). kseq_read itself is not used: it silently skips data before the first header, loops forever on a
// BGZF read error, cannot report line numbers, and loses record boundaries after a bad FASTQ record.
//
// Parallel parse. A whole regular file (not stdin, a pipe or a region) is read in batches of decompressed bytes
// (2 blocks a reader thread, read_options::parse_block each, 4 MiB by default), through the same BGZF handle in the
// same 64 KiB reads as kstream, so that a failed read loses the same bytes. A batch ends before its last record
// whose header line is whole (the bytes after it start the next batch), and is cut into blocks at record starts (a
// '>' at the start of a line: in FASTA every such line is a header). The blocks are parsed on the reader threads
// (io::reader_pool, host.reader_threads: the .swdb reader's threads) into records, residues and skip messages with
// line numbers counted within the block; read_chunk hands the records out in file order, adding the lines and records
// of the blocks before (so record and line numbers, the first header-without-id warning, skips and chunk boundaries
// are the sequential parser's). A block the parallel parse would not read exactly is left to the sequential parser,
// which then reads from that block's first byte (the bytes already read, then the rest of the file) to the end: the
// file's first block when the file does not start with '>' (a byte order mark, blank lines, junk, FASTQ, an empty
// file), a block with a line starting with '@' (a FASTQ header to the sequential parser), a header holding a
// carriage return, any content error without skip_bad (the sequential parser then reports it, with its record and
// line), the block where a read failed, and a record longer than 4 batches. Errors therefore come from the
// sequential parser's code, at the same place in the file; with skip_bad, skipped records come from the parallel
// parse with the same messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/align/sequence.hpp"

namespace swgpu::io {

struct read_options {
    // Skip a record with bad content instead of failing; each skip is counted in records_skipped() and reported to
    // on_skip (if set) with the same message the error would have had. A file whose every record is bad still fails.
    bool skip_bad = false;
    std::function<void(const std::string& message)> on_skip;
    // Warnings about records that are read but may not be what the file's author meant (a header with no id: '>'
    // followed by a blank, whose description's first word becomes the id). The first such record is named; when the
    // input ends, a count of them all follows if there were more.
    // Also clamped regions: a region whose END lies past its sequence's end is read to that end, with a warning.
    std::function<void(const std::string& message)> on_warning;
    // Keep each record's whole header line (record_origin::title) when it holds more than the id; a search that
    // prints no titles can leave the database's out (a database's descriptions may be larger than its residues).
    bool keep_titles = true;
    // Keep FASTQ records' base qualities (sequence_set::qualities), one per residue: for queries written as SAM. Off,
    // they are checked and dropped, so FASTA and databases never hold them.
    bool keep_qualities = false;
    // Read a record with no residues (a zero-length FASTQ read, which mappers report as unmapped) as an empty record
    // instead of refusing it.
    bool allow_empty = false;
    // Parse a whole regular file on the reader threads (host.reader_threads; see "Parallel parse" above); false:
    // line by line on the calling thread. Both read the same records and report the same errors and warnings.
    bool parallel = true;
    // The parallel parse's block size in bytes (0: 4 MiB); tests make it small, to cut files into many blocks.
    std::size_t parse_block = 0;
};

// What a command-line argument names. Region syntax (faidx, 1-based inclusive): NAME (the whole sequence), NAME:BEG
// (BEG to the end) or NAME:BEG-END; a name that itself contains ':' can be written {NAME}:BEG-END.
struct sequence_source {
    std::string path;    // a file name, or "-" for stdin
    std::string region;  // empty: every record of the file
};

// Resolves a command-line argument: "-" is stdin; a string naming an existing file is that file, even when it contains
// ':'; otherwise "PATH:REGION" where PATH is the longest prefix ending before a ':' that names an existing file
// (so "genome.fa:chr1:100-200" is region "chr1:100-200" of genome.fa). Anything else is returned as a path, and
// opening it reports the missing file.
sequence_source parse_source(const std::string& spec);

// The index files that reading `source` reads, and builds when they are missing or stale (so an output must not be
// one of them, existing or not): FILE.fai for a region of FILE, and FILE.gzi as well when FILE is bgzip-compressed;
// none for a whole file or stdin.
std::vector<std::string> index_files(const sequence_source& source);

// Reads records in order, in chunks of bounded size. Errors are swgpu::error with exit code bad_input.
//
// A region is read through faidx: the file must be FASTA, uncompressed or bgzip-compressed (plain gzip cannot be
// indexed). Its .fai index (and .gzi for bgzip) is built beside the file when missing or older than the file; when that
// is impossible the error says how to build it. A region record is named NAME, the sequence's own name, and its
// record_origin says where it lies in the sequence (offset BEG-1, the sequence's whole length), so that output prints
// coordinates of the whole sequence. An END past the sequence's end is clamped to it, with a warning (on_warning).
// FASTA records keep their whole header line as record_origin::title (keep_titles).
class sequence_reader {
public:
    explicit sequence_reader(const std::string& spec, read_options opt = {});  // parse_source(spec)
    explicit sequence_reader(const sequence_source& source, read_options opt = {});
    ~sequence_reader();
    sequence_reader(const sequence_reader&) = delete;
    sequence_reader& operator=(const sequence_reader&) = delete;

    // Appends records to `out` until at least `max_residues` residues were added (0 = no limit) or the input ends.
    // Returns false when no record was added (end of input). Throws when the input holds no valid record at all
    // (empty file, or every record skipped).
    bool read_chunk(sequence_set& out, std::uint64_t max_residues = 0);
    // True once the input is known to hold no more records (the next read_chunk returns false); false may also mean
    // "not known yet" (a chunk that ended exactly at the last record).
    bool exhausted() const;
    std::uint64_t records_read() const;     // records added to a sequence_set
    std::uint64_t records_skipped() const;  // records skipped under skip_bad

private:
    struct impl;
    std::unique_ptr<impl> p_;
};

// Every record of a file or region (spec as in parse_source).
sequence_set read_all(const std::string& spec, read_options opt = {});
// Record k of sequences a program hands in (the library face's), by the reader's rules: a name, at least one residue,
// letters and '*' only; added to `set`, else input_error naming set.source and the record (its name, or "record K").
void add_given_record(sequence_set& set, std::size_t k, const std::string& name, const std::string& residues);
// One region of an indexed FASTA file, without the ambiguity of a combined spec.
sequence_set read_region(const std::string& path, const std::string& region, read_options opt = {});

}  // namespace swgpu::io
