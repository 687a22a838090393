// The queries and files of a search as `swgpu align` takes them. Queries: one query file, or each file of a --batch
// list on its own as a run with it alone would take it; read, typed by core/align/sequence.hpp's rule (every record
// checked against its file) and held against the database's type, then encoded on the strands searched and put end
// to end. A --batch file that a run with it alone would refuse is refused on its own (`refuse`: its error; the others
// go on). Files: no output that would replace an input or another output, and the memory the search will hold,
// refused before anything is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/align/scoring.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/sequence.hpp"
#include "core/error.hpp"
#include "io/align/batch_list.hpp"
#include "io/align/report.hpp"
#include "io/align/sequence_reader.hpp"

namespace swgpu::io {

struct query_files {
    // As read: the letters of each accepted file (one without --batch) and its entry in the --batch list (0 without).
    std::vector<sequence_set> files;
    std::vector<std::size_t> entries;
    // Zero-length reads (one query file): taken out before the search and printed as reads without hits (SAM:
    // unmapped records). Their positions in the file, and the records.
    std::vector<std::size_t> empty_at;
    sequence_set empty_reads;
    // Encoded (encode_query_file, encode_batch_files): the strands searched; the queries' letters as read, kept where
    // DNA queries hold IUPAC codes (scored as N, printed as read); with --batch, file batch_files[j] of the list holds
    // queries [batch_first[j], batch_first[j + 1]).
    query_strands strands;
    std::optional<sequence_set> letters;
    std::vector<std::size_t> batch_first{0}, batch_files;
};

// How queries are read and typed.
struct query_reading {
    read_options read;                  // the reader's (qualities kept for SAM's QUAL, --skip-bad)
    std::optional<seq_type> type;       // given (--seqtype dna or protein); none: typed by their records
    std::function<void(const std::string&)> warning;                  // a warning's text
    std::function<void(std::size_t entry, const error& why)> refuse;  // a --batch file refused
};

// The type of one file's queries: the given one, else classify()'s (records that look like DNA in a protein file are
// protein, said once as a warning).
seq_type type_of_queries(const sequence_set& set, const query_reading& how);

// One query file (`path`): zero-length records allowed and taken out (a file of them only is refused), typed.
seq_type read_query_file(query_files& q, const std::string& path, query_reading how);

// Each file of a --batch list on its own, typed; a file that cannot be read is refused. Returns the accepted files'
// types.
std::vector<seq_type> read_batch_files(query_files& q, std::span<const batch_entry> batch, query_reading how);

// Each accepted --batch file held against the database's type (`db` names it), as alone: one of another type is
// refused.
void keep_database_type(query_files& q, std::span<const seq_type> types, seq_type database_type, const std::string& db,
                        std::span<const batch_entry> batch, const query_reading& how);

// What a file's letters unknown to the matrix are told: "" when there are none.
std::string unknown_letters_warning(const std::string& source, std::uint64_t unknown, const substitution_matrix& m,
                                    seq_type type);

// How queries are encoded: the matrix, the strands searched, and what is said of a file's unknown letters.
struct query_encoding {
    const substitution_matrix& matrix;
    seq_type type = seq_type::protein;
    bool plus = true, minus = false;
    std::function<void(const std::string& source, std::uint64_t unknown)> unknown;
    std::function<void(std::size_t entry, const error& why)> refuse;  // a --batch file refused
};

// One query file's (q.files.front()), `source` naming it.
void encode_query_file(query_files& q, const std::string& source, const query_encoding& how);

// The --batch files', each on its own (a letter its matrix cannot read refuses that file only), then the files one
// after the other; `list` names them all. False when every file was refused.
bool encode_batch_files(query_files& q, const std::string& list, const query_encoding& how);

// The files a search names. The outputs (-o when there is no --batch list, --dotplot, each --batch entry's) may
// replace no input (the query files and the faidx indexes a region reads, the --batch list, the database, a --matrix
// file) nor each other: refused by io::refuse_overwriting before anything is read or written.
struct search_files {
    std::string query, db, batch, out, dotplot, matrix;
    std::span<const batch_entry> batch_entries;
};
void refuse_overwriting_inputs(const search_files& f);

// The most residues (or letters) the file of `spec` can hold: its size for a plain file (a .swdb too), `otherwise`
// for a compressed file or stdin.
std::uint64_t residue_bound(const std::string& spec, std::uint64_t otherwise);

// The memory the search holds at its peak, refused before anything is read when it cannot fit (io/memory.hpp;
// docs/conventions.md, "Memory"): three database chunks (the one searched, the next being prepared, the one after
// being read), two of them with their packed copy, at least 5 bytes a residue, and the queries as read and encoded
// (twice their files' letters). A chunk is `chunk` residues (--db-chunk), or the whole database where that is smaller
// (a plain file's size bounds its residues; a compressed one counts as a whole chunk). Alignments of long pairs
// estimate their own memory when they are planned.
void check_search_memory(const std::string& db, std::uint64_t chunk, std::span<const std::string> queries);
// The same for `swgpu align`'s queries: the file `query`, or with --batch each entry's.
void check_search_memory(const std::string& db, std::uint64_t chunk, const std::string& query,
                         std::span<const batch_entry> batch);

// The files of a --batch run with queries (those not refused), as write_batch_reports writes them.
std::vector<batch_file> batch_files_of(const query_files& q, std::span<const batch_entry> batch);

}  // namespace swgpu::io
