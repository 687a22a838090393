// Summed-area tables and integral histograms on the GPU (gpu/numerics/sat.cu), as the rest of the program sees them: no CUDA
// types. The tables are those of core/numerics/sat.hpp, bit for bit (float tables through the ordered schedule, the
// default for them); every function copies its input to the
// device, runs, copies back only what it returns and throws swgpu::error (runtime_failure, out_of_memory) on device
// failure. A build without CUDA has stubs that throw runtime_failure (gpu/without_cuda.cpp).
//
// Schedules (the engine's, specialised to the (+,+) pair; a table of L interleaved lanes is one problem of W·L columns
// whose in-row scan has stride L):
//   tiled_p2p   one pass: tiles of 32 rows (16 for 64-bit tiles) x 256 columns; each tile forms its local table in
//               registers, then adds the row sums of the tiles to its left and the column sums of the tiles above,
//               found by decoupled look-back along the tile row and the tile column (per-tile flags, aggregates
//               published before inclusive prefixes); tiles are taken in row-major order from an atomic counter, so
//               a tile only waits for tiles already running. Input read once, table written once. Lanes <= 32.
//   strips      two passes over the input, one over the table (gpu/numerics/sat_strip_kernels.cuh): the sums of every cell of
//               128 rows x 256 columns first, then each cell writes its rows with the sums above and left of it in
//               hand, so no block ever waits for another. Tables of one lane, histograms of up to 32 bins.
//   row_sync    the library baseline: a CUB BlockScan along every row, then a pass down the columns. Any lane count.
//   ordered     the CPU's order of additions (gpu/numerics/sat_ordered_kernels.cuh): along the rows, then down the
//               columns, each a sequential chain; float tables equal the CPU's bit for bit. Any lane count; no histograms.
//   hybrid      float tables: ordered. Integer tables and histograms (exact in any order): strips where they apply,
//               else tiled_p2p (lanes <= 32), else row_sync.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/numerics/sat.hpp"

namespace swgpu::gpu {

enum class table_schedule { row_sync, tiled_p2p, strips, ordered, hybrid };
inline const char* table_schedule_name(table_schedule s) {
    switch (s) {
        case table_schedule::row_sync: return "row_sync";
        case table_schedule::tiled_p2p: return "tiled_p2p";
        case table_schedule::strips: return "strips";
        case table_schedule::ordered: return "ordered";
        default: return "hybrid";
    }
}

// What ran and the device time of the kernels of each repeat (CUDA events; transfers excluded).
struct table_report {
    table_schedule used = table_schedule::hybrid;
    std::vector<float> ms;
};

// The table of `in` (sat::table_type of its dtype), `repeats` times on the device; the result is the last run's.
// The caller checks the table fits (sat::check_table_fits).
sat::array summed_area_table(const sat::array& in, sat::dtype table, table_schedule s = table_schedule::hybrid,
                             table_report* report = nullptr, int repeats = 1);
// The same table written into `out`, memory the caller owns of in.elements() elements of `table`'s type (a NumPy
// array: no host copy of the table).
void summed_area_table_into(const sat::array& in, sat::dtype table, void* out);
// The uint64 table of an 8- or 16-bit image read in place from `image` (rows x cols x lanes, C order), into `out`:
// no host copy of either (the caller has checked the sums fit: they do below 2^48 pixels).
void small_integer_table_into(const void* image, sat::dtype type, index_t rows, index_t cols, index_t lanes, void* out);

// The integral histogram (uint32, H x W x B) of per-pixel bins (sat::bin_indices; `bins` means no bin).
sat::array integral_histogram(std::span<const std::uint16_t> bin, index_t rows, index_t cols, int bins,
                              table_schedule s = table_schedule::hybrid, table_report* report = nullptr, int repeats = 1);
// The same into host memory the caller owns (rows x cols x bins counts).
void integral_histogram_into(std::span<const std::uint16_t> bin, index_t rows, index_t cols, int bins, std::uint32_t* out);

// Rectangle queries answered on the device from a table that never leaves it: the same words as sat::rect_sums
// (rects.size() x lanes), and rects.size() x B histogram counts. Rectangles must be checked (sat::check_rects).
std::vector<std::uint64_t> summed_area_queries(const sat::array& in, sat::dtype table, std::span<const sat::rect> rects,
                                               table_report* report = nullptr);
std::vector<std::uint32_t> integral_histogram_queries(std::span<const std::uint16_t> bin, index_t rows, index_t cols,
                                                      int bins, std::span<const sat::rect> rects,
                                                      table_report* report = nullptr);

}  // namespace swgpu::gpu
