// Composition-based statistics (Schäffer et al., Nucleic Acids Res. 29:2994, 2001), the method of
// `blastp -comp_based_stats 1` (docs/align.md, "Composition-based statistics").
//
// For a query and a subject with amino-acid compositions q and s (the 20 standard letters; X, masked residues and
// other letters are not counted), the matrix is rescaled so that its ungapped λ in that context is the λ it has for
// the standard background:
//   λ_pair    solves Σ_ij q_i s_j e^{λ M_ij} = 1, M the matrix of the frequency ratios scaled by 32:
//             M_ij = round(ln(f_ij) / (λ_ideal/32)), λ_ideal the ungapped λ of the matrix's integer scores on the
//             Robinson & Robinson background frequencies (BLOSUM62: 0.3176);
//   r         = λ_pair / (λ_ideal/32), clamped to [0.5, 1];
//   M'_ij     = round(r · ln(f_ij) / (λ_ideal/32)) for the letters with frequency ratios; X (and U) score the
//             expected score of their row or column in this context (at most −1); '*' keeps M.
// The alignment is then recomputed with M' and the gap costs ×32; its score S' gives the printed score round(S'/32),
// the bit score from that rounded score, and the E-value from S'/32 with the standard (gapped) parameters.
//
// Before the subject's composition is counted, the subject is masked with SEG (window 10, locut 1.8, hicut 2.1), as
// BLAST does in this stage, unless the hit is near-identical (an ungapped alignment over at least min(query length,
// 50) residues with at least 98 % identities).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/align/alignment.hpp"
#include "core/align/scoring.hpp"
#include "core/align/smith_waterman.hpp"

namespace swgpu {

// The scale of BLAST's composition-adjusted matrices.
inline constexpr int composition_scale = 32;
// The least λ ratio BLAST applies.
inline constexpr double min_lambda_ratio = 0.5;

// Letter probabilities of the 20 standard amino acids, in the order ARNDCQEGHILKMFPSTWYV.
struct aa_composition {
    std::array<double, 20> p{};
    std::size_t residues = 0;  // standard residues counted
};

// Index of a letter among ARNDCQEGHILKMFPSTWYV (case-insensitive), or -1.
int standard_aa_index(char letter);
// The Robinson & Robinson background frequencies (BLAST's standard composition), normalised.
const std::array<double, 20>& standard_aa_frequencies();
// The composition of encoded residues (codes of `m`); letters other than the 20 are not counted.
aa_composition composition_of(std::span<const std::uint8_t> residues, const substitution_matrix& m);

// The positive λ with Σ_ij row_i col_j e^{λ score(i, j)} = 1 over the 20 letters (scores indexed as above), or −1
// when there is none (no positive score with non-zero probability, or an expected score >= 0).
double ungapped_lambda(const std::array<double, 400>& scores, const std::array<double, 20>& row,
                       const std::array<double, 20>& col);

// A matrix of 32-bit scores over a substitution matrix's codes (rows: query, columns: subject).
struct wide_matrix {
    std::array<std::int32_t, substitution_matrix::max_letters * substitution_matrix::max_letters> scores{};
    int at(std::uint8_t q, std::uint8_t s) const { return scores[q * substitution_matrix::max_letters + s]; }
};

class composition_adjustment {
public:
    // The matrices blastp supports in this mode: BLOSUM45, BLOSUM50, BLOSUM62, BLOSUM80, BLOSUM90, PAM30, PAM70 and
    // PAM250 (NCBI's frequency ratios are built in for them). `m` is recognised by its scores on the 20 standard
    // letters (the rounded frequency ratios), so a copy read from a file works too.
    static bool supported(const substitution_matrix& m);
    // NCBI's name of the matrix `m` is recognised as, or nullptr.
    static const char* ncbi_matrix(const substitution_matrix& m);
    // Throws usage_error unless supported(m).
    explicit composition_adjustment(const substitution_matrix& m);

    const char* matrix_name() const { return name_; }      // NCBI's name of the recognised matrix
    double ideal_lambda() const { return ideal_lambda_; }  // ungapped λ of the integer matrix, standard background
    // λ of the ×32 frequency-ratio matrix for these compositions, over ideal_lambda()/32 (unclamped; −1 when there
    // is no λ).
    double raw_lambda_ratio(const aa_composition& query, const aa_composition& subject) const;
    // raw_lambda_ratio clamped to [0.5, 1].
    double lambda_ratio(const aa_composition& query, const aa_composition& subject) const;
    // M' for a ratio and the two compositions (X and U scores depend on them).
    wide_matrix scaled_matrix(double ratio, const aa_composition& query, const aa_composition& subject) const;

    struct result {
        bool aligned = false;     // false: no adjustment possible (a sequence without standard residues) or score 0
        alignment aln;            // with the subject as given (masked residues only scored as X); aln.score = S'
                                  // (after score(): S' and the end cell only, no operations)
        double lambda_ratio = 1;  // clamped
        bool subject_masked = false;  // SEG masked some of the subject
        wide_matrix matrix;           // M' (when aligned), for further alignments of the pair (--max-hsps)
        std::vector<std::uint8_t> searched;  // the subject as aligned: SEG-masked residues as X
    };
    // The whole stage for one pair: SEG on the subject (unless near-identical to the query in `standard`, the
    // alignment with the standard matrix), compositions, M', and the Smith-Waterman alignment with M' and the gap
    // costs ×32.
    result adjust(std::span<const std::uint8_t> query, const aa_composition& query_composition,
                  std::span<const std::uint8_t> subject, const alignment& standard, const gap_costs& gaps) const;
    // adjust() in three steps, so that a search can rank every pair by S' and trace back only those it prints (and
    // keep no pair's matrix meanwhile): prepare() is SEG, the compositions and M' (ready when both sequences have
    // standard residues); score() the score pass (aln holds S' and the end cell; aligned when S' > 0); trace() the
    // alignment's operations and begin, as adjust() gives them.
    struct prepared : result {
        bool ready = false;
    };
    prepared prepare(std::span<const std::uint8_t> query, const aa_composition& query_composition,
                     std::span<const std::uint8_t> subject, const alignment& standard) const;
    static void score(std::span<const std::uint8_t> query, result& r, const gap_costs& gaps);
    static void trace(std::span<const std::uint8_t> query, result& r, const gap_costs& gaps);

private:
    // The frequency ratio of two NCBIstdaa letters (gap letter excluded: 0 is A).
    double freq_ratio(int a, int b) const { return ratios_[a * 27 + b]; }

    const substitution_matrix* m_;
    const char* name_ = nullptr;
    const double* ratios_ = nullptr;  // 27 × 27, row-major
    double ideal_lambda_ = 0;
    std::array<int, substitution_matrix::max_letters> stdaa_{};  // code -> NCBIstdaa index (X for unknown)
    std::array<double, 400> start_{};                              // M over the 20 letters, for λ_pair
};

// Smith-Waterman-Gotoh with 32-bit scores, end cell and traceback conventions as sw_align
// (core/align/smith_waterman.hpp); memory: one byte per cell. The reference of the two passes below.
alignment sw_align_wide(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                        const wide_matrix& m, int gap_open, int gap_extend);
// The best score of sw_align_wide and its end cell, without the traceback: SIMD (core/align/simd/align_scored.hpp)
// where the CPU has it, else scalar in linear memory.
sw_end sw_score_wide(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const wide_matrix& m,
                     int gap_open, int gap_extend);
// sw_align_wide for a pair whose best score and end cell `end` sw_score_wide gave (as sw_traceback for sw_align): the SIMD traceback of
// sw_align_wide_scored (tiles along the path, from checkpoints), else sw_align_wide.
alignment sw_traceback_wide(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                            const wide_matrix& m, int gap_open, int gap_extend, const sw_end& end);

// BLAST's rounding of a scaled score to the printed one: the nearest integer, halves away from zero.
int unscale_score(int scaled);

}  // namespace swgpu
