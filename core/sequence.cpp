#include "core/sequence.hpp"

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace swgpu {

std::uint64_t encode(sequence_set& set, const substitution_matrix& m) {
    if (set.encoded) return 0;
    // Slices of the residues on threads of their own (a database chunk of ~10^8 residues took ~70 ms on one thread,
    // the reader thread's largest share, which fell behind several GPUs). Each slice counts its unknown letters and
    // remembers its first one, for the error naming the record.
    const std::uint64_t total = set.residues.size();
    const std::uint64_t min_slice = std::uint64_t(1) << 22;
    const unsigned threads = static_cast<unsigned>(std::clamp<std::uint64_t>(
        std::min<std::uint64_t>(std::max(1u, std::thread::hardware_concurrency()), 16), 1,
        std::max<std::uint64_t>(1, total / min_slice)));
    struct slice_result {
        std::uint64_t unknown = 0;
        std::uint64_t first = UINT64_MAX;  // position of the first unknown letter
        char letter = 0;
    };
    std::vector<slice_result> results(threads);
    const auto run = [&](unsigned t) {
        const std::uint64_t b = total * t / threads, e = total * (t + 1) / threads;
        slice_result& r = results[t];
        std::uint8_t* res = set.residues.data();
        for (std::uint64_t p = b; p < e; ++p) {
            const char c = static_cast<char>(res[p]);
            if (!m.known(c)) {
                if (r.unknown++ == 0) r.first = p, r.letter = c;
            }
            res[p] = m.code(c);
        }
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
    const slice_result* first = nullptr;
    for (const auto& r : results) {
        unknown += r.unknown;
        if (r.unknown && !first) first = &r;
    }
    if (first && m.fallback_code() == substitution_matrix::no_code) {
        const auto k = static_cast<std::size_t>(
            std::upper_bound(set.offsets.begin(), set.offsets.end(), first->first) - set.offsets.begin() - 1);
        throw input_error(set.source + ":" + set.names[k], std::string("residue '") + first->letter +
                                                               "' is not a letter of matrix " + m.name() +
                                                               ", which has no X or N to stand for unknown letters");
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
