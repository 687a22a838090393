// Tuning as data: the settings that benchmarks fit per GPU architecture, and the switches of tests and measurements,
// by name ("long.batch", "sor.lex"). Their values come from data/tuning.tsv, compiled into the program (a row per
// device and key: "sm_90" rows hold what was fitted on that architecture, "*" rows the defaults); the environment
// variable SWGPU_TUNE="key=value[,key=value...]", read once, overrides them for a run; inside a process,
// scoped_override does so for a scope (tests). docs/conventions.md ("Tuning") lists the keys. Host code only: the GPU
// backend looks values up before its launches, at each call (nothing here is hot).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace swgpu::tuning {

enum class kind { integer, real, text, flag };

// A known setting: its key, the type of its value, the values it takes ("rows|columns"; empty: any of its type).
struct setting {
    std::string_view key;
    kind type;
    std::string_view choices;
};

// Every known setting.
std::span<const setting> settings();
// The known keys, comma-separated (for messages).
std::string known_keys();

// The value of `key` for a device of architecture `arch` ("sm_90"; "" or "*" for host settings): a scoped_override's,
// else SWGPU_TUNE's, else the table's row for `arch`, else its "*" row. An unknown key, or asking for another type
// than the key's, is an internal error (runtime_failure); a malformed SWGPU_TUNE a usage_error (exit code 2).
std::int64_t integer(std::string_view key, std::string_view arch = "*");
double real(std::string_view key, std::string_view arch = "*");
std::string text(std::string_view key, std::string_view arch = "*");
bool flag(std::string_view key, std::string_view arch = "*");

// Parses SWGPU_TUNE (once), so that a malformed value fails before any work: a usage_error.
void check_environment();

// A table as data/tuning.tsv holds it: lines "device<TAB>key<TAB>value[<TAB>comment]", a header line starting with
// "device", blank lines and '#' comments.
class table {
public:
    // A malformed line, an unknown key, a value its key does not take or a repeated (device, key) is a
    // runtime_failure naming `source` and the line.
    static table parse(std::string_view tsv, std::string_view source);
    // The value of `key` for `arch` ("" counts as "*"), else the "*" row's; nullptr when neither is there.
    const std::string* find(std::string_view key, std::string_view arch) const;

private:
    std::map<std::pair<std::string, std::string>, std::string, std::less<>> rows_;  // (device, key) -> value
};

// The compiled-in data/tuning.tsv (every known key has a "*" row: checked at the first use).
const table& builtin_table();

// "key=value[,key=value...]" (spaces around the parts are ignored; an empty string sets nothing) as a map. An entry
// without '=', an unknown key or a value its key does not take is a one-line usage_error naming `source`, the entry,
// the expected form and the known keys.
std::map<std::string, std::string, std::less<>> parse_overrides(std::string_view spec,
                                                                std::string_view source = "SWGPU_TUNE");

// Overrides keys for its lifetime, ahead of SWGPU_TUNE and the table (tests): scoped_override s("sor.lex=diagonal").
// Destruction restores what the keys were. Scopes nest; lookups from other threads see the override while it lives.
class scoped_override {
public:
    explicit scoped_override(std::string_view spec);
    ~scoped_override();
    scoped_override(const scoped_override&) = delete;
    scoped_override& operator=(const scoped_override&) = delete;

private:
    std::vector<std::pair<std::string, std::optional<std::string>>> saved_;  // each key's value before, in order set
};

}  // namespace swgpu::tuning
