// Scoring: substitution matrices, gap costs and the alphabet mapping (docs/conventions.md).
//
// Gap costs follow BLAST: a gap of length k costs open + k·extend, both positive penalties. Residues are stored as
// small codes: the index of the letter in the matrix's header row. Letters outside the matrix map to the matrix's
// fallback letter (X for protein; N, else X, for DNA) and are counted. A matrix without that letter gets one more
// code for it, after its own letters, scoring the matrix's lowest score against every letter (itself included): an
// unknown letter never scores as some residue the matrix happens to have.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace swgpu {

enum class seq_type { protein, dna };

struct gap_costs {
    int open = 11;   // >= 0
    int extend = 1;  // >= 1
    int first() const { return open + extend; }  // cost of a gap of length 1
};

class substitution_matrix {
public:
    static constexpr int max_letters = 32;
    static constexpr std::uint8_t no_code = 0xff;

    // A matrix in NCBI text format: '#' comment lines, a header row of single letters, then one row per letter
    // starting with that letter. `source` names the file in error messages. Throws swgpu::error (bad_input).
    static substitution_matrix parse_ncbi(std::string_view text, const std::string& name, const std::string& source);
    // One of the matrices shipped in data/matrices (compiled into the program). Throws a usage error naming the
    // available ones when `name` is unknown.
    static substitution_matrix builtin(std::string_view name);
    static std::vector<std::string> builtin_names();
    // DNA scoring with a match reward and a mismatch penalty over A C G T N (N scores `mismatch` against everything).
    static substitution_matrix match_mismatch(int match, int mismatch);

    const std::string& name() const { return name_; }
    // The letters of the matrix's header row, in code order.
    const std::string& letters() const { return letters_; }
    // Codes in use: the header's letters, plus the added fallback letter when the matrix has none (fallback_added).
    int size() const { return static_cast<int>(code_letters_.size()); }
    int score(std::uint8_t a, std::uint8_t b) const { return scores_[a * max_letters + b]; }
    // Row-major max_letters x max_letters table (unused entries 0): for SIMD and GPU profiles.
    const std::array<std::int8_t, max_letters * max_letters>& table() const { return scores_; }
    int max_score() const { return max_; }
    int min_score() const { return min_; }
    // Code of a letter (case-insensitive; U reads as T in DNA matrices), or the fallback code for any other byte.
    std::uint8_t code(char letter) const { return code_[static_cast<unsigned char>(letter)]; }
    bool known(char letter) const { return known_[static_cast<unsigned char>(letter)]; }
    char letter(std::uint8_t code) const { return code_letters_[code]; }
    std::uint8_t fallback_code() const { return fallback_; }
    // True when the matrix has no fallback letter of its own: fallback_code() is the added code after its letters,
    // which scores min_score() against every code.
    bool fallback_added() const { return fallback_added_; }

private:
    void finalize();

    std::string name_;
    std::string letters_;
    std::string code_letters_;  // letters_, then the added fallback letter if any
    std::array<std::int8_t, max_letters * max_letters> scores_{};
    std::array<std::uint8_t, 256> code_{};
    std::array<bool, 256> known_{};
    std::uint8_t fallback_ = no_code;
    bool fallback_added_ = false;
    int max_ = 0, min_ = 0;
};

struct scoring {
    substitution_matrix matrix;
    gap_costs gaps;
    seq_type type = seq_type::protein;
};

// Default gap costs for a built-in matrix (BLAST's defaults: BLOSUM62 11/1, BLOSUM45 14/2, ...; match/mismatch 5/2;
// NUC.4.4 10/6, the first pair with E-value parameters for its 5/-4). Other names: 11/1.
gap_costs default_gaps(std::string_view matrix_name);
// The default for a matrix used on sequences of `type`: protein by name as above; DNA 5/2 (blastn), or 10/6 where the
// matrix scores A C G T as NUC.4.4 does (5/-4), whether built in or read from a file.
gap_costs default_gaps(const substitution_matrix& m, seq_type type);

// Validates gap costs: open >= 0, extend >= 1, and the scores fit comfortably in 32 bits. Throws a usage error.
void validate(const scoring& s);

}  // namespace swgpu
