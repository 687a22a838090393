// The bytes of a FASTA or FASTQ record as sequence_reader reads them (what a byte in a sequence line is, the
// messages about bad bytes and headers) and the parallel parse's blocks of whole FASTA records (see the header
// io/align/sequence_reader.hpp). Internal to io/align: sequence_reader.cpp and fasta_blocks.cpp include it.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/align/sequence_reader.hpp"

namespace swgpu::io::fasta_blocks {

// What a byte in a sequence line is (see the grammar in the header).
enum class byte_kind : std::uint8_t { residue, dropped, invalid };

constexpr std::array<byte_kind, 256> make_byte_kinds() {
    std::array<byte_kind, 256> k{};
    for (auto& v : k) v = byte_kind::invalid;
    for (int c = 'A'; c <= 'Z'; ++c) k[c] = k[c + ('a' - 'A')] = byte_kind::residue;
    k['*'] = byte_kind::residue;
    k[' '] = k['\t'] = byte_kind::dropped;
    return k;
}
inline constexpr auto byte_kinds = make_byte_kinds();

bool is_space(unsigned char c);

std::string hex_byte(unsigned char c);

// A name or a byte string made safe for a one-line message: control and non-ASCII bytes as \xNN, cut at `max` bytes.
std::string printable(std::string_view s, std::size_t max = 60);

// Why a byte is not a residue, and what to do.
// `at` says where in the record: " at column C" (of the line the message names) or " at residue K".
std::string invalid_residue(unsigned char c, const std::string& at);

// The first non-blank line of the input is not a header: describe what it looks like.
std::string leading_junk(std::string_view line);

std::string no_id_warning(char marker);

extern const char* const no_residues;

// The parallel parse (see the header): a block of whole FASTA records, parsed as parse_record would parse them, with
// line numbers counted from the block's first line (1) and messages not yet given their file, record number and
// name, which only the blocks before it know.
struct fast_record {
    std::string name;
    std::string title;               // kept only where read_chunk keeps it: keep_titles, and more than the name
    std::uint64_t residues_end = 0;  // in the block's residues
    std::uint64_t header_line = 0;
    std::uint64_t problem_line = 0;  // a bad record's first problem: its line and text
    std::string problem;
    bool bad = false, no_id = false;
};

struct fast_block {
    std::size_t begin = 0, end = 0;  // bytes of the batch, from a header line (or the file's first byte)
    bool sequential = false;         // the sequential parser reads from `begin` on (see parse_block)
    std::uint64_t lines = 0;
    std::string residues;
    std::vector<fast_record> records;

    static fast_block of(std::size_t begin, std::size_t end, bool sequential = false) {
        fast_block b;
        b.begin = begin;
        b.end = end;
        b.sequential = sequential;
        return b;
    }
};

// Parses `text`, which starts with a header line and ends at a header line or the end of the file (fasta_blocks.cpp).
void parse_block(std::string_view text, const read_options& opt, fast_block& b);

// The batch of bytes the parallel parse reads ahead, without the zero fill of a std::string's growth.
struct byte_buffer {
    std::unique_ptr<char[]> data;
    std::size_t size = 0, capacity = 0;
    void reserve(std::size_t n) {
        if (n <= capacity) return;
        const std::size_t c = std::max(n, capacity * 2);
        auto grown = std::make_unique_for_overwrite<char[]>(c);
        if (size) std::memcpy(grown.get(), data.get(), size);
        data = std::move(grown);
        capacity = c;
    }
    // Drops the first n bytes.
    void drop_front(std::size_t n) {
        if (n < size) std::memmove(data.get(), data.get() + n, size - n);
        size = n < size ? size - n : 0;
    }
    void release() {
        data.reset();
        size = capacity = 0;
    }
};

// The start of the line after the last '\n' before `end`, if that line starts with '>' and is whole (a '\n' ends it
// before `complete`); 0 when there is none.
std::size_t last_record_start(const char* s, std::size_t complete);

// The first record start (a '>' after a '\n') in [from, end), or end.
std::size_t next_record_start(const char* s, std::size_t from, std::size_t end);

}  // namespace swgpu::io::fasta_blocks
