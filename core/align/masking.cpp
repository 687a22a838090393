#include "core/align/masking.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <string>

namespace swgpu {

namespace {

// ---- SEG ----------------------------------------------------------------------------------------------------------

constexpr int amino_acids = 20;
constexpr double ln_amino_acids = 2.9957322735539909;  // ln 20
constexpr double ln_2 = 0.69314718055994530942;

// Index 0..19 of a standard amino acid, -1 for any other letter.
int amino_acid_index(std::uint8_t letter) {
    static const std::array<std::int8_t, 256> index = [] {
        std::array<std::int8_t, 256> t;
        t.fill(-1);
        const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
        for (std::size_t k = 0; k < letters.size(); ++k) t[static_cast<unsigned char>(letters[k])] = std::int8_t(k);
        return t;
    }();
    return index[letter];
}

// ln n!, rounded to 6 decimals as in the tables SEG has always been computed with, so that the trimming picks the
// same sub-segment where two compositions come out nearly equally probable.
double ln_factorial(std::size_t n) {
    static const std::vector<double> cache = [] {
        std::vector<double> t(4096);
        for (std::size_t k = 0; k < t.size(); ++k) t[k] = std::round(std::lgamma(double(k) + 1) * 1e6) / 1e6;
        return t;
    }();
    return n < cache.size() ? cache[n] : std::lgamma(double(n) + 1);
}

// The composition of a window: counts of the 20 amino acids and of the other letters.
struct composition {
    std::array<int, amino_acids> count{};
    int other = 0;
    void add(int index, int by) {
        if (index < 0) other += by;
        else count[static_cast<std::size_t>(index)] += by;
    }
    // Wootton and Federhen's state vector: the non-zero counts, largest first.
    std::vector<int> state() const {
        std::vector<int> s;
        for (int c : count)
            if (c > 0) s.push_back(c);
        std::sort(s.begin(), s.end(), std::greater<>());
        return s;
    }
};

// Entropy in bits of the amino acids of a window (its other letters left out).
double entropy(const composition& c) {
    const std::vector<int> s = c.state();
    int total = 0;
    for (int v : s) total += v;
    if (total == 0) return 0;
    double sum = 0;
    for (int v : s) sum += double(v) * std::log(double(v) / double(total)) / ln_2;
    return std::fabs(sum / double(total));
}

// ln P0 of a window of `length` letters: ln of the number of compositions with this state vector (20! over the
// factorials of how many letters share each count, zero included), plus ln of the sequences of that composition,
// minus length·ln 20.
double ln_probability(const composition& c, int length) {
    const std::vector<int> s = c.state();
    double compositions = ln_factorial(amino_acids);
    if (!s.empty()) {
        for (std::size_t k = 0; k < s.size();) {
            std::size_t run = k;
            while (run < s.size() && s[run] == s[k]) ++run;
            compositions -= ln_factorial(run - k);
            k = run;
        }
        if (s.size() < std::size_t(amino_acids)) compositions -= ln_factorial(amino_acids - s.size());
    }
    double sequences = ln_factorial(std::size_t(length));
    for (int v : s) sequences -= ln_factorial(std::size_t(v));
    return compositions + sequences - double(length) * ln_amino_acids;
}

class seg_finder {
public:
    seg_finder(std::span<const std::uint8_t> letters, const seg_parameters& p) : p_(p) {
        index_.reserve(letters.size());
        for (auto l : letters) index_.push_back(amino_acid_index(l));
    }

    std::vector<masked_interval> run() {
        segments(0, index_.size());
        std::sort(found_.begin(), found_.end(),
                  [](const auto& a, const auto& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
        return std::move(found_);
    }

private:
    // Entropies of the windows of [from, from + length): h[i] for the window whose centre (as SEG counts it) is i,
    // -1 where there is none or it holds too many other letters.
    std::vector<double> entropies(std::size_t from, std::ptrdiff_t length, std::ptrdiff_t down, std::ptrdiff_t up) const {
        std::vector<double> h(std::size_t(length), -1.0);
        composition c;
        for (std::ptrdiff_t k = 0; k < p_.window; ++k) c.add(index_[from + std::size_t(k)], 1);
        for (std::ptrdiff_t i = down; i <= length - up; ++i) {
            if (i > down) {
                c.add(index_[from + std::size_t(i - down - 1)], -1);
                c.add(index_[from + std::size_t(i - down - 1 + p_.window)], 1);
            }
            if (c.other <= p_.maxbogus) h[std::size_t(i)] = entropy(c);
        }
        return h;
    }

    // The most improbable sub-segment of [from, from + length) that is at most maxtrim shorter: its offsets.
    std::pair<std::ptrdiff_t, std::ptrdiff_t> trim(std::size_t from, std::ptrdiff_t length) const {
        std::ptrdiff_t left = 0, right = length - 1;
        const std::ptrdiff_t shortest = std::max<std::ptrdiff_t>(1, length - p_.maxtrim);
        double least = 1.0;
        for (std::ptrdiff_t len = length; len > shortest; --len) {
            composition c;
            for (std::ptrdiff_t k = 0; k < len; ++k) c.add(index_[from + std::size_t(k)], 1);
            for (std::ptrdiff_t at = 0;; ++at) {
                const double prob = ln_probability(c, int(len));
                if (prob < least) least = prob, left = at, right = at + len - 1;
                if (at + len >= length) break;
                c.add(index_[from + std::size_t(at)], -1);
                c.add(index_[from + std::size_t(at + len)], 1);
            }
        }
        return {left, right};
    }

    // Segments of [from, from + length), the left remainder of a trimmed segment searched again.
    void segments(std::size_t from, std::size_t size) {
        const auto length = std::ptrdiff_t(size);
        if (p_.window <= 0 || p_.window > length) return;
        const std::ptrdiff_t down = (p_.window + 1) / 2 - 1, up = p_.window - down;
        const std::vector<double> h = entropies(from, length, down, up);
        const auto usable = [&](std::ptrdiff_t j) { return h[std::size_t(j)] != -1.0 && h[std::size_t(j)] <= p_.hicut; };
        const std::ptrdiff_t last = length - up;
        std::ptrdiff_t lowest = down;
        for (std::ptrdiff_t i = down; i <= last; ++i) {
            if (h[std::size_t(i)] == -1.0 || h[std::size_t(i)] > p_.locut) continue;
            std::ptrdiff_t lo = i, hi = i;
            while (lo >= lowest && usable(lo)) --lo;
            while (hi <= last && usable(hi)) ++hi;
            ++lo, --hi;
            std::ptrdiff_t left = lo - down, right = hi + up - 1;
            const auto [l, r] = trim(from + std::size_t(left), right - left + 1);
            const std::ptrdiff_t width = right - left + 1;
            left += l;
            right -= width - r - 1;
            if (i + up - 1 < left) segments(from + std::size_t(lo - down), std::size_t(left - (lo - down)));
            found_.push_back({from + std::size_t(left), from + std::size_t(right)});
            i = std::min(hi, right + down);
            lowest = i + 1;
        }
    }

    seg_parameters p_;
    std::vector<int> index_;
    std::vector<masked_interval> found_;
};

// ---- DUST ---------------------------------------------------------------------------------------------------------

// A perfect stretch: bases [begin, end], its triplet score and its length in triplets minus one.
struct perfect_stretch {
    std::size_t begin, end;
    std::uint32_t score, len;
};

// Adds `s` to the ordered intervals, joining it to the last one when at most `linker` bases lie between them.
void join(std::vector<masked_interval>& out, const perfect_stretch& s, std::size_t linker) {
    if (out.empty() || out.back().end + linker < s.begin) out.push_back({s.begin, s.end});
    else out.back().end = std::max(out.back().end, s.end);
}

}  // namespace

std::vector<masked_interval> seg_intervals(std::span<const std::uint8_t> letters, const seg_parameters& p) {
    return seg_finder(letters, p).run();
}

std::vector<masked_interval> dust_intervals(std::span<const std::uint8_t> letters, const dust_parameters& p) {
    std::vector<masked_interval> out;
    const std::size_t n = letters.size();
    if (n < 4 || p.window < 8) return out;
    const auto base = [](std::uint8_t l) -> unsigned { return l == 'C' ? 1 : l == 'G' ? 2 : l == 'T' ? 3 : 0; };
    std::vector<std::uint8_t> triplet(n - 2);
    for (std::size_t k = 0; k + 2 < n; ++k)
        triplet[k] = std::uint8_t(base(letters[k]) << 4 | base(letters[k + 1]) << 2 | base(letters[k + 2]));
    const std::size_t span = p.window - 2;  // triplets in a window
    const auto threshold = [&](std::size_t l_minus_1) { return l_minus_1 == 0 ? 1u : unsigned(l_minus_1) * p.level; };

    // Perfect stretches whose window is still open, by start descending (the last one starts first).
    std::vector<perfect_stretch> open, found;
    std::array<std::uint32_t, 64> count{};
    for (std::size_t e = 1; e < triplet.size(); ++e) {
        // Stretches that begin before the window ending at triplet e - 1 are final (dustmasker's order of emission).
        const std::size_t before = e - 1 >= span ? e - span : 0;
        while (!open.empty() && open.back().begin < before) {
            join(out, open.back(), p.linker);
            open.pop_back();
        }
        const std::size_t first = e >= span ? e - span + 1 : 0;
        count.fill(0);
        std::uint32_t score = 0, best_score = 0, best_len = 0;
        std::size_t inside = 0;  // open[0, inside) lie within the stretch [s, e]
        found.clear();
        for (std::size_t s = e + 1; s-- > first;) {
            const std::uint32_t c = count[triplet[s]]++;
            if (c == 0) continue;  // a triplet new to the stretch adds nothing; dustmasker tests no such stretch
            score += c;
            const std::size_t l1 = e - s;
            if (10 * score <= threshold(l1)) continue;
            for (; inside < open.size() && open[inside].begin >= s; ++inside) {
                const auto& o = open[inside];
                if (best_score == 0 || std::uint64_t(best_len) * o.score > std::uint64_t(best_score) * o.len)
                    best_score = o.score, best_len = o.len;
            }
            if (best_score == 0 || std::uint64_t(score) * best_len >= std::uint64_t(best_score) * l1) {
                best_score = score, best_len = std::uint32_t(l1);
                found.push_back({s, e + 2, score, std::uint32_t(l1)});
            }
        }
        if (!found.empty()) {
            std::vector<perfect_stretch> merged(open.size() + found.size());
            std::merge(open.begin(), open.end(), found.begin(), found.end(), merged.begin(),
                       [](const auto& a, const auto& b) { return a.begin > b.begin; });
            open.swap(merged);
        }
    }
    while (!open.empty()) {
        join(out, open.back(), p.linker);
        open.pop_back();
    }
    return out;
}

std::uint64_t mask_low_complexity(sequence_set& set, sequence_set* mirror, const substitution_matrix& m,
                                  masking method, std::uint8_t mask_code) {
    std::uint64_t masked = 0;
    for (std::size_t k = 0; k < set.size(); ++k) {
        const std::string letters = decode(set[k], m);
        const std::span<const std::uint8_t> view(reinterpret_cast<const std::uint8_t*>(letters.data()), letters.size());
        const auto intervals = method == masking::seg ? seg_intervals(view) : dust_intervals(view);
        std::uint8_t* plus = set.residues.data() + set.offsets[k];
        std::uint8_t* minus = mirror ? mirror->residues.data() + mirror->offsets[k] : nullptr;
        const std::size_t n = letters.size();
        for (const auto& iv : intervals)
            for (std::size_t p = iv.begin; p <= iv.end; ++p) {
                masked += plus[p] != mask_code;
                plus[p] = mask_code;
                if (minus) minus[n - 1 - p] = mask_code;
            }
    }
    return masked;
}

}  // namespace swgpu
