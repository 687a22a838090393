// Long pairs on several GPUs: the forward pass of a large rectangle split over devices, by rows into slabs or by block
// columns, each part on a backend of one device (gpu/align/long_pair.cu, through gpu/align/long_pair_backend.cuh),
// the parts' grids gathered on the first device, directly or through host memory.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/align/long_pair/long_pair.hpp"
#include "core/tuning.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/gpu.hpp"
#include "gpu/align/long_pair_backend.cuh"

namespace swgpu::gpu {

namespace {

using detail::border_exchange;
using detail::device_backend;
using detail::device_grid_lines;
using detail::row_exchange;
using detail::single_device_backend;

// Copies `height` rows of `width` bytes from memory of device `src_dev` to memory of device `dst_dev`. With `direct`,
// one copy through the peer mapping (the source's pool made accessible to the destination); otherwise staged through
// pinned host memory in pieces of at most 64 MiB, for devices that cannot reach each other's memory.
void copy_between_devices(int dst_dev, void* dst, std::size_t dpitch, int src_dev, const void* src, std::size_t spitch,
                          std::size_t width, std::size_t height, bool direct) {
    if (!width || !height) return;
    if (dst_dev == src_dev || direct) {
        if (height == 1) SWGPU_CUDA_CHECK(cudaMemcpy(dst, src, width, cudaMemcpyDefault));
        else SWGPU_CUDA_CHECK(cudaMemcpy2D(dst, dpitch, src, spitch, width, height, cudaMemcpyDefault));
        return;
    }
    const std::size_t cap = std::size_t(64) << 20;
    void* staging = nullptr;
    SWGPU_CUDA_CHECK(cudaMallocHost(&staging, std::min(cap, width * height)));
    const std::unique_ptr<void, void (*)(void*)> owner(staging, [](void* h) { (void)cudaFreeHost(h); });
    auto* to = static_cast<unsigned char*>(dst);
    const auto* from = static_cast<const unsigned char*>(src);
    const std::size_t piece = std::min(width, cap), rows_per = std::max<std::size_t>(1, cap / piece);
    for (std::size_t r = 0; r < height; r += rows_per) {
        const std::size_t n = std::min(rows_per, height - r);
        for (std::size_t off = 0; off < width; off += piece) {
            const std::size_t w = std::min(piece, width - off);
            use_device(src_dev);
            SWGPU_CUDA_CHECK(cudaMemcpy2D(staging, w, from + r * spitch + off, spitch, w, n, cudaMemcpyDeviceToHost));
            use_device(dst_dev);
            SWGPU_CUDA_CHECK(cudaMemcpy2D(to + r * dpitch + off, dpitch, staging, w, w, n, cudaMemcpyHostToDevice));
        }
    }
}

// Long pairs on several devices. The forward pass of a large rectangle (the whole matrix, first of all) is split by
// block columns, part i on device i; part i streams its right border to part i+1 band by band (border_exchange), so
// the parts run at once, each starting once the part to its left has swept its first band across its columns (see
// forward()). The parts' grids are then gathered into one grid on
// the first device (their right borders are the checkpoint columns between them), where everything else runs: the
// search for the end cell, the traceback and every smaller rectangle. Parts on one physical device (logical devices,
// a test option) run one after the other, in order: a persistent kernel waiting on a part that cannot get onto the
// GPU beside it would wait for ever. Output is the single device's: the grid is the same grid.
class multi_gpu_backend final : public long_pair::backend {
public:
    multi_gpu_backend(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject, const scoring& sc,
                      std::size_t device_memory, std::vector<int> devices)
        : devices_(std::move(devices)) {
        for (const int d : devices_) {
            use_device(d);
            parts_.push_back(single_device_backend(query, subject, sc, device_memory));
        }
        use_device(devices_[0]);
        std::vector<int> sorted = devices_;
        std::sort(sorted.begin(), sorted.end());
        concurrent_ = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
        // The parts' grids are gathered on the first device: directly where it can reach the other device's memory
        // (NVLink or PCIe peer access; memory from a device's stream-ordered pool is reachable from another device
        // only once the pool grants it access), else through host memory (always with long.peer=0: a test
        // option for that path on machines whose GPUs reach each other).
        const std::string arch = device_arch();
        for (const int d : devices_) {
            if (!tuning::flag("long.peer", arch)) break;
            if (d == devices_[0] || direct_.count(d)) continue;
            int can = 0;
            SWGPU_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, devices_[0], d));
            if (!can) continue;
            cudaMemPool_t pool;
            SWGPU_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, d));
            cudaMemAccessDesc access{};
            access.location.type = cudaMemLocationTypeDevice;
            access.location.id = devices_[0];
            access.flags = cudaMemAccessFlagsProtReadWrite;
            if (cudaMemPoolSetAccess(pool, &access, 1) == cudaSuccess) direct_.insert(d);
            else (void)cudaGetLastError();
        }
        split_cells_ = tuning::real("long.split_cells", arch);
        forced_split_ = tuning::flag("long.split_forced", arch);
        rows_split_ = tuning::text("long.split", arch) == "rows";
    }

    std::int64_t spacing_multiple() const override { return parts_[0]->spacing_multiple(); }
    double leaf_cells() const override { return parts_[0]->leaf_cells(); }
    std::size_t grid_budget() const override { return parts_[0]->grid_budget(); }
    std::size_t trace_batch() const override { return parts_[0]->trace_batch(); }
    void trace_rect(const long_pair::rect& area, const long_pair::borders& b, int target,
                    long_pair::trace& out) override {
        parts_[0]->trace_rect(area, b, target, out);
    }
    void trace_blocks(const long_pair::grid& g, const long_pair::borders& outer,
                      std::span<const std::pair<std::int64_t, std::int64_t>> blocks,
                      std::vector<long_pair::trace>& out) override {
        parts_[0]->trace_blocks(g, outer, blocks, out);
    }

    // Forbidden steps (further alignments of a pair): every pass and trace on the first device, which forbids them.
    bool forbid(std::shared_ptr<const long_pair::forbidden_pairs> f) override {
        if (!parts_[0]->forbid(f)) return false;
        forbidden_ = std::move(f);
        return true;
    }

    void forward(const long_pair::rect& area, const long_pair::borders& b, std::int64_t K,
                 long_pair::grid& g) override {
        if (forbidden_ && !forbidden_->paths.empty()) {
            parts_[0]->progress = progress;
            parts_[0]->forward(area, b, K, g);
            return;
        }
        const std::int64_t blocks = (area.cols() + K - 1) / K;
        const int n = static_cast<int>(std::min<std::int64_t>(static_cast<std::int64_t>(parts_.size()), blocks));
        parts_[0]->progress = progress;
        // A part's band b needs the left border of band b, which the part to its left has only once its band b has
        // crossed it: each part starts one band sweep after the one to its left, and n parts over G generations of
        // bands take (G + n - 1) / n of one device's time (measured, 2 GPUs, 10 Mbp: G = 5, 27.4 s against 45.4).
        // With one generation a split gains nothing (the blocks the traceback recomputes, say): those stay on the
        // first device, unless long.split_forced forces splits (tests).
        if (rows_split_ && parts_.size() >= 2 && area.cells() >= split_cells_) {
            forward_rows(area, b, K, g);
            return;
        }
        if (n < 2 || area.cells() < split_cells_ || (!forced_split_ && parts_[0]->split_generations(area.rows()) < 2)) {
            parts_[0]->forward(area, b, K, g);
            return;
        }
        const std::int64_t rows = area.rows(), cols = area.cols();
        std::vector<std::int64_t> cut(static_cast<std::size_t>(n) + 1);  // column cuts on block boundaries
        for (int i = 0; i < n; ++i) cut[static_cast<std::size_t>(i)] = area.c0 + blocks * i / n * K;
        cut[static_cast<std::size_t>(n)] = area.c1;
        // The exchanges, in mapped pinned memory: per border, H and F of every row and a flag per band (bands are at
        // least 256 rows).
        const std::size_t flags = static_cast<std::size_t>(rows / 256 + 2);
        const std::size_t per = 2 * static_cast<std::size_t>(rows) * sizeof(int) + flags * sizeof(unsigned);
        void* host = nullptr;
        SWGPU_CUDA_CHECK(cudaHostAlloc(&host, per * static_cast<std::size_t>(n - 1),
                                       cudaHostAllocMapped | cudaHostAllocPortable));
        std::unique_ptr<void, void (*)(void*)> owner(host, [](void* h) { (void)cudaFreeHost(h); });
        std::vector<border_exchange> ex(static_cast<std::size_t>(n - 1));
        for (int i = 0; i + 1 < n; ++i) {
            auto* base = static_cast<unsigned char*>(host) + per * static_cast<std::size_t>(i);
            auto& e = ex[static_cast<std::size_t>(i)];
            e.h = reinterpret_cast<int*>(base);
            e.f = e.h + rows;
            e.ready = reinterpret_cast<unsigned*>(e.f + rows);
            std::memset(e.ready, 0, flags * sizeof(unsigned));
        }
        std::vector<long_pair::grid> grids(static_cast<std::size_t>(n));
        const auto run = [&](int i) {
            const auto u = static_cast<std::size_t>(i);
            use_device(devices_[u]);
            const long_pair::rect a{area.r0, area.r1, cut[u], cut[u + 1]};
            const std::size_t off = static_cast<std::size_t>(cut[u] - area.c0), w = static_cast<std::size_t>(a.cols());
            long_pair::borders bi;
            bi.top_h.assign(b.top_h.begin() + static_cast<std::ptrdiff_t>(off), b.top_h.begin() + static_cast<std::ptrdiff_t>(off + w + 1));
            bi.top_e.assign(b.top_e.begin() + static_cast<std::ptrdiff_t>(off), b.top_e.begin() + static_cast<std::ptrdiff_t>(off + w));
            if (i == 0) {
                bi.left_h = b.left_h;
                bi.left_f = b.left_f;
            } else {
                bi.left_h.assign(static_cast<std::size_t>(rows), 0);  // streamed instead
                bi.left_f.assign(static_cast<std::size_t>(rows), 0);
            }
            parts_[u]->forward_part(a, bi, K, grids[u], i > 0 ? &ex[u - 1] : nullptr, i + 1 < n ? &ex[u] : nullptr);
        };
        on_parts(static_cast<std::size_t>(n), [&](std::size_t i) { run(static_cast<int>(i)); });
        gather_columns(area, K, cut, grids, ex, g);
    }

private:
    // Runs work(i) for i < n: on a thread each when the devices run concurrently (the first failure rethrown after
    // all have ended), else one after the other.
    void on_parts(std::size_t n, const std::function<void(std::size_t)>& work) const {
        if (!concurrent_) {
            for (std::size_t i = 0; i < n; ++i) work(i);
            return;
        }
        std::vector<std::exception_ptr> failed(n);
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < n; ++i)
            threads.emplace_back([&, i] {
                try {
                    work(i);
                } catch (...) {
                    failed[i] = std::current_exception();
                }
            });
        for (auto& t : threads) t.join();
        for (const auto& f : failed)
            if (f) std::rethrow_exception(f);
    }

    // forward()'s last step: the parts' grids gathered into `g` on the first device (the border between two parts is
    // the checkpoint column between them), then each part's grid back to its own device's pool.
    void gather_columns(const long_pair::rect& area, std::int64_t K, const std::vector<std::int64_t>& cut,
                        std::vector<long_pair::grid>& grids, const std::vector<border_exchange>& ex,
                        long_pair::grid& g) {
        const std::int64_t rows = area.rows(), cols = area.cols(), blocks = (cols + K - 1) / K;
        const int n = static_cast<int>(grids.size());
        use_device(devices_[0]);
        g = long_pair::grid{};
        g.area = area;
        g.K = K;
        g.A = (rows + K - 1) / K;
        g.B = blocks;
        g.block_max.assign(static_cast<std::size_t>(g.A * g.B), 0);
        auto lines = parts_[0]->new_lines(g.A, g.B, rows, cols);
        for (int i = 0; i < n; ++i) {
            const auto u = static_cast<std::size_t>(i);
            const long_pair::grid& gi = grids[u];
            const std::int64_t boff = (cut[u] - area.c0) / K, wi = cut[u + 1] - cut[u];
            for (std::int64_t a = 0; a < g.A; ++a)
                for (std::int64_t bb = 0; bb < gi.B; ++bb)
                    g.block_max[static_cast<std::size_t>(a * g.B + boff + bb)] = gi.block_max[static_cast<std::size_t>(a * gi.B + bb)];
            const auto* li = dynamic_cast<const device_grid_lines*>(gi.lines.get());
            if (!li) throw runtime_failure("internal error: a long-pair part kept its grid off the device");
            const int dev = devices_[u], home = devices_[0];
            const bool direct = direct_.count(dev) > 0;
            if (g.A > 1) {
                for (auto [to, from] : {std::pair{lines->row_h.data(), li->row_h.data()}, std::pair{lines->row_e.data(), li->row_e.data()}})
                    copy_between_devices(home, to + (cut[u] - area.c0), static_cast<std::size_t>(cols) * sizeof(int), dev, from,
                                         static_cast<std::size_t>(wi) * sizeof(int), static_cast<std::size_t>(wi) * sizeof(int),
                                         static_cast<std::size_t>(g.A - 1), direct);
            }
            const std::size_t col_bytes = static_cast<std::size_t>((gi.B - 1) * rows) * sizeof(int);
            for (auto [to, from] : {std::pair{lines->col_h.data(), li->col_h.data()}, std::pair{lines->col_f.data(), li->col_f.data()}})
                copy_between_devices(home, to + boff * rows, col_bytes, dev, from, col_bytes, col_bytes, col_bytes ? 1 : 0, direct);
            use_device(home);
            if (i + 1 < n) {  // the border to the next part is the checkpoint column between them
                const std::int64_t b_line = boff + gi.B - 1;
                SWGPU_CUDA_CHECK(cudaMemcpy(lines->col_h.data() + b_line * rows, ex[u].h, static_cast<std::size_t>(rows) * sizeof(int), cudaMemcpyDefault));
                SWGPU_CUDA_CHECK(cudaMemcpy(lines->col_f.data() + b_line * rows, ex[u].f, static_cast<std::size_t>(rows) * sizeof(int), cudaMemcpyDefault));
            }
        }
        g.lines = std::move(lines);
        for (int i = 0; i < n; ++i) {  // each part's grid goes back to its own device's pool
            use_device(devices_[static_cast<std::size_t>(i)]);
            grids[static_cast<std::size_t>(i)] = long_pair::grid{};
        }
        use_device(devices_[0]);
    }

    // The forward pass split by rows (long.split=rows, the default):
    // slabs of one generation of bands each (W bands of S rows, rounded down to whole block rows; K rows when splits
    // are forced, for tests), slab s on device s mod n. A slab's first band reads the slab above's bottom row as that
    // slab's last band writes it, chunk by chunk, through memory every device maps (row_exchange), so a device waits
    // for the first chunks of the slab above, not for a whole band sweep as in the column split. Each device runs its
    // slabs in order (one launch each); slab s waits only on slab s - 1, so no wait closes a cycle. The slabs' grids
    // are gathered on the first device; the row between two slabs is the checkpoint row between them.
    void forward_rows(const long_pair::rect& area, const long_pair::borders& b, std::int64_t K, long_pair::grid& g) {
        const std::int64_t rows = area.rows(), cols = area.cols();
        const auto [S, warps] = parts_[0]->split_shape(rows);
        std::int64_t height = forced_split_ ? K : std::max<std::int64_t>(K, S * warps / K * K);
        const std::int64_t slabs = (rows + height - 1) / height;
        if (slabs < 2) {
            parts_[0]->forward(area, b, K, g);
            return;
        }
        const std::size_t n = std::min(parts_.size(), static_cast<std::size_t>(slabs));
        // The exchanges, in mapped pinned memory: per boundary, H and E of every column and a counter on a line of its
        // own.
        const std::size_t per = (2 * static_cast<std::size_t>(cols) * sizeof(int) + 255) / 128 * 128;
        void* host = nullptr;
        SWGPU_CUDA_CHECK(cudaHostAlloc(&host, per * static_cast<std::size_t>(slabs - 1),
                                       cudaHostAllocMapped | cudaHostAllocPortable));
        std::unique_ptr<void, void (*)(void*)> owner(host, [](void* h) { (void)cudaFreeHost(h); });
        std::vector<row_exchange> ex(static_cast<std::size_t>(slabs - 1));
        for (std::size_t i = 0; i < ex.size(); ++i) {
            auto* base = static_cast<unsigned char*>(host) + per * i;
            ex[i].h = reinterpret_cast<int*>(base);
            ex[i].e = ex[i].h + cols;
            ex[i].ready = reinterpret_cast<unsigned long long*>(base + per - 128);
            *ex[i].ready = 0;
        }
        std::vector<long_pair::grid> grids(static_cast<std::size_t>(slabs));
        const auto run = [&](std::int64_t s) {
            const auto u = static_cast<std::size_t>(s);
            const std::size_t part = u % n;
            use_device(devices_[part]);
            const std::int64_t r0 = s * height, r1 = std::min(rows, r0 + height);
            const long_pair::rect a{area.r0 + r0, area.r0 + r1, area.c0, area.c1};
            long_pair::borders bi;
            if (s == 0) {
                bi.top_h = b.top_h;
                bi.top_e = b.top_e;
            } else {  // streamed but for the corner, H left of the row above
                bi.top_h.assign(static_cast<std::size_t>(cols) + 1, 0);
                bi.top_e.assign(static_cast<std::size_t>(cols), 0);
                bi.top_h[0] = b.left_h[static_cast<std::size_t>(r0 - 1)];
            }
            bi.left_h.assign(b.left_h.begin() + r0, b.left_h.begin() + r1);
            bi.left_f.assign(b.left_f.begin() + r0, b.left_f.begin() + r1);
            parts_[part]->forward_part(a, bi, K, grids[u], nullptr, nullptr, s > 0 ? &ex[u - 1] : nullptr,
                                       s + 1 < slabs ? &ex[u] : nullptr);
        };
        if (concurrent_)  // each device its slabs in order
            on_parts(n, [&](std::size_t i) {
                for (std::int64_t s = static_cast<std::int64_t>(i); s < slabs; s += static_cast<std::int64_t>(n)) run(s);
            });
        else
            for (std::int64_t s = 0; s < slabs; ++s) run(s);
        gather_slabs(area, K, height, n, grids, ex, g);
    }

    // forward_rows()'s last step: the slabs' grids gathered into `g` on the first device (the row handed from one slab
    // to the next is the checkpoint row between them), then each slab's grid back to its own device's pool.
    void gather_slabs(const long_pair::rect& area, std::int64_t K, std::int64_t height, std::size_t n,
                      std::vector<long_pair::grid>& grids, const std::vector<row_exchange>& ex, long_pair::grid& g) {
        const std::int64_t rows = area.rows(), cols = area.cols(), slabs = static_cast<std::int64_t>(grids.size());
        const int home = devices_[0];
        use_device(home);
        g = long_pair::grid{};
        g.area = area;
        g.K = K;
        g.A = (rows + K - 1) / K;
        g.B = (cols + K - 1) / K;
        g.block_max.assign(static_cast<std::size_t>(g.A * g.B), 0);
        auto lines = parts_[0]->new_lines(g.A, g.B, rows, cols);
        const std::size_t row_bytes = static_cast<std::size_t>(cols) * sizeof(int);
        for (std::int64_t s = 0; s < slabs; ++s) {
            const auto u = static_cast<std::size_t>(s);
            const int dev = devices_[u % n];
            const bool direct = direct_.count(dev) > 0;
            const long_pair::grid& gs = grids[u];
            const std::int64_t a0 = s * height / K, slab_rows = gs.area.rows();
            std::copy(gs.block_max.begin(), gs.block_max.end(),
                      g.block_max.begin() + static_cast<std::ptrdiff_t>(a0 * g.B));
            const auto* ls = dynamic_cast<const device_grid_lines*>(gs.lines.get());
            if (!ls) throw runtime_failure("internal error: a long-pair slab kept its grid off the device");
            if (gs.A > 1) {
                const std::size_t bytes = static_cast<std::size_t>(gs.A - 1) * row_bytes;
                copy_between_devices(home, lines->row_h.data() + a0 * cols, bytes, dev, ls->row_h.data(), bytes, bytes, 1,
                                     direct);
                copy_between_devices(home, lines->row_e.data() + a0 * cols, bytes, dev, ls->row_e.data(), bytes, bytes, 1,
                                     direct);
            }
            if (s + 1 < slabs) {  // the row handed to the slab below is the checkpoint row between them
                const std::int64_t line = a0 + gs.A - 1;
                use_device(home);
                SWGPU_CUDA_CHECK(cudaMemcpy(lines->row_h.data() + line * cols, ex[u].h, row_bytes, cudaMemcpyDefault));
                SWGPU_CUDA_CHECK(cudaMemcpy(lines->row_e.data() + line * cols, ex[u].e, row_bytes, cudaMemcpyDefault));
            }
            if (g.B > 1) {
                const std::size_t width = static_cast<std::size_t>(slab_rows) * sizeof(int);
                for (auto [to, from] : {std::pair{lines->col_h.data(), ls->col_h.data()}, std::pair{lines->col_f.data(), ls->col_f.data()}})
                    copy_between_devices(home, to + s * height, static_cast<std::size_t>(rows) * sizeof(int), dev, from,
                                         width, width, static_cast<std::size_t>(g.B - 1), direct);
            }
            use_device(home);
        }
        g.lines = std::move(lines);
        for (std::int64_t s = 0; s < slabs; ++s) {  // each slab's grid goes back to its own device's pool
            use_device(devices_[static_cast<std::size_t>(s) % n]);
            grids[static_cast<std::size_t>(s)] = long_pair::grid{};
        }
        use_device(home);
    }

    std::vector<int> devices_;
    std::vector<std::unique_ptr<device_backend>> parts_;
    std::shared_ptr<const long_pair::forbidden_pairs> forbidden_;  // forbid()
    std::set<int> direct_;  // devices whose memory the first device reaches directly
    bool concurrent_ = false;
    double split_cells_ = 1e9;  // smaller rectangles stay on the first device (long.split_cells)
    bool forced_split_ = false;  // long.split_forced (tests): split whatever the generations
    // By rows into slabs (forward_rows), unless long.split=columns asks for the split by columns (forward):
    // measured on 2 and 4 H100s for a 10 Mbp pair, the row split's forward pass took 27.3 and 15.9 s against the
    // column split's 29.1 and 19.0 s (data/tuning.tsv).
    bool rows_split_ = true;
};

}  // namespace

namespace detail {

std::unique_ptr<long_pair::backend> multi_device_backend(std::span<const std::uint8_t> query,
                                                         std::span<const std::uint8_t> subject, const scoring& sc,
                                                         std::size_t device_memory, std::vector<int> devices) {
    return std::make_unique<multi_gpu_backend>(query, subject, sc, device_memory, std::move(devices));
}

}  // namespace detail

}  // namespace swgpu::gpu
