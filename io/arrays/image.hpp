// Images in and out for the table commands (swgpu sat, swgpu ihist): PNG through libpng, TIFF through libtiff, binary
// PGM (P5) and PPM (P6) by hand (a header and raw samples), .npy through io/arrays/npy.hpp.
//
// Read (the format is recognised by its first bytes, not by the file name):
//   PNG   8- or 16-bit, grey, grey+alpha, RGB, RGBA (palette images: grey when every palette entry is a grey, else
//         RGB; with a tRNS chunk, alpha too; 1/2/4-bit grey becomes 8-bit)
//   TIFF  8- or 16-bit unsigned, or 32- or 64-bit float samples; 1 to 4 samples per pixel, contiguous (chunky), in
//         strips, one page (a file of several pages is refused, naming how many)
//   PGM/PPM  binary P5/P6, maxval 1..255 (8-bit) or 256..65535 (16-bit, big-endian as the format says)
//   .npy  see io/arrays/npy.hpp
// The name "-" reads stdin (messages call it "stdin"). Every image becomes an H x W x C array of uint8, uint16,
// float32 or float64; the C channels stay apart (alpha included).
// A file that is truncated, has an unsupported bit depth or layout, or is empty is an input_error naming it; a PNG or
// TIFF header announcing more pixels than the memory available holds is an out_of_memory error (io/memory.hpp) before
// the image is allocated, and one announcing more than its data can hold (PGM/PPM: the bytes present; PNG: its IDAT
// chunks inflated at deflate's most, 1032:1; TIFF: its strips at their compression's most) an input_error, also
// before.
//
// Write (the format is chosen by the extension of the name: .png, .tif/.tiff, .pgm/.ppm, .npy): atomically, as
// io/output_file.hpp describes. PNG and PGM/PPM take uint8 or uint16 with 1-4 (PNG) or 1/3 (PGM/PPM) channels; TIFF
// also float32 and float64; anything else is a usage_error that names the formats that can hold it.
#pragma once

#include <string>
#include <string_view>

#include "core/numerics/sat.hpp"

namespace swgpu::io {

enum class image_format { npy, png, tiff, pnm };

// The format of a file from its first bytes; input_error naming `path` when it is none of them.
image_format sniff_format(std::string_view head, const std::string& path);
// The format to write from the extension of `path`; usage_error when it has none of them.
image_format format_for_name(const std::string& path);

// Reads any supported file ("-": stdin).
sat::array read_array(const std::string& path);

sat::array read_png(const std::string& path);
sat::array decode_png(std::string_view bytes, const std::string& path);  // the file's bytes, already read
sat::array read_tiff(const std::string& path);
// The same from the file's bytes, `name` in messages.
sat::array decode_png(std::string_view bytes, const std::string& name);
sat::array decode_tiff(std::string_view bytes, const std::string& name);
sat::array parse_pnm(std::string_view bytes, const std::string& name);

// Writes `a` to `path` in the format its extension names.
void write_array(const sat::array& a, const std::string& path);

void write_png(const sat::array& a, const std::string& path);
void write_tiff(const sat::array& a, const std::string& path);
void write_pnm(const sat::array& a, const std::string& path);

}  // namespace swgpu::io
