// A program that knows swgpu only through its installed header and CMake package: it searches, reuses a database for
// two searches (the hits of two calls of search()), aligns a pair and computes a summed-area table, checking each.
// consumer QUERIES.fa DATABASE.fa: exit 0 and one line per check, or 1 with the check that failed.
#include <swgpu/swgpu.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
    if (!ok) ++failures;
}

bool same(const std::vector<swgpu::hit>& a, const std::vector<swgpu::hit>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
        if (a[k].qseqid != b[k].qseqid || a[k].sseqid != b[k].sseqid || a[k].score != b[k].score ||
            a[k].qstart != b[k].qstart || a[k].send != b[k].send || a[k].cigar != b[k].cigar || a[k].evalue != b[k].evalue)
            return false;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: consumer QUERIES.fa DATABASE.fa\n");
        return 2;
    }
    try {
        auto settings = swgpu::search_settings::defaults();
        settings.where = swgpu::backend::cpu;
        settings.max_target_seqs = 5;
        const auto queries = swgpu::read_sequences(argv[1]);
        const auto records = swgpu::read_sequences(argv[2]);
        const auto hits = swgpu::search(queries, records, settings);
        expect(hits.size() == 5 * queries.size() && hits[0].qseqid == queries[0].name && hits[0].score > 0,
               "search: " + std::to_string(hits.size()) + " hits, the first " + hits[0].qseqid + " x " +
                   hits[0].sseqid + " score " + std::to_string(hits[0].score));

        swgpu::database db(argv[2], settings);
        const std::vector<swgpu::sequence> first(queries.begin(), queries.begin() + 1);
        const std::vector<swgpu::sequence> rest(queries.begin() + 1, queries.end());
        expect(same(db.search(first), swgpu::search(first, records, settings)) &&
                   same(db.search(rest), swgpu::search(rest, records, settings)),
               "database: two searches give what two calls of search() give");

        const swgpu::hit pair = swgpu::align_pair(queries[0], records[0], settings);
        expect(pair.qseqid == queries[0].name && pair.sseqid == records[0].name && pair.score >= 0,
               "align_pair: score " + std::to_string(pair.score) + ", cigar " + pair.cigar);

        auto image = swgpu::array::zeros<std::uint16_t>({3, 4});
        for (std::int64_t i = 0; i < 3; ++i)
            for (std::int64_t j = 0; j < 4; ++j) image.at<std::uint16_t>({i, j}) = static_cast<std::uint16_t>(i * 4 + j);
        const auto table = swgpu::summed_area_table(image, swgpu::backend::cpu);
        expect(table.type() == swgpu::dtype::uint64 && table.at<std::uint64_t>({2, 3}) == 66 &&
                   table.at<std::uint64_t>({1, 1}) == 10,
               "summed_area_table: S[2][3] = " + std::to_string(table.at<std::uint64_t>({2, 3})));
    } catch (const swgpu::error& e) {
        std::fprintf(stderr, "consumer: swgpu::error (exit code %d): %s\n", static_cast<int>(e.code()), e.what());
        return 1;
    }
    return failures == 0 ? 0 : 1;
}
