// What the two halves of swgpu's library face share (<swgpu/align.hpp>, <swgpu/numerics.hpp>): where a call computes,
// stopping long calls, and the errors (core/error.hpp: swgpu::error with the command line's exit code).
#pragma once

#include "core/error.hpp"

namespace swgpu {

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
