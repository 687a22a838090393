// The GPU score pass of database search (gpu::search): host side. Packs the database (gpu/align/db_layout.hpp), plans the
// block tasks (gpu/align/search_plan.hpp), runs the kernels (gpu/align/search_kernels.cuh) over batches of queries, recomputes
// overflowing 16-bit lanes in 32 bits, and selects each query's top hits from its row of scores on the device
// (gpu/align/hit_selector.cuh, its kernels gpu/align/select_hits.cuh); with more than one batch, two are in flight.
#include <sys/mman.h>

#include <algorithm>
#include <functional>
#include <array>
#include <bit>
#include <cstring>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "core/tuning.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/align/db_layout.hpp"
#include "gpu/device_buffer.cuh"
#include "gpu/gpu.hpp"
#include "gpu/align/search_config.hpp"
#include "gpu/align/search_kernels.cuh"
#include "gpu/align/search_plan.hpp"
#include "gpu/align/hit_selector.cuh"
#include "gpu/align/select_hits.cuh"

namespace swgpu::gpu {

namespace detail {
namespace {

using steady = std::chrono::steady_clock;

// With early delivery, batches never get smaller than this many queries (the GPU stays full; fewer, and the last
// batch's tail would cost more than the overlap gains).
constexpr std::size_t pipeline_min_batch = 64;

double ms_since(steady::time_point t) {
    return std::chrono::duration<double, std::milli>(steady::now() - t).count();
}

void check_codes(const sequence_set& set, int letters, const char* what) {
    const std::string where = set.source.empty() ? std::string(what) : set.source;
    if (!set.encoded)
        throw input_error(where, std::string("the ") + what +
                                     " are not encoded with the scoring matrix; encode them before searching");
    for (std::size_t k = 0; k < set.size(); ++k)
        for (const std::uint8_t code : set[k])
            if (code >= letters)
                throw input_error(where + ":" + set.names[k],
                                  "residue code " + std::to_string(code) + " is outside the matrix of " +
                                      std::to_string(letters) + " letters; encode with the same matrix");
}

// Device memory from the stream-ordered pool, on the stream of chunk copies of the current device (one per device:
// a stream belongs to the device it was made on, and several GPUs prepare chunks at once): allocating and freeing it
// never waits for the device (cudaFree would wait for the score pass of the chunk before, from whichever thread drops
// the chunk).
cudaStream_t chunk_copy_stream() {
    static std::mutex made;
    static std::vector<std::unique_ptr<cuda_stream>> streams;
    int device = 0;
    SWGPU_CUDA_CHECK(cudaGetDevice(&device));
    const std::lock_guard<std::mutex> lock(made);
    if (streams.size() <= static_cast<std::size_t>(device)) streams.resize(static_cast<std::size_t>(device) + 1);
    auto& s = streams[static_cast<std::size_t>(device)];
    if (!s) s = std::make_unique<cuda_stream>();
    return s->get();
}
template <class T>
class stream_buffer {
public:
    stream_buffer() = default;
    stream_buffer(const stream_buffer&) = delete;
    stream_buffer& operator=(const stream_buffer&) = delete;
    ~stream_buffer() {
        if (ptr_) (void)cudaFreeAsync(ptr_, stream_);  // the stream of the device it came from
    }
    void upload(const T* host, std::size_t count) {
        if (!count) return;
        stream_ = chunk_copy_stream();
        SWGPU_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&ptr_), count * sizeof(T), stream_));
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(ptr_, host, count * sizeof(T), cudaMemcpyHostToDevice, stream_));
    }
    void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
    const T* data() const { return ptr_; }

private:
    T* ptr_ = nullptr;
    cudaStream_t stream_ = nullptr;
};

// A chunk packed ahead of its score pass, and copied to the device when memory allows (gpu::prepare_chunk).
struct packed_chunk final : prepared_chunk {
    packed_db pdb;
    int letters = 0;
    bool on_device = false;
    stream_buffer<std::uint8_t> d_residues;
    stream_buffer<std::uint64_t> d_offset;
    stream_buffer<std::uint32_t> d_length, d_original;
    stream_buffer<std::uint32_t> d_subject_lengths;  // in the chunk's own order: the E-value order's (select)
};

// The database and queries on the device, and the launcher of the DPX kernels over a plan.
class dpx_runner {
public:
    static constexpr int worker_count = 3;

    // `uploaded`, when given, holds db on the device already.
    dpx_runner(const sequence_set& queries, const packed_db& db, const scoring& sc, const search_config& cfg,
               cudaStream_t stream, int multiprocessors, const packed_chunk* uploaded = nullptr)
        : queries_(queries), db_(db), cfg_(cfg), stream_(stream), multiprocessors_(multiprocessors) {
        letters_ = sc.matrix.size();
        rows_ = letters_ + 1;
        gap_oe_ = sc.gaps.open + sc.gaps.extend;
        gap_e_ = sc.gaps.extend;
        pad_score_ = std::min(0, sc.matrix.min_score());
        overflow_above_ = 32767 - std::max(0, sc.matrix.max_score());
        if (uploaded) {
            d_residues_ = uploaded->d_residues.data();
            d_offset_ = uploaded->d_offset.data();
            d_length_ = uploaded->d_length.data();
            d_original_ = uploaded->d_original.data();
        } else {
            residues_.upload(db.residues.get(), db.residue_bytes, stream);
            subject_offset_.upload(db.offset, stream);
            subject_length_.upload(db.length, stream);
            subject_original_.upload(db.original, stream);
            d_residues_ = residues_.data();
            d_offset_ = subject_offset_.data();
            d_length_ = subject_length_.data();
            d_original_ = subject_original_.data();
        }
        query_residues_.upload(queries.residues, stream);
        query_offsets_.upload(queries.offsets, stream);
        matrix_.upload(reinterpret_cast<const std::int8_t*>(sc.matrix.table().data()), sc.matrix.table().size(),
                       stream);
        for (int c = 0; c < search_class_count; ++c) {
            const std::uint32_t lo = db.class_begin[c], hi = db.class_begin[c + 1];
            class_rows_[c] = hi > lo ? db.length[hi - 1] : 0;
            const std::size_t groups = kernels::block_threads / search_classes[c].group_size;
            boundary_block_ = std::max(boundary_block_, groups * class_rows_[c]);
        }
        boundary_block_ = std::max<std::size_t>(boundary_block_, 1);
    }

    int rows() const { return rows_; }

    // The device side of one run: its plan's arrays, and the events that say when it started and ended. A run in
    // flight owns its batch_run; two in flight need two.
    struct batch_run {
        device_buffer<query_pair> pairs;
        device_buffer<search_task> tasks;
        device_buffer<std::uint32_t> task_subjects, profiles, counters;
        cuda_event start, done[worker_count];
        std::size_t launches = 0;
        bool pending = false;
    };

    // Runs the plan; scores land in `scores` ([query - query_base][original subject]). Returns device milliseconds.
    // With 16-bit lanes, `overflow` receives the lanes to recompute (count in *overflow_count; entries beyond the
    // capacity are counted but not stored). Tasks of one (class, columns per thread) run in one persistent launch;
    // launches alternate over a few streams so that one launch's last blocks overlap the next launch's first.
    template <class Lanes>
    double run(const search_plan& plan, batch_run& r, int* scores, std::size_t score_stride, std::int32_t query_base,
               device_buffer<uint2>* overflow, std::uint32_t* overflow_count, int* blocks_used) {
        enqueue<Lanes>(plan, r, scores, score_stride, query_base, overflow, blocks_used);
        return wait(r, overflow_count);
    }

    // Starts the run on the device and returns; wait() ends it. Runs started one after the other overlap on the
    // device (the next one's first launches fill the SMs the previous one's last blocks leave idle): the host arrays
    // are copied before this returns, and nothing of one run waits on another.
    template <class Lanes>
    void enqueue(const search_plan& plan, batch_run& r, int* scores, std::size_t score_stride, std::int32_t query_base,
                 device_buffer<uint2>* overflow, int* blocks_used) {
        r.pending = false;
        r.launches = 0;
        if (plan.tasks.empty()) return;
        upload_with_profiles<Lanes>(plan, r);
        // One launch per task group (one class and columns-per-thread count), costliest groups first.
        const std::vector<planned_launch<Lanes>> launches = plan_launches<Lanes>(plan, blocks_used);
        r.tasks.upload(plan.tasks, stream_);
        r.counters.reserve(launches.size() + 1);
        SWGPU_CUDA_CHECK(cudaMemsetAsync(r.counters.data(), 0, (launches.size() + 1) * sizeof(std::uint32_t), stream_));

        kernels::dpx_params p{};
        p.residues = d_residues_;
        p.subject_offset = d_offset_;
        p.subject_length = d_length_;
        p.subject_original = d_original_;
        p.task_subjects = r.task_subjects.data();
        p.pairs = r.pairs.data();
        p.profiles = r.profiles.data();
        p.profile_rows = rows_;
        p.boundary_block = boundary_block_;
        for (int c = 0; c < search_class_count; ++c) p.class_rows[c] = class_rows_[c];
        p.scores = scores;
        p.score_stride = score_stride;
        p.query_base = query_base;
        p.overflow = overflow ? overflow->data() : nullptr;
        p.overflow_count = r.counters.data() + launches.size();
        p.overflow_capacity = overflow ? static_cast<std::uint32_t>(overflow->size()) : 0;
        p.gap_oe = gap_oe_;
        p.gap_e = gap_e_;
        p.overflow_above = overflow_above_;

        // The workers start once the arrays are on the device: an event after them on stream_ (which holds nothing of
        // earlier runs' kernels).
        ready_.record(stream_);
        for (int w = 0; w < worker_count; ++w) SWGPU_CUDA_CHECK(cudaStreamWaitEvent(workers_[w].get(), ready_.get()));
        for (std::size_t i = 0; i < launches.size(); ++i) {
            const auto& l = launches[i];
            const int w = cfg_.launch_log ? 0 : static_cast<int>(i % worker_count);
            p.tasks = r.tasks.data() + l.first;
            p.task_count = static_cast<std::uint32_t>(l.count);
            p.task_counter = r.counters.data() + i;
            p.boundary = boundary_[w].data();
            cuda_event before, after;
            if (cfg_.launch_log) before.record(workers_[w].get());
            l.fn<<<static_cast<unsigned>(l.blocks), kernels::block_threads, l.smem, workers_[w].get()>>>(p);
            SWGPU_CUDA_CHECK_LAUNCH("dpx_search");
            if (cfg_.launch_log) {
                after.record(workers_[w].get());
                after.synchronize();
                log_launch(plan, l.cls, l.regs, l.first, l.count, l.blocks, after.since(before));
            }
        }
        for (int w = 0; w < worker_count; ++w) r.done[w].record(workers_[w].get());
        r.launches = launches.size();
        r.pending = true;
    }

private:
    // enqueue() in its steps. The plan's query pairs and task subjects on the device, and the pairs' profiles built
    // there (after r.start).
    template <class Lanes>
    void upload_with_profiles(const search_plan& plan, batch_run& r) {
        const auto& last = plan.pairs.back();
        const std::size_t profile_words = last.profile_offset + static_cast<std::size_t>(rows_) * last.padded_length;
        r.start.record(stream_);
        r.pairs.upload(plan.pairs, stream_);
        r.task_subjects.upload(plan.task_subjects, stream_);
        r.profiles.reserve(profile_words);
        std::uint32_t longest = 0;
        for (const auto& p : plan.pairs) longest = std::max(longest, p.padded_length);
        const unsigned profile_blocks = std::min(64u, (longest + 255) / 256);
        for (std::size_t p0 = 0; p0 < plan.pairs.size(); p0 += 65535) {
            const unsigned n = static_cast<unsigned>(std::min<std::size_t>(65535, plan.pairs.size() - p0));
            kernels::build_profiles<<<dim3(profile_blocks, n), 256, 0, stream_>>>(
                query_residues_.data(), query_offsets_.data(), r.pairs.data() + p0, matrix_.data(), letters_, pad_score_,
                Lanes::count, r.profiles.data());
            SWGPU_CUDA_CHECK_LAUNCH("build_profiles");
        }
    }

    // One launch of a run: its task group, kernel, blocks and shared memory.
    template <class Lanes>
    struct planned_launch {
        std::size_t first, count;
        int cls, regs;
        bool twin;
        std::size_t blocks = 0, smem = 0;
        typename kernels::kernel_table<Lanes>::kernel fn = nullptr;
    };
    // The launches of the plan's task groups: each group's kernel, as many blocks as fit at once (at most its tasks,
    // and what the boundary memory of its worker holds), that memory reserved; *blocks_used the most blocks of one.
    template <class Lanes>
    std::vector<planned_launch<Lanes>> plan_launches(const search_plan& plan, int* blocks_used) {
        std::vector<planned_launch<Lanes>> launches;
        for (const auto& g : plan.groups) launches.push_back({g.first, g.count, g.cls, g.regs, g.twin});
        const std::size_t by_memory =
            std::max<std::size_t>(1, cfg_.boundary_bytes / worker_count / (boundary_block_ * sizeof(uint2)));
        std::size_t region_blocks[worker_count] = {};
        int most_blocks = 0;
        for (std::size_t i = 0; i < launches.size(); ++i) {
            auto& l = launches[i];
            if constexpr (Lanes::count == 2)  // twin pairs exist in 16-bit lanes only
                l.fn = l.twin ? kernels::kernel_table<Lanes, true>::get(l.cls, l.regs)
                              : kernels::kernel_table<Lanes, false>::get(l.cls, l.regs);
            else
                l.fn = kernels::kernel_table<Lanes, false>::get(l.cls, l.regs);
            l.smem = static_cast<std::size_t>(rows_) *
                     kernels::chunk_row_words(search_classes[l.cls].group_size, l.regs) * sizeof(std::uint32_t);
            if (l.smem > 48 * 1024)
                SWGPU_CUDA_CHECK(cudaFuncSetAttribute(l.fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                      static_cast<int>(l.smem)));
            int per_sm = 0;
            SWGPU_CUDA_CHECK(
                cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, l.fn, kernels::block_threads, l.smem));
            if (cfg_.blocks_per_sm > 0) per_sm = std::min(per_sm, cfg_.blocks_per_sm);
            l.blocks = std::max<std::size_t>(
                1, std::min({static_cast<std::size_t>(std::max(1, per_sm)) * multiprocessors_, l.count, by_memory}));
            region_blocks[i % worker_count] = std::max(region_blocks[i % worker_count], l.blocks);
            most_blocks = std::max(most_blocks, static_cast<int>(l.blocks));
        }
        if (blocks_used) *blocks_used = most_blocks;
        for (int w = 0; w < worker_count; ++w) boundary_[w].reserve(std::max<std::size_t>(1, region_blocks[w]) * boundary_block_);
        return launches;
    }

    // --launches (benchmarks): one launch's record, its cells counted from the plan.
    void log_launch(const search_plan& plan, int cls, int regs, std::size_t first, std::size_t count,
                    std::size_t blocks, double ms) {
        launch_record rec;
        rec.length_class = cls;
        rec.regs = regs;
        rec.tasks = count;
        rec.blocks = blocks;
        rec.ms = ms;
        for (std::size_t k = first; k < first + count; ++k) {
            const auto& task = plan.tasks[k];
            std::uint64_t residues = 0;
            for (std::uint32_t g = 0; g < task.count; ++g) residues += db_.length[plan.task_subjects[task.first + g]];
            const query_pair& pair = plan.pairs[task.pair];
            for (int l = 0; l < (pair.twin ? 1 : 2); ++l)
                if (pair.query[l] >= 0) rec.cells += double(queries_.length(static_cast<std::size_t>(pair.query[l]))) * residues;
        }
        cfg_.launch_log->push_back(rec);
    }

public:
    // Waits for a run started by enqueue(); returns its device milliseconds (start to its last launch's end, which
    // includes time shared with a run that overlapped it) and its count of 16-bit lanes to recompute.
    double wait(batch_run& r, std::uint32_t* overflow_count) {
        if (overflow_count) *overflow_count = 0;
        if (!r.pending) return 0;
        r.pending = false;
        float ms = 0;
        for (int w = 0; w < worker_count; ++w) {
            r.done[w].synchronize();
            ms = std::max(ms, r.done[w].since(r.start));
        }
        if (overflow_count) {
            SWGPU_CUDA_CHECK(cudaMemcpyAsync(overflow_count, r.counters.data() + r.launches, sizeof(std::uint32_t),
                                             cudaMemcpyDeviceToHost, copy_.get()));
            copy_.synchronize();
        }
        return ms;
    }


private:
    const sequence_set& queries_;
    const packed_db& db_;
    const search_config& cfg_;
    cudaStream_t stream_;
    int multiprocessors_;
    int letters_ = 0, rows_ = 0, gap_oe_ = 0, gap_e_ = 0, pad_score_ = 0, overflow_above_ = 0;
    std::uint32_t class_rows_[search_class_count] = {};
    std::size_t boundary_block_ = 0;
    cuda_stream workers_[worker_count];
    cuda_stream copy_;
    cuda_event ready_;
    device_buffer<uint2> boundary_[worker_count];
    const std::uint8_t* d_residues_ = nullptr;
    const std::uint64_t* d_offset_ = nullptr;
    const std::uint32_t *d_length_ = nullptr, *d_original_ = nullptr;
    device_buffer<std::uint8_t> residues_, query_residues_;
    device_buffer<std::uint64_t> subject_offset_, query_offsets_;
    device_buffer<std::uint32_t> subject_length_, subject_original_;
    device_buffer<std::int8_t> matrix_;
};

}  // namespace

// One call of the GPU score pass, in named steps: the checks and the batch sizes (constructor), the queries' order,
// then the simple kernel's batches or the DPX kernels' batches two in flight, each batch's hits selected and delivered.
class search_call {
public:
    search_call(const sequence_set& queries, const sequence_set& db, const scoring& sc, const search_options& opt,
                const search_config& cfg)
        : queries_(queries), db_(db), sc_(sc), opt_(opt), cfg_(cfg), out_(queries.size()), nq_(queries.size()),
          ndb_(db.size()) {}

    std::vector<std::vector<score_hit>> run(search_timing* timing);

private:
    void check_and_size();
    void order_queries();
    std::size_t batch_at(std::size_t b0) const;
    void take_batch(const int* rows, std::size_t b0, std::size_t count);
    void run_simple();
    void run_dpx();

    // DPX batches: two slots, so that the device runs batch k + 1 while the host takes batch k's hits.
    struct slot {
        std::size_t b0 = 0, count = 0;
        std::vector<std::uint32_t> ids;
        device_buffer<int> scores;
        device_buffer<uint2> overflow;
        dpx_runner::batch_run run;
    };
    void start_batch(dpx_runner& runner, const packed_db& pdb, slot& sl, std::size_t b0, std::size_t count);
    void end_batch(dpx_runner& runner, const packed_db& pdb, slot& sl);
    void rescore_overflow(dpx_runner& runner, const packed_db& pdb, slot& sl, std::uint32_t overflowed);

    const sequence_set& queries_;
    const sequence_set& db_;
    const scoring& sc_;
    const search_options& opt_;
    const search_config& cfg_;
    const steady::time_point call_start_ = steady::now();
    search_timing tm_;
    std::vector<std::vector<score_hit>> out_;
    const std::size_t nq_, ndb_;
    int letters_ = 0, gap_oe_ = 0, multiprocessors_ = 0;
    score_kernel kernel_ = score_kernel::dpx16;
    std::optional<cuda_stream> stream_;
    std::size_t cap_ = 1;       // queries per batch at most
    bool one_batch_ = true;
    hit_selector selector_;
    std::vector<std::uint32_t> order_;  // rank r is query order_[r]
    sequence_set reordered_;
    const sequence_set* searched_ = nullptr;  // the queries in rank order
    std::vector<std::vector<score_hit>> by_rank_;
    std::uint32_t multiple_ = 0;
    bool narrow_ = false;
    const char* prepared_note_ = "";
};

// The checks of the inputs, the kernel (16-bit lanes where gap costs allow), the device, and the batch sizes.
void search_call::check_and_size() {
    letters_ = sc_.matrix.size();
    if (letters_ < 1 || letters_ > substitution_matrix::max_letters)
        throw usage_error("matrix '" + sc_.matrix.name() + "' has " + std::to_string(letters_) +
                          " letters; the GPU search supports 1 to 32");
    if (sc_.gaps.open < 0 || sc_.gaps.extend < 1)
        throw usage_error("gap costs must be open >= 0 and extend >= 1 (got " + std::to_string(sc_.gaps.open) + "/" +
                          std::to_string(sc_.gaps.extend) + ")");
    check_codes(queries_, letters_, "queries");
    gap_oe_ = sc_.gaps.open + sc_.gaps.extend;
    // 16-bit lanes hold values down to -oe - e and up to 32767; wider gap costs take the 32-bit kernel.
    const bool narrow_ok = gap_oe_ + sc_.gaps.extend < 16384;
    kernel_ = cfg_.kernel == score_kernel::dpx16 && !narrow_ok ? score_kernel::dpx32 : cfg_.kernel;

    int device = 0;
    SWGPU_CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    SWGPU_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    multiprocessors_ = prop.multiProcessorCount;
    stream_.emplace();

    for (std::size_t q = 0; q < nq_; ++q) tm_.cells += queries_.length(q) * db_.total_residues();
    // The score matrix budget holds each query's row of scores and its selected hits.
    const std::size_t row_bytes = sizeof(int) * ndb_ + sizeof(int2) * hit_selector::capacity(opt_, ndb_);
    std::size_t per_batch = std::clamp<std::size_t>(cfg_.score_matrix_bytes / row_bytes, 1, nq_);
    if (per_batch > 1 && per_batch < nq_) per_batch &= ~std::size_t(1);  // whole pairs per batch
    // Batches: one of all queries when they fit, unless early delivery splits them (more than pipeline_min_batch
    // queries); else batches of at most half the score matrix each, so that two can be in flight (run_dpx).
    one_batch_ = nq_ <= per_batch && !(opt_.on_final && nq_ > pipeline_min_batch);
    cap_ = one_batch_ || per_batch == 1 ? per_batch : std::max<std::size_t>(2, per_batch / 2) & ~std::size_t(1);
}

// With early delivery the queries go longest first, so that the last batch, whose hits come last, holds the shortest
// queries: the least device time after the others, and the fewest cells left to align. The batches run on
// `searched_`, the queries in that order.
void search_call::order_queries() {
    order_.resize(nq_);
    std::iota(order_.begin(), order_.end(), 0u);
    if (!one_batch_ && opt_.on_final) {
        std::stable_sort(order_.begin(), order_.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return queries_.length(a) > queries_.length(b); });
        reordered_.source = queries_.source;
        reordered_.encoded = queries_.encoded;
        for (const std::uint32_t q : order_) reordered_.add(queries_.names[q], queries_[q]);
    }
    searched_ = reordered_.size() == nq_ ? &reordered_ : &queries_;
    by_rank_.assign(nq_, {});
    const auto* prepared = dynamic_cast<const packed_chunk*>(opt_.prepared);
    const bool on_device = prepared && prepared->made_from(db_) && prepared->on_device;
    selector_.rank_by_evalue(opt_, *searched_, db_, on_device ? prepared->d_subject_lengths.data() : nullptr);
}

// The size of the batch that starts at rank b0. With early delivery (on_final), each batch takes half of the queries
// left, down to batches of pipeline_min_batch, so the caller gets the first hits early and the batch whose hits come
// last is small; the score matrix bounds every batch.
std::size_t search_call::batch_at(std::size_t b0) const {
    const std::size_t left = nq_ - b0;
    std::size_t count = std::min(cap_, left);
    if (opt_.on_final && left > pipeline_min_batch) {
        count = std::min(count, std::max(pipeline_min_batch, (left + 1) / 2));
        if (count < left) count = (count + 1) & ~std::size_t(1);  // whole pairs
    }
    return count;
}

// The hits of ranks [b0, b0 + count) from their score rows on the device, into out_, then delivered.
void search_call::take_batch(const int* rows, std::size_t b0, std::size_t count) {
    selector_.select(rows, count, ndb_, opt_, b0, by_rank_);
    for (std::size_t r = b0; r < b0 + count; ++r) out_[order_[r]] = std::move(by_rank_[r]);
    if (opt_.on_final) opt_.on_final(std::span<const std::uint32_t>(order_).subspan(b0, count), out_);
}

// The simple 32-bit kernel (a reference for the DPX kernels): every batch in turn.
void search_call::run_simple() {
    auto t = steady::now();
    cudaStream_t stream = stream_->get();
    device_buffer<std::uint8_t> qres, sres;
    device_buffer<std::uint64_t> qoff, soff;
    device_buffer<std::int8_t> matrix;
    check_codes(db_, letters_, "database");
    qres.upload(searched_->residues, stream);
    qoff.upload(searched_->offsets, stream);
    sres.upload(db_.residues, stream);
    soff.upload(db_.offsets, stream);
    matrix.upload(reinterpret_cast<const std::int8_t*>(sc_.matrix.table().data()), sc_.matrix.table().size(), stream);
    std::size_t longest = 1;
    for (std::size_t s = 0; s < ndb_; ++s) longest = std::max(longest, db_.length(s));
    const std::size_t threads = std::clamp<std::size_t>((std::size_t(512) << 20) / (longest * sizeof(int2)),
                                                        kernels::block_threads, std::size_t(1) << 16);
    const std::size_t blocks = threads / kernels::block_threads;
    device_buffer<int> scores(std::min(cap_, nq_) * ndb_);
    device_buffer<int2> scratch(blocks * kernels::block_threads * longest);
    SWGPU_CUDA_CHECK(cudaStreamSynchronize(stream));
    tm_.upload_ms += ms_since(t);
    for (std::size_t b0 = 0, count = 0; b0 < nq_; b0 += count) {
        count = batch_at(b0);
        cuda_event start, stop;
        start.record(stream);
        kernels::simple_search<<<static_cast<unsigned>(blocks), kernels::block_threads, 0, stream>>>(
            qres.data(), qoff.data(), static_cast<std::uint32_t>(b0), static_cast<std::uint32_t>(count), sres.data(),
            soff.data(), static_cast<std::uint32_t>(ndb_), matrix.data(), gap_oe_, sc_.gaps.extend, scores.data(),
            scratch.data(), longest);
        SWGPU_CUDA_CHECK_LAUNCH("simple_search");
        stop.record(stream);
        stop.synchronize();
        tm_.score_ms += stop.since(start);
        t = steady::now();
        take_batch(scores.data(), b0, count);
        tm_.select_ms += ms_since(t);
        ++tm_.batches;
    }
}

// The DPX kernels over the packed chunk (packed ahead by prepare_chunk, or now), batches two in flight: while the
// device runs batch k + 1, the host takes batch k's scores, selects its hits and delivers them.
void search_call::run_dpx() {
    auto t = steady::now();
    const auto* prepared = dynamic_cast<const packed_chunk*>(opt_.prepared);
    const bool use_prepared = prepared && prepared->made_from(db_) && prepared->letters == letters_;
    packed_db packed_here;
    if (!use_prepared) packed_here = pack_database(db_, letters_, static_cast<std::uint8_t>(letters_));
    const packed_db& pdb = use_prepared ? prepared->pdb : packed_here;
    prepared_note_ = !use_prepared ? "" : prepared->on_device ? " (packed and uploaded ahead)" : " (packed ahead)";
    tm_.pack_ms += ms_since(t);
    t = steady::now();
    dpx_runner runner(*searched_, pdb, sc_, cfg_, stream_->get(), multiprocessors_,
                      use_prepared && prepared->on_device ? prepared : nullptr);
    SWGPU_CUDA_CHECK(cudaStreamSynchronize(stream_->get()));
    tm_.upload_ms += ms_since(t);

    multiple_ = column_multiple();
    narrow_ = kernel_ == score_kernel::dpx16;
    std::array<slot, 2> slots;
    std::size_t started = 0, ended = 0;
    for (std::size_t b0 = 0; b0 < nq_ || ended < started;) {
        if (b0 < nq_ && started - ended < slots.size()) {
            const std::size_t count = batch_at(b0);
            start_batch(runner, pdb, slots[started++ % slots.size()], b0, count);
            b0 += count;
            if (started - ended < slots.size() && b0 < nq_) continue;  // keep two in flight
        }
        end_batch(runner, pdb, slots[ended++ % slots.size()]);
    }
}

void search_call::start_batch(dpx_runner& runner, const packed_db& pdb, slot& sl, std::size_t b0, std::size_t count) {
    sl.scores.reserve(std::min(cap_, nq_) * ndb_);  // slots are made when first used: one batch needs one
    if (narrow_) sl.overflow.reserve(std::min<std::size_t>(std::min(cap_, nq_) * ndb_, std::size_t(1) << 20));
    const auto t = steady::now();
    sl.b0 = b0;
    sl.count = count;
    sl.ids.resize(count);
    std::iota(sl.ids.begin(), sl.ids.end(), static_cast<std::uint32_t>(b0));
    // A query without a partner fills both 16-bit lanes with two subjects (a twin pair): one query runs at the rate
    // of two.
    const bool twins = tuning::flag("search.twin", device_arch());
    const search_plan plan = plan_all(pair_queries(*searched_, sl.ids, narrow_ ? 2 : 1, runner.rows(), multiple_, twins),
                                      *searched_, pdb, kernels::block_threads);
    tm_.pack_ms += ms_since(t);
    SWGPU_CUDA_CHECK(cudaMemsetAsync(sl.scores.data(), 0, count * ndb_ * sizeof(int), stream_->get()));
    if (narrow_)
        runner.enqueue<kernels::lanes_s16x2>(plan, sl.run, sl.scores.data(), ndb_, static_cast<std::int32_t>(b0),
                                             &sl.overflow, &tm_.blocks);
    else
        runner.enqueue<kernels::lanes_s32>(plan, sl.run, sl.scores.data(), ndb_, static_cast<std::int32_t>(b0), nullptr,
                                           &tm_.blocks);
}

void search_call::end_batch(dpx_runner& runner, const packed_db& pdb, slot& sl) {
    std::uint32_t overflowed = 0;
    tm_.score_ms += runner.wait(sl.run, narrow_ ? &overflowed : nullptr);
    if (overflowed > 0) rescore_overflow(runner, pdb, sl, overflowed);
    const auto t = steady::now();
    take_batch(sl.scores.data(), sl.b0, sl.count);
    tm_.select_ms += ms_since(t);
    ++tm_.batches;
}

// Recomputes the 16-bit lanes that overflowed (or, when their list overflowed, the whole batch) with 32-bit lanes.
void search_call::rescore_overflow(dpx_runner& runner, const packed_db& pdb, slot& sl, std::uint32_t overflowed) {
    tm_.overflow_lanes += overflowed;
    const auto t = steady::now();
    search_plan wide;
    if (overflowed > sl.overflow.size()) {
        wide = plan_all(pair_queries(*searched_, sl.ids, 1, runner.rows(), multiple_), *searched_, pdb,
                        kernels::block_threads);
    } else {
        std::vector<uint2> listed(overflowed);
        SWGPU_CUDA_CHECK(cudaMemcpy(listed.data(), sl.overflow.data(), overflowed * sizeof(uint2),
                                    cudaMemcpyDeviceToHost));
        std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> by_query;
        for (const uint2& v : listed) by_query[v.x].push_back(v.y);
        std::vector<std::uint32_t> qs;
        for (const auto& [q, subjects] : by_query) qs.push_back(q);
        std::sort(qs.begin(), qs.end());
        auto pairs = pair_queries(*searched_, qs, 1, runner.rows(), multiple_);
        std::vector<std::vector<std::uint32_t>> subjects_of(pairs.size());
        for (std::size_t p = 0; p < pairs.size(); ++p)
            subjects_of[p] = std::move(by_query[static_cast<std::uint32_t>(pairs[p].query[0])]);
        wide = plan_listed(std::move(pairs), *searched_, std::move(subjects_of), pdb, kernels::block_threads);
    }
    tm_.pack_ms += ms_since(t);
    const double ms = runner.run<kernels::lanes_s32>(wide, sl.run, sl.scores.data(), ndb_,
                                                     static_cast<std::int32_t>(sl.b0), nullptr, nullptr, nullptr);
    tm_.score_ms += ms;
    tm_.rescore_ms += ms;
}

std::vector<std::vector<score_hit>> search_call::run(search_timing* timing) {
    if (queries_.empty() || db_.empty()) {
        if (timing) *timing = tm_;
        return std::move(out_);
    }
    check_and_size();
    order_queries();
    if (kernel_ == score_kernel::simple32) run_simple();
    else run_dpx();
    tm_.total_ms = ms_since(call_start_);
    if (timing) *timing = tm_;
    if (kernel_ != score_kernel::simple32 && tuning::flag("search.profile", device_arch()))  // where the time went
        std::fprintf(stderr,
                     "swgpu: search %zu queries x %zu subjects: pack %.1f ms, upload %.1f, score %.1f, select %.1f, "
                     "total %.1f ms%s\n",
                     nq_, ndb_, tm_.pack_ms, tm_.upload_ms, tm_.score_ms, tm_.select_ms, tm_.total_ms, prepared_note_);
    return std::move(out_);
}

std::vector<std::vector<score_hit>> search(const sequence_set& queries, const sequence_set& db, const scoring& sc,
                                           const search_options& opt, const search_config& cfg,
                                           search_timing* timing) {
    return search_call(queries, db, sc, opt, cfg).run(timing);
}

}  // namespace detail

namespace {

// Page-locked host buffers that prepare_chunk packs chunks into before copying them to the device, reused from chunk
// to chunk. On the H200 host a copy of 100 MB from pageable memory took 13.3 ms (7.5 GB/s: the driver stages it
// through its own buffer on one thread) against 1.9 ms page-locked; locking takes 45 ms for 100 MB from
// cudaHostAlloc but 6 ms with cudaHostRegister of memory already touched, so buffers are mapped, touched on
// host_pool()'s threads, then registered. Sizes round up to powers of two, so the growing first chunks of a search
// (database_stream's ramp) take four buffers and the rest reuse the largest. Where registering fails (a limit on
// locked memory) a buffer stays pageable: slower copies, the same bytes.
class staging_buffers {
public:
    struct buffer {
        std::uint8_t* data = nullptr;
        std::size_t bytes = 0;
        bool locked = false;
    };
    static staging_buffers& instance() {
        static auto* pool = new staging_buffers;  // never destroyed: unregistering after the driver is gone fails
        return *pool;
    }
    // A buffer of at least `bytes`: the smallest free one that is large enough, or a new one.
    buffer take(std::size_t bytes) {
        {
            const std::lock_guard<std::mutex> lock(m_);
            auto best = free_.end();
            for (auto it = free_.begin(); it != free_.end(); ++it)
                if (it->bytes >= bytes && (best == free_.end() || it->bytes < best->bytes)) best = it;
            if (best != free_.end()) {
                const buffer b = *best;
                free_.erase(best);
                return b;
            }
        }
        return allocate(std::bit_ceil(std::max<std::size_t>(bytes, std::size_t(1) << 20)));
    }
    // Back to the pool, which keeps the largest few (several devices prepare chunks at once).
    void give(buffer b) {
        const std::lock_guard<std::mutex> lock(m_);
        free_.push_back(b);
        std::sort(free_.begin(), free_.end(), [](const buffer& x, const buffer& y) { return x.bytes > y.bytes; });
        while (free_.size() > kept) {
            release(free_.back());
            free_.pop_back();
        }
    }

private:
    static constexpr std::size_t kept = 4;
    static buffer allocate(std::size_t bytes) {
        void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) throw swgpu::out_of_memory("no host memory for a chunk of " + std::to_string(bytes) + " bytes");
        buffer b{static_cast<std::uint8_t*>(m), bytes, false};
        constexpr std::size_t piece = std::size_t(1) << 20;
        host_pool().parallel_for((bytes + piece - 1) / piece, [&](std::size_t k) {
            std::memset(b.data + k * piece, 0, std::min(piece, bytes - k * piece));
        });
        b.locked = cudaHostRegister(b.data, bytes, cudaHostRegisterDefault) == cudaSuccess;
        if (!b.locked) (void)cudaGetLastError();
        return b;
    }
    static void release(const buffer& b) {
        if (b.locked) (void)cudaHostUnregister(b.data);
        ::munmap(b.data, b.bytes);
    }
    std::mutex m_;
    std::vector<buffer> free_;
};

// Device bytes a database share costs beyond the score matrix and the boundary slots: packed residues with a pad run
// per subject, and per-subject metadata (offsets, lengths, original index, task lists).
std::size_t share_bytes(std::uint64_t residues, std::size_t subjects) { return residues + subjects * (64 + 48); }

// The score pass within `budget` bytes of device memory: the score matrix gets at most a quarter of it (fewer
// queries per batch), a database whose share does not fit in half of it is searched in slices of consecutive subjects
// whose hits are merged (the same result as one pass), and the boundary slots take what these leave (at least a
// quarter; fewer slots, fewer persistent blocks: with --gpu-mem 2G and a quarter only, the score pass of classic20 x
// db20k x100 took 1.4x as long on the H100).
std::vector<std::vector<score_hit>> budgeted_search(const sequence_set& queries, const sequence_set& db,
                                                    const scoring& sc, const search_options& opt, std::size_t budget) {
    detail::search_config cfg;
    // The cap on the boundary slots (core/tuning.hpp: search.boundary_mib).
    const std::int64_t cap_mib = tuning::integer("search.boundary_mib", device_arch());
    cfg.boundary_bytes = std::size_t(std::max<std::int64_t>(1, cap_mib)) << 20;
    cfg.score_matrix_bytes = std::min(cfg.score_matrix_bytes, budget / 4);
    const std::size_t queries_bytes = queries.total_residues() * 2 + (std::size_t(1) << 20);
    const std::size_t share = budget / 2 - std::min(budget / 2, queries_bytes);
    const std::size_t db_bytes = std::min(share_bytes(db.total_residues(), db.size()), share);
    const std::size_t row_bytes = sizeof(int) * db.size() + sizeof(int2) * detail::hit_selector::capacity(opt, db.size());
    const std::size_t scores_bytes = std::min(cfg.score_matrix_bytes, queries.size() * row_bytes);
    const std::size_t left = budget - std::min(budget, queries_bytes + db_bytes + scores_bytes);
    // Three quarters of what is left: the rest is for the query profiles, task lists and overflow lists.
    cfg.boundary_bytes = std::min(cfg.boundary_bytes, std::max(budget / 4, left / 4 * 3));
    if (share_bytes(db.total_residues(), db.size()) <= share) return detail::search(queries, db, sc, opt, cfg);
    // A query's hits are final only after the last slice: no early delivery here.
    search_options per_slice = opt;
    per_slice.on_final = nullptr;
    std::vector<std::vector<score_hit>> hits(queries.size());
    std::size_t first = 0;
    while (first < db.size()) {
        sequence_set slice;
        slice.source = db.source;
        slice.encoded = db.encoded;
        std::size_t last = first;
        while (last < db.size() && (last == first || share_bytes(slice.total_residues() + db.length(last),
                                                                   slice.size() + 1) <= share)) {
            slice.add(db.names[last], db[last]);
            ++last;
        }
        search_options o = per_slice;
        o.subject_offset = opt.subject_offset + static_cast<std::uint32_t>(first);
        merge_hits(hits, detail::search(queries, slice, sc, o, cfg), opt.max_hits);
        first = last;
    }
    return hits;
}

}  // namespace

std::unique_ptr<prepared_chunk> prepare_chunk(const sequence_set& db, const scoring& sc, std::size_t device_memory) {
    const int letters = sc.matrix.size();
    if (db.empty() || !db.encoded || letters < 1 || letters > substitution_matrix::max_letters) return nullptr;
    auto p = std::make_unique<detail::packed_chunk>();
    const auto pad = static_cast<std::uint8_t>(letters);
    p->pdb = plan_database(db);
    p->letters = letters;
    // Copied to the device now, on a stream of its own, unless a memory budget was given (the copy would come on top
    // of the previous chunk's) or it would take more than an eighth of what is free. Then the residues are packed
    // into a page-locked staging buffer, given back once copied (the score pass reads the device's copy); else into
    // memory of the chunk's own, which the score pass copies.
    std::size_t free_bytes = 0, total_bytes = 0;
    SWGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (device_memory == 0 && share_bytes(p->pdb.residue_bytes, p->pdb.size()) <= free_bytes / 8) {
        auto& staging = staging_buffers::instance();
        const auto staged = staging.take(p->pdb.residue_bytes);
        try {
            fill_database(db, p->pdb, letters, pad, staged.data);
            p->d_residues.upload(staged.data, p->pdb.residue_bytes);
        } catch (...) {
            (void)cudaStreamSynchronize(detail::chunk_copy_stream());
            staging.give(staged);
            throw;
        }
        p->d_offset.upload(p->pdb.offset);
        p->d_length.upload(p->pdb.length);
        p->d_original.upload(p->pdb.original);
        std::vector<std::uint32_t> lengths(db.size());
        for (std::size_t j = 0; j < lengths.size(); ++j) lengths[j] = static_cast<std::uint32_t>(db.length(j));
        p->d_subject_lengths.upload(lengths);
        const cudaError_t copied = cudaStreamSynchronize(detail::chunk_copy_stream());
        staging.give(staged);  // copied, or the stream failed: either way the device no longer reads it
        SWGPU_CUDA_CHECK(copied);
        p->on_device = true;
    } else {
        p->pdb.residues.reset(new std::uint8_t[p->pdb.residue_bytes]);
        fill_database(db, p->pdb, letters, pad, p->pdb.residues.get());
    }
    p->key = db.residues.data();
    p->residues = db.total_residues();
    p->sequences = db.size();
    return p;
}

std::vector<std::vector<score_hit>> search(const sequence_set& queries, const sequence_set& db, const scoring& sc,
                                           const search_options& opt) {
    std::size_t budget = opt.device_memory;
    if (budget == 0) {
        std::size_t free_bytes = 0, total_bytes = 0;
        SWGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        budget = free_bytes - std::min(free_bytes / 8, std::size_t(1) << 30);  // headroom for the runtime
    }
    // Out of device memory: try again with half the budget (smaller batches, slices), three times, then give up with
    // exit code 4. A retry may deliver queries early again; the caller hears of each query once.
    search_options o = opt;
    std::vector<bool> delivered;
    if (opt.on_final) {
        delivered.assign(queries.size(), false);
        o.on_final = [&](std::span<const std::uint32_t> listed, const std::vector<std::vector<score_hit>>& hits) {
            std::vector<std::uint32_t> fresh;
            for (const std::uint32_t q : listed)
                if (!delivered[q]) {
                    delivered[q] = true;
                    fresh.push_back(q);
                }
            if (!fresh.empty()) opt.on_final(fresh, hits);
        };
    }
    const auto started = detail::steady::now();
    for (int attempt = 0;; ++attempt) {
        try {
            auto hits = budgeted_search(queries, db, sc, o, budget);
            if (tuning::flag("search.profile", device_arch()))  // the call with its set-up and tear-down
                std::fprintf(stderr, "swgpu: GPU search in all %.1f ms\n", detail::ms_since(started));
            return hits;
        } catch (const error& e) {
            if (e.code() != exit_code::out_of_memory || attempt == 3) throw;
            (void)cudaGetLastError();
            budget /= 2;
        }
    }
}

}  // namespace swgpu::gpu
