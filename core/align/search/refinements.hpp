// What `swgpu align` and the library do around the search when asked: the queries' low-complexity residues masked
// (SEG for protein, DNA's DUST; BLAST's hard masking) and composition-based statistics (blastp -comp_based_stats 1:
// every kept hit realigned with the matrix rescaled to its pair's compositions). One home for both faces, so the
// library's hits are the command line's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "core/align/composition.hpp"
#include "core/align/masking.hpp"
#include "core/align/scoring.hpp"
#include "core/align/search/pipeline.hpp"

namespace swgpu {

// The preliminary hits that composition-based statistics then rescore, as BLAST keeps them: 2k + 50 hits per query,
// E-values up to 5 times the threshold.
inline std::size_t composition_preliminary_hits(std::size_t k) { return 2 * k + 50; }
inline double composition_preliminary_evalue(double evalue) { return 5 * evalue; }

// The queries as searched (masked) and as read (for the output, which shows their letters, identities and positives
// as BLAST does).
class query_masking {
public:
    // Masks the low-complexity residues of `queries` (both strands as searched) as the matrix's fallback letter (X,
    // N; for a matrix without one, the code scoring its lowest score against everything). Returns the residues masked.
    std::uint64_t mask(query_strands& queries, const substitution_matrix& m, masking kind);

    bool active() const { return active_; }
    // The queries as read: `searched` itself when nothing was masked.
    const query_strands& shown(const query_strands& searched) const { return active_ ? unmasked_ : searched; }
    // The printed hits' identities, mismatches and positives counted on the letters as read (BLAST counts a masked
    // residue that matches as an identity, though it scored as X); hits without alignments are left as they are.
    void unmask_hits(search_results& results, const substitution_matrix& m, bool alignments) const;

private:
    query_strands unmasked_;
    bool active_ = false;
};

// Composition-based statistics over the kept hits of `results` (searched with the widened limits above): each hit
// realigned, its score, bit score and E-value from that alignment, then the hits with E <= max_evalue, at most k per
// query, in E-value order (then score, subject). On `threads` threads (0: one per hardware thread).
void adjust_composition(search_results& results, const query_strands& queries, const scoring& sc,
                        const composition_adjustment& adjustment, std::size_t k, double max_evalue, int threads);

// Several alignments per (query, subject, strand) (--max-hsps N, BLAST's name): after each printed hit, the next
// alignments of its pair that share no aligned pair of residues with those before it, each with its own score, bit
// score and E-value, kept while E <= max_evalue (every positive score without statistics), at most max_hsps in all
// per hit. `shown` gives the queries as read (their letters for identities and positives). Found by the long-pair
// method with forbidden steps (long_pair::align_more, the full-matrix Waterman-Eggert's alignments in linear memory):
// pairs of at most long.hsp_cells cells (data/tuning.tsv) a pair a thread on `threads` threads (0: one per hardware
// thread), larger ones one after the other on all of them, with a progress line on a terminal when `progress`.
// Returns how many pairs went the one-at-a-time way. With `composition` (--comp-based-stats 1: the hits were
// realigned with their pair's adjusted matrix M'), the further alignments are those under M' and the gaps x32 (full
// matrices, core/align/hsps.hpp), their scores and E-values as adjust_composition gives them; pairs above
// long.hsp_cells then keep their one alignment.
//
// With zdrop >= 0 (--zdrop Z, DNA; core/align/zdrop.hpp): every alignment so found (at most max_hsps per pair, the
// hit's first) is cut into its collinear blocks by minimap2's Z-drop rule, and the max_hsps best blocks of the pair
// with E <= max_evalue are printed instead, the best in the hit's place (its score, bit score and E-value the
// block's), the others after it; a pair none of whose blocks passes is no longer printed. The further alignments stop
// as soon as no later one can give a block among those printed (each of its blocks scores at most the alignment,
// which scores at most the one before), so the printed blocks do not depend on where they stop. The hits of a query
// are then ordered again by their best blocks (E-value, score, subject, plus strand first), and the search's kept
// hits of those pairs (the other placements SAM's and PAF's MAPQ weigh) take their best block's score. Runs with
// max_hsps 1 too (each pair's best block, no further alignment).
//
// `long_backend`, when given (a search on GPUs), makes the backend of the further alignments of pairs above
// long.hsp_cells (core/align/long_pair/long_pair.hpp: one per pair, forbidden steps on the device); else the CPU's.
using long_backend_factory = std::function<std::unique_ptr<long_pair::backend>(std::span<const std::uint8_t> query,
                                                                                std::span<const std::uint8_t> subject)>;
std::size_t add_hsps(search_results& results, const query_strands& searched, const query_strands& shown,
                     const scoring& sc, int max_hsps, double max_evalue, int threads, bool progress = false,
                     const composition_adjustment* composition = nullptr, int zdrop = -1,
                     const long_backend_factory& long_backend = {});

// The steps after the score pass, written once for every face (the command line, the C++ library, Python), in this
// order, each reading what the step before left:
//   1. composition-based statistics (`composition`): every kept hit realigned under its pair's matrix M', then the
//      hits with E <= evalue, at most k, in E-value order; first, since every later step reads the final hits;
//   2. the k best of the kept hits printed (a run that kept more than k, as SAM keeps max(k, 2) for MAPQ; not after
//      step 1, which applied k in its own order);
//   3. further alignments per pair (max_hsps > 1), from the printed hits (under M' after step 1), and with zdrop >= 0
//      every alignment cut into its collinear blocks (add_hsps);
//   4. identities, mismatches and positives counted on the queries' letters as read (masking): after every step
//      that makes alignments, so that each printed alignment counts a masked residue as BLAST does;
//   5. `placements`, when given (SAM's and PAF's MAPQ: a read's best alignment apart from its primary hit, which
//      needs the session's windows of long subjects).
struct refinement_options {
    const composition_adjustment* composition = nullptr;
    std::size_t k = 500;
    double evalue = 10;     // -e
    bool evalues = true;    // false: no statistics; further alignments are kept while their score is positive
    int max_hsps = 1;
    int zdrop = -1;         // --zdrop Z (DNA): alignments cut into collinear blocks; -1: not cut
    int threads = 0;        // 0: one per hardware thread
    bool progress = false;  // a progress line on a terminal for further alignments of long pairs
    bool alignments = true; // the printed hits carry alignments (else there is nothing to count on the letters)
    std::function<void(search_results&)> placements;
    long_backend_factory long_backend;  // the further alignments of long pairs on GPUs (add_hsps); empty: the CPU's
};

// Returns the pairs step 3 searched again in linear memory, one forward pass per further alignment (a -v note).
std::size_t refine_results(search_results& results, const query_strands& searched, const query_masking& masking,
                          const scoring& sc, const refinement_options& opt);

}  // namespace swgpu
