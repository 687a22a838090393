#include "io/align/database_stream.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <utility>

#include "core/error.hpp"
#include "io/align/database_file.hpp"

namespace swgpu::io {

error types_disagree(seq_type queries, const std::string& queries_name, seq_type database,
                     const std::string& database_name) {
    return usage_error(queries_name + ": the queries look like " + std::string(type_name(queries)) + " but the database " +
                       database_name + " looks like " + type_name(database) +
                       " (DNA: at least 90 % of the letters are ACGTUN); give --seqtype dna or --seqtype protein to "
                       "search both as that type");
}

namespace {

// The bytes of a regular file (0: stdin or not a regular file), and whether it is gzip.
std::uint64_t file_bytes(const std::string& spec, bool& gzip) {
    struct stat st{};
    gzip = false;
    if (spec == "-" || ::stat(spec.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    unsigned char magic[2] = {};
    std::ifstream in(spec, std::ios::binary);
    gzip = in.read(reinterpret_cast<char*>(magic), 2) && magic[0] == 0x1f && magic[1] == 0x8b;
    return static_cast<std::uint64_t>(st.st_size);
}

// A guess at a text database's residues for reserving storage (gzip: three times the file).
std::uint64_t text_size_bound(const std::string& spec) {
    bool gzip = false;
    return file_bytes(spec, gzip) * (gzip ? 3 : 1);
}

// The database's residues at most when known before reading (a .swdb's count, a plain file's bytes), else 0.
std::uint64_t residues_at_most(const std::string& spec, const std::optional<database_file>& file) {
    if (file) return file->total_residues();
    bool gzip = false;
    const std::uint64_t bytes = file_bytes(spec, gzip);
    return gzip ? 0 : bytes;
}

}  // namespace

struct database_stream::impl {
    std::string spec;
    options opt;
    std::optional<sequence_reader> text;
    std::optional<database_file> file;
    std::uint64_t limit = 0;  // the next chunk's residues
    bool first = true;        // no chunk read yet
    seq_type type = seq_type::protein;
    std::uint64_t records = 0;  // records read or skipped so far
    std::optional<sequence_set> ahead;  // the first chunk, read by type()
    std::optional<std::pair<seq_type, std::string>> expected;
    bool census = false;       // the records are typed here (auto_type, and not a .swdb that says its type)
    nucleotide_like odd;       // a protein database's records that look like DNA
    std::vector<std::pair<std::string, std::uint64_t>> list;  // options::list_records
    std::mutex spare_lock;
    // Searched chunks' storage (recycle), reused by the next reads: two, since a search holds three chunks (one
    // scored, one prepared, one read), so that no chunk after the first three takes (and zero-fills) new storage.
    static constexpr std::size_t max_spares = 2;
    std::vector<sequence_set> spares;

    // An empty set holding the largest spare's storage, when there is one. A .swdb overwrites the residues the spare
    // holds (database_file::read_chunk), so they are kept: clearing them would have its next read zero-fill them again.
    sequence_set fresh() {
        sequence_set s;
        {
            std::lock_guard<std::mutex> g(spare_lock);
            if (!spares.empty()) {
                const auto largest = std::max_element(spares.begin(), spares.end(), [](const auto& a, const auto& b) {
                    return a.residues.capacity() < b.residues.capacity();
                });
                std::swap(s, *largest);
                spares.erase(largest);
            }
        }
        if (!file) s.residues.clear();
        s.offsets.assign(1, 0);
        s.names.clear();
        s.origins.clear();
        s.qualities.clear();
        s.source.clear();
        s.encoded = false;
        return s;
    }
    bool listing = false;

    void list_add(std::string name, std::uint64_t length) {
        if (!listing) return;
        if (list.size() >= opt.list_records) {  // too many: none listed
            listing = false;
            list = {};
            return;
        }
        list.emplace_back(std::move(name), length);
    }

    std::uint64_t cut = 0;     // chunks read or skipped
    std::uint64_t storage = 0;  // a .swdb's largest chunk from the first read on (0: not known yet)
    // A FASTA file's residues at most: its size, three times that compressed (a guess: more only costs a doubling);
    // 0 for standard input.
    std::uint64_t text_bound = 0;

    // The limits of the chunks from the one take_limit() just gave (`now`) on, the last repeating.
    std::vector<std::uint64_t> limits_ahead(std::uint64_t now) const {
        std::vector<std::uint64_t> v{now};
        for (std::uint64_t n = limit;; n = std::min(opt.chunk_residues, n * 2)) {
            v.push_back(n);
            if (n >= opt.chunk_residues) return v;
        }
    }

    // The next chunk's residues. The first chunk holds the records that type a file (type_window), whatever the chunk
    // size; every process of an MPI run cuts the same chunks, whether it reads or skips them.
    std::uint64_t take_limit() {
        std::uint64_t n = limit;
        limit = std::min(opt.chunk_residues, limit * 2);
        if (cut++ == 0 && census) n = std::max(n, type_window);
        return n;
    }

    // Storage for the chunk about to be read into `chunk` (empty), where it has too little. A .swdb's chunk takes
    // storage for the largest chunk still to come, faulted in on the reader's threads: the first chunks of a
    // search take it (three are in memory at once), and the ramp's growing chunks no longer each take new, larger storage
    // and fault it in again. A FASTA chunk grows record by record: its storage taken first saves the copies and page
    // faults of its doublings (27 of them for 10^8 residues); bounded by the file's size, a sixteenth over the limit
    // `n` for the record that crosses it.
    void take_storage(sequence_set& chunk, std::uint64_t n) {
        if (file) {
            // Computed once: no chunk after the first read is larger.
            if (!storage) storage = std::max<std::uint64_t>(1, file->largest_chunk(limits_ahead(n)));
            reserve_residues(chunk, storage);
        } else if (n && text_bound) {
            reserve_residues(chunk, std::min(n + n / 16, text_bound));
        }
    }

    // The next chunk: letters, or codes of `m` when given (a .swdb of known type only: encoded as it is copied).
    bool read(sequence_set& chunk, const substitution_matrix* m = nullptr, std::uint64_t* unknown = nullptr) {
        if (chunk.empty() && chunk.residues.capacity() == 0) chunk = fresh();
        const std::uint64_t n = take_limit();
        if (chunk.empty() && !(file ? file->exhausted() : text->exhausted())) take_storage(chunk, n);
        if (!(file ? file->read_chunk(chunk, n, m, unknown) : text->read_chunk(chunk, n))) return false;
        if (census) {
            if (first) type = detect_type(chunk);
            if (const auto k = first_disagreeing(chunk, type); k < chunk.size())
                throw_mixed_types(chunk, k, type, records + 1);
            if (type == seq_type::protein) odd.add(chunk, records + 1);
        }
        for (std::size_t k = 0; k < chunk.size() && listing; ++k) {
            const auto& o = chunk.origin(k);
            list_add(chunk.names[k], o.full_length ? o.full_length : chunk.length(k));
        }
        records += chunk.size();
        first = false;
        return true;
    }
};

database_stream::database_stream(const std::string& spec, options opt) : p_(std::make_unique<impl>()) {
    p_->spec = spec;
    p_->opt = std::move(opt);
    p_->opt.chunk_residues = std::max<std::uint64_t>(1, p_->opt.chunk_residues);
    p_->limit = p_->opt.ramp ? std::max<std::uint64_t>(1, p_->opt.chunk_residues / 8) : p_->opt.chunk_residues;
    if (spec != "-" && is_database_file(spec)) p_->file.emplace(spec);
    else {
        p_->text.emplace(spec, p_->opt.read);
        p_->text_bound = text_size_bound(spec);
    }
    // A database known to fit in one chunk is read whole: ramping up would cut it into chunks that each pay a score
    // pass's set-up (H200, one query x db20k x10 .swdb: 0.405 s whole, 0.427 s in four chunks; classic20: 1.216
    // against 1.250 s). Every MPI rank sees the same file, so all still cut the chunks alike.
    if (p_->opt.ramp) {
        const std::uint64_t most = residues_at_most(spec, p_->file);
        if (most > 0 && most <= p_->opt.chunk_residues) p_->limit = p_->opt.chunk_residues;
    }
    // A .swdb says its type (makedb typed and checked every record): read from its header, not from its records. Its
    // type given by makedb's --seqtype stands for --seqtype auto here too.
    p_->census = p_->opt.auto_type && !(p_->file && p_->file->type());
    p_->listing = p_->opt.list_records > 0 && !(p_->file && p_->file->size() > p_->opt.list_records);
    if (p_->opt.auto_type && p_->file && p_->file->type()) p_->type = *p_->file->type();
}

database_stream::~database_stream() = default;

bool database_stream::next(sequence_set& chunk) {
    if (p_->ahead) {
        chunk = std::move(*p_->ahead);
        p_->ahead.reset();
        return true;
    }
    const bool was_first = p_->first;
    if (!p_->read(chunk)) return false;
    if (was_first && p_->opt.auto_type && p_->expected && p_->expected->first != p_->type)
        throw types_disagree(p_->expected->first, p_->expected->second, p_->type, p_->spec);
    return true;
}

bool database_stream::encodes_while_reading() const { return p_->file && !p_->census; }

bool database_stream::next_encoded(sequence_set& chunk, const substitution_matrix& m, std::uint64_t& unknown) {
    if (!encodes_while_reading()) return chunk_source::next_encoded(chunk, m, unknown);
    // No chunk is read ahead here: type() reads ahead only for the census, which a .swdb of known type does not take.
    const bool was_first = p_->first;
    if (!p_->read(chunk, &m, &unknown)) return false;
    if (was_first && p_->opt.auto_type && p_->expected && p_->expected->first != p_->type)
        throw types_disagree(p_->expected->first, p_->expected->second, p_->type, p_->spec);
    return true;
}

bool database_stream::skip(std::uint64_t& residues, std::uint64_t& sequences) {
    if (p_->ahead) {  // read ahead to type the database: passed as it is
        residues = p_->ahead->total_residues();
        sequences = p_->ahead->size();
        p_->ahead.reset();
        return true;
    }
    if (!p_->file) throw runtime_failure("database_stream::skip needs a .swdb database");
    const std::uint64_t n = p_->take_limit();
    const bool skipped = p_->file->skip_chunk(n, residues, sequences);
    for (std::uint64_t k = p_->records; skipped && k < p_->records + sequences && p_->listing; ++k)
        p_->list_add(std::string(p_->file->name(k)), p_->file->length(k));
    p_->records += sequences;  // records of later chunks keep their numbers in messages
    return skipped;
}

bool database_stream::can_skip() const { return p_->file.has_value(); }

void database_stream::recycle(sequence_set&& spent) {
    // The records' names (about 2 * 10^5 strings a chunk) are freed here, on the thread that hands the chunk back,
    // rather than by the reader when it takes the storage.
    spent.names.clear();
    spent.origins.clear();
    spent.qualities.clear();
    std::lock_guard<std::mutex> g(p_->spare_lock);
    auto& spares = p_->spares;
    if (spares.size() < impl::max_spares) {
        spares.push_back(std::move(spent));
        return;
    }
    const auto smallest = std::min_element(spares.begin(), spares.end(), [](const auto& a, const auto& b) {
        return a.residues.capacity() < b.residues.capacity();
    });
    if (spent.residues.capacity() > smallest->residues.capacity()) *smallest = std::move(spent);
}

bool database_stream::exhausted() const {
    if (p_->ahead) return false;
    return p_->file ? p_->file->exhausted() : p_->text->exhausted();
}

seq_type database_stream::type() {
    if (p_->first && p_->census) {
        sequence_set chunk;
        if (p_->read(chunk)) p_->ahead = std::move(chunk);
    }
    return p_->type;
}

void database_stream::expect(seq_type queries, std::string queries_name) {
    p_->expected.emplace(queries, std::move(queries_name));
}

const std::string& database_stream::spec() const { return p_->spec; }
std::uint64_t database_stream::chunk_residues() const { return p_->opt.chunk_residues; }
std::uint64_t database_stream::total_residues() const { return p_->file ? p_->file->total_residues() : 0; }
std::uint64_t database_stream::records_skipped() const { return p_->text ? p_->text->records_skipped() : 0; }
const std::vector<std::pair<std::string, std::uint64_t>>* database_stream::listed() const {
    return p_->listing ? &p_->list : nullptr;
}
std::string database_stream::nucleotide_like_warning() const { return p_->odd.warning(p_->spec); }

}  // namespace swgpu::io
