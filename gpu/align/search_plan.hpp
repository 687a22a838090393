// The work list of the GPU score pass, built on the host: queries paired by length (two alignments share a 32-bit
// word, one per 16-bit lane), and block tasks (one query pair against a run of consecutive length-sorted subjects of one
// class). Tasks of one (class, columns per thread) form a group, which one kernel launch runs; inside a group, tasks
// come longest subjects first (then longest pairs first), so that the persistent blocks finish together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/align/sequence.hpp"
#include "gpu/align/db_layout.hpp"

namespace swgpu::gpu {

// One word of the kernel holds `lanes` alignments: 2 (16-bit lanes) or 1 (32-bit). query[1] is -1 when a query has no
// partner in 32-bit lanes. A 16-bit query without a partner (one query, or an odd count) is a twin: query[1] ==
// query[0], and each group of its tasks aligns it against two subjects at once, one per lane, so that no lane idles. The profile of a pair is `profile_rows` rows (one per residue letter, the
// pad letter last) of padded_length words: word (x, c) holds the substitution score of letter x against column c of
// each lane's query, or the pad score past that query's end.
struct query_pair {
    std::int32_t query[2] = {-1, -1};
    std::uint32_t length = 0;          // the longer query's length
    std::uint32_t padded_length = 0;   // length rounded up to the column multiple
    std::uint64_t profile_offset = 0;  // in words, into the profile buffer
    std::uint32_t twin = 0;            // 1: one query in both lanes, two subjects per group
};

// A block task: pair `pair` against subjects task_subjects[first, first + count), all of class `cls`, with `regs`
// query columns per thread (regs_for below); tasks of one (cls, regs) run in one launch.
struct search_task {
    std::uint32_t pair = 0;
    std::uint32_t first = 0;
    std::uint16_t count = 0;   // subjects: up to a block's groups, twice that for a twin pair
    std::uint8_t cls = 0;
    std::uint8_t regs = 0;
    float cost = 0;  // cells the task's groups spend, padding included (for ordering)
};

// Tasks [first, first + count) of a plan, all of one class and columns-per-thread count.
struct task_group {
    std::size_t first = 0, count = 0;
    int cls = 0, regs = 0;
    bool twin = false;  // the tasks of twin pairs (their own kernels)
    double cost = 0;  // sum of the tasks' costs
};

struct search_plan {
    std::vector<query_pair> pairs;
    std::vector<search_task> tasks;
    std::vector<task_group> groups;            // by decreasing cost
    std::vector<std::uint32_t> task_subjects;  // sorted-subject indices
    std::uint64_t cells = 0;                   // real cells: sum of query length x subject length
};

// Pairs the non-empty queries among `query_ids` by length (longest first; consecutive ones share a word when
// lanes == 2; with `twins`, a query left without a partner is a twin pair). column_multiple: every class's pass width
// divides it.
std::vector<query_pair> pair_queries(const sequence_set& queries, std::span<const std::uint32_t> query_ids, int lanes,
                                     int profile_rows, std::uint32_t column_multiple, bool twins = false);

// Every pair against every non-empty subject of the database (twin pairs: two consecutive subjects per group).
search_plan plan_all(std::vector<query_pair> pairs, const sequence_set& queries, const packed_db& db,
                     int block_threads, std::span<const length_class> classes = search_classes);

// Pair p against the sorted subjects subjects_of[p] (any order; sorted here). No twin pairs.
search_plan plan_listed(std::vector<query_pair> pairs, const sequence_set& queries,
                        std::vector<std::vector<std::uint32_t>> subjects_of, const packed_db& db, int block_threads,
                        std::span<const length_class> classes = search_classes);

// The widest pass of a class (query columns per pass) and the multiple that every class's widest pass divides.
inline std::uint32_t pass_width(const length_class& c) { return static_cast<std::uint32_t>(c.group_size * c.regs); }
std::uint32_t column_multiple(std::span<const length_class> classes = search_classes);

// Columns per thread for a query (pair) of `length` in class c: as few passes as the class's widest pass allows, then
// the fewest columns per thread that cover the length in that many passes (so at most passes x group_size - 1
// columns are padding). The kernel runs ceil(length / (group_size x regs)) passes.
int regs_for(std::uint32_t length, const length_class& c);

}  // namespace swgpu::gpu
