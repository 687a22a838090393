// A small JSON reader and writer for the service's requests and answers (RFC 8259: objects, arrays, strings with
// escapes and UTF-16 surrogate pairs, numbers, true, false, null). The reader bounds depth and refuses trailing bytes;
// errors are swgpu::error with exit code bad_command_line naming the byte offset.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace swgpu::io::json {

struct value {
    enum class kind { null, boolean, number, string, array, object } type = kind::null;
    bool boolean = false;
    double number = 0;
    std::string text;                             // a string; a number as written
    std::vector<value> items;                     // an array's items; an object's values, in order
    std::vector<std::string> keys;                // an object's keys, one per item (a repeated key is refused)
    const value* find(std::string_view key) const;
    std::string_view type_name() const;
};

// Parses one JSON text (at most `max_depth` nested arrays and objects).
value parse(std::string_view text, std::size_t max_depth = 32);

// `s` as a JSON string literal, with its quotes (control bytes escaped; other bytes as they are).
std::string quoted(std::string_view s);
// A number as JSON writes it: shortest round-trip form; NaN and infinities as null.
std::string number(double v);

}  // namespace swgpu::io::json
