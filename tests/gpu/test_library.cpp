// The library face (app/swgpu/swgpu.hpp) on the GPU: a search, a database kept resident across two searches and a pair
// aligned alone give on the GPU what they give on the CPU, hit for hit and value for value.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "app/swgpu/swgpu.hpp"
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
    auto rgb = swgpu::array::zeros<std::uint8_t>({77, 1031, 3});  // 8-bit, channels: read in place on the GPU
    for (std::int64_t i = 0; i < 77; ++i)
        for (std::int64_t j = 0; j < 1031; ++j)
            for (std::int64_t c = 0; c < 3; ++c) {
                x = x * 1664525u + 1013904223u;
                rgb.at<std::uint8_t>({i, j, c}) = static_cast<std::uint8_t>(x >> 24);
            }
    CHECK(same(swgpu::summed_area_table(rgb, swgpu::backend::gpu), swgpu::summed_area_table(rgb, swgpu::backend::cpu)));
    for (const int bins : {1, 7, 32}) {
        CHECK(same(swgpu::integral_histogram(image, bins, {}, swgpu::backend::gpu),
                   swgpu::integral_histogram(image, bins, {}, swgpu::backend::cpu)));
    }
    const std::vector<double> edges = {0, 1000, 30000, 65535};
    CHECK(same(swgpu::integral_histogram(image, 0, edges, swgpu::backend::gpu),
               swgpu::integral_histogram(image, 0, edges, swgpu::backend::cpu)));
}

GPU_TEST("library: triangular solves, SOR and the 3-D sweep give on the GPU what they give on the CPU") {
    // A lower-triangular matrix with a few entries per row (a banded Laplacian-like pattern) and a dense-ish b.
    swgpu::csr_matrix m;
    const std::int64_t n = 2000;
    m.rows = m.cols = n;
    m.indptr.push_back(0);
    for (std::int64_t i = 0; i < n; ++i) {
        for (const std::int64_t d : {37, 5, 1})
            if (i - d >= 0) {
                m.indices.push_back(i - d);
                m.data.push_back(-0.25 / static_cast<double>(d));
            }
        m.indices.push_back(i);
        m.data.push_back(2.0 + static_cast<double>(i % 7) / 10.0);
        m.indptr.push_back(static_cast<std::int64_t>(m.indices.size()));
    }
    std::vector<double> b(n);
    for (std::int64_t i = 0; i < n; ++i) b[i] = std::sin(static_cast<double>(i));
    CHECK(swgpu::triangular_solve(m, b, true, swgpu::backend::gpu) ==
          swgpu::triangular_solve(m, b, true, swgpu::backend::cpu));  // the same bits on every backend

    for (const auto precision : {swgpu::dtype::float64, swgpu::dtype::float32}) {
        const auto gpu = swgpu::sweep3d_fmod(48, 3, 1.0, precision, swgpu::backend::gpu);
        const auto cpu = swgpu::sweep3d_fmod(48, 3, 1.0, precision, swgpu::backend::cpu);
        const std::size_t bytes = gpu.size() * (precision == swgpu::dtype::float64 ? 8 : 4);
        CHECK((gpu.shape() == cpu.shape() && std::memcmp(gpu.data(), cpu.data(), bytes) == 0));
    }

    const std::int64_t N = 65;
    std::vector<double> f(N * N, 1.0), g(N * N, 0.0);
    for (std::int64_t k = 0; k < N; ++k) g[k] = 300.0;  // one hot edge
    swgpu::sor_settings s;
    s.tol = 1e-10;
    s.where = swgpu::backend::cpu;
    const auto cpu = swgpu::poisson_sor(N, f, g, s);
    s.where = swgpu::backend::gpu;
    const auto gpu = swgpu::poisson_sor(N, f, g, s);
    CHECK(cpu.converged);
    CHECK(gpu.converged);
    double diff = 0, scale = 0;
    for (std::size_t k = 0; k < cpu.u.size(); ++k) {
        diff = std::max(diff, std::abs(cpu.u[k] - gpu.u[k]));
        scale = std::max(scale, std::abs(cpu.u[k]));
    }
    CHECK(diff <= 1e-8 * scale);  // both within the tolerance of the same solution
}
