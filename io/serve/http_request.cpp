#include "io/serve/http_request.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "core/error.hpp"
#include "io/align/output.hpp"
#include "io/align/sequence_reader.hpp"

namespace swgpu::io {

// A request's body read as a file is read (the same reader, rules and messages), from memory: an anonymous memory
// file, named `name` in messages.
sequence_set read_sequences_text(const std::string& text, const std::string& name) {
    const int fd = ::memfd_create("request", MFD_CLOEXEC);
    if (fd < 0) throw runtime_failure("cannot hold a request in memory (" + std::string(std::strerror(errno)) + ")");
    struct closer {
        int fd;
        ~closer() { ::close(fd); }
    } closing{fd};
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw runtime_failure("cannot hold a request in memory (" + std::string(std::strerror(errno)) + ")");
        done += static_cast<std::size_t>(n);
    }
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    read_options o;
    o.parallel = false;
    o.keep_titles = true;
    try {
        if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw input_error(name, "no sequences given");
        sequence_set set = read_all(path, o);
        set.source = name;
        return set;
    } catch (const error& e) {
        std::string what = e.what();
        for (std::size_t at = what.find(path); at != std::string::npos; at = what.find(path, at))
            what.replace(at, path.size(), name);
        throw error(e.code(), what);
    }
}

engine_plan plan_engine(const request_settings& r, seq_type t, bool alignments, bool placements) {
    const bool protein = t == seq_type::protein;
    if (protein && (r.match || r.mismatch)) throw usage_error("match/mismatch score DNA; the queries are protein");
    if (protein && r.dust) throw usage_error("dust masks DNA; the queries are protein");
    if (protein && r.zdrop) throw usage_error("zdrop cuts DNA alignments; the queries are protein");
    if (!protein && r.seg) throw usage_error("seg masks protein; the queries are DNA");
    if (!protein && r.comp_based_stats) throw usage_error("comp_based_stats 1 applies to protein; the queries are DNA");
    if (r.comp_based_stats && !r.evalues) throw usage_error("comp_based_stats 1 does not go with no_evalue");
    engine_plan p;
    p.scoring = scoring_request{t, r.matrix, r.gap_open, r.gap_extend, r.match.value_or(2), r.mismatch.value_or(-3),
                                r.evalues};
    p.search.type = t;
    p.search.search_plus = protein || r.strand != "minus";
    p.search.search_minus = !protein && r.strand != "plus";
    search_values v;  // the session's options as every face makes them
    v.max_target_seqs = r.max_target_seqs;
    v.evalue = r.evalue;
    v.evalues = r.evalues;
    v.comp_based_stats = r.comp_based_stats;
    v.max_hsps = r.max_hsps;
    v.zdrop = r.zdrop;
    v.seg = r.seg;
    v.dust = r.dust;
    p.search.session = search_session::options_of(v);
    p.search.session.alignments = alignments;
    p.search.session.placements = placements;
    return p;
}

namespace http_request {


// `s` as a JSON string literal, with its quotes; bytes that are not UTF-8 become U+FFFD.
std::string json_string(std::string_view s) {
    return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}
// A number as JSON writes it, in its shortest round-trip form; NaN and infinities as null.
std::string json_number(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}
// A request's JSON body: at most max_depth nested arrays and objects, no member named twice in one object.
json parse_body(const std::string& text, int max_depth) {
    std::vector<std::unordered_set<std::string>> keys;  // the member names of each open object
    const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
        if (depth > max_depth) throw std::runtime_error("nested deeper than " + std::to_string(max_depth) + " levels");
        if (event == json::parse_event_t::object_start) keys.emplace_back();
        else if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
        else if (event == json::parse_event_t::key && !keys.empty()) {
            const std::string& k = parsed.get_ref<const std::string&>();
            if (!keys.back().insert(k).second) throw std::runtime_error("the member \"" + k + "\" is given twice");
        }
        return true;
    };
    return json::parse(text, check);
}

// ---- settings ----

[[noreturn]] void refuse(int status, std::string kind, std::string message) {
    throw refusal{status, std::move(kind), std::move(message)};
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// A matrix in a request: a built-in name only (a name with no such matrix, or a path, would read a file).
std::string builtin_matrix(const std::string& name) {
    std::string known;
    for (const auto& n : substitution_matrix::builtin_names()) {
        if (lower(n) == lower(name)) return n;
        known += (known.empty() ? "" : ", ") + n;
    }
    if (lower(name) == "ednafull") return name;
    refuse(400, "bad_setting", "matrix: \"" + name + "\" is not a built-in matrix (" + known +
                                   "); a request cannot name a matrix file");
}

// One setting, from JSON (`v`) or from the query string (`text`).
void apply(request_settings& s, const std::string& key, const json* v, const std::string* text) {
    const auto bad = [&](const std::string& what) { refuse(400, "bad_setting", key + ": " + what); };
    const auto str = [&]() -> std::string {
        if (text) return *text;
        if (!v->is_string()) bad("a string expected, got " + std::string(v->type_name()));
        return v->get<std::string>();
    };
    const auto num = [&]() -> double {
        if (text) {
            char* end = nullptr;
            const double d = std::strtod(text->c_str(), &end);
            if (text->empty() || *end) bad("a number expected, got \"" + *text + "\"");
            return d;
        }
        if (!v->is_number()) bad("a number expected, got " + std::string(v->type_name()));
        return v->get<double>();
    };
    const auto integer = [&](double lo, double hi) -> std::int64_t {
        const double d = num();
        if (d != std::floor(d) || d < lo || d > hi)
            bad("an integer within " + json_number(lo) + ".." + json_number(hi) + " expected");
        return static_cast<std::int64_t>(d);
    };
    const auto boolean = [&]() -> bool {
        if (text) {
            if (*text == "true" || *text == "yes" || *text == "1") return true;
            if (*text == "false" || *text == "no" || *text == "0") return false;
            bad("true or false expected, got \"" + *text + "\"");
        }
        if (!v->is_boolean()) bad("true or false expected, got " + std::string(v->type_name()));
        return v->get<bool>();
    };
    const auto one_of = [&](std::initializer_list<const char*> allowed) {
        std::string x = str(), list;
        for (const char* a : allowed) {
            if (x == a) return x;
            list += (list.empty() ? "" : ", ") + std::string(a);
        }
        bad("one of " + list + " expected, got \"" + x + "\"");
        return x;  // (not reached)
    };
    const auto yes_no = [&] {
        if (text || v->is_string()) return one_of({"yes", "no"}) == "yes";
        return boolean();
    };
    if (key == "matrix") s.matrix = builtin_matrix(str());
    else if (key == "gap_open") s.gap_open = static_cast<int>(integer(0, 1000));
    else if (key == "gap_extend") s.gap_extend = static_cast<int>(integer(1, 1000));
    else if (key == "match") s.match = static_cast<int>(integer(-1000, 1000));
    else if (key == "mismatch") s.mismatch = static_cast<int>(integer(-1000, 1000));
    else if (key == "zdrop") s.zdrop = static_cast<int>(integer(0, 1e9));
    else if (key == "strand") s.strand = one_of({"both", "plus", "minus"});
    else if (key == "seqtype" || key == "type") s.seqtype = one_of({"auto", "protein", "dna"});
    else if (key == "max_target_seqs" || key == "k") s.max_target_seqs = integer(1, 1e9);
    else if (key == "evalue" || key == "e") {
        s.evalue = num();
        if (!(s.evalue > 0)) bad("must be positive");
    } else if (key == "no_evalue") s.evalues = !boolean();
    else if (key == "evalues") s.evalues = boolean();
    else if (key == "seg") s.seg = yes_no();
    else if (key == "dust") s.dust = yes_no();
    else if (key == "comp_based_stats") s.comp_based_stats = static_cast<int>(integer(0, 1));
    else if (key == "max_hsps") s.max_hsps = static_cast<int>(integer(1, 1e6));
    else if (key == "outfmt") {
        s.outfmt = str();
        const output_format f = parse_outfmt(s.outfmt);  // a usage error: 400
        if (f.kind == format_kind::sam) bad("sam is not served (its header lists the database); use 6, 7, paf, pair or json");
    } else if (key == "eqx") s.eqx = boolean();
    else if (key == "out" || key == "o" || key == "dotplot" || key == "batch" || key == "db" || key == "query" ||
             key == "db_chunk" || key == "threads" || key == "backend" || key == "gpus" || key == "gpu_mem" ||
             key == "read_group" || key == "skip_bad")
        refuse(400, "refused_setting", key + " is the server's to choose (a request cannot name files or resources)");
    else
        refuse(400, "unknown_setting", "unknown setting \"" + key + "\"");
}

// What the engine depends on: everything but the output's form (alignments and placements are asked for apart).
std::string engine_key(const request_settings& s, seq_type t, bool alignments, bool placements) {
    const auto opt = [](const std::optional<int>& v) { return v ? std::to_string(*v) : std::string("-"); };
    return s.matrix + "|" + opt(s.gap_open) + "|" + opt(s.gap_extend) + "|" + opt(s.match) + "|" + opt(s.mismatch) +
           "|" + opt(s.zdrop) + "|" + s.strand + "|" + type_name(t) + "|" + std::to_string(s.max_target_seqs) + "|" +
           json_number(s.evalue) + "|" + (s.evalues ? "E" : "-") + (s.seg ? "S" : "-") + (s.dust ? "D" : "-") +
           std::to_string(s.comp_based_stats) + "|" + std::to_string(s.max_hsps) + "|" + (alignments ? "A" : "-") +
           (placements ? "P" : "-");
}

// JSON's "sequences": [{"id": ..., "residues": ...}], by the library's rules (a name without blanks, letters and '*').
sequence_set json_sequences(const json& seqs) {
    if (!seqs.is_array()) refuse(400, "bad_json", "sequences: an array expected");
    sequence_set queries;
    queries.source = "request";
    for (std::size_t k = 0; k < seqs.size(); ++k) {
        const json& r = seqs[k];
        const std::string where = "sequences[" + std::to_string(k) + "]";
        if (!r.is_object() || r.size() != 2 || !r.contains("id") || !r.contains("residues") || !r["id"].is_string() ||
            !r["residues"].is_string())
            refuse(400, "bad_json", where + ": {\"id\": STRING, \"residues\": STRING} expected");
        const std::string& id_text = r["id"].get_ref<const std::string&>();
        const std::string& letters_text = r["residues"].get_ref<const std::string&>();
        if (id_text.empty()) refuse(400, "bad_input", where + ": the sequence has no name");
        for (const char c : id_text)
            if (static_cast<unsigned char>(c) <= ' ')
                refuse(400, "bad_input", where + ": an id holds no blanks or control characters");
        if (letters_text.empty()) refuse(400, "bad_input", where + " (" + id_text + "): the sequence has no residues");
        for (const char c : letters_text)
            if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '*'))
                refuse(400, "bad_input", where + " (" + id_text + "): '" + std::string(1, c) +
                                             "' is not a residue: letters and '*' only");
        queries.add(id_text, std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(letters_text.data()),
                                                            letters_text.size()));
    }
    if (queries.empty()) refuse(400, "bad_input", "no sequences given");
    return queries;
}

}  // namespace http_request

}  // namespace swgpu::io
