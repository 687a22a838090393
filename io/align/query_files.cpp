#include "io/align/query_files.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <utility>

#include "core/align/strand.hpp"
#include "io/align/database_file.hpp"
#include "io/align/database_stream.hpp"
#include "io/memory.hpp"
#include "io/output_file.hpp"

namespace swgpu::io {

namespace {

// DNA reads with IUPAC codes (R, Y, K, ...): the matrix scores them as N, the output prints them as read.
void keep_query_letters(query_files& q, seq_type type) {
    if (type != seq_type::dna) return;
    const auto& r = q.strands.plus.residues;
    const bool iupac = std::any_of(r.begin(), r.end(), [](std::uint8_t c) {
        c = static_cast<std::uint8_t>(std::toupper(c));
        return c != 'A' && c != 'C' && c != 'G' && c != 'T';
    });
    if (!iupac) return;
    q.letters = q.strands.plus;
    for (auto& c : q.letters->residues) c = static_cast<std::uint8_t>(std::toupper(c));
    q.letters->qualities.clear();
}

void take_out_empty(query_files& q, sequence_set& set, const std::string& path) {
    for (std::size_t k = 0; k < set.size(); ++k)
        if (set.length(k) == 0) q.empty_at.push_back(k);
    if (q.empty_at.empty()) return;
    if (q.empty_at.size() == set.size())
        throw input_error(path, "no record has residues (" + std::to_string(set.size()) + " empty records)");
    sequence_set kept;
    kept.source = set.source;
    for (std::size_t k = 0, e = 0; k < set.size(); ++k) {
        if (e < q.empty_at.size() && q.empty_at[e] == k) {
            q.empty_reads.add_record(set, k);
            ++e;
        } else {
            kept.add_record(set, k);
        }
    }
    set = std::move(kept);
}

}  // namespace

seq_type type_of_queries(const sequence_set& set, const query_reading& how) {
    if (how.type) return *how.type;
    const seq_type t = classify(set);
    if (t == seq_type::protein) {  // records that look like DNA are protein in a protein file: said once
        nucleotide_like odd;
        odd.add(set);
        if (odd.count) how.warning(odd.warning(set.source));
    }
    return t;
}

seq_type read_query_file(query_files& q, const std::string& path, query_reading how) {
    how.read.allow_empty = true;  // zero-length reads: printed without hits (SAM: unmapped), not refused
    sequence_set set = read_all(path, how.read);
    if (set.empty()) throw input_error(path, "no sequences found");
    take_out_empty(q, set, path);
    const seq_type type = type_of_queries(set, how);
    q.files.push_back(std::move(set));
    q.entries.push_back(0);
    return type;
}

std::vector<seq_type> read_batch_files(query_files& q, std::span<const batch_entry> batch, query_reading how) {
    std::vector<seq_type> types;
    for (std::size_t k = 0; k < batch.size(); ++k) {
        try {
            sequence_set one = read_all(batch[k].query, how.read);
            if (one.empty()) throw input_error(batch[k].query, "no sequences found");
            types.push_back(type_of_queries(one, how));
            q.files.push_back(std::move(one));
            q.entries.push_back(k);
        } catch (const error& e) {
            how.refuse(k, e);
        }
    }
    return types;
}

void keep_database_type(query_files& q, std::span<const seq_type> types, seq_type database_type, const std::string& db,
                        std::span<const batch_entry> batch, const query_reading& how) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < q.files.size(); ++i) {
        if (types[i] != database_type) {
            how.refuse(q.entries[i], types_disagree(types[i], batch[q.entries[i]].query, database_type, db));
            continue;
        }
        if (kept != i) {  // (a self-move would empty the set)
            q.files[kept] = std::move(q.files[i]);
            q.entries[kept] = q.entries[i];
        }
        ++kept;
    }
    q.files.resize(kept);
    q.entries.resize(kept);
}

std::string unknown_letters_warning(const std::string& source, std::uint64_t unknown, const substitution_matrix& m,
                                    seq_type type) {
    if (!unknown) return {};
    const std::string fallback(1, m.letter(m.fallback_code()));
    // A matrix without its fallback letter scores them with its lowest score (core/align/scoring.hpp).
    return source + ": " + std::to_string(unknown) + " residues are not letters of " + m.name() +
           (type == seq_type::dna ? " (IUPAC ambiguity codes such as R, Y, K, or X)" : "") +
           (m.fallback_added()
                ? ", which has no " + fallback + " row; they score its lowest score (" + std::to_string(m.min_score()) +
                      ") against every letter"
                : " and were read as " + fallback);
}

void encode_query_file(query_files& q, const std::string& source, const query_encoding& how) {
    query_strands& s = q.strands;
    s.search_plus = how.plus;
    s.search_minus = how.minus;
    s.plus = std::move(q.files.front());
    keep_query_letters(q, how.type);
    if (s.search_minus) s.minus = reverse_complement(s.plus);
    how.unknown(source, encode(s.plus, how.matrix));
    if (s.search_minus) encode(s.minus, how.matrix);
}

bool encode_batch_files(query_files& q, const std::string& list, const query_encoding& how) {
    query_strands& s = q.strands;
    s.search_plus = how.plus;
    s.search_minus = how.minus;
    for (std::size_t i = 0; i < q.files.size(); ++i) {
        sequence_set& plus = q.files[i];
        sequence_set minus;
        try {
            if (s.search_minus) minus = reverse_complement(plus);
            how.unknown(plus.source, encode(plus, how.matrix));
            if (s.search_minus) encode(minus, how.matrix);
        } catch (const error& e) {
            how.refuse(q.entries[i], e);
            continue;
        }
        for (std::size_t k = 0; k < plus.size(); ++k) {
            s.plus.add_record(plus, k);
            if (s.search_minus) s.minus.add(std::move(minus.names[k]), minus[k]);
        }
        sequence_set{}.residues.swap(plus.residues);  // freed as it is copied
        std::string{}.swap(plus.qualities);
        q.batch_first.push_back(s.plus.size());
        q.batch_files.push_back(q.entries[i]);
    }
    if (q.batch_files.empty()) return false;
    s.plus.source = s.minus.source = list;
    s.plus.encoded = s.minus.encoded = true;
    return true;
}

void refuse_overwriting_inputs(const search_files& f) {
    std::vector<named_file> outputs, inputs;
    if (f.batch_entries.empty()) outputs.push_back({"-o", f.out});
    if (!f.dotplot.empty()) outputs.push_back({"--dotplot", f.dotplot});
    for (const auto& b : f.batch_entries) outputs.push_back({"the output of --batch entry " + b.query + ",", b.out});
    // A region (FILE:NAME:BEG-END) also reads FILE's faidx index, FILE.fai (and FILE.gzi for bgzip), built when
    // missing: an output must not be one of those either.
    const auto add_sequences = [&inputs](const std::string& role, const std::string& spec) {
        const sequence_source source = parse_source(spec);
        inputs.push_back({role, source.path});
        for (const auto& index : index_files(source))
            inputs.push_back({role + "'s index", index, true});
    };
    if (f.batch_entries.empty()) {
        add_sequences("the query file", f.query);
    } else {
        inputs.push_back({"the --batch list", f.batch});
        for (const auto& b : f.batch_entries) add_sequences("the query file", b.query);
    }
    if (f.db != "-" && is_database_file(f.db)) inputs.push_back({"the database", database_path(f.db)});
    else add_sequences("the database", f.db);
    if (!f.matrix.empty() && std::filesystem::exists(f.matrix)) inputs.push_back({"the --matrix file", f.matrix});
    refuse_overwriting(outputs, inputs);
}

std::uint64_t residue_bound(const std::string& spec, std::uint64_t otherwise) {
    if (spec == "-") return otherwise;
    return plain_file_size(parse_source(database_path(spec)).path).value_or(otherwise);
}

void check_search_memory(const std::string& db, std::uint64_t chunk, const std::string& query,
                         std::span<const batch_entry> batch) {
    std::vector<std::string> queries;
    if (batch.empty()) queries.push_back(query);
    for (const auto& b : batch) queries.push_back(b.query);
    check_search_memory(db, chunk, queries);
}

void check_search_memory(const std::string& db, std::uint64_t chunk, std::span<const std::string> queries) {
    const std::uint64_t residues = std::min(chunk, residue_bound(db, chunk));
    double letters = 0;
    for (const std::string& spec : queries) letters += 2.0 * double(residue_bound(spec, 0));
    check_memory(5.0 * double(residues) + letters,
                 "the search holds three chunks of the database (up to " + std::to_string(residues) +
                     " residues each, two with their packed copies) and the queries",
                 "use a smaller --db-chunk");
}

std::vector<batch_file> batch_files_of(const query_files& q, std::span<const batch_entry> batch) {
    std::vector<batch_file> files;
    for (std::size_t j = 0; j < q.batch_files.size(); ++j)
        files.push_back({batch[q.batch_files[j]].query, batch[q.batch_files[j]].out, q.batch_first[j], q.batch_first[j + 1]});
    return files;
}

}  // namespace swgpu::io
