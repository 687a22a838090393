// Sparse triangular solves by levels on the GPU against cuSPARSE's SpSV, same run, same matrix, device-resident
// data (uploads excluded on both sides), medians of `reps` runs (CUDA events).
//
//   bench_levels [--lap3d N | --lap2d N | --band N W D | --matrix A.mtx] [--upper] [--reps 7]
//
// --lap3d N (default 100): the IC(0) lower factor of the 3-D 7-point Laplacian on an N^3 grid, built here exactly as
// scripts/make_matrices.py lap3d builds it. Matrices of few rows per level, where level scheduling struggles, in the
// shapes of the SuiteSparse matrices that level-scheduling papers use:
//   --lap2d N      the IC(0) lower factor of the 2-D 5-point Laplacian on an N^2 grid (2N-1 levels of at most N rows:
//                  the shape of ecology2 and the other 2-D grid matrices, N = 1000: 10^6 rows, 1999 levels)
//   --band N W D   N rows, row i reading D distinct rows drawn at random (fixed seed) among the W before it (a banded
//                  lower triangle: thousands of levels of a few rows, the shape of circuit and banded factors)
// Rows printed:
//   analysis + solve   swgpu: the analysis (levels by the sync-free pass or by frontiers, as analyze() chooses; sort
//                      by level; widths), then the default level_p2p solve; also the analysis with the solve
//                      (what `swgpu levels` runs: levels and x in one sync-free pass + sort + widths, or the
//                      frontiers' analysis then level_p2p); cuSPARSE: cusparseSpSV_analysis + cusparseSpSV_solve
//   solve alone        swgpu syncfree, syncfree_by_level, level_sync, level_grid, level_p2p (1, 2 and 4 blocks of
//                      256 threads per SM; x reset included); cuSPARSE cusparseSpSV_solve after its analysis
// SWGPU_TUNE=levels.analysis=syncfree|frontiers forces the analysis.
// Every swgpu x is compared with the CPU solve (core/numerics/levels.hpp) bit for bit; cuSPARSE's by the largest relative
// difference. cuSPARSE is loaded at run time (libcusparse.so.12 from the toolkit; SWGPU_CUSPARSE names another file)
// and skipped when absent. The last lines start with "summary:".
#include <cusparse.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/numerics/levels.hpp"
#include "core/thread_pool.hpp"
#include "gpu/numerics/levels_kernels.cuh"
#include "io/arrays/matrix_market.hpp"

using namespace swgpu;
using namespace swgpu::gpu;
using namespace swgpu::gpu::levels_kernels;

namespace {

levels::csr_matrix lap3d_ic0(int n) {
    levels::csr_matrix m;
    const std::int64_t rows = static_cast<std::int64_t>(n) * n * n;
    m.rows = rows;
    m.row_ptr.push_back(0);
    std::vector<double> diag(static_cast<std::size_t>(rows));
    for (std::int64_t i = 0; i < rows; ++i) {
        const std::int64_t x = i % n, y = i / n % n, z = i / (static_cast<std::int64_t>(n) * n);
        double sq = 0;
        const auto add = [&](std::int64_t j) {
            const double v = -1.0 / diag[static_cast<std::size_t>(j)];
            m.col.push_back(static_cast<std::int32_t>(j));
            m.val.push_back(v);
            sq += v * v;
        };
        if (z > 0) add(i - static_cast<std::int64_t>(n) * n);
        if (y > 0) add(i - n);
        if (x > 0) add(i - 1);
        diag[static_cast<std::size_t>(i)] = std::sqrt(6.0 - sq);
        m.col.push_back(static_cast<std::int32_t>(i));
        m.val.push_back(diag[static_cast<std::size_t>(i)]);
        m.row_ptr.push_back(static_cast<std::int64_t>(m.col.size()));
    }
    return m;
}

levels::csr_matrix lap2d_ic0(int n) {
    levels::csr_matrix m;
    const std::int64_t rows = static_cast<std::int64_t>(n) * n;
    m.rows = rows;
    m.row_ptr.push_back(0);
    std::vector<double> diag(static_cast<std::size_t>(rows));
    for (std::int64_t i = 0; i < rows; ++i) {
        const std::int64_t x = i % n, y = i / n;
        double sq = 0;
        const auto add = [&](std::int64_t j) {
            const double v = -1.0 / diag[static_cast<std::size_t>(j)];
            m.col.push_back(static_cast<std::int32_t>(j));
            m.val.push_back(v);
            sq += v * v;
        };
        if (y > 0) add(i - n);
        if (x > 0) add(i - 1);
        diag[static_cast<std::size_t>(i)] = std::sqrt(4.0 - sq);
        m.col.push_back(static_cast<std::int32_t>(i));
        m.val.push_back(diag[static_cast<std::size_t>(i)]);
        m.row_ptr.push_back(static_cast<std::int64_t>(m.col.size()));
    }
    return m;
}

// Row i reads `deps` distinct rows among the `width` before it (a fixed 64-bit LCG picks them); off-diagonal values
// in (-0.5, 0.5) / deps and a diagonal of 1, so x stays of the size of b.
levels::csr_matrix banded(std::int64_t rows, int width, int deps) {
    levels::csr_matrix m;
    m.rows = rows;
    m.row_ptr.push_back(0);
    std::uint64_t state = 0x9e3779b97f4a7c15ull;
    const auto next = [&] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return state >> 33;
    };
    std::vector<std::int32_t> cols;
    for (std::int64_t i = 0; i < rows; ++i) {
        cols.clear();
        const std::int64_t avail = std::min<std::int64_t>(i, width);
        for (int d = 0; d < deps && d < avail; ++d) {
            for (;;) {
                const auto c = static_cast<std::int32_t>(i - 1 - static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(avail)));
                if (std::find(cols.begin(), cols.end(), c) == cols.end()) {
                    cols.push_back(c);
                    break;
                }
            }
        }
        std::sort(cols.begin(), cols.end());
        for (const auto c : cols) {
            m.col.push_back(c);
            m.val.push_back((static_cast<double>(next() % 1000) / 1000.0 - 0.5) / deps);
        }
        m.col.push_back(static_cast<std::int32_t>(i));
        m.val.push_back(1.0);
        m.row_ptr.push_back(static_cast<std::int64_t>(m.col.size()));
    }
    return m;
}

template <class F>
float median_ms(int reps, cudaStream_t s, F&& run) {
    cuda_event a, b;
    run();  // warm-up
    SWGPU_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<float> ms;
    for (int r = 0; r < reps; ++r) {
        a.record(s);
        run();
        b.record(s);
        b.synchronize();
        ms.push_back(b.since(a));
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

struct cusparse_api {
    decltype(&cusparseCreate) create = nullptr;
    decltype(&cusparseSetStream) set_stream = nullptr;
    decltype(&cusparseCreateCsr) create_csr = nullptr;
    decltype(&cusparseCreateDnVec) create_dnvec = nullptr;
    decltype(&cusparseSpMatSetAttribute) set_attribute = nullptr;
    decltype(&cusparseSpSV_createDescr) sv_create = nullptr;
    decltype(&cusparseSpSV_destroyDescr) sv_destroy = nullptr;
    decltype(&cusparseSpSV_bufferSize) sv_buffer = nullptr;
    decltype(&cusparseSpSV_analysis) sv_analysis = nullptr;
    decltype(&cusparseSpSV_solve) sv_solve = nullptr;
    std::string from;
    cusparse_api() {
        std::vector<std::string> names = {"libcusparse.so.12", "/usr/local/cuda/lib64/libcusparse.so.12",
                                          "/usr/local/cuda/lib64/libcusparse.so", "libcusparse.so"};
        if (const char* e = std::getenv("SWGPU_CUSPARSE")) names.insert(names.begin(), e);
        for (const auto& n : names)
            if (void* h = dlopen(n.c_str(), RTLD_NOW)) {
                const auto get = [&](auto& f, const char* sym) { f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(h, sym)); };
                get(create, "cusparseCreate");
                get(set_stream, "cusparseSetStream");
                get(create_csr, "cusparseCreateCsr");
                get(create_dnvec, "cusparseCreateDnVec");
                get(set_attribute, "cusparseSpMatSetAttribute");
                get(sv_create, "cusparseSpSV_createDescr");
                get(sv_destroy, "cusparseSpSV_destroyDescr");
                get(sv_buffer, "cusparseSpSV_bufferSize");
                get(sv_analysis, "cusparseSpSV_analysis");
                get(sv_solve, "cusparseSpSV_solve");
                from = n;
                if (create && sv_solve) return;
            }
    }
    bool ok() const { return create && create_csr && sv_analysis && sv_solve; }
};

#define CUSPARSE_OK(call)                                                                        \
    do {                                                                                         \
        const cusparseStatus_t st_ = (call);                                                     \
        if (st_ != CUSPARSE_STATUS_SUCCESS) {                                                    \
            std::fprintf(stderr, "cuSPARSE error %d in %s\n", static_cast<int>(st_), #call);   \
            std::exit(1);                                                                        \
        }                                                                                        \
    } while (0)

}  // namespace

int main(int argc, char** argv) {
    int lap = 100, lap2 = 0, reps = 7, band_w = 0, band_d = 0;
    std::int64_t band_n = 0;
    std::string matrix;
    bool upper = false;
    for (int k = 1; k < argc; ++k) {
        const std::string a = argv[k];
        if (a == "--lap3d" && k + 1 < argc) lap = std::atoi(argv[++k]);
        else if (a == "--lap2d" && k + 1 < argc) lap2 = std::atoi(argv[++k]);
        else if (a == "--band" && k + 3 < argc) {
            band_n = std::atoll(argv[++k]);
            band_w = std::atoi(argv[++k]);
            band_d = std::atoi(argv[++k]);
        } else if (a == "--matrix" && k + 1 < argc) matrix = argv[++k];
        else if (a == "--reps" && k + 1 < argc) reps = std::max(1, std::atoi(argv[++k]));
        else if (a == "--upper") upper = true;
        else {
            std::fprintf(stderr, "usage: bench_levels [--lap3d N | --lap2d N | --band N W D | --matrix A.mtx] [--upper] [--reps 7]\n");
            return 2;
        }
    }
    const levels::triangle part = upper ? levels::triangle::upper : levels::triangle::lower;
    try {
        if (matrix.empty() && upper) {
            std::fprintf(stderr, "--upper needs --matrix\n");
            return 2;
        }
        levels::csr_matrix t = !matrix.empty() ? io::read_matrix_market_triangle(matrix, part)
                               : lap2 > 0      ? lap2d_ic0(lap2)
                               : band_n > 0    ? banded(band_n, band_w, band_d)
                                               : lap3d_ic0(lap);
        const std::string label = !matrix.empty() ? matrix
                                  : lap2 > 0      ? "lap2d " + std::to_string(lap2) + "^2 IC(0)"
                                  : band_n > 0    ? "band " + std::to_string(band_n) + " rows, " + std::to_string(band_d) +
                                                     " of " + std::to_string(band_w) + " before"
                                                  : "lap3d " + std::to_string(lap) + "^3 IC(0)";
        const auto n = static_cast<std::size_t>(t.rows);
        std::vector<double> b(n);
        for (std::size_t i = 0; i < n; ++i) b[i] = std::sin(static_cast<double>(i) * 0.37) + 1.5;

        // The CPU reference.
        thread_pool pool;
        const auto cpu_levels = levels::triangular_levels(t, part);
        const levels::level_sets sets = levels::group_by_level(cpu_levels);
        std::vector<double> ref(n);
        levels::triangular_solve(t, part, sets, b, ref, pool);

        cudaDeviceProp prop{};
        SWGPU_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        std::printf("# bench_levels: %s, %zu rows, %lld nonzeros, %d levels, %s, %d reps\n", label.c_str(), n,
                    static_cast<long long>(t.nonzeros()), sets.count(), prop.name, reps);

        cuda_stream stream;
        const cudaStream_t s = stream.get();
        device_triangular d(t, part, s);
        d.b.upload(b, s);
        const auto check = [&](const char* what) {
            const auto x = d.x.download(n, s);
            const bool same = std::memcmp(x.data(), ref.data(), n * sizeof(double)) == 0;
            if (!same) std::printf("MISMATCH: %s differs from the CPU solve\n", what);
            return same;
        };
        bool all_same = true;

        const float t_analysis = median_ms(reps, s, [&] { d.analyze(s); });
        {
            const auto lv = d.level.download(n, s);
            if (lv != cpu_levels) {
                std::printf("MISMATCH: GPU levels differ from the CPU levels\n");
                all_same = false;
            }
        }
        (void)d.level_offsets(s);
        const float t_an_solve = median_ms(reps, s, [&] {
            d.analyze(s);
            d.solve_by_levels_p2p(s);
        });
        all_same &= check("analysis + level_p2p");
        const float t_fused = median_ms(reps, s, [&] { d.analyze(s, true); });
        all_same &= check("analysis with the solve");
        const float t_sf = median_ms(reps, s, [&] { d.pass<false, true>(false, s); });
        all_same &= check("syncfree");
        const float t_sfl = median_ms(reps, s, [&] { d.pass<false, true>(true, s); });
        all_same &= check("syncfree_by_level");
        (void)d.level_offsets(s);
        const float t_ls = median_ms(reps, s, [&] { d.solve_by_levels(s); });
        all_same &= check("level_sync");
        const float t_lg = median_ms(reps, s, [&] { d.solve_by_levels_grid(s); });
        all_same &= check("level_grid");
        float t_p2p[3];
        const int p2p_per_sm[3] = {1, 2, 4};
        for (int q = 0; q < 3; ++q) {
            t_p2p[q] = median_ms(reps, s, [&] { d.solve_by_levels_p2p(s, p2p_per_sm[q]); });
            all_same &= check("level_p2p");
        }
        // level_p2p variants: blocks per SM, threads per block, a warp's sleep after a round without progress
        struct variant {
            int per_sm, threads;
            unsigned sleep_ns;
        };
        const variant variants[] = {{1, 128, 0},   {1, 256, 100}, {1, 256, 250}, {1, 256, 500},
                                    {1, 128, 250}, {2, 256, 250}, {2, 256, 500}, {4, 256, 500}};
        std::vector<float> t_var;
        for (const variant& v : variants) {
            t_var.push_back(median_ms(reps, s, [&] { d.solve_by_levels_p2p(s, v.per_sm, v.threads, v.sleep_ns); }));
            all_same &= check("level_p2p variant");
        }
        const float t_p2p_default = median_ms(reps, s, [&] { d.solve_by_levels_p2p(s); });
        all_same &= check("level_p2p");

        std::printf("%-44s %10s\n", "swgpu", "ms");
        std::printf("%-44s %10.3f\n", "analysis (levels + sort + widths)", t_analysis);
        std::printf("%-44s %10.3f\n", "analysis + solve (level_p2p)", t_an_solve);
        std::printf("%-44s %10.3f\n", "analysis with the solve (fused)", t_fused);
        std::printf("%-44s %10.3f\n", "solve alone: syncfree", t_sf);
        std::printf("%-44s %10.3f\n", "solve alone: syncfree_by_level", t_sfl);
        std::printf("%-44s %10.3f\n", "solve alone: level_sync", t_ls);
        std::printf("%-44s %10.3f\n", "solve alone: level_grid", t_lg);
        for (int q = 0; q < 3; ++q)
            std::printf("solve alone: level_p2p, %d block(s) per SM %15.3f\n", p2p_per_sm[q], t_p2p[q]);
        std::printf("%-44s %10.3f\n", "solve alone: level_p2p (default)", t_p2p_default);
        for (std::size_t q = 0; q < t_var.size(); ++q)
            std::printf("solve alone: level_p2p, %d x %d threads per SM, sleep %u ns %8.3f\n", variants[q].per_sm,
                        variants[q].threads, variants[q].sleep_ns, t_var[q]);
        std::printf("x == CPU solve bit for bit: %s\n", all_same ? "yes" : "NO");

        cusparse_api api;
        float c_an_solve = -1, c_solve = -1;
        double worst = 0;
        if (!api.ok()) {
            std::printf("cuSPARSE: not found (set SWGPU_CUSPARSE to libcusparse.so); skipped\n");
        } else {
            cusparseHandle_t h;
            CUSPARSE_OK(api.create(&h));
            CUSPARSE_OK(api.set_stream(h, s));
            std::vector<std::int32_t> rp32(t.row_ptr.begin(), t.row_ptr.end());
            device_buffer<std::int32_t> drp;
            drp.upload(rp32, s);
            device_buffer<double> cx(n);
            cusparseSpMatDescr_t A;
            CUSPARSE_OK(api.create_csr(&A, t.rows, t.rows, t.nonzeros(), drp.data(), d.col.data(), d.val.data(),
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
            cusparseFillMode_t fill = upper ? CUSPARSE_FILL_MODE_UPPER : CUSPARSE_FILL_MODE_LOWER;
            cusparseDiagType_t diag = CUSPARSE_DIAG_TYPE_NON_UNIT;
            CUSPARSE_OK(api.set_attribute(A, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill));
            CUSPARSE_OK(api.set_attribute(A, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof diag));
            cusparseDnVecDescr_t vb, vx;
            CUSPARSE_OK(api.create_dnvec(&vb, t.rows, d.b.data(), CUDA_R_64F));
            CUSPARSE_OK(api.create_dnvec(&vx, t.rows, cx.data(), CUDA_R_64F));
            const double alpha = 1.0;
            cusparseSpSVDescr_t sv;
            CUSPARSE_OK(api.sv_create(&sv));
            std::size_t bytes = 0;
            CUSPARSE_OK(api.sv_buffer(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, vb, vx, CUDA_R_64F,
                                      CUSPARSE_SPSV_ALG_DEFAULT, sv, &bytes));
            device_buffer<unsigned char> buf(std::max<std::size_t>(bytes, 1));
            CUSPARSE_OK(api.sv_destroy(sv));
            std::vector<cusparseSpSVDescr_t> made;
            c_an_solve = median_ms(reps, s, [&] {
                cusparseSpSVDescr_t fresh;
                CUSPARSE_OK(api.sv_create(&fresh));
                made.push_back(fresh);
                CUSPARSE_OK(api.sv_analysis(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, vb, vx, CUDA_R_64F,
                                            CUSPARSE_SPSV_ALG_DEFAULT, fresh, buf.data()));
                CUSPARSE_OK(api.sv_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, vb, vx, CUDA_R_64F,
                                         CUSPARSE_SPSV_ALG_DEFAULT, fresh));
            });
            const cusparseSpSVDescr_t last = made.back();
            c_solve = median_ms(reps, s, [&] {
                CUSPARSE_OK(api.sv_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, vb, vx, CUDA_R_64F,
                                         CUSPARSE_SPSV_ALG_DEFAULT, last));
            });
            const auto x = cx.download(n, s);
            for (std::size_t i = 0; i < n; ++i)
                worst = std::max(worst, std::fabs(x[i] - ref[i]) / std::max(1e-300, std::fabs(ref[i])));
            for (auto m : made) (void)api.sv_destroy(m);
            std::printf("%-44s %10.3f\n", "cuSPARSE SpSV analysis + solve", c_an_solve);
            std::printf("%-44s %10.3f\n", "cuSPARSE SpSV solve alone", c_solve);
            std::printf("cuSPARSE (%s): largest relative difference from the CPU solve %.3g\n", api.from.c_str(), worst);
        }
        const float best_total = std::min(t_an_solve, t_fused);
        float best_solve = std::min({t_sf, t_sfl, t_ls, t_lg, t_p2p[0], t_p2p[1], t_p2p[2], t_p2p_default});
        for (const float v : t_var) best_solve = std::min(best_solve, v);
        std::printf("summary: %s: %zu rows, %d levels: swgpu analysis+solve %.3f ms (fused %.3f), solve %.3f ms "
                    "(syncfree %.3f, by_level %.3f, level_sync %.3f, level_grid %.3f, level_p2p %.3f / %.3f / %.3f, "
                    "default %.3f)",
                    label.c_str(), n, sets.count(), t_an_solve, t_fused, best_solve, t_sf, t_sfl, t_ls, t_lg, t_p2p[0],
                    t_p2p[1], t_p2p[2], t_p2p_default);
        if (c_an_solve >= 0)
            std::printf("; cuSPARSE analysis+solve %.3f ms, solve %.3f ms; ratio analysis+solve %.2fx, solve %.2fx "
                        "(default level_p2p %.2fx)",
                        c_an_solve, c_solve, c_an_solve / best_total, c_solve / best_solve, c_solve / t_p2p_default);
        std::printf("\n");
        return all_same ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_levels: %s\n", e.what());
        return 1;
    }
}
