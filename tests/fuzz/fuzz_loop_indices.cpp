// libFuzzer target: the index arrays of `swgpu levels`' generic loops (io/arrays/loop_indices.hpp) as .npy bytes:
// W (--writes) and R (--reads), dtypes, shapes ((n,), (n, k), (1, n)), mismatched lengths, negative and huge indices,
// --locations. Input: byte 0 (bit 0: R given; bit 1: --locations from bytes 1-2; bit 2: --array of bytes 1-2
// elements), then W's .npy bytes, then R's from the second "\x93NUMPY" on. A loop accepted is run through the
// inspector (levels::loop_levels).
#include <cstring>

#include "core/numerics/levels.hpp"
#include "core/tuning.hpp"
#include "io/arrays/loop_indices.hpp"
#include "io/arrays/npy.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace swgpu;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const tuning::scoped_override memory("host.memory_mib=1024");
    if (size < 3) return 0;
    const std::uint8_t mode = data[0];
    const long long number = data[1] | (data[2] << 8);
    std::string_view rest(reinterpret_cast<const char*>(data + 3), size - 3);
    std::string_view w = rest, r;
    if (const auto second = rest.find("\x93NUMPY", 1); second != std::string_view::npos) {
        w = rest.substr(0, second);
        r = rest.substr(second);
    }
    try {
        levels::indirect_loop loop;
        io::set_loop_writes(loop, io::parse_npy(w, "w.npy"), "w.npy");
        if (mode & 1) io::set_loop_reads(loop, io::parse_npy(r, "r.npy"), "r.npy");
        io::set_loop_locations(loop, mode & 4 ? number : -1, mode & 2 ? number : 0, "w.npy");
        if (loop.locations < 1 || loop.locations > INT32_MAX) fuzz::fuzz_abort("a loop over an impossible array");
        if (static_cast<std::int64_t>(loop.reads.size()) != loop.iterations() * loop.reads_per_iteration)
            fuzz::fuzz_abort("reads that are not k per iteration");
        for (const auto v : loop.writes)
            if (v < 0 || v >= loop.locations) fuzz::fuzz_abort("a write index outside the array");
        for (const auto v : loop.reads)
            if (v < 0 || v >= loop.locations) fuzz::fuzz_abort("a read index outside the array");
        const auto level = levels::loop_levels(loop);
        if (static_cast<std::int64_t>(level.size()) != loop.iterations()) fuzz::fuzz_abort("levels of another size");
    } catch (const error& e) {
        fuzz::expect(e, true);
    }
    return 0;
}
