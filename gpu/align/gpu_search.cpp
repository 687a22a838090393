#include "gpu/align/gpu_search.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <thread>

#include "core/align/search/multi_device.hpp"
#include "core/tuning.hpp"
#include "gpu/gpu.hpp"

namespace swgpu::gpu {

gpu_search::options gpu_search::of(int gpus, std::size_t memory, bool aligns) {
    options o;
    o.gpus = gpus;
    o.memory = memory;
    o.keep_align_memory = memory == 0 && aligns;
    return o;
}

gpu_search::options gpu_search::of_command_line(int device, int gpus, std::size_t memory, bool aligns,
                                                bool one_process, double cells) {
    options o = of(gpus, memory, aligns);
    o.device = device;
    if (gpus == 0 && cells > 0 && cells < tuning::real("search.multi_gpu_min_cells")) o.gpus = 1;
    o.one_process = one_process;
    o.logical = static_cast<int>(std::clamp<std::int64_t>(tuning::integer("search.logical_devices"), 1, 64));
    o.timed = true;
    return o;
}

gpu_search::gpu_search(options opt, std::chrono::steady_clock::time_point started) : opt_(opt) {
    // Starting a GPU's context takes a noticeable fraction of a second: it overlaps with reading the inputs. The
    // searches wait for the contexts only; the alignments' kernels and device memory (not with --gpu-mem: the search
    // may use all of that budget) are made ready after that, on the same thread, while the first chunks are scored
    // (on one query against db20k x10 they were about 15 ms of the start-up's critical path).
    auto up = std::make_shared<std::promise<void>>();
    ready_ = up->get_future().share();
    aligned_ = std::async(std::launch::async, [this, started, up, keep = opt_.keep_align_memory] {
                   try {
                       std::vector<std::jthread> others;  // joined when cleared, or when a failure unwinds
                       if (opt_.one_process) {
                           const int n = gpu::device_count();
                           const int used = opt_.gpus == 0 ? n : std::min(opt_.gpus, n);
                           for (int d = 1; d < used; ++d) others.emplace_back([d] { gpu::start_context(d); });
                       }
                       gpu::use_device(opt_.device);
                       gpu::start_device();
                       others.clear();
                       started_after_ =
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
                   } catch (...) {
                       up->set_exception(std::current_exception());
                       return;
                   }
                   up->set_value();
                   // A failure here is the device's: the alignments' own calls report it.
                   try {
                       gpu::prepare_alignments(keep);  // no member read after set_value
                   } catch (const std::exception&) {
                   }
               }).share();
}

void gpu_search::wait() const {
    if (ready_.valid()) ready_.get();
}

double gpu_search::started_after() const {
    ready_.wait();
    return started_after_;
}

namespace {

// One GPU (or one logical device of a GPU) as a search backend. The first GPU also aligns printed hits and runs long
// pairs (their forward pass split over `long_devices` when there are several).
class gpu_backend final : public search_backend {
public:
    struct where {
        int device = 0;
        bool select_device = false;  // select `device` on the scoring thread (a spread's worker thread)
        std::size_t search_memory = 0, memory = 0;  // the score pass's budget; --gpu-mem (0: what is free)
        std::vector<int> long_devices;
        double align_cells = 0;  // search.align_max_cells for the device's architecture
    };
    gpu_backend(const scoring& sc, where at, std::shared_future<void> ready, std::shared_future<void> aligned,
                search_devices::backend_options how, gpu::align_timing* timing)
        : sc_(sc), at_(std::move(at)), ready_(std::move(ready)), aligned_(std::move(aligned)), how_(how), timing_(timing) {}

    std::vector<std::vector<score_hit>> score(const sequence_set& q, const sequence_set& d,
                                              const search_options& o) override {
        wait();  // rethrows a device failure of the start-up
        if (at_.select_device) gpu::use_device(at_.device);
        search_options budgeted = o;
        budgeted.device_memory = at_.search_memory;
        return gpu::search(q, d, sc_, budgeted);
    }
    std::unique_ptr<prepared_chunk> prepare(const sequence_set& chunk) override {
        if (!tuning::flag("search.prepare")) return nullptr;  // packed inside the score pass (measurements)
        // A chunk read before the GPU's context is up (the first: starting it takes longer than reading a chunk) is
        // packed inside its score pass, which waits for the context anyway: the reader goes on to the next chunk
        // instead of waiting here.
        if (ready_.valid() && ready_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return nullptr;
        gpu::use_device(at_.device);
        return gpu::prepare_chunk(chunk, sc_, at_.memory);
    }
    std::vector<std::optional<alignment>> align(std::span<const scored_pair> pairs) override {
        if (aligned_.valid()) aligned_.wait();  // the alignments' kernels and memory, made ready after the start-up
        return gpu::align_scored(pairs, sc_, at_.memory, timing_);
    }
    double batch_align_cells() const override { return how_.align ? at_.align_cells : 0; }
    std::unique_ptr<long_pair::backend> long_pair_backend(std::span<const std::uint8_t> q,
                                                          std::span<const std::uint8_t> d) override {
        wait();
        return gpu::long_pair_backend(q, d, sc_, at_.memory, at_.long_devices);
    }
    bool leaves_threads_idle() const override { return how_.overlap; }

private:
    void wait() const {
        if (ready_.valid()) ready_.get();
    }
    const scoring& sc_;
    where at_;
    std::shared_future<void> ready_, aligned_;
    search_devices::backend_options how_;
    gpu::align_timing* timing_;
};

}  // namespace

std::unique_ptr<search_backend> gpu_search::backend(const scoring& sc, const backend_options& how) {
    const std::size_t memory = opt_.memory;
    const double align_cells = tuning::real("search.align_max_cells", gpu::architecture(opt_.device));
    gpu_backend::where first{opt_.device, false, memory, memory, {}, align_cells};
    const int physical = opt_.one_process ? gpu::device_count() : 1;  // under MPI, each rank drives one GPU
    const int used = opt_.gpus == 0 ? physical : std::min(opt_.gpus, physical);
    const int logical = opt_.logical;
    if (!opt_.one_process || used * logical <= 1) return std::make_unique<gpu_backend>(sc, first, ready_, aligned_, how, opt_.timed ? &timing_ : nullptr);
    // Several GPUs: every GPU gets --gpu-mem (or what it has free); logical devices of one GPU share its memory.
    std::vector<gpu_backend::where> workers;
    std::vector<int> long_devices;
    for (int d = 0; d < used; ++d) {
        std::size_t share = memory;
        if (logical > 1) share = (memory ? memory : gpu::free_memory(d) / 8 * 7) / logical;
        for (int k = 0; k < logical; ++k) {
            long_devices.push_back(d);
            workers.push_back({d, true, share, memory, {}, align_cells});
        }
    }
    workers[0].long_devices = long_devices;
    std::vector<std::unique_ptr<search_backend>> backends;
    for (auto& w : workers) backends.push_back(std::make_unique<gpu_backend>(sc, std::move(w), ready_, aligned_, how, opt_.timed ? &timing_ : nullptr));
    auto spread = std::make_unique<spread_backend>(std::move(backends));
    description_ = "score pass spread over " + std::to_string(spread->workers()) + " workers (" + std::to_string(used) +
                   " GPU(s)" + (logical > 1 ? " x " + std::to_string(logical) + " logical devices" : std::string()) +
                   ")";
    return spread;
}

}  // namespace swgpu::gpu
