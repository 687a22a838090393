// libFuzzer target: the sequence reader on arbitrary bytes, as a whole file or through a faidx region.
// Built and run by scripts/fuzz.sh, outside the normal build.
//
// Input layout: byte 0 selects the mode (bit 0: skip_bad; bit 1: read through a region; bits 2-7: chunk size);
// in region mode the region string runs from byte 1 to the first '\n' and the file is the rest; otherwise the file
// is bytes 1... The only outcome allowed besides success is swgpu::error with exit code bad_input; anything else
// (a crash, a sanitizer report, another exception, a hang) is a bug.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "core/align/scoring.hpp"
#include "core/align/sequence.hpp"
#include "io/align/sequence_reader.hpp"

namespace {

const std::string& scratch_file() {
    static const std::string path = [] {
        const char* tmp = std::getenv("TMPDIR");
        return std::string(tmp && *tmp ? tmp : "/tmp") + "/swgpu_fuzz_reader_" + std::to_string(::getpid()) + ".fa";
    }();
    return path;
}

void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) std::abort();
    if (size && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::uint8_t mode = data[0];
    ++data;
    --size;
    std::string region;
    if (mode & 2) {
        std::size_t k = 0;
        while (k < size && data[k] != '\n') ++k;
        region.assign(reinterpret_cast<const char*>(data), k);
        if (k < size) ++k;
        data += k;
        size -= k;
    }
    const std::string& path = scratch_file();
    write_file(path, data, size);
    // The index must describe this input, not the previous one (their times may be equal to the nanosecond).
    std::remove((path + ".fai").c_str());
    std::remove((path + ".gzi").c_str());

    swgpu::io::read_options opt;
    opt.skip_bad = mode & 1;
    std::uint64_t skipped_reported = 0;
    opt.on_skip = [&](const std::string& message) {
        if (message.empty()) std::abort();
        ++skipped_reported;
    };
    const std::uint64_t chunk = (mode >> 2) * 7;  // 0 = everything at once
    try {
        swgpu::io::sequence_reader reader(swgpu::io::sequence_source{path, region}, opt);
        swgpu::sequence_set all;
        for (;;) {
            swgpu::sequence_set s;
            if (!reader.read_chunk(s, chunk)) break;
            if (s.empty()) std::abort();  // a chunk that reports records holds some
            for (std::size_t k = 0; k < s.size(); ++k) {
                if (s.length(k) == 0 || s.names[k].empty()) std::abort();  // the reader's own invariants
                all.add(s.names[k], s[k]);
            }
        }
        if (reader.records_skipped() != skipped_reported || reader.records_read() != all.size()) std::abort();
        swgpu::detect_type(all);
        static const auto blosum62 = swgpu::substitution_matrix::builtin("BLOSUM62");
        swgpu::encode(all, blosum62);
    } catch (const swgpu::error& e) {
        if (e.code() != swgpu::exit_code::bad_input) std::abort();
    }
    return 0;
}
