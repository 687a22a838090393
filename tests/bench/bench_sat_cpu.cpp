// Summed-area tables on the CPU: swgpu's threaded table against OpenCV's cv::integral on the same cores (when this
// program was built with OpenCV: Debian libopencv-core-dev and libopencv-imgproc-dev), and swgpu's box filter checked
// against cv::boxFilter with its defaults. Medians of `reps` runs.
//
//   bench_sat_cpu [--size 16384] [--threads 0] [--reps 5]
//
// cv::integral writes an (H+1) x (W+1) table (a zero first row and column) with depth CV_64F or CV_32S/CV_32F; there
// is no 64-bit integer depth, so the exact uint64 table is compared with its CV_64F one (exact below 2^53).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/numerics/sat.hpp"
#include "core/thread_pool.hpp"

#ifdef SWGPU_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

using namespace swgpu;

namespace {

template <class F>
double median_ms(int reps, F&& f) {
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    index_t n = 16384;
    unsigned threads = 0;
    int reps = 5;
    for (int k = 1; k < argc; ++k) {
        const std::string a = argv[k];
        if (a == "--size" && k + 1 < argc) n = std::atoll(argv[++k]);
        else if (a == "--threads" && k + 1 < argc) threads = static_cast<unsigned>(std::atoi(argv[++k]));
        else if (a == "--reps" && k + 1 < argc) reps = std::atoi(argv[++k]);
        else {
            std::fprintf(stderr, "usage: bench_sat_cpu [--size N] [--threads T] [--reps R]\n");
            return 2;
        }
    }
    thread_pool pool(threads);
    sat::array img(sat::dtype::u8, n, n, 1);
    std::mt19937_64 rng(1);
    for (std::size_t k = 0; k < img.elements(); ++k) img.data<std::uint8_t>()[k] = static_cast<std::uint8_t>(rng());
    std::printf("# bench_sat_cpu: %lld x %lld uint8, %u threads\n", static_cast<long long>(n), static_cast<long long>(n), pool.size());
    // Each call allocates its table (as `swgpu sat` does), so the times include the first touch of the output's pages
    // and the release of the table of the call before; OpenCV is timed both ways (reusing its output, and fresh).
    sat::array table;
    const double ours = median_ms(reps, [&] { table = sat::summed_area_table(img, sat::dtype::u64, pool); });
    const double gb = static_cast<double>(img.elements()) * 9 / 1e9;
    std::printf("swgpu summed_area_table u8->u64: %.1f ms (%.1f GB/s in+out)\n", ours, gb / (ours / 1e3));
    sat::array reused;
    const double ours_reused = median_ms(reps, [&] { sat::summed_area_table_into(img, sat::dtype::u64, reused, pool); });
    std::printf("swgpu summed_area_table_into u8->u64, reusing its output: %.1f ms (%.1f GB/s in+out)\n", ours_reused,
                gb / (ours_reused / 1e3));
    // Float tables (summed in one order whatever the thread count: rows first, then down the columns), reusing the
    // output: float32 -> float64 and float64 -> float64.
    sat::array f32img(sat::dtype::f32, n, n, 1), f64img(sat::dtype::f64, n, n, 1);
    for (std::size_t k = 0; k < img.elements(); ++k) {
        f32img.data<float>()[k] = static_cast<float>(img.data<std::uint8_t>()[k]) * 0.37f;
        f64img.data<double>()[k] = static_cast<double>(img.data<std::uint8_t>()[k]) * 0.37;
    }
    sat::array ftable;
    const double f32ms = median_ms(reps, [&] { sat::summed_area_table_into(f32img, sat::dtype::f64, ftable, pool); });
    const double f64ms = median_ms(reps, [&] { sat::summed_area_table_into(f64img, sat::dtype::f64, ftable, pool); });
    std::printf("swgpu summed_area_table_into f32->f64: %.1f ms, f64->f64: %.1f ms (reusing the output)\n", f32ms, f64ms);
#ifdef SWGPU_HAVE_OPENCV
    cv::setNumThreads(static_cast<int>(pool.size()));
    const cv::Mat src(static_cast<int>(n), static_cast<int>(n), CV_8UC1, img.raw());
    cv::Mat sum;
    const double cv64 = median_ms(reps, [&] { cv::integral(src, sum, CV_64F); });
    std::size_t bad = 0;
    for (index_t i = 0; i < n; i += 7)
        for (index_t j = 0; j < n; j += 5)
            if (static_cast<double>(table.data<std::uint64_t>()[i * n + j]) != sum.at<double>(static_cast<int>(i + 1), static_cast<int>(j + 1))) ++bad;
    std::printf("OpenCV cv::integral u8->f64: %.1f ms (%zu sampled cells differ from swgpu)\n", cv64, bad);
    cv::Mat fresh;
    const double cv64_fresh = median_ms(reps, [&] {
        cv::Mat s;
        cv::integral(src, s, CV_64F);
        fresh = s;  // released at the next call, as swgpu's table is
    });
    std::printf("OpenCV cv::integral u8->f64, a fresh output each call: %.1f ms\n", cv64_fresh);
    cv::Mat sum32;
    const double cv32 = median_ms(reps, [&] { cv::integral(src, sum32, CV_32S); });
    std::printf("OpenCV cv::integral u8->s32 (overflows past 2^31): %.1f ms\n", cv32);
    // Box filter: swgpu vs cv::boxFilter, BORDER_DEFAULT, on a smaller colour image.
    sat::array colour(sat::dtype::u8, 1000, 1500, 3);
    for (std::size_t k = 0; k < colour.elements(); ++k) colour.data<std::uint8_t>()[k] = static_cast<std::uint8_t>(rng());
    const cv::Mat csrc(1000, 1500, CV_8UC3, colour.raw());
    std::size_t box_bad = 0;
    for (const int R : {1, 3, 10, 600}) {
        cv::Mat dst;
        cv::boxFilter(csrc, dst, -1, cv::Size(2 * R + 1, 2 * R + 1));
        const auto ours_box = sat::box_filter(colour, R, pool);
        for (std::size_t k = 0; k < colour.elements(); ++k) box_bad += ours_box.data<std::uint8_t>()[k] != dst.data[k];
    }
    std::printf("summary: CPU SAT %lld^2 u8->u64: fresh output %.1f ms against OpenCV's %.1f ms (%.2fx), reused output "
                "%.1f ms against OpenCV's %.1f ms (%.2fx); box filter vs cv::boxFilter: %zu differing samples\n",
                static_cast<long long>(n), ours, cv64_fresh, cv64_fresh / ours, ours_reused, cv64, cv64 / ours_reused,
                box_bad);
#else
    std::printf("summary: CPU SAT %lld^2 u8->u64 %.1f ms (built without OpenCV: no comparison)\n", static_cast<long long>(n), ours);
#endif
    return 0;
}
