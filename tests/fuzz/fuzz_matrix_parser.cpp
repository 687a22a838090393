// libFuzzer target: the NCBI matrix parser on arbitrary bytes, with and without load_matrix's file-level checks.
// Built and run by scripts/fuzz.sh, outside the normal build. The only outcome allowed besides success is
// swgpu::error with exit code bad_input.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/align/scoring.hpp"
#include "io/align/matrix_file.hpp"

namespace {

// What a parsed matrix promises its users: codes index the matrix, the extreme scores are in the table.
void check(const swgpu::substitution_matrix& m) {
    if (m.size() < 1 || m.size() > swgpu::substitution_matrix::max_letters) std::abort();
    int lo = 127, hi = -128;
    for (int a = 0; a < m.size(); ++a)
        for (int b = 0; b < m.size(); ++b) {
            const int s = m.score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b));
            lo = s < lo ? s : lo;
            hi = s > hi ? s : hi;
        }
    if (lo != m.min_score() || hi != m.max_score()) std::abort();
    for (int c = 0; c < 256; ++c) {
        const std::uint8_t code = m.code(static_cast<char>(c));
        if (code != swgpu::substitution_matrix::no_code && code >= m.size()) std::abort();
        if (m.known(static_cast<char>(c)) && code == swgpu::substitution_matrix::no_code) std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        check(swgpu::substitution_matrix::parse_ncbi(text, "fuzz", "fuzz"));
    } catch (const swgpu::error& e) {
        if (e.code() != swgpu::exit_code::bad_input) std::abort();
    }
    try {
        check(swgpu::io::parse_matrix_file(text, "fuzz"));
    } catch (const swgpu::error& e) {
        if (e.code() != swgpu::exit_code::bad_input) std::abort();
    }
    return 0;
}
