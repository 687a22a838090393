// A set of sequences stored end to end: one residue buffer, offsets, names. Residues are letters as read; encode()
// turns them into the codes of a substitution matrix in place.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/scoring.hpp"

namespace swgpu {

struct sequence_set {
    std::vector<std::uint8_t> residues;      // all records, concatenated
    std::vector<std::uint64_t> offsets{0};   // record k is residues[offsets[k], offsets[k+1])
    std::vector<std::string> names;          // first word of the header
    std::string source;                      // file name, for messages
    bool encoded = false;

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
    }
    void add(std::string name, const std::string& letters) {
        add(std::move(name), std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(letters.data()),
                                                           letters.size()));
    }
};

// Letters -> matrix codes. Returns how many residues were not letters of the matrix (mapped to its fallback letter).
// Throws a bad-input error naming the record when a letter is unknown and the matrix has no fallback letter.
std::uint64_t encode(sequence_set& set, const substitution_matrix& m);

// Codes -> letters (for output of aligned segments).
std::string decode(std::span<const std::uint8_t> codes, const substitution_matrix& m);

// auto-detection for --seqtype auto: DNA when every residue is one of ACGTUN (any case).
seq_type detect_type(const sequence_set& set);

}  // namespace swgpu
