// Long pairs on one GPU: the rectangle operations of core/align/long_pair/long_pair.hpp (forward with a grid, trace of
// a leaf, leaves traced many per launch) over the kernels of gpu/align/long_pair_kernels.cuh, which describes them and
// their protocol. gpu/align/long_pair_multi.cu splits the forward pass over several devices, on backends of this
// file; gpu/align/long_pair_backend.cuh holds what the two share.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "core/align/long_pair/long_pair.hpp"
#include "core/tuning.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/flags.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/gpu.hpp"
#include "gpu/align/long_pair_backend.cuh"
#include "gpu/align/long_pair_kernels.cuh"
#include "gpu/align/sw_cells.cuh"

namespace swgpu::gpu {

namespace {

using detail::border_exchange;
using detail::device_grid_lines;
using gpu::pooled;
using detail::row_exchange;

// The forbidden cells of `area` (rows relative to area.r0) as the kernels' events for lanes of R rows (band_params::
// forbid_first and forbid_events): appends `groups` + 1 offsets to `first` (indices into `events`, which it extends)
// and the events of each group of R rows, ordered by column, the rows of one column merged into one mask.
void append_forbidden_events(const long_pair::forbidden_pairs& f, const long_pair::rect& area, int R,
                             long long groups, std::vector<long long>& first, std::vector<int2>& events) {
    struct cell {
        long long group;
        int col;
        unsigned bit;
    };
    std::vector<cell> cells;
    for (const auto& path : f.paths) {
        const std::int64_t lo = std::max(area.r0, path.first_row);
        const std::int64_t hi = std::min(area.r1, path.first_row + static_cast<std::int64_t>(path.col.size()));
        for (std::int64_t i = lo; i < hi; ++i) {
            const std::int64_t j = path.col[static_cast<std::size_t>(i - path.first_row)];
            if (j < area.c0 || j >= area.c1) continue;
            const std::int64_t r = i - area.r0;
            cells.push_back({r / R, static_cast<int>(j - area.c0), 1u << (r % R)});
        }
    }
    std::sort(cells.begin(), cells.end(),
              [](const cell& a, const cell& b) { return a.group != b.group ? a.group < b.group : a.col < b.col; });
    const std::size_t start = first.size();
    first.resize(start + static_cast<std::size_t>(groups) + 1);
    std::size_t k = 0;
    for (long long g = 0; g <= groups; ++g) {
        first[start + static_cast<std::size_t>(g)] = static_cast<long long>(events.size());
        for (; k < cells.size() && cells[k].group == g; ++k) {
            if (!events.empty() && static_cast<long long>(events.size()) > first[start + static_cast<std::size_t>(g)] &&
                events.back().x == cells[k].col)
                events.back().y = static_cast<int>(static_cast<unsigned>(events.back().y) | cells[k].bit);
            else
                events.push_back(make_int2(cells[k].col, static_cast<int>(cells[k].bit)));
        }
    }
}

class gpu_backend final : public detail::device_backend {
public:
    gpu_backend(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc,
                std::size_t device_memory)
        : oe_(sc.gaps.open + sc.gaps.extend), ext_(sc.gaps.extend) {
        // long.profile: where a slow construction waited (it runs while other pairs' passes run, in a batch).
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<std::pair<const char*, double>> stages;
        const auto stage = [&](const char* what) {
            if (profile_)
                stages.emplace_back(what, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        };
        int dev = 0;
        SWGPU_CUDA_CHECK(cudaGetDevice(&dev));
        SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, dev));
        // Keep freed pool memory mapped: the walk allocates and frees grids of similar sizes over and over.
        cudaMemPool_t pool;
        SWGPU_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
        std::uint64_t keep = UINT64_MAX;
        SWGPU_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
        // Never reuse memory freed in another stream by waiting for that stream: a backend made while other pairs'
        // passes run (run_batch) would wait for one of them to end (measured: up to 0.9 s per backend on an H100).
        int no = 0;
        SWGPU_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &no));
        stage("pool");
        std::size_t free_bytes = 0, total = 0;
        SWGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
        stage("meminfo");
        const std::size_t usable = device_memory ? std::min(device_memory, free_bytes) : free_bytes;
        budget_ = std::max<std::size_t>(usable / 4, std::size_t(16) << 20);

        // Compact subject letters: only those that occur get a profile row.
        std::vector<int> compact(substitution_matrix::max_letters, -1);
        std::vector<std::uint8_t> codes(subject.size());
        std::vector<int> letter_of;
        for (std::size_t k = 0; k < subject.size(); ++k) {
            int& c = compact[subject[k] & 31];
            if (c < 0) {
                c = static_cast<int>(letter_of.size());
                letter_of.push_back(subject[k] & 31);
            }
            codes[k] = static_cast<std::uint8_t>(c);
        }
        letters_ = std::max<int>(1, static_cast<int>(letter_of.size()));
        // sigma[q * 32 + x]: query code q (any of the 32 codes) against compact subject letter x.
        std::vector<int> sigma(32 * 32, 0);
        int sigma_max = 0, sigma_min = 0;
        for (int q = 0; q < 32; ++q)
            for (int x = 0; x < static_cast<int>(letter_of.size()); ++x) {
                const int v = sc.matrix.score(static_cast<std::uint8_t>(q), static_cast<std::uint8_t>(letter_of[x]));
                sigma[static_cast<std::size_t>(q) * 32 + x] = v;
                sigma_max = std::max(sigma_max, v), sigma_min = std::min(sigma_min, v);
            }
        // 16-bit cells (forward_narrow, gpu/align/long_pair_kernels.cuh): exact where neighbouring cells differ by
        // little against 16 bits, σ fits a byte and the subject has at most 4 letters (σ by one byte permutation).
        const long long delta = static_cast<long long>(sigma_max) + oe_;
        narrow_ok_ = letter_of.size() <= 4 &&
                     sigma_min >= -128 && sigma_max <= 127 && 80 * delta + 2LL * oe_ + 256 < 16384;
        // Stream-ordered memory: a backend made or released while other pairs' passes run (run_batch) must not
        // wait for the device (cudaFree does).
        stage("codes");
        query_ = upload(query.data(), query.size());
        subject_ = upload(codes.data(), codes.size());
        sigma_ = upload(sigma.data(), sigma.size());
        stage("uploads");
        stream_.synchronize();
        stage("sync");
        // Forward entries (rows per lane, cell code); the tuning key long.entry picks one for measurements.
        // The default is the first entry that fits (bands of 1024 rows were fastest on the H100: 1 Mbp x 1 Mbp,
        // bands of 1024/512/256 rows: 1.58/1.48/1.05 TCUPS; the cells of row_cells_h were no faster);
        // long.entry picks another one for measurements (-1, the table's default: none).
        forward_entries_ = {configure<32, forward_x>(),    configure<16, forward_x>(),    configure<8, forward_x>(),
                            configure<32, forward_h>(),    configure<16, forward_h>(),    configure<8, forward_h>(),
                            configure<32, forward_comp>(), configure<16, forward_comp>(), configure<8, forward_comp>(),
                            configure<32, forward_narrow>()};
        split_entries_ = {configure<32, forward_split>(), configure<16, forward_split>(), configure<8, forward_split>()};
        for (const auto& e : forward_entries_)
            if (!fwd_.resident_warps && e.resident_warps) fwd_ = e;
        if (const std::int64_t k = tuning::integer("long.entry", device_arch()); k >= 0) {
            // (16-bit cells only where they are exact: elsewhere the default)
            if (k < static_cast<std::int64_t>(forward_entries_.size()) && forward_entries_[k].resident_warps &&
                (forward_entries_[k].kind != forward_narrow || narrow_ok_))
                fwd_ = forward_entries_[k], forced_entry_ = true;
        }
        // A leaf has few bands: one warp per block spreads them over as many SMs.
        trc_ = configure<trace_rows, trace_kind>(1);
        allow_shared_memory(&band_batch_kernel<trace_rows, trace_kind>);
        if (!fwd_.resident_warps || !trc_.resident_warps)
            throw runtime_failure("the long-pair kernels do not fit in this GPU's shared memory");
        stage("kernels");
        if (profile_ && !stages.empty() && stages.back().second > 0.005) {
            std::string line = "long_pair backend made in";
            for (const auto& [what, at] : stages) line += " " + std::string(what) + " " + std::to_string(at);
            std::fprintf(stderr, "%s\n", line.c_str());
        }
    }

    // Forward passes and traces from now on take no diagonal step into a cell of `f` (kernels of their own, made at
    // the first call: the anti-diagonal bands in 32-bit cells whatever the policy).
    bool forbid(std::shared_ptr<const long_pair::forbidden_pairs> f) override {
        if (forbid_entries_.empty()) {
            forbid_entries_ = {configure<32, forward_x, true>(), configure<16, forward_x, true>(),
                               configure<8, forward_x, true>()};
            trc_forbid_ = configure<trace_rows, trace_kind, true>(1);
            allow_shared_memory(&band_batch_kernel<trace_rows, trace_kind, true>);
            if (!trc_forbid_.resident_warps) throw runtime_failure("the long-pair kernels do not fit in this GPU's shared memory");
        }
        forbidden_ = std::move(f);
        return true;
    }

    std::int64_t spacing_multiple() const override { return warp_size * max_forward_rows; }
    double leaf_cells() const override { return double(1 << 20); }
    std::size_t grid_budget() const override { return budget_; }

    void forward(const long_pair::rect& area, const long_pair::borders& b, std::int64_t K,
                 long_pair::grid& g) override {
        forward_part(area, b, K, g, nullptr, nullptr);
    }

    // forward() of one part of a pass split by columns: its left border streamed from `left` (b's left border is
    // then ignored), its right border streamed to `right` (either may be null).
    // forward() of one slab of a pass split by rows: its top border (but the corner, b.top_h[0]) streamed from `top`,
    // its bottom row streamed to `bottom` (either may be null).
    void forward_part(const long_pair::rect& area, const long_pair::borders& b, std::int64_t K, long_pair::grid& g,
                      const border_exchange* left, const border_exchange* right, const row_exchange* top = nullptr,
                      const row_exchange* bottom = nullptr) override {
        if (K <= 0 || K % spacing_multiple() != 0)
            throw runtime_failure("internal error: long-pair grid spacing is not a band multiple");
        const cudaStream_t s = stream_.get();
        g = long_pair::grid{};
        g.area = area;
        g.K = K;
        g.A = (area.rows() + K - 1) / K;
        g.B = (area.cols() + K - 1) / K;
        auto lines = std::make_shared<device_grid_lines>(g.A, g.B, area.rows(), area.cols(), s);
        pooled<int> block_max(static_cast<std::size_t>(g.A * g.B), s);
        SWGPU_CUDA_CHECK(cudaMemsetAsync(block_max.data(), 0, block_max.size() * sizeof(int), s));
        band_params p = common(area, b);
        p.K = K;
        p.B = g.B;
        p.row_h = lines->row_h.data();
        p.row_e = lines->row_e.data();
        p.col_h = lines->col_h.data();
        p.col_f = lines->col_f.data();
        p.block_max = block_max.data();
        if (left) {
            p.left_h = left->h;
            p.left_f = left->f;
            p.left_ready = left->ready;
        }
        if (right) {
            p.right_h = right->h;
            p.right_f = right->f;
            p.right_ready = right->ready;
        }
        if (top) {
            p.top_in_h = top->h;
            p.top_in_e = top->e;
            p.top_ready = top->ready;
        }
        if (bottom) {
            p.bottom_h = bottom->h;
            p.bottom_e = bottom->e;
            p.bottom_ready = bottom->ready;
        }
        const kernel_config* cfg = &forward_entry(area.rows());
        if (left || right || top || bottom) {  // the split kind with the same bands (every part numbers its bands alike)
            for (const auto& e : split_entries_)
                if (e.rows == cfg->rows && e.resident_warps) cfg = &e;
            if (cfg->kind != forward_split) throw runtime_failure("the split long-pair kernel does not fit on this GPU");
        }
        pooled<long long> forbid_first;
        pooled<int2> forbid_events;
        if (forbidding()) {
            if (left || right || top || bottom)
                throw runtime_failure("internal error: forbidden steps in a long-pair pass split over devices");
            const kernel_config* with = nullptr;  // the bands of the same height, else the tallest that fit
            for (const auto& e : forbid_entries_)
                if (e.resident_warps && (!with || e.rows == cfg->rows)) with = &e;
            if (!with) throw runtime_failure("the long-pair kernels do not fit in this GPU's shared memory");
            cfg = with;
            const long long bands = (area.rows() + warp_size * cfg->rows - 1) / (warp_size * cfg->rows);
            upload_forbidden(std::span(&area, 1), std::span(&bands, 1), cfg->rows, forbid_first, forbid_events);
            p.forbid_first = forbid_first.data();
            p.forbid_events = forbid_events.data();
        }
        launch(*cfg, p, area);
        // The kernel first, then the copy into pageable memory: a pageable copy waiting for a kernel holds up every
        // other thread's pageable copy (other pairs' backends in a batch) until that kernel ends.
        stream_.synchronize();
        g.block_max.resize(block_max.size());
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(g.block_max.data(), block_max.data(), block_max.size() * sizeof(int),
                                         cudaMemcpyDeviceToHost, s));
        stream_.synchronize();
        g.lines = std::move(lines);
    }

    void trace_rect(const long_pair::rect& area, const long_pair::borders& b, int target,
                    long_pair::trace& out) override {
        const cudaStream_t s = stream_.get();
        out = long_pair::trace{};
        out.area = area;
        const long long S = warp_size * trace_rows;
        const long long bands = (area.rows() + S - 1) / S;
        out.stride = bands * S;
        const std::size_t bytes = static_cast<std::size_t>(out.stride * area.cols() / 2);
        pooled<std::uint8_t> nibbles(bytes, s);
        pooled<unsigned long long> hit(1, s);
        SWGPU_CUDA_CHECK(cudaMemsetAsync(hit.data(), 0xff, sizeof(unsigned long long), s));
        band_params p = common(area, b);
        p.trace = nibbles.data();
        p.stride = out.stride;
        p.target = target > 0 ? target : INT_MIN;
        p.first_hit = hit.data();
        pooled<long long> forbid_first;
        pooled<int2> forbid_events;
        if (forbidding()) {
            upload_forbidden(std::span(&area, 1), std::span(&bands, 1), trace_rows, forbid_first, forbid_events);
            p.forbid_first = forbid_first.data();
            p.forbid_events = forbid_events.data();
        }
        launch(forbidding() ? trc_forbid_ : trc_, p, area);
        std::uint8_t* staged = pinned(bytes + sizeof(unsigned long long), 1);
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(staged, nibbles.data(), bytes, cudaMemcpyDeviceToHost, s));
        SWGPU_CUDA_CHECK(
            cudaMemcpyAsync(staged + bytes, hit.data(), sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
        stream_.synchronize();
        out.nibbles.assign(staged, staged + bytes);
        unsigned long long first = 0;
        std::memcpy(&first, staged + bytes, sizeof first);
        if (target > 0 && first != ~0ull) {
            out.hit_i = area.r0 + static_cast<std::int64_t>(first >> 32);
            out.hit_j = area.c0 + static_cast<std::int64_t>(first & 0xffffffffull);
        }
    }

    // Leaves per launch (1 Mbp pair, H100: 48/96/192/288 leaves gave 1.39/1.30/1.26/1.25x the score pass; 192 keeps
    // the pinned buffers at 96 MB): the tuning key long.batch.
    std::size_t trace_batch() const override { return batch_; }

    // Leaves traced in one launch: their borders are gathered on the device from the grid's lines (and the grid's own
    // borders, uploaded once), each leaf gets rings and counters of its own, and all nibbles come back in one copy.
    void trace_blocks(const long_pair::grid& g, const long_pair::borders& outer,
                      std::span<const std::pair<std::int64_t, std::int64_t>> blocks,
                      std::vector<long_pair::trace>& out) override {
        const auto* lines = dynamic_cast<const device_grid_lines*>(g.lines.get());
        if (!lines || blocks.empty()) {
            long_pair::backend::trace_blocks(g, outer, blocks, out);
            return;
        }
        const leaf_layout lay = lay_out_leaves(g, blocks, out);
        if (lay.warps > (forbidding() ? trc_forbid_ : trc_).resident_warps) {  // more bands than fit: smaller launches
            const std::size_t half = blocks.size() / 2;
            std::vector<long_pair::trace> tail;
            trace_blocks(g, outer, blocks.first(half), out);
            trace_blocks(g, outer, blocks.subspan(half), tail);
            for (auto& t : tail) out.push_back(std::move(t));
            return;
        }
        const cudaStream_t s = stream_.get();
        const pooled<int> outer_d = upload_outer(g, outer);
        pooled<int> border_d(lay.border_offset.back(), s);
        pooled<std::uint8_t> nibbles(lay.nibble_offset.back(), s);
        pooled<int2> ring(static_cast<std::size_t>(lay.warps) * ring_len, s);
        pooled<unsigned long long> flags(static_cast<std::size_t>(2 * lay.warps) * flag_stride, s);
        SWGPU_CUDA_CHECK(cudaMemsetAsync(flags.data(), 0, flags.size() * sizeof(unsigned long long), s));
        std::vector<band_params> params(blocks.size());
        std::vector<copy_desc> copies;
        for (std::size_t k = 0; k < blocks.size(); ++k) {
            band_params& p = params[k];
            p = leaf_params(g, *lines, outer_d.data(), blocks[k], out[k], border_d.data() + lay.border_offset[k], copies);
            p.ring = ring.data() + static_cast<std::size_t>(lay.first[k]) * ring_len;
            p.produced = flags.data() + static_cast<std::size_t>(lay.first[k]) * flag_stride;
            p.consumed = flags.data() + static_cast<std::size_t>(lay.warps + lay.first[k]) * flag_stride;
            p.trace = nibbles.data() + lay.nibble_offset[k];
        }
        pooled<long long> forbid_first;
        pooled<int2> forbid_events;
        if (forbidding()) {
            std::vector<long_pair::rect> areas;
            std::vector<long long> bands;
            for (std::size_t k = 0; k < blocks.size(); ++k) {
                areas.push_back(out[k].area);
                bands.push_back(params[k].bands);
            }
            const std::vector<std::size_t> at = upload_forbidden(areas, bands, trace_rows, forbid_first, forbid_events);
            for (std::size_t k = 0; k < blocks.size(); ++k) {
                params[k].forbid_first = forbid_first.data() + at[k];
                params[k].forbid_events = forbid_events.data();
            }
        }
        launch_leaves(params, lay.first, copies, lay.warps);
        // Into a pinned buffer of the batch pool that the traces share (no host copy; back to the pool when the walk
        // has dropped the last of them).
        std::shared_ptr<std::uint8_t> back = batch_buffer(lay.nibble_offset.back());
        SWGPU_CUDA_CHECK(
            cudaMemcpyAsync(back.get(), nibbles.data(), lay.nibble_offset.back(), cudaMemcpyDeviceToHost, s));
        stream_.synchronize();
        for (std::size_t k = 0; k < blocks.size(); ++k)
            out[k].shared = std::shared_ptr<const std::uint8_t>(back, back.get() + lay.nibble_offset[k]);
    }

private:
    // trace_blocks in its steps. The leaves of one launch: each its area and nibble stride (in `out`), its first warp
    // and where its nibbles and borders start in the launch's buffers.
    struct leaf_layout {
        std::vector<int> first;
        std::vector<std::size_t> nibble_offset, border_offset;
        int warps = 0;
    };
    static leaf_layout lay_out_leaves(const long_pair::grid& g,
                                      std::span<const std::pair<std::int64_t, std::int64_t>> blocks,
                                      std::vector<long_pair::trace>& out) {
        const long long S = warp_size * trace_rows;
        leaf_layout lay;
        lay.first.resize(blocks.size());
        lay.nibble_offset.assign(blocks.size() + 1, 0);
        lay.border_offset.assign(blocks.size() + 1, 0);
        out.assign(blocks.size(), {});
        for (std::size_t k = 0; k < blocks.size(); ++k) {
            const auto r = g.block(blocks[k].first, blocks[k].second);
            auto& tr = out[k];
            tr.area = r;
            tr.stride = (r.rows() + S - 1) / S * S;
            lay.nibble_offset[k + 1] = lay.nibble_offset[k] + static_cast<std::size_t>(tr.stride * r.cols() / 2);
            lay.border_offset[k + 1] = lay.border_offset[k] + static_cast<std::size_t>(2 * (r.rows() + r.cols()) + 1);
            lay.first[k] = lay.warps;
            lay.warps += static_cast<int>(tr.stride / S);
        }
        return lay;
    }
    // The grid's own borders on the device: top_h (cols + 1), top_e (cols), left_h (rows), left_f (rows).
    pooled<int> upload_outer(const long_pair::grid& g, const long_pair::borders& outer) {
        const std::size_t rows = static_cast<std::size_t>(g.area.rows()), cols = static_cast<std::size_t>(g.area.cols());
        const std::size_t words = 2 * (rows + cols) + 1;
        pooled<int> d(words, stream_.get());
        int* h = reinterpret_cast<int*>(pinned(words * sizeof(int), 0));
        std::copy(outer.top_h.begin(), outer.top_h.end(), h);
        std::copy(outer.top_e.begin(), outer.top_e.end(), h + cols + 1);
        std::copy(outer.left_h.begin(), outer.left_h.end(), h + 2 * cols + 1);
        std::copy(outer.left_f.begin(), outer.left_f.end(), h + 2 * cols + 1 + rows);
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(d.data(), h, words * sizeof(int), cudaMemcpyHostToDevice, stream_.get()));
        return d;
    }
    // The parameters of leaf `block` (area and stride in `tr`) but its rings, counters and nibbles; its borders, as
    // grid::block_borders gives them, copied into `border` on the device by the copies it adds to `copies` (one
    // gather kernel does them all: about six per leaf, as many cudaMemcpy calls cost more than the leaves' kernel).
    band_params leaf_params(const long_pair::grid& g, const device_grid_lines& lines, const int* outer_d,
                            std::pair<std::int64_t, std::int64_t> block, const long_pair::trace& tr, int* border,
                            std::vector<copy_desc>& copies) const {
        const std::int64_t rows = g.area.rows(), cols = g.area.cols();
        const int* o_top_h = outer_d;
        const int* o_top_e = o_top_h + cols + 1;
        const int* o_left_h = o_top_h + 2 * cols + 1;
        const int* o_left_f = o_left_h + rows;
        auto d2d = [&](int* to, const int* from, std::int64_t count) {
            if (count > 0) copies.push_back({to, from, count});
        };
        const auto [a, b] = block;
        const auto r = tr.area;
        const std::int64_t w = r.cols(), h = r.rows(), jc = r.c0 - g.area.c0, ir = r.r0 - g.area.r0;
        int* top_h = border;
        int* top_e = top_h + w + 1;
        int* left_h = top_e + w;
        int* left_f = left_h + h;
        if (a == 0) {
            d2d(top_h, o_top_h + jc, w + 1);
            d2d(top_e, o_top_e + jc, w);
        } else {
            const int* rh = lines.row_h.data() + (a - 1) * cols;
            const int* re = lines.row_e.data() + (a - 1) * cols;
            d2d(top_h, b == 0 ? o_left_h + ir - 1 : rh + jc - 1, 1);
            d2d(top_h + 1, rh + jc, w);
            d2d(top_e, re + jc, w);
        }
        if (b == 0) {
            d2d(left_h, o_left_h + ir, h);
            d2d(left_f, o_left_f + ir, h);
        } else {
            d2d(left_h, lines.col_h.data() + (b - 1) * rows + ir, h);
            d2d(left_f, lines.col_f.data() + (b - 1) * rows + ir, h);
        }
        band_params p{};
        p.query = query_.data() + r.r0;
        p.subject = subject_.data() + r.c0;
        p.rows = h;
        p.cols = w;
        p.top_h = top_h;
        p.top_e = top_e;
        p.left_h = left_h;
        p.left_f = left_f;
        p.sigma = sigma_.data();
        p.letters = letters_;
        p.gap_oe = oe_;
        p.gap_e = ext_;
        p.K = 1;
        p.bands = tr.stride / (warp_size * trace_rows);
        p.warps = static_cast<int>(p.bands);
        p.row_buffer = nullptr;  // one generation of bands: the last band hands nothing on
        p.row_ready = nullptr;
        p.stride = tr.stride;
        p.target = INT_MIN;
        p.first_hit = nullptr;
        return p;
    }
    // Uploads the leaves' parameters, first warps and border copies in one staged copy, gathers the borders and
    // launches the trace kernel over `warps` warps (one per block).
    void launch_leaves(const std::vector<band_params>& params, const std::vector<int>& first,
                       const std::vector<copy_desc>& copies, int warps) {
        const cudaStream_t s = stream_.get();
        pooled<band_params> params_d(params.size(), s);
        pooled<int> first_d(first.size(), s);
        pooled<copy_desc> copies_d(copies.size(), s);
        // The pinned upload buffer holds the outer borders: wait for that copy before reusing it.
        stream_.synchronize();
        const std::size_t params_bytes = params.size() * sizeof(band_params), first_bytes = first.size() * sizeof(int),
                          copies_bytes = copies.size() * sizeof(copy_desc);
        auto* staged = pinned(params_bytes + copies_bytes + first_bytes, 0);  // copy_desc first: 8-byte aligned
        std::memcpy(staged, params.data(), params_bytes);
        std::memcpy(staged + params_bytes, copies.data(), copies_bytes);
        std::memcpy(staged + params_bytes + copies_bytes, first.data(), first_bytes);
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(params_d.data(), staged, params_bytes, cudaMemcpyHostToDevice, s));
        if (!copies.empty()) {
            SWGPU_CUDA_CHECK(cudaMemcpyAsync(copies_d.data(), staged + params_bytes, copies_bytes,
                                             cudaMemcpyHostToDevice, s));
            gather_copies<<<static_cast<unsigned>(copies.size()), 256, 0, s>>>(copies_d.data());
            SWGPU_CUDA_CHECK_LAUNCH("gather_copies");
        }
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(first_d.data(), staged + params_bytes + copies_bytes, first_bytes,
                                         cudaMemcpyHostToDevice, s));
        const kernel_config& trc = forbidding() ? trc_forbid_ : trc_;
        if (forbidding())
            band_batch_kernel<trace_rows, trace_kind, true><<<warps, warp_size, trc.smem / trc.warps_per_block, s>>>(
                params_d.data(), first_d.data(), static_cast<int>(params.size()));
        else
            band_batch_kernel<trace_rows, trace_kind><<<warps, warp_size, trc.smem / trc.warps_per_block, s>>>(
                params_d.data(), first_d.data(), static_cast<int>(params.size()));
        SWGPU_CUDA_CHECK_LAUNCH("band_batch_kernel");
    }

private:
    // Pinned host buffers for batches of traces, kept in a pool: a buffer returns to it when its last user is gone.
    struct pinned_pool {
        std::mutex lock;
        std::vector<std::pair<std::uint8_t*, std::size_t>> free;
        ~pinned_pool() {
            for (auto& [p, n] : free) (void)cudaFreeHost(p);
        }
    };
    std::shared_ptr<std::uint8_t> batch_buffer(std::size_t bytes) {
        std::uint8_t* p = nullptr;
        std::size_t size = 0;
        {
            std::lock_guard<std::mutex> g(pool_->lock);
            for (auto it = pool_->free.begin(); it != pool_->free.end(); ++it)
                if (it->second >= bytes) {
                    std::tie(p, size) = *it;
                    pool_->free.erase(it);
                    break;
                }
        }
        if (!p) {
            size = bytes;
            SWGPU_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&p), size));
        }
        return std::shared_ptr<std::uint8_t>(p, [pool = pool_, size](std::uint8_t* q) {
            std::lock_guard<std::mutex> g(pool->lock);
            pool->free.emplace_back(q, size);
        });
    }
    std::shared_ptr<pinned_pool> pool_ = std::make_shared<pinned_pool>();

    struct kernel_config {
        void (*kernel)(band_params) = nullptr;
        int rows = 0;  // R
        int kind = 0;
        int warps_per_block = 0;
        int resident_warps = 0;  // 0: does not fit (the profile of this many letters is too large)
        std::size_t smem = 0;
    };
    // A kernel may take as much dynamic shared memory as the device allows: set once per kernel and device, since
    // setting a kernel's attribute waits for its launches in flight (other pairs' passes in a batch).
    template <class Kernel>
    static void allow_shared_memory(Kernel* kernel) {
        static std::mutex lock;
        static std::set<std::pair<const void*, int>> done;  // (kernel, device): kernels of one signature share this
        int dev = 0, smem_max = 0;
        SWGPU_CUDA_CHECK(cudaGetDevice(&dev));
        std::lock_guard<std::mutex> g(lock);
        if (!done.insert({reinterpret_cast<const void*>(kernel), dev}).second) return;
        SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        SWGPU_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max));
    }
    // The most warps per block (4, 2 or 1) whose profiles fit in shared memory; found once per device, letter count
    // and block limit.
    template <int R, int Kind, bool Forbid = false>
    kernel_config configure(int most_warps = max_warps_per_block) {
        static std::mutex lock;
        static std::map<std::tuple<int, int, int>, kernel_config> known;
        kernel_config cfg;
        cfg.kernel = &band_kernel<R, Kind, Forbid>;
        cfg.rows = R;
        cfg.kind = Kind;
        int dev = 0, smem_max = 0;
        SWGPU_CUDA_CHECK(cudaGetDevice(&dev));
        allow_shared_memory(cfg.kernel);
        std::lock_guard<std::mutex> g(lock);
        if (const auto it = known.find({dev, letters_, most_warps}); it != known.end()) return it->second;
        SWGPU_CUDA_CHECK(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        for (int w = most_warps; w >= 1; w /= 2) {
            const std::size_t smem = w * warp_smem_words<R, Kind>(letters_) * sizeof(std::uint32_t);
            if (smem > static_cast<std::size_t>(smem_max)) continue;
            int blocks = 0;
            SWGPU_CUDA_CHECK(
                cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, cfg.kernel, w * warp_size, smem));
            if (blocks < 1) continue;
            cfg.warps_per_block = w;
            cfg.smem = smem;
            cfg.resident_warps = blocks * sms_ * w;
            break;
        }
        known[{dev, letters_, most_warps}] = cfg;
        return cfg;
    }

public:
    // The generations of bands (bands over the warps that fit at once) of a part with `rows` rows in a pass split by
    // columns (the split kernel).
    long long split_generations(std::int64_t rows) const override {
        const auto [S, warps] = split_shape(rows);
        if (!warps) return 0;
        const long long bands = (rows + S - 1) / S;
        return (bands + warps - 1) / warps;
    }
    // The rows of a band and the warps resident at once of the split kernel for a rectangle of `rows` rows.
    std::pair<long long, long long> split_shape(std::int64_t rows) const override {
        const kernel_config* cfg = &forward_entry(rows);
        for (const auto& e : split_entries_)
            if (e.rows == cfg->rows && e.resident_warps) cfg = &e;
        return {static_cast<long long>(warp_size) * cfg->rows, cfg->resident_warps};
    }

    // Sharing the GPU with other pairs' forward passes (long_pair::run_batch): every pass of a batch takes the entry
    // that the batch's rows in all would take, in blocks of that entry (units), at most as many as fit at once
    // (capacity); passes of one kind are one kernel with one block shape and shared memory size on one device, so
    // blocks that add up to the capacity are all resident together, which the bands' waits need.
    share_shape sharing(const long_pair::rect& area, std::int64_t batch_rows) const override {
        const kernel_config& e = batch_entry(batch_rows);
        if (!e.resident_warps || (e.kind != forward_x && e.kind != forward_comp)) return {};
        const long long S = static_cast<long long>(warp_size) * e.rows;
        const long long bands = (area.rows() + S - 1) / S;
        share_shape out;
        out.capacity = static_cast<std::size_t>(e.resident_warps / e.warps_per_block);
        out.units = std::min<std::size_t>(static_cast<std::size_t>((bands + e.warps_per_block - 1) / e.warps_per_block),
                                          out.capacity);
        int dev = 0;
        SWGPU_CUDA_CHECK(cudaGetDevice(&dev));
        out.kind = (((static_cast<long long>(e.smem) * 8 + e.warps_per_block) * 64 + e.rows) * 64 + dev) * 8 + e.kind;
        return out;
    }
    void share(std::size_t units, std::int64_t batch_rows) override {
        share_units_ = units;
        shared_ = units ? &batch_entry(batch_rows) : nullptr;
    }
    // The entry of a batch's passes: long.batch_entry (fitted; with the compensation policy, its kernel with bands of
    // as many rows), else the one `batch_rows` rows would take alone.
    const kernel_config& batch_entry(std::int64_t batch_rows) const {
        const std::int64_t k = tuning::integer("long.batch_entry", device_arch());
        if (!forced_entry_ && k >= 0 && k < static_cast<std::int64_t>(forward_entries_.size()) &&
            forward_entries_[k].resident_warps && forward_entries_[k].kind == forward_x)
            for (const auto& e : forward_entries_)
                if (e.resident_warps && e.kind == policy_kind() && e.rows == forward_entries_[k].rows) return e;
        return entry_for(batch_rows, false);
    }
    void use_policy(long_pair::policy p) override { policy_ = p; }
    std::size_t concurrent_tracebacks() const override {
        return static_cast<std::size_t>(std::max<std::int64_t>(1, tuning::integer("long.batch_tracebacks", device_arch())));
    }

private:
    // The forward entry for a rectangle of `rows` rows (while shared, the batch's entry).
    const kernel_config& forward_entry(std::int64_t rows) const { return shared_ ? *shared_ : entry_for(rows); }
    // The default (bands of 1024 rows) when `rows` make at least half as many bands as warps fit at once; else the
    // entry with the largest bands that does (shorter rectangles, the blocks the traceback recomputes, need more,
    // thinner bands to fill the GPU); long.entry overrides. With long.gpu_narrow = 1, bands of 1024 rows go in 16-bit
    // cells where those are exact (narrow_ok_), but not in a batch (`narrow` false: its passes share one kernel); the
    // H100's table keeps 32-bit cells, which were faster there (docs/performance.md).
    const kernel_config& entry_for(std::int64_t rows, bool narrow = true) const {
        if (forced_entry_) return fwd_;
        const kernel_config* best = nullptr;
        for (const auto& e : forward_entries_) {
            if (!e.resident_warps || e.kind != policy_kind() || (best && e.rows > best->rows)) continue;
            const std::int64_t bands = (rows + warp_size * e.rows - 1) / (warp_size * e.rows);
            if (2 * bands >= e.resident_warps) return with_narrow(e, narrow);
            best = &e;
        }
        return best ? with_narrow(*best, narrow) : fwd_;
    }
    // The forward kernel of the policy: the anti-diagonal bands (forward_x) or the compensation method (forward_comp).
    int policy_kind() const { return policy_ == long_pair::policy::compensation ? forward_comp : forward_x; }
    const kernel_config& with_narrow(const kernel_config& e, bool narrow) const {
        const kernel_config& n = forward_entries_[narrow_entry];
        return narrow && narrow_auto_ && narrow_ok_ && e.kind == forward_x && e.rows == n.rows && n.resident_warps ? n
                                                                                                                : e;
    }
    static constexpr std::size_t narrow_entry = 9;

    band_params common(const long_pair::rect& area, const long_pair::borders& b) {
        const cudaStream_t s = stream_.get();
        const std::size_t rows = static_cast<std::size_t>(area.rows()), cols = static_cast<std::size_t>(area.cols());
        const std::size_t words = 2 * (rows + cols) + 1;
        borders_ = pooled<int>(words, s);
        int* d = borders_.data();
        // One copy from pinned memory (the previous call's copy is done: every call ends with a synchronize); while
        // shared, from pageable memory (allocating pinned memory waits for the other pairs' passes to end).
        if (share_units_) pageable_.resize(words);
        int* h = share_units_ ? pageable_.data() : reinterpret_cast<int*>(pinned(words * sizeof(int), 0));
        std::copy(b.top_h.begin(), b.top_h.end(), h);
        std::copy(b.top_e.begin(), b.top_e.end(), h + cols + 1);
        std::copy(b.left_h.begin(), b.left_h.end(), h + 2 * cols + 1);
        std::copy(b.left_f.begin(), b.left_f.end(), h + 2 * cols + 1 + rows);
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(d, h, words * sizeof(int), cudaMemcpyHostToDevice, s));
        band_params p{};
        p.query = query_.data() + area.r0;
        p.subject = subject_.data() + area.c0;
        p.rows = area.rows();
        p.cols = area.cols();
        p.top_h = d;
        p.top_e = d + cols + 1;
        p.left_h = d + 2 * cols + 1;
        p.left_f = d + 2 * cols + 1 + rows;
        p.sigma = sigma_.data();
        p.letters = letters_;
        p.gap_oe = oe_;
        p.gap_e = ext_;
        p.K = 1;
        return p;
    }

    void launch(const kernel_config& cfg, band_params& p, const long_pair::rect& area) {
        const cudaStream_t s = stream_.get();
        const long long S = warp_size * cfg.rows;
        p.bands = (area.rows() + S - 1) / S;
        // As many warps as fit at once (while shared, as many as this pass's share), spread so that every generation
        // of bands is full.
        long long fit = cfg.resident_warps;
        if (share_units_ && cfg.kind != trace_kind) {
            if (&cfg != shared_) throw runtime_failure("internal error: a shared long-pair pass took another kernel");
            fit = static_cast<long long>(share_units_) * cfg.warps_per_block;
        }
        const long long generations = (p.bands + fit - 1) / fit;
        p.warps = static_cast<int>((p.bands + generations - 1) / generations);
        for (int d = 0; d < 5; ++d) p.comp_level[d] = -(1 << d) * p.gap_e, p.comp_decay[d] = -(1 << d) * cfg.rows * p.gap_e;
        ring_ = pooled<int2>(static_cast<std::size_t>(p.warps) * ring_len, s);
        flags_ = pooled<unsigned long long>(static_cast<std::size_t>(2 * p.warps + 1) * flag_stride, s);
        row_buffer_ = pooled<int2>(static_cast<std::size_t>(area.cols()), s);
        SWGPU_CUDA_CHECK(cudaMemsetAsync(flags_.data(), 0, flags_.size() * sizeof(unsigned long long), s));
        p.ring = ring_.data();
        p.produced = flags_.data();
        p.consumed = flags_.data() + static_cast<std::size_t>(p.warps) * flag_stride;
        p.row_ready = flags_.data() + static_cast<std::size_t>(2 * p.warps) * flag_stride;
        p.row_buffer = row_buffer_.data();
        const int blocks = (p.warps + cfg.warps_per_block - 1) / cfg.warps_per_block;
        // Long forward passes report progress: the kernel counts chunks in device memory, read a few times a second
        // by a copy on a stream of its own while the kernel runs.
        const bool report = progress && !share_units_ && cfg.kind != trace_kind && area.cells() >= 2e10;
        pooled<unsigned long long> done(report ? 1 : 0, s);
        if (report) SWGPU_CUDA_CHECK(cudaMemsetAsync(done.data(), 0, sizeof(unsigned long long), s));
        p.done_chunks = report ? done.data() : nullptr;
        if (profile_) profile_start_.record(s);
        cfg.kernel<<<blocks, cfg.warps_per_block * warp_size, cfg.smem, s>>>(p);
        SWGPU_CUDA_CHECK_LAUNCH("band_kernel");
        if (report) {
            const int lag = band_lag(cfg.kind);
            const double total = double(p.bands) * double((area.cols() + lag + warp_size - 1) / warp_size);
            cuda_event finished;
            finished.record(s);
            cuda_stream poll;
            auto* seen = reinterpret_cast<unsigned long long*>(pinned(sizeof(unsigned long long), 1));
            auto last = std::chrono::steady_clock::now();
            for (;;) {
                const cudaError_t state = cudaEventQuery(finished.get());
                if (state == cudaSuccess) break;
                if (state != cudaErrorNotReady) SWGPU_CUDA_CHECK(state);
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
                if (std::chrono::steady_clock::now() - last < std::chrono::milliseconds(250)) continue;
                last = std::chrono::steady_clock::now();
                SWGPU_CUDA_CHECK(cudaMemcpyAsync(seen, done.data(), sizeof *seen, cudaMemcpyDeviceToHost, poll.get()));
                poll.synchronize();
                progress(std::min(1.0, double(*seen) / total));
            }
        }
        if (profile_) {
            profile_end_.record(s);
            profile_end_.synchronize();
            (cfg.rows == trace_rows ? trace_kernel_ms_ : forward_kernel_ms_) += profile_end_.since(profile_start_);
        }
    }

    bool forbidding() const { return forbidden_ && !forbidden_->paths.empty(); }
    // The forbidden cells of rectangles `areas` (with bands[k] bands of 32 lanes of R rows each) on the device, in
    // `first` and `events`; returns where each rectangle's offsets start in `first`.
    std::vector<std::size_t> upload_forbidden(std::span<const long_pair::rect> areas, std::span<const long long> bands,
                                              int R, pooled<long long>& first, pooled<int2>& events) {
        std::vector<long long> f;
        std::vector<int2> ev;
        std::vector<std::size_t> at;
        for (std::size_t k = 0; k < areas.size(); ++k) {
            at.push_back(f.size());
            append_forbidden_events(*forbidden_, areas[k], R, bands[k] * warp_size, f, ev);
        }
        if (ev.empty()) ev.push_back(make_int2(INT_MAX, 0));  // never read: a buffer all the same
        first = upload(f.data(), f.size());
        events = upload(ev.data(), ev.size());
        return at;
    }

    // Pinned host buffer `slot` (0: uploads, 1: downloads) of at least `bytes`, reused from call to call; every call
    // synchronizes its stream before it returns, so no copy from or to it is in flight when it is reused or resized.
    std::uint8_t* pinned(std::size_t bytes, int slot) {
        if (bytes > pinned_bytes_[slot]) {
            if (pinned_[slot]) (void)cudaFreeHost(pinned_[slot]);
            pinned_[slot] = nullptr;
            pinned_bytes_[slot] = 0;
            SWGPU_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned_[slot]), bytes));
            pinned_bytes_[slot] = bytes;
        }
        return pinned_[slot];
    }

public:
    // Checkpoint lines of an A x B grid over rows x cols on this backend's device (for a grid gathered here).
    std::shared_ptr<device_grid_lines> new_lines(std::int64_t A, std::int64_t B, std::int64_t rows,
                                                 std::int64_t cols) override {
        auto lines = std::make_shared<device_grid_lines>(A, B, rows, cols, stream_.get());
        stream_.synchronize();
        return lines;
    }

    ~gpu_backend() override {
        for (auto* p : pinned_)
            if (p) (void)cudaFreeHost(p);
        if (profile_)
            std::fprintf(stderr, "long_pair kernels: forward %.3f ms, trace %.3f ms\n", forward_kernel_ms_,
                         trace_kernel_ms_);
    }

private:
    // long.profile=1: kernel times (CUDA events) on stderr when the backend goes away, for benchmarks.
    bool profile_ = tuning::flag("long.profile", device_arch());
    cuda_event profile_start_, profile_end_;
    double forward_kernel_ms_ = 0, trace_kernel_ms_ = 0;
    std::uint8_t* pinned_[2] = {nullptr, nullptr};
    std::size_t pinned_bytes_[2] = {0, 0};
    int oe_, ext_;
    int sms_ = 0;
    int letters_ = 1;
    std::size_t budget_ = 0;
    template <class T>
    pooled<T> upload(const T* host, std::size_t count) {
        pooled<T> d(count, stream_.get());
        if (count)
            SWGPU_CUDA_CHECK(cudaMemcpyAsync(d.data(), host, count * sizeof(T), cudaMemcpyHostToDevice, stream_.get()));
        return d;
    }
    cuda_stream stream_;
    pooled<std::uint8_t> query_, subject_;
    pooled<int> sigma_;
    std::vector<int> pageable_;  // the borders' upload while shared
    pooled<int> borders_;
    pooled<int2> ring_;
    pooled<unsigned long long> flags_;
    pooled<int2> row_buffer_;
    std::vector<kernel_config> forward_entries_, split_entries_;
    std::vector<kernel_config> forbid_entries_;  // forward_x with forbidden steps (made by forbid())
    kernel_config trc_forbid_;
    std::shared_ptr<const long_pair::forbidden_pairs> forbidden_;
    bool forced_entry_ = false;
    long_pair::policy policy_ = long_pair::policy::antidiagonal;  // use_policy
    bool narrow_ok_ = false;  // 16-bit cells are exact for this pair's scores
    bool narrow_auto_ = tuning::integer("long.gpu_narrow", device_arch()) != 0;  // the default takes 16-bit cells
    std::size_t share_units_ = 0;               // while shared: the blocks this backend's passes may take
    const kernel_config* shared_ = nullptr;     // and the batch's entry
    std::size_t batch_ =
        static_cast<std::size_t>(std::max<std::int64_t>(3, tuning::integer("long.batch", device_arch())));
    kernel_config fwd_, trc_;
};

}  // namespace

namespace detail {

std::unique_ptr<device_backend> single_device_backend(std::span<const std::uint8_t> query,
                                                      std::span<const std::uint8_t> subject, const scoring& sc,
                                                      std::size_t device_memory) {
    return std::make_unique<gpu_backend>(query, subject, sc, device_memory);
}

}  // namespace detail

std::unique_ptr<long_pair::backend> long_pair_backend(std::span<const std::uint8_t> query,
                                                      std::span<const std::uint8_t> subject, const scoring& sc,
                                                      std::size_t device_memory, std::vector<int> devices) {
    if (devices.size() > 1) return detail::multi_device_backend(query, subject, sc, device_memory, std::move(devices));
    return std::make_unique<gpu_backend>(query, subject, sc, device_memory);
}

}  // namespace swgpu::gpu
