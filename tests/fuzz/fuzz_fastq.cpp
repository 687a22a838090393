// libFuzzer target: FASTQ (and FASTA) through the sequence reader with base qualities kept, as queries written as
// SAM read them (io/align/sequence_reader.hpp, read_options::keep_qualities): '+' lines, quality lines across several
// lines, qualities shorter or longer than the sequence, bad quality characters, blanks dropped with their qualities,
// records skipped (skip_bad) in the middle of a FASTQ file. Byte 0: bit 0 skip_bad, bits 1-7 the chunk size; the
// file is the rest. Every record read carries exactly one quality per residue ('!'..'~'), or none.
#include "core/align/sequence.hpp"
#include "io/align/sequence_reader.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace swgpu;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string path = fuzz::scratch_path("reads.fq");
    static fuzz::scratch_cleanup cleanup{{path}};
    if (size == 0) return 0;
    const std::uint8_t mode = data[0];
    fuzz::write_file(path, std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
    io::read_options opt;
    opt.skip_bad = mode & 1;
    opt.keep_qualities = true;
    opt.on_skip = [](const std::string& m) {
        if (m.empty() || m.find('\n') != std::string::npos) fuzz::fuzz_abort("a skip message that is empty or of several lines");
    };
    opt.on_warning = opt.on_skip;
    const std::uint64_t chunk = (mode >> 1) * 3;  // 0: everything at once
    try {
        io::sequence_reader reader(io::sequence_source{path, ""}, opt);
        std::uint64_t records = 0;
        for (;;) {
            sequence_set s;
            if (!reader.read_chunk(s, chunk)) break;
            records += s.size();
            if (!s.qualities.empty() && s.qualities.size() != s.residues.size())
                fuzz::fuzz_abort("qualities not one per residue");
            for (std::size_t k = 0; k < s.size(); ++k) {
                if (s.length(k) == 0 || s.names[k].empty()) fuzz::fuzz_abort("an empty record or name");
                const auto q = s.quality(k);
                if (!q.empty() && q.size() != s.length(k)) fuzz::fuzz_abort("a record's qualities not one per residue");
                for (const char c : q)
                    if (c < '!' || c > '~') fuzz::fuzz_abort("a quality character outside '!'..'~'");
            }
        }
        if (reader.records_read() != records) fuzz::fuzz_abort("records_read() miscounts");
    } catch (const error& e) {
        fuzz::expect(e);
    }
    return 0;
}
