#include "core/sequence.hpp"

#include "core/error.hpp"

namespace swgpu {

std::uint64_t encode(sequence_set& set, const substitution_matrix& m) {
    if (set.encoded) return 0;
    std::uint64_t unknown = 0;
    for (std::size_t k = 0; k < set.size(); ++k) {
        for (auto p = set.offsets[k]; p < set.offsets[k + 1]; ++p) {
            const char c = static_cast<char>(set.residues[p]);
            if (!m.known(c)) {
                ++unknown;
                if (m.fallback_code() == substitution_matrix::no_code)
                    throw input_error(set.source + ":" + set.names[k],
                                      std::string("residue '") + c + "' is not a letter of matrix " + m.name() +
                                          ", which has no X or N to stand for unknown letters");
            }
            set.residues[p] = m.code(c);
        }
    }
    set.encoded = true;
    return unknown;
}

std::string decode(std::span<const std::uint8_t> codes, const substitution_matrix& m) {
    std::string s(codes.size(), ' ');
    for (std::size_t k = 0; k < codes.size(); ++k) s[k] = m.letter(codes[k]);
    return s;
}

seq_type detect_type(const sequence_set& set) {
    for (auto r : set.residues) {
        switch (r) {
            case 'A': case 'C': case 'G': case 'T': case 'U': case 'N':
            case 'a': case 'c': case 'g': case 't': case 'u': case 'n': break;
            default: return seq_type::protein;
        }
    }
    return set.residues.empty() ? seq_type::protein : seq_type::dna;
}

}  // namespace swgpu
