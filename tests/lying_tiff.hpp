// A TIFF whose header announces 100000 x 100000 grey 8-bit pixels (10 GB decoded) and which holds one row of them:
// the image reader must refuse it before allocating (tests of the memory estimate and of lying headers).
#pragma once

#include <tiffio.h>

#include <cstdint>
#include <string>
#include <vector>

inline bool write_lying_tiff(const std::string& path) {
    TIFF* t = TIFFOpen(path.c_str(), "w");
    if (!t) return false;
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, 100000u);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, 100000u);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 1u);
    std::vector<std::uint8_t> row(100000, 7);
    const bool written = TIFFWriteScanline(t, row.data(), 0, 0) >= 0;
    TIFFClose(t);
    return written;
}
