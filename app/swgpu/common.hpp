// What the two halves of swgpu's library face share (<swgpu/align.hpp>, <swgpu/numerics.hpp>): where a call computes,
// stopping long calls, and the errors (core/error.hpp: swgpu::error with the command line's exit code).
#pragma once

#include "core/error.hpp"

namespace swgpu {

// What went wrong in a call: each kind is a line of docs/conventions.md's exit codes, which exit_code_of() gives (the
// command line's for the same failure; swgpu::error::code() holds it too). Messages name the calls' settings
// (max_hsps, gap_open), never the command line's options.
enum class error_kind {
    bad_input,      // sequences, matrices, arrays (1)
    bad_settings,   // a setting out of range, or settings that do not go together (2)
    runtime,        // a device or the system failed, or backend::gpu without a GPU (3)
    out_of_memory,  // the call would need more memory than is available (4)
    output,         // an output could not be written (5)
    not_converged,  // an iterative solve stopped above its tolerance (6)
    interrupted,    // stopped at the caller's request (stop_calls, a std::stop_token) (130)
};
inline error_kind kind_of(const error& e) {
    switch (e.code()) {
        case exit_code::bad_input: return error_kind::bad_input;
        case exit_code::bad_command_line: return error_kind::bad_settings;
        case exit_code::out_of_memory: return error_kind::out_of_memory;
        case exit_code::output_failed: return error_kind::output;
        case exit_code::not_converged: return error_kind::not_converged;
        case exit_code::interrupted: return error_kind::interrupted;
        default: return error_kind::runtime;
    }
}
inline int exit_code_of(const error& e) { return static_cast<int>(e.code()); }

enum class backend { automatic, cpu, gpu };  // automatic: the GPUs when one is usable, else the CPU
// Whether backend::gpu can run here: a build with the GPU backend on a machine with a usable GPU.
bool gpu_available();

// Stopping long calls from another thread (Ctrl-C in Python does this): while a stop_calls object lives, every
// running call of this library stops at its next check (between database chunks, batches of queries or alignments,
// bands of a long pair, sweeps of a solver) and throws swgpu::error with exit_code::interrupted. A GPU kernel that is
// running finishes first (a long pair's forward pass is one kernel). Destroy it once the calls have returned.
class stop_calls {
public:
    stop_calls();
    ~stop_calls();
    stop_calls(const stop_calls&) = delete;
    stop_calls& operator=(const stop_calls&) = delete;
};

}  // namespace swgpu
