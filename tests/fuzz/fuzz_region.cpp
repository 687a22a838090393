// libFuzzer target: the region syntax of indexed FASTA files (NAME, NAME:BEG, NAME:BEG-END, {NAME}:BEG-END, digits
// with commas, zero, reversed and past-the-end ranges) and parse_source's "PATH:REGION" split
// (io/align/sequence_reader.hpp), against a fixed FASTA file with its .fai index, plain (byte 0 even) or bgzip (odd),
// written once. The region is bytes 1...; a region read gives one record, inside its sequence.
#include <htslib/bgzf.h>

#include <cstring>

#include "core/align/sequence.hpp"
#include "io/align/sequence_reader.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace swgpu;

namespace {

// Names with ':', '-', braces and digits, so that the region parser's ambiguities are reachable.
const char* const genome = ">chr1 first\nACGTACGTAC\nGTACGTACGT\nAC\n>chr1:1-5\nTTTTTGGGGG\n>a-b\nCCCC\n>{x}\nGG\n"
                           ">2\nACGTNNNNAC\nAC\n>chr1:2\nA\n";

std::string make_genome(bool bgzip) {
    const std::string path = fuzz::scratch_path(bgzip ? "genome.fa.gz" : "genome.fa");
    if (!bgzip) {
        fuzz::write_file(path, genome);
    } else {
        BGZF* f = bgzf_open(path.c_str(), "w");
        if (!f || bgzf_write(f, genome, std::strlen(genome)) < 0 || bgzf_close(f) < 0) fuzz::fuzz_abort("cannot write the bgzip genome");
    }
    io::read_all(path + ":chr1:1-2");  // builds the index once (.fai, and .gzi for bgzip)
    return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string plain = make_genome(false), packed = make_genome(true);
    static fuzz::scratch_cleanup cleanup{{plain, plain + ".fai", packed, packed + ".fai"}};
    static fuzz::scratch_cleanup cleanup_gzi{{packed + ".gzi"}};
    if (size == 0) return 0;
    const std::string& path = data[0] & 1 ? packed : plain;
    const std::string region(reinterpret_cast<const char*>(data + 1), size - 1);
    io::read_options opt;
    opt.on_warning = [](const std::string& m) {
        if (m.empty() || m.find('\n') != std::string::npos) fuzz::fuzz_abort("a warning that is empty or of several lines");
    };
    try {
        const sequence_set s = io::read_region(path, region, opt);
        // An empty region is the whole file (as "genome.fa:" on the command line): every record.
        if (s.size() != (region.empty() ? 6u : 1u) || s.length(0) == 0) fuzz::fuzz_abort("a region is not one non-empty record");
        if (!s.origins.empty()) {
            const auto& o = s.origins[0];
            if (o.full_length && o.offset + s.length(0) > o.full_length) fuzz::fuzz_abort("a region past its sequence");
        }
    } catch (const error& e) {
        fuzz::expect(e);
    }
    // The same region through a command-line argument: PATH:REGION.
    if (region.find('\0') == std::string::npos && !region.empty()) {
        const io::sequence_source src = io::parse_source(path + ":" + region);
        if (src.path != path || src.region != region) {
            // A region that names an existing file's suffix is the only way out ("PATH:REGION" is split at the
            // longest existing prefix); here no file is named like the genome plus ':'.
            fuzz::fuzz_abort("parse_source split PATH:REGION elsewhere");
        }
    }
    return 0;
}
