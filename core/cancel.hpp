// Stopping long calls of the library at a caller's request (Ctrl-C in Python: app/python waits for the call on
// another thread and asks it to stop). Long loops call check_cancelled() at points where stopping leaves nothing
// behind (between chunks of a database, tasks of the CPU's score pass, alignments, anti-diagonals of a long pair's
// CPU tiles and steps of its traceback, residual checks of a solver); it throws error(exit_code::interrupted), which unwinds through RAII like any other error.
// While a request stands, every call that reaches a check stops; the requester withdraws it when its call has
// stopped. The command line does not use this: SIGINT ends the process (io/output_file.hpp).
#pragma once

#include <atomic>

#include "core/error.hpp"

namespace swgpu {

namespace detail {
inline std::atomic<int> cancel_requests{0};
}  // namespace detail

// A request to stop every running call, and its withdrawal (requests count: each is withdrawn once).
inline void request_cancel() { detail::cancel_requests.fetch_add(1, std::memory_order_relaxed); }
inline void withdraw_cancel() { detail::cancel_requests.fetch_sub(1, std::memory_order_relaxed); }

inline bool cancel_requested() { return detail::cancel_requests.load(std::memory_order_relaxed) > 0; }

inline void check_cancelled() {
    if (cancel_requested()) throw error(exit_code::interrupted, "interrupted");
}

}  // namespace swgpu
