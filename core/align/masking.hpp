// Low-complexity masking of queries, as BLAST's -seg (protein) and -dust (DNA) do it: the intervals are found on the
// letters, and the masked residues are then searched and aligned as X (protein) or N (DNA), BLAST's hard masking.
//
// SEG (Wootton & Federhen, Comput. Chem. 17:149, 1993; Methods Enzymol. 266:554, 1996), with blastp's parameters
// (window 12, locut 2.2, hicut 2.5): a window whose compositional entropy (bits, over the 20 standard amino acids) is
// at most locut triggers a segment; it is extended both ways over windows of entropy at most hicut, then trimmed to
// the sub-segment of least probable composition (Wootton & Federhen's P0, at most 50 residues trimmed), and the part
// trimmed off on the left is searched again. Letters other than the 20 (B Z X U O J *) count as no amino acid; a
// window holding more than 2 of them is neither a trigger nor an extension.
//
// Symmetric DUST (Morgulis et al., J. Comput. Biol. 13:1028, 2006), as dustmasker and blastn's -dust (level 20,
// window 64, linker 1): the triplet score of a stretch of l triplets is S = Σ_t c_t(c_t − 1)/2 over its triplet
// counts c_t; a stretch inside a window of 64 bases is a candidate when 10·S > level·(l − 1), and perfect when no
// perfect stretch inside it has a larger S/(l − 1). The masked intervals are the union of perfect stretches, those at
// most `linker` bases apart joined. Letters other than C, G and T count as A.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/align/sequence.hpp"

namespace swgpu {

// Residues [begin, end] of a sequence, 0-based inclusive (dustmasker's and segmasker's interval output).
struct masked_interval {
    std::size_t begin = 0, end = 0;
    bool operator==(const masked_interval&) const = default;
};

struct seg_parameters {
    int window = 12;
    double locut = 2.2, hicut = 2.5;
    int maxtrim = 50;   // most residues a segment loses in its optimisation
    int maxbogus = 2;   // windows with more letters outside the 20 amino acids have no entropy
};

struct dust_parameters {
    unsigned level = 20;
    unsigned window = 64;
    unsigned linker = 1;
};

// SEG's intervals of upper-case protein letters, ordered by start; they may overlap (as segmasker prints them).
std::vector<masked_interval> seg_intervals(std::span<const std::uint8_t> letters, const seg_parameters& p = {});
// DUST's intervals of upper-case nucleotide letters, ordered.
std::vector<masked_interval> dust_intervals(std::span<const std::uint8_t> letters, const dust_parameters& p = {});

enum class masking { seg, dust };

// Masks every record of an encoded set in place: each residue in the method's intervals becomes `mask_code` (the
// matrix's code of X or N). `mirror` is the set of the same records reverse-complemented (or null): a residue masked
// on the plus strand is masked at its mirrored position there too, as BLAST masks both strands of a DNA query.
// Returns the residues masked (of `set`).
std::uint64_t mask_low_complexity(sequence_set& set, sequence_set* mirror, const substitution_matrix& m,
                                  masking method, std::uint8_t mask_code);

}  // namespace swgpu
