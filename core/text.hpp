// Text for messages and help: the edit distance between two words (the nearest name to a mistyped one), words
// wrapped into lines, and command-line options in a message named as settings (the library's messages).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace swgpu {

// Levenshtein distance: the fewest insertions, deletions and substitutions of characters that turn `a` into `b`.
std::size_t edit_distance(const std::string& a, const std::string& b);
// The first of `names` nearest to `word` by edit_distance when it is near enough to be what was meant (at most
// max(2, |word| / 3) edits); empty otherwise.
std::string nearest_name(const std::string& word, const std::vector<std::string>& names);

// The space-separated words of `text` in lines of at most `width` characters (a longer word alone on its line), the
// continuation lines indented by `indent`; no final line end.
std::string wrapped(const std::string& text, const std::string& indent, std::size_t width);

// `text` with the command-line options it names ("--" and a lower-case letter, at the start or after a space, '(',
// '/' or '\'') named as settings: the dashes before dropped, those inside as underscores ("--gap-open" as
// "gap_open"); other double dashes ("a--b.fa", "3--4") kept.
std::string options_as_names(const std::string& text);

}  // namespace swgpu
