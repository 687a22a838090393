// Letters to a substitution matrix's codes, a run at a time: the step every database residue takes once (the .swdb
// reader's copy, encode() of a FASTA chunk). One table lookup per byte on the portable path; on AVX2, 32 letters at a
// time for the bytes 0x40-0x7F (every letter A-Z, a-z), the portable path taking any 32 bytes holding another.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/align/scoring.hpp"
#include "core/align/simd/isa.hpp"

namespace swgpu {

// A matrix's code of every byte, with 0x80 set where the matrix does not know the letter (codes are below
// substitution_matrix::max_letters = 32, so the bit is free).
struct letter_codes {
    std::array<std::uint8_t, 256> table{};
    explicit letter_codes(const substitution_matrix& m);
};

// out[i] = the code of in[i] for i < n (in == out allowed, other overlaps not); returns how many letters the matrix
// does not know. `use` picks the instruction set (tests run each; the default is the best this CPU runs).
std::uint64_t encode_letters(const letter_codes& codes, const std::uint8_t* in, std::uint8_t* out, std::size_t n,
                             simd::isa use = simd::best_isa());

}  // namespace swgpu
