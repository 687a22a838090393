// swgpu as a library, alignment: exact Smith-Waterman-Gotoh database search and pairwise alignment (installed as
// <swgpu/align.hpp>; <swgpu/swgpu.hpp> includes it with <swgpu/numerics.hpp>).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "common.hpp"

namespace swgpu {

// One record of a FASTA or FASTQ file: the first word of its header, and its residues as letters.
struct sequence {
    std::string name;
    std::string residues;
};

// Every record of a FASTA/FASTQ file (plain, gzip or bgzip), or of a region of an indexed FASTA ("genome.fa:chr1:1-500").
std::vector<sequence> read_sequences(const std::string& path);

enum class strands { both, plus, minus };    // DNA queries: the strands searched
enum class sequence_type { automatic, protein, dna };  // automatic: DNA when >= 90 % of the letters are ACGTUN
enum class pair_mode { automatic, search, pairwise };  // pairwise: every pair in linear memory (long pairs)

struct search_settings {
    std::string matrix;                  // a built-in name (BLOSUM62, NUC.4.4, ...) or an NCBI matrix file; empty:
                                         // BLOSUM62 for protein, match/mismatch for DNA
    int gap_open = -1, gap_extend = -1;  // BLAST's convention (a gap of length k costs open + k * extend); -1: the
                                         // matrix's default (BLOSUM62 11/1, DNA 5/2, NUC.4.4 10/6, ...)
    int match = 2, mismatch = -3;        // DNA scores without a matrix
    std::size_t max_target_seqs = 500;   // hits kept per query
    double evalue = 10;                  // hits with a larger E-value are dropped
    bool evalues = true;                 // false: no statistics (evalue and bitscore are NaN), no E-value threshold
    strands strand = strands::both;
    sequence_type type = sequence_type::automatic;
    backend where = backend::automatic;
    int gpus = 0;                        // GPUs the score pass spreads over (0: every visible one)
    std::size_t gpu_memory = 0;          // bytes of device memory each GPU may use (0: what is free)
    int threads = 0;                     // CPU threads (0: one per hardware thread)
    pair_mode mode = pair_mode::automatic;
    bool seg = false;                    // protein: mask the queries' low-complexity residues as X (blastp -seg yes)
    bool dust = false;                   // DNA: mask them as N (blastn -dust yes -soft_masking false)
    int comp_based_stats = 0;            // 1: composition-based statistics (blastp -comp_based_stats 1); protein
    int max_hsps = 1;                    // alignments per (query, subject, strand), as the CLI's --max-hsps
    int zdrop = -1;                      // DNA: each alignment cut into collinear blocks where its running score falls
                                         // more than zdrop below its best beyond what one gap explains (minimap2's
                                         // Z-drop; the CLI's --zdrop, docs/align.md); -1: not cut
    // A request on this token stops the call at its next check (between database chunks, batches of queries or
    // alignments, bands of a long pair) with swgpu::error of kind error_kind::interrupted. As with stop_calls, the
    // checks are the library's, not the call's: other calls running at that moment stop too.
    std::stop_token stop;
    static search_settings defaults() { return {}; }
};

// One hit, named as BLAST's columns. Coordinates are 1-based and inclusive; a minus-strand hit has sstart > send.
struct hit {
    std::string qseqid, sseqid;
    double pident = 0;           // 100 * identities / length (the CLI prints it with 3 decimals)
    double evalue = 0, bitscore = 0;  // NaN for align_pair's answer of a pair with no alignment (score 0)
    long length = 0, mismatch = 0, gapopen = 0, qstart = 0, qend = 0, sstart = 0, send = 0, score = 0;
    std::string cigar;           // query against subject as searched (the SAM orientation)
    long qlen = 0, slen = 0;
    std::string sstrand;         // "plus" or "minus" for DNA, "N/A" for protein
    long nident = 0, positive = 0, gaps = 0;  // identities, positive-scoring columns, gap columns
    std::string qseq, sseq;      // the aligned segments with '-' for gaps, as BLAST's qseq and sseq columns
};

// Every query against every database sequence; hits per query in the CLI's order, queries in input order.
std::vector<hit> search(const std::vector<sequence>& queries, const std::vector<sequence>& database,
                        const search_settings& settings = search_settings::defaults());

// A database kept in memory, encoded, with its backend (the GPUs) started, across searches: reading, encoding and
// start-up are paid once, and on a GPU the records are packed and copied to the device at the first search and stay
// there for the next ones. Each search gives what search() gives with the same records and settings. Searches of
// one database from several threads run one after the other (each has the whole backend).
class database {
public:
    // A FASTA/FASTQ file, a region, or a database written by `swgpu makedb` (PREFIX or PREFIX.swdb).
    explicit database(const std::string& path_or_swdb, const search_settings& settings = search_settings::defaults());
    explicit database(const std::vector<sequence>& records,
                      const search_settings& settings = search_settings::defaults());
    ~database();
    database(database&&) noexcept;
    database& operator=(database&&) noexcept;

    std::vector<hit> search(const std::vector<sequence>& queries);
    // As search(queries), stopped by a request on `stop` (search_settings::stop).
    std::vector<hit> search(const std::vector<sequence>& queries, std::stop_token stop);
    std::size_t size() const;         // records
    std::uint64_t residues() const;

private:
    struct impl;
    std::unique_ptr<impl> p_;
};

// The best local alignment of two sequences (both strands for DNA), long pairs included (aligned in linear memory on
// the whole backend). A pair with no positive-scoring alignment gives a hit of score 0 with empty coordinates.
// E-values are computed as for a database of this one subject. One alignment: settings.max_hsps above 1 is a usage
// error (align_pair_all gives the further ones).
hit align_pair(const sequence& query, const sequence& subject,
               const search_settings& settings = search_settings::defaults());

// Every alignment of two sequences that settings.max_hsps asks for (per strand for DNA), as
// search({query}, {subject}, settings) gives them: in the same order, with the same values. Where none passes
// settings.evalue, the best alignment all the same (align_pair's answer); none for a pair with no positive-scoring
// alignment.
std::vector<hit> align_pair_all(const sequence& query, const sequence& subject,
                                const search_settings& settings = search_settings::defaults());

}  // namespace swgpu
