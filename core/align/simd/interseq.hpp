// Inter-sequence SIMD Smith-Waterman-Gotoh scores (the layout of SWIPE, Rognes 2011): one vector lane per subject
// stream, the query walked row by row against all lanes at once.
//
// A batch has `lanes` streams. Each stream is a run of subjects placed one after another, each starting at a column
// that is a multiple of the kernel's columns_per_pass, so that no pass of the kernel mixes two subjects in a lane;
// when a new subject starts in a lane, the kernel reports the lane's score and clears its state. Subjects are dealt
// to streams longest first, each to the stream that ends first, so the streams end within about one subject length of
// each other and a batch holds almost no padding whatever the length distribution.
//
// Scores are exact. Lanes are narrow (8 bits, then 16 bits, saturating); a subject whose lane maximum came close
// enough to the top of its type that a saturated addition could have happened is reported as unknown (-1) and the
// caller recomputes it wider: 8 -> 16 bits with these kernels, 16 -> 32 bits with sw_score.
//
// One kernel set per instruction set (SSE4.1, AVX2, AVX-512BW), each compiled in its own translation unit for its
// target only and chosen at run time from what the CPU supports (core/align/simd/isa.hpp), so the default binary runs
// on any x86-64 and builds (without kernels) on any other architecture.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/align/scoring.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/sequence.hpp"
#include "core/align/simd/isa.hpp"

namespace swgpu::interseq {

inline constexpr std::size_t max_vector_bytes = 64;
inline constexpr unsigned max_lanes = 64;
inline constexpr int table_width = substitution_matrix::max_letters;  // 32 subject codes per table row

// Substitution scores arranged for the kernels' table look-ups, built once per search, and the limits of exactness.
// Row a holds the score of query letter a against every subject code b < 32. Code `pad` (not a letter of the matrix)
// fills a stream after its last subject, the columns up to the next subject start, and empty streams; it scores
// min(min score, 0) against every letter, so padding never raises a lane's maximum (by induction over the padded
// columns, each H there is at most the best H before them: the diagonal adds <= 0, gaps subtract).
//
// Lanes hold H - 2^(w-1) as signed w-bit integers (H = 0 is the type's minimum), so that one saturating addition
// computes max(0, H + σ), and saturating subtractions of gap costs stop at H = 0. Values of E and F at or below 0 are
// interchangeable (H >= 0 hides them, and what grows from them stays <= 0), so stopping there changes no H.
struct score_tables {
    alignas(64) std::array<std::int8_t, table_width * table_width> raw{};     // for 8-bit look-ups
    alignas(64) std::array<std::int16_t, table_width * table_width> raw16{};  // for 16-bit look-ups
    int letters = 0;       // query codes are < letters
    std::uint8_t pad = 0;  // subject code of padding
    // Gap costs o + e and e as the lanes subtract them: clamped to 127 (8 bits) and 32767 (16 bits). A clamped and
    // the true subtraction agree (both <= 0) on any H up to the clamped value, which the limits below account for.
    int gap_open_extend8 = 0, gap_extend8 = 0;
    int gap_open_extend16 = 0, gap_extend16 = 0;
    // A subject whose lane maximum is <= limit never saturated, so the maximum is its exact score: a saturating
    // addition yields the type's maximum (H = 2^w - 1), which then is the lane maximum, so a maximum below it proves
    // there was none. With clamped gap costs the limit is also <= the clamped cost.
    int limit8 = -1;
    int limit16 = -1;
};

// nullopt when the matrix has all 32 letters (no code is left for padding); the caller then uses sw_score.
std::optional<score_tables> make_score_tables(const scoring& sc);

// A batch as the kernels read it. columns[j * lanes + k] is residue j of stream k. starts[g * lanes + k] is 0xff when
// a new subject starts in stream k at column g * columns_per_pass (never for g = 0), else 0; n_columns is a multiple
// of columns_per_pass.
struct batch_view {
    const std::uint8_t* columns = nullptr;
    const std::uint8_t* starts = nullptr;
    std::size_t n_columns = 0;
};

// Scores one batch against a query (codes < score_tables::letters). Scores go to `scores` in the order they are
// known: at each column group with starts, the streams that start a new subject there (ascending), the score of the
// subject that ended; after the last column, every stream (ascending), the score of its last subject (or of nothing,
// 0, for an empty stream). Each is the exact best local score, or -1 if the lane may have saturated. `scratch` holds
// scratch_bytes(query.size()) bytes (any alignment).
using batch_kernel = void (*)(std::span<const std::uint8_t> query, const batch_view& batch, const score_tables& t,
                              void* scratch, int* scores);

struct kernel_set {
    simd::isa isa;     // what it is built for: sse41, avx2 or avx512bw
    unsigned lanes8;   // streams per batch of score8
    unsigned lanes16;  // streams per batch of score16
    unsigned columns_per_pass;
    batch_kernel score8;
    batch_kernel score16;
};

inline std::size_t scratch_bytes(std::size_t query_length) { return (2 * query_length + 1) * max_vector_bytes; }

// Defined by core/align/simd/interseq_<isa>.cpp; nullptr when the x86 kernels are not compiled.
const kernel_set* sse41_kernel_set();
const kernel_set* avx2_kernel_set();
const kernel_set* avx512bw_kernel_set();

// The kernel set built for `target`, whether or not the CPU runs it; nullptr for portable (the scalar sw_score) and
// where the x86 kernels are not compiled.
const kernel_set* kernels_for(simd::isa target);
// Kernel sets compiled into this binary that this CPU can run, one for each of simd::available_isas() but portable,
// ascending (empty on non-x86 builds).
std::span<const kernel_set* const> available_kernels();
// The default: the last of them, or nullptr when there is none.
const kernel_set* best_kernels();

// A batch with its storage, and the subject of each score the kernel reports, in the same order (no_subject for the
// score of an empty stream).
struct packed_batch {
    static constexpr std::uint32_t no_subject = 0xffffffffu;
    std::vector<std::uint8_t> columns, starts;
    std::size_t n_columns = 0;
    std::vector<std::uint32_t> reported;
    batch_view view() const { return {columns.data(), starts.data(), n_columns}; }
};

// Deals `subjects` (indices into db; empty ones are skipped) to `lanes` streams, longest first, each to the stream
// that ends first (ties: the lower stream), and interleaves them.
void pack_batch(const sequence_set& db, std::span<const std::uint32_t> subjects, unsigned lanes,
                unsigned columns_per_pass, std::uint8_t pad, packed_batch& out);

// search_cpu with a chosen kernel set; nullptr: the scalar sw_score on every pair. search_cpu calls this with
// best_kernels(); tests and benchmarks call it with each available set to compare them.
std::vector<std::vector<score_hit>> search_cpu_with(const kernel_set* kernels, const sequence_set& queries,
                                                    const sequence_set& db, const scoring& sc,
                                                    const search_options& opt, thread_pool& pool);

}  // namespace swgpu::interseq
