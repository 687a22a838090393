// libFuzzer target: the rectangle queries of `swgpu sat --query` and `ihist --query` (io/arrays/rectangles.hpp): four
// integers a line (any run of blanks), comments, blank lines, CRLF, numbers out of range, signs, extra fields.
#include "io/arrays/rectangles.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace swgpu;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const io::rect_list r = io::parse_rects(text, "fuzz.tsv");
        if (r.rects.size() != r.lines.size()) fuzz::fuzz_abort("rectangles and lines differ in number");
        for (std::size_t k = 0; k < r.lines.size(); ++k)
            if (r.lines[k] < 1 || (k > 0 && r.lines[k] <= r.lines[k - 1])) fuzz::fuzz_abort("line numbers not ascending");
    } catch (const error& e) {
        fuzz::expect(e);
    }
    return 0;
}
