#include "io/align/matrix_file.hpp"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/align/statistics.hpp"
#include "core/error.hpp"

namespace swgpu::io {

namespace {

// NCBI's matrices are about 2 KB; anything far larger is not a matrix, and reading it whole would only waste memory.
constexpr std::size_t max_matrix_file_bytes = 1 << 20;

std::string upper(std::string_view s) {
    std::string r(s);
    for (auto& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return r;
}

std::string hex_byte(unsigned char c) {
    char b[8];
    std::snprintf(b, sizeof b, "0x%02X", c);
    return b;
}

bool is_builtin_name(const std::string& name) {
    const std::string want = upper(name);
    if (want == "EDNAFULL") return true;
    for (const auto& b : substitution_matrix::builtin_names())
        if (want == b) return true;
    return false;
}

std::string builtin_list() {
    std::string list;
    for (const auto& n : substitution_matrix::builtin_names()) list += (list.empty() ? "" : ", ") + n;
    return list;
}

// Binary data gives parse_ncbi's messages little to say; name the byte and the line instead. Comment lines may hold
// any text but NUL (authors' names in UTF-8); other lines are letters, numbers and whitespace, so printable ASCII.
void check_text(std::string_view text, const std::string& path) {
    std::size_t line_no = 1;
    bool comment = false, line_start = true;
    for (char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '\n') {
            ++line_no;
            comment = false;
            line_start = true;
            continue;
        }
        if (line_start && c == '#') comment = true;
        if (c != ' ' && c != '\t') line_start = false;
        const bool whitespace = c == '\t' || c == '\r' || c == '\v' || c == '\f';
        if (c == 0 || (!comment && !whitespace && (c < 0x20 || c >= 0x7f)))
            throw input_error(path + ":" + std::to_string(line_no),
                              (c == 0 ? std::string("NUL byte") : "byte " + hex_byte(c)) +
                                  " in the matrix file: it is binary or not a matrix; give a matrix in NCBI text "
                                  "format or a built-in name (" + builtin_list() + ")");
    }
}

}  // namespace

substitution_matrix parse_matrix_file(std::string_view text, const std::string& path) {
    if (text.find_first_not_of(" \t\r\n\v\f") == std::string_view::npos)
        throw input_error(path, "the matrix file is empty; give a matrix in NCBI text format (a header row of letters, "
                                "then one row of scores per letter)");
    check_text(text, path);
    substitution_matrix m = substitution_matrix::parse_ncbi(text, path, path);
    for (const auto& name : substitution_matrix::builtin_names()) {
        const substitution_matrix b = substitution_matrix::builtin(name);
        if (b.letters() == m.letters() && b.table() == m.table())
            return substitution_matrix::parse_ncbi(text, name, path);
    }
    return m;
}

substitution_matrix load_matrix(const std::string& name_or_path) {
    if (name_or_path.find('/') == std::string::npos && is_builtin_name(name_or_path))
        return substitution_matrix::builtin(name_or_path);

    const std::string& path = name_or_path;
    const std::string what_to_give =
        "give a matrix file in NCBI text format or a built-in name (" + builtin_list() + ")";
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        throw input_error(path, "is a directory, not a matrix file; " + what_to_give);
    errno = 0;
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f)
        throw input_error(path, std::string("cannot open the matrix file: ") +
                                    (errno ? std::strerror(errno) : "unknown error") + "; " + what_to_give);
    std::string text;
    char buf[65536];
    for (;;) {
        const std::size_t n = std::fread(buf, 1, sizeof buf, f.get());
        text.append(buf, n);
        if (text.size() > max_matrix_file_bytes)
            throw input_error(path, "the file is larger than " + std::to_string(max_matrix_file_bytes >> 10) +
                                        " KiB, far too large for a substitution matrix; " + what_to_give);
        if (n < sizeof buf) break;
    }
    if (std::ferror(f.get()))
        throw input_error(path, std::string("cannot read the matrix file: ") + std::strerror(errno) + "; " +
                                    what_to_give);
    return parse_matrix_file(text, path);
}

namespace {

bool file_exists(const std::string& path) {
    struct stat st{};
    return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

substitution_matrix matrix_from_option(const std::string& name_or_path) {
    if (name_or_path.find('/') == std::string::npos && !file_exists(name_or_path)) {
        bool builtin = false;
        for (const auto& n : substitution_matrix::builtin_names()) {
            const std::string a = upper(n), b = upper(name_or_path);
            builtin = builtin || a == b || b == "EDNAFULL";
        }
        if (!builtin) return substitution_matrix::builtin(name_or_path);  // throws the usage error listing names
    }
    return load_matrix(name_or_path);
}

scoring make_scoring(const scoring_request& r) {
    scoring sc{r.type == seq_type::dna && r.matrix.empty() ? substitution_matrix::match_mismatch(r.match, r.mismatch)
               : r.matrix.empty()                          ? substitution_matrix::builtin("BLOSUM62")
                                                           : matrix_from_option(r.matrix),
               {}, r.type};
    sc.gaps = default_gaps(sc.matrix, r.type);
    if (r.gap_open) sc.gaps.open = *r.gap_open;
    if (r.gap_extend) sc.gaps.extend = *r.gap_extend;
    validate(sc);
    if (r.evalues && !evalue_calculator::supported(sc))
        evalue_calculator(sc, 0, 0);  // throws the usage error that names the supported pairs
    return sc;
}

}  // namespace swgpu::io
