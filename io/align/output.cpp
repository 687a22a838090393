#include "io/align/output.hpp"

#include <htslib/kstring.h>
#include <htslib/sam.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "core/error.hpp"
#include "core/align/statistics.hpp"
#include "core/align/strand.hpp"
#include "io/align/seq_id.hpp"

namespace swgpu::io {

namespace {

struct column_info {
    column id;
    const char* name;
    const char* description;  // BLAST's text in the "# Fields:" line of -outfmt 7
    bool numeric;             // a JSON number (else a JSON string)
};

constexpr column_info column_table[] = {
    {column::qseqid, "qseqid", "query id", false},
    {column::sseqid, "sseqid", "subject id", false},
    {column::pident, "pident", "% identity", true},
    {column::length, "length", "alignment length", true},
    {column::mismatch, "mismatch", "mismatches", true},
    {column::gapopen, "gapopen", "gap opens", true},
    {column::qstart, "qstart", "q. start", true},
    {column::qend, "qend", "q. end", true},
    {column::sstart, "sstart", "s. start", true},
    {column::send, "send", "s. end", true},
    {column::evalue, "evalue", "evalue", true},
    {column::bitscore, "bitscore", "bit score", true},
    {column::score, "score", "score", true},
    {column::qlen, "qlen", "query length", true},
    {column::slen, "slen", "subject length", true},
    {column::nident, "nident", "identical", true},
    {column::positive, "positive", "positives", true},
    {column::gaps, "gaps", "gaps", true},
    {column::ppos, "ppos", "% positives", true},
    {column::qcovhsp, "qcovhsp", "% query coverage per hsp", true},
    {column::sstrand, "sstrand", "subject strand", false},
    {column::cigar, "cigar", "cigar", false},
    {column::qseq, "qseq", "query seq", false},
    {column::sseq, "sseq", "subject seq", false},
    {column::qaln, "qaln", "query aln", false},
    {column::saln, "saln", "subject aln", false},
    {column::qacc, "qacc", "query acc.", false},
    {column::qaccver, "qaccver", "query acc.ver", false},
    {column::qtitle, "qtitle", "query title", false},
    {column::sacc, "sacc", "subject acc.", false},
    {column::saccver, "saccver", "subject acc.ver", false},
    {column::stitle, "stitle", "subject title", false},
};

const column_info& info(column c) { return column_table[static_cast<std::size_t>(c)]; }

// Text printed for a value that is not computed (E-value and bit score under --no-evalue); R and pandas read it as
// a missing value.
constexpr std::string_view missing_value = "NA";

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string percent_of(std::int64_t part, std::int64_t whole) {  // BLAST's "(23%)"
    return std::to_string(blast_percent(part, whole));
}

// A record's whole header line (its id when no title was kept) and its whole sequence's length (a region's sequence).
const std::string& title_of(const std::string& name, const record_origin& o) {
    return o.title.empty() ? name : o.title;
}
std::uint64_t full_length(std::size_t length, const record_origin& o) { return o.full_length ? o.full_length : length; }

std::string trim(std::string s) {
    const auto b = s.find_first_not_of(' ');
    const auto e = s.find_last_not_of(' ');
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

void append_json_string(std::string& out, std::string_view s) {
    out += '"';
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20 || c == 0x7f) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += ch;
                }
        }
    }
    out += '"';
}

}  // namespace

blast_values blast_values_of(const results_view& r, std::size_t query, const printed_hit& h) {
    const subject_record& subject = r.scan.subjects.at(h.subject);
    const blast_coordinates c = whole_sequence_view(h, r.queries, query, subject);
    const auto& st = h.stats;
    blast_values v;
    v.qseqid = r.queries.plus.names[query];
    v.sseqid = subject.name;
    v.sstrand = r.sc.type == seq_type::protein ? "N/A" : h.str == strand::plus ? "plus" : "minus";
    v.length = st.columns;
    v.mismatch = st.mismatches;
    v.gapopen = st.gap_opens;
    v.nident = st.identities;
    v.positive = st.positives;
    v.gaps = st.gaps;
    v.qstart = c.qstart;
    v.qend = c.qend;
    v.sstart = c.sstart;
    v.send = c.send;
    v.qlen = static_cast<std::int64_t>(r.queries.plus.length(query));
    v.slen = static_cast<std::int64_t>(full_length(subject.residues.size(), subject.origin));
    v.score = h.score;
    v.pident = st.columns ? 100.0 * double(st.identities) / double(st.columns) : 0.0;
    v.ppos = st.columns ? 100.0 * double(st.positives) / double(st.columns) : 0.0;
    v.has_statistics = h.has_statistics;
    v.evalue = h.evalue;
    v.bitscore = h.bit_score;
    return v;
}

std::pair<std::string, std::string> blast_rows(const results_view& r, std::size_t query, const printed_hit& h) {
    const subject_record& subject = r.scan.subjects.at(h.subject);
    auto rows = printed_rows(h, r.queries, query, subject, r.sc.matrix);
    if (r.query_letters) {  // the query's letters as read, in the row's (plus-strand) order
        const auto letters = (*r.query_letters)[query];
        const auto& a = h.aln;
        std::size_t at = h.str == strand::plus ? static_cast<std::size_t>(a.query_begin)
                                                : letters.size() - 1 - static_cast<std::size_t>(a.query_end);
        for (char& ch : rows.first)
            if (ch != '-') ch = static_cast<char>(letters[at++]);
    }
    return rows;
}

namespace {

// The printable values of one hit. Rows (qseq, sseq) and =/X operations are computed on first use.
class hit_fields {
public:
    hit_fields(const results_view& r, std::size_t query, const printed_hit& h, bool eqx = false)
        : r_(r), query_(query), h_(h), subject_(r.scan.subjects.at(h.subject)),
          coords_(whole_sequence_view(h, r.queries, query, subject_)), v_(blast_values_of(r, query, h)), eqx_(eqx) {}

    bool available(column c) const {
        return h_.has_statistics || (c != column::evalue && c != column::bitscore);
    }

    std::string text(column c) {
        const auto& v = v_;
        switch (c) {
            case column::qseqid: return v.qseqid;
            case column::sseqid: return v.sseqid;
            case column::pident: return fixed(v.pident, 3);
            case column::length: return std::to_string(v.length);
            case column::mismatch: return std::to_string(v.mismatch);
            case column::gapopen: return std::to_string(v.gapopen);
            case column::qstart: return std::to_string(v.qstart);
            case column::qend: return std::to_string(v.qend);
            case column::sstart: return std::to_string(v.sstart);
            case column::send: return std::to_string(v.send);
            case column::evalue: return v.has_statistics ? format_evalue(v.evalue) : std::string(missing_value);
            case column::bitscore: return v.has_statistics ? format_bit_score(v.bitscore) : std::string(missing_value);
            case column::score: return std::to_string(v.score);
            case column::qlen: return std::to_string(v.qlen);
            case column::slen: return std::to_string(v.slen);
            case column::nident: return std::to_string(v.nident);
            case column::positive: return std::to_string(v.positive);
            case column::gaps: return std::to_string(v.gaps);
            case column::ppos: return fixed(v.ppos, 2);
            case column::qcovhsp: return std::to_string(blast_percent(v.qend - v.qstart + 1, v.qlen));
            case column::sstrand: return v.sstrand;
            case column::cigar: return cigar_string(operations());
            case column::qseq:
            case column::qaln: return rows().first;
            case column::sseq:
            case column::saln: return rows().second;
            case column::qacc: return accession_of(r_.queries.plus.names[query_]).acc;
            case column::qaccver: return accession_of(r_.queries.plus.names[query_]).accver;
            case column::qtitle: return title_of(r_.queries.plus.names[query_], r_.queries.plus.origin(query_));
            case column::sacc: return accession_of(subject_.name).acc;
            case column::saccver: return accession_of(subject_.name).accver;
            case column::stitle: return title_of(subject_.name, subject_.origin);
        }
        return {};
    }

    const std::pair<std::string, std::string>& rows() {
        if (!have_rows_) {
            rows_ = blast_rows(r_, query_, h_);
            have_rows_ = true;
        }
        return rows_;
    }
    // The CIGAR operations as printed: M/I/D, or =/X/I/D with --eqx.
    std::span<const cigar_op> operations() {
        if (!eqx_) return h_.aln.ops;
        if (!have_eqx_) {
            eqx_ops_ = eqx_operations(r_, query_, h_);
            have_eqx_ = true;
        }
        return eqx_ops_;
    }
    const blast_coordinates& coords() const { return coords_; }
    const subject_record& subject() const { return subject_; }

private:
    const results_view& r_;
    std::size_t query_;
    const printed_hit& h_;
    const subject_record& subject_;
    blast_coordinates coords_;
    blast_values v_;
    bool eqx_;
    std::pair<std::string, std::string> rows_;
    bool have_rows_ = false;
    std::vector<cigar_op> eqx_ops_;
    bool have_eqx_ = false;
};

void write_tabular(const output_format& fmt, const run_header& header, const results_view& r, text_sink& out) {
    const bool comments = fmt.kind == format_kind::tabular_commented;
    std::string fields;
    for (const auto c : fmt.columns) fields += (fields.empty() ? "" : ", ") + std::string(info(c).description);
    std::string line;
    for (std::size_t q = 0; q < r.queries.size(); ++q) {
        const auto& hits = r.hits[q];
        if (comments) {
            line = "# swgpu " + header.version + " align\n# Query: " +
                   title_of(r.queries.plus.names[q], r.queries.plus.origin(q)) + "\n# Database: " +
                   header.db_source + "\n# Scoring: " + describe_scoring(r.sc) + "\n";
            if (!hits.empty()) line += "# Fields: " + fields + "\n";
            line += "# " + std::to_string(hits.size()) + " hits found\n";
            out.write(line);
        }
        for (const auto& h : hits) {
            hit_fields f(r, q, h, fmt.eqx);
            line.clear();
            for (std::size_t k = 0; k < fmt.columns.size(); ++k) {
                if (k) line += '\t';
                line += f.text(fmt.columns[k]);
            }
            line += '\n';
            out.write(line);
        }
    }
    if (comments) out.write("# swgpu processed " + std::to_string(r.queries.size()) + " queries\n");
}

void write_json(const output_format& fmt, const results_view& r, text_sink& out) {
    std::string line;
    for (std::size_t q = 0; q < r.queries.size(); ++q) {
        for (const auto& h : r.hits[q]) {
            hit_fields f(r, q, h, fmt.eqx);
            line.clear();
            line += '{';
            for (std::size_t k = 0; k < fmt.columns.size(); ++k) {
                const auto c = fmt.columns[k];
                if (k) line += ',';
                append_json_string(line, info(c).name);
                line += ':';
                if (!f.available(c)) line += "null";
                else if (info(c).numeric) line += trim(f.text(c));
                else append_json_string(line, f.text(c));
            }
            line += "}\n";
            out.write(line);
        }
    }
}

// BLAST's pairwise blocks: 60 columns per line, coordinates padded to the widest of the alignment.
void write_pair(const run_header& header, const results_view& r, text_sink& out) {
    const bool dna = r.sc.type == seq_type::dna;
    constexpr std::size_t width = 60;
    std::string text = "swgpu " + header.version + " align: Smith-Waterman-Gotoh local alignment\n\nScoring: " +
                       describe_scoring(r.sc) + "\nDatabase: " + header.db_source + "\n           " +
                       thousands(r.scan.sequences) + " sequences; " + thousands(r.scan.residues) +
                       " total letters\n\n";
    out.write(text);
    for (std::size_t q = 0; q < r.queries.size(); ++q) {
        const record_origin& qo = r.queries.plus.origin(q);
        const std::uint64_t qlen = full_length(r.queries.plus.length(q), qo);
        text = "\nQuery= " + title_of(r.queries.plus.names[q], qo) + "\n\nLength=" + std::to_string(qlen) + "\n\n";
        if (r.hits[q].empty()) text += "\n***** No hits found *****\n\n";
        out.write(text);
        for (const auto& h : r.hits[q]) {
            hit_fields f(r, q, h);
            const auto& st = h.stats;
            const auto& co = f.coords();
            const subject_record& s = f.subject();
            text = "\n> " + title_of(s.name, s.origin) + "\nLength=" +
                   std::to_string(full_length(s.residues.size(), s.origin)) + "\n\n";
            if (h.has_statistics)
                text += " Score = " + trim(format_bit_score(h.bit_score)) + " bits (" + std::to_string(h.score) +
                        "),  Expect = " + format_evalue(h.evalue) + "\n";
            else
                text += " Score = " + std::to_string(h.score) + "\n";
            const std::string n = std::to_string(st.columns);
            text += " Identities = " + std::to_string(st.identities) + "/" + n + " (" +
                    percent_of(st.identities, st.columns) + "%), ";
            if (!dna)
                text += "Positives = " + std::to_string(st.positives) + "/" + n + " (" +
                        percent_of(st.positives, st.columns) + "%), ";
            text += "Gaps = " + std::to_string(st.gaps) + "/" + n + " (" + percent_of(st.gaps, st.columns) + "%)\n";
            if (dna) text += std::string(" Strand=Plus/") + (h.str == strand::plus ? "Plus" : "Minus") + "\n";
            text += "\n";

            const auto& [qrow, srow] = f.rows();
            const std::size_t digits =
                std::max({std::to_string(co.qstart).size(), std::to_string(co.qend).size(),
                          std::to_string(co.sstart).size(), std::to_string(co.send).size()});
            auto pad = [&](std::int64_t v) {
                std::string s = std::to_string(v);
                return s + std::string(digits - s.size() + 2, ' ');
            };
            std::int64_t qpos = co.qstart, spos = co.sstart;
            const std::int64_t sstep = co.sstart <= co.send ? 1 : -1;
            for (std::size_t at = 0; at < qrow.size(); at += width) {
                const std::size_t len = std::min(width, qrow.size() - at);
                const std::string qs = qrow.substr(at, len), ss = srow.substr(at, len);
                std::string mid(len, ' ');
                std::int64_t qn = 0, sn = 0;
                for (std::size_t k = 0; k < len; ++k) {
                    qn += qs[k] != '-';
                    sn += ss[k] != '-';
                    if (qs[k] == '-' || ss[k] == '-') continue;
                    if (qs[k] == ss[k]) mid[k] = dna ? '|' : qs[k];
                    else if (!dna && r.sc.matrix.score(r.sc.matrix.code(qs[k]), r.sc.matrix.code(ss[k])) > 0)
                        mid[k] = '+';
                }
                // A line without residues of a sequence shows the last residue before it, as BLAST does.
                const std::int64_t qb = qn ? qpos : qpos - 1, qe = qn ? qpos + qn - 1 : qpos - 1;
                const std::int64_t sb = sn ? spos : spos - sstep, se = sn ? spos + sstep * (sn - 1) : spos - sstep;
                text += "Query  " + pad(qb) + qs + "  " + std::to_string(qe) + "\n";
                text += std::string(7 + digits + 2, ' ') + mid + "\n";
                text += "Sbjct  " + pad(sb) + ss + "  " + std::to_string(se) + "\n\n";
                qpos += qn;
                spos += sstep * sn;
            }
            out.write(text);
        }
    }
}

// A record's MAPQ: the primary's (mapping_quality) against the best other placement of the read, on another subject
// or strand (the hits the search kept) or on its own subject and strand apart from it (printed_hit::apart); secondary
// records 0; 255 without statistics.
int record_mapq(const results_view& r, std::size_t q, const printed_hit& h, bool secondary) {
    if (!r.statistics || !h.has_statistics) return 255;
    if (secondary) return 0;
    int other = std::max(0, h.apart);
    const auto consider = [&](std::uint32_t subject, strand str, int score) {
        if (subject != h.subject || str != h.str) other = std::max(other, score);
    };
    if (q >= r.searched.size())
        for (const auto& o : r.hits[q]) consider(o.subject, o.str, o.score);
    else
        for (const auto& o : r.searched[q]) consider(o.subject, o.str, o.score);
    return mapping_quality(r.statistics->bit_score(h.score), r.statistics->bit_score(other));
}

// PAF as minimap2 writes it: 12 fixed columns, then NM:i (mismatches + gap columns, as SAM's), AS:i (raw score),
// ZE:Z (the E-value as the tabular format prints it; absent without statistics) and cg:Z (the CIGAR). Coordinates are
// 0-based half-open on the forward strands: the query's interval is BLAST's qstart..qend (its plus strand), the
// subject's the lower to the higher of sstart..send, and the CIGAR is SAM's (on the minus strand the
// reverse-complemented query against the subject's forward strand), which is how minimap2 prints a '-' hit. Column 10
// counts identities and column 11 alignment columns, gaps included (minimap2's "residue matches" and "block length");
// MAPQ as SAM's (record_mapq: the first line of a query as its primary, the others 0; 255 without statistics). A query
// without hits prints nothing.
void write_paf(const output_format& fmt, const results_view& r, text_sink& out) {
    const bool dna = r.sc.type == seq_type::dna;
    std::string line;
    for (std::size_t q = 0; q < r.queries.size(); ++q) {
        const std::string qlen = std::to_string(full_length(r.queries.plus.length(q), r.queries.plus.origin(q)));
        for (std::size_t k = 0; k < r.hits[q].size(); ++k) {
            const printed_hit& h = r.hits[q][k];
            hit_fields f(r, q, h, fmt.eqx);
            const auto& co = f.coords();
            const auto& st = h.stats;
            const char str = dna && h.str == strand::minus ? '-' : '+';
            const std::int64_t tstart = std::min(co.sstart, co.send) - 1, tend = std::max(co.sstart, co.send);
            line = r.queries.plus.names[q] + '\t' + qlen + '\t' + std::to_string(co.qstart - 1) + '\t' +
                   std::to_string(co.qend) + '\t' + str + '\t' + f.subject().name + '\t' +
                   std::to_string(full_length(f.subject().residues.size(), f.subject().origin)) + '\t' +
                   std::to_string(tstart) + '\t' + std::to_string(tend) + '\t' + std::to_string(st.identities) +
                   '\t' + std::to_string(st.columns) +
                   '\t' + std::to_string(record_mapq(r, q, h, k > 0)) + "\tNM:i:" + std::to_string(st.mismatches + st.gaps) + "\tAS:i:" + std::to_string(h.score);
            if (h.has_statistics) line += "\tZE:Z:" + format_evalue(h.evalue);
            line += "\tcg:Z:" + cigar_string(f.operations()) + '\n';
            out.write(line);
        }
    }
}

struct sam_header_deleter {
    void operator()(sam_hdr_t* h) const { sam_hdr_destroy(h); }
};
struct bam_deleter {
    void operator()(bam1_t* b) const { bam_destroy1(b); }
};

// SAM's header: @HD, one @SQ per subject with a printed hit (in database order; `tid` receives its reference id, its
// position), @RG when given, @PG with the command line, @CO with the scoring and the database's size.
std::unique_ptr<sam_hdr_t, sam_header_deleter> sam_header(const run_header& header, const results_view& r,
                                                          std::map<std::uint32_t, int>& tid,
                                                          const std::function<void(int, const std::string&)>& check) {
    std::unique_ptr<sam_hdr_t, sam_header_deleter> hdr(sam_hdr_init());
    if (!hdr) throw out_of_memory("cannot allocate the SAM header");
    check(sam_hdr_add_line(hdr.get(), "HD", "VN", "1.6", "SO", "unsorted", "GO", "query", nullptr), "@HD line");
    std::set<std::string> names;
    const auto add_sq = [&](std::uint32_t id, const std::string& name, std::uint64_t length) {
        if (!names.insert(name).second)
            throw input_error(header.db_source + ":" + name,
                              "subject name appears more than once in the database; SAM needs unique reference names");
        const std::string len = std::to_string(length);
        check(sam_hdr_add_line(hdr.get(), "SQ", "SN", name.c_str(), "LN", len.c_str(), nullptr), "@SQ line");
        const int next = static_cast<int>(tid.size());
        tid[id] = next;
    };
    if (header.references) {  // every database sequence, in database order (a subject's index is its position)
        for (std::size_t k = 0; k < header.references->size(); ++k)
            add_sq(static_cast<std::uint32_t>(k), (*header.references)[k].first, (*header.references)[k].second);
    } else {
        std::set<std::uint32_t> used;
        for (const auto& hits : r.hits)
            for (const auto& h : hits) used.insert(h.subject);
        for (auto id : used) {
            const auto& s = r.scan.subjects.at(id);
            add_sq(id, s.name, full_length(s.residues.size(), s.origin));
        }
    }
    if (!header.read_group.empty())
        check(sam_hdr_add_lines(hdr.get(), ("@RG\t" + header.read_group + "\n").c_str(), 0), "@RG line");
    std::string cl = header.command_line;
    std::replace_if(cl.begin(), cl.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
    check(sam_hdr_add_line(hdr.get(), "PG", "ID", "swgpu", "PN", "swgpu", "VN", header.version.c_str(), "CL",
                           cl.c_str(), nullptr),
          "@PG line");
    const std::string comment = "@CO\tscoring: " + describe_scoring(r.sc) + "; AS:i raw score, NM:i edit distance, " +
                                "ZE:f E-value for a database of " + std::to_string(r.scan.residues) + " residues in " +
                                std::to_string(r.scan.sequences) + " sequences\n";
    check(sam_hdr_add_lines(hdr.get(), comment.c_str(), 0), "@CO line");
    if (header.references_capped)
        check(sam_hdr_add_lines(hdr.get(),
                                ("@CO\t@SQ lines for the subjects with hits only: the database has more than " +
                                 std::to_string(max_listed_references) + " sequences\n").c_str(), 0),
              "@CO line");
    return hdr;
}

enum class sam_role { primary, secondary, supplementary };

// The value of RG:Z: on every record: the ID of the @RG line.
std::string read_group_id(const std::string& read_group) {
    for (std::size_t at = 0; at < read_group.size();) {
        const auto end = std::min(read_group.find('\t', at), read_group.size());
        if (read_group.compare(at, 3, "ID:") == 0) return read_group.substr(at + 3, end - at - 3);
        at = end + 1;
    }
    return {};
}

// SAM's records, one per printed hit (the first primary, the others secondary, with SEQ and QUAL "*" as minimap2
// writes them) or an unmapped one for a query without hits, each built as a bam1_t and formatted by sam_format1.
class sam_records {
public:
    sam_records(const output_format& fmt, const run_header& header, const results_view& r, const sam_hdr_t* hdr,
                const std::map<std::uint32_t, int>& tid, std::function<void(int, const std::string&)> check)
        : fmt_(fmt), header_(header), r_(r), hdr_(hdr), tid_(tid), check_(std::move(check)), rec_(bam_init1()),
          read_group_(read_group_id(header.read_group)) {
        if (!rec_) throw out_of_memory("cannot allocate a SAM record");
    }
    ~sam_records() { ks_free(&line_); }
    sam_records(const sam_records&) = delete;
    sam_records& operator=(const sam_records&) = delete;

    // The line of query q's hit h (null: unmapped): primary, secondary (flag 256) or supplementary (flag 2048), with
    // `sa` as SA:Z when not empty.
    std::string line(std::size_t q, const printed_hit* h, sam_role role, const std::string& sa = {}) {
        const bool secondary = role == sam_role::secondary, supplementary = role == sam_role::supplementary;
        const std::string& qname = r_.queries.plus.names[q];
        if (qname.size() > 254)
            throw input_error(header_.query_source + ":" + qname.substr(0, 40) + "...",
                              "query name longer than 254 characters cannot be written as SAM");
        const bool dna = r_.sc.type == seq_type::dna;
        const strand str = h ? h->str : strand::plus;
        const auto seq_codes = r_.queries.residues(q, str);
        // Secondary records leave SEQ and QUAL out ("*"): the primary record has them.
        std::string seq;
        if (!secondary && r_.query_letters) {  // as read (IUPAC codes kept), reverse-complemented for the minus strand
            const auto l = (*r_.query_letters)[q];
            seq.assign(l.begin(), l.end());
            if (str == strand::minus) seq = reverse_complement(seq);
        } else if (!secondary) {
            seq = decode(seq_codes, r_.sc.matrix);
        }
        const std::string qual = secondary ? std::string() : phred(q, str);
        std::uint16_t flag = BAM_FUNMAP;
        int ref = -1;
        hts_pos_t pos = -1;
        cigar_of(q, h, static_cast<std::int64_t>(seq_codes.size()));
        if (h) {
            flag = static_cast<std::uint16_t>((str == strand::minus ? BAM_FREVERSE : 0) | (secondary ? BAM_FSECONDARY : 0) |
                                              (supplementary ? BAM_FSUPPLEMENTARY : 0));
            ref = tid_.at(h->subject);
            pos = h->aln.subject_begin + static_cast<hts_pos_t>(r_.scan.subjects.at(h->subject).origin.offset);
        }
        const bool binary_seq = dna && !seq.empty();
        check_(bam_set1(rec_.get(), qname.size(), qname.c_str(), flag, ref, pos, h ? mapq(q, *h, secondary) : 0,
                        cigar_.size(), cigar_.empty() ? nullptr : cigar_.data(), -1, -1, 0,
                        binary_seq ? seq.size() : 0, binary_seq ? seq.c_str() : nullptr,
                        binary_seq && !qual.empty() ? qual.c_str() : nullptr, 0),
               "record of query " + qname);
        if (h) {
            check_(bam_aux_update_int(rec_.get(), "AS", h->score), "AS tag");
            check_(bam_aux_update_int(rec_.get(), "NM", h->stats.mismatches + h->stats.gaps), "NM tag");
            if (h->has_statistics)
                check_(bam_aux_update_float(rec_.get(), "ZE", static_cast<float>(h->evalue)), "ZE tag");
            if (!sa.empty()) check_(bam_aux_update_str(rec_.get(), "SA", -1, sa.c_str()), "SA tag");
        }
        if (!read_group_.empty()) check_(bam_aux_update_str(rec_.get(), "RG", -1, read_group_.c_str()), "RG tag");
        line_.l = 0;
        check_(sam_format1(hdr_, rec_.get(), &line_), "record of query " + qname);
        std::string text(line_.s, line_.l);
        if (!dna && !seq.empty()) {  // SEQ and QUAL are the 10th and 11th fields; sam_format1 wrote "*" "*" there
            std::size_t at = 0;
            for (int field = 0; field < 9; ++field) at = text.find('\t', at) + 1;
            std::string printed_qual = qual;
            for (char& c : printed_qual) c = static_cast<char>(c + 33);
            text.replace(at, 3, seq + '\t' + (qual.empty() ? "*" : printed_qual));
        }
        return text + '\n';
    }

private:
    // Query q's base qualities as BAM holds them (Phred values, not +33), reversed for the minus strand (SEQ is then
    // the reverse complement); empty without qualities (FASTA).
    std::string phred(std::size_t q, strand str) const {
        std::string out(r_.queries.plus.quality(q));
        for (char& c : out) c = static_cast<char>(c - 33);
        if (str == strand::minus) std::reverse(out.begin(), out.end());
        return out;
    }

public:
    int mapq(std::size_t q, const printed_hit& h, bool secondary) const { return record_mapq(r_, q, h, secondary); }

    // One part of SA:Z: "rname,pos,strand,CIGAR,mapQ,NM;" (the CIGAR with its soft clips).
    std::string sa_part(std::size_t q, const printed_hit& h) {
        cigar_of(q, &h, static_cast<std::int64_t>(r_.queries.residues(q, h.str).size()));
        std::string cigar;
        for (const auto c : cigar_) cigar += std::to_string(bam_cigar_oplen(c)) + bam_cigar_opchr(c);
        const auto& s = r_.scan.subjects.at(h.subject);
        return s.name + ',' + std::to_string(h.aln.subject_begin + 1 + static_cast<std::int64_t>(s.origin.offset)) + ',' +
               (h.str == strand::minus ? '-' : '+') + ',' + cigar + ',' + std::to_string(mapq(q, h, false)) + ',' +
               std::to_string(h.stats.mismatches + h.stats.gaps) + ';';
    }

private:

    // The CIGAR of a hit: soft clips around the aligned part of the query (as searched), M or =/X, I, D.
    void cigar_of(std::size_t q, const printed_hit* h, std::int64_t qlen) {
        cigar_.clear();
        if (!h) return;
        const auto& a = h->aln;
        if (a.query_begin > 0) cigar_.push_back(bam_cigar_gen(a.query_begin, BAM_CSOFT_CLIP));
        if (fmt_.eqx) eqx_ops_ = eqx_operations(r_, q, *h);
        for (const auto& o : fmt_.eqx ? eqx_ops_ : a.ops) {
            const int op = o.op == 'M' ? BAM_CMATCH : o.op == '=' ? BAM_CEQUAL : o.op == 'X' ? BAM_CDIFF
                         : o.op == 'I' ? BAM_CINS : BAM_CDEL;
            cigar_.push_back(bam_cigar_gen(o.len, op));
        }
        if (a.query_end + 1 < qlen) cigar_.push_back(bam_cigar_gen(qlen - a.query_end - 1, BAM_CSOFT_CLIP));
    }

    const output_format& fmt_;
    const run_header& header_;
    const results_view& r_;
    const sam_hdr_t* hdr_;
    const std::map<std::uint32_t, int>& tid_;
    std::function<void(int, const std::string&)> check_;
    std::unique_ptr<bam1_t, bam_deleter> rec_;
    kstring_t line_ = KS_INITIALIZE;
    std::vector<std::uint32_t> cigar_;
    std::vector<cigar_op> eqx_ops_;
    std::string read_group_;  // RG:Z: on every record; empty: none
};

// The role of each of query q's records: the first is the primary; with split_reads, a later one whose interval on the
// read overlaps the primary's and every earlier supplementary one's by less than half of the shorter of the two
// (minimap2's mask level, -M 0.5: local alignments of the two parts of a chimeric read may run a few bases past the
// junction) is supplementary; the others are secondary.
std::vector<sam_role> sam_roles(const results_view& r, std::size_t q) {
    const auto& hits = r.hits[q];
    std::vector<sam_role> roles(hits.size(), sam_role::secondary);
    if (hits.empty()) return roles;
    roles[0] = sam_role::primary;
    if (!r.split_reads) return roles;
    const auto length = static_cast<std::int64_t>(r.queries.plus.length(q));
    const auto on_read = [&](const printed_hit& h) {  // the interval on the read as read (plus strand)
        const auto& a = h.aln;
        return h.str == strand::plus ? std::pair(a.query_begin, a.query_end)
                                     : std::pair(length - 1 - a.query_end, length - 1 - a.query_begin);
    };
    std::vector<std::pair<std::int64_t, std::int64_t>> taken{on_read(hits[0])};
    for (std::size_t k = 1; k < hits.size(); ++k) {
        const auto iv = on_read(hits[k]);
        const bool overlaps = std::any_of(taken.begin(), taken.end(), [&](const auto& t) {
            const std::int64_t shared = std::min(iv.second, t.second) - std::max(iv.first, t.first) + 1;
            const std::int64_t shorter = std::min(iv.second - iv.first, t.second - t.first) + 1;
            return 2 * shared >= shorter;
        });
        if (overlaps) continue;
        roles[k] = sam_role::supplementary;
        taken.push_back(iv);
    }
    return roles;
}

// SAM through HTSlib. BAM's 4-bit sequence code cannot hold amino acids, so protein records are formatted with SEQ "*"
// and the query's letters are put into the SEQ field of the text line (text SAM only, as docs/conventions.md says).
void write_sam(const output_format& fmt, const run_header& header, const results_view& r, text_sink& out) {
    const auto check = [&out](int rc, const std::string& what) {
        if (rc < 0) throw output_error(out.name(), "HTSlib could not build the SAM " + what);
    };
    std::map<std::uint32_t, int> tid;
    const auto hdr = sam_header(header, r, tid, check);
    const char* htext = sam_hdr_str(hdr.get());
    if (!htext) throw output_error(out.name(), "HTSlib could not format the SAM header");
    out.write(htext);
    sam_records records(fmt, header, r, hdr.get(), tid, check);
    for (std::size_t q = 0; q < r.queries.size(); ++q) {
        const auto& hits = r.hits[q];
        if (hits.empty()) out.write(records.line(q, nullptr, sam_role::primary));
        const auto roles = sam_roles(r, q);
        std::vector<std::string> parts(hits.size());  // SA:Z's part of each primary or supplementary record
        for (std::size_t k = 0; k < hits.size(); ++k)
            if (roles[k] != sam_role::secondary && r.split_reads) parts[k] = records.sa_part(q, hits[k]);
        for (std::size_t k = 0; k < hits.size(); ++k) {
            std::string sa;
            if (roles[k] != sam_role::secondary)
                for (std::size_t j = 0; j < hits.size(); ++j)
                    if (j != k) sa += parts[j];
            out.write(records.line(q, &hits[k], roles[k], sa));
        }
    }
}

}  // namespace

int blast_percent(std::int64_t part, std::int64_t whole) {
    if (whole <= 0) return 0;
    if (part == whole) return 100;
    // floor(100·part/whole + 1/2) in integers: BLAST's (int)(0.5 + 100.0·part/whole) for every length a sequence can
    // have (a true quotient is never within a double's rounding of a half unless it is one).
    return int(std::min<std::int64_t>(99, (200 * part + whole) / (2 * whole)));
}

std::string thousands(std::uint64_t v) {
    std::string digits = std::to_string(v), out;
    for (std::size_t k = 0; k < digits.size(); ++k) {
        if (k > 0 && (digits.size() - k) % 3 == 0) out += ',';
        out += digits[k];
    }
    return out;
}

const std::vector<column>& standard_columns() {
    static const std::vector<column> cols = {column::qseqid, column::sseqid, column::pident, column::length,
                                             column::mismatch, column::gapopen, column::qstart, column::qend,
                                             column::sstart, column::send, column::evalue, column::bitscore};
    return cols;
}

std::string_view column_name(column c) { return info(c).name; }

bool needs_alignments(const output_format& fmt) {
    if (fmt.kind == format_kind::sam || fmt.kind == format_kind::pair || fmt.kind == format_kind::paf) return true;
    return std::any_of(fmt.columns.begin(), fmt.columns.end(), [](column c) {
        switch (c) {
            case column::qseqid:
            case column::sseqid:
            case column::evalue:
            case column::bitscore:
            case column::score:
            case column::qlen:
            case column::slen:
            case column::sstrand:
            case column::qacc:
            case column::qaccver:
            case column::qtitle:
            case column::sacc:
            case column::saccver:
            case column::stitle: return false;
            default: return true;
        }
    });
}

bool prints_subject_titles(const output_format& fmt) {
    return fmt.kind == format_kind::pair ||
           std::find(fmt.columns.begin(), fmt.columns.end(), column::stitle) != fmt.columns.end();
}

std::string column_names() {
    std::string s;
    for (const auto& i : column_table) {
        if (!s.empty()) s += ' ';
        s += i.name;
    }
    return s;
}

output_format parse_outfmt(std::string_view spec) {
    std::vector<std::string> words;
    std::string word;
    for (const char c : spec) {
        if (c == ' ' || c == '\t' || c == ',') {
            if (!word.empty()) words.push_back(std::move(word));
            word.clear();
        } else {
            word += c;
        }
    }
    if (!word.empty()) words.push_back(std::move(word));
    const std::string usage =
        "use 6, \"6 COLUMN ...\", 7, \"7 COLUMN ...\", sam, pair, paf, json or \"json COLUMN ...\"";
    if (words.empty()) throw usage_error("--outfmt is empty; " + usage);

    output_format fmt;
    std::string kind = words[0];  // names in any case: SAM, PAF, JSON
    for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (kind == "6") fmt.kind = format_kind::tabular;
    else if (kind == "7") fmt.kind = format_kind::tabular_commented;
    else if (kind == "json") fmt.kind = format_kind::json;
    else if (kind == "sam") fmt.kind = format_kind::sam;
    else if (kind == "pair") fmt.kind = format_kind::pair;
    else if (kind == "paf") fmt.kind = format_kind::paf;
    else throw usage_error("unknown --outfmt '" + std::string(spec) + "'; " + usage);

    if (fmt.kind == format_kind::sam || fmt.kind == format_kind::pair || fmt.kind == format_kind::paf) {
        if (words.size() > 1) throw usage_error("--outfmt " + kind + " takes no column list");
        return fmt;
    }
    if (words.size() == 1) {
        fmt.columns = standard_columns();
        if (fmt.kind == format_kind::json) fmt.columns.push_back(column::score);
        return fmt;
    }
    for (std::size_t k = 1; k < words.size(); ++k) {
        if (words[k] == "std") {
            fmt.columns.insert(fmt.columns.end(), standard_columns().begin(), standard_columns().end());
            continue;
        }
        const auto* hit = std::find_if(std::begin(column_table), std::end(column_table),
                                       [&](const column_info& i) { return words[k] == i.name; });
        if (hit == std::end(column_table))
            throw usage_error("unknown --outfmt column '" + words[k] + "'; known columns: std " + column_names());
        fmt.columns.push_back(hit->id);
    }
    return fmt;
}

std::string parse_read_group(std::string_view text) {
    std::string line;
    for (std::size_t k = 0; k < text.size(); ++k) {  // "\t" as two characters is a tab, as bwa mem -R reads it
        if (text[k] == '\\' && k + 1 < text.size() && text[k + 1] == 't') {
            line += '\t';
            ++k;
        } else {
            line += text[k];
        }
    }
    if (line.rfind("@RG", 0) == 0) line.erase(0, line.size() > 3 && line[3] == '\t' ? 4 : 3);
    const std::string usage = "; give the @RG line's fields as bwa mem -R takes them, e.g. 'ID:run1\\tSM:sample1'";
    if (line.find_first_of("\n\r") != std::string::npos)
        throw usage_error("--read-group holds a line break" + usage);
    bool id = false;
    for (std::size_t at = 0; at <= line.size();) {
        const auto end = std::min(line.find('\t', at), line.size());
        const std::string_view field = std::string_view(line).substr(at, end - at);
        const bool tag = field.size() >= 3 && std::isalpha(static_cast<unsigned char>(field[0])) &&
                         std::isalnum(static_cast<unsigned char>(field[1])) && field[2] == ':';
        if (!tag) throw usage_error("--read-group field '" + std::string(field) + "' is not TAG:VALUE" + usage);
        id = id || (field.substr(0, 3) == "ID:" && field.size() > 3);
        at = end + 1;
    }
    if (!id) throw usage_error("--read-group has no ID:VALUE field" + usage);
    return line;
}

int mapping_quality(double best_bits, double other_bits) {
    const double delta = best_bits - other_bits;
    if (!(delta > 0)) return 0;
    return static_cast<int>(std::min<long>(60, std::lround(10.0 * std::log10(2.0) * delta)));
}

std::string describe_scoring(const scoring& sc) {
    return sc.matrix.name() + ", gap open " + std::to_string(sc.gaps.open) + ", gap extend " +
           std::to_string(sc.gaps.extend) + " (a gap of length k costs open + k*extend)";
}

void write_results(const output_format& fmt, const run_header& header, const results_view& results, text_sink& out) {
    switch (fmt.kind) {
        case format_kind::tabular:
        case format_kind::tabular_commented: write_tabular(fmt, header, results, out); break;
        case format_kind::json: write_json(fmt, results, out); break;
        case format_kind::pair: write_pair(header, results, out); break;
        case format_kind::sam: write_sam(fmt, header, results, out); break;
        case format_kind::paf: write_paf(fmt, results, out); break;
    }
}

std::vector<cigar_op> eqx_operations(const results_view& results, std::size_t query, const printed_hit& hit) {
    // The same test as stats_of's identities (equal matrix codes), so the = lengths add up to nident.
    const auto q = results.queries.residues(query, hit.str);
    const auto s = results.scan.subjects.at(hit.subject).span();
    std::vector<cigar_op> out;
    auto i = hit.aln.query_begin, j = hit.aln.subject_begin;
    for (const auto& o : hit.aln.ops) {
        if (o.op != 'M') {
            out.push_back(o);
            (o.op == 'I' ? i : j) += o.len;
            continue;
        }
        for (std::uint32_t k = 0; k < o.len; ++k, ++i, ++j) {
            const char op = q[i] == s[j] ? '=' : 'X';
            if (k > 0 && out.back().op == op) ++out.back().len;
            else out.push_back({op, 1});
        }
    }
    return out;
}

}  // namespace swgpu::io
