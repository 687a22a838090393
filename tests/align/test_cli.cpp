// `swgpu align` end to end: the built program is run as a user runs it. Golden outputs of the bundled demo in every
// format (checked against blastp's output and by re-scoring every printed alignment), the command-line side of the
// bad-input catalogue (exit code + one line "swgpu: error: ..."), atomic -o, and output that does not depend on
// --db-chunk, threads or how the input arrives.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <random>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/align/hsps.hpp"
#include "core/align/scoring.hpp"
#include "tests/align/sequence_generators.hpp"
#include "gpu/gpu.hpp"
#include "tests/cli_support.hpp"
#include "io/align/database_file.hpp"

namespace fs = std::filesystem;
using swgpu::testing::fields_of;
using swgpu::testing::lines_of;

namespace {

const std::string source_dir = SWGPU_SOURCE_DIR;
const std::string binary = SWGPU_BINARY;
const std::string demo = "data/demo_queries.fa data/demo_db.fa";  // relative to the source directory
const std::string golden_dir = source_dir + "/tests/data/golden/";

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct temp_dir {
    fs::path path;
    temp_dir() {
        std::string templ = (fs::temp_directory_path() / "swgpu-cli-XXXXXX").string();
        path = ::mkdtemp(templ.data());
    }
    ~temp_dir() { fs::remove_all(path); }
    std::vector<std::string> entries() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }
    std::string file(const std::string& name, const std::string& content) const {
        std::ofstream(path / name, std::ios::binary) << content;
        return (path / name).string();
    }
};

struct result {
    int code = -1;
    std::string out, err;
};

// Runs `swgpu ARGS` in the source directory (so the demo's relative paths appear in headers as in the golden files),
// with `env` (VAR=value words) set for it.
result run_swgpu(const std::string& args, const std::string& stdin_file = "", const std::string& env = "") {
    static temp_dir io;
    const auto out = io.path / "stdout", err = io.path / "stderr";
    const std::string cmd = "cd '" + source_dir + "' && " + env + " '" + binary + "' " + args +
                            (stdin_file.empty() ? " </dev/null" : " <'" + stdin_file + "'") + " >'" + out.string() +
                            "' 2>'" + err.string() + "'";
    const int status = std::system(cmd.c_str());
    result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

std::string without_pg(const std::string& sam) {  // @PG holds the program's path
    std::string out;
    for (const auto& l : lines_of(sam))
        if (l.rfind("@PG\t", 0) != 0) out += l + "\n";
    return out;
}

// Score of printed aligned rows, computed here from the BLOSUM62 letters and BLAST's gap cost (open + k*extend).
int score_rows(const std::string& q, const std::string& s, const swgpu::substitution_matrix& m, int open, int extend) {
    int score = 0;
    for (std::size_t k = 0; k < q.size();) {
        if (q[k] == '-' || s[k] == '-') {
            const bool in_query = q[k] == '-';
            std::size_t len = 0;
            while (k < q.size() && (in_query ? q[k] == '-' : s[k] == '-')) ++len, ++k;
            score -= open + static_cast<int>(len) * extend;
        } else {
            score += m.score(m.code(q[k]), m.code(s[k]));
            ++k;
        }
    }
    return score;
}

}  // namespace

TEST_CASE("golden outputs of the demo in every format", "[cli]") {
    const std::vector<std::pair<std::string, std::string>> formats = {
        {"--outfmt 6", "demo.tsv"},
        {"--outfmt '6 std score qlen slen nident positive gaps ppos qcovhsp sstrand cigar qseq sseq'",
         "demo.columns.tsv"},
        {"--outfmt 7", "demo.blast7"},
        {"--outfmt json", "demo.jsonl"},
        {"--outfmt pair", "demo.pair"},
        {"--outfmt sam -k 500 -e 10", "demo.sam"},  // the other formats' -k and -e: every hit, secondary ones too
    };
    for (const auto& [option, file] : formats) {
        INFO(option);
        const auto r = run_swgpu("align " + demo + " -q " + option);
        REQUIRE(r.code == 0);
        CHECK(r.err.empty());
        const std::string golden = slurp(golden_dir + file);
        REQUIRE(!golden.empty());
        if (file == "demo.sam") {
            CHECK(without_pg(r.out) == without_pg(golden));
            CHECK_THAT(r.out, Catch::Contains("\n@PG\tID:swgpu\tPN:swgpu\tVN:"));
        } else {
            CHECK(r.out == golden);
        }
    }
}

TEST_CASE("the demo's golden output agrees with blastp and re-scores", "[cli]") {
    // demo.blastp.tsv: blastp 2.12.0+ -comp_based_stats 0 -seg no -max_target_seqs 500 on a makeblastdb of the demo
    // database, 21 columns (std score qlen slen nident positive gaps ppos qcovhsp sstrand). BLAST's heuristics find
    // a subset of the Smith-Waterman hits; each one it finds must be printed with the same values.
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> ours;
    const auto golden = lines_of(slurp(golden_dir + "demo.columns.tsv"));
    REQUIRE(golden.size() >= 20);
    for (const auto& l : golden) {
        const auto f = fields_of(l);
        REQUIRE(f.size() == 24);
        ours[{f[0], f[1]}] = f;
    }
    const auto blast = lines_of(slurp(golden_dir + "demo.blastp.tsv"));
    REQUIRE(blast.size() == 20);
    for (const auto& l : blast) {
        const auto b = fields_of(l);
        REQUIRE(b.size() == 21);
        INFO(l);
        const auto it = ours.find({b[0], b[1]});
        REQUIRE(it != ours.end());
        for (std::size_t k = 0; k < 21; ++k) CHECK(it->second[k] == b[k]);
    }

    // Every printed alignment scores what its score column says; rows are as long as the alignment; hits are
    // ordered by E-value (ascending), as BLAST orders them.
    const auto m = swgpu::substitution_matrix::builtin("BLOSUM62");
    std::set<std::string> db_ids;
    for (const auto& l : lines_of(slurp(source_dir + "/data/demo_db.fa")))
        if (!l.empty() && l[0] == '>') db_ids.insert(l.substr(1, l.find(' ') - 1));
    std::string previous_query;
    double previous_evalue = 0;
    for (const auto& l : golden) {
        const auto f = fields_of(l);
        INFO(l);
        const int score = std::stoi(f[12]);
        CHECK(score_rows(f[22], f[23], m, 11, 1) == score);
        CHECK(f[22].size() == std::stoul(f[3]));
        CHECK(f[23].size() == std::stoul(f[3]));
        CHECK(db_ids.count(f[1]));
        const double evalue = std::stod(f[10]);
        if (f[0] == previous_query) CHECK(evalue >= previous_evalue);
        previous_query = f[0];
        previous_evalue = evalue;
    }
}

TEST_CASE("output does not depend on --db-chunk, threads or stdin", "[cli]") {
    const std::string cols = " -q --outfmt '6 std score cigar qseq sseq'";
    const auto base = run_swgpu("align " + demo + cols + " -t 1");
    REQUIRE(base.code == 0);
    REQUIRE(!base.out.empty());
    CHECK(run_swgpu("align " + demo + cols + " -t 2").out == base.out);
    const auto chunked = run_swgpu("align " + demo + cols + " -t 2 --db-chunk 5000");  // about 100 chunks
    CHECK(chunked.code == 0);
    CHECK(chunked.out == base.out);
    CHECK(without_pg(run_swgpu("align " + demo + " -q --outfmt sam --db-chunk 20000").out) ==
          without_pg(run_swgpu("align " + demo + " -q --outfmt sam").out));
    CHECK(run_swgpu("align - data/demo_db.fa" + cols, source_dir + "/data/demo_queries.fa").out == base.out);
    CHECK(run_swgpu("align data/demo_queries.fa -" + cols, source_dir + "/data/demo_db.fa").out == base.out);
}

TEST_CASE("columns that need no alignment print the same values as a run that aligns", "[cli]") {
    // qseqid sseqid evalue bitscore score qlen slen sstrand come from the score pass alone; the run says it aligned
    // nothing, and its lines are the first columns of a run that also prints alignment columns.
    const auto scores_only = run_swgpu("align " + demo + " -v --outfmt '6 qseqid sseqid evalue bitscore score qlen slen'");
    REQUIRE(scores_only.code == 0);
    CHECK_THAT(scores_only.err, Catch::Contains("the format prints no alignment"));
    const auto full = run_swgpu("align " + demo + " -q --outfmt '6 qseqid sseqid evalue bitscore score qlen slen pident'");
    REQUIRE(full.code == 0);
    std::string cut;
    for (const auto& line : lines_of(full.out)) cut += line.substr(0, line.rfind('\t')) + "\n";
    CHECK(scores_only.out == cut);
    CHECK(lines_of(cut).size() > 20);
    const auto aligned = run_swgpu("align " + demo + " -v --outfmt '6 qseqid pident'");
    CHECK_THAT(aligned.err, Catch::Contains("; alignments "));
}

TEST_CASE("a database made by makedb gives the same output as its FASTA file", "[cli]") {
    temp_dir dir;
    const std::string prefix = (dir.path / "demo").string();
    REQUIRE(swgpu::io::write_database(source_dir + "/data/demo_db.fa", prefix) == 1000);
    const std::string cols = " -q --outfmt '6 std score cigar' --db-chunk 50000";
    const auto from_db = run_swgpu("align data/demo_queries.fa '" + prefix + ".swdb'" + cols);
    CHECK(from_db.code == 0);
    CHECK(from_db.out == run_swgpu("align " + demo + cols).out);
}

TEST_CASE("option -o is written atomically", "[cli]") {
    temp_dir dir;
    const std::string target = (dir.path / "hits.tsv").string();
    // A database whose last record is bad: the run fails after searching the earlier chunks.
    const std::string db = dir.file("db.fa", slurp(source_dir + "/data/demo_db.fa") + ">broken\nMKV123\n");

    SECTION("a failed run leaves no file and no temporary file") {
        const auto r = run_swgpu("align data/demo_queries.fa '" + db + "' -q --db-chunk 10000 -o '" + target + "'");
        CHECK(r.code == 1);
        CHECK_THAT(r.err, Catch::StartsWith("swgpu: error: ") && Catch::Contains("db.fa"));
        CHECK(dir.entries() == std::vector<std::string>{"db.fa"});
    }
    SECTION("a failed run leaves an existing file as it was") {
        dir.file("hits.tsv", "old results\n");
        CHECK(run_swgpu("align data/demo_queries.fa '" + db + "' -q -o '" + target + "'").code == 1);
        CHECK(slurp(target) == "old results\n");
        CHECK(dir.entries() == std::vector<std::string>{"db.fa", "hits.tsv"});
    }
    SECTION("a successful run writes the same as stdout") {
        const auto r = run_swgpu("align " + demo + " -q -o '" + target + "'");
        CHECK(r.code == 0);
        CHECK(r.out.empty());
        CHECK(slurp(target) == slurp(golden_dir + "demo.tsv"));
        CHECK(dir.entries() == std::vector<std::string>{"db.fa", "hits.tsv"});
    }
}

TEST_CASE("DNA: both strands, minus-strand hits with sstart > send and SAM flag 16", "[cli]") {
    temp_dir dir;
    // Subject chr: 10 G, a 24-nt segment, 10 T. The query is the segment's reverse complement, so its best hit is on
    // the minus strand: query 1..24 against subject 34..11.
    const std::string segment = "ACGTTGCAAGCTTAGCCATGGATC";
    std::string rc(segment.rbegin(), segment.rend());
    for (auto& c : rc) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
    const auto q = dir.file("q.fa", ">read\n" + rc + "\n");
    const auto db = dir.file("db.fa", ">chr\nGGGGGGGGGG" + segment + "TTTTTTTTTT\n");
    const auto tab = run_swgpu("align '" + q + "' '" + db + "' -q --no-evalue --outfmt '6 std score sstrand'");
    REQUIRE(tab.code == 0);
    CHECK(lines_of(tab.out).at(0) == "read\tchr\t100.000\t24\t0\t0\t1\t24\t34\t11\tNA\tNA\t48\tminus");
    const auto sam = run_swgpu("align '" + q + "' '" + db + "' -q --no-evalue --outfmt sam");
    REQUIRE(sam.code == 0);
    CHECK_THAT(sam.out, Catch::Contains("\nread\t16\tchr\t11\t255\t24M\t*\t0\t0\t" + segment + "\t*\tAS:i:48\tNM:i:0"));
    // --strand plus finds no 24-nt hit.
    const auto plus = run_swgpu("align '" + q + "' '" + db + "' -q --no-evalue --strand plus --outfmt '6 score sstrand'");
    REQUIRE(plus.code == 0);
    for (const auto& l : lines_of(plus.out)) CHECK_THAT(l, Catch::EndsWith("\tplus"));
    CHECK_THAT(plus.out, !Catch::Contains("48\t"));
}

TEST_CASE("options --version and --help", "[cli]") {
    const auto v = run_swgpu("--version");
    CHECK(v.code == 0);
    CHECK_THAT(v.out, Catch::StartsWith("swgpu ") && Catch::Contains(swgpu::gpu::build_info()));
    const auto h = run_swgpu("align --help");
    CHECK(h.code == 0);
    CHECK_THAT(h.out, Catch::Contains("OPEN + k*EXTEND") && Catch::Contains("1-based") &&
                          Catch::Contains("smallest query end") && Catch::Contains("Exit codes"));
}

TEST_CASE("command-line errors: exit code and one line naming the problem", "[cli]") {
    temp_dir dir;
    const auto dna = dir.file("dna.fa", ">d\nACGTACGTACGTAAACCCGGGTTT\n");
    const auto broken_matrix = dir.file("broken.mat", "   A  R\nA  4 -1\nR -1\n");
    const std::string missing_dir_out = (dir.path / "no-such-dir" / "out.tsv").string();
    struct error_case {
        std::string args;
        int code;
        std::string says;
    };
    std::vector<error_case> cases = {
        {"align " + demo + " --matrix NOSUCH", 2, "unknown matrix 'NOSUCH'"},
        {"align " + demo + " --matrix '" + broken_matrix + "'", 1, "broken.mat"},
        {"align " + demo + " --outfmt '6 qseqid bogus'", 2, "unknown --outfmt column 'bogus'"},
        {"align " + demo + " --outfmt 9", 2, "unknown --outfmt '9'"},
        {"align " + demo + " --outfmt 'sam qseqid'", 2, "takes no column list"},
        {"align " + demo + " --read-group 'ID:x'", 2, "--read-group applies to --outfmt sam"},
        {"align " + demo + " --outfmt sam --read-group 'SM:y'", 2, "--read-group has no ID:VALUE field"},
        {"align " + demo + " --gap-open -1", 2, "--gap-open must be >= 0"},
        {"align " + demo + " --gap-extend 0", 2, "--gap-extend must be >= 1"},
        {"align " + demo + " --gap-open abc", 2, "--gap-open"},
        {"align " + demo + " --gap-open 3", 2, "no E-value parameters"},
        {"align " + demo + " -k 0", 2, "--max-target-seqs"},
        {"align " + demo + " -e 0", 2, "--evalue must be positive"},
        {"align " + demo + " --db-chunk 0", 2, "--db-chunk"},
        {"align " + demo + " --gpu-align elsewhere", 2, "--gpu-align"},
        {"align " + demo + " --seqtype rna", 2, "--seqtype"},
        {"align " + demo + " --strand minus", 2, "--strand applies to DNA"},
        {"align " + demo + " --frobnicate", 2, "--frobnicate"},
        {"align " + demo + " -e 1 --no-evalue", 2, "excludes"},
        {"align " + demo + " --matrix BLOSUM62 --match 1", 2, "excludes"},
        {"align " + demo + " -v -q", 2, "excludes"},
        {"align '" + dna + "' '" + dna + "' --match 0", 2, "--match must be positive"},
        {"align '" + dna + "' data/demo_db.fa", 2, "looks like protein"},
        {"align data/demo_queries.fa", 2, "DB is required"},
        {"align", 2, "QUERY and DB are required; usage: swgpu align QUERY DB [options]; run 'swgpu align --help'"},
        {"", 2, "subcommand"},
        {"algn data/demo_queries.fa data/demo_db.fa", 2, "'algn' is not a swgpu subcommand; did you mean 'align'?"},
        {"makdeb x.fa y", 2, "did you mean 'makedb'?"},
        {"frobnicate", 2, "'frobnicate' is not a swgpu subcommand; run 'swgpu --help'"},
        {"align - -", 2, "stdin"},
        {"align no_such_query.fa data/demo_db.fa", 1, "no_such_query.fa"},
        {"align data/demo_queries.fa no_such_db.fa", 1, "no_such_db.fa"},
        {"align " + demo + " -o '" + missing_dir_out + "'", 5, "no-such-dir/out.tsv"},
        {"align " + demo + " -o '" + dir.path.string() + "'", 5, "is a directory"},
    };
    if (fs::exists("/dev/full")) cases.push_back({"align " + demo + " -o /dev/full", 5, "/dev/full"});
    if (!swgpu::gpu::available()) cases.push_back({"align " + demo + " --backend gpu", 3, "no usable GPU"});

    for (const auto& c : cases) {
        // --backend cpu keeps the "no usable GPU" notice of --backend auto off stderr (except in the GPU case).
        const bool add_cpu = c.code != 3 && c.args.rfind("align ", 0) == 0;
        const std::string args = c.args + (add_cpu ? " --backend cpu" : "");
        INFO("swgpu " << args);
        const auto r = run_swgpu(args);
        CHECK(r.code == c.code);
        const auto lines = lines_of(r.err);
        REQUIRE(lines.size() == 1);
        CHECK_THAT(lines[0], Catch::StartsWith("swgpu: error: ") && Catch::Contains(c.says));
        CHECK(r.out.empty());
    }
    CHECK(dir.entries() == std::vector<std::string>{"broken.mat", "dna.fa"});  // no output file was left behind
}

TEST_CASE("a matrix file without X: unknown letters score its lowest score, and the warning says so", "[cli]") {
    // BLOSUM62's 20 amino acids (no B, J, Z, X, *): W/W 11, N/N 6, lowest -4. WWWBWWW against WWWNWWW at 11/1 scores
    // six W/W pairs and B at -4: 62 (B read as N, asparagine, gave 72).
    const auto b62 = swgpu::substitution_matrix::builtin("BLOSUM62");
    const std::string aa = "ARNDCQEGHILKMFPSTWYV";
    std::string text = " ";
    for (char c : aa) text += std::string(" ") + c;
    text += "\n";
    for (char a : aa) {
        text += a;
        for (char b : aa) text += " " + std::to_string(b62.score(b62.code(a), b62.code(b)));
        text += "\n";
    }
    temp_dir dir;
    const auto matrix = dir.file("noX.mat", text);
    const auto q = dir.file("q.fa", ">q\nWWWBWWW\n");
    const auto s = dir.file("s.fa", ">n\nWWWNWWW\n");
    const auto r = run_swgpu("align '" + q + "' '" + s + "' --backend cpu --matrix '" + matrix +
                             "' --no-evalue --outfmt '6 qseqid sseqid score qseq sseq'");
    REQUIRE(r.code == 0);
    CHECK(r.out == "q\tn\t62\tWWWXWWW\tWWWNWWW\n");
    CHECK(r.err == "swgpu: warning: " + q + ": 1 residues are not letters of " + matrix +
                       ", which has no X row; they score its lowest score (-4) against every letter\n");
}

TEST_CASE("an interrupted run (SIGINT, SIGTERM) leaves neither the output file nor its temporary file", "[cli]") {
    temp_dir dir;
    // A long pair on the CPU: takes seconds, so the signal arrives while it is being aligned.
    std::mt19937_64 rng(8);
    std::string a(150000, 'A'), b;
    for (auto& c : a) c = "ACGT"[rng() % 4];
    b = a.substr(1000, 140000);
    for (auto& c : b)
        if (rng() % 20 == 0) c = "ACGT"[rng() % 4];
    {
        std::ofstream(dir.path / "a.fa") << ">a\n" << a << "\n";
        std::ofstream(dir.path / "b.fa") << ">b\n" << b << "\n";
    }
    for (int sig : {SIGINT, SIGTERM}) {
        INFO("signal " << sig);
        const fs::path out = dir.path / "hits.tsv";
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            const int devnull = ::open("/dev/null", O_WRONLY);
            ::dup2(devnull, STDERR_FILENO);
            ::execl(binary.c_str(), binary.c_str(), "align", (dir.path / "a.fa").c_str(), (dir.path / "b.fa").c_str(),
                    "--backend", "cpu", "--mode", "pairwise", "--strand", "plus", "-o", out.c_str(),
                    static_cast<char*>(nullptr));
            ::_exit(127);
        }
        // Wait until the temporary file exists (the run has started), then interrupt.
        bool started = false;
        for (int k = 0; k < 200 && !started; ++k) {
            for (const auto& e : fs::directory_iterator(dir.path))
                started = started || e.path().filename().string().rfind(".hits.tsv.swgpu-", 0) == 0;
            if (!started) ::usleep(20000);
        }
        REQUIRE(started);
        ::usleep(100000);
        ::kill(pid, sig);
        int status = 0;
        ::waitpid(pid, &status, 0);
        CHECK(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == sig);
        CHECK(!fs::exists(out));
        for (const auto& e : fs::directory_iterator(dir.path))
            CHECK(e.path().filename().string().rfind(".hits.tsv", 0) != 0);
    }
}

TEST_CASE("align with --batch: each query file gets the output a run with that file alone writes", "[cli]") {
    // The demo queries cut into three files (the first holds one query); outputs in the -o folder or named.
    temp_dir dir;
    const auto queries = lines_of(slurp(fs::path(source_dir) / "data/demo_queries.fa"));
    std::vector<std::string> parts(3);
    std::size_t record = 0;
    for (const auto& l : queries) {
        if (!l.empty() && l[0] == '>') ++record;
        parts[record == 1 ? 0 : record <= 3 ? 1 : 2] += l + "\n";
    }
    REQUIRE(!parts[2].empty());
    const std::string a = dir.file("a.fa", parts[0]), b = dir.file("b.fa", parts[1]), c = dir.file("c.fa", parts[2]);
    const std::string named = (dir.path / "named.tsv").string();
    const std::string list =
        dir.file("list.txt", "# the demo in three files\n" + a + "\n\n" + b + "\t" + named + "\n" + c + "\n");
    for (const std::string fmt : {"6", "'6 std score cigar'", "sam", "7"}) {
        INFO("format " << fmt);
        const auto r = run_swgpu("align --backend cpu --batch " + list + " data/demo_db.fa -k 7 --outfmt " + fmt +
                                 " -o " + dir.path.string());
        REQUIRE(r.code == 0);
        const std::vector<std::pair<std::string, std::string>> expect = {
            {a, (dir.path / "a.fa.out").string()}, {b, named}, {c, (dir.path / "c.fa.out").string()}};
        for (const auto& [query, out] : expect) {
            const auto alone = run_swgpu("align --backend cpu " + query + " data/demo_db.fa -k 7 --outfmt " + fmt);
            REQUIRE(alone.code == 0);
            CHECK(alone.out.size() > 100);
            if (fmt == "sam") CHECK(without_pg(slurp(out)) == without_pg(alone.out));  // @PG: the command line
            else CHECK(slurp(out) == alone.out);
        }
    }
}

TEST_CASE("align with --batch: errors in the list are reported before any search and leave no output", "[cli]") {
    temp_dir dir;
    const std::string q = (fs::path(source_dir) / "data/demo_queries.fa").string();
    const struct {
        std::string list, message;
    } cases[] = {
        {"", "names no query file"},
        {q + "\n" + q + "\n", "listed twice"},
        {q + " a b\n", "expected QUERY [OUTPUT]"},
        {"-\n", "stdin cannot be"},
        {q + " /nonexistent-folder/x.tsv\n", "not writable"},
    };
    for (const auto& c : cases) {
        INFO(c.list);
        const std::string list = dir.file("list.txt", c.list);
        const auto r = run_swgpu("align --backend cpu --batch " + list + " data/demo_db.fa -o " + dir.path.string());
        CHECK(r.code != 0);
        CHECK(r.err.find(c.message) != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(!fs::exists(dir.path / "demo_queries.fa.out"));
    }
    // A query file that cannot be read is refused as a run with it alone refuses it (exit 1, its line), then the
    // line that sums up the batch; nothing else was listed, so nothing is written.
    const std::string list = dir.file("list.txt", (dir.path / "missing.fa").string() + "\n");
    const auto missing = run_swgpu("align --backend cpu --batch " + list + " data/demo_db.fa -o " + dir.path.string());
    CHECK(missing.code == 1);
    const auto lines = lines_of(missing.err);
    REQUIRE(lines.size() == 2);
    CHECK_THAT(lines[0], Catch::StartsWith("swgpu: error: ") && Catch::Contains("missing.fa"));
    CHECK_THAT(lines[1], Catch::Contains("1 of the 1 query files"));
    CHECK(!fs::exists(dir.path / "missing.fa.out"));
    const auto both = run_swgpu("align --batch x data/demo_queries.fa data/demo_db.fa");
    CHECK(both.code == 2);
    CHECK(both.err.find("give only DB") != std::string::npos);
}

TEST_CASE("align with --batch: relative OUTPUT names are taken from the -o folder, created when missing", "[cli]") {
    temp_dir dir;
    const std::string q = (fs::path(source_dir) / "data/demo_queries.fa").string();
    const std::string list = dir.file("list.txt", q + "\tnamed.tsv\n");
    const fs::path folder = dir.path / "new" / "folder";
    const auto r = run_swgpu("align --backend cpu --batch " + list + " data/demo_db.fa -o " + folder.string());
    REQUIRE(r.code == 0);
    const auto alone = run_swgpu("align --backend cpu " + q + " data/demo_db.fa");
    CHECK(slurp(folder / "named.tsv") == alone.out);
    CHECK(!fs::exists(fs::path("named.tsv")));  // not in the current folder
    // -o naming a file is refused with --batch, and the file is kept.
    const std::string file = dir.file("a-file.tsv", "keep\n");
    const auto refused = run_swgpu("align --backend cpu --batch " + list + " data/demo_db.fa -o " + file);
    CHECK(refused.code == 2);
    CHECK(swgpu::testing::one_error_line(refused.err));
    CHECK_THAT(refused.err, Catch::Contains("names the folder"));
    CHECK(slurp(file) == "keep\n");
}

TEST_CASE("mode auto on the CPU: a pair past the CPU's switch point goes pairwise, a smaller one through the search, same output", "[cli]") {
    temp_dir dir;
    std::mt19937_64 rng(12);
    const auto pair = [&](const std::string& name, std::size_t n) {
        std::string a(n, 'A'), b;
        for (auto& c : a) c = "ACGT"[rng() % 4];
        b = a.substr(n / 10, n - n / 5);
        for (auto& c : b)
            if (rng() % 15 == 0) c = "ACGT"[rng() % 4];
        std::ofstream(dir.path / (name + ".a.fa")) << ">" << name << "_a\n" << a << "\n";
        std::ofstream(dir.path / (name + ".b.fa")) << ">" << name << "_b\n" << b << "\n";
    };
    pair("big", 6000);    // 4800 x 6000 = 2.9e7 cells >= 2^24 (long.auto_cells_cpu), shorter side >= 4096
    pair("small", 3000);  // shorter side below 4096
    for (const std::string name : {"big", "small"}) {
        INFO(name);
        const std::string args = "align '" + (dir.path / (name + ".b.fa")).string() + "' '" +
                                 (dir.path / (name + ".a.fa")).string() + "' --backend cpu -t 2 -v";
        const auto autom = run_swgpu(args + " --mode auto");
        const auto search = run_swgpu(args + " --mode search");
        REQUIRE(autom.code == 0);
        REQUIRE(search.code == 0);
        CHECK(autom.out == search.out);
        CHECK(!autom.out.empty());
        const bool pairwise = autom.err.find("aligned pairwise") != std::string::npos;
        CHECK(pairwise == (name == "big"));
        CHECK(search.err.find("aligned pairwise") == std::string::npos);
    }
}

TEST_CASE("max-hsps: further alignments of a pair, each as core's Waterman-Eggert gives it, under its subject's best", "[cli]") {
    using namespace swgpu;
    using swgpu::testing::encode_letters;
    temp_dir dir;
    // Two pieces of the query in the subject (the second copied twice), and a decoy subject with one piece.
    const std::string q = "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEVVHSLAKWKRQTLGQHDFSAGEGLYTHMKALRPDEDRL";
    const std::string s1 = "GGGGKALPDAQFEVVHSLAKWKRQTLGQHDFSAGEGGGGGGPPPPPMKTAYIAKQRQISFVKSHFSRQLEERLGWWWWWWWKALPDAQFEVVHSLAKWKRQ";
    const std::string s2 = "PPPPPPPPTLGQHDFSAGEGLYTHMKALRPDEDRLPPPPPPP";
    const std::string qf = dir.file("q.fa", ">q\n" + q + "\n"), sf = dir.file("s.fa", ">s1\n" + s1 + "\n>s2\n" + s2 + "\n");
    const std::string cols = " --outfmt '6 qseqid sseqid qstart qend sstart send score evalue cigar' --backend cpu";
    const auto one = run_swgpu("align " + qf + " " + sf + cols);
    const auto three = run_swgpu("align " + qf + " " + sf + cols + " --max-hsps 3");
    REQUIRE(one.code == 0);
    REQUIRE(three.code == 0);
    const auto rows1 = lines_of(one.out), rows3 = lines_of(three.out);
    REQUIRE(rows1.size() == 2);
    REQUIRE(rows3.size() > rows1.size());
    // Every subject's first row is its row without --max-hsps, in the same order; its further rows follow it.
    std::vector<std::string> firsts;
    std::string last_subject;
    for (const auto& r : rows3) {
        const auto f = fields_of(r);
        if (f[1] != last_subject) firsts.push_back(r);
        last_subject = f[1];
    }
    CHECK(firsts == rows1);
    // The rows of s1 are core's alignments of the pair, in order.
    const scoring sc{substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein};
    const auto enc = [&](const std::string& t) { return encode_letters(t, sc.matrix); };
    hsp_options opt;
    opt.max_hsps = 3;
    const auto want = sw_align_hsps(enc(q), enc(s1), sc, opt);
    std::vector<std::vector<std::string>> s1_rows;
    for (const auto& r : rows3)
        if (fields_of(r)[1] == "s1") s1_rows.push_back(fields_of(r));
    REQUIRE(s1_rows.size() >= 2);
    REQUIRE(s1_rows.size() <= want.size());
    for (std::size_t h = 0; h < s1_rows.size(); ++h) {
        INFO("alignment " << h);
        CHECK(s1_rows[h][2] == std::to_string(want[h].query_begin + 1));
        CHECK(s1_rows[h][3] == std::to_string(want[h].query_end + 1));
        CHECK(s1_rows[h][4] == std::to_string(want[h].subject_begin + 1));
        CHECK(s1_rows[h][5] == std::to_string(want[h].subject_end + 1));
        CHECK(s1_rows[h][6] == std::to_string(want[h].score));
        CHECK(s1_rows[h][8] == cigar_string(want[h].ops));
        CHECK(std::stod(s1_rows[h][7]) <= 10);
    }
    // A tight -e keeps fewer of them; -k counts subjects, not alignments.
    const auto tight = run_swgpu("align " + qf + " " + sf + cols + " --max-hsps 3 -e 1e-5");
    REQUIRE(tight.code == 0);
    CHECK(lines_of(tight.out).size() < rows3.size());
    const auto k1 = run_swgpu("align " + qf + " " + sf + cols + " --max-hsps 3 -k 1");
    REQUIRE(k1.code == 0);
    for (const auto& r : lines_of(k1.out)) CHECK(fields_of(r)[1] == fields_of(rows1[0])[1]);
    // The CPU and, where the program has one, every format: SAM's further records are not primary.
    const auto sam = run_swgpu("align " + qf + " " + sf + " --backend cpu --max-hsps 3 --outfmt sam -k 5");
    REQUIRE(sam.code == 0);
    int primary = 0, records = 0;
    for (const auto& l : lines_of(sam.out)) {
        if (l.empty() || l[0] == '@') continue;
        ++records;
        const int flag = std::stoi(fields_of(l)[1]);
        primary += (flag & (256 | 2048)) == 0;
    }
    CHECK(primary == 1);
    CHECK(records >= 3);
    // With composition-based statistics: each subject's first row is its row under --comp-based-stats 1 alone (the
    // hit realigned with the pair's adjusted matrix); the further ones, under that matrix too, follow with falling
    // scores and E-values within -e.
    const auto adjusted1 = run_swgpu("align " + qf + " " + sf + cols + " --comp-based-stats 1");
    const auto adjusted3 = run_swgpu("align " + qf + " " + sf + cols + " --comp-based-stats 1 --max-hsps 3");
    REQUIRE(adjusted3.code == 0);
    const auto a1 = lines_of(adjusted1.out), a3 = lines_of(adjusted3.out);
    REQUIRE(a3.size() > a1.size());
    std::size_t next_first = 0;
    for (std::size_t k = 0; k < a3.size(); ++k) {
        const auto f = fields_of(a3[k]);
        if (k == 0 || fields_of(a3[k - 1])[1] != f[1]) {
            REQUIRE(next_first < a1.size());
            CHECK(a3[k] == a1[next_first++]);
        } else {
            CHECK(std::stoi(f[6]) <= std::stoi(fields_of(a3[k - 1])[6]));
            CHECK(std::stod(f[7]) <= 10.0);
        }
    }
    CHECK(next_first == a1.size());
    // Refusals: one line, exit 2.
    for (const std::string bad : {" --max-hsps 0"}) {
        INFO(bad);
        const auto r = run_swgpu("align " + qf + " " + sf + cols + bad);
        CHECK(r.code == 2);
        CHECK(lines_of(r.err).size() == 1);
        CHECK(r.out.empty());
    }
}

TEST_CASE("max-hsps on a genome against a relative with an inversion and a duplication: the blocks are found", "[cli]") {
    temp_dir dir;
    std::mt19937_64 rng(31);
    std::string a(2400, 'A');
    for (auto& c : a) c = "ACGT"[rng() % 4];
    const auto revcomp = [](std::string s) {
        std::reverse(s.begin(), s.end());
        for (auto& c : s) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
        return s;
    };
    // b: a[0, 800) + inverted a[800, 1300) + a[1300, 2400) + a second copy of a[1600, 2000) (a duplication).
    const std::string b = a.substr(0, 800) + revcomp(a.substr(800, 500)) + a.substr(1300) + a.substr(1600, 400);
    const std::string af = dir.file("a.fa", ">a\n" + a + "\n"), bf = dir.file("b.fa", ">b\n" + b + "\n");
    const auto r = run_swgpu("align " + bf + " " + af + " --backend cpu --max-hsps 4 --outfmt '6 qstart qend sstart send score sstrand'");
    REQUIRE(r.code == 0);
    // Blocks as (query start, query end, subject start, subject end, strand), 1-based; minus: sstart > send.
    std::vector<std::vector<std::string>> rows;
    for (const auto& l : lines_of(r.out)) rows.push_back(fields_of(l));
    const auto found = [&](long qs, long qe, long ss, long se, const std::string& strand) {
        for (const auto& f : rows)  // within 30 bases of each end: a block's edges may shift by a few chance matches
            if (f[5] == strand && std::abs(std::stol(f[0]) - qs) <= 30 && std::abs(std::stol(f[1]) - qe) <= 30 &&
                std::abs(std::stol(f[2]) - ss) <= 30 && std::abs(std::stol(f[3]) - se) <= 30)
                return true;
        return false;
    };
    INFO(r.out);
    CHECK(found(801, 1300, 1300, 801, "minus"));     // the inversion, on the minus strand
    CHECK(found(2401, 2800, 1601, 2000, "plus"));    // the duplicated copy, a further plus-strand block
    bool collinear = false;  // the first plus block spans the collinear start and end (through the inversion)
    for (const auto& f : rows)
        collinear = collinear || (f[5] == "plus" && std::stol(f[0]) <= 30 && std::stol(f[1]) >= 2370);
    CHECK(collinear);
}

TEST_CASE("max-hsps on long pairs: one at a time on all threads, the alignments a pair a thread gives", "[cli][long]") {
    temp_dir dir;
    std::mt19937_64 rng(57);
    const auto revcomp = [](std::string s) {
        std::reverse(s.begin(), s.end());
        for (auto& c : s) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
        return s;
    };
    const auto random_dna = [&](std::size_t n) {
        std::string x(n, 'A');
        for (auto& c : x) c = "ACGT"[rng() % 4];
        return x;
    };
    // long.hsp_cells=1000 sends these pairs (about 8 M cells) one at a time on all threads: the output is the same.
    const std::string a = random_dna(2400);
    std::string b = a.substr(0, 800) + revcomp(a.substr(800, 500)) + a.substr(1300) + a.substr(1600, 400);
    for (auto& c : b)
        if (rng() % 40 == 0) c = "ACGT"[rng() % 4];
    const std::string af = dir.file("a.fa", ">a\n" + a + "\n"), bf = dir.file("b.fa", ">b\n" + b + "\n>b2\n" + b.substr(500, 1500) + "\n");
    for (const std::string fmt : {"'6 std score sstrand cigar'", "sam"}) {
        const std::string args = "align " + bf + " " + af + " --backend cpu --max-hsps 5 --outfmt " + fmt;
        const auto full = run_swgpu(args);
        const auto linear = run_swgpu(args + " -v", "", "SWGPU_TUNE=long.hsp_cells=1000");
        REQUIRE(full.code == 0);
        REQUIRE(linear.code == 0);
        CHECK(lines_of(full.out).size() >= 6);
        CHECK(without_pg(linear.out) == without_pg(full.out));
        CHECK_THAT(linear.err, Catch::Contains("long pair(s) searched again in linear memory"));
    }
    // Protein: the demo's hits, the same both ways.
    const std::string demo = "align data/demo_queries.fa data/demo_db.fa --backend cpu -k 5 -e 100 --max-hsps 3 "
                             "--outfmt '6 std score cigar'";
    const auto full = run_swgpu(demo), linear = run_swgpu(demo, "", "SWGPU_TUNE=long.hsp_cells=1000");
    REQUIRE(full.code == 0);
    CHECK(linear.out == full.out);
    // A pair past 2^24 cells (5 kbp against 5.7 kbp): the inversion and the duplication are found by default.
    const std::string big = random_dna(5000);
    const std::string rel = big.substr(0, 2000) + revcomp(big.substr(2000, 700)) + big.substr(2700) + big.substr(3000, 700);
    const std::string gf = dir.file("g.fa", ">g\n" + big + "\n"), rf = dir.file("r.fa", ">r\n" + rel + "\n");
    const auto r = run_swgpu("align " + rf + " " + gf + " --backend cpu --max-hsps 4 --outfmt '6 qstart qend sstart send score sstrand'");
    REQUIRE(r.code == 0);
    INFO(r.out);
    bool inversion = false, duplication = false;
    for (const auto& l : lines_of(r.out)) {
        const auto f = fields_of(l);
        const long qs = std::stol(f[0]), qe = std::stol(f[1]), ss = std::stol(f[2]), se = std::stol(f[3]);
        inversion = inversion || (f[5] == "minus" && std::abs(qs - 2001) <= 30 && std::abs(qe - 2700) <= 30 &&
                                  std::abs(ss - 2700) <= 30 && std::abs(se - 2001) <= 30);
        duplication = duplication || (f[5] == "plus" && std::abs(qs - 5001) <= 30 && std::abs(qe - 5700) <= 30 &&
                                      std::abs(ss - 3001) <= 30 && std::abs(se - 3700) <= 30);
    }
    CHECK(inversion);
    CHECK(duplication);
}
