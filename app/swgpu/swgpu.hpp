// swgpu as a library: exact Smith-Waterman-Gotoh search and alignment, and summed-area tables, for programs that are
// not the command line (installed as <swgpu/swgpu.hpp>, which is <swgpu/align.hpp> and <swgpu/numerics.hpp>; CMake:
// find_package(swgpu) and swgpu::swgpu).
//
// This header needs the C++20 standard library only (no CUDA, no HTSlib). Every call gives what the command line
// gives for the same input and settings: `search` returns the hits `swgpu align` prints, in its order, with the
// values of its BLAST columns; errors are swgpu::error exceptions carrying the exit code the command line would exit
// with (1 bad input, 2 bad settings, 3 device failure, 4 out of memory, 5 output).
//
//     auto db = swgpu::read_sequences("uniprot.fa");
//     auto hits = swgpu::search(swgpu::read_sequences("q.fa"), db);   // BLOSUM62 11/1, 500 hits per query, E <= 10
//     swgpu::database resident("uniprot.swdb");                      // read and encoded once, the GPUs started once
//     auto more = resident.search(queries);
#pragma once

#include "align.hpp"
#include "numerics.hpp"
