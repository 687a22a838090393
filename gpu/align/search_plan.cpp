#include "gpu/align/search_plan.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace swgpu::gpu {

std::uint32_t column_multiple(std::span<const length_class> classes) {
    std::uint32_t m = 1;
    for (const auto& c : classes) m = std::lcm(m, pass_width(c));
    return m;
}

int regs_for(std::uint32_t length, const length_class& c) {
    const std::uint64_t widest = pass_width(c);
    const std::uint64_t passes = std::max<std::uint64_t>(1, (length + widest - 1) / widest);
    const std::uint64_t per_pass = passes * static_cast<std::uint64_t>(c.group_size);
    return static_cast<int>(std::max<std::uint64_t>(1, (length + per_pass - 1) / per_pass));
}

std::vector<query_pair> pair_queries(const sequence_set& queries, std::span<const std::uint32_t> query_ids, int lanes,
                                     int profile_rows, std::uint32_t column_multiple, bool twins) {
    std::vector<std::uint32_t> ids;
    for (const std::uint32_t q : query_ids)
        if (queries.length(q) > 0) ids.push_back(q);
    // Longest first, ties by index: partners differ little in length, so few lane columns are padding.
    std::stable_sort(ids.begin(), ids.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return queries.length(a) > queries.length(b); });
    std::vector<query_pair> pairs;
    std::uint64_t offset = 0;
    for (std::size_t k = 0; k < ids.size(); k += static_cast<std::size_t>(lanes)) {
        query_pair p;
        p.query[0] = static_cast<std::int32_t>(ids[k]);
        if (lanes == 2 && k + 1 < ids.size()) p.query[1] = static_cast<std::int32_t>(ids[k + 1]);
        if (lanes == 2 && twins && p.query[1] < 0) p.query[1] = p.query[0], p.twin = 1;
        p.length = static_cast<std::uint32_t>(queries.length(ids[k]));
        p.padded_length = (p.length + column_multiple - 1) / column_multiple * column_multiple;
        p.profile_offset = offset;
        offset += static_cast<std::uint64_t>(profile_rows) * p.padded_length;
        pairs.push_back(p);
    }
    return pairs;
}

namespace {

// Passes x pass width x streamed rows (subject + skew): the cells a task's groups spend, padding included.
double task_cost(const query_pair& p, const length_class& c, int regs, std::uint32_t longest_subject) {
    const double width = double(c.group_size) * regs;
    const double passes = std::ceil(p.length / width);
    return passes * width * (double(longest_subject) + c.group_size - 1);
}

void order_groups(search_plan& plan) {
    std::stable_sort(plan.groups.begin(), plan.groups.end(),
                     [](const task_group& a, const task_group& b) { return a.cost > b.cost; });
}

}  // namespace

search_plan plan_all(std::vector<query_pair> pairs, const sequence_set& queries, const packed_db& db,
                     int block_threads, std::span<const length_class> classes) {
    search_plan plan;
    plan.pairs = std::move(pairs);
    plan.task_subjects.resize(db.size());
    std::iota(plan.task_subjects.begin(), plan.task_subjects.end(), 0u);
    for (std::size_t c = 0; c < classes.size(); ++c) {
        const std::uint32_t begin = db.class_begin[c], end = db.class_begin[c + 1];
        if (begin == end) continue;
        const std::uint32_t groups = static_cast<std::uint32_t>(block_threads / classes[c].group_size);
        // The pairs of each columns-per-thread count and kind (twin or not), longest first (pairs come longest first).
        std::vector<std::vector<std::uint32_t>> pairs_of(2 * (static_cast<std::size_t>(classes[c].regs) + 1));
        for (std::uint32_t p = 0; p < plan.pairs.size(); ++p)
            pairs_of[2 * static_cast<std::size_t>(regs_for(plan.pairs[p].length, classes[c])) + plan.pairs[p].twin]
                .push_back(p);
        for (int kind = 0; kind < 2 * (classes[c].regs + 1); ++kind) {
            const int regs = classes[c].regs - kind / 2;
            const bool twin = kind % 2 == 1;
            if (regs < 1) break;
            const auto& group_pairs = pairs_of[2 * static_cast<std::size_t>(regs) + (twin ? 1 : 0)];
            if (group_pairs.empty()) continue;
            const std::uint32_t per_task = twin ? 2 * groups : groups;
            task_group group;
            group.first = plan.tasks.size();
            group.cls = static_cast<int>(c);
            group.regs = regs;
            group.twin = twin;
            // Chunks of per_task subjects from the class's start; taken from the longest chunk down.
            const std::uint32_t chunks = (end - begin + per_task - 1) / per_task;
            for (std::uint32_t k = chunks; k-- > 0;) {
                const std::uint32_t first = begin + k * per_task;
                const std::uint32_t count = std::min(per_task, end - first);
                for (const std::uint32_t p : group_pairs) {
                    search_task t;
                    t.pair = p;
                    t.first = first;
                    t.count = static_cast<std::uint16_t>(count);
                    t.cls = static_cast<std::uint8_t>(c);
                    t.regs = static_cast<std::uint8_t>(regs);
                    t.cost = static_cast<float>(task_cost(plan.pairs[p], classes[c], regs, db.length[first + count - 1]));
                    group.cost += t.cost;
                    plan.tasks.push_back(t);
                }
            }
            group.count = plan.tasks.size() - group.first;
            plan.groups.push_back(group);
        }
    }
    for (const auto& p : plan.pairs)
        for (int l = 0; l < (p.twin ? 1 : 2); ++l)
            if (p.query[l] >= 0) plan.cells += queries.length(static_cast<std::size_t>(p.query[l])) * db.total_residues;
    order_groups(plan);
    return plan;
}

search_plan plan_listed(std::vector<query_pair> pairs, const sequence_set& queries,
                        std::vector<std::vector<std::uint32_t>> subjects_of, const packed_db& db, int block_threads,
                        std::span<const length_class> classes) {
    search_plan plan;
    plan.pairs = std::move(pairs);
    std::vector<search_task> tasks;
    for (std::uint32_t p = 0; p < plan.pairs.size(); ++p) {
        auto& list = subjects_of[p];
        std::sort(list.begin(), list.end());
        std::uint64_t residues = 0;
        for (std::size_t c = 0; c < classes.size(); ++c) {
            const std::uint32_t per_task = static_cast<std::uint32_t>(block_threads / classes[c].group_size);
            const int regs = regs_for(plan.pairs[p].length, classes[c]);
            const auto lo = std::lower_bound(list.begin(), list.end(), db.class_begin[c]);
            const auto hi = std::lower_bound(list.begin(), list.end(), db.class_begin[c + 1]);
            for (auto it = lo; it < hi; it += std::min<std::ptrdiff_t>(per_task, hi - it)) {
                search_task t;
                t.pair = p;
                t.first = static_cast<std::uint32_t>(plan.task_subjects.size());
                t.count = static_cast<std::uint16_t>(std::min<std::ptrdiff_t>(per_task, hi - it));
                t.cls = static_cast<std::uint8_t>(c);
                t.regs = static_cast<std::uint8_t>(regs);
                plan.task_subjects.insert(plan.task_subjects.end(), it, it + t.count);
                t.cost = static_cast<float>(task_cost(plan.pairs[p], classes[c], regs, db.length[*(it + t.count - 1)]));
                tasks.push_back(t);
            }
            for (auto it = lo; it < hi; ++it) residues += db.length[*it];
        }
        for (const std::int32_t q : plan.pairs[p].query)
            if (q >= 0) plan.cells += queries.length(static_cast<std::size_t>(q)) * residues;
    }
    // Group by (class, regs), costliest tasks first inside a group.
    std::stable_sort(tasks.begin(), tasks.end(), [](const search_task& a, const search_task& b) {
        if (a.cls != b.cls) return a.cls < b.cls;
        if (a.regs != b.regs) return a.regs < b.regs;
        return a.cost > b.cost;
    });
    plan.tasks = std::move(tasks);
    for (std::size_t k = 0; k < plan.tasks.size();) {
        task_group group;
        group.first = k;
        group.cls = plan.tasks[k].cls;
        group.regs = plan.tasks[k].regs;
        for (; k < plan.tasks.size() && plan.tasks[k].cls == group.cls && plan.tasks[k].regs == group.regs; ++k)
            group.cost += plan.tasks[k].cost;
        group.count = k - group.first;
        plan.groups.push_back(group);
    }
    order_groups(plan);
    return plan;
}

}  // namespace swgpu::gpu
