#include "io/process_group.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "core/align/search/pipeline.hpp"
#include "core/error.hpp"

#ifdef SWGPU_HAVE_MPI
#include <mpi.h>
#endif

namespace swgpu::io {

process_group& process_group::world() {
    static process_group g;
    return g;
}

process_group::process_group() {
#ifdef SWGPU_HAVE_MPI
    // Started by an MPI launcher (Open MPI's, or a PMI/PMIx one): join its world. A plain start stays a group of one
    // and never touches MPI.
    if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_SIZE")) {
        int ready = 0;
        MPI_Initialized(&ready);
        // The ranks exchange little (one gather of best hits at the end), so Open MPI's ob1 layer over shared memory
        // and TCP serves, and it starts without probing for UCX's networks: MPI_Init took 0.26 s with the default
        // and 0.04-0.08 s with ob1 (2 ranks, build machine). A choice of the user's (--mca pml, OMPI_MCA_pml) stands.
        ::setenv("OMPI_MCA_pml", "ob1", 0);
        if (!ready && MPI_Init(nullptr, nullptr) != MPI_SUCCESS) throw runtime_failure("MPI_Init failed");
        initialized_ = !ready;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &size_);
        MPI_Comm local;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
        MPI_Comm_rank(local, &local_rank_);
        MPI_Comm_size(local, &local_size_);
        MPI_Comm_free(&local);
    }
#endif
}

process_group::~process_group() {
#ifdef SWGPU_HAVE_MPI
    if (initialized_) MPI_Finalize();
#endif
}

std::optional<std::vector<process_group::part>> process_group::gather(const part& mine) {
    if (size_ == 1) return std::vector<part>{mine};
#ifdef SWGPU_HAVE_MPI
    // Sizes first (with the flag in the sign bit's place: a separate int), then the bytes.
    const long long my_size = static_cast<long long>(mine.bytes.size());
    const int my_flag = mine.failed ? 1 : 0;
    std::vector<long long> sizes(rank_ == 0 ? size_ : 0);
    std::vector<int> flags(rank_ == 0 ? size_ : 0);
    MPI_Gather(&my_size, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    MPI_Gather(&my_flag, 1, MPI_INT, flags.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    // Point to point, in pieces of at most 1 GiB (MPI counts are int).
    constexpr long long piece = 1ll << 30;
    if (rank_ != 0) {
        for (long long at = 0; at < my_size; at += piece)
            MPI_Send(mine.bytes.data() + at, static_cast<int>(std::min(piece, my_size - at)), MPI_CHAR, 0, 7,
                     MPI_COMM_WORLD);
        return std::nullopt;
    }
    std::vector<part> all(static_cast<std::size_t>(size_));
    all[0] = mine;
    for (int r = 1; r < size_; ++r) {
        auto& p = all[static_cast<std::size_t>(r)];
        p.failed = flags[static_cast<std::size_t>(r)] != 0;
        p.bytes.resize(static_cast<std::size_t>(sizes[static_cast<std::size_t>(r)]));
        for (long long at = 0; at < sizes[static_cast<std::size_t>(r)]; at += piece)
            MPI_Recv(p.bytes.data() + at, static_cast<int>(std::min(piece, sizes[static_cast<std::size_t>(r)] - at)),
                     MPI_CHAR, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return all;
#else
    throw runtime_failure("internal error: a process group of several without MPI");
#endif
}

void process_group::abort(int code, const std::string& what) {
    std::string line = what;
    for (auto& c : line)
        if (c == '\n' || c == '\r') c = ' ';
    std::cerr << "swgpu: error: " << line << " (MPI rank " << rank_ << ")" << std::endl;
#ifdef SWGPU_HAVE_MPI
    if (size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
    std::exit(code);
}

std::string process_group::build_info() {
#ifdef SWGPU_HAVE_MPI
    int major = 0, minor = 0;
    MPI_Get_version(&major, &minor);
    return "MPI " + std::to_string(major) + "." + std::to_string(minor);
#else
    return "built without MPI";
#endif
}

void share_search(process_group& group, search_run_options& run, const std::function<void(const std::string&)>& info) {
    const int rank = group.rank(), size = group.size();
    run.searched_here = [rank, size](std::size_t chunk) { return chunk % std::size_t(size) == std::size_t(rank); };
    run.combine = [&group, info, max_hits = run.max_hits](database_scan&& mine) -> std::optional<database_scan> {
        auto parts = group.gather({false, pack_scan(mine)});
        if (!parts) return std::nullopt;
        for (std::size_t r = 1; r < parts->size(); ++r) merge_scan(mine, unpack_scan((*parts)[r].bytes), max_hits);
        info("merged the scans of " + std::to_string(parts->size()) + " MPI ranks");
        return std::move(mine);
    };
}

}  // namespace swgpu::io
