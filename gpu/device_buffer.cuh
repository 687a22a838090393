// Device memory, streams and events as RAII objects. Destructors never throw (a failed free during unwinding is
// ignored: the context is already broken then, and the error that caused the unwinding is the one to report).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "gpu/cuda_check.cuh"

namespace swgpu::gpu {

// `count` elements of T in device memory (uninitialized).
template <class T>
class device_buffer {
public:
    device_buffer() = default;
    explicit device_buffer(std::size_t count) { allocate(count); }
    device_buffer(const device_buffer&) = delete;
    device_buffer& operator=(const device_buffer&) = delete;
    device_buffer(device_buffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
    device_buffer& operator=(device_buffer&& o) noexcept {
        if (this != &o) {
            release();
            ptr_ = std::exchange(o.ptr_, nullptr);
            count_ = std::exchange(o.count_, 0);
        }
        return *this;
    }
    ~device_buffer() { release(); }

    // Drops the old contents; afterwards size() == count.
    void allocate(std::size_t count) {
        release();
        if (count == 0) return;
        SWGPU_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
        count_ = count;
    }
    // Grows to at least `count` elements; returns true when it had to reallocate (contents dropped).
    bool reserve(std::size_t count) {
        if (count <= count_) return false;
        allocate(count);
        return true;
    }
    void zero(cudaStream_t stream = nullptr) {
        if (count_) SWGPU_CUDA_CHECK(cudaMemsetAsync(ptr_, 0, count_ * sizeof(T), stream));
    }
    void upload(const T* host, std::size_t count, cudaStream_t stream = nullptr) {
        reserve(count);
        if (count) SWGPU_CUDA_CHECK(cudaMemcpyAsync(ptr_, host, count * sizeof(T), cudaMemcpyHostToDevice, stream));
    }
    template <class Allocator>
    void upload(const std::vector<T, Allocator>& host, cudaStream_t stream = nullptr) {
        upload(host.data(), host.size(), stream);
    }
    // Synchronous copy of the first `count` elements to the host.
    std::vector<T> download(std::size_t count, cudaStream_t stream = nullptr) const {
        std::vector<T> out(count);
        download_to(out.data(), count, stream);
        return out;
    }
    // The same into host memory the caller owns.
    void download_to(T* host, std::size_t count, cudaStream_t stream = nullptr) const {
        if (!count) return;
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(host, ptr_, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
        SWGPU_CUDA_CHECK(cudaStreamSynchronize(stream));
    }

    T* data() const { return ptr_; }
    std::size_t size() const { return count_; }

private:
    void release() noexcept {
        if (ptr_) (void)cudaFree(ptr_);
        ptr_ = nullptr;
        count_ = 0;
    }
    T* ptr_ = nullptr;
    std::size_t count_ = 0;
};

class cuda_stream {
public:
    cuda_stream() { SWGPU_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
    cuda_stream(const cuda_stream&) = delete;
    cuda_stream& operator=(const cuda_stream&) = delete;
    ~cuda_stream() {
        if (s_) (void)cudaStreamDestroy(s_);
    }
    cudaStream_t get() const { return s_; }
    void synchronize() const { SWGPU_CUDA_CHECK(cudaStreamSynchronize(s_)); }

private:
    cudaStream_t s_ = nullptr;
};

class cuda_event {
public:
    cuda_event() { SWGPU_CUDA_CHECK(cudaEventCreate(&e_)); }
    cuda_event(const cuda_event&) = delete;
    cuda_event& operator=(const cuda_event&) = delete;
    ~cuda_event() {
        if (e_) (void)cudaEventDestroy(e_);
    }
    void record(cudaStream_t s) { SWGPU_CUDA_CHECK(cudaEventRecord(e_, s)); }
    void synchronize() const { SWGPU_CUDA_CHECK(cudaEventSynchronize(e_)); }
    // Milliseconds from `start` to this event (both recorded, this one completed).
    float since(const cuda_event& start) const {
        float ms = 0;
        SWGPU_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
        return ms;
    }
    cudaEvent_t get() const { return e_; }

private:
    cudaEvent_t e_ = nullptr;
};

// Device memory from the stream-ordered pool (allocations after the first cost next to nothing).
template <class T>
class pooled {
public:
    pooled() = default;
    pooled(std::size_t count, cudaStream_t s) : stream_(s), count_(count) {
        if (count) SWGPU_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&ptr_), count * sizeof(T), s));
    }
    pooled(const pooled&) = delete;
    pooled& operator=(const pooled&) = delete;
    pooled(pooled&& o) noexcept { *this = std::move(o); }
    pooled& operator=(pooled&& o) noexcept {
        std::swap(ptr_, o.ptr_);
        std::swap(count_, o.count_);
        std::swap(stream_, o.stream_);
        return *this;
    }
    ~pooled() {
        if (ptr_) (void)cudaFreeAsync(ptr_, stream_);
    }
    T* data() const { return ptr_; }
    std::size_t size() const { return count_; }

private:
    T* ptr_ = nullptr;
    cudaStream_t stream_ = nullptr;
    std::size_t count_ = 0;
};

}  // namespace swgpu::gpu
