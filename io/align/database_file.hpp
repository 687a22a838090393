// A reusable, memory-mappable sequence database (`swgpu makedb DB.fa PREFIX` writes PREFIX.swdb; `swgpu align` accepts
// PREFIX.swdb, or PREFIX, in place of a FASTA file).
//
// Layout, all integers little-endian, every section 8-byte aligned:
//   char[8]  magic "SWGPUDB3" (the last byte is the format version)
//   u64      sequences N, residues R, name bytes B, longest sequence L
//   u64      type: bits 0-1 the sequence type (1 protein, 2 DNA), bit 8 set when makedb's --seqtype gave it (absent
//            in format version 2, which is still read: its records are then typed as a FASTA file's)
//   u8[R]    residues as upper-case letters (not matrix codes, so one database serves every matrix), padded to 8
//   char[B]  names (first word of each header), padded to 8
//   u64[N+1] residue offsets (record k = residues[off[k], off[k+1]))
//   u64[N+1] name offsets into the name blob
//   u32[N]   records ordered by length, longest first, ties by record index (the GPU packs length classes from it),
//            padded to 8
//   u32[K]   CRC-32 (zlib's crc32; libdeflate's is the same) of each block of 2^20 residues, K = ceil(R / 2^20)
//   u32      CRC-32 of the magic and header, then of everything from the names to here; padded to 8
// The residues come first so that makedb streams them into the file as it reads the FASTA (its memory: the names and
// about 20 bytes a record), the tables after them, the header last.
// Records keep their FASTA order: a hit's subject index is the same as when searching the FASTA file.
//
// The checksums catch a file changed or damaged after makedb: the header, tables and names are checked when the file
// is opened, a block of residues the first time a record in it is read (read_chunk, residues); a mismatch is a
// bad-input error naming the records concerned. Chunks skipped unread (skip_chunk) are not checked.
//
// Reading a chunk is one pass over its residues on up to 16 threads, block by block: the checksum, then the copy out
// of the mapping, as matrix codes when the caller gives its matrix (read_chunk's encode_with). The letters stay in
// the file (one database serves every matrix): a table lookup in the copy costs less than a format per matrix, and
// the length order the GPU packs by is computed per chunk from the offsets (a counting sort, about a millisecond
// for 10^5 records), so a chunk's layout is not stored either (docs/performance.md, "Reading a .swdb").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/align/sequence.hpp"
#include "io/align/sequence_reader.hpp"

namespace swgpu {
class thread_pool;
}

namespace swgpu::io {

// The threads that read a .swdb's chunks and parse FASTA files (sequence_reader): host.reader_threads, or one per
// core up to 16 (0 in data/tuning.tsv). The pool is made on first use.
unsigned reader_threads();
thread_pool& reader_pool();

// Reads FASTA/FASTQ `source` (any spec sequence_reader accepts) and writes database_output(prefix) atomically (a
// temporary file renamed when complete), the residues streamed into it as they are read. Returns the number of records
// written. The sequence type is `forced`, or typed by core/align/sequence.hpp's rule with every record checked against
// it exactly as a search of `source` checks them (a DNA file holding a protein record is refused; nucleotide-like
// records of a protein file are one warning); it is written into the header, so that a search reads it from there.
// Errors: bad input (1) for the source, output (5). Records that repeat an earlier id are reported to opt.on_warning
// (the first one named).
std::uint64_t write_database(const std::string& source, const std::string& prefix, const read_options& opt = {},
                             std::optional<seq_type> forced = std::nullopt);

// The file write_database writes for `prefix`: PREFIX.swdb, or PREFIX itself when it already ends in ".swdb".
std::string database_output(const std::string& prefix);

// The file a database argument names: `path` when it is a regular file, else path + ".swdb" when that is one.
std::string database_path(const std::string& path);

// True when `path` (or path + ".swdb") starts with the magic of write_database, of any format version (opening a
// database of another version then says so).
bool is_database_file(const std::string& path);
// Every record of a database held in memory, as letters: a .swdb (PREFIX or PREFIX.swdb) read whole, or a FASTA/FASTQ
// file or region (read_all).
sequence_set read_all_records(const std::string& path_or_swdb);

// Storage for `residues` residues taken by an empty `out` whose storage is smaller, its pages faulted in on the
// threads that read .swdb chunks: a chunk read into it then neither reallocates nor faults in pages one at a time.
void reserve_residues(sequence_set& out, std::uint64_t residues);

class database_file {
public:
    // Maps `path` or `path.swdb`; validates the layout and the checksum of everything but the residues (a truncated,
    // foreign or damaged file is a bad-input error). Not safe to use from several threads at once.
    explicit database_file(const std::string& path);
    ~database_file();
    database_file(const database_file&) = delete;
    database_file& operator=(const database_file&) = delete;

    const std::string& path() const;
    std::uint64_t size() const;
    std::uint64_t total_residues() const;
    std::uint64_t longest() const;
    std::string_view name(std::uint64_t k) const;
    std::span<const std::uint8_t> residues(std::uint64_t k) const;  // letters, their blocks' checksums checked
    std::uint64_t length(std::uint64_t k) const;
    std::span<const std::uint32_t> length_order() const;
    // The sequence type makedb wrote (nullopt for format version 2), and whether makedb's --seqtype gave it.
    std::optional<seq_type> type() const;
    bool type_forced() const;

    // Appends records from the current position until at least max_residues were added (0: all); false at the end.
    // With `encode_with`, the residues come as that matrix's codes (encode(), in the same pass as the copy), `out`
    // is marked encoded and `unknown` receives the number of letters not in the matrix. The copy, the codes and the
    // blocks' checksums run on up to 16 threads. An empty `out` may hold residues (a recycled chunk's storage): they
    // are overwritten.
    bool read_chunk(sequence_set& out, std::uint64_t max_residues = 0, const substitution_matrix* encode_with = nullptr,
                    std::uint64_t* unknown = nullptr);
    // The residues of the largest chunk read_chunk would cut from the current position on, the k-th of them with
    // max_residues limits[k] (the last limit repeating).
    std::uint64_t largest_chunk(std::span<const std::uint64_t> limits) const;
    // Moves past the chunk read_chunk would read, without reading it: its residues and sequences are returned.
    bool skip_chunk(std::uint64_t max_residues, std::uint64_t& residues, std::uint64_t& sequences);
    // True when every record has been read.
    bool exhausted() const;

private:
    struct impl;
    std::unique_ptr<impl> p_;
};

}  // namespace swgpu::io
