// The GPU backend of a build without CUDA: reports no devices, and every function of the GPU facades (gpu/gpu.hpp,
// gpu/engine/engine.hpp) that would run on a device throws runtime_failure, so the program and its tests link against the
// whole facade either way. Everything else in the program works unchanged.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "gpu/engine/engine.hpp"
#include "gpu/engine/scan_instances.hpp"
#include "gpu/gpu.hpp"
#include "gpu/numerics/box_filter.hpp"
#include "gpu/numerics/sat.hpp"
#include "gpu/numerics/levels.hpp"
#include "gpu/numerics/sor.hpp"
#include "gpu/numerics/sweep3d.hpp"

namespace swgpu::gpu {

namespace {

[[noreturn]] void no_cuda(const char* what) {
    throw runtime_failure(std::string("this swgpu was built without CUDA; ") + what +
                          " needs a build with the CUDA backend (configure with a CUDA compiler and -DSWGPU_CUDA=ON)");
}

}  // namespace

bool available() { return false; }
bool built_with_cuda() { return false; }
int device_count() { return 0; }
void use_device(int) { no_cuda("selecting a GPU"); }
std::string architecture(int) { return "*"; }
std::size_t free_memory(int) { no_cuda("reading a GPU's free memory"); }
std::vector<device_info> devices() { return {}; }
std::string build_info() { return "built without CUDA"; }
void warm_up(bool) {}
void start_device() {}
void prepare_alignments(bool) {}
void start_context(int) noexcept {}

std::vector<std::optional<alignment>> align_scored(std::span<const scored_pair>, const scoring&, std::size_t, align_timing*) {
    no_cuda("aligning on the GPU");
}

std::vector<std::vector<score_hit>> search(const sequence_set&, const sequence_set&, const scoring&,
                                           const search_options&) {
    throw runtime_failure("this swgpu was built without CUDA; use --backend cpu");
}

std::unique_ptr<prepared_chunk> prepare_chunk(const sequence_set&, const scoring&, std::size_t) { return nullptr; }

std::unique_ptr<long_pair::backend> long_pair_backend(std::span<const std::uint8_t>, std::span<const std::uint8_t>,
                                                      const scoring&, std::size_t, std::vector<int>) {
    no_cuda("a long pair on the GPU");
}

// ---- gpu/engine/engine.hpp ---------------------------------------------------------------------------------------------------

int scan_tuning_entries() { no_cuda("the GPU weighted scan"); }
int default_scan_tuning_entry() { no_cuda("the GPU weighted scan"); }

template <theorem1_pair Op>
std::vector<typename Op::value> weighted_scan(std::span<const typename Op::value>, typename Op::value,
                                              typename Op::value, scan_kind, int) {
    no_cuda("the GPU weighted scan");
}

template <theorem1_pair Op>
std::vector<typename Op::value> map_scan(std::span<const typename Op::value>, std::span<const typename Op::value>,
                                         typename Op::value, scan_kind, int) {
    no_cuda("the GPU map scan");
}

SWGPU_FOR_EACH_SCAN_PAIR(SWGPU_SCAN_INSTANCE)


int tiled_tuning_entries() { no_cuda("the GPU tiled schedule"); }

template <class Problem>
problem_result<typename Problem::cell> run_synthetic(const Problem&, const schedule_choice&, bool, int) {
    no_cuda("the GPU wavefront engine");
}

// The problems gpu/engine/engine.cu compiles (gpu/engine/engine_instances.cuh).
#define SWGPU_SYNTHETIC_RUN(P) \
    template problem_result<P::cell> run_synthetic<P>(const P&, const schedule_choice&, bool, int);
SWGPU_FOR_EACH_SYNTHETIC_PROBLEM(SWGPU_SYNTHETIC_RUN)
#undef SWGPU_SYNTHETIC_RUN

// ---- gpu/numerics/box_filter.hpp ------------------------------------------------------------------------------------------------

bool box_filter_supported(sat::dtype, index_t, index_t, index_t, index_t) { return false; }
sat::array box_filter(const sat::array&, index_t, float*) { no_cuda("the box filter on the GPU"); }
std::size_t box_filter_workspace_bytes() { return 0; }
void box_filter_device(sat::dtype, const void*, void*, index_t, index_t, index_t, index_t, void*, void*) {
    no_cuda("the box filter on the GPU");
}
bool box_filter_input_was_finite(sat::dtype, const void*, void*) { no_cuda("the box filter on the GPU"); }

// ---- gpu/numerics/sat.hpp -------------------------------------------------------------------------------------------------------

sat::array summed_area_table(const sat::array&, sat::dtype, table_schedule, table_report*, int) {
    no_cuda("a summed-area table on the GPU");
}
void summed_area_table_into(const sat::array&, sat::dtype, void*) { no_cuda("a summed-area table on the GPU"); }
void small_integer_table_into(const void*, sat::dtype, index_t, index_t, index_t, void*) {
    no_cuda("a summed-area table on the GPU");
}
sat::array integral_histogram(std::span<const std::uint16_t>, index_t, index_t, int, table_schedule, table_report*, int) {
    no_cuda("an integral histogram on the GPU");
}
void integral_histogram_into(std::span<const std::uint16_t>, index_t, index_t, int, std::uint32_t*) {
    no_cuda("an integral histogram on the GPU");
}
std::vector<std::uint64_t> summed_area_queries(const sat::array&, sat::dtype, std::span<const sat::rect>, table_report*) {
    no_cuda("rectangle queries on the GPU");
}
std::vector<std::uint32_t> integral_histogram_queries(std::span<const std::uint16_t>, index_t, index_t, int,
                                                      std::span<const sat::rect>, table_report*) {
    no_cuda("rectangle queries on the GPU");
}

// ---- gpu/numerics/sweep3d.hpp ---------------------------------------------------------------------------------------------------

template <class T>
std::vector<T> sweep3d_fmod(const sweep3d::fmod_params&, sweep_report*) {
    no_cuda("a 3-D sweep on the GPU");
}
template <class T>
void sweep3d_fmod_into(const sweep3d::fmod_params&, std::span<T>, sweep_report*) {
    no_cuda("a 3-D sweep on the GPU");
}
template <class T>
std::vector<T> sweep3d_dd(const sweep3d::dd_params&, sweep_report*) {
    no_cuda("a 3-D sweep on the GPU");
}
template std::vector<float> sweep3d_fmod<float>(const sweep3d::fmod_params&, sweep_report*);
template void sweep3d_fmod_into<float>(const sweep3d::fmod_params&, std::span<float>, sweep_report*);
template void sweep3d_fmod_into<double>(const sweep3d::fmod_params&, std::span<double>, sweep_report*);
template std::vector<double> sweep3d_fmod<double>(const sweep3d::fmod_params&, sweep_report*);
template std::vector<float> sweep3d_dd<float>(const sweep3d::dd_params&, sweep_report*);
template std::vector<double> sweep3d_dd<double>(const sweep3d::dd_params&, sweep_report*);

// ---- gpu/numerics/levels.hpp ----------------------------------------------------------------------------------------------------

const char* solve_schedule_name(solve_schedule s) {
    return s == solve_schedule::syncfree ? "syncfree" : s == solve_schedule::syncfree_by_level ? "syncfree_by_level" : "level_sync";
}
struct triangular_solver::state {};
triangular_solver::triangular_solver(const levels::csr_matrix&, levels::triangle, std::span<const double>) {
    no_cuda("a triangular solve on the GPU");
}
triangular_solver::~triangular_solver() = default;
std::vector<levels::level_t> triangular_solver::levels() const { no_cuda("a triangular solve on the GPU"); }
std::vector<std::int64_t> triangular_solver::widths() const { no_cuda("a triangular solve on the GPU"); }
float triangular_solver::analysis_ms() const { no_cuda("a triangular solve on the GPU"); }
const std::vector<double>& triangular_solver::first_solution() const { no_cuda("a triangular solve on the GPU"); }
std::vector<double> triangular_solver::solve(std::span<const double>, solve_schedule, float*) {
    no_cuda("a triangular solve on the GPU");
}
std::vector<levels::level_t> loop_levels(const levels::indirect_loop&, float*) { no_cuda("loop levels on the GPU"); }
std::vector<double> run_loop(const levels::indirect_loop&, const levels::body_spec&, std::span<const double>, loop_report*,
                             bool) {
    no_cuda("a loop on the GPU");
}

// ---- gpu/numerics/sor.hpp -------------------------------------------------------------------------------------------------------

sor::solution sor_solve(const sor::problem&, const sor::options&, sor_report*) { no_cuda("SOR on the GPU"); }
std::vector<double> sor_sweeps(const sor::problem&, sor::method, double, int, sor_report*, int) {
    no_cuda("SOR on the GPU");
}

}  // namespace swgpu::gpu
