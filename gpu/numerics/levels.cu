// Sparse triangular solves and generic indirect loops by levels on the GPU (gpu/numerics/levels.hpp; kernels and their
// synchronization protocol in gpu/numerics/levels_kernels.cuh).
#include "gpu/numerics/levels.hpp"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "gpu/numerics/levels_kernels.cuh"

namespace swgpu::gpu {

using namespace levels_kernels;

const char* solve_schedule_name(solve_schedule s) {
    switch (s) {
        case solve_schedule::syncfree: return "syncfree";
        case solve_schedule::syncfree_by_level: return "syncfree_by_level";
        case solve_schedule::level_grid: return "level_grid";
        case solve_schedule::level_p2p: return "level_p2p";
        case solve_schedule::level_sync: break;
    }
    return "level_sync";
}

struct triangular_solver::state {
    cuda_stream stream;
    device_triangular dev;
    float analysis_ms = 0;
    std::vector<double> first_x;
    state(const levels::csr_matrix& t, levels::triangle part) : dev(t, part, stream.get()) {}
};

triangular_solver::triangular_solver(const levels::csr_matrix& t, levels::triangle part, std::span<const double> first_b) {
    if (t.rows >= (std::int64_t{1} << 31) - 1) throw runtime_failure("the GPU solve takes fewer than 2^31 rows");
    if (!first_b.empty() && static_cast<std::int64_t>(first_b.size()) != t.rows)
        throw runtime_failure("the right-hand side has the wrong length");
    s_ = std::make_unique<state>(t, part);
    const cudaStream_t st = s_->stream.get();
    if (!first_b.empty()) s_->dev.b.upload(first_b.data(), first_b.size(), st);
    cuda_event a, b;
    a.record(st);
    s_->dev.analyze(st, !first_b.empty());
    b.record(st);
    b.synchronize();
    s_->analysis_ms = b.since(a);
    if (!first_b.empty()) s_->first_x = s_->dev.x.download(first_b.size(), st);
}

const std::vector<double>& triangular_solver::first_solution() const { return s_->first_x; }

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
    if (sched == solve_schedule::level_sync || sched == solve_schedule::level_grid || sched == solve_schedule::level_p2p)
        (void)d.level_offsets(st);
    cuda_event e0, e1;
    e0.record(st);
    if (sched == solve_schedule::level_sync) d.solve_by_levels(st);
    else if (sched == solve_schedule::level_grid) d.solve_by_levels_grid(st);
    else if (sched == solve_schedule::level_p2p) d.solve_by_levels_p2p(st);
    else d.pass<false, true>(sched == solve_schedule::syncfree_by_level, st);
    e1.record(st);
    std::vector<double> x = d.x.download(b.size(), st);
    if (ms) *ms = e1.since(e0);
    return x;
}

std::vector<double> triangular_solver::solve_p2p(std::span<const double> b, p2p_launch l) {
    auto& d = s_->dev;
    const cudaStream_t st = s_->stream.get();
    if (static_cast<std::int64_t>(b.size()) != d.m.n) throw runtime_failure("the right-hand side has the wrong length");
    d.b.upload(b.data(), b.size(), st);
    d.solve_by_levels_p2p(st, l.per_sm, l.threads, l.sleep_ns);
    return d.x.download(b.size(), st);
}

// ---- generic loops ------------------------------------------------------------------------------------------------

namespace {

unsigned grid_for(std::int64_t count) {
    return static_cast<unsigned>(std::min<std::int64_t>((count + 255) / 256, 8192));
}

struct device_loop {
    loop_args a;
    device_buffer<std::int32_t> w, r, wloc, witer, rloc, riter, wbeg, wend;
    device_buffer<std::int64_t> rbeg, rend;
    device_buffer<int> level;
    device_buffer<unsigned> ticket;
    device_buffer<double> arr, coef;
    device_buffer<std::int32_t> src;   // the iterations before their sort
    device_buffer<unsigned char> temp; // CUB's

    // Uploads the index arrays, narrowed to int32 by the caller (check_loop keeps every index below 2^31).
    device_loop(const std::vector<std::int32_t>& hw, const std::vector<std::int32_t>& hr, int k, cudaStream_t s) {
        w.upload(hw, s);
        r.upload(hr, s);
        a.n = static_cast<int>(hw.size());
        a.k = k;
        a.reads = static_cast<std::int64_t>(hr.size());
        a.w = w.data();
        a.r = r.data();
        level.allocate(std::max<std::size_t>(hw.size(), 1));
        ticket.allocate(1);
    }

    // The inspector's lists and ranges (allocated before the inspector is timed).
    void allocate(std::int64_t locations) {
        const auto n = static_cast<std::int64_t>(a.n);
        const std::int64_t reads = a.reads;
        wloc.allocate(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
        witer.allocate(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
        rloc.allocate(static_cast<std::size_t>(std::max<std::int64_t>(reads, 1)));
        riter.allocate(static_cast<std::size_t>(std::max<std::int64_t>(reads, 1)));
        wbeg.allocate(static_cast<std::size_t>(locations));
        wend.allocate(static_cast<std::size_t>(locations));
        rbeg.allocate(static_cast<std::size_t>(locations));
        rend.allocate(static_cast<std::size_t>(locations));
        const std::int64_t most = std::max<std::int64_t>({n, reads, 1});
        src.allocate(static_cast<std::size_t>(most));
        std::size_t bytes = 0;
        SWGPU_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, w.data(), wloc.data(), src.data(), witer.data(),
                                                         most, 0, bits_for(locations)));
        temp.allocate(std::max<std::size_t>(bytes, 1));
    }

    // The inspector's sorts and location ranges.
    void inspect(std::int64_t locations, cudaStream_t s) {
        const auto n = static_cast<std::int64_t>(a.n);
        const std::int64_t reads = a.reads;
        const int bits = bits_for(locations);
        wbeg.zero(s);
        wend.zero(s);
        rbeg.zero(s);
        rend.zero(s);
        // (location, iteration) pairs sorted by location, iterations ascending within a location (the sort is stable),
        // and each location's range in them: the writes (iteration i for W[i]), then the reads (i for R[i][*]).
        // src and temp come from allocate(): a cudaMalloc and cudaFree here took most of the inspector's time.
        const auto by_location = [&](const auto& keys, std::int64_t count, auto& loc, auto& iter, auto& beg, auto& end,
                                     auto fill_iterations) {
            if (!count) return;
            fill_iterations(src.data());
            std::size_t bytes = temp.size();
            SWGPU_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys.data(), loc.data(), src.data(),
                                                             iter.data(), count, 0, bits, s));
            mark_ranges<<<grid_for(count), 256, 0, s>>>(loc.data(), count, beg.data(), end.data());
            SWGPU_CUDA_CHECK_LAUNCH("mark_ranges");
        };
        by_location(w, n, wloc, witer, wbeg, wend, [&](std::int32_t* src) {
            iota<<<grid_for(n), 256, 0, s>>>(src, n);
            SWGPU_CUDA_CHECK_LAUNCH("iota");
        });
        by_location(r, reads, rloc, riter, rbeg, rend, [&](std::int32_t* src) {
            read_iterations<<<grid_for(reads), 256, 0, s>>>(src, reads, a.k);
            SWGPU_CUDA_CHECK_LAUNCH("read_iterations");
        });
        a.wloc = wloc.data();
        a.witer = witer.data();
        a.rloc = rloc.data();
        a.riter = riter.data();
        a.wbeg = wbeg.data();
        a.wend = wend.data();
        a.rbeg = rbeg.data();
        a.rend = rend.data();
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

namespace {

std::vector<std::int32_t> narrow(const std::vector<std::int64_t>& v) { return {v.begin(), v.end()}; }

}  // namespace

std::vector<levels::level_t> loop_levels(const levels::indirect_loop& loop, float* ms) {
    cuda_stream stream;
    const cudaStream_t st = stream.get();
    std::optional<device_loop> d;
    {
        const std::vector<std::int32_t> hw = narrow(loop.writes), hr = narrow(loop.reads);
        d.emplace(hw, hr, loop.reads_per_iteration, st);
        stream.synchronize();  // the host copies are freed at the end of this scope
    }
    d->allocate(loop.locations);
    cuda_event e0, e1;
    e0.record(st);
    d->inspect(loop.locations, st);
    d->pass<false>(st);
    e1.record(st);
    auto out = d->level.download(static_cast<std::size_t>(loop.iterations()), st);
    if (ms) *ms = e1.since(e0);
    return out;
}

std::vector<double> run_loop(const levels::indirect_loop& loop, const levels::body_spec& b, std::span<const double> a,
                             loop_report* report, bool want_levels) {
    if (const std::string why = levels::body_mismatch(b, loop.reads_per_iteration); !why.empty()) throw runtime_failure(why);
    cuda_stream stream;
    const cudaStream_t st = stream.get();
    cuda_event e0, e1, e1b, e2, e3, e4;
    std::optional<device_loop> d;
    {
        const std::vector<std::int32_t> hw = narrow(loop.writes), hr = narrow(loop.reads);
        e0.record(st);
        d.emplace(hw, hr, loop.reads_per_iteration, st);
        d->arr.upload(a.data(), a.size(), st);
        d->coef.upload(b.coefficients.data(), b.coefficients.size(), st);
        d->allocate(loop.locations);
        e1.record(st);
        stream.synchronize();  // the host copies are freed at the end of this scope
    }
    d->a.a = d->arr.data();
    d->a.coef = b.coefficients.empty() ? nullptr : d->coef.data();
    d->a.body = b.kind;
    e1b.record(st);  // after the host's copies are freed: the inspector's time starts with its first kernel
    d->inspect(loop.locations, st);
    e2.record(st);
    d->pass<true>(st);
    e3.record(st);
    auto out = d->arr.download(a.size(), st);
    if (want_levels && report) report->levels = d->level.download(static_cast<std::size_t>(loop.iterations()), st);
    e4.record(st);
    e4.synchronize();
    if (report) {
        report->upload_ms = e1.since(e0);
        report->inspect_ms = e2.since(e1b);
        report->run_ms = e3.since(e2);
        report->download_ms = e4.since(e3);
    }
    return out;
}

}  // namespace swgpu::gpu
