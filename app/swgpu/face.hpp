// What the library face's calls share (internal to app/swgpu/*.cpp, not installed): the choice of device for a call
// (backend::gpu without a usable GPU is an error; automatic takes the GPU where there is one), a caller's
// std::stop_token turned into the library's stop request (core/cancel.hpp), and errors whose messages name the calls'
// settings where core and io name the command line's options.
#pragma once

#include <atomic>
#include <optional>
#include <stop_token>
#include <string>

#include "app/swgpu/common.hpp"
#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "gpu/gpu.hpp"

namespace swgpu::detail {

inline bool wants_gpu(backend where) {
    if (where == backend::gpu && !gpu::available())
        throw runtime_failure("backend::gpu: no usable GPU (" + gpu::build_info() + ")");
    return where == backend::gpu || (where == backend::automatic && gpu::available());
}

// While it lives, a request on `stop` stops the library's running calls (as stop_calls does); one made before the
// call throws at once.
class stop_scope {
public:
    explicit stop_scope(std::stop_token stop) {
        if (stop.stop_requested()) throw error(exit_code::interrupted, "interrupted");
        if (stop.stop_possible()) callback_.emplace(stop, request{this});
    }
    ~stop_scope() {
        callback_.reset();  // waits for a callback running on another thread
        if (requested_.load()) withdraw_cancel();
    }
    stop_scope(const stop_scope&) = delete;
    stop_scope& operator=(const stop_scope&) = delete;

private:
    struct request {
        stop_scope* scope;
        void operator()() const {
            request_cancel();
            scope->requested_.store(true);
        }
    };
    std::atomic<bool> requested_{false};
    std::optional<std::stop_callback<request>> callback_;
};

// The command line's option names in a message (core's and io's checks are worded for it) as the calls' settings:
// "--max-hsps" as "max_hsps", "-k/--max-target-seqs" as "max_target_seqs", "--seqtype" as "type".
inline std::string setting_names(std::string text) {
    static const std::pair<const char*, const char*> renamed[] = {
        {"-k/--max-target-seqs", "max_target_seqs"}, {"-e/--evalue", "evalue"}, {"--seqtype", "type"},
        {"--gpu-mem", "gpu_memory"}, {"--backend", "where"}, {"--no-evalue", "evalues off"}};
    for (const auto& [from, to] : renamed)
        for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at))
            text.replace(at, std::string(from).size(), to);
    return options_as_names(text);  // the others: "--gap-open" as "gap_open" (core/text.hpp)
}

// `call()`, its errors worded with the settings' names (setting_names).
template <class Call>
decltype(auto) as_library_call(Call&& call) {
    try {
        return call();
    } catch (const error& e) {
        throw error(e.code(), setting_names(e.what()));
    }
}

}  // namespace swgpu::detail
