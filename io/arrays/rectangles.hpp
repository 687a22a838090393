// Rectangle queries for `swgpu sat --query` and `swgpu ihist --query`: a TSV file with one rectangle per line,
// `top<TAB>left<TAB>bottom<TAB>right`, 0-based inclusive row and column bounds (any run of spaces or tabs separates);
// blank lines and lines starting with '#' are skipped. A line that is not four integers is an input_error naming the
// file and line; whether a rectangle lies inside the image is checked later (sat::check_rects) with the same line.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/numerics/sat.hpp"

namespace swgpu::io {

struct rect_list {
    std::vector<sat::rect> rects;
    std::vector<std::size_t> lines;  // the 1-based line of each rectangle
};

rect_list read_rects(const std::string& path);
rect_list parse_rects(const std::string& text, const std::string& name);

}  // namespace swgpu::io
