#include "io/arrays/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "core/error.hpp"

namespace swgpu::io {

namespace {

constexpr std::string_view magic = "\x93NUMPY";

// Header text quoted in a message: one printable line (other bytes as \xHH), at most 80 characters of it.
std::string shown(std::string_view text) {
    std::string s;
    for (const char c : text.substr(0, 80)) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f) {
            s += c;
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", u);
            s += hex;
        }
    }
    if (text.size() > 80) s += "...";
    return s;
}

// The value of key `key` in the header dict: the text after "'key':" up to the next top-level ',' or '}'.
std::string dict_value(const std::string& dict, const std::string& key, const std::string& name) {
    auto at = dict.find("'" + key + "'");
    if (at == std::string::npos) at = dict.find("\"" + key + "\"");
    if (at == std::string::npos) throw input_error(name, "the .npy header has no '" + key + "' entry");
    at = dict.find(':', at);
    if (at == std::string::npos) throw input_error(name, "the .npy header is malformed");
    ++at;
    int depth = 0;
    std::size_t end = at;
    for (; end < dict.size(); ++end) {
        const char c = dict[end];
        if (c == '(' || c == '[') ++depth;
        else if (c == ')' || c == ']') --depth;
        else if ((c == ',' || c == '}') && depth == 0) break;
    }
    std::string v = dict.substr(at, end - at);
    const auto b = v.find_first_not_of(" \t"), e = v.find_last_not_of(" \t");
    return b == std::string::npos ? "" : v.substr(b, e - b + 1);
}

// The dtype of a descr; `big_endian` says whether its elements are stored most significant byte first ('>', or '!'
// as NumPy also reads it), to be swapped after reading.
sat::dtype parse_descr(std::string d, const std::string& name, bool& big_endian) {
    if (d.size() >= 2 && (d.front() == '\'' || d.front() == '"')) d = d.substr(1, d.size() - 2);
    const std::string hint = "; convert it with numpy, e.g. np.save(f, np.ascontiguousarray(a, dtype='<f8'))";
    if (d.size() != 3) throw input_error(name, "unsupported .npy dtype '" + shown(d) + "' (expected one of u1 u2 u4 u8 i1 i2 i4 i8 f4 f8, either byte order)" + hint);
    const char order = d[0], kind = d[1], size = d[2];
    if (order != '<' && order != '|' && order != '=' && order != '>' && order != '!')
        throw input_error(name, "unsupported .npy dtype '" + shown(d) + "'" + hint);
    big_endian = (order == '>' || order == '!') && size != '1';
    switch (kind) {
        case 'u':
            if (size == '1') return sat::dtype::u8;
            if (size == '2') return sat::dtype::u16;
            if (size == '4') return sat::dtype::u32;
            if (size == '8') return sat::dtype::u64;
            break;
        case 'i':
            if (size == '1') return sat::dtype::i8;
            if (size == '2') return sat::dtype::i16;
            if (size == '4') return sat::dtype::i32;
            if (size == '8') return sat::dtype::i64;
            break;
        case 'f':
            if (size == '4') return sat::dtype::f32;
            if (size == '8') return sat::dtype::f64;
            break;
        default: break;
    }
    throw input_error(name, "unsupported .npy dtype '" + shown(d) + "' (expected one of u1 u2 u4 u8 i1 i2 i4 i8 f4 f8)" + hint);
}

const char* descr_of(sat::dtype t) {
    switch (t) {
        case sat::dtype::u8: return "|u1";
        case sat::dtype::u16: return "<u2";
        case sat::dtype::u32: return "<u4";
        case sat::dtype::u64: return "<u8";
        case sat::dtype::i8: return "|i1";
        case sat::dtype::i16: return "<i2";
        case sat::dtype::i32: return "<i4";
        case sat::dtype::i64: return "<i8";
        case sat::dtype::f32: return "<f4";
        case sat::dtype::f64: return "<f8";
    }
    return "?";
}

struct fd_closer {
    int fd;
    ~fd_closer() {
        if (fd >= 0) ::close(fd);
    }
};

// Everything left to read from fd. read(2) itself, not a stream: copying an ifstream's rdbuf() into a stream swallows
// a failed read (the exception is caught and only the destination's failbit set), so that an I/O error read as a
// shorter or empty file.
std::string read_fd_bytes(int fd, const std::string& path) {
    struct stat st{};
    const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    // A regular file's size and one byte more, so that the read finding its end needs no larger buffer.
    std::string out(regular ? static_cast<std::size_t>(st.st_size) + 1 : std::size_t(1) << 16, '\0');
    std::size_t used = 0;
    for (;;) {
        if (used == out.size()) out.resize(2 * out.size());  // a pipe, or a file that grew
        const ssize_t n = ::read(fd, out.data() + used, std::min<std::size_t>(out.size() - used, std::size_t(1) << 30));
        if (n < 0) {
            if (errno == EINTR) continue;
            throw input_error(path, std::string("read failed (") + std::strerror(errno) + ")");
        }
        if (n == 0) break;
        used += static_cast<std::size_t>(n);
    }
    out.resize(used);
    return out;
}

}  // namespace

bool is_npy(std::string_view head) { return head.substr(0, magic.size()) == magic; }

std::string read_file_bytes(const std::string& path) {
    const fd_closer f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) throw input_error(path, std::string("cannot open (") + std::strerror(errno) + ")");
    return read_fd_bytes(f.fd, path);
}

std::string read_stdin_bytes() {
    std::string out;
    char buf[1 << 16];
    for (;;) {
        const std::size_t n = std::fread(buf, 1, sizeof buf, stdin);
        out.append(buf, n);
        if (n < sizeof buf) break;
    }
    if (std::ferror(stdin)) throw input_error("stdin", std::string("read failed (") + std::strerror(errno) + ")");
    return out;
}

namespace {

// A parsed header: the array's type and shape (no elements yet), where the body starts and how many bytes it needs.
struct npy_layout {
    sat::array a;
    std::size_t start = 0, need = 0;
    std::string shape;
    bool big_endian = false;  // elements to be byte-swapped once read
};

// Elements stored big-endian put into this machine's (little-endian) order.
void to_native(npy_layout& l) {
    if (!l.big_endian) return;
    const std::size_t size = sat::size_of(l.a.type), n = l.need / size;
    auto* p = static_cast<unsigned char*>(l.a.raw());
    for (std::size_t k = 0; k < n; ++k) std::reverse(p + k * size, p + (k + 1) * size);
}

// The header of `bytes` (the file's first bytes: all of the header, perhaps not all of the body).
npy_layout parse_npy_header(std::string_view bytes, const std::string& name) {
    if (!is_npy(bytes)) throw input_error(name, "not a .npy file (no \\x93NUMPY magic)");
    if (bytes.size() < 10) throw input_error(name, "truncated .npy header");
    const auto major = static_cast<unsigned char>(bytes[6]);
    std::size_t header_len = 0, start = 0;
    if (major == 1) {
        header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
        start = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) throw input_error(name, "truncated .npy header");
        for (int k = 0; k < 4; ++k) header_len |= static_cast<std::size_t>(static_cast<unsigned char>(bytes[8 + k])) << (8 * k);
        start = 12;
    } else {
        throw input_error(name, "unsupported .npy format version " + std::to_string(major));
    }
    if (bytes.size() < start + header_len) throw input_error(name, "truncated .npy header");
    const std::string dict(bytes.substr(start, header_len));
    bool big_endian = false;
    const sat::dtype type = parse_descr(dict_value(dict, "descr", name), name, big_endian);
    const std::string fortran = dict_value(dict, "fortran_order", name);
    if (fortran == "True")
        throw input_error(name, "the .npy array is in Fortran order; save it in C order (np.ascontiguousarray)");
    if (fortran != "False") throw input_error(name, "the .npy header's fortran_order is malformed");
    std::string shape = dict_value(dict, "shape", name);
    if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') throw input_error(name, "the .npy shape is malformed");
    std::vector<index_t> dims;
    std::stringstream ss(shape.substr(1, shape.size() - 2));
    for (std::string item; std::getline(ss, item, ',');) {
        const auto b = item.find_first_not_of(" \t");
        if (b == std::string::npos) continue;
        try {
            std::size_t used = 0;
            const long long v = std::stoll(item.substr(b), &used);
            if (v < 0) throw std::invalid_argument("negative");
            dims.push_back(v);
        } catch (const std::exception&) {
            throw input_error(name, "the .npy shape '" + shown(shape) + "' is malformed");
        }
    }
    if (dims.empty() || dims.size() > 3)
        throw input_error(name, "the .npy array has " + std::to_string(dims.size()) +
                                    " dimensions; expected (W,), (H, W) or (H, W, C)");
    npy_layout l;
    sat::array& a = l.a;
    a.type = type;
    a.rows = dims.size() == 1 ? 1 : dims[0];
    a.cols = dims.size() == 1 ? dims[0] : dims[1];
    a.lanes = dims.size() == 3 ? dims[2] : 1;
    a.one_dimensional = dims.size() == 1;
    if (a.rows == 0 || a.cols == 0 || a.lanes == 0)
        throw input_error(name, "the .npy array is empty (shape " + shown(shape) + ")");
    const unsigned __int128 need = static_cast<unsigned __int128>(a.rows) * static_cast<unsigned __int128>(a.cols) *
                                   static_cast<unsigned __int128>(a.lanes) * sat::size_of(type);
    if (need > std::numeric_limits<std::size_t>::max() / 2)
        throw input_error(name, "the .npy shape " + shown(shape) + " is too large");
    l.start = start + header_len;
    l.need = static_cast<std::size_t>(need);
    l.shape = shown(shape);
    l.big_endian = big_endian;
    return l;
}

void check_body(const npy_layout& l, std::size_t file_size, const std::string& name) {
    const std::size_t body = file_size - l.start;
    if (l.need > body)
        throw input_error(name, "the .npy body is truncated: the shape " + l.shape + " needs " + std::to_string(l.need) +
                                    " bytes, the file has " + std::to_string(body));
}

// Reads up to n bytes at `offset` into p; returns how many (fewer only at the end of the file).
std::size_t read_at(int fd, char* p, std::size_t n, std::size_t offset, const std::string& path) {
    std::size_t done = 0;
    while (done < n) {
        const ssize_t r = ::pread(fd, p + done, std::min<std::size_t>(n - done, std::size_t(1) << 30),
                                  static_cast<off_t>(offset + done));
        if (r < 0) {
            if (errno == EINTR) continue;
            throw input_error(path, std::string("read failed (") + std::strerror(errno) + ")");
        }
        if (r == 0) break;
        done += static_cast<std::size_t>(r);
    }
    return done;
}

}  // namespace

sat::array parse_npy(std::string_view bytes, const std::string& name) {
    npy_layout l = parse_npy_header(bytes, name);
    check_body(l, bytes.size(), name);
    l.a.storage.resize((l.need + 7) / 8);
    std::memcpy(l.a.raw(), bytes.data() + l.start, l.need);
    to_native(l);
    return std::move(l.a);
}

sat::array read_npy(const std::string& path) {
    // A regular file is read straight into the array (no copy of the whole file on the way); anything else (a pipe)
    // read whole from the descriptor opened here.
    fd_closer f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) throw input_error(path, std::string("cannot open (") + std::strerror(errno) + ")");
    struct stat st{};
    if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) return parse_npy(read_fd_bytes(f.fd, path), path);
    const auto size = static_cast<std::size_t>(st.st_size);
    std::string head(std::min<std::size_t>(size, 4096), '\0');
    head.resize(read_at(f.fd, head.data(), head.size(), 0, path));
    if (head.size() >= 12 && is_npy(head)) {  // a header longer than the first read: read all of it
        const std::size_t len = head[6] == 1 ? 10 + (static_cast<unsigned char>(head[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(head[9])) << 8))
                                             : 12 + (static_cast<unsigned char>(head[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(head[9])) << 8) |
                                                     (static_cast<std::size_t>(static_cast<unsigned char>(head[10])) << 16) |
                                                     (static_cast<std::size_t>(static_cast<unsigned char>(head[11])) << 24));
        if (len > head.size() && len <= size) {
            head.resize(len);
            head.resize(read_at(f.fd, head.data(), len, 0, path));
        }
    }
    npy_layout l = parse_npy_header(head, path);
    check_body(l, size, path);
    l.a.storage.resize((l.need + 7) / 8);  // uninitialised: the read fills it
    if (read_at(f.fd, static_cast<char*>(l.a.raw()), l.need, l.start, path) != l.need)
        throw input_error(path, "the .npy body is truncated (the file shrank while it was read)");
    to_native(l);
    return std::move(l.a);
}

std::string npy_header(sat::dtype type, const std::string& shape) {
    std::string dict = std::string("{'descr': '") + descr_of(type) + "', 'fortran_order': False, 'shape': " + shape + ", }";
    // magic (6) + version (2) + length (2 or 4) + dict + padding + '\n' is a multiple of 64.
    for (int version : {1, 2}) {
        const std::size_t pre = version == 1 ? 10 : 12;
        std::size_t total = pre + dict.size() + 1;
        total = (total + 63) / 64 * 64;
        const std::size_t len = total - pre;
        if (version == 1 && len > 65535) continue;
        std::string h(magic);
        h += static_cast<char>(version);
        h += '\0';
        for (std::size_t k = 0; k < pre - 8; ++k) h += static_cast<char>((len >> (8 * k)) & 0xff);
        h += dict;
        h.append(len - dict.size() - 1, ' ');
        h += '\n';
        return h;
    }
    return {};
}

namespace {

// The header of the .npy of `a` (its dtype and shape).
std::string npy_header_of(const sat::array& a, bool always_3d) {
    std::string shape = "(";  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "(" + std::string
    const bool one_d = a.one_dimensional && a.rows == 1;  // (W,) in, (W,) or (W, C) out
    if (!one_d) {
        shape += std::to_string(a.rows);
        shape += ", ";
    }
    shape += std::to_string(a.cols);
    if (a.lanes != 1 || always_3d) shape += ", " + std::to_string(a.lanes);
    else if (one_d) shape += ",";
    shape += ")";
    return npy_header(a.type, shape);
}

}  // namespace

void write_npy(const sat::array& a, output_file& out, bool always_3d) {
    out.write(npy_header_of(a, always_3d));
    out.write(std::string_view(static_cast<const char*>(a.raw()), a.bytes()));  // one block, unbuffered
}

void write_npy(const sat::array& a, const std::string& path, bool always_3d) {
    output_file out(path);
    write_npy(a, out, always_3d);
    out.commit();
}

template <class T>
void write_cube(output_file& out, std::span<const T> grid, std::int64_t n) {
    sat::array a(sizeof(T) == 4 ? sat::dtype::f32 : sat::dtype::f64, n, n, n);
    std::memcpy(a.raw(), grid.data(), grid.size() * sizeof(T));
    write_npy(a, out, true);
}
template void write_cube<float>(output_file&, std::span<const float>, std::int64_t);
template void write_cube<double>(output_file&, std::span<const double>, std::int64_t);

void write_npy_rows(const sat::array& like, const std::string& path,
                    const std::function<void(const sat::rows_sink&)>& produce) {
    output_file out(path);
    const std::size_t row_bytes =
        static_cast<std::size_t>(like.cols) * static_cast<std::size_t>(like.lanes) * sat::size_of(like.type);
    if (!out.positional()) {  // stdout, a FIFO: in order, from the whole array
        sat::array a = sat::array::uninitialized(like.type, like.rows, like.cols, like.lanes);
        a.one_dimensional = like.one_dimensional;
        produce([&](index_t first, index_t count, const void* data) {
            std::memcpy(static_cast<char*>(a.raw()) + static_cast<std::size_t>(first) * row_bytes, data,
                        static_cast<std::size_t>(count) * row_bytes);
        });
        write_npy(a, out);
        out.commit();
        return;
    }
    const std::string header = npy_header_of(like, false);
    out.reserve(header.size() + static_cast<std::uint64_t>(like.rows) * row_bytes);
    out.write_at(0, header);
    produce([&](index_t first, index_t count, const void* data) {
        out.write_at(header.size() + static_cast<std::uint64_t>(first) * row_bytes,
                     std::string_view(static_cast<const char*>(data), static_cast<std::size_t>(count) * row_bytes));
    });
    out.commit();
}

}  // namespace swgpu::io
