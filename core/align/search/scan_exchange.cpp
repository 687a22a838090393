// A scan between processes: packed as bytes and back (pack_scan, unpack_scan), and merged (merge_scan).
#include "core/align/search/pipeline.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace swgpu {

namespace {

// Plain little byte writer and reader for pack_scan.
struct byte_writer {
    std::string out;
    template <class T>
    void put(const T& v) {
        out.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    void put_bytes(const void* p, std::size_t n) {
        put<std::uint64_t>(n);
        out.append(static_cast<const char*>(p), n);
    }
};
struct byte_reader {
    std::string_view in;
    template <class T>
    T get() {
        if (in.size() < sizeof(T)) throw runtime_failure("internal error: a packed scan is truncated");
        T v;
        std::memcpy(&v, in.data(), sizeof v);
        in.remove_prefix(sizeof v);
        return v;
    }
    std::string_view get_bytes() {
        const auto n = get<std::uint64_t>();
        if (in.size() < n) throw runtime_failure("internal error: a packed scan is truncated");
        const auto v = in.substr(0, n);
        in.remove_prefix(n);
        return v;
    }
};

}  // namespace

std::string pack_scan(const database_scan& scan) {
    byte_writer w;
    w.put<std::uint64_t>(scan.residues);
    w.put<std::uint64_t>(scan.sequences);
    w.put<std::uint64_t>(scan.unknown_residues);
    w.put<std::uint64_t>(scan.chunks);
    w.put<double>(scan.reader_wait_s);
    w.put<double>(scan.backend_s);
    w.put<std::uint64_t>(scan.hits.size());
    for (const auto& list : scan.hits) {
        w.put<std::uint64_t>(list.size());
        for (const auto& h : list) {
            w.put<std::int32_t>(h.score);
            w.put<std::uint32_t>(h.subject);
            w.put<std::uint8_t>(h.str == strand::minus ? 1 : 0);
            w.put<double>(h.rank);
        }
    }
    w.put<std::uint64_t>(scan.subjects.size());
    for (const auto& [id, rec] : scan.subjects) {
        w.put<std::uint32_t>(id);
        w.put_bytes(rec.name.data(), rec.name.size());
        w.put_bytes(rec.residues.data(), rec.residues.size());
        w.put_bytes(rec.origin.title.data(), rec.origin.title.size());
        w.put<std::uint64_t>(rec.origin.offset);
        w.put<std::uint64_t>(rec.origin.full_length);
    }
    return std::move(w.out);
}

database_scan unpack_scan(std::string_view bytes) {
    byte_reader r{bytes};
    database_scan scan;
    scan.residues = r.get<std::uint64_t>();
    scan.sequences = r.get<std::uint64_t>();
    scan.unknown_residues = r.get<std::uint64_t>();
    scan.chunks = static_cast<std::size_t>(r.get<std::uint64_t>());
    scan.reader_wait_s = r.get<double>();
    scan.backend_s = r.get<double>();
    scan.hits.resize(static_cast<std::size_t>(r.get<std::uint64_t>()));
    for (auto& list : scan.hits) {
        list.resize(static_cast<std::size_t>(r.get<std::uint64_t>()));
        for (auto& h : list) {
            h.score = r.get<std::int32_t>();
            h.subject = r.get<std::uint32_t>();
            h.str = r.get<std::uint8_t>() ? strand::minus : strand::plus;
            h.rank = r.get<double>();
        }
    }
    const auto subjects = r.get<std::uint64_t>();
    for (std::uint64_t k = 0; k < subjects; ++k) {
        const auto id = r.get<std::uint32_t>();
        const auto name = r.get_bytes();
        const auto residues = r.get_bytes();
        record_origin origin{std::string(r.get_bytes()), 0, 0};
        origin.offset = r.get<std::uint64_t>();
        origin.full_length = r.get<std::uint64_t>();
        scan.subjects.emplace(id,
                              subject_record{std::string(name), {residues.begin(), residues.end()}, std::move(origin)});
    }
    if (!r.in.empty()) throw runtime_failure("internal error: a packed scan has trailing bytes");
    return scan;
}

void merge_scan(database_scan& into, database_scan&& other, std::size_t max_hits) {
    if (into.hits.size() < other.hits.size()) into.hits.resize(other.hits.size());
    for (std::size_t q = 0; q < other.hits.size(); ++q) {
        auto& list = into.hits[q];
        list.insert(list.end(), other.hits[q].begin(), other.hits[q].end());
        std::sort(list.begin(), list.end(), [](const strand_hit& a, const strand_hit& b) { return better(a, b); });
        if (list.size() > max_hits) list.resize(max_hits);
    }
    into.unknown_residues += other.unknown_residues;  // each process encodes only the chunks it searches
    into.subjects.merge(other.subjects);
    std::set<std::uint32_t> referenced;
    for (const auto& list : into.hits)
        for (const auto& h : list) referenced.insert(h.subject);
    for (auto it = into.subjects.begin(); it != into.subjects.end();)
        it = referenced.count(it->first) ? std::next(it) : into.subjects.erase(it);
    into.reader_wait_s = std::max(into.reader_wait_s, other.reader_wait_s);
    into.backend_s = std::max(into.backend_s, other.backend_s);
}
}  // namespace swgpu
