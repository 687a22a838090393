// Sequences in: FASTA and FASTQ, plain, gzip or bgzip (HTSlib's kseq over BGZF), and faidx regions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/sequence.hpp"

namespace swgpu::io {

struct read_options {
    bool skip_bad = false;  // skip a bad record with a warning instead of failing
};

// Reads records in order, in chunks of bounded size. `path` is a file name, "-" for stdin, or NAME:BEG-END (1-based
// inclusive) / NAME for a region of an indexed FASTA (an .fai beside the file; created when missing and writable).
// Errors are swgpu::error with exit code bad_input and "FILE:RECORD: ..." messages.
class sequence_reader {
public:
    explicit sequence_reader(const std::string& path, read_options opt = {});
    ~sequence_reader();
    sequence_reader(const sequence_reader&) = delete;
    sequence_reader& operator=(const sequence_reader&) = delete;

    // Appends records to `out` until at least `max_residues` residues were added (0 = no limit) or the input ends.
    // Returns false when no record was added (end of input).
    bool read_chunk(sequence_set& out, std::uint64_t max_residues = 0);
    std::uint64_t records_read() const;
    std::uint64_t records_skipped() const;

private:
    struct impl;
    std::unique_ptr<impl> p_;
};

// Convenience: every record of a file (or region).
sequence_set read_all(const std::string& path, read_options opt = {});

}  // namespace swgpu::io
