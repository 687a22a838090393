// A dot plot of the printed alignments (--dotplot FILE): one SVG panel, written by hand.
//
// x is the subject position, y the query position, with the origin at the top left and the query growing downwards,
// as dot plots of genome comparisons usually are. The frame spans the longest subject and the longest query that have
// a printed hit (every hit is drawn in the same panel, in its own sequences' coordinates); the axes are labelled with
// the names and lengths of those sequences and carry tick labels. Each printed hit is one polyline: its alignment path
// (diagonal runs, a gap in the subject vertical, a gap in the query horizontal). A minus-strand hit is drawn in BLAST's
// view, the query on its plus strand (so its path runs up and to the right), in a second colour.
//
// Paths are decimated so that the file stays small (under about 1 MB) whatever the alignments' lengths: a path with
// few gap corners keeps every corner; otherwise it keeps a point every k columns (and both ends), k chosen so that a
// hit has at most dotplot_max_points_per_hit points, fewer when many hits share the file's budget.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/align/search/pipeline.hpp"
#include "io/output_file.hpp"
#include "io/align/output.hpp"

namespace swgpu::io {

inline constexpr std::size_t dotplot_max_points_per_hit = 20000;
inline constexpr std::size_t dotplot_max_points = 60000;  // over all hits of a file (about 14 bytes a point)

// A corner of an alignment path in residue boundaries: (s, q) is the point after s subject residues and q query
// residues, so the path of a plus-strand hit runs from (subject_begin, query_begin) to (subject_end + 1,
// query_end + 1). For a minus-strand hit q is on the query's plus strand (query_length - q of the searched strand):
// the path runs from (sstart - 1, qend) to (send, qstart - 1) in BLAST's 1-based coordinates.
struct path_point {
    std::int64_t subject = 0, query = 0;
    bool operator==(const path_point&) const = default;
};

// The path of a hit's alignment (hit.aln), at most max(2, max_points) points, first and last always the path's ends.
// Empty when the hit carries no alignment.
std::vector<path_point> alignment_path(const printed_hit& hit, std::size_t query_length, std::size_t max_points);

// Writes the dot plot of every printed hit to `path`, atomically (io::output_file; "-" is stdout). The hits must
// carry their alignments (finish_options::alignments); a hit without one is not drawn. Throws swgpu::error
// output_failed when the file cannot be written.
void write_dotplot(const std::string& path, const results_view& results);
// The same into a file opened by the caller (open it before the search, so an unwritable destination fails before any
// work, as -o does). Does not commit it: the caller commits it with its other outputs (io::commit_all), so that a
// failure to write either leaves neither.
void write_dotplot(const results_view& results, text_sink& out);

}  // namespace swgpu::io
