#include "io/align/seq_id.hpp"

#include <array>
#include <vector>

namespace swgpu::io {

namespace {

bool upper(char c) { return c >= 'A' && c <= 'Z'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool upper_or_digit(char c) { return upper(c) || digit(c); }

// An accession and its version: "P12345.2" -> P12345, P12345.2; no version when what follows the last '.' is not
// all digits.
accession versioned(std::string_view a) {
    const auto dot = a.rfind('.');
    if (dot == std::string_view::npos || dot + 1 == a.size() || dot == 0) return {std::string(a), std::string(a)};
    for (std::size_t k = dot + 1; k < a.size(); ++k)
        if (!digit(a[k])) return {std::string(a), std::string(a)};
    return {std::string(a.substr(0, dot)), std::string(a)};
}

bool refseq(std::string_view s) {  // NP_000001, NZ_CP012345
    if (s.size() < 4 || !upper(s[0]) || !upper(s[1]) || s[2] != '_') return false;
    for (std::size_t k = 3; k < s.size(); ++k)
        if (!upper_or_digit(s[k])) return false;
    return true;
}

bool insdc(std::string_view s) {  // GenBank, EMBL, DDBJ: capitals, then digits
    std::size_t letters = 0;
    while (letters < s.size() && upper(s[letters])) ++letters;
    for (std::size_t k = letters; k < s.size(); ++k)
        if (!digit(s[k])) return false;
    const std::size_t digits = s.size() - letters;
    switch (letters) {
        case 1: return digits == 5;
        case 2: return digits == 6 || digits == 8;
        case 3: return digits == 5 || digits == 7;
        case 4: return digits >= 8 && digits <= 10;
        case 6: return digits >= 9 && digits <= 11;
        default: return false;
    }
}

bool uniprot(std::string_view s) {  // UniProt's accession format
    if (s.size() == 6 && (s[0] == 'O' || s[0] == 'P' || s[0] == 'Q'))
        return digit(s[1]) && upper_or_digit(s[2]) && upper_or_digit(s[3]) && upper_or_digit(s[4]) && digit(s[5]);
    if ((s.size() != 6 && s.size() != 10) || !upper(s[0]) || (s[0] >= 'O' && s[0] <= 'Q') || !digit(s[1]))
        return false;
    for (std::size_t at = 2; at < s.size(); at += 4)
        if (!upper(s[at]) || !upper_or_digit(s[at + 1]) || !upper_or_digit(s[at + 2]) || !digit(s[at + 3]))
            return false;
    return true;
}

std::vector<std::string_view> split_bars(std::string_view id) {
    std::vector<std::string_view> out;
    for (std::size_t at = 0;;) {
        const auto bar = id.find('|', at);
        out.push_back(id.substr(at, bar == std::string_view::npos ? std::string_view::npos : bar - at));
        if (bar == std::string_view::npos) return out;
        at = bar + 1;
    }
}

constexpr std::array<std::string_view, 13> versioned_tags = {"sp",  "tr",  "gb",  "emb", "dbj", "ref", "pir",
                                                             "prf", "tpg", "tpe", "tpd", "gpp", "nat"};

}  // namespace

accession accession_of(std::string_view id) {
    const auto f = split_bars(id);
    const accession whole{std::string(id), std::string(id)};
    if (f.size() == 1) {
        const auto stem = versioned(id).acc;
        return refseq(stem) || insdc(stem) || uniprot(stem) ? versioned(id) : whole;
    }
    const std::string_view tag = f[0];
    if (f[1].empty()) return whole;
    if (tag == "gi") {  // the id that follows the gi number, if any, names the sequence
        if (f.size() >= 3 && !f[2].empty()) return accession_of(id.substr(f[0].size() + f[1].size() + 2));
        return {std::string(f[1]), std::string(f[1])};
    }
    if (tag == "lcl") return {std::string(f[1]), std::string(f[1])};
    if (tag == "gnl" && f.size() >= 3) {
        const std::string s = std::string(f[1]) + ":" + std::string(f[2]);
        return {s, s};
    }
    if (tag == "pdb") {
        const std::string s = f.size() >= 3 && !f[2].empty() ? std::string(f[1]) + "_" + std::string(f[2])
                                                             : std::string(f[1]);
        return {s, s};
    }
    for (const auto t : versioned_tags)
        if (tag == t) return versioned(f[1]);
    return whole;
}

}  // namespace swgpu::io
