#include "io/serve/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <unordered_set>

#include "core/error.hpp"

namespace swgpu::io::json {

const value* value::find(std::string_view key) const {
    for (std::size_t k = 0; k < keys.size(); ++k)
        if (keys[k] == key) return &items[k];
    return nullptr;
}

std::string_view value::type_name() const {
    switch (type) {
        case kind::null: return "null";
        case kind::boolean: return "a boolean";
        case kind::number: return "a number";
        case kind::string: return "a string";
        case kind::array: return "an array";
        case kind::object: return "an object";
    }
    return "?";
}

namespace {

struct parser {
    std::string_view s;
    std::size_t at = 0, max_depth;

    [[noreturn]] void fail(const std::string& what) const {
        throw usage_error("bad JSON at byte " + std::to_string(at) + ": " + what);
    }
    void blanks() {
        while (at < s.size() && (s[at] == ' ' || s[at] == '\t' || s[at] == '\n' || s[at] == '\r')) ++at;
    }
    bool word(std::string_view w) {
        if (s.substr(at, w.size()) != w) return false;
        at += w.size();
        return true;
    }
    static void utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) out += char(cp);
        else if (cp < 0x800) out += char(0xC0 | (cp >> 6)), out += char(0x80 | (cp & 0x3F));
        else if (cp < 0x10000)
            out += char(0xE0 | (cp >> 12)), out += char(0x80 | ((cp >> 6) & 0x3F)), out += char(0x80 | (cp & 0x3F));
        else
            out += char(0xF0 | (cp >> 18)), out += char(0x80 | ((cp >> 12) & 0x3F)),
                out += char(0x80 | ((cp >> 6) & 0x3F)), out += char(0x80 | (cp & 0x3F));
    }
    unsigned hex4() {
        if (at + 4 > s.size()) fail("a \\u escape needs 4 hexadecimal digits");
        unsigned v = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = s[at++];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= unsigned(c - '0');
            else if (c >= 'a' && c <= 'f') v |= unsigned(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= unsigned(c - 'A' + 10);
            else fail("a \\u escape needs 4 hexadecimal digits");
        }
        return v;
    }
    std::string string() {
        ++at;  // the opening quote
        std::string out;
        for (;;) {
            if (at >= s.size()) fail("a string is not closed");
            const char c = s[at++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("a control character inside a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (at >= s.size()) fail("a string is not closed");
            switch (const char e = s[at++]) {
                case '"': case '\\': case '/': out += e; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    unsigned cp = hex4();
                    if (cp >= 0xD800 && cp < 0xDC00) {
                        if (!word("\\u")) fail("a lone UTF-16 surrogate");
                        const unsigned low = hex4();
                        if (low < 0xDC00 || low >= 0xE000) fail("a lone UTF-16 surrogate");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    } else if (cp >= 0xDC00 && cp < 0xE000) {
                        fail("a lone UTF-16 surrogate");
                    }
                    utf8(out, cp);
                    break;
                }
                default: fail("an unknown escape \\" + std::string(1, e));
            }
        }
    }
    value parse_value(std::size_t depth) {
        blanks();
        if (at >= s.size()) fail("the text ends where a value should be");
        value v;
        const char c = s[at];
        if (c == '{' || c == '[') {
            if (depth >= max_depth) fail("nested more than " + std::to_string(max_depth) + " deep");
            ++at;
            const bool object = c == '{';
            v.type = object ? value::kind::object : value::kind::array;
            blanks();
            if (at < s.size() && s[at] == (object ? '}' : ']')) {
                ++at;
                return v;
            }
            std::unordered_set<std::string> seen;  // (a linear look-up per key would be quadratic in a large body)
            for (;;) {
                blanks();
                if (object) {
                    if (at >= s.size() || s[at] != '"') fail("an object's key must be a string");
                    std::string key = string();
                    if (!seen.insert(key).second) fail("the key \"" + key + "\" is repeated");
                    blanks();
                    if (at >= s.size() || s[at] != ':') fail("':' expected after a key");
                    ++at;
                    v.items.push_back(parse_value(depth + 1));
                    v.keys.push_back(std::move(key));
                } else {
                    v.items.push_back(parse_value(depth + 1));
                }
                blanks();
                if (at < s.size() && s[at] == ',') {
                    ++at;
                    continue;
                }
                if (at < s.size() && s[at] == (object ? '}' : ']')) {
                    ++at;
                    return v;
                }
                fail(object ? "',' or '}' expected" : "',' or ']' expected");
            }
        }
        if (c == '"') {
            v.type = value::kind::string;
            v.text = string();
            return v;
        }
        if (word("true")) {
            v.type = value::kind::boolean;
            v.boolean = true;
            return v;
        }
        if (word("false")) {
            v.type = value::kind::boolean;
            return v;
        }
        if (word("null")) return v;
        // A number: -? int frac? exp?
        const std::size_t start = at;
        if (at < s.size() && s[at] == '-') ++at;
        const auto digits = [&] {
            const std::size_t from = at;
            while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
            return at > from;
        };
        if (!digits()) fail("a value expected");
        if (s[start + (s[start] == '-' ? 1 : 0)] == '0' && at - start > std::size_t(s[start] == '-' ? 2 : 1))
            fail("a number with a leading zero");
        if (at < s.size() && s[at] == '.') {
            ++at;
            if (!digits()) fail("digits expected after '.'");
        }
        if (at < s.size() && (s[at] == 'e' || s[at] == 'E')) {
            ++at;
            if (at < s.size() && (s[at] == '+' || s[at] == '-')) ++at;
            if (!digits()) fail("digits expected in an exponent");
        }
        v.type = value::kind::number;
        v.text = std::string(s.substr(start, at - start));
        v.number = std::strtod(v.text.c_str(), nullptr);
        return v;
    }
};

}  // namespace

value parse(std::string_view text, std::size_t max_depth) {
    parser p{text, 0, max_depth};
    value v = p.parse_value(0);
    p.blanks();
    if (p.at != text.size()) p.fail("bytes after the value");
    return v;
}

std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
                    out += buf;
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

std::string number(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

}  // namespace swgpu::io::json
