#include "core/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>

namespace swgpu {

progress_line::progress_line(bool enabled) : enabled_(enabled && ::isatty(STDERR_FILENO) == 1) {}

void progress_line::show(const std::string& text) {
    if (!enabled_) return;
    std::cerr << '\r' << text << std::string(width_ > text.size() ? width_ - text.size() : 0, ' ') << std::flush;
    width_ = text.size();
}

void progress_line::clear() {
    if (!enabled_ || width_ == 0) return;
    std::cerr << '\r' << std::string(width_, ' ') << '\r' << std::flush;
    width_ = 0;
}

std::string progress_bar(double fraction, double elapsed_s) {
    fraction = std::clamp(fraction, 0.0, 1.0);
    const int filled = static_cast<int>(fraction * 20 + 0.5);
    std::string s = "[" + std::string(filled, '#') + std::string(20 - filled, '.') + "] ";
    s += std::to_string(static_cast<int>(fraction * 100)) + " %";
    if (fraction > 0.02 && fraction < 1)
        s += ", about " + std::to_string(static_cast<long long>(elapsed_s * (1 - fraction) / fraction + 0.5)) + " s left";
    return s;
}

}  // namespace swgpu
