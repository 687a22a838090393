// Cross-checks against the peer tools on the bundled data (issue 3, item 7), run live when the tools are installed:
//   ssearch36 (Debian package fasta3): the exact Smith-Waterman-Gotoh scores and coordinates;
//   blastp/makeblastdb (Debian package ncbi-blast+): bit scores and E-values with -comp_based_stats 0 -seg no;
//   blastn: the same for DNA match/mismatch scoring (BLAST's default DNA scores 2/-3, gaps 5/2).
// A tool that is not on PATH makes its test case pass with a warning saying what was skipped; CI installs both
// packages (README's test command), so there they always run.
//
// Gap conventions: swgpu and BLAST charge open + k·extend for a gap of length k. ssearch36's -f is its gap-open
// penalty and -g the penalty of each gap residue, so that its first gap residue costs f + g: "-f -11 -g -1" is
// BLAST's 11/1 (FASTA's own default for BLOSUM50, -10/-2, is BLAST's 10/2). The agreement of every score below,
// gapped alignments included, is what confirms this.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "core/align/scoring.hpp"
#include "core/align/sequence.hpp"
#include "core/align/smith_waterman.hpp"
#include "core/align/statistics.hpp"
#include "io/align/sequence_reader.hpp"

using namespace swgpu;
namespace fs = std::filesystem;

namespace {

const fs::path source_dir = SWGPU_SOURCE_DIR;

// The program's path when it is an executable file in a directory of $PATH.
std::optional<fs::path> find_program(const std::string& name) {
    const char* path = std::getenv("PATH");
    if (path == nullptr) return std::nullopt;
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        if (dir.empty()) continue;
        const fs::path candidate = fs::path(dir) / name;
        if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) return candidate;
    }
    return std::nullopt;
}

// True when every tool is installed; otherwise a warning naming what is skipped and why.
bool tools_present(const std::vector<std::string>& tools, const std::string& package, const std::string& what) {
    for (const auto& t : tools)
        if (!find_program(t)) {
            WARN(t << " is not installed (Debian package " << package << "): " << what << " skipped");
            return false;
        }
    return true;
}

class temp_dir {
public:
    temp_dir() {
        std::string pattern = (fs::temp_directory_path() / "swgpu-crosscheck-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a temporary directory");
        path_ = pattern;
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

std::string quoted(const fs::path& p) {
    std::string s = "'";
    for (char c : p.string()) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return s + "'";
}

// Runs a shell command with stdout and stderr to `log`; the exit status.
int run(const std::string& command, const fs::path& log) {
    const std::string full = command + " > " + quoted(log) + " 2>&1";
    const int status = std::system(full.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string file_text(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> lines_of(const fs::path& p) {
    std::ifstream in(p);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

std::vector<std::string> fields(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string f;
    std::stringstream ss(s);
    while (std::getline(ss, f, sep)) out.push_back(f);
    return out;
}

std::vector<std::string> words(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string w; ss >> w;) out.push_back(w);
    return out;
}

struct encoded_file {
    sequence_set set;
    std::map<std::string, std::size_t> index;  // id -> record
};

encoded_file load(const fs::path& p, const substitution_matrix& m) {
    encoded_file f;
    f.set = io::read_all(p.string());
    encode(f.set, m);
    for (std::size_t k = 0; k < f.set.size(); ++k) f.index[f.set.names[k]] = k;
    return f;
}

// How far an exact value lies from the one BLAST printed, in units of the last printed digit (0.5 = the printed text
// is the correctly rounded value; BLAST truncates bit scores above 99.9, so there [0, 1) is exact agreement).
double evalue_deviation(double ours, const std::string& printed) {
    if (printed == "0.0") return ours < 1e-180 ? 0.0 : 1e9;
    const double blast = std::stod(printed);
    double unit;
    if (printed.find('e') != std::string::npos) {  // d.dde-XX
        unit = 0.01 * std::pow(10.0, std::floor(std::log10(blast)));
    } else {
        const auto dot = printed.find('.');
        const int decimals = dot == std::string::npos ? 0 : static_cast<int>(printed.size() - dot - 1);
        unit = std::pow(10.0, -decimals);
    }
    return std::abs(ours - blast) / unit;
}

double bit_score_deviation(double ours, const std::string& printed) {
    const double blast = std::stod(printed);
    if (ours > 99.9 && ours <= 99999) return ours >= blast && ours < blast + 1 ? 0.0 : std::abs(ours - blast);
    return std::abs(ours - blast) / 0.1;
}

std::string revcomp(const std::string& s) {
    std::string r(s.rbegin(), s.rend());
    for (char& c : r) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : c;
    return r;
}

// The DNA case: the lambda phage pieces of tests/data/crosscheck as database, and mutated copies of parts of them
// (substitutions and short indels, some reverse complemented) as queries, made with a fixed generator so that the
// data are the same on every machine.
void write_dna_queries(const sequence_set& db, const fs::path& out) {
    std::uint64_t state = 0x9e3779b97f4a7c15ull;
    auto next = [&state](std::uint64_t bound) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % bound;
    };
    const std::string bases = "ACGT";
    std::ofstream f(out);
    for (int q = 0; q < 8; ++q) {
        const std::size_t rec = next(db.size());
        const std::size_t len = std::min<std::size_t>(db.length(rec), 60 + next(700));
        const std::size_t start = next(db.length(rec) - len + 1);
        const int percent = static_cast<int>(2 + next(25));
        std::string piece(reinterpret_cast<const char*>(db[rec].data()) + start, len), mutated;
        for (char c : piece) {
            const auto r = static_cast<int>(next(1000));
            if (r < percent * 7) mutated += bases[next(4)];                   // substitution
            else if (r < percent * 8) continue;                              // deletion
            else if (r < percent * 10) mutated += std::string(1, c) + bases[next(4)];  // insertion
            else mutated += c;
        }
        if (q % 3 == 1) mutated = revcomp(mutated);
        f << ">dna_q" << q << "\n" << mutated << "\n";
    }
}

}  // namespace

TEST_CASE("Smith-Waterman scores and coordinates equal ssearch36's on the bundled data", "[crosscheck]") {
    if (!tools_present({"ssearch36"}, "fasta3", "cross-check of scores against ssearch36")) return;
    temp_dir tmp;
    const fs::path queries = source_dir / "data/demo_queries.fa", db = source_dir / "data/demo_db.fa";
    const fs::path matrix_file = source_dir / "data/matrices/BLOSUM62";
    const fs::path out = tmp.path() / "ssearch.txt";
    // -m 9: one line per subject with the raw score and coordinates; -b 1000 -E 1e6: every subject of the database;
    // -d 0: no alignments. ssearch36 aligns each pair fully, whatever the E-value.
    // The matrix by a relative name from its folder: ssearch36 cuts a -s path at its first '-' (a checkout in
    // /tmp/ci-clone made it read "/tmp/ci", warn, and score with its default BLOSUM50).
    REQUIRE(run("cd " + quoted(matrix_file.parent_path()) + " && ssearch36 -q -p -f -11 -g -1 -s ./" +
                    matrix_file.filename().string() + " -m 9 -b 1000 -d 0 -E 1e6 -T 2 " +
                    quoted(queries) + " " + quoted(db),
                out) == 0);

    const scoring sc{substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein};
    const encoded_file q = load(queries, sc.matrix), d = load(db, sc.matrix);

    struct ssearch_hit {
        std::size_t subject;
        int score;
        std::int64_t q_begin, q_end, s_begin, s_end;  // 1-based
    };
    std::map<std::size_t, std::vector<ssearch_hit>> hits;  // per query
    std::optional<std::size_t> query;
    std::size_t unknown_names = 0;
    for (const auto& line : lines_of(out)) {
        if (const auto at = line.find(">>>"); at != std::string::npos && line.find(">>><<<") == std::string::npos &&
                                              line.find(">>>///") == std::string::npos) {
            const auto name = words(line.substr(at + 3)).at(0);
            REQUIRE(q.index.count(name) == 1);
            query = q.index.at(name);
            continue;
        }
        const auto tab = line.find('\t');
        if (!query || tab == std::string::npos || line.rfind("+-", 0) == 0 || line.rfind("The best", 0) == 0) continue;
        const auto name = words(line.substr(0, tab)).at(0);
        const auto f = words(line.substr(tab + 1));  // %_id %_sim sw alen an0 ax0 pn0 px0 an1 ax1 pn1 px1 ...
        if (!d.index.count(name) || f.size() < 10) {
            ++unknown_names;
            continue;
        }
        hits[*query].push_back({d.index.at(name), std::stoi(f[2]), std::stoll(f[4]), std::stoll(f[5]),
                                std::stoll(f[8]), std::stoll(f[9])});
    }
    CHECK(unknown_names == 0);
    REQUIRE(hits.size() == q.set.size());

    // Every pair: the same optimal score. The same coordinates, or else ssearch36's coordinates delimit another
    // optimal alignment (a tie that the two programs break differently): the best local score inside its rectangle
    // is the optimal score.
    std::size_t pairs = 0, score_mismatches = 0, same_coordinates = 0, ties = 0, unexplained = 0, unique_tops = 0;
    std::vector<std::string> problems;
    auto note = [&problems](std::string s) {
        if (problems.size() < 10) problems.push_back(std::move(s));
    };
    for (const auto& [qi, list] : hits) {
        CHECK(list.size() == d.set.size());
        for (const auto& h : list) {
            ++pairs;
            const auto query_seq = q.set[qi], subject_seq = d.set[h.subject];
            const alignment a = sw_align(query_seq, subject_seq, sc);
            const std::string pair = q.set.names[qi] + " vs " + d.set.names[h.subject];
            if (a.score != h.score) {
                ++score_mismatches;
                note(pair + ": ssearch36 " + std::to_string(h.score) + ", swgpu " + std::to_string(a.score));
                continue;
            }
            if (a.query_begin + 1 == h.q_begin && a.query_end + 1 == h.q_end && a.subject_begin + 1 == h.s_begin &&
                a.subject_end + 1 == h.s_end) {
                ++same_coordinates;
                continue;
            }
            const bool inside = h.q_begin >= 1 && h.q_end <= static_cast<std::int64_t>(query_seq.size()) &&
                                h.s_begin >= 1 && h.s_end <= static_cast<std::int64_t>(subject_seq.size()) &&
                                h.q_begin <= h.q_end && h.s_begin <= h.s_end;
            if (inside && sw_score(query_seq.subspan(h.q_begin - 1, h.q_end - h.q_begin + 1),
                                   subject_seq.subspan(h.s_begin - 1, h.s_end - h.s_begin + 1), sc)
                                  .score == h.score) {
                ++ties;
            } else {
                ++unexplained;
                note(pair + ": ssearch36 aligns " + std::to_string(h.q_begin) + "-" + std::to_string(h.q_end) +
                     " to " + std::to_string(h.s_begin) + "-" + std::to_string(h.s_end) +
                     ", which holds no alignment of score " + std::to_string(h.score));
            }
        }
        // The unique top hit: the best raw score, strictly above the second best. Its alignment must start and end
        // where ssearch36's does.
        auto sorted = list;
        std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.score > b.score; });
        if (sorted.size() < 2 || sorted[0].score == sorted[1].score) continue;
        ++unique_tops;
        const auto& top = sorted[0];
        const alignment a = sw_align(q.set[qi], d.set[top.subject], sc);
        INFO(q.set.names[qi] << " vs " << d.set.names[top.subject] << " (score " << top.score << ")");
        CHECK(a.score == top.score);
        CHECK(a.query_begin + 1 == top.q_begin);
        CHECK(a.query_end + 1 == top.q_end);
        CHECK(a.subject_begin + 1 == top.s_begin);
        CHECK(a.subject_end + 1 == top.s_end);
    }
    INFO(pairs << " pairs compared: " << score_mismatches << " score differences, " << same_coordinates
               << " with ssearch36's coordinates, " << ties << " equal-score alternatives, " << unexplained
               << " unexplained; " << unique_tops << " unique top hits" << [&] {
                      std::string s;
                      for (const auto& p : problems) s += "\n  " + p;
                      return s;
                  }());
    CHECK(pairs == q.set.size() * d.set.size());
    CHECK(score_mismatches == 0);
    CHECK(unexplained == 0);
    CHECK(unique_tops == q.set.size());
}

namespace {

struct blast_comparison {
    std::size_t lines = 0, compared = 0, exact_text = 0, length_mismatches = 0;
    double max_evalue_deviation = 0, max_bit_deviation = 0;
    std::vector<std::string> problems;
};

// Compares each tabular line "qseqid sseqid evalue bitscore score qlen slen sstart send" whose raw score equals the
// optimal Smith-Waterman score of the pair (BLAST's heuristic alignment may score less) with evalue_calculator.
blast_comparison compare_with_blast(const fs::path& table, const encoded_file& q, const encoded_file& d,
                                    const encoded_file* q_minus, const scoring& sc, const evalue_calculator& ec) {
    blast_comparison r;
    std::map<std::pair<std::size_t, std::size_t>, int> optimal[2];
    for (const auto& line : lines_of(table)) {
        const auto f = fields(line, '\t');
        if (f.size() < 9) continue;
        ++r.lines;
        const std::size_t qi = q.index.at(f[0]), si = d.index.at(f[1]);
        const int score = std::stoi(f[4]);
        const std::uint64_t qlen = std::stoull(f[5]), slen = std::stoull(f[6]);
        if (qlen != q.set.length(qi) || slen != d.set.length(si)) {
            ++r.length_mismatches;
            continue;
        }
        // Minus-strand DNA hits (sstart > send): the reverse complement of the query against the subject.
        const bool minus = std::stoll(f[7]) > std::stoll(f[8]);
        const encoded_file& query_strand = minus ? *q_minus : q;
        auto [it, fresh] = optimal[minus].try_emplace({qi, si}, 0);
        if (fresh) it->second = sw_score(query_strand.set[qi], d.set[si], sc).score;
        if (score != it->second) continue;
        ++r.compared;
        const double e = ec.evalue(score, qlen, slen), bits = ec.bit_score(score);
        const double de = evalue_deviation(e, f[2]), db = bit_score_deviation(bits, f[3]);
        r.max_evalue_deviation = std::max(r.max_evalue_deviation, de);
        r.max_bit_deviation = std::max(r.max_bit_deviation, db);
        r.exact_text += format_evalue(e) == f[2] && format_bit_score(bits) == f[3];
        if ((de > 0.5 + 1e-6 || db > 0.5 + 1e-6) && r.problems.size() < 10)
            r.problems.push_back(line + "  | swgpu: " + format_evalue(e) + " " + format_bit_score(bits));
    }
    return r;
}

std::string summary(const blast_comparison& r) {
    std::ostringstream s;
    s << r.lines << " BLAST lines, " << r.compared << " with the optimal score compared, " << r.exact_text
      << " printed identically; largest deviation " << r.max_evalue_deviation << " (E-value) and "
      << r.max_bit_deviation << " (bit score) units of BLAST's last printed digit";
    for (const auto& p : r.problems) s << "\n  " << p;
    return s.str();
}

}  // namespace

TEST_CASE("bit scores and E-values equal blastp's on the bundled data", "[crosscheck]") {
    if (!tools_present({"blastp", "makeblastdb"}, "ncbi-blast+", "cross-check of statistics against blastp")) return;
    temp_dir tmp;
    const fs::path db = source_dir / "data/demo_db.fa";
    const fs::path blast_db = tmp.path() / "demo", table = tmp.path() / "blastp.tsv";
    // The demo queries have only weak hits in the demo database (best E-value 0.002): four database records join them
    // as queries, so that self hits and homologs cover strong E-values (down to "0.0"), where Spouge's correction is
    // large.
    const fs::path queries = tmp.path() / "queries.fa";
    {
        std::ofstream f(queries);
        f << file_text(source_dir / "data/demo_queries.fa");
        const sequence_set records = io::read_all(db.string());
        for (const std::size_t k : {1, 355, 500, 757})  // 381, 188, 249, 245 residues
            f << ">" << records.names[k] << "\n"
              << std::string(reinterpret_cast<const char*>(records[k].data()), records.length(k)) << "\n";
    }
    REQUIRE(run("makeblastdb -in " + quoted(db) + " -dbtype prot -out " + quoted(blast_db), tmp.path() / "mk.log") ==
            0);
    // -max_hsps 1: the best alignment of each pair; -evalue 1000: weak hits too, to cover every format range.
    const int status = run("blastp -comp_based_stats 0 -seg no -query " + quoted(queries) + " -db " +
                               quoted(blast_db) + " -evalue 1000 -max_target_seqs 1000 -max_hsps 1 -outfmt " +
                               "'6 qseqid sseqid evalue bitscore score qlen slen sstart send' -out " + quoted(table),
                           tmp.path() / "blastp.log");
    INFO(file_text(tmp.path() / "blastp.log"));
    REQUIRE(status == 0);

    const scoring sc{substitution_matrix::builtin("BLOSUM62"), {11, 1}, seq_type::protein};
    const encoded_file q = load(queries, sc.matrix), d = load(db, sc.matrix);
    const evalue_calculator ec(sc, d.set.total_residues(), d.set.size());
    const auto r = compare_with_blast(table, q, d, nullptr, sc, ec);
    INFO(summary(r));
    CHECK(r.length_mismatches == 0);
    CHECK(r.compared >= 1000);  // about half of blastp's alignments are optimal
    CHECK(r.max_evalue_deviation <= 0.5 + 1e-6);
    CHECK(r.max_bit_deviation <= 0.5 + 1e-6);
    CHECK(r.exact_text == r.compared);
}

TEST_CASE("DNA: bit scores and E-values equal blastn's, scores equal ssearch36's", "[crosscheck]") {
    const fs::path db = source_dir / "tests/data/crosscheck/lambda_pieces.fa";
    const scoring sc{substitution_matrix::match_mismatch(2, -3), {5, 2}, seq_type::dna};
    temp_dir tmp;
    const fs::path queries = tmp.path() / "dna_queries.fa";
    encoded_file d;
    d.set = io::read_all(db.string());
    write_dna_queries(d.set, queries);
    encode(d.set, sc.matrix);
    for (std::size_t k = 0; k < d.set.size(); ++k) d.index[d.set.names[k]] = k;
    const encoded_file q = load(queries, sc.matrix);
    encoded_file q_minus;  // reverse complements, same names
    {
        const sequence_set letters = io::read_all(queries.string());
        for (std::size_t k = 0; k < letters.size(); ++k) {
            const std::string s(reinterpret_cast<const char*>(letters[k].data()), letters.length(k));
            q_minus.set.add(letters.names[k], revcomp(s));
        }
        encode(q_minus.set, sc.matrix);
        q_minus.index = q.index;
    }

    if (tools_present({"blastn", "makeblastdb"}, "ncbi-blast+", "cross-check of DNA statistics against blastn")) {
        const fs::path blast_db = tmp.path() / "phage", table = tmp.path() / "blastn.tsv";
        REQUIRE(run("makeblastdb -in " + quoted(db) + " -dbtype nucl -out " + quoted(blast_db),
                    tmp.path() / "mk.log") == 0);
        const int status = run("blastn -task blastn -dust no -reward 2 -penalty -3 -gapopen 5 -gapextend 2 -query " +
                                   quoted(queries) + " -db " + quoted(blast_db) +
                                   " -evalue 1e4 -max_target_seqs 1000 -outfmt " +
                                   "'6 qseqid sseqid evalue bitscore score qlen slen sstart send' -out " +
                                   quoted(table),
                               tmp.path() / "blastn.log");
        INFO(file_text(tmp.path() / "blastn.log"));
        REQUIRE(status == 0);
        const evalue_calculator ec(sc, d.set.total_residues(), d.set.size());
        const auto r = compare_with_blast(table, q, d, &q_minus, sc, ec);
        INFO(summary(r));
        CHECK(r.length_mismatches == 0);
        CHECK(r.compared >= 20);
        CHECK(r.max_evalue_deviation <= 0.5 + 1e-6);
        CHECK(r.max_bit_deviation <= 0.5 + 1e-6);
        CHECK(r.exact_text == r.compared);
    }

    if (tools_present({"ssearch36"}, "fasta3", "cross-check of DNA scores against ssearch36")) {
        // -n: DNA; -r +2/-3: match/mismatch; -f -5 -g -2: BLAST's 5/2; -3: the forward strand only.
        const fs::path out = tmp.path() / "ssearch_dna.txt";
        REQUIRE(run("ssearch36 -q -n -3 -r +2/-3 -f -5 -g -2 -m 9 -b 1000 -d 0 -E 1e6 -T 2 " + quoted(queries) + " " +
                        quoted(db),
                    out) == 0);
        std::optional<std::size_t> query;
        std::size_t compared = 0, mismatches = 0;
        std::vector<std::string> problems;
        for (const auto& line : lines_of(out)) {
            if (const auto at = line.find(">>>"); at != std::string::npos && line.find(">>><<<") == std::string::npos &&
                                                  line.find(">>>///") == std::string::npos) {
                query = q.index.at(words(line.substr(at + 3)).at(0));
                continue;
            }
            const auto tab = line.find('\t');
            if (!query || tab == std::string::npos || line.rfind("+-", 0) == 0 || line.rfind("The best", 0) == 0)
                continue;
            const auto name = words(line.substr(0, tab)).at(0);
            const auto f = words(line.substr(tab + 1));
            if (!d.index.count(name) || f.size() < 3) {
                ++mismatches;
                continue;
            }
            ++compared;
            const int ours = sw_score(q.set[*query], d.set[d.index.at(name)], sc).score;
            if (ours != std::stoi(f[2])) {
                ++mismatches;
                if (problems.size() < 10) problems.push_back(line + "  | swgpu " + std::to_string(ours));
            }
        }
        INFO(compared << " DNA pairs compared with ssearch36" << [&] {
            std::string s;
            for (const auto& p : problems) s += "\n  " + p;
            return s;
        }());
        CHECK(compared == q.set.size() * d.set.size());
        CHECK(mismatches == 0);
    }
}

namespace {

std::string reverse_complement_of(const std::string& s) {
    std::string out(s.rbegin(), s.rend());
    for (char& c : out) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
    return out;
}

// A simulated run of reads against a genome: where each read came from, and its FASTQ text.
struct simulated_read {
    std::string name, seq, qual;
    std::string contig;  // empty: random, from nowhere
    std::size_t pos = 0;  // 0-based start on the contig's forward strand
    bool minus = false;
};

// The SAM records of a file by read name, in file order.
std::map<std::string, std::vector<std::vector<std::string>>> sam_by_read(const fs::path& file) {
    std::map<std::string, std::vector<std::vector<std::string>>> out;
    for (const auto& line : lines_of(file))
        if (!line.empty() && line[0] != '@') {
            auto f = fields(line, '\t');
            out[f.at(0)].push_back(std::move(f));
        }
    return out;
}

}  // namespace

TEST_CASE("SAM of reads against a genome: samtools view, sort, index, stats, flagstat and calmd accept it",
          "[crosscheck]") {
    if (!tools_present({"samtools"}, "samtools", "checks of SAM output with samtools")) return;
    temp_dir tmp;
    std::mt19937 rng(11);
    const auto random_dna = [&](std::size_t n) {
        std::string s(n, 'A');
        for (char& c : s) c = "ACGT"[rng() % 4];
        return s;
    };
    // Two contigs; a 100-nt repeat at chr1:1001 and chr2:2001 (so a read from it has MAPQ 0).
    const std::string repeat = random_dna(100);
    std::string chr1 = random_dna(6000), chr2 = random_dna(4000);
    chr1.replace(1000, 100, repeat);
    chr2.replace(2000, 100, repeat);
    const fs::path genome = tmp.path() / "genome.fa", fastq = tmp.path() / "reads.fq", fasta = tmp.path() / "reads.fa";
    std::ofstream(genome) << ">chr1\n" << chr1 << "\n>chr2\n" << chr2 << "\n";

    // 30 reads of 100 nt from outside the repeat, every other one from the minus strand, each with substitutions at
    // 30 and 70 (so 100M, no clips); the repeat's read; 3 random reads, which no hit of E <= 1e-3 places.
    std::vector<simulated_read> reads;
    for (int k = 0; k < 30; ++k) {
        simulated_read r;
        r.contig = k % 3 == 0 ? "chr2" : "chr1";
        const std::string& c = r.contig == "chr1" ? chr1 : chr2;
        do r.pos = rng() % (c.size() - 100);
        while (r.pos + 100 > 900 && r.pos < 2200);  // clear of both copies of the repeat
        r.seq = c.substr(r.pos, 100);
        for (const std::size_t at : {30, 70}) r.seq[at] = r.seq[at] == 'A' ? 'G' : 'A';
        r.minus = k % 2 == 1;
        if (r.minus) r.seq = reverse_complement_of(r.seq);
        reads.push_back(r);
    }
    reads.push_back({"", repeat, "", "repeat", 0, false});
    for (int k = 0; k < 3; ++k) reads.push_back({"", random_dna(100), "", "", 0, false});
    std::ofstream fq(fastq), fa(fasta);
    for (std::size_t k = 0; k < reads.size(); ++k) {
        auto& r = reads[k];
        r.name = "read" + std::to_string(k);
        for (std::size_t i = 0; i < r.seq.size(); ++i) r.qual += static_cast<char>('#' + rng() % 40);
        fq << "@" << r.name << "\n" << r.seq << "\n+\n" << r.qual << "\n";
        fa << ">" << r.name << "\n" << r.seq << "\n";
    }
    fq.close();
    fa.close();

    const fs::path sam = tmp.path() / "out.sam", log = tmp.path() / "log";
    const std::string swgpu = quoted(SWGPU_BINARY) + " align -q -t 2 ";
    REQUIRE(run(swgpu + quoted(fastq) + " " + quoted(genome) + " --outfmt sam --read-group 'ID:grp1\\tSM:s1' -o " +
                    quoted(sam),
                log) == 0);
    const std::string header = file_text(sam);
    CHECK(header.rfind("@HD\tVN:1.6\tSO:unsorted", 0) == 0);
    CHECK(header.find("\n@RG\tID:grp1\tSM:s1\n") != std::string::npos);
    CHECK(header.find("\n@PG\tID:swgpu\tPN:swgpu\tVN:") != std::string::npos);

    // One record per read: the origin, flag 16 and reversed QUAL on the minus strand, MAPQ 60 (0 for the repeat);
    // random reads unmapped with SEQ and QUAL as read.
    const auto records = sam_by_read(sam);
    REQUIRE(records.size() == reads.size());
    for (const auto& r : reads) {
        INFO(r.name);
        REQUIRE(records.at(r.name).size() == 1);
        const auto& f = records.at(r.name)[0];
        CHECK(f.back() == "RG:Z:grp1");
        if (r.contig.empty()) {
            CHECK(std::vector<std::string>(f.begin() + 1, f.begin() + 11) ==
                  std::vector<std::string>{"4", "*", "0", "0", "*", "*", "0", "0", r.seq, r.qual});
            continue;
        }
        if (r.contig == "repeat") {
            CHECK(f[1] == "0");
            CHECK(f[4] == "0");
            continue;
        }
        CHECK(f[1] == (r.minus ? "16" : "0"));
        CHECK(f[2] == r.contig);
        CHECK(f[3] == std::to_string(r.pos + 1));
        CHECK(f[4] == "60");
        CHECK(f[5] == "100M");
        CHECK(f[9] == (r.minus ? reverse_complement_of(r.seq) : r.seq));
        CHECK(f[10] == (r.minus ? std::string(r.qual.rbegin(), r.qual.rend()) : r.qual));
    }

    // samtools: each step exits 0 and reports no error.
    const fs::path bam = tmp.path() / "out.bam", sorted = tmp.path() / "sorted.bam";
    const auto samtools = [&](const std::string& args, const std::string& what) {
        const fs::path out = tmp.path() / (what + ".txt");
        const int status = run("samtools " + args, out);
        const std::string text = file_text(out);
        INFO("samtools " << args << "\n" << text);
        CHECK(status == 0);
        CHECK(text.find("[E::") == std::string::npos);
        CHECK(text.find("[W::") == std::string::npos);
        return text;
    };
    samtools("view -b -o " + quoted(bam) + " " + quoted(sam), "view");
    samtools("sort -o " + quoted(sorted) + " " + quoted(bam), "sort");
    samtools("index " + quoted(sorted), "index");
    std::map<std::string, std::string> summary;  // samtools stats' SN lines: name -> value
    for (const auto& line : fields(samtools("stats " + quoted(sorted), "stats"), '\n'))
        if (const auto f = fields(line, '\t'); f.size() >= 3 && f[0] == "SN") summary[f[1]] = f[2];
    CHECK(summary["raw total sequences:"] == "34");
    CHECK(summary["reads mapped:"] == "31");
    CHECK(summary["reads unmapped:"] == "3");
    CHECK(summary["reads MQ0:"] == "1");
    const std::string flagstat = samtools("flagstat " + quoted(sorted), "flagstat");
    CHECK(flagstat.find("34 + 0 in total") != std::string::npos);
    CHECK(flagstat.find("0 + 0 secondary") != std::string::npos);
    CHECK(flagstat.find("31 + 0 mapped") != std::string::npos);
    const std::string calmd = samtools("calmd -e " + quoted(sorted) + " " + quoted(genome), "calmd");
    CHECK(calmd.find("\tMD:Z:") != std::string::npos);
    CHECK(samtools("view -c -F 4 " + quoted(sorted) + " chr1", "region") != "0\n");

    // -k 3: up to 2 secondary records per read, flag 256, SEQ and QUAL "*"; samtools takes those too.
    const fs::path more = tmp.path() / "k3.sam";
    REQUIRE(run(swgpu + quoted(fastq) + " " + quoted(genome) + " --outfmt sam -k 3 -o " + quoted(more), log) == 0);
    std::size_t secondary = 0;
    for (const auto& [name, recs] : sam_by_read(more)) {
        INFO(name);
        CHECK(recs.size() <= 3);
        CHECK((std::stoi(recs[0][1]) & 256) == 0);
        for (std::size_t k = 1; k < recs.size(); ++k) {
            ++secondary;
            CHECK((std::stoi(recs[k][1]) & 256) != 0);
            CHECK(recs[k][9] == "*");
            CHECK(recs[k][10] == "*");
        }
    }
    CHECK(secondary >= 1);  // the repeat's second copy at least
    const std::string more_stats = samtools("flagstat " + quoted(more), "flagstat3");
    CHECK(more_stats.find(std::to_string(secondary) + " + 0 secondary") != std::string::npos);
    samtools("calmd -e " + quoted(more) + " " + quoted(genome), "calmd3");

    // FASTA reads: QUAL "*".
    const fs::path from_fasta = tmp.path() / "fa.sam";
    REQUIRE(run(swgpu + quoted(fasta) + " " + quoted(genome) + " --outfmt sam -o " + quoted(from_fasta), log) == 0);
    for (const auto& [name, recs] : sam_by_read(from_fasta)) CHECK(recs[0][10] == "*");
    samtools("view -b -o " + quoted(tmp.path() / "fa.bam") + " " + quoted(from_fasta), "view_fa");
}
