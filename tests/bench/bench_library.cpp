// The library's latency per search (app/swgpu/swgpu.hpp): a resident swgpu::database searched again and again, against
// swgpu::search() called afresh each time (reading aside, it encodes, starts the backend and, on a GPU, packs and
// uploads the database on every call).
//
//   bench_library QUERIES DATABASE [SEARCHES] [--backend auto|cpu|gpu]
//
// Prints the database's construction time, the first search, the median and minimum of the following ones, and the
// same for search() with the records in memory; the hits of every call are checked to be those of the first.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/swgpu/swgpu.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

bool same(const std::vector<swgpu::hit>& a, const std::vector<swgpu::hit>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
        if (a[k].qseqid != b[k].qseqid || a[k].sseqid != b[k].sseqid || a[k].score != b[k].score ||
            a[k].cigar != b[k].cigar || a[k].evalue != b[k].evalue)
            return false;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_library QUERIES DATABASE [SEARCHES] [--backend auto|cpu|gpu]\n");
        return 2;
    }
    int searches = 10;
    swgpu::search_settings settings = swgpu::search_settings::defaults();
    for (int k = 3; k < argc; ++k) {
        const std::string a = argv[k];
        if (a == "--backend" && k + 1 < argc) {
            const std::string b = argv[++k];
            settings.where = b == "cpu" ? swgpu::backend::cpu : b == "gpu" ? swgpu::backend::gpu : swgpu::backend::automatic;
        } else {
            searches = std::max(2, std::atoi(a.c_str()));
        }
    }
    try {
        const auto queries = swgpu::read_sequences(argv[1]);
        const auto records = swgpu::read_sequences(argv[2]);
        std::printf("%zu queries, %zu database records\n", queries.size(), records.size());

        auto t = clock_type::now();
        swgpu::database resident(records, settings);
        const double made = ms_since(t);
        t = clock_type::now();
        const auto first = resident.search(queries);
        const double first_ms = ms_since(t);
        std::vector<double> again;
        bool identical = true;
        for (int k = 1; k < searches; ++k) {
            t = clock_type::now();
            identical = same(resident.search(queries), first) && identical;
            again.push_back(ms_since(t));
        }
        std::printf("database: made in %.1f ms; first search %.1f ms; next %d: median %.1f ms, min %.1f ms\n", made,
                    first_ms, searches - 1, median(again), *std::min_element(again.begin(), again.end()));

        std::vector<double> fresh;
        for (int k = 0; k < searches; ++k) {
            t = clock_type::now();
            identical = same(swgpu::search(queries, records, settings), first) && identical;
            fresh.push_back(ms_since(t));
        }
        std::printf("search(): %d calls: median %.1f ms, min %.1f ms\n", searches, median(fresh),
                    *std::min_element(fresh.begin(), fresh.end()));
        std::printf("%zu hits, every call identical: %s\n", first.size(), identical ? "yes" : "NO");
        return identical ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_library: %s\n", e.what());
        return 1;
    }
}
