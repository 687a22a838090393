// The database as the GPU score pass reads it: subjects sorted by length, packed end to end with runs of a pad letter
// between them, and split into length classes whose kernel configuration is a row of a table (data, not code).
//
// Layout of `residues`: pad run, subject 0, pad run, subject 1, ..., subject n-1, pad run, where "subject k" is the k-th
// shortest (ties by input index) and every pad run is `pad_run` bytes of the pad code. A thread group that streams a
// subject reads up to pad_run letters before its first and after its last residue (the skew of the wavefront and the
// prefetch); those reads see pad letters, whose substitution score is <= 0, so they never raise a score.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/align/sequence.hpp"
#include "core/thread_pool.hpp"

namespace swgpu::gpu {

// One row of the class table: subjects longer than the previous row's max_length and at most this row's run with
// this configuration. group_size threads share one alignment (a power of two, 4..32, dividing the block); each holds
// regs query columns per pass (even, 2..32), so one pass covers group_size * regs query columns. A group streams the
// subject row by row with a skew of one row per thread, which costs group_size - 1 idle rows per pass: short subjects
// take small groups.
struct length_class {
    std::uint32_t max_length;
    int group_size;
    int regs;
};

// The table the kernels are compiled from (gpu/align/search.cu instantiates one code path per row).
inline constexpr length_class search_classes[] = {
    {64, 4, 32},
    {0xffffffffu, 8, 32},
};
inline constexpr int search_class_count = static_cast<int>(sizeof(search_classes) / sizeof(search_classes[0]));

// Bytes of pad letters around every subject; covers the largest group's skew plus the letter prefetch.
inline constexpr std::uint32_t pad_run = 64;

struct packed_db {
    std::unique_ptr<std::uint8_t[]> residues; // residue_bytes bytes, see the layout above
    std::uint64_t residue_bytes = 0;
    std::vector<std::uint64_t> offset;        // first residue of sorted subject k in residues
    std::vector<std::uint32_t> length;        // length of sorted subject k (non-decreasing)
    std::vector<std::uint32_t> original;      // index of sorted subject k in the input set
    std::vector<std::uint32_t> class_begin;   // class c holds sorted subjects [class_begin[c], class_begin[c+1]);
                                              // subjects before class_begin[0] are empty and never hits
    std::uint32_t max_length = 0;
    std::uint64_t total_residues = 0;         // real residues, pads excluded
    std::size_t size() const { return length.size(); }
};

// The host threads of the GPU backend (packing the database, selecting hits): one per hardware thread.
thread_pool& host_pool();

// Sorts and packs an encoded set (residues copied on host_pool()). Residue codes must be below `letters` (the matrix size); `pad_code` (== letters)
// fills the pad runs. Throws swgpu::error (bad_input) naming the record when a code is out of range or the set is not
// encoded, and when the set holds more than 2^32 - 1 subjects.
packed_db pack_database(const sequence_set& db, int letters, std::uint8_t pad_code,
                        std::span<const length_class> classes = search_classes);
// pack_database in two steps, for a caller that gives the residues' buffer (gpu::prepare_chunk: page-locked memory,
// reused from chunk to chunk): the layout without residues (`residues` null; the same errors but the codes'), then
// the pads and residues written into `dst` (residue_bytes bytes) on host_pool(), the codes checked.
packed_db plan_database(const sequence_set& db, std::span<const length_class> classes = search_classes);
void fill_database(const sequence_set& db, const packed_db& plan, int letters, std::uint8_t pad_code, std::uint8_t* dst);

// The class of a subject length (index into the table): the first row whose max_length is >= length.
int class_of(std::uint32_t length, std::span<const length_class> classes = search_classes);

}  // namespace swgpu::gpu
