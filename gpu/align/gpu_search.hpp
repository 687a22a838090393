// The GPUs of one `swgpu align` run: their contexts started in the background while the inputs are read, then the
// search backend (core/align/search/search_backend.hpp) on one GPU or spread over several (multi_device.hpp: each
// chunk cut by residues, one run per GPU): the score pass, the packing of chunks on the reader thread, the printed
// hits' alignments, and long pairs whose forward pass splits over the GPUs. Every call that needs a device first waits
// for the start-up, and rethrows its failure.
#pragma once

#include <chrono>
#include <cstddef>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "core/align/scoring.hpp"
#include "core/align/search/pipeline.hpp"
#include "core/align/search/search_backend.hpp"
#include "gpu/gpu.hpp"

namespace swgpu::gpu {

class gpu_search {
public:
    struct options {
        int device = 0;                  // the first GPU: this process's (under MPI, this rank's)
        int gpus = 0;                    // --gpus: the score pass spreads over the first N visible GPUs (0: all)
        bool one_process = true;         // false under MPI: each rank drives its own GPU, no spread
        std::size_t memory = 0;          // --gpu-mem (0: what is free)
        bool keep_align_memory = false;  // map the alignments' device memory during the start-up too
        int logical = 1;                 // each GPU counts this many times (the multi-GPU path, tested on one GPU)
    };
    // Starts every GPU's context now: the first on a thread of its own, the others of a spread one thread each.
    gpu_search(options opt, std::chrono::steady_clock::time_point started);
    gpu_search(const gpu_search&) = delete;  // the start-up thread refers to this object
    gpu_search& operator=(const gpu_search&) = delete;

    // Waits for the start-up; rethrows its failure.
    void wait() const;
    // Seconds from `started` to every GPU's context (waits for the start-up).
    double started_after() const;

    // What the backend does besides the score pass.
    struct backend_options {
        // Printed hits of at most search.align_max_cells cells (data/tuning.tsv) aligned on the first GPU, the larger
        // ones on the CPU threads.
        bool align = true;
        // The CPU threads finish queries while the GPU searches the last chunk (--gpu-align cpu).
        bool overlap = false;
        gpu::align_timing* timing = nullptr;  // what the GPU's alignments took, when not null
    };
    // The search backend for `sc` (which must outlive it): one GPU, or a spread over several (one worker each).
    std::unique_ptr<search_backend> backend(const scoring& sc, const backend_options& how);
    // "score pass spread over W workers (G GPU(s) x K logical devices)", empty for one GPU (after backend()).
    const std::string& description() const { return description_; }

private:
    options opt_;
    double started_after_ = 0;       // written by the start-up, read after it
    std::shared_future<void> ready_;  // shared: the workers of several GPUs wait on it from their threads
    std::string description_;
    // The start-up thread, which goes on to ready the alignments after ready_; last, so that it is joined (its
    // future's destructor waits) before the members it reads go.
    std::shared_future<void> aligned_;
};

}  // namespace swgpu::gpu
