#include "io/arrays/rectangles.hpp"

#include <sstream>

#include "core/error.hpp"
#include "io/arrays/npy.hpp"

namespace swgpu::io {

rect_list parse_rects(const std::string& text, const std::string& name) {
    rect_list out;
    std::istringstream in(text);
    std::size_t line_no = 0;
    for (std::string line; std::getline(in, line);) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const auto first = line.find_first_not_of(" \t");
        if (first == std::string::npos || line[first] == '#') continue;
        std::istringstream fields(line);
        long long v[4];
        int n = 0;
        for (std::string f; n < 5 && fields >> f;) {
            if (n == 4) {
                n = 5;
                break;
            }
            std::size_t used = 0;
            try {
                v[n] = std::stoll(f, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != f.size())
                throw input_error(name + ":" + std::to_string(line_no), "'" + f + "' is not an integer; expected top left bottom right");
            ++n;
        }
        if (n != 4)
            throw input_error(name + ":" + std::to_string(line_no),
                              "expected four integers (top left bottom right, 0-based inclusive)");
        out.rects.push_back({v[0], v[1], v[2], v[3]});
        out.lines.push_back(line_no);
    }
    return out;
}

rect_list read_rects(const std::string& path) { return parse_rects(read_file_bytes(path), path); }

}  // namespace swgpu::io
