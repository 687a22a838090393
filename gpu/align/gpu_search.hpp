// The GPUs of one search session (core/align/search/session.hpp's search_devices): their contexts started in the
// background while the inputs are read, then the search backend (core/align/search/search_backend.hpp) on one GPU or spread over several (multi_device.hpp: each
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
#include "core/align/search/session.hpp"
#include "gpu/gpu.hpp"

namespace swgpu::gpu {

class gpu_search final : public search_devices {
public:
    struct options {
        int device = 0;                  // the first GPU: this process's (under MPI, this rank's)
        int gpus = 0;                    // --gpus: the score pass spreads over the first N visible GPUs (0: all)
        bool one_process = true;         // false under MPI: each rank drives its own GPU, no spread
        std::size_t memory = 0;          // --gpu-mem (0: what is free)
        bool keep_align_memory = false;  // map the alignments' device memory during the start-up too
        int logical = 1;                 // each GPU counts this many times (the multi-GPU path, tested on one GPU)
        bool timed = false;              // time the alignments of printed hits (aligned(): the -v report)
    };
    // A face's options: --gpus, --gpu-mem (0: what is free, and then the alignments' device memory is mapped during
    // the start-up when the printed hits are aligned on the GPU, `aligns`).
    static options of(int gpus, std::size_t memory, bool aligns);
    // swgpu align's: those from this process's first GPU `device` (under MPI, without `one_process`, each rank drives
    // its own, no spread). A search too small to gain from several GPUs runs on the first (each further GPU's start-up
    // and share of every chunk cost more than it saves): --gpus 0 with the search's `cells`, bounded by the files'
    // sizes (0: unknown), below search.multi_gpu_min_cells. Each GPU counts search.logical_devices times
    // (SWGPU_TUNE=search.logical_devices=K, a test option: the multi-GPU path on one GPU); the alignments are timed
    // for the -v report.
    static options of_command_line(int device, int gpus, std::size_t memory, bool aligns, bool one_process,
                                   double cells);
    // Starts every GPU's context now: the first on a thread of its own, the others of a spread one thread each.
    gpu_search(options opt, std::chrono::steady_clock::time_point started);
    gpu_search(const gpu_search&) = delete;  // the start-up thread refers to this object
    gpu_search& operator=(const gpu_search&) = delete;

    // Waits for the start-up; rethrows its failure.
    void wait() const;

    // The search backend for `sc` (which must outlive it): one GPU, or a spread over several (one worker each).
    std::unique_ptr<search_backend> backend(const scoring& sc, const backend_options& how) override;
    // "score pass spread over W workers (G GPU(s) x K logical devices)", empty for one GPU (after backend()).
    const std::string& description() const override { return description_; }
    std::string architecture() const override { return gpu::architecture(opt_.device); }
    double started_after() const override;
    aligned_on_device aligned() const override { return {timing_.pairs, timing_.total_s, timing_.kernel_s}; }

private:
    options opt_;
    double started_after_ = 0;       // written by the start-up, read after it
    std::shared_future<void> ready_;  // shared: the workers of several GPUs wait on it from their threads
    std::string description_;
    gpu::align_timing timing_;  // what the GPU's alignments of printed hits took
    // The start-up thread, which goes on to ready the alignments after ready_; last, so that it is joined (its
    // future's destructor waits) before the members it reads go.
    std::shared_future<void> aligned_;
};

}  // namespace swgpu::gpu
