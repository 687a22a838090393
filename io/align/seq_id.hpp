// Accessions from FASTA ids, as BLAST+ derives its sacc and saccver columns (blastp -parse_deflines, or a database
// made with makeblastdb -parse_seqids; without them BLAST prints the whole id in both).
//
//   sp|P12345.2|NAME_HUMAN   -> P12345, P12345.2      (sp tr gb emb dbj ref pir prf tpg tpe tpd gpp nat: the field
//   gi|123|ref|NP_000001.1|  -> NP_000001, NP_000001.1    after the tag, its version after the last '.')
//   gi|123                   -> 123                   pdb|1ABC|A -> 1ABC_A     lcl|x.1 -> x.1
//   gnl|DB|TAG               -> DB:TAG                NP_000001.1, P12345.2, AB123456.1 -> without and with version
//   seq1, chr1.2, ENSP00000354587.3 -> the id itself in both (no accession format: BLAST's local ids)
//
// A plain id (no '|') is read as an accession when its part before a ".VERSION" has the form of an NCBI or UniProt
// accession: RefSeq (two capitals, '_', letters and digits), INSDC (capitals then digits: 1+5, 2+6, 2+8, 3+5, 3+7,
// 4+8..10, 6+9..11) or UniProt ([OPQ]9XXX9, [A-NR-Z]9(A XX9){1,2}).
#pragma once

#include <string>
#include <string_view>

namespace swgpu::io {

struct accession {
    std::string acc;     // without version (BLAST's sacc, qacc)
    std::string accver;  // with version (saccver, qaccver)
};

accession accession_of(std::string_view id);

}  // namespace swgpu::io
