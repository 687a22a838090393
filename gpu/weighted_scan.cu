// The weighted scan and the map scan on host vectors (gpu/engine.hpp), for the operator pairs listed at the end.
#include <string>

#include "core/error.hpp"
#include "gpu/engine.hpp"
#include "gpu/weighted_scan.cuh"

namespace swgpu::gpu {

int scan_tuning_entries() { return static_cast<int>(scan_configs.size()); }
int default_scan_tuning_entry() { return default_scan_entry; }

namespace {

int resolve_scan_entry(int entry, std::size_t n) {
    if (entry < 0) return default_scan_entry_for(static_cast<std::int64_t>(n));
    if (entry >= scan_tuning_entries())
        throw usage_error("scan tuning entry " + std::to_string(entry) + " does not exist (there are " +
                          std::to_string(scan_tuning_entries()) + ")");
    return entry;
}

template <class Alg>
std::vector<typename Alg::value> scan_on_device(const Alg& alg, std::span<const typename Alg::value> a,
                                                std::span<const typename Alg::value> b, typename Alg::value x0,
                                                scan_kind kind, int entry) {
    using value = typename Alg::value;
    const int e = resolve_scan_entry(entry, b.size());
    if (b.empty()) return {};
    cuda_stream stream;
    device_buffer<value> da, db, dout(b.size());
    if (Alg::is_map) da.upload(a.data(), a.size(), stream.get());
    db.upload(b.data(), b.size(), stream.get());
    lookback_workspace<typename Alg::elem> ws;
    scan_arguments<Alg> args{};
    args.a = Alg::is_map ? da.data() : nullptr;
    args.b = db.data();
    args.out = dout.data();
    args.n = static_cast<std::int64_t>(b.size());
    args.x0 = x0;
    args.inclusive = kind == scan_kind::inclusive;
    args.alg = alg;
    launch_weighted_scan(e, args, ws, stream.get());
    return dout.download(b.size(), stream.get());
}

}  // namespace

template <theorem1_pair Op>
std::vector<typename Op::value> weighted_scan(std::span<const typename Op::value> b, typename Op::value w,
                                              typename Op::value x0, scan_kind kind, int tuning_entry) {
    return scan_on_device(weighted_algebra<Op>{w}, {}, b, x0, kind, tuning_entry);
}

template <theorem1_pair Op>
std::vector<typename Op::value> map_scan(std::span<const typename Op::value> a, std::span<const typename Op::value> b,
                                         typename Op::value x0, scan_kind kind, int tuning_entry) {
    if (a.size() != b.size())
        throw usage_error("map_scan: " + std::to_string(a.size()) + " weights for " + std::to_string(b.size()) +
                          " values; give one weight per value");
    return scan_on_device(map_algebra<Op>{}, a, b, x0, kind, tuning_entry);
}

#define SWGPU_SCAN_INSTANCE(OP)                                                                                     \
    template std::vector<OP::value> weighted_scan<OP>(std::span<const OP::value>, OP::value, OP::value, scan_kind, \
                                                      int);                                                        \
    template std::vector<OP::value> map_scan<OP>(std::span<const OP::value>, std::span<const OP::value>, OP::value, \
                                                 scan_kind, int);

using scan_max_plus_i32 = max_plus<std::int32_t>;
using scan_max_plus_f32 = max_plus<float>;
using scan_plus_times_f32 = plus_times<float>;
using scan_plus_times_f64 = plus_times<double>;
using scan_plus_times_u32 = plus_times<std::uint32_t>;
using scan_plus_plus_i32 = plus_plus<std::int32_t>;
using scan_plus_plus_f32 = plus_plus<float>;
SWGPU_SCAN_INSTANCE(scan_max_plus_i32)
SWGPU_SCAN_INSTANCE(scan_max_plus_f32)
SWGPU_SCAN_INSTANCE(scan_plus_times_f32)
SWGPU_SCAN_INSTANCE(scan_plus_times_f64)
SWGPU_SCAN_INSTANCE(scan_plus_times_u32)
SWGPU_SCAN_INSTANCE(scan_plus_plus_i32)
SWGPU_SCAN_INSTANCE(scan_plus_plus_f32)

}  // namespace swgpu::gpu
