// Which GPU each MPI rank of a host takes (io/gpu_share.hpp): the ranks take the host's GPUs in turn, each sees one.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "io/gpu_share.hpp"

using namespace swgpu::io;

TEST_CASE("MPI ranks take the host's GPUs in turn, each from the launcher's list or the device files", "[mpi]") {
    // No list: the device files, numbered from 0. 4 ranks on 2 GPUs: two ranks on each, every GPU used.
    std::set<std::string> seen;
    for (int rank = 0; rank < 4; ++rank) {
        const auto g = gpu_for_rank(nullptr, 2, rank, 4);
        REQUIRE(g);
        CHECK(g->gpus == 2);
        CHECK(g->index == rank % 2);
        CHECK(g->visible == std::to_string(rank % 2));
        CHECK(g->sharing == 2);
        seen.insert(g->visible);
    }
    CHECK(seen.size() == 2);
    // 3 ranks on 2 GPUs: GPU 0 holds ranks 0 and 2, GPU 1 rank 1 alone.
    CHECK(gpu_for_rank(nullptr, 2, 0, 3)->sharing == 2);
    CHECK(gpu_for_rank(nullptr, 2, 1, 3)->sharing == 1);
    CHECK(gpu_for_rank(nullptr, 2, 2, 3)->sharing == 2);
    // The launcher's list: its entries (indices, UUIDs), spaces and empty entries dropped.
    const char* list = "3, 1,,GPU-8f2e";
    CHECK(gpu_for_rank(list, 8, 0, 3)->visible == "3");
    CHECK(gpu_for_rank(list, 8, 1, 3)->visible == "1");
    CHECK(gpu_for_rank(list, 8, 2, 3)->visible == "GPU-8f2e");
    CHECK(gpu_for_rank(list, 8, 3, 4)->visible == "3");
    CHECK(gpu_for_rank(list, 8, 2, 3)->gpus == 3);
    // One rank per GPU: nobody shares.
    for (int rank = 0; rank < 4; ++rank) CHECK(gpu_for_rank(nullptr, 4, rank, 4)->sharing == 1);
    // No GPU known: the choice is left to the CUDA runtime.
    CHECK_FALSE(gpu_for_rank("", 4, 0, 2));
    CHECK_FALSE(gpu_for_rank(nullptr, 0, 0, 2));
}

TEST_CASE("MPI ranks use their own GPU when it alone is visible, else local rank mod the GPUs seen", "[mpi]") {
    // Rank 2 of 3 took GPU 0 of 2 (shared with rank 0) and sees it alone: device 0, shared by 2.
    const auto taken = gpu_for_rank(nullptr, 2, 2, 3);
    const rank_device own = device_for_rank(taken, 1, 2, 3);
    CHECK(own.device == 0);
    CHECK(own.sharing == 2);
    // The runtime saw both GPUs anyway: rank 2 of 3 on device 0 with rank 0, rank 1 alone on device 1.
    CHECK(device_for_rank(taken, 2, 2, 3).device == 0);
    CHECK(device_for_rank(taken, 2, 2, 3).sharing == 2);
    CHECK(device_for_rank(std::nullopt, 2, 1, 3).device == 1);
    CHECK(device_for_rank(std::nullopt, 2, 1, 3).sharing == 1);
    // No GPU known and one device seen: every rank on it.
    CHECK(device_for_rank(std::nullopt, 1, 3, 4).device == 0);
    CHECK(device_for_rank(std::nullopt, 1, 3, 4).sharing == 4);
}
