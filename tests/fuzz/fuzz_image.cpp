// libFuzzer target: images as `swgpu sat` and `ihist` read them (io/arrays/image.hpp), from bytes: the format
// sniffed from the first bytes, then PNG through libpng (bit depths, palettes, tRNS, interlacing, 16-bit), TIFF
// through libtiff (strips, sample formats, samples per pixel, pages, compressions) or binary PGM/PPM (header,
// comments, maxval, truncation); .npy has its own target. A header announcing more pixels than the data can hold
// must be refused before the image is allocated (the memory allowed is 1 GiB here, so that a size the machine could
// hold is not taken for one it cannot).
#include "core/tuning.hpp"
#include "io/arrays/image.hpp"
#include "io/arrays/npy.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace swgpu;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const tuning::scoped_override memory("host.memory_mib=1024");
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    try {
        sat::array a;
        switch (io::sniff_format(bytes, "fuzz")) {
            case io::image_format::npy: return 0;  // fuzz_npy
            case io::image_format::pnm: a = io::parse_pnm(bytes, "fuzz"); break;
            case io::image_format::png: a = io::decode_png(bytes, "fuzz"); break;
            case io::image_format::tiff: a = io::decode_tiff(bytes, "fuzz"); break;
        }
        if (a.rows < 1 || a.cols < 1 || a.lanes < 1 || a.lanes > 4) fuzz::fuzz_abort("an image of impossible shape");
        if (a.type != sat::dtype::u8 && a.type != sat::dtype::u16 && a.type != sat::dtype::f32 && a.type != sat::dtype::f64)
            fuzz::fuzz_abort("an image of a dtype no image has");
        if (a.storage.size() * 8 < a.bytes()) fuzz::fuzz_abort("storage smaller than the image");
    } catch (const error& e) {
        fuzz::expect(e, true);
    }
    return 0;
}
