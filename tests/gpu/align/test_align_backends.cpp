// `swgpu align` end to end: the GPU backend prints byte for byte what the CPU backend prints, for every output format,
// for protein and DNA (both strands), for overflow-prone pairs, for a database read in small chunks and for a device
// memory budget so small that the database is searched in slices.
//
// The program under test is the `swgpu` beside this executable (a build tree's app/ or a bundle's bin/), or
// $SWGPU_BINARY; inputs come from the repository's data/ and tests/data/ ($SWGPU_SOURCE_DIR, else the source tree
// this was built from, else the working directory).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/gpu.hpp"
#include "tests/gpu/harness.hpp"

namespace {

namespace fs = std::filesystem;

using swgpu::gputest::program;
using swgpu::gputest::source_dir;

struct run_result {
    int code = -1;
    std::string out, err;
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Runs swgpu with `args` (after `env`, variable assignments for it).
run_result run(const std::string& args, const fs::path& dir, const std::string& env = "") {
    const fs::path out = dir / "out.txt";
    const std::string cmd = env + " " + program() + " " + args + " > " + out.string() + " 2> " + (dir / "err.txt").string();
    const int status = std::system(cmd.c_str());
    run_result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = slurp(dir / "err.txt");
    // SAM's @PG line holds the command line, which names the backend: the one line allowed to differ.
    std::istringstream lines(slurp(out));
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("@PG", 0) != 0) r.out += line + "\n";
    return r;
}

fs::path scratch() {
    const fs::path d = fs::temp_directory_path() / ("swgpu_gpu_align_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

// The CPU and the GPU backend on the same arguments: both succeed, outputs identical and not trivially empty.
// Returns the GPU run's stderr.
std::string same_output(const std::string& args, const fs::path& dir, const std::string& gpu_extra = "") {
    const auto cpu = run("align --backend cpu " + args, dir);
    const auto gpu = run("align --backend gpu " + gpu_extra + " " + args, dir);
    CHECK_EQ(cpu.code, 0);
    CHECK_EQ(gpu.code, 0);
    CHECK(cpu.out.size() > 200);
    if (cpu.out != gpu.out) {
        std::fprintf(stderr, "outputs differ for: %s %s\n", args.c_str(), gpu_extra.c_str());
        CHECK(cpu.out == gpu.out);
    }
    return gpu.err;
}

void write_fasta(const fs::path& p, const std::vector<std::pair<std::string, std::string>>& records) {
    std::ofstream f(p);
    for (const auto& [name, seq] : records) f << '>' << name << '\n' << seq << '\n';
}

}  // namespace

GPU_TEST("align: GPU output equals CPU output in every format on the bundled protein data") {
    const auto dir = scratch();
    const std::string src = source_dir();
    const std::string in = src + "/data/demo_queries.fa " + src + "/data/demo_db.fa";
    for (const std::string fmt : {"6", "'6 std score qlen slen nident positive gaps qcovhsp cigar qseq sseq'", "7", "sam",
                                  "pair", "json"})
        same_output(in + " -k 20 --outfmt " + fmt, dir);
    same_output(in + " -k 7 --matrix BLOSUM45 -e 100", dir);
    same_output(in + " -k 5 --no-evalue --gap-open 3 --gap-extend 2", dir);
    // masking, composition-based statistics, SAM for read tools, accession and title columns (issue-28 options)
    same_output(in + " -k 20 --seg yes --comp-based-stats 1", dir);
    same_output(in + " -k 3 -e 10 --outfmt sam --read-group 'ID:r1\\tSM:s1'", dir);
    same_output(in + " -k 20 --outfmt '6 std qaccver saccver stitle'", dir);
    // a budget that forces slices, and small database chunks: the same output
    same_output(in + " -k 20", dir, "--gpu-mem 16M");
    same_output(in + " -k 20 --db-chunk 20000", dir);
    fs::remove_all(dir);
}

GPU_TEST("align: several logical devices on one GPU print what one device prints") {
    // SWGPU_TUNE=search.logical_devices=K spreads the score pass over K workers on this GPU (the multi-GPU path):
    // with chunks of every size (the first ones smaller), with a memory budget the workers share, in SAM, the output
    // is the CPU's.
    // --gpus 1: on a machine with several GPUs, K workers on the first one only.
    const auto dir = scratch();
    const std::string src = source_dir();
    const std::string in = src + "/data/demo_queries.fa " + src + "/data/demo_db.fa -k 20 ";
    for (const std::string extra : {"", "--db-chunk 20000", "--gpu-mem 64M", "--outfmt sam"}) {
        const auto cpu = run("align --backend cpu " + in + extra, dir);
        CHECK_EQ(cpu.code, 0);
        CHECK(cpu.out.size() > 200);
        for (const std::string logical : {"2", "3", "7"}) {
            const auto gpu = run("align --backend gpu --gpus 1 -v " + in + extra, dir,
                                 "SWGPU_TUNE=search.logical_devices=" + logical);
            CHECK_EQ(gpu.code, 0);
            if (gpu.out != cpu.out) {
                std::fprintf(stderr, "outputs differ with %s logical devices: %s\n", logical.c_str(), extra.c_str());
                CHECK(gpu.out == cpu.out);
            }
            CHECK(gpu.err.find("spread over " + logical + " workers") != std::string::npos);
        }
    }
    fs::remove_all(dir);
}

GPU_TEST("align: every GPU of the machine prints what one GPU prints (search and a split long pair)") {
    // On a machine with several GPUs, --gpus 0 (the default: all visible) spreads the score pass over them, and a
    // long pair's forward pass splits over them with its parts running at once (checked in the long-pair test below); the
    // output is the CPU's.
    const int count = swgpu::gpu::device_count();
    if (count < 2) {
        std::printf("  (one GPU: several physical GPUs are checked on machines with several)\n");
        return;
    }
    const auto dir = scratch();
    const std::string src = source_dir();
    const std::string in = src + "/data/demo_queries.fa " + src + "/data/demo_db.fa -k 20 ";
    // The demo is far below search.multi_gpu_min_cells, so it runs on the first GPU unless that floor is lowered.
    const auto small = run("align --backend gpu -v " + in, dir);
    CHECK_EQ(small.code, 0);
    CHECK(small.err.find("spread over") == std::string::npos);
    for (const std::string extra : {"", "--db-chunk 20000", "--gpu-mem 64M"}) {
        const auto cpu = run("align --backend cpu " + in + extra, dir);
        CHECK_EQ(cpu.code, 0);
        CHECK(small.out == run("align --backend cpu " + in, dir).out);
        const auto gpu = run("align --backend gpu -v " + in + extra, dir, "SWGPU_TUNE=search.multi_gpu_min_cells=0");
        CHECK_EQ(gpu.code, 0);
        CHECK(gpu.out == cpu.out);
        CHECK(gpu.err.find("spread over " + std::to_string(count) + " workers") != std::string::npos);
        const auto mixed = run("align --backend gpu -v " + in + extra, dir,
                               "SWGPU_TUNE=search.logical_devices=2,search.multi_gpu_min_cells=0");
        CHECK(mixed.out == cpu.out);
        CHECK(mixed.err.find("spread over " + std::to_string(2 * count) + " workers") != std::string::npos);
    }
    fs::remove_all(dir);
}

GPU_TEST("align: GPU output equals CPU output on DNA, both strands") {
    const auto dir = scratch();
    const std::string src = source_dir();
    const std::string lambda = src + "/tests/data/crosscheck/lambda_pieces.fa";
    // queries: pieces of the database, one reverse-complemented, one mutated
    std::ifstream f(lambda);
    std::vector<std::pair<std::string, std::string>> recs;
    for (std::string line; std::getline(f, line);) {
        if (line.empty()) continue;
        if (line[0] == '>') recs.push_back({line.substr(1), ""});
        else recs.back().second += line;
    }
    REQUIRE(recs.size() >= 3);
    auto revcomp = [](std::string s) {
        std::string r(s.rbegin(), s.rend());
        for (auto& c : r) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : c;
        return r;
    };
    std::string mutated = recs[2].second.substr(100, 700);
    for (std::size_t k = 0; k < mutated.size(); k += 13) mutated[k] = mutated[k] == 'A' ? 'C' : 'A';
    write_fasta(dir / "q.fa", {{"plus", recs[0].second.substr(200, 600)},
                               {"minus", revcomp(recs[1].second.substr(50, 900))},
                               {"mutated", mutated}});
    const std::string in = (dir / "q.fa").string() + " " + lambda;
    for (const std::string fmt : {"6", "sam", "pair"}) same_output(in + " -k 10 --outfmt " + fmt, dir);
    same_output(in + " -k 10 --strand minus", dir);
    fs::remove_all(dir);
}

GPU_TEST("align: SAM and PAF of reads in same-contig repeats, MAPQ 0 for tied copies, GPU = CPU") {
    // A 20 kbp contig (searched in windows) and an 8 kbp one, each with a 1 kbp exact duplication, and a 20 kbp contig
    // with a duplication diverged by 2 %; reads from the second copies (exact, with IUPAC codes, and reverse
    // complemented), from the diverged pair, and from unique places; an empty FASTQ read.
    const auto dir = scratch();
    std::uint64_t state = 2026;
    const auto dna = [&](std::size_t n) {
        std::string s(n, 'A');
        for (auto& c : s) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            c = "ACGT"[(state >> 33) % 4];
        }
        return s;
    };
    std::string a = dna(20000), b = dna(8000), c = dna(20000);
    const std::string r = dna(1000), t = dna(1000);
    a.replace(3000, 1000, r);
    a.replace(12000, 1000, r);
    b.replace(1000, 1000, r.substr(0, 1000));
    b.replace(5000, 1000, r.substr(0, 1000));
    std::string diverged = t;
    for (std::size_t k = 25; k < 1000; k += 50) diverged[k] = diverged[k] == 'A' ? 'C' : 'A';
    c.replace(2000, 1000, t);
    c.replace(14000, 1000, diverged);
    write_fasta(dir / "genome.fa", {{"chrA", a}, {"chrB", b}, {"chrC", c}});
    std::ofstream fq(dir / "reads.fq");
    const std::string qual(150, 'I');
    const auto revcomp = [](std::string s) {
        std::string x(s.rbegin(), s.rend());
        for (auto& ch : x) ch = ch == 'A' ? 'T' : ch == 'C' ? 'G' : ch == 'G' ? 'C' : ch == 'T' ? 'A' : ch;
        return x;
    };
    for (int k = 0; k < 6; ++k) {
        const std::size_t off = 100 + 130 * static_cast<std::size_t>(k);
        std::string iupac = a.substr(12000 + off, 150);
        iupac[70] = 'R';
        fq << "@a" << k << "\n" << a.substr(12000 + off, 150) << "\n+\n" << qual << "\n";
        fq << "@i" << k << "\n" << iupac << "\n+\n" << qual << "\n";
        fq << "@b" << k << "\n" << revcomp(b.substr(5000 + off, 150)) << "\n+\n" << qual << "\n";
        fq << "@c" << k << "\n" << c.substr(2000 + off, 150) << "\n+\n" << qual << "\n";
        fq << "@u" << k << "\n" << a.substr(15000 + 500 * static_cast<std::size_t>(k), 150) << "\n+\n" << qual << "\n";
    }
    fq << "@empty\n\n+\n\n";
    fq.close();
    const std::string in = (dir / "reads.fq").string() + " " + (dir / "genome.fa").string();
    for (const std::string fmt : {"sam", "paf"}) same_output(in + " --outfmt " + fmt, dir);
    same_output(in + " --outfmt sam -k 3", dir);
    same_output(in + " --outfmt sam --max-hsps 2", dir);
    // The tied copies' MAPQ is 0 on the GPU too, the unique reads' 60.
    const auto gpu = run("align --backend gpu " + in + " --outfmt sam", dir);
    CHECK_EQ(gpu.code, 0);
    std::istringstream lines(gpu.out);
    int tied = 0, unique = 0;
    for (std::string line; std::getline(lines, line);) {
        if (line.empty() || line[0] == '@') continue;
        std::vector<std::string> f;
        std::istringstream fields(line);
        for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
        if (f[0][0] == 'a' || f[0][0] == 'i' || f[0][0] == 'b') tied += f[4] == "0";
        if (f[0][0] == 'u') unique += f[4] == "60";
    }
    CHECK_EQ(tied, 18);
    CHECK_EQ(unique, 6);
    fs::remove_all(dir);
}

GPU_TEST("align: a database of many copies (hits tied past the device's capacity) ranks as the CPU does") {
    // 120 copies of 40 demo proteins: a query's k-th E-value ties with about a hundred others, more than the device's
    // selection keeps, so the row is ranked on the host from its keys.
    const auto dir = scratch();
    std::ifstream f(source_dir() + "/data/demo_db.fa");
    std::vector<std::pair<std::string, std::string>> recs;
    for (std::string line; std::getline(f, line) && recs.size() <= 40;) {
        if (line.empty()) continue;
        if (line[0] == '>') recs.push_back({line.substr(1, line.find(' ') - 1), ""});
        else recs.back().second += line;
    }
    recs.resize(40);
    std::vector<std::pair<std::string, std::string>> copies;
    for (int c = 0; c < 120; ++c)
        for (const auto& [name, seq] : recs) copies.push_back({name + "_" + std::to_string(c), seq});
    write_fasta(dir / "copies.fa", copies);
    const std::string in = source_dir() + "/data/demo_queries.fa " + (dir / "copies.fa").string();
    for (const std::string k : {"1", "5", "50", "500"}) same_output(in + " -e 1e6 -k " + k, dir);
    fs::remove_all(dir);
}

GPU_TEST("align: overflow-prone long identical pairs score exactly on the GPU") {
    const auto dir = scratch();
    // 3000 W against itself scores 33000, beyond 16 bits; the rest are near-copies and unrelated sequences.
    const std::string w(3000, 'W');
    std::string near = w;
    near[1500] = 'A';
    std::string mixed;
    for (int k = 0; k < 4000; ++k) mixed += "ACDEFGHIKLMNPQRSTVWY"[(k * 7) % 20];
    write_fasta(dir / "q.fa", {{"w3000", w}, {"mixed", mixed}});
    write_fasta(dir / "db.fa", {{"short", "WWWW"}, {"near", near}, {"same", w}, {"mixed_copy", mixed}, {"one", "W"}});
    same_output((dir / "q.fa").string() + " " + (dir / "db.fa").string() + " --outfmt '6 std score'", dir);
    const auto gpu = run("align --backend gpu --outfmt '6 qseqid sseqid score' " + (dir / "q.fa").string() + " " +
                             (dir / "db.fa").string(),
                         dir);
    CHECK(gpu.out.find("w3000\tsame\t33000\n") != std::string::npos);
    fs::remove_all(dir);
}

GPU_TEST("align: many queries, aligned on the GPU or while the GPU searches, give the CPU's output") {
    // 300 queries (mutated pieces of the demo database and unrelated sequences). By default their hits are aligned on
    // the GPU after the search; with --gpu-align cpu the GPU runs them in several batches and the hits of the first
    // batches are aligned on the CPU while the GPU searches the others. Protein, DNA on both strands, and a database
    // in chunks whose last one is searched that way.
    const auto dir = scratch();
    const std::string src = source_dir();
    std::vector<std::pair<std::string, std::string>> db;
    {
        std::ifstream f(src + "/data/demo_db.fa");
        for (std::string line; std::getline(f, line);) {
            if (line.empty()) continue;
            if (line[0] == '>') db.push_back({line.substr(1, line.find(' ') - 1), ""});
            else db.back().second += line;
        }
    }
    REQUIRE(db.size() > 50);
    std::uint64_t x = 12345;
    const auto next = [&] {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<std::size_t>(x >> 33);
    };
    const std::string amino = "ACDEFGHIKLMNPQRSTVWY", bases = "ACGT";
    std::vector<std::pair<std::string, std::string>> protein, dna, dna_db;
    for (int k = 0; k < 300; ++k) {
        const std::string& s = db[next() % db.size()].second;
        const std::size_t b = next() % s.size();
        std::string piece = s.substr(b, 30 + next() % 300);
        for (auto& c : piece)
            if (next() % 6 == 0) c = amino[next() % 20];
        if (k % 5 == 4)
            for (auto& c : piece) c = amino[next() % 20];
        protein.push_back({"p" + std::to_string(k), piece});
    }
    for (int k = 0; k < 200; ++k) {
        std::string s(200 + next() % 800, 'A');
        for (auto& c : s) c = bases[next() % 4];
        dna_db.push_back({"d" + std::to_string(k), s});
    }
    for (int k = 0; k < 150; ++k) {
        const std::string& s = dna_db[next() % dna_db.size()].second;
        std::string piece = s.substr(next() % (s.size() / 2), 50 + next() % 200);
        for (auto& c : piece)
            if (next() % 10 == 0) c = bases[next() % 4];
        if (k % 2) {
            std::string r(piece.rbegin(), piece.rend());
            for (auto& c : r) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
            piece = r;
        }
        dna.push_back({"n" + std::to_string(k), piece});
    }
    write_fasta(dir / "protein.fa", protein);
    write_fasta(dir / "dna.fa", dna);
    write_fasta(dir / "dna_db.fa", dna_db);
    const std::string p = (dir / "protein.fa").string() + " " + src + "/data/demo_db.fa";
    const std::string n = (dir / "dna.fa").string() + " " + (dir / "dna_db.fa").string();
    // --gpu-align cpu: aligned on CPU threads while the GPU searches for the last queries (on every GPU of the
    // machine, then on the first alone).
    const std::string err = same_output(p + " -v -k 10 --outfmt '6 std score cigar'", dir, "--gpu-align cpu");
    CHECK(err.find("queries finished during it") != std::string::npos);
    same_output(p + " -v -k 3 --outfmt sam", dir, "--gpu-align cpu");
    same_output(p + " -v -k 10 --db-chunk 30000", dir, "--gpu-align cpu");  // several chunks: the last one overlaps
    same_output(p + " -v -k 10 --outfmt '6 qseqid sseqid evalue bitscore score'", dir, "--gpu-align cpu");
    const std::string dna_err = same_output(n + " -v -k 5 --outfmt '6 std score sstrand'", dir, "--gpu-align cpu --gpus 1");
    CHECK(dna_err.find("queries finished during it") != std::string::npos);
    // The default: aligned on the GPU after the search (the overflow-prone test above has pairs large enough for the
    // CPU side of the split too).
    same_output(p + " -v -k 10 --outfmt '6 std score cigar'", dir);
    same_output(p + " -v -k 10 --outfmt sam --db-chunk 30000", dir);
    same_output(n + " -v -k 5 --outfmt '6 std score sstrand qseq sseq'", dir);
    same_output(p + " -k 10 --outfmt '6 std score cigar' --gpu-mem 64M", dir);
    fs::remove_all(dir);
}

GPU_TEST("align: long pairs (--mode pairwise and auto) print what the search pass prints, on the GPU and the CPU") {
    const auto dir = scratch();
    // A 30 kbp DNA pair with substitutions and indels, a protein pair of 5000 residues, and a short decoy subject.
    std::uint64_t x = 12345;
    auto next = [&x] { return x = x * 6364136223846793005ull + 1442695040888963407ull, static_cast<unsigned>(x >> 33); };
    std::string a, b, p, r;
    for (int k = 0; k < 30000; ++k) a += "ACGT"[next() % 4];
    for (std::size_t k = 0; k < a.size(); ++k) {
        if (k % 3000 == 1500) k += next() % 40;                               // deletion
        if (k % 3000 == 2500) for (int t = 0; t < 25; ++t) b += "ACGT"[next() % 4];  // insertion
        if (k < a.size()) b += next() % 20 == 0 ? "ACGT"[next() % 4] : a[k];
    }
    const std::string amino = "ARNDCQEGHILKMFPSTWYV";
    for (int k = 0; k < 5000; ++k) p += amino[next() % 20];
    for (char c : p) r += next() % 5 == 0 ? amino[next() % 20] : c;
    write_fasta(dir / "a.fa", {{"a", a}});
    write_fasta(dir / "b.fa", {{"decoy", a.substr(100, 300)}, {"b", b}});
    write_fasta(dir / "p.fa", {{"p", p}});
    write_fasta(dir / "r.fa", {{"r", r}});
    const std::string dna = (dir / "a.fa").string() + " " + (dir / "b.fa").string();
    const std::string prot = (dir / "p.fa").string() + " " + (dir / "r.fa").string();
    const std::string cols = " --outfmt '6 std score cigar'";
    for (const std::string& in : {dna, prot}) {
        const auto search = run("align --backend gpu --mode search " + in + cols, dir);
        CHECK_EQ(search.code, 0);
        CHECK(search.out.size() > 40);
        for (const std::string backend : {"gpu", "cpu"})
            for (const std::string mode : {"pairwise", "auto"}) {
                const auto got = run("align --backend " + backend + " --mode " + mode + " " + in + cols, dir);
                CHECK_EQ(got.code, 0);
                if (got.out != search.out) {
                    std::fprintf(stderr, "--backend %s --mode %s differs from --mode search on %s\n", backend.c_str(),
                                 mode.c_str(), in.c_str());
                    CHECK(got.out == search.out);
                }
            }
        // The long pair's forward pass split over 3 logical devices (every rectangle split), by rows (the default)
        // and by columns: the same output.
        for (const std::string how : {"rows", "columns"}) {
            const auto split = run("align --backend gpu --gpus 1 --mode pairwise " + in + cols, dir,
                                   "SWGPU_TUNE=search.logical_devices=3,long.split_cells=0,long.split_forced=1,"
                                   "long.split=" + how);
            CHECK_EQ(split.code, 0);
            if (split.out != search.out) {
                std::fprintf(stderr, "a long pair split by %s over 3 logical devices differs from --mode search on %s\n",
                             how.c_str(), in.c_str());
                CHECK(split.out == search.out);
            }
        }
        if (swgpu::gpu::device_count() > 1) {  // over every GPU, the parts at once
            const auto all = run("align --backend gpu --mode pairwise " + in + cols, dir,
                                 "SWGPU_TUNE=long.split_cells=0,long.split_forced=1");
            CHECK_EQ(all.code, 0);
            if (all.out != search.out) {
                std::fprintf(stderr, "a long pair split over every GPU differs from --mode search on %s\n", in.c_str());
                CHECK(all.out == search.out);
            }
        }
    }
    // Every format, long-pair path against the search pass.
    for (const std::string fmt : {"sam", "paf", "pair", "json"}) {
        const auto search = run("align --backend gpu --mode search " + dna + " --outfmt " + fmt, dir);
        const auto pairwise = run("align --backend gpu --mode pairwise " + dna + " --outfmt " + fmt, dir);
        CHECK_EQ(pairwise.code, 0);
        CHECK(pairwise.out == search.out);
    }
    fs::remove_all(dir);
}

GPU_TEST("align: reads against a long subject (windows) print what the whole-subject pairwise path prints") {
    const auto dir = scratch();
    std::uint64_t x = 99;
    auto next = [&x] { return x = x * 6364136223846793005ull + 1442695040888963407ull, static_cast<unsigned>(x >> 33); };
    std::string genome;
    for (int k = 0; k < 120000; ++k) genome += "ACGT"[next() % 4];
    genome.replace(70000, 400, genome.substr(20000, 400));  // a repeat: reads there tie across windows
    std::vector<std::pair<std::string, std::string>> reads;
    for (int r = 0; r < 24; ++r) {
        const std::size_t at = r % 4 == 0 ? 20000 + next() % 200 : next() % (genome.size() - 150);
        std::string read = genome.substr(at, 150);
        for (auto& c : read)
            if (next() % 30 == 0) c = "ACGT"[next() % 4];
        if (r % 3 == 0) read.erase(40 + next() % 60, 1 + next() % 3);
        reads.push_back({"read" + std::to_string(r), read});
    }
    write_fasta(dir / "reads.fa", reads);
    write_fasta(dir / "genome.fa", {{"genome", genome}});
    const std::string in = (dir / "reads.fa").string() + " " + (dir / "genome.fa").string() + " -k 3";
    same_output(in + " --outfmt '6 std score cigar'", dir);
    same_output(in + " --outfmt sam", dir);
    const auto windows = run("align --backend gpu " + in + " --outfmt '6 std score cigar'", dir);
    const auto whole = run("align --backend gpu --mode pairwise " + in + " --outfmt '6 std score cigar'", dir);
    CHECK_EQ(whole.code, 0);
    CHECK(windows.out == whole.out);
    fs::remove_all(dir);
}

GPU_TEST("align: --max-hsps prints the CPU's further alignments on the GPU backend, in every format") {
    // The first alignment of each (query, subject, strand) comes from the GPU's pass, the further ones (Waterman-
    // Eggert) from the host for pairs of at most long.hsp_cells cells, from the GPU for longer ones: every format, protein and a DNA genome against a relative with an inversion and a
    // duplication, the whole output equal to the CPU backend's.
    const auto dir = scratch();
    const std::string src = source_dir();
    const std::string in = src + "/data/demo_queries.fa " + src + "/data/demo_db.fa";
    for (const std::string fmt : {"'6 std score cigar'", "7", "sam", "paf", "pair", "json"})
        same_output(in + " -k 20 -e 100 --max-hsps 3 --outfmt " + fmt, dir);
    std::uint64_t x = 31;
    auto next = [&x] { return x = x * 6364136223846793005ull + 1442695040888963407ull, static_cast<unsigned>(x >> 33); };
    std::string a;
    for (int k = 0; k < 2400; ++k) a += "ACGT"[next() % 4];
    std::string inv = a.substr(800, 500);
    std::reverse(inv.begin(), inv.end());
    for (auto& c : inv) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
    const std::string b = a.substr(0, 800) + inv + a.substr(1300) + a.substr(1600, 400);
    write_fasta(dir / "a.fa", {{"a", a}});
    write_fasta(dir / "b.fa", {{"b", b}, {"b2", b.substr(300, 1500)}});
    const std::string dna = (dir / "b.fa").string() + " " + (dir / "a.fa").string() + " --max-hsps 4 ";
    same_output(dna + "--outfmt '6 std score sstrand cigar'", dir);
    same_output(dna + "--outfmt sam", dir);
    same_output(dna + "--outfmt paf --dotplot " + (dir / "dots.svg").string(), dir);
    // A long pair (past long.hsp_cells: its further alignments in linear memory on the GPU, forbidden steps included),
    // through --mode pairwise and auto.
    std::string big;
    for (int k = 0; k < 9000; ++k) big += "ACGT"[next() % 4];
    std::string rinv = big.substr(3000, 1200);
    std::reverse(rinv.begin(), rinv.end());
    for (auto& c : rinv) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
    std::string rel = big.substr(0, 3000) + rinv + big.substr(4200) + big.substr(5000, 900);
    for (auto& c : rel)
        if (next() % 50 == 0) c = "ACGT"[next() % 4];
    write_fasta(dir / "big.fa", {{"big", big}});
    write_fasta(dir / "rel.fa", {{"rel", rel}});
    const std::string pair = (dir / "rel.fa").string() + " " + (dir / "big.fa").string() + " --max-hsps 4 ";
    for (const std::string mode : {"pairwise", "auto"})
        same_output(pair + "--mode " + mode + " --outfmt '6 std score sstrand cigar'", dir);
    fs::remove_all(dir);
}

GPU_TEST("align: --zdrop cuts the GPU's alignments into the CPU's collinear blocks, in every format") {
    // Blocks are cut on the host from each pair's alignments (the first from the GPU's pass, the further ones from
    // the GPU's Waterman-Eggert passes): lambda against a copy with a 5 kbp inversion and a 1 kbp deletion, --mode auto and
    // pairwise.
    const auto dir = scratch();
    const std::string src = source_dir();
    const auto rc = [](std::string s) {
        std::reverse(s.begin(), s.end());
        for (auto& c : s) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : c;
        return s;
    };
    const std::string lambda_fa = (dir / "lambda.fa").string();
    const int unzipped = std::system(("gzip -dc " + src + "/data/lambda_phage.fa.gz > " + lambda_fa).c_str());
    CHECK_EQ(unzipped, 0);
    std::ifstream f(lambda_fa);
    std::string lambda;
    for (std::string line; std::getline(f, line);)
        if (!line.empty() && line[0] != '>') lambda += line;
    CHECK_EQ(lambda.size(), 48502u);
    const std::string copy =
        lambda.substr(0, 20000) + rc(lambda.substr(20000, 5000)) + lambda.substr(25000, 10000) + lambda.substr(36000);
    write_fasta(dir / "copy.fa", {{"copy", copy}});
    const std::string pair = lambda_fa + " " + (dir / "copy.fa").string() + " --zdrop 400 --max-hsps 3 -e 1e-10 ";
    for (const std::string mode : {"auto", "pairwise"})
        same_output(pair + "--mode " + mode + " --outfmt '6 std score sstrand cigar'", dir);
    same_output(pair + "-k 2 --outfmt sam", dir);
    same_output(pair + "--outfmt paf --dotplot " + (dir / "dots.svg").string(), dir);
    same_output(pair + "--outfmt pair", dir);
    fs::remove_all(dir);
}

namespace {

// A random genome of 12 pieces of `piece` bases and its relative with pieces 2, 6 and 9 inverted and pieces 4 and 7
// swapped (two translocations), as FASTA files g.fa and r.fa in `dir`.
struct rearranged_genome {
    std::vector<int> order = {0, 1, 2, 3, 7, 5, 6, 4, 8, 9, 10, 11};
    std::vector<int> inverted = {2, 6, 9};
    long piece = 0;
    rearranged_genome(long piece_length, const fs::path& dir) : piece(piece_length) {
        std::uint64_t x = 2026;
        std::string g(static_cast<std::size_t>(12 * piece), 'A');
        for (auto& c : g) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            c = "ACGT"[(x >> 33) % 4];
        }
        std::string rel;
        for (const int k : order) {
            std::string p = g.substr(static_cast<std::size_t>(k * piece), static_cast<std::size_t>(piece));
            if (std::count(inverted.begin(), inverted.end(), k)) {
                std::reverse(p.begin(), p.end());
                for (auto& c : p) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
            }
            rel += p;
        }
        write_fasta(dir / "g.fa", {{"g", g}});
        write_fasta(dir / "r.fa", {{"r", rel}});
    }
};

// The score of a printed alignment (qseq and sseq with '-' for gaps) under match 2, mismatch -3, gaps 5 + 2 per base.
long rescore(const std::string& q, const std::string& s) {
    long score = 0;
    for (std::size_t k = 0; k < q.size(); ++k) {
        const bool gq = q[k] == '-', gs = s[k] == '-';
        if (gq || gs) {
            const bool opens = k == 0 || (gq ? q[k - 1] != '-' : s[k - 1] != '-');
            score -= (opens ? 5 : 0) + 2;
        } else {
            score += q[k] == s[k] ? 2 : -3;
        }
    }
    return score;
}

}  // namespace

GPU_TEST("align: long pairs find their further alignments on the GPU: --zdrop over three inversions and two translocations") {
    // Each further alignment of a pair past long.hsp_cells is a forward pass and a traceback with the earlier
    // alignments' residue pairs as forbidden diagonal steps, on the GPU's kernels: 12 pieces of 20 kbp give the CPU's
    // bytes; 12 pieces of 170 kbp (a 2.04 Mbp genome: 4·10^12 cells a pass) give a block over every piece, at its
    // place and on its strand, each re-scoring to its printed score. On a machine with several GPUs the GPU runs use
    // them all (the long pairs' backend over several devices, which runs forbidden steps on the first).
    const auto dir = scratch();
    const std::string args = (dir / "g.fa").string() + " " + (dir / "r.fa").string() +
                             " -q --zdrop 400 --max-hsps 12 -e 1e-10 --outfmt '6 qstart qend sstart send score sstrand";
    rearranged_genome small(20000, dir);
    same_output(args + "'", dir);
    rearranged_genome big(170000, dir);
    const auto r = run("align --backend gpu " + args + " qseq sseq'", dir);
    CHECK_EQ(r.code, 0);
    std::vector<std::vector<std::string>> rows;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        std::vector<std::string> f;
        std::istringstream fields(line);
        for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
        if (f.size() == 8) rows.push_back(f);
    }
    CHECK(rows.size() >= 10);
    for (int k = 0; k < 12; ++k) {
        const long qs = k * big.piece + 1, qe = qs + big.piece - 1;
        const long at = std::find(big.order.begin(), big.order.end(), k) - big.order.begin();
        const long ss = at * big.piece + 1, se = ss + big.piece - 1;
        const bool minus = std::count(big.inverted.begin(), big.inverted.end(), k) > 0;
        const bool covered = std::any_of(rows.begin(), rows.end(), [&](const auto& f) {
            const long q0 = std::stol(f[0]), q1 = std::stol(f[1]), s0 = std::stol(f[2]);
            if ((f[5] == "minus") != minus || q0 > qs + 30 || q1 < qe - 30) return false;
            return minus ? std::labs((s0 + q0) - (se + qs)) <= 30 : std::labs((s0 - q0) - (ss - qs)) <= 30;
        });
        if (!covered) std::fprintf(stderr, "piece %d has no block\n", k);
        CHECK(covered);
    }
    for (const auto& f : rows) CHECK_EQ(std::stol(f[4]), rescore(f[6], f[7]));
    fs::remove_all(dir);
}
