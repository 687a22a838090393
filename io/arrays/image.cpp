#include "io/arrays/image.hpp"

#include <sys/stat.h>

#include <png.h>
#include <tiffio.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <vector>

#include "core/error.hpp"
#include "io/output_file.hpp"
#include "io/arrays/npy.hpp"
#include "io/memory.hpp"

namespace swgpu::io {

namespace {

std::string lower_extension(const std::string& path) {
    const auto slash = path.find_last_of('/');
    const auto dot = path.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
    std::string e = path.substr(dot + 1);
    for (auto& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return e;
}

// ---- PNG (libpng reports errors by longjmp: the functions that call it keep only plain data across setjmp) ----

struct png_io {
    const unsigned char* data = nullptr;  // reading: the whole file
    std::size_t size = 0, pos = 0;
    output_file* out = nullptr;  // writing
    char message[256] = {};
};

void png_fail(png_structp png, png_const_charp msg) {
    auto* io = static_cast<png_io*>(png_get_error_ptr(png));
    std::snprintf(io->message, sizeof io->message, "%s", msg);
    png_longjmp(png, 1);
}
void png_warn(png_structp, png_const_charp) {}

void png_read_memory(png_structp png, png_bytep out, png_size_t n) {
    auto* io = static_cast<png_io*>(png_get_io_ptr(png));
    if (n > io->size - io->pos) png_error(png, "the file is truncated");
    std::memcpy(out, io->data + io->pos, n);
    io->pos += n;
}

void png_write_output(png_structp png, png_bytep data, png_size_t n) {
    auto* io = static_cast<png_io*>(png_get_io_ptr(png));
    bool failed = false;
    try {
        io->out->write(std::string_view(reinterpret_cast<const char*>(data), n));
    } catch (const std::exception& e) {
        std::snprintf(io->message, sizeof io->message, "%s", e.what());
        failed = true;
    }
    if (failed) png_longjmp(png, 2);  // outside the handler: nothing of C++ is live between here and png_encode
}
void png_flush_output(png_structp) {}

bool png_begin(png_structp png, png_infop info, png_uint_32* w, png_uint_32* h, int* channels, int* depth,
               int* stored_bits) {
    if (setjmp(png_jmpbuf(png))) return false;
    png_read_info(png, info);
    const int color = png_get_color_type(png, info), bd = png_get_bit_depth(png, info);
    *stored_bits = bd * png_get_channels(png, info);  // a pixel's bits in the file, before the transformations
    if (color == PNG_COLOR_TYPE_PALETTE) {
        // A palette of greys only (r = g = b in every entry) reads as grey, one channel (grey and alpha with a tRNS
        // chunk), as the image it shows; a colour palette as RGB (RGBA with tRNS).
        png_colorp palette = nullptr;
        int entries = 0;
        bool grey = png_get_PLTE(png, info, &palette, &entries) != 0;
        for (int k = 0; grey && k < entries; ++k)
            grey = palette[k].red == palette[k].green && palette[k].red == palette[k].blue;
        png_set_palette_to_rgb(png);  // tRNS becomes an alpha channel
        if (grey) png_set_rgb_to_gray_fixed(png, 1, -1, -1);  // exact: every pixel has r = g = b
    }
    if (color == PNG_COLOR_TYPE_GRAY && bd < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (bd == 16) png_set_swap(png);  // PNG stores big-endian samples
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    *w = png_get_image_width(png, info);
    *h = png_get_image_height(png, info);
    *channels = png_get_channels(png, info);
    *depth = png_get_bit_depth(png, info);
    return true;
}

bool png_rows(png_structp png, png_bytepp rows) {
    if (setjmp(png_jmpbuf(png))) return false;
    png_read_image(png, rows);
    png_read_end(png, nullptr);
    return true;
}

int png_encode(png_structp png, png_infop info, png_uint_32 w, png_uint_32 h, int depth, int color, png_bytepp rows) {
    if (const int r = setjmp(png_jmpbuf(png))) return r;
    // OpenCV's cv::imwrite defaults (grfmt_png.cpp, no IMWRITE_PNG_COMPRESSION given): the Sub filter alone, zlib level 1
    // (Z_BEST_SPEED) and the run-length strategy (Z_RLE). With libpng's own defaults (every filter tried on every row,
    // level 6) the 4096 x 4096 8-bit box-filtered noise of tests/bench/bench_box_filter.sh took 20.5 s instead of
    // 1.0 s (the 2-core development machine, 2026-11-27) for a file 13 % smaller.
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
    png_set_compression_level(png, Z_BEST_SPEED);
    png_set_compression_strategy(png, Z_RLE);
    png_set_IHDR(png, info, w, h, depth, color, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (depth == 16) png_set_swap(png);
    png_write_image(png, rows);
    png_write_end(png, nullptr);
    return 0;
}

// ---- TIFF (libtiff reports errors through a handler; the last message is kept for ours) ----

thread_local std::string tiff_message;

void tiff_error(const char* module, const char* fmt, va_list ap) {
    char buf[512];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    tiff_message = module ? std::string(module) + ": " + buf : std::string(buf);
}

struct tiff_handlers {
    TIFFErrorHandler error, warning;
    tiff_handlers() : error(TIFFSetErrorHandler(tiff_error)), warning(TIFFSetWarningHandler(nullptr)) { tiff_message.clear(); }
    ~tiff_handlers() {
        TIFFSetErrorHandler(error);
        TIFFSetWarningHandler(warning);
    }
};

struct tiff_closer {
    TIFF* t;
    ~tiff_closer() {
        if (t) TIFFClose(t);
    }
};

// A TIFF written into memory first (libtiff seeks back to patch offsets), then copied to the output file.
struct tiff_memory {
    std::string bytes;
    toff_t pos = 0;
};
tsize_t tiff_mem_read(thandle_t h, tdata_t buf, tsize_t n) {
    auto* m = static_cast<tiff_memory*>(h);
    const auto avail = m->pos < m->bytes.size() ? m->bytes.size() - m->pos : 0;
    const auto k = std::min<std::size_t>(static_cast<std::size_t>(n), avail);
    std::memcpy(buf, m->bytes.data() + m->pos, k);
    m->pos += k;
    return static_cast<tsize_t>(k);
}
tsize_t tiff_mem_write(thandle_t h, tdata_t buf, tsize_t n) {
    auto* m = static_cast<tiff_memory*>(h);
    const auto end = m->pos + static_cast<toff_t>(n);
    if (end > m->bytes.size()) m->bytes.resize(end);
    std::memcpy(m->bytes.data() + m->pos, buf, static_cast<std::size_t>(n));
    m->pos = end;
    return n;
}
toff_t tiff_mem_seek(thandle_t h, toff_t off, int whence) {
    auto* m = static_cast<tiff_memory*>(h);
    if (whence == SEEK_SET) m->pos = off;
    else if (whence == SEEK_CUR) m->pos += off;
    else m->pos = m->bytes.size() + off;
    return m->pos;
}
// A TIFF read from bytes in memory (a file or stdin), without a copy.
struct tiff_source {
    std::string_view bytes;
    toff_t pos = 0;
};
tsize_t tiff_src_read(thandle_t h, tdata_t buf, tsize_t n) {
    auto* m = static_cast<tiff_source*>(h);
    const auto avail = m->pos < m->bytes.size() ? m->bytes.size() - m->pos : 0;
    const auto k = std::min<std::size_t>(static_cast<std::size_t>(n), avail);
    std::memcpy(buf, m->bytes.data() + m->pos, k);
    m->pos += k;
    return static_cast<tsize_t>(k);
}
tsize_t tiff_src_write(thandle_t, tdata_t, tsize_t) { return 0; }
toff_t tiff_src_seek(thandle_t h, toff_t off, int whence) {
    auto* m = static_cast<tiff_source*>(h);
    if (whence == SEEK_SET) m->pos = off;
    else if (whence == SEEK_CUR) m->pos += off;
    else m->pos = m->bytes.size() + off;
    return m->pos;
}
toff_t tiff_src_size(thandle_t h) { return static_cast<tiff_source*>(h)->bytes.size(); }
int tiff_mem_close(thandle_t) { return 0; }
toff_t tiff_mem_size(thandle_t h) { return static_cast<tiff_memory*>(h)->bytes.size(); }
int tiff_mem_map(thandle_t, tdata_t*, toff_t*) { return 0; }
void tiff_mem_unmap(thandle_t, tdata_t, toff_t) {}

void require_image_dtype(const sat::array& a, bool allow_float, const std::string& path, const char* format) {
    if (a.type == sat::dtype::u8 || a.type == sat::dtype::u16 ||
        (allow_float && (a.type == sat::dtype::f32 || a.type == sat::dtype::f64)))
        return;
    throw usage_error(std::string(format) + " cannot hold " + sat::name_of(a.type) + " samples (" + path +
                      "); write .npy, or .tif/.tiff for float32 and float64");
}

}  // namespace

image_format sniff_format(std::string_view head, const std::string& path) {
    if (is_npy(head)) return image_format::npy;
    if (head.size() >= 8 && std::memcmp(head.data(), "\x89PNG\r\n\x1a\n", 8) == 0) return image_format::png;
    if (head.size() >= 4 && (std::memcmp(head.data(), "II*\0", 4) == 0 || std::memcmp(head.data(), "MM\0*", 4) == 0))
        return image_format::tiff;
    if (head.size() >= 2 && head[0] == 'P' && (head[1] == '5' || head[1] == '6')) return image_format::pnm;
    if (head.empty()) throw input_error(path, "the file is empty");
    throw input_error(path, "unrecognised file format; expected PNG, TIFF, binary PGM/PPM (P5/P6) or NumPy .npy");
}

image_format format_for_name(const std::string& path) {
    const auto e = lower_extension(path);
    if (e == "npy") return image_format::npy;
    if (e == "png") return image_format::png;
    if (e == "tif" || e == "tiff") return image_format::tiff;
    if (e == "pgm" || e == "ppm" || e == "pnm") return image_format::pnm;
    throw usage_error("cannot tell the output format of '" + path + "'; name it .npy, .png, .tif, .tiff, .pgm or .ppm");
}

sat::array read_array(const std::string& path) {
    const bool in = path == "-";
    const std::string name = in ? "stdin" : path;
    struct stat st{};
    if (!in && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        // A .npy file is read straight into its array (read_npy); its first bytes say so. Anything else (a FIFO, <(...))
        // is read once, below: bytes taken here to look would be gone from it.
        std::ifstream f(path, std::ios::binary);
        char head[8] = {};
        if (f && f.read(head, sizeof head) && is_npy(std::string_view(head, sizeof head))) return read_npy(path);
    }
    const std::string bytes = in ? read_stdin_bytes() : read_file_bytes(path);
    switch (sniff_format(bytes, name)) {
        case image_format::npy: return parse_npy(bytes, name);
        case image_format::pnm: return parse_pnm(bytes, name);
        case image_format::png: return decode_png(bytes, name);
        case image_format::tiff: return decode_tiff(bytes, name);
    }
    throw input_error(name, "unrecognised file format");
}

namespace {

// A compressed image's header can announce far more pixels than its file holds: the decoded array is checked against
// the memory available before it is allocated (io/memory.hpp).
void check_decoded_memory(const std::string& path, std::uint64_t h, std::uint64_t w, int channels, int bytes) {
    check_memory(static_cast<double>(h) * static_cast<double>(w) * channels * bytes,
                 path + ": the header announces a " + std::to_string(h) + " x " + std::to_string(w) + " image of " +
                     std::to_string(channels) + " channel" + (channels == 1 ? "" : "s") + " (" +
                     std::to_string(8 * bytes) + "-bit), decoded",
                 "use a smaller image");
}

// The compressed data of a PNG (its IDAT chunks) inflates to at least a bit per bit of its pixels (the rows' filter
// bytes come on top), and deflate expands at most 1032 to 1: a header announcing more pixels than the data can hold
// is a truncated or corrupt file, refused before the image is allocated.
void check_png_data(std::string_view bytes, const std::string& path, std::uint64_t h, std::uint64_t w, int stored_bits) {
    std::uint64_t idat = 0;
    for (std::size_t at = 8; at + 8 <= bytes.size();) {
        const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at);
        const std::uint64_t length = (std::uint64_t(p[0]) << 24) | (std::uint64_t(p[1]) << 16) | (std::uint64_t(p[2]) << 8) | p[3];
        const std::uint64_t present = std::min<std::uint64_t>(length, bytes.size() - at - 8);
        if (std::memcmp(p + 4, "IDAT", 4) == 0) idat += present;
        if (std::memcmp(p + 4, "IEND", 4) == 0 || length > bytes.size() - at - 8) break;
        at += 12 + static_cast<std::size_t>(length);
    }
    const double pixel_bytes = static_cast<double>(h) * static_cast<double>(w) * stored_bits / 8;
    if (pixel_bytes > 1032.0 * static_cast<double>(idat) + 1032.0)
        throw input_error(path, "not a valid PNG: the header announces a " + std::to_string(h) + " x " + std::to_string(w) +
                                    " image, more than its " + std::to_string(idat) +
                                    " bytes of image data can hold (the file is truncated or corrupt)");
}

// The strips of a TIFF hold its pixels, uncompressed or expanding at most by their compression's ratio (PackBits
// 128:2, deflate 1032:1, LZW 4096 bytes a 9-bit code; 65536:1 bounds the others, zstd's and LZMA's included): a
// header announcing more pixels than the strips present can hold is a truncated or corrupt file, refused before the
// image is allocated.
void check_tiff_strips(TIFF* t, std::size_t file_size, const std::string& path, double decoded) {
    uint16_t compression = COMPRESSION_NONE;
    TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &compression);
    if (!TIFFIsCODECConfigured(compression))
        throw input_error(path, "the TIFF's compression (" + std::to_string(compression) + ") is not supported");
    const double ratio = compression == COMPRESSION_NONE       ? 1
                         : compression == COMPRESSION_PACKBITS ? 64
                         : compression == COMPRESSION_DEFLATE || compression == COMPRESSION_ADOBE_DEFLATE ? 1032
                         : compression == COMPRESSION_LZW ? 3641
                                                          : 65536;
    const uint64_t* offsets = nullptr;
    const uint64_t* counts = nullptr;
    double present = 0;
    if (TIFFGetField(t, TIFFTAG_STRIPOFFSETS, &offsets) && TIFFGetField(t, TIFFTAG_STRIPBYTECOUNTS, &counts) && offsets &&
        counts) {
        const uint32_t strips = TIFFNumberOfStrips(t);
        for (uint32_t k = 0; k < strips; ++k)
            if (offsets[k] < file_size) present += static_cast<double>(std::min<uint64_t>(counts[k], file_size - offsets[k]));
    }
    if (decoded > ratio * present + (compression == COMPRESSION_NONE ? 0 : 65536))
        throw input_error(path, "not a valid TIFF: the header announces " + std::to_string(static_cast<std::uint64_t>(decoded)) +
                                    " bytes of pixels, more than its strips' " + std::to_string(static_cast<std::uint64_t>(present)) +
                                    " bytes hold (the file is truncated or corrupt)");
}

}  // namespace

sat::array read_png(const std::string& path) { return decode_png(read_file_bytes(path), path); }

sat::array decode_png(std::string_view bytes, const std::string& path) {
    png_io io;
    io.data = reinterpret_cast<const unsigned char*>(bytes.data());
    io.size = bytes.size();
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &io, png_fail, png_warn);
    png_infop info = png ? png_create_info_struct(png) : nullptr;
    if (!png || !info) {
        png_destroy_read_struct(&png, &info, nullptr);
        throw runtime_failure("libpng could not be initialised");
    }
    png_set_read_fn(png, &io, png_read_memory);
    png_uint_32 w = 0, h = 0;
    int channels = 0, depth = 0, stored_bits = 0;
    if (!png_begin(png, info, &w, &h, &channels, &depth, &stored_bits)) {
        png_destroy_read_struct(&png, &info, nullptr);
        throw input_error(path, std::string("not a valid PNG: ") + io.message);
    }
    if (depth != 8 && depth != 16) {
        png_destroy_read_struct(&png, &info, nullptr);
        throw input_error(path, "unsupported PNG bit depth " + std::to_string(depth) + " (8 and 16 are supported)");
    }
    sat::array a;
    try {
        check_decoded_memory(path, h, w, channels, depth / 8);
        check_png_data(bytes, path, h, w, stored_bits);
        a = sat::array(depth == 16 ? sat::dtype::u16 : sat::dtype::u8, h, w, channels);
    } catch (...) {
        png_destroy_read_struct(&png, &info, nullptr);
        throw;
    }
    std::vector<png_bytep> rows(h);
    const std::size_t stride = static_cast<std::size_t>(w) * static_cast<std::size_t>(channels) * (depth / 8);
    for (png_uint_32 r = 0; r < h; ++r) rows[r] = static_cast<png_bytep>(a.raw()) + r * stride;
    const bool ok = png_rows(png, rows.data());
    png_destroy_read_struct(&png, &info, nullptr);
    if (!ok) throw input_error(path, std::string("not a valid PNG: ") + io.message);
    return a;
}

void write_png(const sat::array& a, const std::string& path) {
    require_image_dtype(a, false, path, "PNG");
    if (a.lanes < 1 || a.lanes > 4) throw usage_error("PNG holds 1 to 4 channels, not " + std::to_string(a.lanes) + " (" + path + ")");
    if (a.rows > 0x7fffffff || a.cols > 0x7fffffff) throw usage_error("the image is too large for PNG (" + path + ")");
    output_file out(path);
    png_io io;
    io.out = &out;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &io, png_fail, png_warn);
    png_infop info = png ? png_create_info_struct(png) : nullptr;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        throw runtime_failure("libpng could not be initialised");
    }
    png_set_write_fn(png, &io, png_write_output, png_flush_output);
    const int depth = a.type == sat::dtype::u16 ? 16 : 8;
    const int color = a.lanes == 1 ? PNG_COLOR_TYPE_GRAY : a.lanes == 2 ? PNG_COLOR_TYPE_GRAY_ALPHA
                      : a.lanes == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGB_ALPHA;
    std::vector<png_bytep> rows(static_cast<std::size_t>(a.rows));
    const std::size_t stride = static_cast<std::size_t>(a.cols * a.lanes) * (depth / 8);
    for (std::size_t r = 0; r < rows.size(); ++r)
        rows[r] = const_cast<png_bytep>(static_cast<const unsigned char*>(a.raw())) + r * stride;
    const int r = png_encode(png, info, static_cast<png_uint_32>(a.cols), static_cast<png_uint_32>(a.rows), depth, color,
                             rows.data());
    png_destroy_write_struct(&png, &info);
    if (r == 2) throw output_error(path, io.message);
    if (r != 0) throw output_error(path, std::string("PNG encoding failed: ") + io.message);
    out.commit();
}

sat::array read_tiff(const std::string& path) { return decode_tiff(read_file_bytes(path), path); }

sat::array decode_tiff(std::string_view bytes, const std::string& path) {
    tiff_handlers handlers;
    tiff_source src{bytes};
    tiff_closer t{TIFFClientOpen(path.c_str(), "r", &src, tiff_src_read, tiff_src_write, tiff_src_seek, tiff_mem_close,
                                 tiff_src_size, tiff_mem_map, tiff_mem_unmap)};
    if (!t.t) throw input_error(path, "not a valid TIFF: " + tiff_message);
    // A stack or a series of pages: which page is meant is not ours to guess.
    if (const auto pages = TIFFNumberOfDirectories(t.t); pages > 1)
        throw input_error(path, "the TIFF holds " + std::to_string(pages) +
                                    " pages (images); one page is read: save the page you mean as a TIFF of its own");
    uint32_t w = 0, h = 0;
    uint16_t spp = 1, bps = 1, format = SAMPLEFORMAT_UINT, planar = PLANARCONFIG_CONTIG, photometric = PHOTOMETRIC_MINISBLACK;
    TIFFGetField(t.t, TIFFTAG_IMAGEWIDTH, &w);
    TIFFGetField(t.t, TIFFTAG_IMAGELENGTH, &h);
    TIFFGetFieldDefaulted(t.t, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(t.t, TIFFTAG_BITSPERSAMPLE, &bps);
    TIFFGetFieldDefaulted(t.t, TIFFTAG_SAMPLEFORMAT, &format);
    TIFFGetFieldDefaulted(t.t, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetField(t.t, TIFFTAG_PHOTOMETRIC, &photometric);
    if (w == 0 || h == 0) throw input_error(path, "the image is empty (" + std::to_string(h) + " x " + std::to_string(w) + ")");
    sat::dtype type;
    if (format == SAMPLEFORMAT_UINT && bps == 8) type = sat::dtype::u8;
    else if (format == SAMPLEFORMAT_UINT && bps == 16) type = sat::dtype::u16;
    else if (format == SAMPLEFORMAT_IEEEFP && bps == 32) type = sat::dtype::f32;
    else if (format == SAMPLEFORMAT_IEEEFP && bps == 64) type = sat::dtype::f64;
    else
        throw input_error(path, "unsupported TIFF bit depth " + std::to_string(bps) +
                                    (format == SAMPLEFORMAT_IEEEFP ? " (floating point)" : format == SAMPLEFORMAT_INT ? " (signed)" : "") +
                                    "; supported: 8- and 16-bit unsigned, 32- and 64-bit float");
    if (spp < 1 || spp > 4) throw input_error(path, "unsupported TIFF with " + std::to_string(spp) + " samples per pixel (1 to 4 are supported)");
    if (photometric == PHOTOMETRIC_PALETTE) throw input_error(path, "palette TIFFs are not supported; save it as grey or RGB");
    if (planar != PLANARCONFIG_CONTIG) throw input_error(path, "planar (separate) TIFFs are not supported; save it with contiguous samples");
    if (TIFFIsTiled(t.t)) throw input_error(path, "tiled TIFFs are not supported; save it in strips");
    check_decoded_memory(path, h, w, spp, bps / 8);
    check_tiff_strips(t.t, bytes.size(), path, static_cast<double>(h) * w * spp * (bps / 8));
    sat::array a(type, h, w, spp);
    const std::size_t stride = static_cast<std::size_t>(w) * spp * (bps / 8);
    if (static_cast<std::size_t>(TIFFScanlineSize64(t.t)) != stride) throw input_error(path, "unexpected TIFF scanline size");
    for (uint32_t r = 0; r < h; ++r)
        if (TIFFReadScanline(t.t, static_cast<unsigned char*>(a.raw()) + r * stride, r, 0) < 0)
            throw input_error(path, "TIFF row " + std::to_string(r) + " cannot be read: " + tiff_message);
    return a;
}

void write_tiff(const sat::array& a, const std::string& path) {
    require_image_dtype(a, true, path, "TIFF");
    if (a.lanes < 1 || a.lanes > 4) throw usage_error("this TIFF writer holds 1 to 4 channels, not " + std::to_string(a.lanes) + " (" + path + ")");
    output_file out(path);
    tiff_handlers handlers;
    tiff_memory mem;
    {
        tiff_closer t{TIFFClientOpen(path.c_str(), a.bytes() > 0xF0000000u ? "w8" : "w", &mem, tiff_mem_read, tiff_mem_write,
                                     tiff_mem_seek, tiff_mem_close, tiff_mem_size, tiff_mem_map, tiff_mem_unmap)};
        if (!t.t) throw output_error(path, "libtiff could not start the file: " + tiff_message);
        const uint16_t bps = static_cast<uint16_t>(sat::size_of(a.type) * 8), spp = static_cast<uint16_t>(a.lanes);
        TIFFSetField(t.t, TIFFTAG_IMAGEWIDTH, static_cast<uint32_t>(a.cols));
        TIFFSetField(t.t, TIFFTAG_IMAGELENGTH, static_cast<uint32_t>(a.rows));
        TIFFSetField(t.t, TIFFTAG_BITSPERSAMPLE, bps);
        TIFFSetField(t.t, TIFFTAG_SAMPLESPERPIXEL, spp);
        TIFFSetField(t.t, TIFFTAG_SAMPLEFORMAT, sat::is_float(a.type) ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT);
        TIFFSetField(t.t, TIFFTAG_PHOTOMETRIC, spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
        TIFFSetField(t.t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
        TIFFSetField(t.t, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
        if (spp == 2 || spp == 4) {
            const uint16_t extra[1] = {EXTRASAMPLE_UNASSALPHA};
            TIFFSetField(t.t, TIFFTAG_EXTRASAMPLES, 1, extra);
        }
        TIFFSetField(t.t, TIFFTAG_ROWSPERSTRIP, TIFFDefaultStripSize(t.t, 0));
        const std::size_t stride = static_cast<std::size_t>(a.cols * a.lanes) * sat::size_of(a.type);
        std::vector<unsigned char> row(stride);
        for (index_t r = 0; r < a.rows; ++r) {
            std::memcpy(row.data(), static_cast<const unsigned char*>(a.raw()) + static_cast<std::size_t>(r) * stride, stride);
            if (TIFFWriteScanline(t.t, row.data(), static_cast<uint32_t>(r), 0) < 0)
                throw output_error(path, "TIFF encoding failed: " + tiff_message);
        }
        if (!TIFFFlush(t.t)) throw output_error(path, "TIFF encoding failed: " + tiff_message);
    }
    const std::size_t chunk = std::size_t(1) << 24;
    for (std::size_t at = 0; at < mem.bytes.size(); at += chunk)
        out.write(std::string_view(mem.bytes).substr(at, chunk));
    out.commit();
}

namespace {

std::string decimal(unsigned __int128 v) {
    std::string s;
    do {
        s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
        v /= 10;
    } while (v);
    return s;
}

}  // namespace

sat::array parse_pnm(std::string_view bytes, const std::string& name) {
    std::size_t at = 2;
    const bool colour = bytes.size() >= 2 && bytes[1] == '6';
    auto number = [&](const char* what) -> unsigned long {
        for (;;) {  // whitespace and comments
            while (at < bytes.size() && std::isspace(static_cast<unsigned char>(bytes[at]))) ++at;
            if (at < bytes.size() && bytes[at] == '#') {
                while (at < bytes.size() && bytes[at] != '\n') ++at;
                continue;
            }
            break;
        }
        if (at >= bytes.size() || !std::isdigit(static_cast<unsigned char>(bytes[at])))
            throw input_error(name, std::string("malformed PGM/PPM header: no ") + what);
        unsigned long v = 0;
        while (at < bytes.size() && std::isdigit(static_cast<unsigned char>(bytes[at]))) {
            v = v * 10 + static_cast<unsigned long>(bytes[at] - '0');
            if (v > 0xffffffffUL) throw input_error(name, std::string("malformed PGM/PPM header: ") + what + " too large");
            ++at;
        }
        return v;
    };
    const auto w = number("width"), h = number("height"), maxval = number("maxval");
    if (at >= bytes.size() || !std::isspace(static_cast<unsigned char>(bytes[at])))
        throw input_error(name, "malformed PGM/PPM header: no whitespace after maxval");
    ++at;
    if (w == 0 || h == 0) throw input_error(name, "the image is empty (" + std::to_string(h) + " x " + std::to_string(w) + ")");
    if (maxval == 0 || maxval > 65535)
        throw input_error(name, "unsupported PGM/PPM maxval " + std::to_string(maxval) + " (1 to 65535)");
    const bool wide = maxval > 255;
    // The samples are raw: the header's size is checked against the bytes present before the array is allocated (a
    // width and height of up to 2^32 - 1 each announce up to 2^67 bytes).
    const unsigned __int128 expected = static_cast<unsigned __int128>(w) * h * (colour ? 3 : 1) * (wide ? 2 : 1);
    if (expected > bytes.size() - at)
        throw input_error(name, "the PGM/PPM data is truncated: " + decimal(expected) +
                                    " bytes expected, " + std::to_string(bytes.size() - at) + " present");
    sat::array a(wide ? sat::dtype::u16 : sat::dtype::u8, static_cast<index_t>(h), static_cast<index_t>(w), colour ? 3 : 1);
    if (!wide) {
        std::memcpy(a.raw(), bytes.data() + at, a.bytes());
    } else {
        auto* d = a.data<std::uint16_t>();
        for (std::size_t k = 0; k < a.elements(); ++k)
            d[k] = static_cast<std::uint16_t>((static_cast<unsigned char>(bytes[at + 2 * k]) << 8) |
                                              static_cast<unsigned char>(bytes[at + 2 * k + 1]));
    }
    return a;
}

void write_pnm(const sat::array& a, const std::string& path) {
    require_image_dtype(a, false, path, "PGM/PPM");
    if (a.lanes != 1 && a.lanes != 3)
        throw usage_error("PGM/PPM hold 1 or 3 channels, not " + std::to_string(a.lanes) + " (" + path + "); write .png or .tif");
    output_file out(path);
    const bool wide = a.type == sat::dtype::u16;
    out.write(std::string(a.lanes == 1 ? "P5\n" : "P6\n") + std::to_string(a.cols) + " " + std::to_string(a.rows) + "\n" +
              (wide ? "65535" : "255") + "\n");
    if (!wide) {
        out.write(std::string_view(static_cast<const char*>(a.raw()), a.bytes()));
    } else {
        std::string buf(a.bytes(), '\0');
        const auto* d = a.data<std::uint16_t>();
        for (std::size_t k = 0; k < a.elements(); ++k) {
            buf[2 * k] = static_cast<char>(d[k] >> 8);
            buf[2 * k + 1] = static_cast<char>(d[k] & 0xff);
        }
        out.write(buf);
    }
    out.commit();
}

void write_array(const sat::array& a, const std::string& path) {
    switch (format_for_name(path)) {
        case image_format::npy: write_npy(a, path); return;
        case image_format::png: write_png(a, path); return;
        case image_format::tiff: write_tiff(a, path); return;
        case image_format::pnm: write_pnm(a, path); return;
    }
}

}  // namespace swgpu::io
