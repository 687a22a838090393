#include "io/align/database_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "io/output_file.hpp"

namespace swgpu::io {

namespace {

constexpr char magic[8] = {'S', 'W', 'G', 'P', 'U', 'D', 'B', '1'};
constexpr std::size_t header_bytes = 8 + 4 * 8;

std::uint64_t pad8(std::uint64_t n) { return (n + 7) & ~std::uint64_t(7); }

std::string resolve(const std::string& path) {
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return path;
    const std::string with = path + ".swdb";
    if (::stat(with.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return with;
    return path;
}

void write_pad(output_file& out, std::uint64_t n) {
    static const char zeros[8] = {};
    out.write(std::string_view(zeros, static_cast<std::size_t>(pad8(n) - n)));
}

template <typename T>
void write_array(output_file& out, const T* data, std::uint64_t count) {
    out.write(std::string_view(reinterpret_cast<const char*>(data), static_cast<std::size_t>(count * sizeof(T))));
}

}  // namespace

std::uint64_t write_database(const std::string& source, const std::string& prefix, const read_options& opt) {
    // Created first, so that an unwritable destination fails before the source is read; written to a temporary file
    // renamed when complete (io/output_file.hpp).
    output_file out(database_output(prefix));
    sequence_set all;
    {
        sequence_reader reader(source, opt);
        all.source = source;
        reader.read_chunk(all, 0);
    }
    const std::uint64_t n = all.size(), r = all.total_residues();
    if (n > 0xffffffffull) throw input_error(source, "more than 2^32 records; split the database");
    if (opt.on_warning) {  // ids name the subjects of hits, and SAM needs them unique: say so now, not at search time
        std::unordered_map<std::string_view, std::uint64_t> first;
        first.reserve(static_cast<std::size_t>(n));
        std::uint64_t duplicates = 0;
        std::string example;
        for (std::uint64_t k = 0; k < n; ++k) {
            const auto [it, fresh] = first.emplace(all.names[k], k);
            if (!fresh && ++duplicates == 1)
                example = source + ":" + all.names[k] + " (record " + std::to_string(k + 1) + ")" +
                          ": the id is also that of record " + std::to_string(it->second + 1);
        }
        if (duplicates)
            opt.on_warning(example + (duplicates > 1 ? "; " + std::to_string(duplicates) + " records in all repeat an "
                                                           "earlier id"
                                                     : std::string()) +
                           ": hits name subjects by id, so such hits cannot be told apart, and SAM output refuses "
                           "them; make the ids unique");
    }
    for (auto& c : all.residues) c = static_cast<std::uint8_t>(c >= 'a' && c <= 'z' ? c - 32 : c);
    std::vector<std::uint64_t> name_off(n + 1, 0);
    for (std::uint64_t k = 0; k < n; ++k) name_off[k + 1] = name_off[k] + all.names[k].size();
    std::vector<std::uint32_t> order(all.size());  // fewer than 2^32, checked above
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {  // longest first, ties by index
        return all.length(a) != all.length(b) ? all.length(a) > all.length(b) : a < b;
    });
    std::uint64_t longest = 0;
    for (std::uint64_t k = 0; k < n; ++k) longest = std::max<std::uint64_t>(longest, all.length(k));

    const std::uint64_t head[4] = {n, r, name_off[n], longest};
    out.write(std::string_view(magic, 8));
    write_array(out, head, 4);
    write_array(out, all.offsets.data(), n + 1);
    write_array(out, name_off.data(), n + 1);
    write_array(out, order.data(), n);
    write_pad(out, n * 4);
    write_array(out, all.residues.data(), r);
    write_pad(out, r);
    for (const auto& nm : all.names) out.write(nm);
    write_pad(out, name_off[n]);
    out.commit();
    return n;
}

std::string database_output(const std::string& prefix) {
    const std::string suffix = ".swdb";
    const bool has = prefix.size() > suffix.size() && prefix.compare(prefix.size() - suffix.size(), suffix.size(), suffix) == 0;
    return has ? prefix : prefix + suffix;
}

std::string database_path(const std::string& path) { return resolve(path); }

bool is_database_file(const std::string& path) {
    // The magic without its version byte: a database of another format version is still recognised as one, so that
    // opening it says which version it is rather than "binary data, not FASTA". Only a regular file can be one (it is
    // mapped): a pipe (a FIFO, <(...)) is not read here, where its first bytes would be taken from the FASTA reader.
    const std::string file = resolve(path);
    struct stat st{};
    if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    std::ifstream in(file, std::ios::binary);
    char head[8] = {};
    return in.read(head, 8) && std::memcmp(head, magic, 7) == 0;
}

struct database_file::impl {
    std::string path;
    const std::uint8_t* base = nullptr;
    std::size_t bytes = 0;
    std::uint64_t n = 0, r = 0, name_bytes = 0, longest = 0;
    const std::uint64_t* off = nullptr;
    const std::uint64_t* name_off = nullptr;
    const std::uint32_t* order = nullptr;
    const std::uint8_t* residues = nullptr;
    const char* names = nullptr;
    std::uint64_t next = 0;
    std::uint64_t chunk_end(std::uint64_t first, std::uint64_t max_residues) const;
};

database_file::database_file(const std::string& path) : p_(std::make_unique<impl>()) {
    auto& d = *p_;
    d.path = resolve(path);
    const int fd = ::open(d.path.c_str(), O_RDONLY);
    if (fd < 0) throw input_error(d.path, std::string("cannot open database: ") + std::strerror(errno));
    struct stat st{};
    if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(header_bytes)) {
        ::close(fd);
        throw input_error(d.path, "not a swgpu database (too short); rebuild it with swgpu makedb");
    }
    d.bytes = static_cast<std::size_t>(st.st_size);
    void* m = ::mmap(nullptr, d.bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) throw input_error(d.path, std::string("cannot map database: ") + std::strerror(errno));
    d.base = static_cast<const std::uint8_t*>(m);
    auto fail = [&](const std::string& what) {
        ::munmap(const_cast<std::uint8_t*>(d.base), d.bytes);
        d.base = nullptr;
        return input_error(d.path, what + "; rebuild it with swgpu makedb");
    };
    if (std::memcmp(d.base, magic, 7) == 0 && d.base[7] != static_cast<std::uint8_t>(magic[7])) {
        const auto v = d.base[7];
        const std::string version = v > ' ' && v < 0x7f ? std::string(1, static_cast<char>(v)) : "unknown";
        fail("");  // unmaps
        throw input_error(d.path, "a swgpu database of format version " + version + ", made by another version of "
                                  "swgpu; this one reads format version " + std::string(1, magic[7]) +
                                  ": rebuild it from its FASTA file with swgpu makedb");
    }
    if (std::memcmp(d.base, magic, 8) != 0) throw fail("not a swgpu database (bad magic)");
    std::uint64_t head[4];
    std::memcpy(head, d.base + 8, sizeof head);
    d.n = head[0];
    d.r = head[1];
    d.name_bytes = head[2];
    d.longest = head[3];
    if (d.n > 0xffffffffull || d.r > d.bytes || d.name_bytes > d.bytes) throw fail("corrupt database header");
    const std::uint64_t need = header_bytes + 2 * (d.n + 1) * 8 + pad8(d.n * 4) + pad8(d.r) + pad8(d.name_bytes);
    if (need != d.bytes) throw fail("database size does not match its header (truncated?)");
    std::uint64_t at = header_bytes;
    d.off = reinterpret_cast<const std::uint64_t*>(d.base + at);
    at += (d.n + 1) * 8;
    d.name_off = reinterpret_cast<const std::uint64_t*>(d.base + at);
    at += (d.n + 1) * 8;
    d.order = reinterpret_cast<const std::uint32_t*>(d.base + at);
    at += pad8(d.n * 4);
    d.residues = d.base + at;
    at += pad8(d.r);
    d.names = reinterpret_cast<const char*>(d.base + at);
    if (d.off[0] != 0 || d.off[d.n] != d.r || d.name_off[0] != 0 || d.name_off[d.n] != d.name_bytes)
        throw fail("corrupt database offsets");
    for (std::uint64_t k = 0; k < d.n; ++k) {
        if (d.off[k + 1] <= d.off[k] || d.name_off[k + 1] <= d.name_off[k]) throw fail("corrupt database offsets");
        if (d.order[k] >= d.n) throw fail("corrupt database length order");
    }
    // The length order is strictly by (length descending, index ascending), so a permutation; its first record is the
    // longest the header announces.
    const auto length = [&](std::uint64_t k) { return d.off[k + 1] - d.off[k]; };
    for (std::uint64_t k = 1; k < d.n; ++k) {
        const std::uint64_t a = d.order[k - 1], b = d.order[k];
        if (length(a) < length(b) || (length(a) == length(b) && a >= b)) throw fail("corrupt database length order");
    }
    if (d.longest != (d.n ? length(d.order[0]) : 0)) throw fail("corrupt database header (longest sequence)");
}

database_file::~database_file() {
    if (p_ && p_->base) ::munmap(const_cast<std::uint8_t*>(p_->base), p_->bytes);
}

const std::string& database_file::path() const { return p_->path; }
std::uint64_t database_file::size() const { return p_->n; }
std::uint64_t database_file::total_residues() const { return p_->r; }
std::uint64_t database_file::longest() const { return p_->longest; }
std::string_view database_file::name(std::uint64_t k) const {
    return {p_->names + p_->name_off[k], static_cast<std::size_t>(p_->name_off[k + 1] - p_->name_off[k])};
}
std::span<const std::uint8_t> database_file::residues(std::uint64_t k) const {
    return {p_->residues + p_->off[k], static_cast<std::size_t>(p_->off[k + 1] - p_->off[k])};
}
std::span<const std::uint32_t> database_file::length_order() const { return {p_->order, static_cast<std::size_t>(p_->n)}; }

bool database_file::exhausted() const { return p_->next >= p_->n; }

// The record after the chunk that starts at `first` and holds at least max_residues (0: all the rest).
std::uint64_t database_file::impl::chunk_end(std::uint64_t first, std::uint64_t max_residues) const {
    if (max_residues == 0) return n;
    std::uint64_t e = first;
    while (e < n && off[e] - off[first] < max_residues) ++e;
    return e;
}

bool database_file::read_chunk(sequence_set& out, std::uint64_t max_residues) {
    if (out.source.empty()) out.source = p_->path;
    const std::uint64_t first = p_->next, end = p_->chunk_end(first, max_residues);
    if (end == first) return false;
    // The records are consecutive in the file: their residues are one copy.
    const std::uint64_t base = out.residues.size();
    out.residues.insert(out.residues.end(), p_->residues + p_->off[first], p_->residues + p_->off[end]);
    out.offsets.reserve(out.offsets.size() + (end - first));
    out.names.reserve(out.names.size() + (end - first));
    for (std::uint64_t k = first; k < end; ++k) {
        out.offsets.push_back(base + p_->off[k + 1] - p_->off[first]);
        out.names.emplace_back(name(k));
    }
    p_->next = end;
    return true;
}

bool database_file::skip_chunk(std::uint64_t max_residues, std::uint64_t& residues, std::uint64_t& sequences) {
    const std::uint64_t first = p_->next, end = p_->chunk_end(first, max_residues);
    if (end == first) return false;
    residues = p_->off[end] - p_->off[first];
    sequences = end - first;
    p_->next = end;
    return true;
}

}  // namespace swgpu::io
