// What the long-pair backends on the GPU share: the backend on one device (gpu/align/long_pair.cu, over the kernels of
// gpu/align/long_pair_kernels.cuh) and the backend over several devices (gpu/align/long_pair_multi.cu), which runs
// the parts of a split forward pass on backends of one device each and gathers their grids: device memory from the
// stream-ordered pool, the exchanges between the parts of a split pass, a grid's checkpoint lines on the device, and
// the single-device backend as the multi-device one drives it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "core/align/long_pair/long_pair.hpp"
#include "core/align/scoring.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"

namespace swgpu::gpu::detail {

// The border between two parts of a forward pass split by columns: H of the left part's last column and F entering
// the right part's first, per row, and a flag per band; in pinned host memory that every device maps.
struct border_exchange {
    int* h = nullptr;
    int* f = nullptr;
    unsigned* ready = nullptr;
};
// The row between two slabs of a split by rows (H and E entering the slab below, every column), with the count of
// columns written, in memory both devices reach.
struct row_exchange {
    int* h = nullptr;
    int* e = nullptr;
    unsigned long long* ready = nullptr;
};

// A grid's checkpoint lines in device memory; the walk copies the few it needs.
class device_grid_lines final : public long_pair::grid_lines {
public:
    device_grid_lines(std::int64_t A, std::int64_t B, std::int64_t rows, std::int64_t cols, cudaStream_t s)
        : rows_(rows), cols_(cols), stream_(s),
          row_h(static_cast<std::size_t>(std::max<std::int64_t>(A - 1, 0) * cols), s),
          row_e(row_h.size(), s),
          col_h(static_cast<std::size_t>(std::max<std::int64_t>(B - 1, 0) * rows), s),
          col_f(col_h.size(), s) {}
    void row(std::int64_t a, std::int64_t offset, std::int64_t count, int* h, int* e) const override {
        copy(row_h.data() + a * cols_ + offset, h, count);
        copy(row_e.data() + a * cols_ + offset, e, count);
        SWGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    void col(std::int64_t b, std::int64_t offset, std::int64_t count, int* h, int* f) const override {
        copy(col_h.data() + b * rows_ + offset, h, count);
        copy(col_f.data() + b * rows_ + offset, f, count);
        SWGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }

private:
    void copy(const int* from, int* to, std::int64_t count) const {
        if (count > 0)
            SWGPU_CUDA_CHECK(cudaMemcpyAsync(to, from, static_cast<std::size_t>(count) * sizeof(int),
                                             cudaMemcpyDeviceToHost, stream_));
    }
    std::int64_t rows_, cols_;
    cudaStream_t stream_;

public:
    pooled<int> row_h, row_e, col_h, col_f;
};

// One device's backend (gpu_backend in gpu/align/long_pair.cu) as the backend over several devices drives it.
class device_backend : public long_pair::backend {
public:
    // forward() of one part of a pass split by columns: its left border streamed from `left` (b's left border is
    // then ignored), its right border streamed to `right` (either may be null).
    // forward() of one slab of a pass split by rows: its top border (but the corner, b.top_h[0]) streamed from `top`,
    // its bottom row streamed to `bottom` (either may be null).
    virtual void forward_part(const long_pair::rect& area, const long_pair::borders& b, std::int64_t K,
                              long_pair::grid& g, const border_exchange* left, const border_exchange* right,
                              const row_exchange* top = nullptr, const row_exchange* bottom = nullptr) = 0;
    // The generations of bands (bands over the warps that fit at once) of a part with `rows` rows in a pass split by
    // columns (the split kernel).
    virtual long long split_generations(std::int64_t rows) const = 0;
    // The rows of a band and the warps resident at once of the split kernel for a rectangle of `rows` rows.
    virtual std::pair<long long, long long> split_shape(std::int64_t rows) const = 0;
    // Checkpoint lines of an A x B grid over rows x cols on this backend's device (for a grid gathered here).
    virtual std::shared_ptr<device_grid_lines> new_lines(std::int64_t A, std::int64_t B, std::int64_t rows,
                                                         std::int64_t cols) = 0;
};

// The backend on the current device (gpu/align/long_pair.cu).
std::unique_ptr<device_backend> single_device_backend(std::span<const std::uint8_t> query,
                                                      std::span<const std::uint8_t> subject, const scoring& sc,
                                                      std::size_t device_memory);

// The backend over several devices (gpu/align/long_pair_multi.cu), `devices` as for long_pair_backend (gpu/gpu.hpp).
std::unique_ptr<long_pair::backend> multi_device_backend(std::span<const std::uint8_t> query,
                                                         std::span<const std::uint8_t> subject, const scoring& sc,
                                                         std::size_t device_memory, std::vector<int> devices);

}  // namespace swgpu::gpu::detail
