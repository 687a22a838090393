// A fixed pool of worker threads with one blocking primitive: parallel_for over an index range.
// Used by the tiled CPU executor (one anti-diagonal wave per call), the CPU search (one chunk of subjects per task) and
// the lexicographic SOR sweep (one task per thread, the tasks waiting on one another).
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace swgpu {

class thread_pool {
public:
    // threads == 0: one per hardware thread.
    // A thread that cannot start (the process's thread or memory limits: `ulimit -v`, a cgroup's pids.max) is an
    // error naming the count (exit 3), after the threads already started are stopped and joined: a std::system_error
    // out of the constructor left them waiting on a condition variable being destroyed (a hang), or terminated.
    explicit thread_pool(unsigned threads = 0) {
        if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
        try {
            for (unsigned t = 1; t < threads; ++t) workers_.emplace_back([this] { work(); });
        } catch (const std::system_error& e) {
            const auto started = workers_.size() + 1;
            stop_workers();
            throw runtime_failure("could not start " + std::to_string(threads) + " threads (" +
                                  std::to_string(started) + " started: " + e.what() +
                                  "); use fewer threads (-t), or raise the process's limits");
        }
    }
    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;
    ~thread_pool() { stop_workers(); }

    unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

    // Calls body(k) for every k in [0, n), on the pool and the calling thread; returns when all calls are done.
    // The first exception thrown by body is rethrown here. Calls from several threads take turns (body must not call
    // parallel_for on the same pool). With n <= size(), calls may wait on one another (spinning on what another call
    // writes, never throwing): a thread takes a second index only once its first call has returned, so an index not
    // yet taken always has a thread free to take it, and every call runs.
    void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) {
        if (n == 0) return;
        if (workers_.empty() || n == 1) {
            for (std::size_t k = 0; k < n; ++k) body(k);
            return;
        }
        std::lock_guard turn(call_m_);
        {
            std::lock_guard lock(m_);
            body_ = &body;
            n_ = n;
            next_.store(0);
            active_ = static_cast<unsigned>(workers_.size());
            error_ = nullptr;
            ++generation_;
        }
        wake_.notify_all();
        run_chunk();
        std::unique_lock lock(m_);
        done_.wait(lock, [this] { return active_ == 0; });
        body_ = nullptr;
        if (error_) std::rethrow_exception(error_);
    }

private:
    void stop_workers() {
        {
            std::lock_guard lock(m_);
            stop_ = true;
        }
        wake_.notify_all();
        for (auto& w : workers_) w.join();
        workers_.clear();
    }
    void run_chunk() {
        for (;;) {
            std::size_t k = next_.fetch_add(1);
            if (k >= n_) return;
            try {
                (*body_)(k);
            } catch (...) {
                std::lock_guard lock(m_);
                if (!error_) error_ = std::current_exception();
                next_.store(n_);
            }
        }
    }
    void work() {
        std::uint64_t seen = 0;
        for (;;) {
            {
                std::unique_lock lock(m_);
                wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
                if (stop_) return;
                seen = generation_;
            }
            run_chunk();
            std::lock_guard lock(m_);
            if (--active_ == 0) done_.notify_one();
        }
    }

    std::vector<std::thread> workers_;
    std::mutex call_m_;  // one parallel_for at a time
    std::mutex m_;
    std::condition_variable wake_, done_;
    const std::function<void(std::size_t)>* body_ = nullptr;
    std::size_t n_ = 0;
    std::atomic<std::size_t> next_{0};
    unsigned active_ = 0;
    std::uint64_t generation_ = 0;
    std::exception_ptr error_;
    bool stop_ = false;
};

}  // namespace swgpu
