// NumPy .npy arrays in and out (format versions 1.0, 2.0 and 3.0 read; 1.0 written, 2.0 when the header needs it).
//
// Read: C order only, dtypes u1 u2 u4 u8 i1 i2 i4 i8 f4 f8 in either byte order (big-endian swapped once read), one to three
// dimensions: (W,) is one row (marked one_dimensional), (H, W) one lane, (H, W, C) C interleaved lanes. Anything else (Fortran order,
// bool, complex, structured dtypes, a truncated body) is an input_error naming the file and what to do.
// Written: (H, W) for one lane, (H, W, C) otherwise (`always_3d` forces the third axis, as integral histograms have);
// an array marked one_dimensional (one row) without its rows axis: (W,), or (W, C).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "core/numerics/sat.hpp"
#include "io/output_file.hpp"

namespace swgpu::io {

// True when `head` starts with the .npy magic string.
bool is_npy(std::string_view head);

sat::array parse_npy(std::string_view bytes, const std::string& name);
sat::array read_npy(const std::string& path);

// The header (magic, version, length, dict, padding) of an array of this dtype and shape.
std::string npy_header(sat::dtype type, const std::string& shape);
void write_npy(const sat::array& a, output_file& out, bool always_3d = false);
// Writes `path` atomically (io/output_file.hpp).
void write_npy(const sat::array& a, const std::string& path, bool always_3d = false);
// An (n, n, n) grid of float or double values, C order, as a float32 or float64 .npy of that shape.
template <class T>
void write_cube(output_file& out, std::span<const T> grid, std::int64_t n);
// Writes `path` atomically as the .npy of an array of the dtype and shape of `like` (its elements are not read),
// whose rows `produce` computes and hands to the sink it is given (sat::rows_sink: blocks of rows, from several
// threads, in any order; every row once). A regular file takes each block where it belongs as it comes (no copy of
// the whole array in memory); stdout or a FIFO gets the rows gathered first and written in order.
void write_npy_rows(const sat::array& like, const std::string& path,
                    const std::function<void(const sat::rows_sink&)>& produce);

// The whole file as bytes; input_error naming it when it cannot be read.
std::string read_file_bytes(const std::string& path);
// All of stdin, as bytes (input_error naming "stdin" when it fails).
std::string read_stdin_bytes();

}  // namespace swgpu::io
