#include "core/align/strand.hpp"

#include <array>
#include <cctype>

#include "core/error.hpp"

namespace swgpu {

namespace {

constexpr std::array<char, 256> make_complements() {
    std::array<char, 256> t{};
    for (int c = 0; c < 256; ++c) t[c] = static_cast<char>(c);
    constexpr const char* pairs[] = {"AT", "UA", "CG", "RY", "KM", "BV", "DH", "SS", "WW", "NN"};
    for (const char* p : pairs) {
        const char a = p[0], b = p[1];
        t[static_cast<unsigned char>(a)] = b;
        t[static_cast<unsigned char>(a + ('a' - 'A'))] = static_cast<char>(b + ('a' - 'A'));
        if (a != 'U') {  // U -> A, but A -> T
            t[static_cast<unsigned char>(b)] = a;
            t[static_cast<unsigned char>(b + ('a' - 'A'))] = static_cast<char>(a + ('a' - 'A'));
        }
    }
    return t;
}

constexpr std::array<char, 256> complements = make_complements();

}  // namespace

char complement(char letter) { return complements[static_cast<unsigned char>(letter)]; }

std::string reverse_complement(std::string_view letters) {
    std::string out(letters.rbegin(), letters.rend());
    for (auto& c : out) c = complement(c);
    return out;
}

sequence_set reverse_complement(const sequence_set& letters) {
    if (letters.encoded)
        throw runtime_failure("reverse_complement needs letters; it was given sequences already encoded for a matrix");
    sequence_set out;
    out.source = letters.source;
    out.residues.reserve(letters.residues.size());
    out.offsets.reserve(letters.offsets.size());
    out.names.reserve(letters.names.size());
    for (std::size_t k = 0; k < letters.size(); ++k) {
        auto seq = letters[k];
        out.names.push_back(letters.names[k]);
        for (auto it = seq.rbegin(); it != seq.rend(); ++it)
            out.residues.push_back(static_cast<std::uint8_t>(complement(static_cast<char>(*it))));
        out.offsets.push_back(out.residues.size());
    }
    return out;
}

}  // namespace swgpu
