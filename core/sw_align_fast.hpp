// The alignment of a hit whose score is already known (from any backend's score pass): the same alignment as sw_align
// (core/smith_waterman.hpp), computed with SIMD in two passes.
//
// Recurrence, tie rule and traceback preferences are those of core/smith_waterman.hpp. With S the known best score:
//
//   1. End pass. H is computed row by row (query residue i), the subject striped over the vector lanes (Farrar 2007),
//      16-bit saturating lanes when S + max σ fits, else 32-bit. The end cell is the first cell in row-major order
//      with H == S, so the pass stops after the first row that reaches S, at its smallest such column. Every K rows it
//      keeps a checkpoint: that row's H and the next row's E.
//   2. Traceback. Walking from the end cell upwards, each block of K rows is recomputed from the checkpoint above it,
//      over columns 0..(the walk's current column) only, now storing one byte of decisions per cell (H == 0;
//      H == diagonal + σ; H == E; E opened from H; F opened from H). The walk reads those bytes; blocks above the
//      alignment's first row are never recomputed.
//
// Pass 1 costs about (query end + 1) x subject length cells, pass 2 about (alignment rows + K) x (subject end + 1).
// Pairs whose checkpoints and block would not fit in traceback_options::memory_budget fall back to sw_traceback
// (checkpointed, scalar) from the end cell pass 1 found; CPUs without AVX2 use sw_score + sw_traceback. Lanes: 8 bits
// (pass 1 only) when S + max σ < 255, else 16 bits when S + max σ < 65535, else 32 bits; AVX-512BW where the CPU has
// it, else AVX2, chosen at run time (the default binary runs on any x86-64 and builds without kernels elsewhere).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/alignment.hpp"
#include "core/scoring.hpp"
#include "core/smith_waterman.hpp"

namespace swgpu {

enum class align_isa { portable, avx2, avx512bw };

// The instruction sets this binary has code for and this CPU runs, portable first.
std::vector<align_isa> available_align_isas();
// The fastest of them (the default).
align_isa best_align_isa();
const char* align_isa_name(align_isa isa);

// sw_align(query, subject, sc, opt) for a pair whose best local score is `score`. nullopt when `score` is not the
// pair's best score: no cell reaches it, or a cell of the rows computed exceeds it (rows below the end cell are not
// computed, so a larger H there goes unnoticed). score == 0 gives the empty alignment unchecked.
// isa: which implementation runs; an instruction set the CPU lacks falls back to portable.
std::optional<alignment> sw_align_scored(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                                         const scoring& sc, int score, const traceback_options& opt = {},
                                         align_isa isa = best_align_isa());

}  // namespace swgpu
