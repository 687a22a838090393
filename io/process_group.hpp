// The processes of one run: several under MPI (`mpirun -np P swgpu align ...`, in a build with Open MPI), else one.
// Each searches its share of the database chunks (chunk k on rank k mod P); rank 0 gathers the others' scans, merges
// them, finishes and writes the output, so the output is the one a single process writes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace swgpu {
struct search_run_options;
}

namespace swgpu::io {

class process_group {
public:
    // The group of this process: MPI's world when the program was started by an MPI launcher (MPI is initialized
    // then, and finalized at exit), else a group of one.
    static process_group& world();

    int rank() const { return rank_; }
    int size() const { return size_; }
    // Ranks of this group on this host, and this one's place among them (for choosing and sharing a GPU).
    int local_rank() const { return local_rank_; }
    int local_size() const { return local_size_; }
    // Every rank sends `bytes` and an error flag; rank 0 receives all of them in rank order (the others get
    // nothing). Collective: every rank must call it.
    struct part {
        bool failed = false;
        std::string bytes;  // the scan, or the error's exit code and message when failed
    };
    std::optional<std::vector<part>> gather(const part& mine);
    // Ends every rank of the run: prints "swgpu: error: WHAT (MPI rank R)" and aborts the MPI job with `code`.
    [[noreturn]] void abort(int code, const std::string& what);
    // "built with Open MPI x.y" or "built without MPI".
    static std::string build_info();

    ~process_group();

private:
    process_group();
    int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
    bool initialized_ = false;
};

// A search shared by the ranks of `group` (several): rank r searches chunks r, r + P, ... (run.searched_here), and
// rank 0 gathers the others' scans and merges them (run.combine), saying so to `info`; the others finish nothing.
void share_search(process_group& group, search_run_options& run, const std::function<void(const std::string&)>& info);

}  // namespace swgpu::io
