// Substitution matrices in: a built-in name or a file in NCBI text format (docs/conventions.md).
#pragma once

#include <optional>
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

// The scoring of a search as a face asks for it: the matrix (a built-in name, or a file, as matrix_from_option reads
// it; empty: BLOSUM62 for protein, match/mismatch for DNA), the gap costs (the matrix's defaults where not given),
// checked, and with E-value parameters when `evalues` (else the usage error naming the supported pairs).
struct scoring_request {
    seq_type type = seq_type::protein;
    std::string matrix;
    std::optional<int> gap_open, gap_extend;
    int match = 2, mismatch = -3;
    bool evalues = true;
};
scoring make_scoring(const scoring_request& r);

// A built-in name, or a file. A word that is neither (no '/', no such file) is reported as an unknown name (a usage
// error listing the built-in names) rather than as a missing file.
substitution_matrix matrix_from_option(const std::string& name_or_path);

}  // namespace swgpu::io
