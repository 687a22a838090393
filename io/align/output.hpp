// Results out: BLAST tabular (6, 7), SAM through HTSlib, pairwise text, JSON lines and PAF (docs/conventions.md).
//
// Every format prints, per query in input order, the hits in the order finish_hits() gives (E-value asc when E-values
// are on, score desc, subject index asc, plus strand first). Coordinates are 1-based inclusive; a minus-strand DNA
// hit is printed with sstart > send in the tabular, JSON and pairwise formats (BLAST's view: the query on its plus
// strand) and as flag 16 in SAM (the reverse-complemented query against the subject's forward strand).
//
// Columns (BLAST's names and definitions, plus a few of our own):
//   qseqid sseqid    the first word of the FASTA header
//   pident           100·nident/length, 3 decimals          ppos     100·positive/length, 2 decimals
//   length           alignment columns, gaps included        mismatch substitution columns that are not identities
//   gapopen          gap runs                               gaps     gap columns
//   qstart qend sstart send                                 1-based inclusive; sstart > send on the minus strand
//   evalue bitscore  BLAST's text ("NA" with --no-evalue)   score    the raw score
//   qlen slen        sequence lengths                       nident positive   identities, positive-scoring columns
//   qcovhsp          100·(qend−qstart+1)/qlen as BLAST+ 2.12 prints it (blast_percent)
//   sstrand          "plus"/"minus" for DNA, "N/A" for protein (as BLAST)
//   cigar            the alignment's CIGAR (M/I/D, query as the read; on the minus strand the reverse-complemented
//                    query against the subject's forward strand, as in SAM; no clips)
//   qseq sseq        the aligned segments with '-' for gaps, as BLAST prints them; qaln saln are the same strings
//                    under MMseqs2's names
//   qacc qaccver sacc saccver   accessions as BLAST derives them from the id (io/align/seq_id.hpp)
//   qtitle stitle    the whole header line after '>' (the id when none was kept: a .swdb holds ids only)
//
// Regions (FILE:NAME:BEG-END, record_origin) are printed as BLAST's -query_loc and -subject_loc print them: named for
// their sequence, coordinates of the whole sequence, slen the whole subject's length, qlen (and qcovhsp) the searched
// query's; PAF's lengths and SAM's @SQ LN are the whole sequences'.
//
// PAF (--outfmt paf) is minimap2's: 0-based half-open coordinates, always on the forward strands (a minus-strand hit
// has the query's plus-strand interval, the same residues as BLAST's qstart..qend, and its cg:Z: CIGAR in the
// subject's forward orientation, as SAM's). With output_format::eqx, CIGARs (the cigar column, SAM, PAF's cg:Z:) say
// = for identical residues and X for the other aligned pairs instead of M, as the SAM spec allows; identical means
// what nident counts (the same letter of the matrix).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/align/search/pipeline.hpp"
#include "core/align/scoring.hpp"
#include "io/output_file.hpp"

namespace swgpu::io {

enum class column : std::uint8_t {
    qseqid, sseqid, pident, length, mismatch, gapopen, qstart, qend, sstart, send, evalue, bitscore,
    score, qlen, slen, nident, positive, gaps, ppos, qcovhsp, sstrand, cigar, qseq, sseq, qaln, saln,
    qacc, qaccver, qtitle, sacc, saccver, stitle,
};

enum class format_kind : std::uint8_t { tabular, tabular_commented, sam, pair, json, paf };

struct output_format {
    format_kind kind = format_kind::tabular;
    std::vector<column> columns;  // for tabular, tabular_commented and json
    bool eqx = false;             // CIGARs with =/X instead of M (--eqx); not part of the --outfmt text
};

// Parses --outfmt: "6", "7" and "json" (the 12 standard columns; json adds score), "6 col col ...", "7 col ...",
// "json col ...", "sam", "pair", "paf". "std" in a column list stands for the 12 standard columns. Throws a usage
// error.
output_format parse_outfmt(std::string_view spec);
const std::vector<column>& standard_columns();  // qseqid sseqid pident length mismatch gapopen qstart qend sstart send
                                                // evalue bitscore
std::string_view column_name(column c);
// Whether printing `fmt` needs the alignments of the hits (SAM, pairwise, PAF, or any column beyond names, lengths,
// scores, E-values and strand); without, the hits are printed from the score pass alone.
bool needs_alignments(const output_format& fmt);
// Whether `fmt` prints subjects' whole header lines (pair, the stitle column).
bool prints_subject_titles(const output_format& fmt);
std::string column_names();  // every known name, space-separated (for messages and --help)

// An integer percentage 100·part/whole as BLAST+ 2.12 prints one (qcovhsp; pair's Identities, Positives and Gaps):
// 100 only when part == whole, else rounded half up and at most 99 (299 of 300 is 99, 25 of 1000 is 3, 14 of 5000
// is 0), the rule of NCBI's CAlignFormatUtil::GetPercentMatch; 0 when whole is 0.
int blast_percent(std::int64_t part, std::int64_t whole);

// A count with thousands separators: 1234567 -> "1,234,567" (headers, dot-plot labels).
std::string thousands(std::uint64_t v);

// The scoring as one line, with the gap convention spelled out (for headers).
std::string describe_scoring(const scoring& sc);

// Databases of more sequences (protein databases) list only the subjects with hits in SAM's header.
inline constexpr std::size_t max_listed_references = 100'000;

// What headers say about the run.
struct run_header {
    std::string version;       // "0.1.0"
    std::string command_line;  // for SAM's @PG CL
    std::string query_source;
    std::string db_source;
    std::string read_group;    // SAM's @RG line without "@RG" (--read-group, parse_read_group); empty: none
    // Every database sequence in database order, for SAM's @SQ lines (as minimap2 and bwa write them); null: only the
    // subjects with a printed hit (a database of more than max_listed_references sequences, said in a @CO line when
    // `references_capped`).
    const std::vector<std::pair<std::string, std::uint64_t>>* references = nullptr;  // id and whole length
    bool references_capped = false;
};

// --read-group as bwa mem -R takes it: the @RG line's fields, separated by tabs or by the two characters \t, with or
// without the leading "@RG"; ID:... is required. Returns the fields joined by tabs, without "@RG". Throws a usage
// error.
std::string parse_read_group(std::string_view text);

// SAM's MAPQ of a primary record, from the bit scores of the read's best hit and of its best other hit (the search's
// second; 0 raw score when there is none): the best hit is wrong with a probability of about 2^-(bits1 - bits2), so
// MAPQ = -10·log10 of it = 3.0103·(bits1 - bits2), rounded, 0 when tied or below, at most 60.
int mapping_quality(double best_bits, double other_bits);

struct results_view {
    const scoring& sc;
    const query_strands& queries;
    const database_scan& scan;
    const std::vector<std::vector<printed_hit>>& hits;  // per query, from finish_hits()
    // For SAM's MAPQ: per query (as `hits`), the hits the search kept before the E-value threshold (the scan's, which
    // hold a second hit even when one is printed; empty: the printed hits), and the statistics that give their bit
    // scores (null: MAPQ 255, not available).
    std::span<const std::vector<strand_hit>> searched = {};
    const evalue_calculator* statistics = nullptr;
    // The queries' plus strands as read (upper-case letters), where they hold letters the matrix reads as another
    // (IUPAC codes in reads, scored as N): SEQ, qseq and the pairwise rows print them as read, as minimap2 does.
    // Null: the letters the matrix decodes.
    const sequence_set* query_letters = nullptr;
    // SAM of reads with several alignments per pair (--max-hsps > 1): the records after the primary that overlap
    // neither it nor an earlier such record on the read (by half the shorter or more) are supplementary (flag 2048),
    // every part with SA:Z naming the others, as minimap2 writes split (chimeric) reads; the others stay secondary.
    bool split_reads = false;
};

// A printed hit's operations with each M run split into = runs (identical residues) and X runs (the other aligned
// pairs); I and D as they are. The same orientation as printed_hit::aln (SAM's).
std::vector<cigar_op> eqx_operations(const results_view& results, std::size_t query, const printed_hit& hit);

// One hit's values in BLAST's columns, before formatting: what the tabular formats print and the library's `hit`
// holds, computed in this one place. Coordinates as BLAST's view (blast_view: whole sequences, the query on its plus
// strand); evalue and bitscore are meaningful only where has_statistics.
struct blast_values {
    std::string qseqid, sseqid, sstrand;  // sstrand: "plus"/"minus" for DNA, "N/A" for protein
    std::int64_t length = 0, mismatch = 0, gapopen = 0, nident = 0, positive = 0, gaps = 0;
    std::int64_t qstart = 0, qend = 0, sstart = 0, send = 0, qlen = 0, slen = 0, score = 0;
    double pident = 0, ppos = 0;  // 100 · nident (positive) / length; 0 for no columns
    bool has_statistics = false;
    double evalue = 0, bitscore = 0;
};
blast_values blast_values_of(const results_view& results, std::size_t query, const printed_hit& hit);
// The hit's aligned rows as BLAST's qseq and sseq print them ('-' for gaps; the query's letters as read where
// results.query_letters holds them).
std::pair<std::string, std::string> blast_rows(const results_view& results, std::size_t query, const printed_hit& hit);

// Writes every query's hits in `fmt`. Throws swgpu::error: output_failed from `out`; bad_input when SAM cannot hold a
// name (duplicate subject names, names longer than 254 characters).
void write_results(const output_format& fmt, const run_header& header, const results_view& results, text_sink& out);

}  // namespace swgpu::io
