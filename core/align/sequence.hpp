// A set of sequences stored end to end: one residue buffer, offsets, names. Residues are letters as read; encode()
// turns them into the codes of a substitution matrix in place.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <memory>
#include <utility>
#include <vector>

#include "core/uninitialized_allocator.hpp"
#include "core/align/scoring.hpp"

namespace swgpu {

// Where a record comes from, for output only (the search never looks at it). A FASTA record keeps its whole header
// line; a region of a longer sequence (FILE:chr1:40000-50000) is named for that sequence and says where it lies in
// it, so that output can print coordinates of the whole sequence, as BLAST's -subject_loc does.
struct record_origin {
    std::string title;              // the header line after '>' or '@', whole (empty: the name is all there is)
    std::uint64_t offset = 0;       // residues of the whole sequence before the record's first
    std::uint64_t full_length = 0;  // the whole sequence's length; 0: the record is the whole sequence
};

using residue_vector = std::vector<std::uint8_t, uninitialized_allocator<std::uint8_t>>;

struct sequence_set {
    residue_vector residues;                 // all records, concatenated
    std::vector<std::uint64_t> offsets{0};   // record k is residues[offsets[k], offsets[k+1])
    std::vector<std::string> names;          // first word of the header
    std::vector<record_origin> origins;      // one per record, or empty when no record has one
    std::string source;                      // file name, for messages
    bool encoded = false;
    // FASTQ base qualities as read (Phred+33 letters), one per residue, parallel to `residues`; kept only where asked
    // (queries written as SAM), so empty for FASTA and databases. A record without qualities in a set that has some
    // holds no_quality bytes.
    std::string qualities;
    static constexpr char no_quality = '\0';

    std::size_t size() const { return names.size(); }
    bool empty() const { return names.empty(); }
    std::uint64_t total_residues() const { return offsets.back(); }
    std::size_t length(std::size_t k) const { return static_cast<std::size_t>(offsets[k + 1] - offsets[k]); }
    std::span<const std::uint8_t> operator[](std::size_t k) const {
        return {residues.data() + offsets[k], length(k)};
    }
    void add(std::string name, std::span<const std::uint8_t> seq) {
        names.push_back(std::move(name));
        residues.insert(residues.end(), seq.begin(), seq.end());
        offsets.push_back(residues.size());
        if (!origins.empty()) origins.emplace_back();
        if (!qualities.empty()) qualities.resize(residues.size(), no_quality);
    }
    // A record with its qualities (as many as residues; empty: none).
    void add(std::string name, std::span<const std::uint8_t> seq, std::string_view quality) {
        add(std::move(name), seq);
        add_quality(quality);
    }
    // The qualities of the record added last (as many as its residues; empty: none).
    void add_quality(std::string_view quality) {
        if (quality.empty()) return;
        qualities.resize(offsets[offsets.size() - 2], no_quality);
        qualities += quality;
    }
    // Record k's qualities; empty when it has none.
    std::string_view quality(std::size_t k) const {
        if (qualities.size() < offsets[k + 1] || length(k) == 0 || qualities[offsets[k]] == no_quality) return {};
        return std::string_view(qualities).substr(offsets[k], length(k));
    }
    void add(std::string name, const std::string& letters) {
        add(std::move(name), std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(letters.data()),
                                                           letters.size()));
    }
    void add(std::string name, std::span<const std::uint8_t> seq, record_origin origin) {
        origins.resize(names.size());  // the records before it that have none get an empty one
        origins.push_back(std::move(origin));
        names.push_back(std::move(name));
        residues.insert(residues.end(), seq.begin(), seq.end());
        offsets.push_back(residues.size());
        if (!qualities.empty()) qualities.resize(residues.size(), no_quality);
    }
    // Record k of `from`, origin and qualities included.
    void add_record(const sequence_set& from, std::size_t k) {
        if (from.origins.empty()) add(from.names[k], from[k]);
        else add(from.names[k], from[k], from.origins[k]);
        add_quality(from.quality(k));
    }
    // Record k's origin (a whole record with no title when none was kept).
    const record_origin& origin(std::size_t k) const {
        static const record_origin whole;
        return k < origins.size() ? origins[k] : whole;
    }
};

// Letters -> matrix codes. Returns how many residues were not letters of the matrix (mapped to its fallback code:
// its X, or N for DNA, or the code added for a matrix without one, which scores its lowest score against everything).
std::uint64_t encode(sequence_set& set, const substitution_matrix& m);

// Codes -> letters (for output of aligned segments).
std::string decode(std::span<const std::uint8_t> codes, const substitution_matrix& m);

// --seqtype auto. The rule, for a file and for a record alike: DNA when at least 90 % of its letters are A, C, G, T,
// U or N (any case), protein otherwise. So IUPAC ambiguity codes (R Y K M S W B D H V) and a little X in a genome or
// in reads leave it DNA, while real proteins (about a quarter of their residues are ACGTN) never come near.
struct type_census {
    std::uint64_t letters = 0;     // every residue
    std::uint64_t nucleotides = 0; // A C G T U N
    std::uint64_t protein_only = 0;  // letters no nucleotide code uses: E F I J L O P Q Z and '*'
    seq_type type() const { return letters > 0 && nucleotides * 10 >= letters * 9 ? seq_type::dna : seq_type::protein; }
};
type_census census(std::span<const std::uint8_t> letters);

// A file is typed by its leading records: the rule over the letters of its records up to and including the one that
// reaches type_window residues (all of them in a smaller file). The same records type a FASTA database read in chunks
// of any size and the file makedb reads, so that `swgpu makedb` and `swgpu align` never disagree about a file.
constexpr std::uint64_t type_window = std::uint64_t(1) << 23;

// The type of a set by the rule above (its leading records' letters together). An empty set is protein.
seq_type detect_type(const sequence_set& set);

// "DNA" or "protein", for messages.
const char* type_name(seq_type t);

// Records shorter than this many letters are too short to be typed on their own (a 12-residue peptide can be all
// ACGT); they go with their file, except that a letter no nucleotide code uses makes a record protein at any length.
constexpr std::uint64_t min_typed_record = 20;

// The rule is asymmetric, as blastp is: every nucleotide string is also a valid protein string, so in a protein file
// a record whose letters look like DNA (poly-A, poly-G, an ACGT-only peptide) is protein, only counted for a warning
// (nucleotide_like below); in a DNA file a record with a letter no nucleotide code uses, or a record of at least
// min_typed_record letters that the rule types protein, is an error.
//
// The first record of `set` that cannot be of `type` by that rule; set.size() when every record can (always, for
// protein). Parallel over records for large sets (it runs on every database chunk).
std::size_t first_disagreeing(const sequence_set& set, seq_type type);

// "A.fa:NAME (record K): looks like protein (31 % of its 250 letters are ACGTUN) but the file looks like DNA ..."
// as an input error that names the values of --seqtype to give; `first_record` numbers set's records in their file.
[[noreturn]] void throw_mixed_types(const sequence_set& set, std::size_t record, seq_type file_type,
                                    std::uint64_t first_record = 1);

// A file's type by the rule, every record checked against it (throw_mixed_types for the first that cannot be of it).
seq_type classify(const sequence_set& set);

// The records of a protein file that the rule alone would type DNA (at least min_typed_record letters), tallied over
// the sets of a file read in parts: their count and the first of them, for one warning line.
struct nucleotide_like {
    std::uint64_t count = 0;
    std::uint64_t first_record = 0;  // numbered in the file, from 1
    std::string first_name;
    type_census first_census;
    // Tallies the records of `set`, the first of which is record `first_record` of its file.
    void add(const sequence_set& set, std::uint64_t first_record = 1);
    // "SOURCE:NAME (record K): its letters look like DNA (100 % of its 200 letters are ACGTUN); read as protein, as
    // the file is (N records in all)"; empty when there is none.
    std::string warning(const std::string& source) const;
};

}  // namespace swgpu
