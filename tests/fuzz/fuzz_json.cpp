// libFuzzer target: the service's JSON reader (io/serve/json.hpp) on arbitrary bytes. Built and run by
// scripts/fuzz.sh, outside the normal build. The only outcome allowed besides success is swgpu::error with exit code
// bad_command_line; a value read is written again (strings through json::quoted, numbers as read) and must read back
// as the same value.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "io/serve/json.hpp"

namespace {

using swgpu::io::json::value;

std::string written(const value& v) {
    switch (v.type) {
        case value::kind::null: return "null";
        case value::kind::boolean: return v.boolean ? "true" : "false";
        case value::kind::number: return v.text;
        case value::kind::string: return swgpu::io::json::quoted(v.text);
        case value::kind::array: {
            std::string out = "[";
            for (std::size_t k = 0; k < v.items.size(); ++k) out += (k ? "," : "") + written(v.items[k]);
            return out + "]";
        }
        case value::kind::object: {
            std::string out = "{";
            for (std::size_t k = 0; k < v.keys.size(); ++k)
                out += (k ? "," : "") + swgpu::io::json::quoted(v.keys[k]) + ":" + written(v.items[k]);
            return out + "}";
        }
    }
    std::abort();
}

bool same(const value& a, const value& b) {
    if (a.type != b.type || a.boolean != b.boolean || a.text != b.text || a.items.size() != b.items.size() ||
        a.keys != b.keys)
        return false;
    for (std::size_t k = 0; k < a.items.size(); ++k)
        if (!same(a.items[k], b.items[k])) return false;
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    value v;
    try {
        v = swgpu::io::json::parse(text);
    } catch (const swgpu::error& e) {
        if (e.code() != swgpu::exit_code::bad_command_line) std::abort();
        return 0;
    }
    try {
        if (!same(v, swgpu::io::json::parse(written(v)))) std::abort();
    } catch (const swgpu::error&) {
        std::abort();  // what was read, written again, must read
    }
    return 0;
}
