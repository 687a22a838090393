// The --batch list of `swgpu align`: one "QUERY [OUTPUT]" per line (fields split at a tab when the line has one,
// else at blanks), blank lines and lines starting with '#' (after blanks) skipped, CRLF line ends accepted. OUTPUT
// defaults to the query file's name with ".out" appended, in `folder` (-o; the current folder when it is empty or
// "-"); a relative OUTPUT is taken in `folder` too. Refused, as input_error naming LIST:LINE: more than two fields,
// "-" (stdin) as a query, an output listed twice; and a list that names no query file (LIST).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace swgpu::io {

// One line of a --batch list: a query file and where its output goes.
struct batch_entry {
    std::string query, out;
};

// The list's text, `list` naming it in messages.
std::vector<batch_entry> parse_batch_list(std::string_view text, const std::string& list, const std::string& folder);
// The list file `list` (input_error when it cannot be read).
std::vector<batch_entry> read_batch_list(const std::string& list, const std::string& folder);
// Before the search: with `create` (the process that writes) and entries, the -o `folder` of the outputs created when
// missing (output_error when it cannot be); the folder of every entry's output checked writable.
void prepare_batch_outputs(const std::string& folder, const std::vector<batch_entry>& entries, bool create);

}  // namespace swgpu::io
