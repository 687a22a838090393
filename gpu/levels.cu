// Sparse triangular solves and generic indirect loops by levels on the GPU (gpu/levels.hpp; kernels and their
// synchronization protocol in gpu/levels_kernels.cuh).
#include "gpu/levels.hpp"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "gpu/levels_kernels.cuh"

namespace swgpu::gpu {

using namespace levels_kernels;

const char* solve_schedule_name(solve_schedule s) {
    return s == solve_schedule::syncfree ? "syncfree" : s == solve_schedule::syncfree_by_level ? "syncfree_by_level" : "level_sync";
}

struct triangular_solver::state {
    cuda_stream stream;
    device_triangular dev;
    float analysis_ms = 0;
    state(const levels::csr_matrix& t, levels::triangle part) : dev(t, part, stream.get()) {}
};

triangular_solver::triangular_solver(const levels::csr_matrix& t, levels::triangle part) {
    if (t.rows >= (std::int64_t{1} << 31) - 1) throw runtime_failure("the GPU solve takes fewer than 2^31 rows");
    s_ = std::make_unique<state>(t, part);
    cuda_event a, b;
    a.record(s_->stream.get());
    s_->dev.analyze(s_->stream.get());
    b.record(s_->stream.get());
    b.synchronize();
    s_->analysis_ms = b.since(a);
}

triangular_solver::~triangular_solver() = default;

std::vector<levels::level_t> triangular_solver::levels() const {
    return s_->dev.level.download(static_cast<std::size_t>(s_->dev.m.n), s_->stream.get());
}

std::vector<std::int64_t> triangular_solver::widths() const {
    const auto& off = s_->dev.level_offsets(s_->stream.get());
    std::vector<std::int64_t> w;
    for (std::size_t l = 1; l < off.size(); ++l) w.push_back(off[l] - off[l - 1]);
    return w;
}

float triangular_solver::analysis_ms() const { return s_->analysis_ms; }

std::vector<double> triangular_solver::solve(std::span<const double> b, solve_schedule sched, float* ms) {
    auto& d = s_->dev;
    const cudaStream_t st = s_->stream.get();
    if (static_cast<std::int64_t>(b.size()) != d.m.n) throw runtime_failure("the right-hand side has the wrong length");
    d.b.upload(b.data(), b.size(), st);
    if (sched == solve_schedule::level_sync) (void)d.level_offsets(st);
    cuda_event e0, e1;
    e0.record(st);
    if (sched == solve_schedule::level_sync) d.solve_by_levels(st);
    else d.pass<false, true>(sched == solve_schedule::syncfree_by_level, st);
    e1.record(st);
    std::vector<double> x = d.x.download(b.size(), st);
    if (ms) *ms = e1.since(e0);
    return x;
}

// ---- generic loops ------------------------------------------------------------------------------------------------

namespace {

struct device_loop {
    loop_args a;
    device_buffer<std::int32_t> w, r, wloc, witer, rloc, riter, iters;
    device_buffer<int> level;
    device_buffer<unsigned> ticket;
    device_buffer<double> arr;
    device_buffer<unsigned char> temp;

    device_loop(const levels::indirect_loop& loop, cudaStream_t s) {
        const auto n = static_cast<std::size_t>(loop.iterations());
        const auto reads = loop.reads.size();
        std::vector<std::int32_t> hw(loop.writes.begin(), loop.writes.end()), hr(loop.reads.begin(), loop.reads.end());
        std::vector<std::int32_t> hi(std::max(n, reads));
        for (std::size_t k = 0; k < reads; ++k) hi[k] = static_cast<std::int32_t>(k / static_cast<std::size_t>(loop.reads_per_iteration));
        w.upload(hw, s);
        r.upload(hr, s);
        wloc.allocate(std::max<std::size_t>(n, 1));
        witer.allocate(std::max<std::size_t>(n, 1));
        rloc.allocate(std::max<std::size_t>(reads, 1));
        riter.allocate(std::max<std::size_t>(reads, 1));
        level.allocate(std::max<std::size_t>(n, 1));
        ticket.allocate(1);
        // The writers' list: (location, iteration) by location; iterations ascending within a location (stable).
        std::vector<std::int32_t> seq(n);
        for (std::size_t k = 0; k < n; ++k) seq[k] = static_cast<std::int32_t>(k);
        iters.upload(seq, s);
        const int bits = bits_for(loop.locations);
        std::size_t b1 = 0, b2 = 0;
        device_buffer<std::int32_t> read_iters;
        read_iters.upload(hi.data(), reads, s);
        SWGPU_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, b1, w.data(), wloc.data(), iters.data(), witer.data(),
                                                         static_cast<std::int64_t>(n), 0, bits, s));
        SWGPU_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, b2, r.data(), rloc.data(), read_iters.data(),
                                                         riter.data(), static_cast<std::int64_t>(reads), 0, bits, s));
        temp.allocate(std::max({b1, b2, std::size_t{1}}));
        if (n) {
            b1 = temp.size();
            SWGPU_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), b1, w.data(), wloc.data(), iters.data(),
                                                             witer.data(), static_cast<std::int64_t>(n), 0, bits, s));
        }
        if (reads) {
            b2 = temp.size();
            SWGPU_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), b2, r.data(), rloc.data(), read_iters.data(),
                                                             riter.data(), static_cast<std::int64_t>(reads), 0, bits, s));
        }
        SWGPU_CUDA_CHECK(cudaStreamSynchronize(s));  // read_iters is freed at the end of this scope
        a.n = static_cast<int>(n);
        a.k = loop.reads_per_iteration;
        a.w = w.data();
        a.r = r.data();
        a.wloc = wloc.data();
        a.witer = witer.data();
        a.rloc = rloc.data();
        a.riter = riter.data();
        a.reads = static_cast<std::int64_t>(reads);
        a.level = level.data();
        a.ticket = ticket.data();
    }

    template <bool Execute>
    void pass(cudaStream_t s) {
        ticket.zero(s);
        level.zero(s);
        if (a.n == 0) return;
        syncfree_loop<Execute><<<static_cast<unsigned>((a.n + 255) / 256), 256, 0, s>>>(a);
        SWGPU_CUDA_CHECK_LAUNCH("syncfree_loop");
    }
};

}  // namespace

std::vector<levels::level_t> loop_levels(const levels::indirect_loop& loop, float* ms) {
    cuda_stream stream;
    device_loop d(loop, stream.get());
    cuda_event e0, e1;
    e0.record(stream.get());
    d.pass<false>(stream.get());
    e1.record(stream.get());
    auto out = d.level.download(static_cast<std::size_t>(loop.iterations()), stream.get());
    if (ms) *ms = e1.since(e0);
    return out;
}

std::vector<double> run_loop(const levels::indirect_loop& loop, levels::loop_body b, std::span<const double> a, float* ms) {
    if (loop.reads_per_iteration > 8)
        throw runtime_failure("the GPU runs loops of at most 8 reads per iteration; use --backend cpu");
    cuda_stream stream;
    device_loop d(loop, stream.get());
    d.arr.upload(a.data(), a.size(), stream.get());
    d.a.a = d.arr.data();
    d.a.body = b;
    cuda_event e0, e1;
    e0.record(stream.get());
    d.pass<true>(stream.get());
    e1.record(stream.get());
    auto out = d.arr.download(a.size(), stream.get());
    if (ms) *ms = e1.since(e0);
    return out;
}

}  // namespace swgpu::gpu
