// Statistics of local alignment scores: bit scores and E-values as `blastp -comp_based_stats 0 -seg no` reports them
// (docs/conventions.md).
//
// For a raw score S of a query of length m against a subject of length n in a database of D residues:
//   bit score  S' = (λS − ln K) / ln 2
//   E-value    E  = K · e^{−λS} · area(S, m, n) · D / n          (Spouge's finite-size correction, NCBI BLAST_SpougeStoE)
// where area(S, m, n) replaces the product of the lengths m·n by its expectation over the random lengths of optimal
// alignments: the length of an alignment scoring S along one sequence has mean a·S + b and variance
// max(2α_v/λ, α_v·S + β_v), and the lengths along the two sequences covary with max(2σ/λ, σ·S + τ). With Φ and φ the
// standard normal distribution and density,
//   μ_m = m − (a·S + b),  v_m = max(2α_v/λ, α_v·S + β_v),  z_m = μ_m/√v_m,  p_m = μ_m·Φ(z_m) + √v_m·φ(z_m)
//   (likewise p_n for n),  c = max(2σ/λ, σ·S + τ),  area = p_m·p_n + c·Φ(z_m)·Φ(z_n).
// The pairwise E-value K·e^{−λS}·area is scaled by D/n, the number of subjects of length n the database could hold, as
// BLAST does in database searches. For large m, n and small S, area → m·n and E → K·m·D·e^{−λS}, the Karlin-Altschul
// formula; for strong hits the correction is orders of magnitude (the alignment does not fit in the sequences).
//
// λ, K, H, a (= alpha), b_table (= beta), α_v, σ come from NCBI's tables (blast_stat.c, from Altschul et al. 2001 and
// Spouge's FSC tables) for each (matrix, gap open, gap extend) in BLAST's convention; the intercepts are derived from
// the gapped row and the matrix's ungapped row with G = open + extend: b = 2G(a_un − a), β_v = 2G(α_v,un − α_v),
// τ = 2G(α_v,un − σ).
//
// DNA with uniform match/mismatch scores follows `blastn -task blastn -dust no`: NCBI has no Spouge parameters for
// DNA, so blastn uses Karlin-Altschul, E = K·(m − ℓ)·(D − N·ℓ)·e^{−λS}, with the table's λ, K, alpha, beta for the
// (reward, penalty, open, extend) and BLAST's length adjustment ℓ (length_adjustment below) for a database of D
// residues in N sequences; m is the length of one strand of the query. For the tables 2/−3, 2/−5, 2/−7 and 3/−4 the
// parameters hold for even scores and blastn rounds an odd score down before computing its E-value (its bit score
// uses the score unrounded).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/align/evalue_rank.hpp"
#include "core/align/scoring.hpp"

namespace swgpu {

struct gumbel_params {
    double lambda = 0;   // λ of the gapped score distribution (per raw score unit)
    double K = 0;        // Karlin-Altschul K
    double H = 0;        // relative entropy (nats per aligned pair); reported, not used in E-values
    double alpha = 0;    // a: mean alignment length grows as alpha·S + beta
    double beta = 0;     // the table's intercept of the mean length (BLAST's length adjustment; not used by Spouge)
    double sigma = 0;    // slope of the covariance of the two alignment lengths
    double alpha_v = 0;  // slope of the variance of an alignment length
    double C = 0;        // Spouge's prefactor of the p-value (tabulated; E-values do not use it)
    // Spouge's intercepts, derived as described above.
    double b = 0;        // intercept of the mean length
    double beta_v = 0;   // intercept of the variance
    double tau = 0;      // intercept of the covariance
};

// One row of the supported parameter tables, for listing and tests.
struct gumbel_table_entry {
    const char* matrix;  // NCBI's name: BLOSUM45, BLOSUM50, BLOSUM62, BLOSUM80, BLOSUM90, PAM30, PAM70, PAM250
    int gap_open, gap_extend;
    gumbel_params params;
};

// Every supported (matrix, gap) pair with its parameters, in NCBI's table order.
std::vector<gumbel_table_entry> gumbel_table();

class evalue_calculator {
public:
    // `db_residues` and `db_sequences` describe the whole database searched (all chunks, GPUs and ranks together);
    // db_residues = 0 gives pairwise E-values (no database scaling). A protein matrix is recognised by its scores (the
    // 20 standard amino acids must score as in NCBI's matrix of that name), so a copy read from a file works too; DNA
    // scoring by its match and mismatch scores on A, C, G, T.
    // Throws swgpu::error(bad_command_line) naming the supported (matrix, gap) pairs when there is no table entry.
    evalue_calculator(const scoring& sc, std::uint64_t db_residues, std::uint64_t db_sequences);

    static bool supported(const scoring& sc);

    // (λS − ln K)/ln 2
    double bit_score(int raw) const;
    // E-value of raw score `raw` for a query of `query_length` residues against a subject of `subject_length`
    // residues (both >= 1), scaled to the database as BLAST does: Spouge's for protein, Karlin-Altschul with length
    // adjustment for DNA (where the subject length enters only without a database).
    double evalue(int raw, std::uint64_t query_length, std::uint64_t subject_length) const;
    // The protein E-value of a score that need not be an integer (a composition-adjusted score S'/32: BLAST scales λ
    // and Spouge's slopes with the scores, which comes to the same).
    double evalue_of_score(double score, std::uint64_t query_length, std::uint64_t subject_length) const;

    // The parameters by which hits are ordered by E-value (core/align/evalue_rank.hpp); none for DNA, whose E-values
    // in a database search fall as the score rises.
    const spouge_shape* ranking() const { return karlin_altschul_ ? nullptr : &ranking_shape_; }

    const gumbel_params& params() const { return params_; }
    // NCBI's name of the matrix the scores were recognised as, e.g. "BLOSUM62".
    const std::string& matrix_name() const { return matrix_name_; }

private:
    int statistical_score(int raw) const;  // raw, or raw rounded down to even where the E-value parameters need it

    gumbel_params params_;
    spouge_shape ranking_shape_;
    std::string matrix_name_;
    std::uint64_t db_residues_ = 0;
    std::uint64_t db_sequences_ = 0;
    bool karlin_altschul_ = false;  // DNA (blastn) rather than Spouge (blastp)
    bool even_scores_ = false;
};

// BLAST's length adjustment ℓ for a query of m residues and a database of D residues in N sequences: the largest
// integer ℓ >= 0 with ℓ <= (alpha/λ)·(ln K + ln((m − ℓ)(D − N·ℓ))) + beta, among those that leave a search space
// K·(m − ℓ)·(D − N·ℓ) of at least max(m, D).
std::int64_t length_adjustment(double K, double alpha_over_lambda, double beta, double m, double D, double N);

// BLAST's tabular (-outfmt 6/7) text of an E-value: "0.0" below 1e-180, "%.2e" below 0.0009 ("7.48e-66"), then
// "%.3f", "%.2f", "%.1f" below 0.1, 1 and 10, and "%.0f" from 10 on ("0.033", "0.55", "1.3", "743").
std::string format_evalue(double e);
// BLAST's tabular text of a bit score: "%4.1f" up to 99.9 (" 8.8", "45.1": BLAST keeps the leading space below 10),
// the integer part above 99.9 ("192", truncated, not rounded), "%5.3e" above 99999.
std::string format_bit_score(double b);

}  // namespace swgpu
