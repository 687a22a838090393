// The library face (app/swgpu.hpp) on the GPU: a search, a database kept resident across two searches and a pair
// aligned alone give on the GPU what they give on the CPU, hit for hit and value for value.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "app/swgpu.hpp"
#include "tests/gpu/harness.hpp"

namespace {

bool same_hits(const std::vector<swgpu::hit>& a, const std::vector<swgpu::hit>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k) {
        const auto& x = a[k];
        const auto& y = b[k];
        if (x.qseqid != y.qseqid || x.sseqid != y.sseqid || x.score != y.score || x.pident != y.pident ||
            x.length != y.length || x.qstart != y.qstart || x.qend != y.qend || x.sstart != y.sstart ||
            x.send != y.send || x.evalue != y.evalue || x.bitscore != y.bitscore || x.cigar != y.cigar ||
            x.sstrand != y.sstrand)
            return false;
    }
    return true;
}

}  // namespace

GPU_TEST("library: search, a resident database and align_pair give on the GPU what they give on the CPU") {
    const std::string dir = swgpu::gputest::source_dir();
    const auto queries = swgpu::read_sequences(dir + "/data/demo_queries.fa");
    const auto records = swgpu::read_sequences(dir + "/data/demo_db.fa");
    auto cpu = swgpu::search_settings::defaults();
    cpu.where = swgpu::backend::cpu;
    cpu.max_target_seqs = 20;
    auto gpu = cpu;
    gpu.where = swgpu::backend::gpu;
    const auto on_cpu = swgpu::search(queries, records, cpu);
    REQUIRE(on_cpu.size() == 37);  // what swgpu align -k 20 prints for the demo
    CHECK(same_hits(swgpu::search(queries, records, gpu), on_cpu));
    swgpu::database resident(dir + "/data/demo_db.fa", gpu);
    const std::vector<swgpu::sequence> first(queries.begin(), queries.begin() + 2), rest(queries.begin() + 2, queries.end());
    CHECK(same_hits(resident.search(first), swgpu::search(first, records, cpu)));
    CHECK(same_hits(resident.search(rest), swgpu::search(rest, records, cpu)));
    CHECK(same_hits({swgpu::align_pair(queries[1], records[7], gpu)}, {swgpu::align_pair(queries[1], records[7], cpu)}));
}

GPU_TEST("library: summed-area tables and integral histograms give on the GPU what they give on the CPU") {
    auto image = swgpu::array::zeros<std::uint16_t>({301, 517});
    std::uint32_t x = 12345;
    for (std::int64_t i = 0; i < 301; ++i)
        for (std::int64_t j = 0; j < 517; ++j) {
            x = x * 1664525u + 1013904223u;
            image.at<std::uint16_t>({i, j}) = static_cast<std::uint16_t>(x >> 16);
        }
    const auto same = [](const swgpu::array& a, const swgpu::array& b) {  // tables of uint64, histograms of uint32
        const std::size_t bytes = a.size() * (a.type() == swgpu::dtype::uint32 ? 4 : 8);
        return a.type() == b.type() && a.shape() == b.shape() && std::memcmp(a.data(), b.data(), bytes) == 0;
    };
    CHECK(same(swgpu::summed_area_table(image, swgpu::backend::gpu),
               swgpu::summed_area_table(image, swgpu::backend::cpu)));
    for (const int bins : {1, 7, 32}) {
        CHECK(same(swgpu::integral_histogram(image, bins, {}, swgpu::backend::gpu),
                   swgpu::integral_histogram(image, bins, {}, swgpu::backend::cpu)));
    }
    const std::vector<double> edges = {0, 1000, 30000, 65535};
    CHECK(same(swgpu::integral_histogram(image, 0, edges, swgpu::backend::gpu),
               swgpu::integral_histogram(image, 0, edges, swgpu::backend::cpu)));
}
