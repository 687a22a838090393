#include "io/align/batch_list.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "io/output_file.hpp"

namespace swgpu::io {

std::vector<batch_entry> parse_batch_list(std::string_view text, const std::string& list, const std::string& folder) {
    std::istringstream in{std::string(text)};
    const std::filesystem::path dir = folder.empty() || folder == "-" ? std::filesystem::path(".") : std::filesystem::path(folder);
    std::vector<batch_entry> out;
    std::set<std::string> outputs;
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const auto first = line.find_first_not_of(" \t");
        if (first == std::string::npos || line[first] == '#') continue;
        std::vector<std::string> fields;
        const char* separators = line.find('\t') != std::string::npos ? "\t" : " ";
        for (std::size_t at = 0; at < line.size();) {
            const auto end = std::min(line.find_first_of(separators, at), line.size());
            if (end > at) fields.push_back(line.substr(at, end - at));
            at = end + 1;
        }
        if (fields.size() > 2)
            throw input_error(list + ":" + std::to_string(number), "expected QUERY [OUTPUT], found " +
                                                                       std::to_string(fields.size()) + " fields");
        // OUTPUT, relative to the -o folder unless absolute; else QUERY's file name + ".out" there.
        const std::filesystem::path given = fields.size() == 2 ? std::filesystem::path(fields[1])
                                                               : std::filesystem::path(fields[0]).filename();
        batch_entry e{fields[0], fields.size() == 2 ? (given.is_absolute() ? given : dir / given).string()
                                                    : (dir / (given.string() + ".out")).string()};
        if (e.query == "-") throw input_error(list + ":" + std::to_string(number), "stdin cannot be a --batch query file");
        if (!outputs.insert(e.out).second)
            throw input_error(list + ":" + std::to_string(number), "output " + e.out + " is listed twice");
        out.push_back(std::move(e));
    }
    if (out.empty()) throw input_error(list, "the --batch list names no query file");
    return out;
}

std::vector<batch_entry> read_batch_list(const std::string& list, const std::string& folder) {
    std::ifstream in(list);
    if (!in) throw input_error(list, "cannot read the --batch list");
    std::ostringstream text;
    text << in.rdbuf();  // a list that cannot be read past its opening (a folder) reads as empty, as line by line
    return parse_batch_list(std::move(text).str(), list, folder);
}

void prepare_batch_outputs(const std::string& folder, const std::vector<batch_entry>& entries, bool create) {
    if (!entries.empty() && create && !folder.empty() && folder != "-" && !std::filesystem::exists(folder)) {
        std::error_code ec;
        std::filesystem::create_directories(folder, ec);
        if (ec) throw output_error(folder, "cannot create the folder of the --batch outputs: " + ec.message());
    }
    for (const auto& b : entries) check_writable_folder(b.out);
}

}  // namespace swgpu::io
