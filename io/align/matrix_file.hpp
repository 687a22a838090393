// Substitution matrices in: a built-in name or a file in NCBI text format (docs/conventions.md).
#pragma once

#include <string>
#include <string_view>

#include "core/align/scoring.hpp"

namespace swgpu::io {

// `name_or_path` is a built-in matrix name (case-insensitive, as substitution_matrix::builtin_names() lists, or
// EDNAFULL) unless it contains a '/'; anything else is a matrix file. So "BLOSUM62" is always the built-in matrix and
// "./BLOSUM62" the file of that name.
//
// A file's matrix is named after the built-in matrix when its letters and scores equal one (so a downloaded copy of
// NCBI's BLOSUM62 gets BLOSUM62's default gaps and statistics), and after the path otherwise, so that no built-in
// matrix's statistics are applied to different scores.
//
// Errors are swgpu::error with exit code bad_input and "FILE:LINE: what, and what to do" messages: a missing,
// unreadable, empty or binary file, a directory, a file too large for a matrix, and everything
// substitution_matrix::parse_ncbi rejects (no header, ragged rows, non-integer or out-of-range scores, duplicate
// letters, missing rows).
substitution_matrix load_matrix(const std::string& name_or_path);

// The file-level checks and parsing of load_matrix on text already read; `path` names the file in messages.
substitution_matrix parse_matrix_file(std::string_view text, const std::string& path);

}  // namespace swgpu::io
