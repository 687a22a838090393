// libFuzzer target: the --batch list of `swgpu align` (io/align/batch_list.hpp): QUERY [OUTPUT] lines split at tabs
// or blanks, comments, CRLF, stdin as a query, outputs listed twice, absolute and relative outputs. Byte 0 picks the
// -o folder; the list is the rest.
#include <set>

#include "io/align/batch_list.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace swgpu;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    static const char* const folders[] = {"", "-", "out", "/abs/out/"};
    const std::string folder = folders[data[0] & 3];
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        const auto list = io::parse_batch_list(text, "fuzz.list", folder);
        if (list.empty()) fuzz::fuzz_abort("an empty list accepted");
        std::set<std::string> outs;
        for (const auto& e : list) {
            if (e.query.empty() || e.query == "-" || e.out.empty()) fuzz::fuzz_abort("an empty or stdin query, or no output");
            if (e.query.find_first_of("\n") != std::string::npos) fuzz::fuzz_abort("a query across lines");
            if (!outs.insert(e.out).second) fuzz::fuzz_abort("an output listed twice accepted");
        }
    } catch (const error& e) {
        fuzz::expect(e);
    }
    return 0;
}
