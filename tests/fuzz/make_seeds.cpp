// Writes the seed corpora of the fuzz targets (scripts/fuzz.sh): small valid inputs made by the project's own
// writers from the repository's data (data/, tests/data/), and a few odd ones, so that each fuzzer starts inside its
// grammar. Deterministic: the same seeds on every run.
//
//   make_seeds ROOT OUT     writes OUT/<target>/<seed>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/numerics/sat.hpp"
#include "io/align/database_file.hpp"
#include "io/arrays/image.hpp"
#include "io/arrays/npy.hpp"

namespace fs = std::filesystem;
using namespace swgpu;

namespace {

fs::path out_dir;

void put(const std::string& target, const std::string& name, const std::string& bytes) {
    fs::create_directories(out_dir / target);
    std::ofstream(out_dir / target / name, std::ios::binary) << bytes;
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The first `records` FASTA records of a file.
std::string first_records(const fs::path& p, int records) {
    const std::string all = slurp(p);
    std::size_t at = 0;
    for (int k = 0; k <= records && at != std::string::npos; ++k) at = all.find('>', at + 1);
    return all.substr(0, at == std::string::npos ? all.size() : at);
}

sat::array ramp(sat::dtype t, index_t rows, index_t cols, index_t lanes) {
    sat::array a(t, rows, cols, lanes);
    auto* b = static_cast<unsigned char*>(a.raw());
    for (std::size_t k = 0; k < a.bytes(); ++k) b[k] = static_cast<unsigned char>(k * 37 + 11);
    if (t == sat::dtype::f32)
        for (std::size_t k = 0; k < a.elements(); ++k) a.data<float>()[k] = static_cast<float>(k) * 0.5f;
    if (t == sat::dtype::f64)
        for (std::size_t k = 0; k < a.elements(); ++k) a.data<double>()[k] = static_cast<double>(k) - 3.25;
    return a;
}

std::string npy_bytes(const sat::array& a, bool always_3d = false) {
    const fs::path tmp = out_dir / "tmp.npy";
    io::write_npy(a, tmp.string(), always_3d);
    std::string b = slurp(tmp);
    fs::remove(tmp);
    return b;
}

std::string image_bytes(const sat::array& a, const std::string& ext) {
    const fs::path tmp = out_dir / ("tmp." + ext);
    io::write_array(a, tmp.string());
    std::string b = slurp(tmp);
    fs::remove(tmp);
    return b;
}

std::string npy_i64(const std::vector<std::int64_t>& v, const std::string& shape) {
    std::string b = io::npy_header(sat::dtype::i64, shape);
    b.append(reinterpret_cast<const char*>(v.data()), v.size() * 8);
    return b;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: make_seeds ROOT OUT\n");
        return 2;
    }
    const fs::path root = argv[1];
    out_dir = argv[2];
    fs::create_directories(out_dir);

    // .swdb: databases of the demo's records and of the crosscheck's DNA, written by write_database.
    {
        const fs::path fa = out_dir / "tmp.fa";
        const std::pair<const char*, std::string> sources[] = {
            {"demo", first_records(root / "data/demo_db.fa", 6)},
            {"queries", slurp(root / "data/demo_queries.fa")},
            {"dna", first_records(root / "tests/data/crosscheck/lambda_pieces.fa", 3)},
            {"one", ">x\nM\n"},
        };
        for (const auto& [name, text] : sources) {
            std::ofstream(fa, std::ios::binary) << text;
            io::write_database(fa.string(), (out_dir / "tmp").string());
            put("database_file", name, slurp(out_dir / "tmp.swdb"));
            fs::remove(out_dir / "tmp.swdb");
        }
        fs::remove(fa);
    }

    // .npy: every dtype, (W,), (H, W), (H, W, C), and the header versions 1.0 and 2.0 with odd dictionaries.
    for (const auto t : {sat::dtype::u8, sat::dtype::u16, sat::dtype::u32, sat::dtype::u64, sat::dtype::i8,
                         sat::dtype::i16, sat::dtype::i32, sat::dtype::i64, sat::dtype::f32, sat::dtype::f64}) {
        put("npy", std::string(sat::name_of(t)) + "_2d", npy_bytes(ramp(t, 3, 4, 1)));
        sat::array row = ramp(t, 1, 5, 1);
        row.one_dimensional = true;
        put("npy", std::string(sat::name_of(t)) + "_1d", npy_bytes(row));
    }
    put("npy", "u8_3d", npy_bytes(ramp(sat::dtype::u8, 2, 3, 3)));
    put("npy", "u16_3d_always", npy_bytes(ramp(sat::dtype::u16, 2, 2, 1), true));
    {
        std::string v2 = "\x93NUMPY\x02";
        v2 += '\0';
        const std::string dict = "{\"shape\": (2, 2), \"fortran_order\": False, \"descr\": \">u1\"}\n";
        for (int k = 0; k < 4; ++k) v2 += static_cast<char>(k == 0 ? dict.size() : 0);
        put("npy", "v2_reordered", v2 + dict + "abcd");
        std::string fortran = io::npy_header(sat::dtype::f32, "(2, 1)");
        fortran.replace(fortran.find("False"), 5, "True ");
        put("npy", "fortran", fortran + std::string(8, '\1'));
        put("npy", "truncated", io::npy_header(sat::dtype::f64, "(10, 10)") + "short");
    }

    // Images: PNG, TIFF and PGM/PPM of each depth and channel count they hold, written by the project's writers.
    for (const auto t : {sat::dtype::u8, sat::dtype::u16})
        for (index_t lanes = 1; lanes <= 4; ++lanes) {
            const std::string tag = std::string(sat::name_of(t)) + "_" + std::to_string(lanes);
            put("image", "png_" + tag, image_bytes(ramp(t, 5, 3, lanes), "png"));
            put("image", "tiff_" + tag, image_bytes(ramp(t, 3, 5, lanes), "tif"));
            if (lanes == 1 || lanes == 3) put("image", "pnm_" + tag, image_bytes(ramp(t, 2, 3, lanes), "pgm"));
        }
    put("image", "tiff_f32", image_bytes(ramp(sat::dtype::f32, 2, 2, 1), "tif"));
    put("image", "tiff_f64_3", image_bytes(ramp(sat::dtype::f64, 2, 2, 3), "tif"));
    put("image", "pgm_comments", std::string("P5\n# a comment\n3 1\n# another\n255\nabc"));
    put("image", "ppm_truncated", std::string("P6 4 4 65535\nxx"));

    // Matrix Market: byte 0 = triangle (bit 0 upper) and --require-triangular (bit 1), then the file.
    const std::string general = "%%MatrixMarket matrix coordinate real general\n% a comment\n3 3 5\n1 1 2.0\n2 1 -1\n"
                                "2 2 4\n3 2 1.5e0\n3 3 1\n";
    put("matrix_market", "general_lower", std::string(1, '\0') + general);
    put("matrix_market", "general_upper", std::string(1, '\1') + general);
    put("matrix_market", "general_required", std::string(1, '\2') + general);
    put("matrix_market", "symmetric_pattern",
        std::string(1, '\1') + "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 6\n1 1\n2 2\n3 3\n4 4\n2 1\n4 3\n");
    put("matrix_market", "integer_duplicates",
        std::string(1, '\0') + "%%MatrixMarket Matrix Coordinate Integer General\r\n2 2 4\r\n1 1 1\r\n1 1 2\r\n2 2 3\r\n2 1 -7\r\n");
    put("matrix_market", "array", std::string(1, '\0') + "%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n1\n");
    put("matrix_market", "lying", std::string(1, '\0') + "%%MatrixMarket matrix coordinate real general\n100000 100000 3\n1 1 1\n2 2 nan\n");

    // Rectangles: top left bottom right.
    put("rectangles", "basic", "0\t0\t3\t3\n# comment\n\n1 2 4 5\r\n  -1\t+2 3 4\n");
    put("rectangles", "bad", "0 0 3\n1 2 3 4 5\nx 1 2 3\n99999999999999999999 0 0 0\n");

    // --batch lists: byte 0 picks the -o folder.
    put("batch_list", "blanks", std::string(1, '\0') + "q1.fa\n# comment\n\nq2.fa out2.tsv\r\n/abs/q3.fa /abs/o3\n");
    put("batch_list", "tabs", std::string(1, '\2') + "my query.fa\tmy out.tsv\n\t\nq.fa\n");
    put("batch_list", "twice", std::string(1, '\3') + "a/q.fa\nb/q.fa\n-\n");

    // Loop index arrays: mode byte, two bytes of --locations/--array size, W.npy, then R.npy.
    const std::string w = npy_i64({0, 1, 2, 1, 0}, "(5,)"), r = npy_i64({1, 2, 0, 2, 1, 1, 0, 2, 2, 0}, "(5, 2)");
    put("loop_indices", "writes_only", std::string("\0\0\0", 3) + w);
    put("loop_indices", "writes_reads", std::string("\1\0\0", 3) + w + r);
    put("loop_indices", "locations", std::string("\3\x0a\0", 3) + w + npy_i64({4, 3, 2, 1, 0}, "(5,)"));
    put("loop_indices", "array", std::string("\5\x03\0", 3) + npy_bytes(ramp(sat::dtype::u8, 1, 4, 1)) +
                                     npy_bytes(ramp(sat::dtype::i16, 4, 1, 1)));

    // FASTQ with qualities: byte 0 = skip_bad (bit 0) and the chunk size (bits 1-7).
    put("fastq", "reads", std::string(1, '\0') + "@r1 first\nACGT\nAC\n+\nIIII\nII\n@r2\nA C\n+r2\n#!~\n");
    put("fastq", "skip", std::string(1, '\3') + "@r1\nAC1T\n+\nIIII\n@r2\nACGT\n+\nII I\n@r3\nGG\n+\n!!\n");
    put("fastq", "crlf_fasta", std::string(1, '\4') + "@q\r\nMK\r\n+\r\n!!\r\n>fa\r\nMKV\r\n");
    put("fastq", "demo_queries", std::string(1, '\0') + slurp(root / "data/demo_queries.fa"));

    // Regions of the fixed genome of fuzz_region.cpp: byte 0 even = plain FASTA, odd = bgzip.
    int k = 0;
    for (const char* region : {"chr1", "chr1:3", "chr1:3-12", "{chr1:1-5}:2-4", "chr1:1-5", "a-b:1-2", "{x}",
                               "chr1:1,000-2,000", "2:0-0", "chr1:9-3", "chr1:20-30", "{chr1:2}"}) {
        put("region", "plain_" + std::to_string(k), std::string(1, '\0') + region);
        put("region", "bgzip_" + std::to_string(k++), std::string(1, '\1') + region);
    }
    return 0;
}
