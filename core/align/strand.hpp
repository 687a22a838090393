// DNA strands: the complement of IUPAC nucleotide letters and the reverse complement of sequences.
//
// A minus-strand search aligns the reverse complement of the query against the subject as given (docs/conventions.md
// "DNA strands"). Complements follow IUPAC: A<->T (U reads as T, so U -> A), C<->G, R<->Y, K<->M, B<->V, D<->H, and
// S, W, N are their own complements; case is kept; any other byte (a protein letter, '*', '-') is left as it is.
#pragma once

#include <string>
#include <string_view>

#include "core/align/sequence.hpp"

namespace swgpu {

char complement(char letter);

// Letters in reverse order, each complemented; '-' gap columns stay gaps (for aligned rows).
std::string reverse_complement(std::string_view letters);

// Every record reverse-complemented, names and order kept. The set must hold letters (encode() not yet called):
// complements are defined on letters, not on a matrix's codes.
sequence_set reverse_complement(const sequence_set& letters);

}  // namespace swgpu
