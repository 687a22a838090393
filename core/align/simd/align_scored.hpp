// The alignment of a hit whose score is already known (from any backend's score pass): the same alignment as sw_align
// (core/align/smith_waterman.hpp), computed with SIMD in two passes.
//
// Recurrence, tie rule and traceback preferences are those of core/align/smith_waterman.hpp. With S the known best score:
//
//   1. End pass. H is computed row by row (query residue i), the subject striped over the vector lanes (Farrar 2007;
//      F across lanes by a prefix maximum instead of the lazy-F loop). The end cell is the first cell in row-major
//      order with H == S, so the pass stops after the first row that reaches S, at its smallest such column. It keeps
//      checkpoints: every K rows, that row's H and the next row's E; in every row, every `chunk` vectors, H left of
//      the vector and F at it (for all lanes at once, one vector each).
//   2. Traceback. From the end cell, tiles of at most K rows by a few vectors (all lanes) are recomputed from the
//      checkpoints above and to the left of them, keeping H, E and F; the walk compares those values exactly as
//      sw_traceback does and starts a new tile where it leaves one. Only tiles along the path are computed.
//
// Pass 1 costs (query end + 1) x subject length cells; pass 2 a band of about K + chunk lanes' vectors around the
// path. Pairs whose checkpoints would not fit in traceback_options::memory_budget (spacings double first) fall back
// to sw_traceback (checkpointed, scalar) from the end cell pass 1 found; CPUs without AVX2 use sw_score +
// sw_traceback. Lanes: 8 bits when S + max σ < 255, else 16 bits when S + max σ < 65535, else 32 bits; AVX-512BW
// where the CPU has it, else AVX2, chosen at run time (core/align/simd/isa.hpp: the default binary runs on any x86-64
// and builds without kernels elsewhere).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/align/alignment.hpp"
#include "core/align/scoring.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/simd/isa.hpp"

namespace swgpu {

// The instruction sets sw_align_scored has code for (portable, avx2, avx512bw) that are among simd::available_isas(),
// ascending; the last is the default.
std::span<const simd::isa> align_scored_isas();

// sw_align(query, subject, sc, opt) for a pair whose best local score is `score`. nullopt when `score` is not the
// pair's best score: no cell reaches it, or a cell of the rows computed exceeds it (rows below the end cell are not
// computed, so a larger H there goes unnoticed). score == 0 gives the empty alignment unchecked.
// target: which implementation runs; an instruction set without one here (sse41) or that the CPU lacks runs the
// portable code.
std::optional<alignment> sw_align_scored(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                         const scoring& sc, int score, const traceback_options& opt = {},
                                         simd::isa target = simd::best_isa());

// A table of 32-bit substitution scores over a substitution_matrix's codes (max_letters x max_letters, row-major:
// the composition-adjusted matrices of core/align/composition.hpp), its extreme entries and the gap costs.
struct wide_table {
    const std::int32_t* scores = nullptr;
    int max_score = 0, min_score = 0;
    gap_costs gaps;
};

// The same passes over a wide_table, with 16-bit lanes where they hold the scores (checked: a pass whose best reaches
// their top runs again in 32 bits), else 32-bit; scores below 2^30. Each returns nullopt where this CPU (or `target`)
// has no kernel, so that the caller runs its scalar code:
//   sw_score_wide_simd: the best score and its end cell, as a full scalar pass gives them (first in row-major order);
//   sw_align_wide_scored: the alignment of a pair whose best score is `score` (from sw_score_wide_simd), with the end
//   cell, tie rule and traceback preferences of sw_align; also nullopt when its checkpoints do not fit
//   opt.memory_budget or `score` is not the pair's best.
std::optional<sw_end> sw_score_wide_simd(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                         const wide_table& table, simd::isa target = simd::best_isa());
std::optional<alignment> sw_align_wide_scored(std::span<const std::uint8_t> query,
                                              std::span<const std::uint8_t> subject, const wide_table& table, int score,
                                              const traceback_options& opt = {},
                                              simd::isa target = simd::best_isa());

// A pair whose best local score a score pass found, to be aligned (by sw_align_scored, or in batches elsewhere).
struct scored_pair {
    std::span<const std::uint8_t> query, subject;
    int score = 0;
};

}  // namespace swgpu
