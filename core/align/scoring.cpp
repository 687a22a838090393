#include "core/align/scoring.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>

#include "core/align/builtin_matrices.hpp"
#include "core/error.hpp"

namespace swgpu {

namespace {

std::vector<std::string_view> split_ws(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t k = 0;
    while (k < line.size()) {
        while (k < line.size() && std::isspace(static_cast<unsigned char>(line[k]))) ++k;
        std::size_t b = k;
        while (k < line.size() && !std::isspace(static_cast<unsigned char>(line[k]))) ++k;
        if (k > b) out.push_back(line.substr(b, k - b));
    }
    return out;
}

std::string upper(std::string_view s) {
    std::string r(s);
    for (auto& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return r;
}

}  // namespace

substitution_matrix substitution_matrix::parse_ncbi(std::string_view text, const std::string& name,
                                                    const std::string& source) {
    substitution_matrix m;
    m.name_ = name;
    std::vector<bool> row_seen;
    std::size_t pos = 0, line_no = 0;
    bool have_header = false;
    while (pos <= text.size()) {
        std::size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        std::string_view line = text.substr(pos, nl - pos);
        pos = nl + 1;
        ++line_no;
        const std::string where = source + ":" + std::to_string(line_no);
        if (line.find('\0') != std::string_view::npos) throw input_error(where, "NUL byte in matrix file");
        // Every character split_ws treats as a separator, so that a line that is not blank here has a token.
        auto first = line.find_first_not_of(" \t\r\v\f");
        if (first == std::string_view::npos || line[first] == '#') {
            if (nl == text.size()) break;
            continue;
        }
        auto tok = split_ws(line);
        if (!have_header) {
            for (auto t : tok) {
                // Sequences hold only letters and '*' (io/align/sequence_reader.hpp), so no other symbol could be scored.
                if (t.size() != 1 || !(std::isalpha(static_cast<unsigned char>(t[0])) || t[0] == '*'))
                    throw input_error(where, "matrix header must list single letters or '*', found '" +
                                                 std::string(t) + "'");
                char c = static_cast<char>(std::toupper(static_cast<unsigned char>(t[0])));
                if (m.letters_.find(c) != std::string::npos)
                    throw input_error(where, std::string("letter '") + c + "' appears twice in the matrix header");
                m.letters_.push_back(c);
            }
            if (m.letters_.size() > static_cast<std::size_t>(max_letters))
                throw input_error(where, "matrix has " + std::to_string(m.letters_.size()) + " letters; at most " +
                                             std::to_string(max_letters) + " are supported");
            row_seen.assign(m.letters_.size(), false);
            have_header = true;
        } else {
            if (tok[0].size() != 1) throw input_error(where, "a matrix row must start with its letter");
            char c = static_cast<char>(std::toupper(static_cast<unsigned char>(tok[0][0])));
            auto r = m.letters_.find(c);
            if (r == std::string::npos)
                throw input_error(where, std::string("row letter '") + c + "' is not in the matrix header");
            if (row_seen[r]) throw input_error(where, std::string("row '") + c + "' appears twice");
            if (tok.size() != m.letters_.size() + 1)
                throw input_error(where, "row '" + std::string(1, c) + "' has " + std::to_string(tok.size() - 1) +
                                             " scores; the header has " + std::to_string(m.letters_.size()) + " letters");
            for (std::size_t k = 1; k < tok.size(); ++k) {
                int v = 0;
                auto [p, ec] = std::from_chars(tok[k].data(), tok[k].data() + tok[k].size(), v);
                if (ec != std::errc() || p != tok[k].data() + tok[k].size())
                    throw input_error(where, "'" + std::string(tok[k]) + "' is not an integer score");
                if (v < -127 || v > 127) throw input_error(where, "score " + std::to_string(v) + " is outside -127..127");
                m.scores_[r * max_letters + (k - 1)] = static_cast<std::int8_t>(v);
            }
            row_seen[r] = true;
        }
        if (nl == text.size()) break;
    }
    if (!have_header) throw input_error(source, "no matrix header row (a line of letters) found");
    for (std::size_t r = 0; r < row_seen.size(); ++r)
        if (!row_seen[r]) throw input_error(source, std::string("matrix has no row for letter '") + m.letters_[r] + "'");
    m.finalize();
    return m;
}

void substitution_matrix::finalize() {
    code_.fill(no_code);
    known_.fill(false);
    for (std::size_t k = 0; k < letters_.size(); ++k) {
        auto c = static_cast<unsigned char>(letters_[k]);
        code_[c] = static_cast<std::uint8_t>(k);
        code_[static_cast<unsigned char>(std::tolower(c))] = static_cast<std::uint8_t>(k);
        known_[c] = known_[static_cast<unsigned char>(std::tolower(c))] = true;
    }
    const bool dna = letters_.find('A') != std::string::npos && letters_.find('T') != std::string::npos &&
                     letters_.find('L') == std::string::npos;
    if (dna && code_['U'] == no_code && code_['T'] != no_code) {
        code_['U'] = code_['u'] = code_['T'];
        known_['U'] = known_['u'] = true;
    }
    code_letters_ = letters_;
    max_ = -128;
    min_ = 127;
    for (int a = 0; a < size(); ++a)
        for (int b = 0; b < size(); ++b) {
            max_ = std::max(max_, score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)));
            min_ = std::min(min_, score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)));
        }
    // The fallback letter: protein X; DNA N, else X. A matrix without it gets it as one more code (a header holds at
    // most the 26 letters and '*', so there is room below max_letters) scoring the lowest score against every code.
    auto x = letters_.find(dna ? 'N' : 'X');
    if (x == std::string::npos && dna) x = letters_.find('X');
    fallback_added_ = x == std::string::npos;
    if (fallback_added_) {
        x = letters_.size();
        code_letters_.push_back(dna ? 'N' : 'X');
        for (std::size_t k = 0; k <= x; ++k)
            scores_[x * max_letters + k] = scores_[k * max_letters + x] = static_cast<std::int8_t>(min_);
    }
    fallback_ = static_cast<std::uint8_t>(x);
    for (auto& c : code_)
        if (c == no_code) c = fallback_;
}

substitution_matrix substitution_matrix::builtin(std::string_view name) {
    std::string want = upper(name);
    if (want == "EDNAFULL") want = "NUC.4.4";
    for (const auto& b : builtin_matrix_texts())
        if (want == b.name) return parse_ncbi(b.text, b.name, "builtin:" + std::string(b.name));
    std::string list;
    for (const auto& n : builtin_names()) list += (list.empty() ? "" : ", ") + n;
    throw usage_error("unknown matrix '" + std::string(name) + "'; built-in matrices are " + list +
                      ", or give a file in NCBI text format");
}

std::vector<std::string> substitution_matrix::builtin_names() {
    std::vector<std::string> out;
    for (const auto& b : builtin_matrix_texts()) out.emplace_back(b.name);
    return out;
}

substitution_matrix substitution_matrix::match_mismatch(int match, int mismatch) {
    if (match <= 0) throw usage_error("--match must be positive (got " + std::to_string(match) + ")");
    if (mismatch >= 0) throw usage_error("--mismatch must be negative (got " + std::to_string(mismatch) + ")");
    if (match > 127 || mismatch < -127) throw usage_error("--match/--mismatch must lie within -127..127");
    substitution_matrix m;
    m.name_ = "match" + std::to_string(match) + "/mismatch" + std::to_string(mismatch);
    m.letters_ = "ACGTN";
    for (int a = 0; a < 5; ++a)
        for (int b = 0; b < 5; ++b)
            m.scores_[a * max_letters + b] = static_cast<std::int8_t>((a == b && a < 4) ? match : mismatch);
    m.finalize();
    return m;
}

gap_costs default_gaps(std::string_view matrix_name) {
    const std::string n = upper(matrix_name);
    if (n == "BLOSUM45") return {14, 2};
    if (n == "BLOSUM50") return {13, 2};
    if (n == "BLOSUM80" || n == "BLOSUM90") return {10, 1};
    if (n == "PAM30") return {9, 1};
    if (n == "PAM70") return {10, 1};
    if (n == "PAM250") return {14, 2};
    if (n == "NUC.4.4" || n == "EDNAFULL") return {10, 6};  // 5/2, blastn's default, has no parameters at 5/-4
    if (n.rfind("MATCH", 0) == 0) return {5, 2};
    return {11, 1};
}

gap_costs default_gaps(const substitution_matrix& m, seq_type type) {
    if (type == seq_type::protein) return default_gaps(m.name());
    // DNA: blastn's 5/2, except for scores of 5/-4 on A C G T (NUC.4.4, or a file with its scores), where the gap
    // costs with E-value parameters are 10/6 and 8/6 and BLAST takes 10/6.
    constexpr std::string_view bases = "ACGT";
    bool nuc44 = true;
    for (char x : bases)
        for (char y : bases)
            nuc44 = nuc44 && m.known(x) && m.known(y) && m.score(m.code(x), m.code(y)) == (x == y ? 5 : -4);
    return nuc44 ? gap_costs{10, 6} : gap_costs{5, 2};
}

void validate(const scoring& s) {
    if (s.gaps.open < 0) throw usage_error("--gap-open must be >= 0 (got " + std::to_string(s.gaps.open) + ")");
    if (s.gaps.extend < 1) throw usage_error("--gap-extend must be >= 1 (got " + std::to_string(s.gaps.extend) + ")");
    if (s.gaps.open > 1000 || s.gaps.extend > 1000) throw usage_error("gap costs above 1000 are not supported");
    if (s.matrix.max_score() <= 0)
        throw usage_error("matrix '" + s.matrix.name() + "' has no positive score; no local alignment can score");
}

}  // namespace swgpu
