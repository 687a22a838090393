#include "core/tuning.hpp"

#include <charconv>
#include <cstdlib>
#include <mutex>
#include <system_error>

#include "core/error.hpp"

namespace swgpu::tuning {

// data/tuning.tsv, compiled in by core/CMakeLists.txt.
extern const std::string_view tuning_tsv;

namespace {

// The registry. What each one does, and its default, is in data/tuning.tsv and docs/conventions.md.
constexpr setting known[] = {
    {"search.profile", kind::flag, ""},
    {"sat.profile", kind::flag, ""},
    {"search.boundary_mib", kind::integer, ""},
    {"search.prepare", kind::flag, ""},
    {"search.twin", kind::flag, ""},
    {"search.ramp", kind::flag, ""},
    {"search.reader_stages", kind::integer, "1|2"},
    {"search.multi_gpu_min_cells", kind::real, ""},
    {"search.logical_devices", kind::integer, ""},
    {"search.align_max_cells", kind::real, ""},
    {"long.entry", kind::integer, "-1|0|1|2|3|4|5|6|7|8|9"},
    {"long.gpu_narrow", kind::integer, "0|1"},
    {"long.batch", kind::integer, ""},
    {"long.batch_entry", kind::integer, ""},
    {"long.batch_tracebacks", kind::integer, ""},
    {"long.auto_cells", kind::real, ""},
    {"long.auto_min_side", kind::integer, ""},
    {"long.auto_cells_cpu", kind::real, ""},
    {"long.auto_min_side_cpu", kind::integer, ""},
    {"long.hsp_cells", kind::real, ""},
    {"long.cpu_task_tiles", kind::integer, ""},
    {"long.cpu_narrow", kind::integer, "0|1"},
    {"long.cpu_schedule", kind::text, "waves|dataflow"},
    {"long.profile", kind::flag, ""},
    {"long.peer", kind::flag, ""},
    {"long.split", kind::text, "rows|columns"},
    {"long.split_cells", kind::real, ""},
    {"long.split_forced", kind::flag, ""},
    {"sor.lex", kind::text, "strips|tiled|rowsync|diagonal"},
    {"sor.batch", kind::integer, ""},
    {"sor.cpu_one_thread_below", kind::integer, ""},
    {"sweep.schedule", kind::text, "auto|tiles|grid|launch"},
    {"sweep.tile", kind::integer, "0|8|16"},
    {"sweep.block", kind::integer, ""},
    {"levels.analysis", kind::text, "auto|syncfree|frontiers"},
    {"levels.frontier_cap", kind::integer, ""},
    {"levels.chained", kind::flag, ""},
    {"levels.frontier_blocks", kind::integer, ""},
    {"levels.grid_blocks", kind::integer, ""},
    {"levels.cpu_sequential_width", kind::real, ""},
    {"host.memory_mib", kind::integer, ""},
    {"host.reader_threads", kind::integer, ""},
};

const setting* find_setting(std::string_view key) {
    for (const auto& s : known)
        if (s.key == key) return &s;
    return nullptr;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

std::optional<std::int64_t> to_integer(std::string_view v) {
    std::int64_t x = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc() || end != v.data() + v.size() || v.empty()) return std::nullopt;
    return x;
}

std::optional<double> to_real(std::string_view v) {
    double x = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc() || end != v.data() + v.size() || v.empty()) return std::nullopt;
    return x;
}

std::optional<bool> to_flag(std::string_view v) {
    if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
    if (v == "0" || v == "false" || v == "no" || v == "off") return false;
    return std::nullopt;
}

const char* name_of(kind k) {
    switch (k) {
    case kind::integer: return "an integer";
    case kind::real: return "a number";
    case kind::flag: return "0 or 1";
    case kind::text: return "a word";
    }
    return "";
}

// What is wrong with `value` for `s`, or empty.
std::string value_problem(const setting& s, std::string_view value) {
    bool typed = false;
    switch (s.type) {
    case kind::integer: typed = to_integer(value).has_value(); break;
    case kind::real: typed = to_real(value).has_value(); break;
    case kind::flag: typed = to_flag(value).has_value(); break;
    case kind::text: typed = !value.empty(); break;
    }
    bool chosen = s.choices.empty();
    for (std::string_view rest = s.choices; !chosen && !rest.empty();) {
        const std::size_t bar = rest.find('|');
        chosen = rest.substr(0, bar) == value;
        rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
    }
    if (typed && chosen) return {};
    const std::string takes = s.choices.empty() ? name_of(s.type) : "one of " + std::string(s.choices);
    return std::string(s.key) + " takes " + takes + ", not \"" + std::string(value) + "\"";
}

// The keys set by scoped_override, under their mutex.
std::mutex& scoped_mutex() {
    static std::mutex m;
    return m;
}
std::map<std::string, std::string, std::less<>>& scoped_values() {
    static std::map<std::string, std::string, std::less<>> values;
    return values;
}

// SWGPU_TUNE, parsed at the first lookup (a malformed value throws at every lookup).
const std::map<std::string, std::string, std::less<>>& environment() {
    static const auto values = [] {
        const char* e = std::getenv("SWGPU_TUNE");
        return parse_overrides(e ? e : "");
    }();
    return values;
}

std::string value_of(std::string_view key, std::string_view arch, kind type) {
    const setting* s = find_setting(key);
    if (!s || s->type != type)
        throw runtime_failure("internal error: tuning key \"" + std::string(key) +
                              "\" is not a known setting of that type");
    {
        const std::lock_guard lock(scoped_mutex());
        const auto& scoped = scoped_values();
        if (const auto it = scoped.find(key); it != scoped.end()) return it->second;
    }
    const auto& env = environment();
    if (const auto it = env.find(key); it != env.end()) return it->second;
    if (const std::string* v = builtin_table().find(key, arch)) return *v;
    throw runtime_failure("internal error: data/tuning.tsv has no \"*\" row for " + std::string(key));
}

}  // namespace

std::span<const setting> settings() { return known; }

std::string known_keys() {
    std::string keys;
    for (const auto& s : known) keys += (keys.empty() ? "" : ", ") + std::string(s.key);
    return keys;
}

std::int64_t integer(std::string_view key, std::string_view arch) {
    return *to_integer(value_of(key, arch, kind::integer));
}
double real(std::string_view key, std::string_view arch) { return *to_real(value_of(key, arch, kind::real)); }
std::string text(std::string_view key, std::string_view arch) { return value_of(key, arch, kind::text); }
bool flag(std::string_view key, std::string_view arch) { return *to_flag(value_of(key, arch, kind::flag)); }

void check_environment() { (void)environment(); }

table table::parse(std::string_view tsv, std::string_view source) {
    table t;
    int line_number = 0;
    for (std::size_t at = 0; at < tsv.size();) {
        std::size_t end = tsv.find('\n', at);
        if (end == std::string_view::npos) end = tsv.size();
        const std::string_view line = trim(tsv.substr(at, end - at));
        at = end + 1;
        ++line_number;
        if (line.empty() || line[0] == '#' || line.rfind("device\t", 0) == 0) continue;
        std::string_view fields[3];
        std::string_view rest = line;
        int count = 0;
        for (; count < 3 && !rest.empty(); ++count) {
            const std::size_t tab = rest.find('\t');
            fields[count] = trim(rest.substr(0, tab));
            rest = tab == std::string_view::npos ? std::string_view() : rest.substr(tab + 1);
        }
        const std::string where = std::string(source) + ":" + std::to_string(line_number) + ": ";
        if (count < 3 || fields[0].empty() || fields[1].empty())
            throw runtime_failure(where + "expected device<TAB>key<TAB>value[<TAB>comment]");
        const setting* s = find_setting(fields[1]);
        if (!s)
            throw runtime_failure(where + "unknown key \"" + std::string(fields[1]) + "\"; known keys: " +
                                  known_keys());
        if (const std::string problem = value_problem(*s, fields[2]); !problem.empty())
            throw runtime_failure(where + problem);
        const auto row = std::pair{std::string(fields[0]), std::string(fields[1])};
        if (!t.rows_.emplace(row, std::string(fields[2])).second)
            throw runtime_failure(where + "a second row for " + std::string(fields[0]) + " " + std::string(fields[1]));
    }
    return t;
}

const std::string* table::find(std::string_view key, std::string_view arch) const {
    if (!arch.empty() && arch != "*")
        if (const auto it = rows_.find(std::pair{std::string(arch), std::string(key)}); it != rows_.end())
            return &it->second;
    if (const auto it = rows_.find(std::pair{std::string("*"), std::string(key)}); it != rows_.end())
        return &it->second;
    return nullptr;
}

const table& builtin_table() {
    static const table t = [] {
        table parsed = table::parse(tuning_tsv, "data/tuning.tsv");
        for (const auto& s : known)
            if (!parsed.find(s.key, "*"))
                throw runtime_failure("internal error: data/tuning.tsv has no \"*\" row for " + std::string(s.key));
        return parsed;
    }();
    return t;
}

std::map<std::string, std::string, std::less<>> parse_overrides(std::string_view spec, std::string_view source) {
    std::map<std::string, std::string, std::less<>> values;
    const auto fail = [&](const std::string& what) {
        return usage_error(std::string(source) + ": " + what + "; expected key=value[,key=value...] with keys " +
                           known_keys());
    };
    if (trim(spec).empty()) return values;
    for (std::string_view rest = spec; ;) {
        const std::size_t comma = rest.find(',');
        const std::string_view entry = trim(rest.substr(0, comma));
        const std::size_t eq = entry.find('=');
        if (eq == std::string_view::npos) throw fail("\"" + std::string(entry) + "\" is not key=value");
        const std::string_view key = trim(entry.substr(0, eq)), value = trim(entry.substr(eq + 1));
        const setting* s = find_setting(key);
        if (!s) throw fail("unknown key \"" + std::string(key) + "\"");
        if (const std::string problem = value_problem(*s, value); !problem.empty()) throw fail(problem);
        values[std::string(key)] = std::string(value);
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
    }
    return values;
}

scoped_override::scoped_override(std::string_view spec) {
    const auto values = parse_overrides(spec, "tuning override");
    const std::lock_guard lock(scoped_mutex());
    auto& scoped = scoped_values();
    for (const auto& [key, value] : values) {
        const auto it = scoped.find(key);
        saved_.emplace_back(key, it == scoped.end() ? std::nullopt : std::optional<std::string>(it->second));
        scoped[key] = value;
    }
}

scoped_override::~scoped_override() {
    const std::lock_guard lock(scoped_mutex());
    auto& scoped = scoped_values();
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
        if (it->second) scoped[it->first] = *it->second;
        else scoped.erase(it->first);
    }
}

}  // namespace swgpu::tuning
