// The GPU score pass of database search against the CPU backend: for the same inputs and options, every GPU kernel
// (the 16-bit DPX kernel with its 32-bit recomputation, the 32-bit DPX kernel, the simple 32-bit reference kernel)
// must return exactly search_cpu's hit lists. Inputs are chosen where such kernels break: lengths 1, the class
// boundaries of gpu/align/db_layout.hpp and the pass widths of every class +-1, subjects far longer than the widest pass,
// odd query counts (a query without a 16-bit partner), pairs whose score sits just below and just above the 16-bit
// overflow bound, several query batches, one block per SM (many tasks per block), and the bundled demo data.
#include <algorithm>
#include <span>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/statistics.hpp"
#include "core/thread_pool.hpp"
#include "core/tuning.hpp"
#include "gpu/align/db_layout.hpp"
#include "gpu/gpu.hpp"
#include "gpu/align/search_config.hpp"
#include "gpu/align/search_plan.hpp"
#include "tests/gpu/harness.hpp"

namespace {

using namespace swgpu;
using gpu::detail::score_kernel;
using gpu::detail::search_config;
using hit_lists = std::vector<std::vector<score_hit>>;

thread_pool& pool() {
    static thread_pool p;
    return p;
}

scoring protein_scoring(const char* matrix = "BLOSUM62") {
    scoring sc;
    sc.matrix = substitution_matrix::builtin(matrix);
    sc.gaps = default_gaps(matrix);
    sc.type = seq_type::protein;
    return sc;
}

scoring dna_scoring() {
    scoring sc;
    sc.matrix = substitution_matrix::match_mismatch(2, -3);
    sc.gaps = {5, 2};
    sc.type = seq_type::dna;
    return sc;
}

std::string random_letters(std::mt19937_64& rng, std::size_t n, const std::string& alphabet) {
    std::string s(n, 'A');
    for (auto& c : s) c = alphabet[rng() % alphabet.size()];
    return s;
}

// A relative of s: substitutions and indels at `rate`, so that scores spread far above those of random pairs.
std::string relative(std::mt19937_64& rng, const std::string& s, double rate, const std::string& alphabet) {
    std::string r;
    std::uniform_real_distribution<double> u(0, 1);
    for (const char c : s) {
        const double p = u(rng);
        if (p < rate) r.push_back(alphabet[rng() % alphabet.size()]);
        else if (p < rate * 1.2) continue;
        else r.push_back(c);
        if (u(rng) < rate * 0.2) r.push_back(alphabet[rng() % alphabet.size()]);
    }
    if (r.empty()) r.push_back(alphabet[0]);
    return r;
}

sequence_set encoded(const std::vector<std::string>& seqs, const scoring& sc, const char* name) {
    sequence_set set;
    set.source = name;
    for (std::size_t k = 0; k < seqs.size(); ++k) set.add(std::string(name) + std::to_string(k), seqs[k]);
    encode(set, sc.matrix);
    return set;
}

std::string describe(const score_hit& h) {
    return "(" + std::to_string(h.score) + ", " + std::to_string(h.subject) + ")";
}

// Compares one kernel's hit lists with search_cpu's; reports the first difference of each query with the scalar
// reference score of the pair involved.
void expect_same_hits(const sequence_set& queries, const sequence_set& db, const scoring& sc, const search_options& opt,
                      const search_config& cfg, const char* what, const hit_lists* cpu_hits = nullptr) {
    const hit_lists cpu = cpu_hits ? *cpu_hits : search_cpu(queries, db, sc, opt, pool());
    gpu::detail::search_timing timing;
    const hit_lists gpu_hits = gpu::detail::search(queries, db, sc, opt, cfg, &timing);
    CHECK_EQ(gpu_hits.size(), cpu.size());
    int reported = 0;
    for (std::size_t q = 0; q < std::min(cpu.size(), gpu_hits.size()); ++q) {
        if (gpu_hits[q] == cpu[q]) continue;
        if (reported++ >= 5) continue;
        std::ostringstream os;
        os << what << ": query " << q << " (length " << queries.length(q) << "): " << gpu_hits[q].size()
           << " GPU hits vs " << cpu[q].size() << " CPU hits";
        for (std::size_t k = 0; k < std::max(gpu_hits[q].size(), cpu[q].size()); ++k) {
            const bool has_g = k < gpu_hits[q].size(), has_c = k < cpu[q].size();
            if (has_g && has_c && gpu_hits[q][k] == cpu[q][k]) continue;
            os << "; first difference at rank " << k << ": GPU " << (has_g ? describe(gpu_hits[q][k]) : "-")
               << " CPU " << (has_c ? describe(cpu[q][k]) : "-");
            const std::uint32_t s = (has_g ? gpu_hits[q][k].subject : cpu[q][k].subject) - opt.subject_offset;
            if (s < db.size())
                os << "; sw_score(query, subject " << s << " of length " << db.length(s)
                   << ") = " << sw_score(queries[q], db[s], sc).score;
            break;
        }
        ::swgpu::gputest::report(__FILE__, __LINE__, os.str());
    }
    std::printf("     %s: %zu queries x %zu subjects, %.3g cells, %d batches, %llu lanes recomputed in 32 bits\n", what,
                queries.size(), db.size(), double(timing.cells), timing.batches,
                static_cast<unsigned long long>(timing.overflow_lanes));
}

void expect_all_kernels(const sequence_set& queries, const sequence_set& db, const scoring& sc,
                        const search_options& opt, const char* what, bool with_simple = true) {
    const hit_lists cpu = search_cpu(queries, db, sc, opt, pool());
    search_config cfg;
    cfg.kernel = score_kernel::dpx16;
    expect_same_hits(queries, db, sc, opt, cfg, (std::string(what) + " [dpx16]").c_str(), &cpu);
    cfg.kernel = score_kernel::dpx32;
    expect_same_hits(queries, db, sc, opt, cfg, (std::string(what) + " [dpx32]").c_str(), &cpu);
    if (with_simple) {
        cfg.kernel = score_kernel::simple32;
        expect_same_hits(queries, db, sc, opt, cfg, (std::string(what) + " [simple32]").c_str(), &cpu);
    }
}

// Lengths at which the kernels change behaviour: 1, every class bound and every pass width (widest, and the width of
// each columns-per-thread count near it) +-1.
std::vector<std::size_t> adversarial_lengths() {
    std::vector<std::size_t> lengths = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65};
    for (const auto& c : gpu::search_classes) {
        if (c.max_length < 100000)
            for (const long d : {-1L, 0L, 1L}) lengths.push_back(static_cast<std::size_t>(c.max_length + d));
        const std::size_t w = gpu::pass_width(c);
        for (const std::size_t base : {w, 2 * w, 3 * w, static_cast<std::size_t>(c.group_size) * 17})
            for (const long d : {-1L, 0L, 1L}) lengths.push_back(static_cast<std::size_t>(static_cast<long>(base) + d));
    }
    std::sort(lengths.begin(), lengths.end());
    lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
    return lengths;
}

const std::string protein_letters = "ARNDCQEGHILKMFPSTWYV";

// Queries: the adversarial lengths plus relatives of some subjects (an odd count). Subjects: the adversarial lengths,
// long ones beyond the widest pass, and relatives of queries.
void random_protein_sets(std::mt19937_64& rng, std::vector<std::string>& qs, std::vector<std::string>& ss) {
    const auto lengths = adversarial_lengths();
    for (const std::size_t n : lengths) qs.push_back(random_letters(rng, n, protein_letters));
    for (const std::size_t n : lengths) ss.push_back(random_letters(rng, n, protein_letters));
    for (const std::size_t n : {1500, 2100, 4097}) ss.push_back(random_letters(rng, n, protein_letters));
    for (int k = 0; k < 40; ++k) {
        const std::string& q = qs[rng() % qs.size()];
        ss.push_back(relative(rng, q, 0.25, protein_letters));
        ss.push_back(relative(rng, q, 0.05, protein_letters));
    }
    for (int k = 0; k < 9; ++k) qs.push_back(relative(rng, ss[rng() % ss.size()], 0.15, protein_letters));
    if (qs.size() % 2 == 0) qs.push_back(random_letters(rng, 77, protein_letters));
    std::shuffle(ss.begin(), ss.end(), rng);
}

// A minimal FASTA reader (the GPU tests do not link HTSlib): records of the bundled demo files.
std::vector<std::string> read_fasta(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::string> seqs;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        if (line[0] == '>') seqs.emplace_back();
        else if (!seqs.empty()) seqs.back() += line;
    }
    return seqs;
}

std::string data_file(const char* name) {
    std::vector<std::string> dirs;
    if (const char* d = std::getenv("SWGPU_SOURCE_DIR")) dirs.push_back(std::string(d) + "/data/");
    for (const char* d : {"data/", "../data/", "../../data/", "../../../data/"}) dirs.emplace_back(d);
    for (const auto& d : dirs)
        if (std::ifstream(d + name).good()) return d + name;
    return {};
}

}  // namespace

GPU_TEST("gpu search: class table and plan invariants") {
    // The table is sorted, its group sizes divide the block, and regs_for covers every length in the fewest passes.
    std::uint32_t previous = 0;
    for (const auto& c : gpu::search_classes) {
        CHECK(c.max_length > previous);
        previous = c.max_length;
        for (std::uint32_t len = 1; len < 5000; len += 7) {
            const int r = gpu::regs_for(len, c);
            CHECK(r >= 1 && r <= c.regs);
            const std::uint32_t width = static_cast<std::uint32_t>(c.group_size * r);
            const std::uint32_t passes = (len + width - 1) / width;
            CHECK_EQ(passes, (len + gpu::pass_width(c) - 1) / gpu::pass_width(c));
        }
    }
    CHECK_EQ(gpu::class_of(1), 0);
    CHECK_EQ(gpu::class_of(gpu::search_classes[0].max_length), 0);
    CHECK_EQ(gpu::class_of(gpu::search_classes[0].max_length + 1), 1);
}

GPU_TEST("gpu search: bundled demo data, protein") {
    const std::string qpath = data_file("demo_queries.fa"), dpath = data_file("demo_db.fa");
    REQUIRE(!qpath.empty() && !dpath.empty());
    const scoring sc = protein_scoring();
    const sequence_set queries = encoded(read_fasta(qpath), sc, "demo_queries.fa");
    const sequence_set db = encoded(read_fasta(dpath), sc, "demo_db.fa");
    REQUIRE(queries.size() > 0 && db.size() > 0);
    search_options opt;
    opt.max_hits = 50;
    expect_all_kernels(queries, db, sc, opt, "demo");
    opt.max_hits = 1000000;
    opt.min_score = 1;
    expect_same_hits(queries, db, sc, opt, {}, "demo, every hit");
}

GPU_TEST("gpu search: random protein, adversarial lengths, all kernels") {
    std::mt19937_64 rng(20261122);
    std::vector<std::string> qs, ss;
    random_protein_sets(rng, qs, ss);
    const scoring sc = protein_scoring();
    const sequence_set queries = encoded(qs, sc, "q"), db = encoded(ss, sc, "s");
    search_options opt;
    opt.max_hits = 1000000;  // every positive score is compared
    expect_all_kernels(queries, db, sc, opt, "random protein");
}

GPU_TEST("gpu search: options (max_hits with ties, min_score, subject_offset) and other gap costs") {
    std::mt19937_64 rng(7);
    std::vector<std::string> qs, ss;
    random_protein_sets(rng, qs, ss);
    // Duplicated subjects make equal scores, so the tie rule (smaller subject index first) decides the cut.
    const std::size_t n = ss.size();
    for (std::size_t k = 0; k < n; k += 3) ss.push_back(ss[k]);
    for (const char* matrix : {"BLOSUM62", "BLOSUM45", "PAM30"}) {
        const scoring sc = protein_scoring(matrix);
        const sequence_set queries = encoded(qs, sc, "q"), db = encoded(ss, sc, "s");
        search_options opt;
        opt.max_hits = 3;
        opt.min_score = 25;
        opt.subject_offset = 1000;
        expect_same_hits(queries, db, sc, opt, {}, matrix);
    }
    scoring sc = protein_scoring();
    sc.gaps = {0, 1};  // open 0: a gap opened from a gap-derived cell is as cheap as extending
    const sequence_set queries = encoded(qs, sc, "q"), db = encoded(ss, sc, "s");
    search_options opt;
    opt.max_hits = 1000000;
    expect_same_hits(queries, db, sc, opt, {}, "gaps 0/1");
    sc.gaps = {900, 900};  // too wide for 16-bit lanes: the 32-bit kernel runs
    expect_same_hits(queries, db, sc, opt, {}, "gaps 900/900");
}

GPU_TEST("gpu search: ranked by E-value, the CPU's hits (superset on the device, capped keys, tie groups)") {
    // Subjects of every length with relatives of the queries, so that the E-value order differs from the score order;
    // near-identical copies of a 700-residue query (E-values below the rank cap: the device leaves those rows to
    // the host); 300 copies of one subject (a tie group wider than the device's capacity at small k).
    std::mt19937_64 rng(31);
    std::vector<std::string> qs, ss;
    random_protein_sets(rng, qs, ss);
    const std::string strong = random_letters(rng, 700, protein_letters);
    qs.push_back(strong);
    for (int k = 0; k < 12; ++k) ss.push_back(relative(rng, strong, 0.01, protein_letters));
    for (int k = 0; k < 200; ++k) {
        const std::string& q = qs[rng() % qs.size()];
        const std::size_t at = rng() % q.size(), len = std::min<std::size_t>(q.size() - at, 8 + rng() % 60);
        const std::string flank = random_letters(rng, rng() % 2 ? rng() % 20 : 500 + rng() % 2500, protein_letters);
        ss.push_back(flank.substr(0, flank.size() / 2) + relative(rng, q.substr(at, len), 0.3, protein_letters) +
                     flank.substr(flank.size() / 2));
    }
    const std::string twin = relative(rng, qs[3], 0.3, protein_letters);
    for (int k = 0; k < 300; ++k) ss.push_back(twin);
    std::shuffle(ss.begin(), ss.end(), rng);
    const scoring sc = protein_scoring();
    const evalue_calculator stats(sc, 0, 0);
    CHECK(stats.ranking() != nullptr);
    const sequence_set queries = encoded(qs, sc, "q"), db = encoded(ss, sc, "s");
    for (const std::size_t k : {1, 5, 40, 500}) {
        search_options opt;
        opt.max_hits = k;
        opt.rank_by_evalue = *stats.ranking();
        opt.subject_offset = 7;
        expect_all_kernels(queries, db, sc, opt, ("ranked, k " + std::to_string(k)).c_str(), k == 5);
    }
}

GPU_TEST("gpu search: one query and three queries (twin pairs: two subjects per word), adversarial lengths") {
    // A query without a 16-bit partner runs in both lanes against two subjects at once; the shorter subject of a
    // group reads pad letters past its end. Every query alone, and in threes, against subjects of every adversarial
    // length (neighbours in length order far apart) and relatives: the CPU's hits; and the same with twins off.
    std::mt19937_64 rng(20261128);
    std::vector<std::string> qs, ss;
    random_protein_sets(rng, qs, ss);
    for (int k = 0; k < 6; ++k) ss.push_back(random_letters(rng, 3000 + 1000 * k, protein_letters));
    const scoring sc = protein_scoring();
    const sequence_set queries = encoded(qs, sc, "q"), db = encoded(ss, sc, "s");
    search_options opt;
    opt.max_hits = 1000000;
    search_config cfg;
    cfg.kernel = score_kernel::dpx16;
    for (std::size_t first = 0; first < queries.size(); first += 3) {
        for (const std::size_t count : {std::size_t(1), std::size_t(3)}) {
            if (first + count > queries.size()) continue;
            sequence_set some;
            some.source = "q";
            some.encoded = true;
            for (std::size_t q = first; q < first + count; ++q) some.add_record(queries, q);
            expect_same_hits(some, db, sc, opt, cfg, count == 1 ? "one query" : "three queries");
        }
    }
    const tuning::scoped_override off("search.twin=0");
    sequence_set one;
    one.source = "q";
    one.encoded = true;
    one.add_record(queries, 0);
    expect_same_hits(one, db, sc, opt, cfg, "one query, twins off");
}

GPU_TEST("gpu search: 16-bit overflow bound, exact below and above it") {
    // W scores 11 against W in BLOSUM62: a run of n W's against itself scores 11n. The 16-bit lanes hold maxima up to
    // 32767 - 11 = 32756; 2977 W's (32747) stay narrow, 2978 (32758) must be recomputed in 32 bits. Mixed W/C runs
    // and long identical random proteins (around 5 per residue) reach 35000-45000.
    std::mt19937_64 rng(99);
    std::vector<std::string> qs = {std::string(2977, 'W'), std::string(2978, 'W'),
                                   random_letters(rng, 3600, "WC"), random_letters(rng, 8200, protein_letters),
                                   random_letters(rng, 300, protein_letters)};
    std::vector<std::string> ss = qs;
    ss.push_back(relative(rng, qs[3], 0.02, protein_letters));
    ss.push_back(std::string(5000, 'W'));
    for (int k = 0; k < 30; ++k) ss.push_back(random_letters(rng, 50 + rng() % 3000, protein_letters));
    const scoring sc = protein_scoring();
    const sequence_set queries = encoded(qs, sc, "q"), db = encoded(ss, sc, "s");
    search_options opt;
    opt.max_hits = 1000000;
    expect_all_kernels(queries, db, sc, opt, "overflow", false);
    search_config two;
    two.score_matrix_bytes = 4 * ss.size() * sizeof(int);  // one query per batch, two in flight: overflow in some
    expect_same_hits(queries, db, sc, opt, two, "overflow, batches in flight");
    gpu::detail::search_timing timing;
    (void)gpu::detail::search(queries, db, sc, opt, {}, &timing);
    CHECK(timing.overflow_lanes > 0);
}

GPU_TEST("gpu search: random DNA, adversarial lengths, long identical pair") {
    std::mt19937_64 rng(4242);
    const std::string acgt = "ACGT", acgtn = "ACGTACGTACGTACGTN";
    std::vector<std::string> qs, ss;
    for (const std::size_t n : adversarial_lengths()) qs.push_back(random_letters(rng, n, acgtn));
    for (const std::size_t n : adversarial_lengths()) ss.push_back(random_letters(rng, n, acgt));
    for (int k = 0; k < 30; ++k) ss.push_back(relative(rng, qs[rng() % qs.size()], 0.1, acgt));
    const std::string genome = random_letters(rng, 17000, acgt);  // identical: 34000 > 32767
    qs.push_back(genome);
    ss.push_back(genome);
    ss.push_back(relative(rng, genome, 0.01, acgt));
    const scoring sc = dna_scoring();
    const sequence_set queries = encoded(qs, sc, "q"), db = encoded(ss, sc, "s");
    search_options opt;
    opt.max_hits = 1000000;
    expect_all_kernels(queries, db, sc, opt, "random DNA", false);
}

GPU_TEST("gpu search: query batches, one block per SM, many subjects") {
    std::mt19937_64 rng(555);
    std::vector<std::string> qs, ss;
    for (int k = 0; k < 23; ++k) qs.push_back(random_letters(rng, 20 + rng() % 700, protein_letters));
    for (int k = 0; k < 3000; ++k) {
        if (k % 10 == 0) ss.push_back(relative(rng, qs[rng() % qs.size()], 0.3, protein_letters));
        else ss.push_back(random_letters(rng, 5 + rng() % 900, protein_letters));
    }
    const scoring sc = protein_scoring();
    const sequence_set queries = encoded(qs, sc, "q"), db = encoded(ss, sc, "s");
    search_options opt;
    opt.max_hits = 100;
    search_config cfg;
    cfg.score_matrix_bytes = 5 * ss.size() * sizeof(int);  // room for 4 rows: batches of 2 queries, two in flight
    expect_same_hits(queries, db, sc, opt, cfg, "batches of 2 queries, two in flight");
    {
        // Early delivery: every query once, with exactly the hits returned at the end, before search returns.
        const hit_lists cpu = search_cpu(queries, db, sc, opt, pool());
        for (const std::size_t bytes : {std::size_t(0), 5 * ss.size() * sizeof(int)}) {
            search_config c;
            if (bytes) c.score_matrix_bytes = bytes;
            std::vector<int> seen(qs.size(), 0);
            hit_lists delivered(qs.size());
            search_options early = opt;
            early.on_final = [&](std::span<const std::uint32_t> listed, const hit_lists& hits) {
                for (const std::uint32_t q : listed) {
                    ++seen[q];
                    delivered[q] = hits[q];
                }
            };
            const hit_lists returned = gpu::detail::search(queries, db, sc, early, c, nullptr);
            CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
            CHECK(delivered == cpu);
            CHECK(returned == cpu);
        }
    }
    cfg = {};
    cfg.blocks_per_sm = 1;
    expect_same_hits(queries, db, sc, opt, cfg, "one block per SM");
    cfg.kernel = score_kernel::dpx32;
    expect_same_hits(queries, db, sc, opt, cfg, "one block per SM [dpx32]");
    cfg = {};
    cfg.boundary_bytes = 1;  // the inter-pass slots allow a single block
    expect_same_hits(queries, db, sc, opt, cfg, "one block in all");
}

GPU_TEST("gpu search: empty inputs, empty records and bad codes") {
    const scoring sc = protein_scoring();
    const sequence_set queries = encoded({"MKV", "", "WWWW"}, sc, "q");
    const sequence_set db = encoded({"", "MKVLA", "WW", ""}, sc, "s");
    search_options opt;
    expect_same_hits(queries, db, sc, opt, {}, "empty records");
    CHECK(gpu::search(sequence_set{}, db, sc, opt).empty());
    const auto none = gpu::search(queries, sequence_set{}, sc, opt);
    CHECK_EQ(none.size(), queries.size());
    sequence_set raw;
    raw.add("r", std::string("MKV"));  // not encoded
    bool threw = false;
    try {
        (void)gpu::search(raw, db, sc, opt);
    } catch (const error& e) {
        threw = e.code() == exit_code::bad_input;
    }
    CHECK(threw);
    sequence_set bad = queries;
    bad.residues[0] = 200;  // outside the matrix
    threw = false;
    try {
        (void)gpu::search(bad, db, sc, opt);
    } catch (const error& e) {
        threw = e.code() == exit_code::bad_input && std::string(e.what()).find("q0") != std::string::npos;
    }
    CHECK(threw);
}

GPU_TEST("sanitize: gpu search, batches in flight and early delivery, small") {
    // Small enough for compute-sanitizer (scripts/sanitize.sh runs the tests named "sanitize"): 70 queries go in
    // batches, two in flight, with a 16-bit overflow among them.
    std::mt19937_64 rng(7);
    std::vector<std::string> qs, ss;
    for (int k = 0; k < 70; ++k) qs.push_back(random_letters(rng, 1 + rng() % 120, protein_letters));
    qs.push_back(std::string(3000, 'W'));
    for (int k = 0; k < 40; ++k) ss.push_back(relative(rng, qs[rng() % qs.size()], 0.2, protein_letters));
    ss.push_back(std::string(3000, 'W'));
    const scoring sc = protein_scoring();
    const sequence_set queries = encoded(qs, sc, "q"), db = encoded(ss, sc, "s");
    search_options opt;
    opt.max_hits = 5;
    const hit_lists cpu = search_cpu(queries, db, sc, opt, pool());
    std::size_t delivered = 0;
    opt.on_final = [&](std::span<const std::uint32_t> listed, const hit_lists&) { delivered += listed.size(); };
    gpu::detail::search_timing timing;
    const hit_lists gpu_hits = gpu::detail::search(queries, db, sc, opt, {}, &timing);
    CHECK(gpu_hits == cpu);
    CHECK_EQ(delivered, qs.size());
    CHECK(timing.batches > 1);
    CHECK(timing.overflow_lanes > 0);
}
