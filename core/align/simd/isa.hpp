// The CPU instruction sets the vector kernels of core/align/simd/ are built for, and which of them this CPU runs.
//
// Each family of kernels (interseq: the inter-sequence score pass; align_scored: the alignment of a hit of known
// score; long_pair_rows: the long-pair row groups) has one source written over lane operations and is compiled once
// per instruction set, each copy in its own translation unit (<family>_<isa>.cpp, its code between SWGPU_ISA_BEGIN and
// SWGPU_ISA_END of core/align/simd/isa_target.hpp), and registers each copy under one `isa`. A family runs the copy of
// the best instruction set it has and the CPU runs; tests and benchmarks run each in turn. The default binary runs on
// any x86-64 and builds (with only the portable code) on any other architecture.
#pragma once

#include <span>

// The x86 kernels are compiled on x86 unless SWGPU_NO_X86_KERNELS is defined (which builds and tests the portable
// path on an x86 machine).
#if (defined(__x86_64__) || defined(__i386__)) && !defined(SWGPU_NO_X86_KERNELS)
#define SWGPU_X86_KERNELS 1
#endif

namespace swgpu::simd {

// Ascending: a CPU that runs one runs those before it. portable: the compiler's baseline (any CPU of the target);
// sse41: SSE4.1; avx2: AVX2; avx512bw: AVX-512F and AVX-512BW (with AVX2).
enum class isa { portable, sse41, avx2, avx512bw };

// Whether this CPU, and its operating system (which must save the wider vector registers), runs code built for
// `target`; probed once. portable: always; the others: only on x86.
bool cpu_supports(isa target);

// "portable", "sse41", "avx2", "avx512bw": the names that tests and benchmarks print and take.
const char* isa_name(isa target);

// The instruction sets this binary has kernels for and this CPU runs, ascending (portable first; portable alone when
// the x86 kernels are not compiled).
std::span<const isa> available_isas();
// The last of them: the default.
isa best_isa();

}  // namespace swgpu::simd
