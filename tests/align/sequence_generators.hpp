// Random and adversarial sequences for the tests, as matrix codes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/align/scoring.hpp"

namespace swgpu::testing {

using codes = std::vector<std::uint8_t>;

inline codes encode_letters(const std::string& letters, const substitution_matrix& m) {
    codes c(letters.size());
    for (std::size_t k = 0; k < letters.size(); ++k) c[k] = m.code(letters[k]);
    return c;
}

// Uniform over `alphabet` (letters of the matrix), length `n`.
inline codes random_sequence(std::mt19937_64& rng, std::size_t n, const std::string& alphabet, const substitution_matrix& m) {
    std::string s(n, ' ');
    for (auto& c : s) c = alphabet[rng() % alphabet.size()];
    return encode_letters(s, m);
}

// Lengths 1..max, log-uniform: many short pairs, some long ones.
inline std::size_t random_length(std::mt19937_64& rng, std::size_t max) {
    const double u = std::uniform_real_distribution<double>(0, std::log(double(max)))(rng);
    return std::clamp<std::size_t>(static_cast<std::size_t>(std::exp(u)), 1, max);
}

// A relative of `s`: point substitutions at `rate`, plus `gaps` indels of random length up to `max_gap`.
inline codes mutate(std::mt19937_64& rng, const codes& s, double rate, int gaps, int max_gap, const std::string& alphabet,
                    const substitution_matrix& m) {
    codes r = s;
    for (auto& c : r)
        if (std::uniform_real_distribution<double>(0, 1)(rng) < rate) c = m.code(alphabet[rng() % alphabet.size()]);
    for (int g = 0; g < gaps && !r.empty(); ++g) {
        const std::size_t pos = rng() % r.size(), len = 1 + rng() % max_gap;
        if (rng() % 2) r.erase(r.begin() + pos, r.begin() + std::min(r.size(), pos + len));
        else {
            auto ins = random_sequence(rng, len, alphabet, m);
            r.insert(r.begin() + pos, ins.begin(), ins.end());
        }
    }
    if (r.empty()) r.push_back(s.empty() ? m.code(alphabet[0]) : s[0]);
    return r;
}

inline const std::string protein20 = "ARNDCQEGHILKMFPSTWYV";
inline const std::string dna4 = "ACGT";

// The pair families the SW tests draw from: unrelated, related with substitutions, related with long gaps,
// identical, and length-1 sequences.
inline std::pair<codes, codes> random_pair(std::mt19937_64& rng, std::size_t max_len, const std::string& alphabet,
                                           const substitution_matrix& m) {
    const int family = static_cast<int>(rng() % 5);
    codes a = random_sequence(rng, random_length(rng, max_len), alphabet, m);
    switch (family) {
        case 0: return {a, random_sequence(rng, random_length(rng, max_len), alphabet, m)};
        case 1: return {a, mutate(rng, a, 0.3, 2, 5, alphabet, m)};
        case 2: return {a, mutate(rng, a, 0.05, 3, 200, alphabet, m)};
        case 3: return {a, a};
        default: return {random_sequence(rng, 1, alphabet, m), (rng() % 2) ? a : random_sequence(rng, 1, alphabet, m)};
    }
}

}  // namespace swgpu::testing
