#include "core/text.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace swgpu {

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

std::string wrapped(const std::string& text, const std::string& indent, std::size_t width) {
    std::string out, line;
    std::size_t at = 0;
    while (at < text.size()) {
        auto end = text.find(' ', at);
        if (end == std::string::npos) end = text.size();
        const std::string word = text.substr(at, end - at);
        at = end + 1;
        if (!line.empty() && line.size() + 1 + word.size() > width) {
            out += line + "\n" + indent;
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    return out + line;
}

std::string nearest_name(const std::string& word, const std::vector<std::string>& names) {
    std::string nearest;
    std::size_t best = SIZE_MAX;
    for (const std::string& name : names)
        if (const std::size_t d = edit_distance(word, name); d < best) best = d, nearest = name;
    return best <= std::max<std::size_t>(2, word.size() / 3) ? nearest : std::string();
}

std::string options_as_names(const std::string& text) {
    std::string out;
    for (std::size_t k = 0; k < text.size(); ++k) {
        const bool option = text.compare(k, 2, "--") == 0 && k + 2 < text.size() && text[k + 2] >= 'a' &&
                            text[k + 2] <= 'z' && (k == 0 || text[k - 1] == ' ' || text[k - 1] == '(' ||
                                                   text[k - 1] == '/' || text[k - 1] == '\'');
        if (!option) {
            out += text[k];
            continue;
        }
        for (k += 2; k < text.size() && ((text[k] >= 'a' && text[k] <= 'z') || (text[k] >= '0' && text[k] <= '9') ||
                                         text[k] == '-');
             ++k)
            out += text[k] == '-' ? '_' : text[k];
        --k;
    }
    return out;
}

}  // namespace swgpu
