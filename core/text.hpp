// Text for messages and help: the edit distance between two words (the nearest name to a mistyped one), and words
// wrapped into lines.
#pragma once

#include <cstddef>
#include <string>

namespace swgpu {

// Levenshtein distance: the fewest insertions, deletions and substitutions of characters that turn `a` into `b`.
std::size_t edit_distance(const std::string& a, const std::string& b);

// The space-separated words of `text` in lines of at most `width` characters (a longer word alone on its line), the
// continuation lines indented by `indent`; no final line end.
std::string wrapped(const std::string& text, const std::string& indent, std::size_t width);

}  // namespace swgpu
