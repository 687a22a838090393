// The reader of a GPU search alone, in G residues/s: every chunk of a database read as `swgpu align` reads it for the
// GPU (io::database_stream, chunks ramping up to CHUNK residues, their storage recycled as the pipeline recycles it),
// encoded for BLOSUM62, and packed into the GPU's layout (plan_database, then fill_database into one reused buffer,
// as gpu::prepare_chunk does before its copy to the device, which this program does not make).
//
//   bench_reader DB [-r RUNS] [--chunk RESIDUES] [--separate] [--no-pack] [--cold]
//
// DB: a .swdb (or any database swgpu align reads). --separate reads letters, then encodes them in a second pass (the
// path of a FASTA file or a format-2 .swdb); by default a .swdb encodes as it reads, as the search does. Medians of
// RUNS passes over the whole database after one warm-up pass (the file in the page cache). --cold starts every pass
// without storage, as a search starts (its first chunks take storage and fault it in); by default a pass reads into
// the storage of the pass before.
//
//   bench_reader FASTA --parse [-r RUNS] [--chunk RESIDUES] [--sequential] [--block BYTES] [--no-titles]
//
// --parse times io::sequence_reader alone on a FASTA file (plain, gzip or bgzip): read_chunk into one reused set,
// chunks of RESIDUES, no typing or encoding. --sequential parses line by line on one thread (read_options::parallel
// off), --block sets the parallel parse's block size, --no-titles leaves the headers' descriptions out (as a search
// that prints no titles reads its database). The reader threads are host.reader_threads (SWGPU_TUNE).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/align/scoring.hpp"
#include "core/align/sequence.hpp"
#include "core/error.hpp"
#ifdef SWGPU_HAVE_CUDA
#include "gpu/align/db_layout.hpp"  // the GPU's layout: built with CUDA only
#endif
#include "io/align/database_stream.hpp"
#include "io/align/sequence_reader.hpp"

using namespace swgpu;
using steady = std::chrono::steady_clock;

namespace {

double since(steady::time_point t) { return std::chrono::duration<double>(steady::now() - t).count(); }

struct pass_times {
    double read = 0, encode = 0, pack = 0;
    std::uint64_t residues = 0, chunks = 0, unknown = 0;
    double total() const { return read + encode + pack; }
};

// One pass over the database. `spent` carries a chunk's storage from pass to pass, so that every pass reads into
// storage already in memory, as the chunks after the first few of a search do.
pass_times one_pass(const std::string& db, std::uint64_t chunk, bool separate, bool pack, const scoring& sc,
                    std::vector<std::uint8_t>& packed, sequence_set& spent) {
    io::database_stream::options o;
    o.chunk_residues = chunk;
    o.ramp = true;
    io::database_stream stream(db, o);
    stream.recycle(std::move(spent));
    pass_times t;
    for (;;) {
        sequence_set c;
        std::uint64_t unknown = 0;
        auto t0 = steady::now();
        const bool fused = !separate && stream.encodes_while_reading();
        const bool ok = fused ? stream.next_encoded(c, sc.matrix, unknown) : stream.next(c);
        t.read += since(t0);
        if (!ok) {
            spent = std::move(c);  // the storage the stream handed to this last, empty read
            break;
        }
        if (!fused) {
            t0 = steady::now();
            unknown = encode(c, sc.matrix);
            t.encode += since(t0);
        }
#ifdef SWGPU_HAVE_CUDA
        if (pack) {
            t0 = steady::now();
            const auto plan = gpu::plan_database(c);
            if (packed.size() < plan.residue_bytes) packed.resize(plan.residue_bytes);
            gpu::fill_database(c, plan, sc.matrix.size(), static_cast<std::uint8_t>(sc.matrix.size()), packed.data());
            t.pack += since(t0);
        }
#else
        (void)pack, (void)packed;
#endif
        t.residues += c.total_residues();
        t.unknown += unknown;
        ++t.chunks;
        stream.recycle(std::move(c));  // as the pipeline hands a searched chunk back
    }
    return t;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// --parse: one pass of the FASTA reader alone; returns residues read and sets `chunks`.
std::uint64_t parse_pass(const std::string& path, std::uint64_t chunk, const io::read_options& opt, sequence_set& s,
                         std::uint64_t& chunks) {
    io::sequence_reader reader(path, opt);
    std::uint64_t residues = 0;
    chunks = 0;
    for (;;) {
        s.residues.clear();
        s.offsets.assign(1, 0);
        s.names.clear();
        s.origins.clear();
        if (!reader.read_chunk(s, chunk)) break;
        residues += s.total_residues();
        ++chunks;
    }
    return residues;
}

int parse_main(const std::string& path, int argc, char** argv) {
    int runs = 5;
    std::uint64_t chunk = 100'000'000;
    io::read_options opt;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--parse") continue;
        if (a == "-r" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
        else if (a == "--chunk" && i + 1 < argc) chunk = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--block" && i + 1 < argc) opt.parse_block = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--sequential") opt.parallel = false;
        else if (a == "--no-titles") opt.keep_titles = false;
        else throw usage_error("unknown argument " + a);
    }
    sequence_set s;
    std::uint64_t chunks = 0, residues = parse_pass(path, chunk, opt, s, chunks);  // warm-up: the page cache
    std::vector<double> t;
    for (int r = 0; r < runs; ++r) {
        const auto t0 = steady::now();
        residues = parse_pass(path, chunk, opt, s, chunks);
        t.push_back(since(t0));
    }
    std::printf("%s: %llu residues in %llu chunks, %s parse%s; median of %d passes\n", path.c_str(),
                static_cast<unsigned long long>(residues), static_cast<unsigned long long>(chunks),
                opt.parallel ? "parallel" : "sequential", opt.keep_titles ? "" : ", no titles", runs);
    std::printf("  parse  %.3f s  %6.2f G residues/s\n", median(t), double(residues) / 1e9 / median(t));
    return 0;
}

}  // namespace

int main(int argc, char** argv) try {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_reader DB [-r RUNS] [--chunk RESIDUES] [--separate] [--no-pack] [--cold]\n"
                             "       bench_reader FASTA --parse [-r RUNS] [--chunk RESIDUES] [--sequential] "
                             "[--block BYTES] [--no-titles]\n");
        return 2;
    }
    const std::string db = argv[1];
    for (int i = 2; i < argc; ++i)
        if (std::strcmp(argv[i], "--parse") == 0) return parse_main(db, argc, argv);
    int runs = 5;
    std::uint64_t chunk = 100'000'000;
    bool separate = false, pack = true, cold = false;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-r" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
        else if (a == "--chunk" && i + 1 < argc) chunk = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--separate") separate = true;
        else if (a == "--no-pack") pack = false;
        else if (a == "--cold") cold = true;
        else throw usage_error("unknown argument " + a);
    }
    scoring sc{substitution_matrix::builtin("BLOSUM62"), default_gaps("BLOSUM62"), seq_type::protein};
    std::vector<std::uint8_t> packed;
    sequence_set spent;
    one_pass(db, chunk, separate, pack, sc, packed, spent);  // warm-up: the file in the page cache, buffers grown
    std::vector<double> read, encode_s, pack_s, total;
    pass_times last;
    for (int r = 0; r < runs; ++r) {
        if (cold) spent = sequence_set{}, packed = {};
        last = one_pass(db, chunk, separate, pack, sc, packed, spent);
        read.push_back(last.read);
        encode_s.push_back(last.encode);
        pack_s.push_back(last.pack);
        total.push_back(last.total());
    }
    const double g = double(last.residues) / 1e9;
    std::printf("%s: %llu residues in %llu chunks (%s), %llu unknown letters; medians of %d passes\n", db.c_str(),
                static_cast<unsigned long long>(last.residues), static_cast<unsigned long long>(last.chunks),
                separate ? "read, then encoded" : "encoded as read where the source can",
                static_cast<unsigned long long>(last.unknown), runs);
    if (cold) std::printf("  every pass from no storage (--cold)\n");
    std::printf("  read   %.3f s  %6.2f G residues/s\n", median(read), g / median(read));
    if (median(encode_s) > 0) std::printf("  encode %.3f s  %6.2f G residues/s\n", median(encode_s), g / median(encode_s));
    if (pack) std::printf("  pack   %.3f s  %6.2f G residues/s\n", median(pack_s), g / median(pack_s));
    std::printf("  all    %.3f s  %6.2f G residues/s\n", median(total), g / median(total));
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_reader: %s\n", e.what());
    return 1;
}
