#include "core/align/sequence.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/align/letter_codes.hpp"
#include "core/error.hpp"

namespace swgpu {

std::uint64_t encode(sequence_set& set, const substitution_matrix& m) {
    if (set.encoded) return 0;
    // Slices of the residues on threads of their own (a database chunk of ~10^8 residues took ~70 ms on one thread,
    // the reader thread's largest share, which fell behind several GPUs). Each slice counts its unknown letters.
    const std::uint64_t total = set.residues.size();
    const std::uint64_t min_slice = std::uint64_t(1) << 22;
    const unsigned threads = static_cast<unsigned>(std::clamp<std::uint64_t>(
        std::min<std::uint64_t>(std::max(1u, std::thread::hardware_concurrency()), 16), 1,
        std::max<std::uint64_t>(1, total / min_slice)));
    std::vector<std::uint64_t> unknown_in(threads, 0);
    const letter_codes codes(m);
    const auto run = [&](unsigned t) {
        const std::uint64_t b = total * t / threads, e = total * (t + 1) / threads;
        std::uint8_t* res = set.residues.data();
        unknown_in[t] = encode_letters(codes, res + b, res + b, static_cast<std::size_t>(e - b));
    };
    if (threads == 1) {
        run(0);
    } else {
        std::vector<std::thread> pool;
        for (unsigned t = 1; t < threads; ++t) pool.emplace_back(run, t);
        run(0);
        for (auto& th : pool) th.join();
    }
    std::uint64_t unknown = 0;
    for (const auto u : unknown_in) unknown += u;
    set.encoded = true;
    return unknown;
}

std::string decode(std::span<const std::uint8_t> codes, const substitution_matrix& m) {
    std::string s(codes.size(), ' ');
    for (std::size_t k = 0; k < codes.size(); ++k) s[k] = m.letter(codes[k]);
    return s;
}

namespace {

// Letter classes of the type rule: 1 = A C G T U N, 2 = a letter no nucleotide code uses, 0 = other letters
// (IUPAC ambiguity codes, X).
constexpr std::array<std::uint8_t, 256> make_letter_classes() {
    std::array<std::uint8_t, 256> t{};
    for (const char c : std::string_view("ACGTUN")) {
        t[static_cast<unsigned char>(c)] = 1;
        t[static_cast<unsigned char>(c + ('a' - 'A'))] = 1;
    }
    for (const char c : std::string_view("EFIJLOPQZ")) {
        t[static_cast<unsigned char>(c)] = 2;
        t[static_cast<unsigned char>(c + ('a' - 'A'))] = 2;
    }
    t[static_cast<unsigned char>('*')] = 2;
    return t;
}
constexpr std::array<std::uint8_t, 256> letter_classes = make_letter_classes();

// In a DNA file: a letter no nucleotide code uses, or a record long enough to be typed that the rule types protein.
// In a protein file nothing disagrees (every nucleotide string is a protein string).
bool disagrees(const type_census& c, seq_type type) {
    if (type == seq_type::protein) return false;
    return c.protein_only > 0 || (c.letters >= min_typed_record && c.type() != type);
}

bool looks_nucleotide(const type_census& c) { return c.letters >= min_typed_record && c.type() == seq_type::dna; }

std::string percent_of(const type_census& c) {
    const auto pct = c.letters ? (c.nucleotides * 100 + c.letters / 2) / c.letters : 0;
    return std::to_string(pct) + " % of its " + std::to_string(c.letters) + " letters are ACGTUN";
}

}  // namespace

type_census census(std::span<const std::uint8_t> letters) {
    type_census c;
    std::uint64_t counts[3] = {0, 0, 0};
    for (const auto r : letters) ++counts[letter_classes[r]];
    c.letters = letters.size();
    c.nucleotides = counts[1];
    c.protein_only = counts[2];
    return c;
}

const char* type_name(seq_type t) { return t == seq_type::dna ? "DNA" : "protein"; }

seq_type classify(const sequence_set& set) {
    const seq_type t = detect_type(set);
    if (const auto k = first_disagreeing(set, t); k < set.size()) throw_mixed_types(set, k, t);
    return t;
}

seq_type detect_type(const sequence_set& set) {
    if (set.encoded) throw runtime_failure("detect_type needs letters; it was given sequences already encoded");
    // The leading records up to the one that reaches type_window residues.
    const auto reach = std::lower_bound(set.offsets.begin(), set.offsets.end(), type_window);
    const std::uint64_t end = reach == set.offsets.end() ? set.total_residues() : *reach;
    return census(std::span<const std::uint8_t>(set.residues.data(), static_cast<std::size_t>(end))).type();
}

std::size_t first_disagreeing(const sequence_set& set, seq_type type) {
    if (set.encoded) throw runtime_failure("first_disagreeing needs letters; it was given encoded sequences");
    const std::size_t n = set.size();
    if (type == seq_type::protein) return n;
    const auto scan = [&](std::size_t b, std::size_t e) {
        for (std::size_t k = b; k < e; ++k)
            if (disagrees(census(set[k]), type)) return k;
        return n;
    };
    // Record ranges of about equal residues on threads of their own, as encode() does (~10^8 residues per chunk).
    const std::uint64_t min_slice = std::uint64_t(1) << 22;
    const unsigned threads = static_cast<unsigned>(std::clamp<std::uint64_t>(
        std::min<std::uint64_t>(std::max(1u, std::thread::hardware_concurrency()), 16), 1,
        std::max<std::uint64_t>(1, set.total_residues() / min_slice)));
    if (threads == 1 || n < threads) return scan(0, n);
    std::vector<std::size_t> bounds(threads + 1, n), found(threads, n);
    bounds[0] = 0;
    for (unsigned t = 1; t < threads; ++t) {
        const std::uint64_t at = set.total_residues() * t / threads;
        bounds[t] = static_cast<std::size_t>(std::upper_bound(set.offsets.begin(), set.offsets.end(), at) -
                                             set.offsets.begin() - 1);
        bounds[t] = std::max(bounds[t], bounds[t - 1]);
    }
    {
        std::vector<std::jthread> pool;
        for (unsigned t = 1; t < threads; ++t)
            pool.emplace_back([&, t] { found[t] = scan(bounds[t], bounds[t + 1]); });
        found[0] = scan(bounds[0], bounds[1]);
    }
    return *std::min_element(found.begin(), found.end());
}

void throw_mixed_types(const sequence_set& set, std::size_t record, seq_type file_type, std::uint64_t first_record) {
    const type_census c = census(set[record]);
    const std::string why = file_type == seq_type::dna && c.protein_only > 0
                                ? "holds letters that no nucleotide code uses (E F I J L O P Q Z *)"
                                : std::string("looks like ") + type_name(c.type()) + " (" + percent_of(c) + ")";
    throw input_error(set.source + ":" + set.names[record] + " (record " + std::to_string(first_record + record) + ")",
                      why + ", but the file looks like " + type_name(file_type) +
                          "; a file holds one sequence type: split it, or give --seqtype dna or --seqtype protein "
                          "to read every record as that type");
}

void nucleotide_like::add(const sequence_set& set, std::uint64_t first) {
    if (set.encoded) throw runtime_failure("nucleotide_like needs letters; it was given encoded sequences");
    for (std::size_t k = 0; k < set.size(); ++k) {
        if (set.length(k) < min_typed_record) continue;
        const type_census c = census(set[k]);
        if (!looks_nucleotide(c)) continue;
        if (count++ == 0) {
            first_record = first + k;
            first_name = set.names[k];
            first_census = c;
        }
    }
}

std::string nucleotide_like::warning(const std::string& source) const {
    if (count == 0) return {};
    return source + ":" + first_name + " (record " + std::to_string(first_record) +
           "): its letters look like DNA (" + percent_of(first_census) + "); read as protein, as the file is" +
           (count > 1 ? " (" + std::to_string(count) + " such records in all)" : std::string());
}

}  // namespace swgpu
