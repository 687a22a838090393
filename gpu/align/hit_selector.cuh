// The selection of each query's top hits from its row of scores on the device (gpu::search's host side, which is
// its one user: search.cu); the kernels are gpu/align/select_hits.cuh.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "core/align/evalue_rank.hpp"
#include "core/align/search/score_pass.hpp"
#include "core/thread_pool.hpp"
#include "gpu/align/select_hits.cuh"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/gpu.hpp"

namespace swgpu::gpu::detail {

inline thread_pool& selection_pool() {
    static thread_pool pool;
    return pool;
}

// Each query's hits from its row of scores on the device (original subject order), selected there
// (gpu/align/select_hits.cuh): k hits per query come back, ordered here by better(), the contract of search_cpu.
// Ranked by E-value, the device sends a superset of each row's best k, which is ranked here exactly (ranked_hit, as
// the CPU's pass ranks), or, for a row the device could not bound, the whole row of scores.
class hit_selector {
public:
    // Hits a row sends back at most: k, or the superset of an E-value ranking.
    static std::size_t capacity(const search_options& opt, std::size_t subjects) {
        const std::size_t k = std::min(opt.max_hits, subjects);
        return opt.rank_by_evalue ? std::min(subjects, 2 * k + 64) : k;
    }

    // Before the first select() of a search ranked by E-value: the lengths of the queries in rank order and of the
    // subjects, uploaded once.
    // `device_subject_lengths`, when given, holds the subjects' lengths on the device already (a chunk prepared ahead).
    void rank_by_evalue(const search_options& opt, const sequence_set& ranked_queries, const sequence_set& db,
                        const std::uint32_t* device_subject_lengths = nullptr) {
        if (!opt.rank_by_evalue) return;
        std::vector<std::uint32_t> q(ranked_queries.size());
        for (std::size_t r = 0; r < q.size(); ++r) q[r] = static_cast<std::uint32_t>(ranked_queries.length(r));
        query_lengths_.upload(q, stream_.get());
        subject_length_data_ = device_subject_lengths;
        std::vector<std::uint32_t> s;
        if (!subject_length_data_) {
            s.resize(db.size());
            for (std::size_t j = 0; j < s.size(); ++j) s[j] = static_cast<std::uint32_t>(db.length(j));
            subject_lengths_.upload(s, stream_.get());
            subject_length_data_ = subject_lengths_.data();
        }
        stream_.synchronize();  // the host vectors go
        queries_ = &ranked_queries;
        db_ = &db;
    }

    // Rows [0, rows) of `scores` (device, `stride` apart) hold ranks [first, first + rows); results go to out[rank].
    void select(const int* scores, std::size_t rows, std::size_t stride, const search_options& opt, std::size_t first,
                std::vector<std::vector<score_hit>>& out) {
        const std::size_t k = std::min(opt.max_hits, stride);
        if (rows == 0) return;
        if (k == 0) {
            for (std::size_t r = 0; r < rows; ++r) out[first + r].clear();
            return;
        }
        kernels::evalue_order order;
        if (opt.rank_by_evalue) {
            order = {true, *opt.rank_by_evalue, subject_length_data_, query_lengths_.data() + first,
                     static_cast<std::uint32_t>(capacity(opt, stride))};
        }
        const std::size_t capacity = order.on ? order.capacity : k;
        hits_.reserve(rows * capacity);
        counts_.reserve(rows);
        const int min_score = std::max(1, opt.min_score);
        if (order.on) {
            // The E-value keys of a group of rows at a time (at most key_budget of them), by a grid over the group,
            // then one block per row selects from them.
            constexpr std::size_t key_budget = std::size_t(32) << 20;
            const std::size_t group = std::clamp<std::size_t>(key_budget / stride, 1, std::min<std::size_t>(rows, 65535));
            keys_.reserve(group * stride);
            const auto subjects = static_cast<std::uint32_t>(stride);
            const unsigned x_blocks = static_cast<unsigned>(
                std::min<std::size_t>((stride + kernels::select_threads - 1) / kernels::select_threads, 1024));
            for (std::size_t r0 = 0; r0 < rows; r0 += group) {
                const std::size_t n = std::min(group, rows - r0);
                kernels::evalue_order part = order;
                part.row_lengths += r0;
                kernels::order_keys<<<dim3(x_blocks, static_cast<unsigned>(n)), kernels::select_threads, 0,
                                      stream_.get()>>>(scores + r0 * stride, stride, subjects, min_score, part,
                                                       keys_.data());
                SWGPU_CUDA_CHECK_LAUNCH("order_keys");
                kernels::select_top_keys<<<static_cast<unsigned>(n), kernels::key_select_threads, 0, stream_.get()>>>(
                    scores + r0 * stride, stride, keys_.data(), subjects, static_cast<std::uint32_t>(k),
                    static_cast<std::uint32_t>(capacity), hits_.data() + r0 * capacity, counts_.data() + r0);
                SWGPU_CUDA_CHECK_LAUNCH("select_top_keys");
            }
        } else {
            kernels::select_top_hits<false><<<static_cast<unsigned>(rows), kernels::select_threads, 0, stream_.get()>>>(
                scores, stride, static_cast<std::uint32_t>(stride), static_cast<std::uint32_t>(k), min_score, order,
                hits_.data(), counts_.data());
            SWGPU_CUDA_CHECK_LAUNCH("select_top_hits");
        }
        host_counts_.resize(rows);
        host_hits_.resize(rows * capacity);
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(host_counts_.data(), counts_.data(), rows * sizeof(std::uint32_t),
                                         cudaMemcpyDeviceToHost, stream_.get()));
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(host_hits_.data(), hits_.data(), rows * capacity * sizeof(int2),
                                         cudaMemcpyDeviceToHost, stream_.get()));
        stream_.synchronize();
        std::vector<std::size_t> whole_rows;
        for (std::size_t r = 0; r < rows; ++r)
            if (host_counts_[r] > capacity) whole_rows.push_back(r);
        selection_pool().parallel_for(rows, [&](std::size_t r) {
            auto& hits = out[first + r];
            hits.clear();
            if (host_counts_[r] > capacity) return;
            const int2* h = host_hits_.data() + r * capacity;
            for (std::uint32_t c = 0; c < host_counts_[r]; ++c) hits.push_back(hit_of(h[c].x, h[c].y, first + r, opt));
            order_and_trim(hits, k);
        });
        for (const std::size_t r : whole_rows) {
            kernels::evalue_order row_order = order;
            row_order.row_lengths += r;
            rank_whole_row(scores + r * stride, stride, first + r, k, opt, row_order, out);
        }
    }

private:
    score_hit hit_of(int score, int subject, std::size_t rank, const search_options& opt) const {
        const auto s = static_cast<std::uint32_t>(subject);
        if (!opt.rank_by_evalue) return {score, s + opt.subject_offset};
        return ranked_hit(score, s + opt.subject_offset, queries_->length(rank), db_->length(s), opt);
    }
    static void order_and_trim(std::vector<score_hit>& hits, std::size_t k) {
        std::sort(hits.begin(), hits.end(), better);
        if (hits.size() > k) hits.resize(k);
    }
    // A row the device could not bound (its k-th hit has an E-value too small to tell apart, or more hits than the
    // capacity lie in the band at the edge: a database holding many copies of a sequence): its candidates are found
    // on the device and ranked here exactly (ranked_hit): every key from the k-th largest less the margin on, as the
    // device's selection keeps them; when the k-th key is capped (its E-value too small to tell apart), every capped
    // key and every key within one unit of rank of the cap, since the device's and the host's ranks may fall on
    // either side of it. The row's keys are sorted on the device for the k-th largest and the candidates picked
    // there (kernels::row_floor, candidate_at), so that only they cross the bus. Before, the whole row of scores and
    // keys came to the host to be ranked there (the selection took 21.4 ms of one query's 109 ms pass over 100
    // copies of db20k, 4.4 ms now; H200); before that, every eligible score of the row was ranked on one thread
    // (1.25 s of classic20's 9.3 s score pass on that database).
    void rank_whole_row(const int* row, std::size_t stride, std::size_t rank, std::size_t k, const search_options& opt,
                        const kernels::evalue_order& row_order, std::vector<std::vector<score_hit>>& out) {
        const int min_score = std::max(1, opt.min_score);
        const auto subjects = static_cast<std::uint32_t>(stride);
        const cudaStream_t stream = stream_.get();
        keys_.reserve(stride);
        const unsigned x_blocks = static_cast<unsigned>(
            std::min<std::size_t>((stride + kernels::select_threads - 1) / kernels::select_threads, 1024));
        kernels::order_keys<<<dim3(x_blocks, 1), kernels::select_threads, 0, stream>>>(
            row, stride, subjects, min_score, row_order, keys_.data());
        SWGPU_CUDA_CHECK_LAUNCH("order_keys");
        // From the stream's pool, which a call of the search after the first serves without a system allocation:
        // the sorted keys, the subjects picked, the floor and the count picked, and cub's temporary storage.
        pooled<unsigned> sorted(stride, stream), floor(2, stream);
        pooled<std::uint32_t> picked(stride, stream);
        const kernels::candidate_at pick{keys_.data(), floor.data()};
        const thrust::counting_iterator<std::uint32_t> all(0);
        std::size_t sort_bytes = 0, pick_bytes = 0;
        SWGPU_CUDA_CHECK(
            cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, keys_.data(), sorted.data(), subjects, 0, 32, stream));
        SWGPU_CUDA_CHECK(
            cub::DeviceSelect::If(nullptr, pick_bytes, all, picked.data(), floor.data() + 1, subjects, pick, stream));
        pooled<std::uint8_t> scratch(std::max(sort_bytes, pick_bytes), stream);
        SWGPU_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(scratch.data(), sort_bytes, keys_.data(), sorted.data(),
                                                        subjects, 0, 32, stream));
        const auto near_cap = static_cast<unsigned>((rank_cap + 64.0 - 1.0) * 1048576.0);
        kernels::row_floor<<<1, 1, 0, stream>>>(sorted.data(), subjects, static_cast<std::uint32_t>(k), near_cap,
                                                floor.data());
        SWGPU_CUDA_CHECK_LAUNCH("row_floor");
        SWGPU_CUDA_CHECK(cub::DeviceSelect::If(scratch.data(), pick_bytes, all, picked.data(), floor.data() + 1,
                                               subjects, pick, stream));
        std::uint32_t count = 0;
        SWGPU_CUDA_CHECK(cudaMemcpyAsync(&count, floor.data() + 1, sizeof(count), cudaMemcpyDeviceToHost, stream));
        stream_.synchronize();
        std::vector<int2> candidates(count);
        if (count > 0) {
            pooled<int2> gathered(count, stream);
            const unsigned blocks = static_cast<unsigned>(
                std::min<std::size_t>((count + kernels::select_threads - 1) / kernels::select_threads, 1024));
            kernels::gather_candidates<<<blocks, kernels::select_threads, 0, stream>>>(row, picked.data(), count,
                                                                                      gathered.data());
            SWGPU_CUDA_CHECK_LAUNCH("gather_candidates");
            SWGPU_CUDA_CHECK(cudaMemcpyAsync(candidates.data(), gathered.data(), count * sizeof(int2),
                                             cudaMemcpyDeviceToHost, stream));
            stream_.synchronize();
        }
        auto& hits = out[rank];
        hits.clear();
        for (const int2& c : candidates) hits.push_back(hit_of(c.x, c.y, rank, opt));
        order_and_trim(hits, k);
    }

    cuda_stream stream_;  // waits on nothing: the rows were complete before select() was called
    device_buffer<int2> hits_;
    device_buffer<std::uint32_t> counts_;
    device_buffer<unsigned> keys_;  // E-value keys of a group of rows (select)
    device_buffer<std::uint32_t> query_lengths_, subject_lengths_;
    const std::uint32_t* subject_length_data_ = nullptr;  // subject_lengths_, or a prepared chunk's
    const sequence_set* queries_ = nullptr;
    const sequence_set* db_ = nullptr;
    std::vector<int2> host_hits_;
    std::vector<std::uint32_t> host_counts_;
};

}  // namespace swgpu::gpu::detail
