#include "io/align/database_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <numeric>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include <zlib.h>
#ifdef SWGPU_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "core/align/letter_codes.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "core/tuning.hpp"
#include "io/output_file.hpp"

namespace swgpu::io {

namespace {

constexpr char magic[8] = {'S', 'W', 'G', 'P', 'U', 'D', 'B', '3'};
constexpr char oldest_version = '2';  // version 2: no type word (the header is 8 bytes shorter)
constexpr std::size_t header_bytes = 8 + 5 * 8;
constexpr std::size_t header_bytes_of(char version) { return version == '2' ? 8 + 4 * 8 : header_bytes; }
// The type word: bits 0-1 the type (1 protein, 2 DNA), bit 8 set when --seqtype gave it.
constexpr std::uint64_t type_protein = 1, type_dna = 2, type_forced_bit = 1u << 8;
constexpr unsigned block_bits = 20;  // residues per checksum block: 2^20

std::uint64_t pad8(std::uint64_t n) { return (n + 7) & ~std::uint64_t(7); }

std::uint64_t blocks_of(std::uint64_t residues) { return (residues + (std::uint64_t(1) << block_bits) - 1) >> block_bits; }

// The CRC-32 of zlib (crc32_z) of `n` bytes continuing `crc`, in pieces zlib's length type holds. libdeflate computes
// the same checksum about 3 times faster per core (6.8 against 2.1 GB/s on the H200 host), where it is installed.
std::uint32_t crc_of(std::uint32_t crc, const void* data, std::uint64_t n) {
    auto p = static_cast<const Bytef*>(data);
    for (std::uint64_t done = 0; done < n;) {
        const std::uint64_t piece = std::min<std::uint64_t>(n - done, std::uint64_t(1) << 30);
#ifdef SWGPU_HAVE_LIBDEFLATE
        crc = libdeflate_crc32(crc, p + done, static_cast<std::size_t>(piece));
#else
        crc = static_cast<std::uint32_t>(crc32_z(crc, p + done, static_cast<z_size_t>(piece)));
#endif
        done += piece;
    }
    return crc;
}

// Faults in the pages of [at, at + bytes) on the reader's threads (MADV_POPULATE_WRITE, Linux 5.14; elsewhere
// nothing): a chunk's storage growing by 10^8 bytes otherwise takes its page faults one at a time on one thread when
// std::vector zero-fills it (88 ms for 100 MB on the H200 host, against 7.5 ms on 16 threads).
void populate(std::uint8_t* at, std::uint64_t bytes);

// The threads that read chunks: checksums, copies and codes of the residues, one block of 2^20 at a time (one thread
// copies a mapped file at about 5.6 GB/s and translates letters to codes at 1.4 GB/s on the H200 host; the GPU
// scores a chunk of one short query faster than that).
// SWGPU_TUNE=host.reader_threads=N sets their number (measurements: the search's other threads share the cores).
// The same threads parse FASTA files (sequence_reader).
}  // namespace

unsigned reader_threads() {
    const std::int64_t n = tuning::integer("host.reader_threads");
    return n > 0 ? static_cast<unsigned>(std::min<std::int64_t>(n, 256))
                 : std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
}

thread_pool& reader_pool() {
    static thread_pool pool(reader_threads());
    return pool;
}

namespace {

void populate(std::uint8_t* at, std::uint64_t bytes) {
#ifdef MADV_POPULATE_WRITE
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)), piece = std::uint64_t(1) << 21;
    const std::uint64_t from = (reinterpret_cast<std::uintptr_t>(at) + page - 1) / page * page;
    const std::uint64_t to = (reinterpret_cast<std::uintptr_t>(at) + bytes) / page * page;
    if (to <= from + piece) return;
    reader_pool().parallel_for((to - from + piece - 1) / piece, [&](std::size_t k) {
        const std::uint64_t b = from + k * piece, e = std::min(to, b + piece);
        (void)::madvise(reinterpret_cast<void*>(b), e - b, MADV_POPULATE_WRITE);  // a hint: failure costs only time
    });
#else
    (void)at, (void)bytes;
#endif
}

std::string resolve(const std::string& path) {
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return path;
    const std::string with = path + ".swdb";
    if (::stat(with.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return with;
    return path;
}

// Databases mapped right now, for the handler of SIGBUS: a file truncated while mapped (copied over in place while a
// search reads it) makes reading its lost pages a SIGBUS. The handler turns a fault inside one of these mappings into
// one error line and exit code 1 (bad input), the outputs' temporary files removed; any other fault goes on to the
// handler before it (or the default action). Fixed slots, claimed and released with atomic flags.
constexpr int map_slots = 16;
struct map_slot {
    std::atomic<bool> used{false};
    std::atomic<bool> live{false};
    const std::uint8_t* base = nullptr;
    std::size_t bytes = 0;
    char message[4200];
    std::size_t message_length = 0;
};
map_slot mapped[map_slots];
struct sigaction previous_sigbus{};

extern "C" void database_sigbus(int sig, siginfo_t* info, void* context) {
    const auto* at = static_cast<const std::uint8_t*>(info->si_addr);
    for (const auto& slot : mapped)
        if (slot.live.load() && at >= slot.base && at < slot.base + slot.bytes) {
            (void)!::write(STDERR_FILENO, slot.message, slot.message_length);
            remove_temporary_files();
            ::_exit(static_cast<int>(exit_code::bad_input));
        }
    if (previous_sigbus.sa_flags & SA_SIGINFO) {
        if (previous_sigbus.sa_sigaction) return previous_sigbus.sa_sigaction(sig, info, context);
    } else if (previous_sigbus.sa_handler != SIG_DFL && previous_sigbus.sa_handler != SIG_IGN) {
        return previous_sigbus.sa_handler(sig);
    }
    ::signal(sig, SIG_DFL);  // the fault repeats when the handler returns, now with the default action
}

int register_mapping(const std::uint8_t* base, std::size_t bytes, const std::string& path) {
    static const bool installed = [] {
        struct sigaction act{};
        act.sa_sigaction = database_sigbus;
        act.sa_flags = SA_SIGINFO;
        ::sigemptyset(&act.sa_mask);
        return ::sigaction(SIGBUS, &act, &previous_sigbus) == 0;
    }();
    if (!installed) return -1;
    const std::string text = "swgpu: error: " + path + ": the database file changed (it shrank) while it was read; "
                             "rebuild it with swgpu makedb, where no search reads it, and run again\n";
    for (int k = 0; k < map_slots; ++k) {
        bool expected = false;
        if (!mapped[k].used.compare_exchange_strong(expected, true)) continue;
        mapped[k].base = base;
        mapped[k].bytes = bytes;
        mapped[k].message_length = std::min(text.size(), sizeof mapped[k].message);
        std::memcpy(mapped[k].message, text.data(), mapped[k].message_length);
        mapped[k].live.store(true);
        return k;
    }
    return -1;  // all taken: such a fault is a plain SIGBUS
}

void unregister_mapping(int slot) {
    if (slot < 0) return;
    mapped[slot].live.store(false);
    mapped[slot].used.store(false);
}

// A file written by position (output_file::write_at) from its first byte on: `at` is where the next bytes go.
struct positioned {
    output_file& out;
    std::uint64_t at = 0;
    void put(std::string_view bytes) {
        out.write_at(at, bytes);
        at += bytes.size();
    }
    void pad() {
        static const char zeros[8] = {};
        put(std::string_view(zeros, static_cast<std::size_t>(pad8(at) - at)));
    }
};

template <typename T>
std::string_view bytes_of(const T* data, std::uint64_t count) {
    return {reinterpret_cast<const char*>(data), static_cast<std::size_t>(count * sizeof(T))};
}

// CRC-32s of consecutive blocks of 2^20 bytes of a stream fed in pieces of any size.
struct block_sums {
    std::vector<std::uint32_t> sums;
    std::uint32_t crc = crc_of(0, nullptr, 0);
    std::uint64_t filled = 0;  // bytes of the current block
    void feed(const std::uint8_t* p, std::uint64_t n) {
        while (n > 0) {
            const std::uint64_t take = std::min(n, (std::uint64_t(1) << block_bits) - filled);
            crc = crc_of(crc, p, take);
            filled += take;
            p += take;
            n -= take;
            if (filled == (std::uint64_t(1) << block_bits)) finish();
        }
    }
    void finish() {
        if (filled == 0) return;
        sums.push_back(crc);
        crc = crc_of(0, nullptr, 0);
        filled = 0;
    }
};

// Records that repeat an earlier id, reported to `warn` with the first of them (ids name the subjects of hits, and SAM
// needs them unique: said now, not at search time). Sorts the record numbers by id: 4 bytes a record.
void warn_repeated_ids(const std::string& source, const std::string& names, const std::vector<std::uint64_t>& name_off,
                       const std::function<void(const std::string&)>& warn) {
    const auto n = static_cast<std::uint32_t>(name_off.size() - 1);
    const auto id = [&](std::uint32_t k) {
        return std::string_view(names).substr(static_cast<std::size_t>(name_off[k]),
                                              static_cast<std::size_t>(name_off[k + 1] - name_off[k]));
    };
    std::vector<std::uint32_t> by_id(n);
    std::iota(by_id.begin(), by_id.end(), 0u);
    std::sort(by_id.begin(), by_id.end(), [&](std::uint32_t a, std::uint32_t b) {
        const auto x = id(a), y = id(b);
        return x != y ? x < y : a < b;
    });
    std::uint64_t duplicates = 0;
    std::uint32_t first_repeat = n, its_original = 0;
    for (std::uint32_t k = 1, original = by_id[0]; k < n; ++k) {
        if (id(by_id[k]) != id(by_id[k - 1])) {
            original = by_id[k];
            continue;
        }
        ++duplicates;
        if (by_id[k] < first_repeat) first_repeat = by_id[k], its_original = original;
    }
    if (!duplicates) return;
    warn(source + ":" + std::string(id(first_repeat)) + " (record " + std::to_string(first_repeat + 1) + ")" +
         ": the id is also that of record " + std::to_string(its_original + 1) +
         (duplicates > 1 ? "; " + std::to_string(duplicates) + " records in all repeat an earlier id" : std::string()) +
         ": hits name subjects by id, so such hits cannot be told apart, and SAM output refuses them; make the ids "
         "unique");
}

}  // namespace

std::uint64_t write_database(const std::string& source, const std::string& prefix, const read_options& opt,
                             std::optional<seq_type> forced) {
    // Created first, so that an unwritable destination fails before the source is read; written to a temporary file
    // renamed when complete (io/output_file.hpp), by position: the residues stream into the file as they are read
    // (memory: the ids and 20 bytes a record), the header last.
    output_file out(database_output(prefix));
    if (!out.positional()) throw usage_error(out.name() + ": makedb writes a regular file");
    positioned file{out, header_bytes};
    std::vector<std::uint64_t> off{0}, name_off{0};
    std::string names;
    std::uint64_t longest = 0;
    block_sums residue_sums;
    // The type: given, or by the rule over the first chunk, which holds the records that type a file (its 16 M
    // residues reach type_window); then every record is checked against it as a search of the FASTA file would.
    std::optional<seq_type> type = forced;
    nucleotide_like odd;
    {
        sequence_reader reader(source, opt);
        for (;;) {
            sequence_set chunk;  // 16 M residues at a time
            static_assert((std::uint64_t(1) << 24) >= type_window);
            if (!reader.read_chunk(chunk, std::uint64_t(1) << 24)) break;
            if (!forced) {
                if (!type) type = detect_type(chunk);
                if (const auto k = first_disagreeing(chunk, *type); k < chunk.size())
                    throw_mixed_types(chunk, k, *type, off.size());
                if (*type == seq_type::protein) odd.add(chunk, off.size());
            }
            for (auto& c : chunk.residues) c = static_cast<std::uint8_t>(c >= 'a' && c <= 'z' ? c - 32 : c);
            file.put(bytes_of(chunk.residues.data(), chunk.residues.size()));
            residue_sums.feed(chunk.residues.data(), chunk.residues.size());
            for (std::size_t k = 0; k < chunk.size(); ++k) {
                off.push_back(off.back() + chunk.length(k));
                longest = std::max<std::uint64_t>(longest, chunk.length(k));
                names += chunk.names[k];
                name_off.push_back(names.size());
            }
            if (off.size() - 1 > 0xffffffffull) throw input_error(source, "more than 2^32 records; split the database");
        }
    }
    residue_sums.finish();
    const std::uint64_t n = off.size() - 1, r = off.back();
    if (opt.on_warning) warn_repeated_ids(source, names, name_off, opt.on_warning);
    if (opt.on_warning && odd.count) opt.on_warning(odd.warning(source));
    std::vector<std::uint32_t> order(static_cast<std::size_t>(n));  // fewer than 2^32, checked above
    std::iota(order.begin(), order.end(), 0u);
    const auto length = [&](std::uint32_t k) { return off[k + 1] - off[k]; };
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {  // longest first, ties by index
        return length(a) != length(b) ? length(a) > length(b) : a < b;
    });
    file.pad();
    // The checksum of the header (magic included) and of everything after the residues but the checksums.
    char head[header_bytes];
    std::memcpy(head, magic, 8);
    const std::uint64_t type_word = (type.value_or(seq_type::protein) == seq_type::dna ? type_dna : type_protein) |
                                    (forced ? type_forced_bit : 0);
    const std::uint64_t counts[5] = {n, r, names.size(), longest, type_word};
    std::memcpy(head + 8, counts, sizeof counts);
    std::uint32_t meta = crc_of(crc_of(0, nullptr, 0), head, header_bytes);
    file.put(names);
    file.pad();
    file.put(bytes_of(off.data(), n + 1));
    file.put(bytes_of(name_off.data(), n + 1));
    file.put(bytes_of(order.data(), n));
    file.pad();
    {  // the same bytes as written, in file order
        static const char zeros[8] = {};
        meta = crc_of(meta, names.data(), names.size());
        meta = crc_of(meta, zeros, pad8(names.size()) - names.size());
        meta = crc_of(meta, off.data(), (n + 1) * 8);
        meta = crc_of(meta, name_off.data(), (n + 1) * 8);
        meta = crc_of(meta, order.data(), n * 4);
        meta = crc_of(meta, zeros, pad8(n * 4) - n * 4);
    }
    std::vector<std::uint32_t> sums = std::move(residue_sums.sums);
    sums.push_back(meta);
    file.put(bytes_of(sums.data(), sums.size()));
    file.pad();
    out.write_at(0, std::string_view(head, header_bytes));
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
    const std::uint32_t* sums = nullptr;  // blocks_of(r) residue blocks, then the rest
    std::vector<bool> checked;            // residue blocks whose checksum was checked
    int map_slot = -1;                    // register_mapping's
    std::uint64_t next = 0;
    std::optional<seq_type> type;  // from the header (format 3 on)
    bool type_forced = false;
    std::uint64_t chunk_end(std::uint64_t first, std::uint64_t max_residues) const;
    // Checks the blocks of residues [from, to) not checked yet; a mismatch names the records in the block.
    void check_residues(std::uint64_t from, std::uint64_t to);
    std::vector<std::uint64_t> unchecked(std::uint64_t from, std::uint64_t to) const;
    bool block_matches(std::uint64_t b) const;
    void settle(std::uint64_t b, bool matches);
    std::uint64_t copy_residues(std::uint64_t from, std::uint64_t to, std::uint8_t* out, const substitution_matrix* m);
    void copy_records(std::uint64_t first, std::uint64_t end, sequence_set& out) const;
};

// The blocks of residues [from, to) not checked yet, in order.
std::vector<std::uint64_t> database_file::impl::unchecked(std::uint64_t from, std::uint64_t to) const {
    std::vector<std::uint64_t> todo;
    if (from >= to) return todo;
    for (std::uint64_t b = from >> block_bits; b <= (to - 1) >> block_bits; ++b)
        if (!checked[b]) todo.push_back(b);
    return todo;
}

bool database_file::impl::block_matches(std::uint64_t b) const {
    const std::uint64_t start = b << block_bits, end = std::min(r, (b + 1) << block_bits);
    return crc_of(crc_of(0, nullptr, 0), residues + start, end - start) == sums[b];
}

// Marks block b checked, or throws the error naming the records with residues in it.
void database_file::impl::settle(std::uint64_t b, bool matches) {
    if (matches) {
        checked[b] = true;
        return;
    }
    const std::uint64_t start = b << block_bits, end = std::min(r, (b + 1) << block_bits);
    // The records with residues in the block: off is strictly increasing.
    const std::uint64_t first = static_cast<std::uint64_t>(std::upper_bound(off, off + n + 1, start) - off) - 1;
    const std::uint64_t last = static_cast<std::uint64_t>(std::lower_bound(off, off + n + 1, end) - off) - 1;
    const auto name = [&](std::uint64_t i) {
        return std::string(names + name_off[i], static_cast<std::size_t>(name_off[i + 1] - name_off[i]));
    };
    const std::string records = first == last ? "record " + std::to_string(first + 1)
                                              : "records " + std::to_string(first + 1) + "-" + std::to_string(last + 1);
    throw input_error(path, "residues of " + records + " (" + name(first) + (first == last ? "" : " to " + name(last)) +
                                ") do not match the checksum makedb wrote: the file was changed or damaged "
                                "after it was made; rebuild it with swgpu makedb");
}

void database_file::impl::check_residues(std::uint64_t from, std::uint64_t to) {
    const std::vector<std::uint64_t> todo = unchecked(from, to);
    if (todo.empty()) return;
    // On the reader's threads when there are several blocks: a search of one short query reads the database faster
    // than one thread computes CRC-32.
    std::vector<char> good(todo.size());
    reader_pool().parallel_for(todo.size(), [&](std::size_t k) { good[k] = block_matches(todo[k]); });
    for (std::size_t k = 0; k < todo.size(); ++k) settle(todo[k], good[k]);
}

// Residues [from, to) copied to `out` (codes of `m` when given, its unknown letters counted), one task per block of
// 2^20 residues on the reader's threads; each block's checksum is checked first, when it was not yet, so that its
// bytes are in the core's cache when they are copied.
std::uint64_t database_file::impl::copy_residues(std::uint64_t from, std::uint64_t to, std::uint8_t* out,
                                                 const substitution_matrix* m) {
    if (from >= to) return 0;
    const std::optional<letter_codes> codes = m ? std::optional<letter_codes>(*m) : std::nullopt;
    const std::uint64_t first_block = from >> block_bits, blocks = ((to - 1) >> block_bits) - first_block + 1;
    std::vector<char> good(blocks, 1);
    std::vector<std::uint64_t> unknown_in(blocks, 0);
    reader_pool().parallel_for(blocks, [&](std::size_t k) {
        const std::uint64_t b = first_block + k;
        if (!checked[b]) good[k] = block_matches(b);
        const std::uint64_t start = std::max(from, b << block_bits), end = std::min(to, (b + 1) << block_bits);
        const std::uint8_t* in = residues + start;
        std::uint8_t* at = out + (start - from);
        if (!m) {
            std::memcpy(at, in, end - start);
            return;
        }
        unknown_in[k] = encode_letters(*codes, in, at, static_cast<std::size_t>(end - start));
    });
    for (std::uint64_t k = 0; k < blocks; ++k)
        if (!checked[first_block + k]) settle(first_block + k, good[k]);
    return std::accumulate(unknown_in.begin(), unknown_in.end(), std::uint64_t(0));
}

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
    d.map_slot = register_mapping(d.base, d.bytes, d.path);
    auto fail = [&](const std::string& what) {
        unregister_mapping(d.map_slot);
        d.map_slot = -1;
        ::munmap(const_cast<std::uint8_t*>(d.base), d.bytes);
        d.base = nullptr;
        return input_error(d.path, what + "; rebuild it with swgpu makedb");
    };
    const char version = static_cast<char>(d.base[7]);
    const bool readable = version >= oldest_version && version <= magic[7];
    if (std::memcmp(d.base, magic, 7) == 0 && !readable) {
        const auto v = d.base[7];
        const std::string version = v > ' ' && v < 0x7f ? std::string(1, static_cast<char>(v)) : "unknown";
        fail("");  // unmaps
        throw input_error(d.path, "a swgpu database of format version " + version + ", made by another version of "
                                  "swgpu; this one reads format versions " + std::string(1, oldest_version) +
                                  " to " + std::string(1, magic[7]) +
                                  ": rebuild it from its FASTA file with swgpu makedb");
    }
    if (std::memcmp(d.base, magic, 7) != 0 || !readable) throw fail("not a swgpu database (bad magic)");
    const std::size_t head_bytes = header_bytes_of(version);
    if (d.bytes < head_bytes) throw fail("not a swgpu database (too short)");
    std::uint64_t head[5] = {};
    std::memcpy(head, d.base + 8, head_bytes - 8);
    d.n = head[0];
    d.r = head[1];
    d.name_bytes = head[2];
    d.longest = head[3];
    if (version >= '3') {
        const std::uint64_t t = head[4] & 3;
        if (t != type_protein && t != type_dna) throw fail("corrupt database header (type)");
        d.type = t == type_dna ? seq_type::dna : seq_type::protein;
        d.type_forced = (head[4] & type_forced_bit) != 0;
    }
    if (d.n > 0xffffffffull || d.r > d.bytes || d.name_bytes > d.bytes) throw fail("corrupt database header");
    const std::uint64_t need = head_bytes + 2 * (d.n + 1) * 8 + pad8(d.n * 4) + pad8(d.r) + pad8(d.name_bytes) +
                               pad8((blocks_of(d.r) + 1) * 4);
    if (need != d.bytes) throw fail("database size does not match its header (truncated?)");
    std::uint64_t at = head_bytes;
    d.residues = d.base + at;
    at += pad8(d.r);
    d.names = reinterpret_cast<const char*>(d.base + at);
    at += pad8(d.name_bytes);
    d.off = reinterpret_cast<const std::uint64_t*>(d.base + at);
    at += (d.n + 1) * 8;
    d.name_off = reinterpret_cast<const std::uint64_t*>(d.base + at);
    at += (d.n + 1) * 8;
    d.order = reinterpret_cast<const std::uint32_t*>(d.base + at);
    at += pad8(d.n * 4);
    d.sums = reinterpret_cast<const std::uint32_t*>(d.base + at);
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
    const auto names_at = reinterpret_cast<const std::uint8_t*>(d.names);
    const std::uint32_t meta = crc_of(crc_of(crc_of(0, nullptr, 0), d.base, head_bytes), names_at,
                                      static_cast<std::uint64_t>(reinterpret_cast<const std::uint8_t*>(d.sums) - names_at));
    if (meta != d.sums[blocks_of(d.r)])
        throw fail("its header, tables or names do not match the checksum makedb wrote: the file was changed or "
                   "damaged after it was made");
    d.checked.assign(static_cast<std::size_t>(blocks_of(d.r)), false);
}

database_file::~database_file() {
    if (!p_ || !p_->base) return;
    unregister_mapping(p_->map_slot);
    ::munmap(const_cast<std::uint8_t*>(p_->base), p_->bytes);
}

const std::string& database_file::path() const { return p_->path; }
std::uint64_t database_file::size() const { return p_->n; }
std::uint64_t database_file::total_residues() const { return p_->r; }
std::uint64_t database_file::longest() const { return p_->longest; }
std::optional<seq_type> database_file::type() const { return p_->type; }
std::uint64_t database_file::length(std::uint64_t k) const { return p_->off[k + 1] - p_->off[k]; }
bool database_file::type_forced() const { return p_->type_forced; }
std::string_view database_file::name(std::uint64_t k) const {
    return {p_->names + p_->name_off[k], static_cast<std::size_t>(p_->name_off[k + 1] - p_->name_off[k])};
}
std::span<const std::uint8_t> database_file::residues(std::uint64_t k) const {
    p_->check_residues(p_->off[k], p_->off[k + 1]);
    return {p_->residues + p_->off[k], static_cast<std::size_t>(p_->off[k + 1] - p_->off[k])};
}
std::span<const std::uint32_t> database_file::length_order() const { return {p_->order, static_cast<std::size_t>(p_->n)}; }

bool database_file::exhausted() const { return p_->next >= p_->n; }

// The record after the chunk that starts at `first` and holds at least max_residues (0: all the rest): the first
// whose offset reaches off[first] + max_residues, found by bisection (off is strictly increasing), since
// largest_chunk cuts every chunk ahead.
std::uint64_t database_file::impl::chunk_end(std::uint64_t first, std::uint64_t max_residues) const {
    if (max_residues == 0 || first >= n) return n;
    const std::uint64_t* e = std::lower_bound(off + first + 1, off + n + 1, off[first] + max_residues);
    return std::min<std::uint64_t>(n, static_cast<std::uint64_t>(e - off));
}

std::uint64_t database_file::largest_chunk(std::span<const std::uint64_t> limits) const {
    if (limits.empty()) return 0;
    std::uint64_t largest = 0;
    for (std::uint64_t first = p_->next, k = 0; first < p_->n; ++k) {
        const std::uint64_t end = p_->chunk_end(first, limits[std::min<std::uint64_t>(k, limits.size() - 1)]);
        largest = std::max(largest, p_->off[end] - p_->off[first]);
        first = end;
    }
    return largest;
}

void reserve_residues(sequence_set& out, std::uint64_t residues) {
    if (!out.empty() || out.residues.capacity() >= residues) return;
    out.residues.clear();  // stale bytes are not moved into the new storage
    out.residues.reserve(residues);
    populate(out.residues.data(), out.residues.capacity());
}

// The names and residue offsets of records [first, end) appended to `out`, whose residues already hold theirs, on
// the reader's threads (a chunk of 10^8 residues has about 2 * 10^5 records).
void database_file::impl::copy_records(std::uint64_t first, std::uint64_t end, sequence_set& out) const {
    const std::size_t n_before = out.names.size(), count = static_cast<std::size_t>(end - first);
    const std::uint64_t base = out.offsets.back() - off[first];
    out.offsets.resize(n_before + 1 + count);
    out.names.resize(n_before + count);
    constexpr std::size_t per_task = 16384;
    reader_pool().parallel_for((count + per_task - 1) / per_task, [&](std::size_t t) {
        for (std::size_t k = t * per_task; k < std::min(count, (t + 1) * per_task); ++k) {
            const std::uint64_t i = first + k;
            out.offsets[n_before + 1 + k] = base + off[i + 1];
            out.names[n_before + k].assign(names + name_off[i], static_cast<std::size_t>(name_off[i + 1] - name_off[i]));
        }
    });
}

bool database_file::read_chunk(sequence_set& out, std::uint64_t max_residues, const substitution_matrix* encode_with,
                               std::uint64_t* unknown) {
    if (out.source.empty()) out.source = p_->path;
    if (encode_with && !out.empty() && !out.encoded)
        throw runtime_failure("database_file::read_chunk: codes appended to a set of letters");
    const std::uint64_t first = p_->next, end = p_->chunk_end(first, max_residues);
    if (end == first) return false;
    // The records are consecutive in the file: their residues are one copy, checked against their blocks' checksums.
    // An empty set's residues may hold stale bytes of a recycled chunk (database_stream): they are overwritten, not
    // cleared first, so that only growth beyond them is zero-filled.
    const std::uint64_t base = out.empty() ? 0 : out.residues.size(), count = p_->off[end] - p_->off[first];
    if (out.residues.capacity() < base + count) {
        if (out.empty()) out.residues.clear();  // no stale bytes moved into the grown storage
        out.residues.reserve(base + count);
        populate(out.residues.data() + out.residues.size(), out.residues.capacity() - out.residues.size());
    }
    out.offsets.resize(out.size() + 1);
    out.residues.resize(base + count);
    const std::uint64_t bad = p_->copy_residues(p_->off[first], p_->off[end], out.residues.data() + base, encode_with);
    if (unknown) *unknown = bad;
    if (encode_with) out.encoded = true;
    p_->copy_records(first, end, out);
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

sequence_set read_all_records(const std::string& path_or_swdb) {
    sequence_set all;
    if (path_or_swdb != "-" && is_database_file(path_or_swdb)) {
        database_file f(path_or_swdb);
        f.read_chunk(all, 0);
    } else {
        all = read_all(path_or_swdb);
    }
    return all;
}

}  // namespace swgpu::io
