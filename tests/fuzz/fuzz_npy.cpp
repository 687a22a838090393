// libFuzzer target: .npy arrays (io/arrays/npy.hpp): the header dictionary (descr, fortran_order, shape in any
// order, quoted either way), format versions, dtypes, shapes and truncated bodies. The bytes go through parse_npy
// (in memory) and read_npy (a file: its own header read, then the body straight into the array); both must agree,
// the same array or the same message.
#include <cstring>

#include "io/arrays/npy.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace swgpu;

namespace {

void check(const sat::array& a) {
    if (a.rows < 1 || a.cols < 1 || a.lanes < 1) fuzz::fuzz_abort("an empty array");
    if (a.one_dimensional && (a.rows != 1 || a.lanes != 1)) fuzz::fuzz_abort("a one-dimensional array with rows or lanes");
    if (a.storage.size() * 8 < a.bytes()) fuzz::fuzz_abort("storage smaller than the array");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string path = fuzz::scratch_path("array.npy");
    static fuzz::scratch_cleanup cleanup{{path}};
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    sat::array from_bytes, from_file;
    std::string bytes_error, file_error;
    try {
        from_bytes = io::parse_npy(bytes, path);
        check(from_bytes);
    } catch (const error& e) {
        fuzz::expect(e);
        bytes_error = e.what();
    }
    fuzz::write_file(path, bytes);
    try {
        from_file = io::read_npy(path);
        check(from_file);
    } catch (const error& e) {
        fuzz::expect(e);
        file_error = e.what();
    }
    if (bytes_error != file_error) {
        std::fprintf(stderr, "parse_npy: '%s'\nread_npy: '%s'\n", bytes_error.c_str(), file_error.c_str());
        fuzz::fuzz_abort("parse_npy and read_npy disagree");
    }
    if (bytes_error.empty() &&
        (from_bytes.type != from_file.type || from_bytes.rows != from_file.rows || from_bytes.cols != from_file.cols ||
         from_bytes.lanes != from_file.lanes || from_bytes.one_dimensional != from_file.one_dimensional ||
         std::memcmp(from_bytes.raw(), from_file.raw(), from_bytes.bytes()) != 0))
        fuzz::fuzz_abort("parse_npy and read_npy read different arrays");
    return 0;
}
