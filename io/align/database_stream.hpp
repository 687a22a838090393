// The database of a search as a stream of chunks: a FASTA/FASTQ file (or region) or a .swdb database, read in chunks
// of a bounded number of residues, each chunk typed and checked as it is read.
//
// Chunk sizes. With `ramp`, the first chunks are an eighth of the chunk size, then a quarter, a half, then whole
// (a GPU starts after a short read, and the reader stays ahead of it from then on), unless the database is known to
// fit in one chunk (a .swdb's residues, a plain file's bytes), which is read whole; every process of an MPI run cuts
// the same chunks, since process r searches chunk k when k mod P = r.
//
// Types. With `auto_type`, a .swdb's type is the one makedb wrote in its header (no record is typed again); any other
// database is typed by its leading records (core/align/sequence.hpp's rule and type_window: the first chunk is made
// large enough to hold them) and every record of every chunk is checked against it: in a DNA database a record that
// cannot be DNA is an error naming it, numbered in the whole database; in a protein database records that look like
// DNA are protein, counted for one warning (nucleotide_like_warning). `expect(type, ...)` makes the database's type an
// error (exit 2) when it differs from the queries'.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/align/scoring.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/sequence.hpp"
#include "core/error.hpp"
#include "io/align/sequence_reader.hpp"

namespace swgpu::io {

class database_stream final : public chunk_source {
public:
    struct options {
        std::uint64_t chunk_residues = 100'000'000;
        bool ramp = false;       // first chunks of 1/8, 1/4, 1/2 of chunk_residues
        bool auto_type = true;   // type the database by its first chunk and check every record
        read_options read;       // for FASTA/FASTQ
        // List every record's id and whole length (SAM's @SQ lines) while the database has at most this many; 0: none.
        std::size_t list_records = 0;
    };
    // `spec`: a file, a region (FILE:NAME:BEG-END), "-" (stdin) or a .swdb database (PREFIX or PREFIX.swdb).
    database_stream(const std::string& spec, options opt);
    ~database_stream();
    database_stream(const database_stream&) = delete;
    database_stream& operator=(const database_stream&) = delete;

    // The next chunk, appended to an empty set; false at the end of the database.
    bool next(sequence_set& chunk) override;
    // A .swdb whose header says its type hands its chunks encoded as they are read (one pass over the residues, on
    // up to 16 threads); any other source reads letters, then encodes them.
    bool encodes_while_reading() const override;
    bool next_encoded(sequence_set& chunk, const substitution_matrix& m, std::uint64_t& unknown) override;
    // Passes the next chunk without reading its records (a .swdb only: can_skip()), giving its residues and
    // sequences; false at the end.
    bool skip(std::uint64_t& residues, std::uint64_t& sequences) override;
    bool can_skip() const override;
    // Keeps the storage of a searched chunk (one at a time) for the next chunk read. Thread-safe against next().
    void recycle(sequence_set&& spent) override;
    // True once the stream is known to hold no more chunks.
    bool exhausted() const override;

    // The database's type by the rule (auto_type), reading its first chunk ahead if it was not read yet; next() then
    // returns that chunk first.
    seq_type type();
    // The queries' type and the words naming them: the first chunk read is an error (exit 2) if its type differs.
    void expect(seq_type queries, std::string queries_name);

    const std::string& spec() const;
    std::uint64_t chunk_residues() const;   // a whole chunk's residues
    std::uint64_t total_residues() const;  // a .swdb's residues, 0 when not known beforehand (FASTA)
    std::uint64_t records_skipped() const;  // bad records skipped under read_options::skip_bad
    // The records read or passed so far, in database order (options::list_records); null when not listed or when the
    // database has more records than that.
    const std::vector<std::pair<std::string, std::uint64_t>>* listed() const;
    // The warning line for the records read so far of a protein database that look like DNA; empty when none.
    std::string nucleotide_like_warning() const;

private:
    struct impl;
    std::unique_ptr<impl> p_;
};

// "Q: the queries look like DNA but the database D looks like protein (...); give --seqtype dna or --seqtype protein
// to search both as that type": the usage error of queries and a database of different types.
error types_disagree(seq_type queries, const std::string& queries_name, seq_type database,
                     const std::string& database_name);

}  // namespace swgpu::io
