#include "app/align/gpu_search.hpp"

#include <algorithm>
#include <memory>
#include <thread>

#include "core/align/search/multi_device.hpp"
#include "gpu/gpu.hpp"

namespace swgpu::app {

gpu_search::gpu_search(options opt, std::chrono::steady_clock::time_point started) : opt_(opt) {
    // Starting a GPU's context takes a noticeable fraction of a second: it overlaps with reading the inputs. With
    // alignments to compute on the GPU, their device memory is mapped then too (not with --gpu-mem: the search may use
    // all of that budget).
    ready_ = std::async(std::launch::async, [this, started] {
                 std::vector<std::jthread> others;  // joined when cleared, or when a failure unwinds
                 if (opt_.one_process) {
                     const int n = gpu::device_count();
                     const int used = opt_.gpus == 0 ? n : std::min(opt_.gpus, n);
                     for (int d = 1; d < used; ++d) others.emplace_back([d] { gpu::start_context(d); });
                 }
                 gpu::use_device(opt_.device);
                 gpu::warm_up(opt_.keep_align_memory);
                 others.clear();
                 started_after_ =
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
             }).share();
}

void gpu_search::wait() const {
    if (ready_.valid()) ready_.get();
}

double gpu_search::started_after() const {
    ready_.wait();
    return started_after_;
}

void gpu_search::build(const scoring& sc) {
    const std::size_t memory = opt_.memory;
    const std::shared_future<void> ready = ready_;
    pass_ = [&sc, memory, ready](const sequence_set& q, const sequence_set& d, const search_options& o) {
        if (ready.valid()) ready.get();  // rethrows a device failure of the start-up
        search_options budgeted = o;
        budgeted.device_memory = memory;
        return gpu::search(q, d, sc, budgeted);
    };
    preparer_ = [&sc, memory, device = opt_.device](const sequence_set& chunk) {
        gpu::use_device(device);
        return gpu::prepare_chunk(chunk, sc, memory);
    };
    if (!opt_.one_process) return;  // under MPI, each rank drives one GPU
    // Several GPUs: every GPU gets --gpu-mem (or what it has free); logical devices of one GPU share its memory.
    const int physical = gpu::device_count();
    const int used = opt_.gpus == 0 ? physical : std::min(opt_.gpus, physical);
    const int logical = opt_.logical;
    if (used * logical <= 1) return;
    std::vector<score_pass> passes;
    std::vector<chunk_preparer> preparers;
    for (int d = 0; d < used; ++d) {
        std::size_t share = memory;
        if (logical > 1) share = (memory ? memory : gpu::free_memory(d) / 8 * 7) / logical;
        for (int k = 0; k < logical; ++k) {
            long_devices_.push_back(d);
            passes.push_back([&sc, d, share, ready](const sequence_set& q, const sequence_set& db,
                                                    const search_options& o) {
                if (ready.valid()) ready.get();
                gpu::use_device(d);
                search_options budgeted = o;
                budgeted.device_memory = share;
                return gpu::search(q, db, sc, budgeted);
            });
            preparers.push_back([&sc, d, memory](const sequence_set& run) {
                gpu::use_device(d);
                return gpu::prepare_chunk(run, sc, memory);
            });
        }
    }
    auto spread = std::make_shared<const spread_pass>(std::move(passes), std::move(preparers));
    pass_ = [spread](const sequence_set& q, const sequence_set& d, const search_options& o) { return (*spread)(q, d, o); };
    preparer_ = [spread](const sequence_set& chunk) { return spread->prepare(chunk); };
    description_ = "score pass spread over " + std::to_string(spread->workers()) + " workers (" + std::to_string(used) +
                   " GPU(s)" + (logical > 1 ? " x " + std::to_string(logical) + " logical devices" : std::string()) +
                   ")";
}

}  // namespace swgpu::app
