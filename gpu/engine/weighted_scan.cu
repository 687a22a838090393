// The weighted scan and the map scan on host vectors (gpu/engine/engine.hpp), for the operator pairs listed at the end.
#include <string>

#include "core/error.hpp"
#include "gpu/engine/engine.hpp"
#include "gpu/engine/scan_instances.hpp"
#include "gpu/engine/weighted_scan.cuh"

namespace swgpu::gpu {

int scan_tuning_entries() { return static_cast<int>(scan_configs.size()); }
int default_scan_tuning_entry() {
    static_assert(scan_default_entries.back().entry == saturating_scan_default_entries.back().entry);
    return scan_default_entries.back().entry;
}

namespace {

template <class Alg>
int resolve_scan_entry(const Alg& alg, int entry, std::size_t n) {
    if (entry < 0) return default_scan_entry_for(alg, static_cast<std::int64_t>(n));
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
    const int e = resolve_scan_entry(alg, entry, b.size());
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

SWGPU_FOR_EACH_SCAN_PAIR(SWGPU_SCAN_INSTANCE)

}  // namespace swgpu::gpu
