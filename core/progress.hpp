// A one-line progress display on stderr for long runs (docs/conventions.md: only when stderr is a terminal, erased
// when done), and the bar it shows.
#pragma once

#include <cstddef>
#include <string>

namespace swgpu {

class progress_line {
public:
    explicit progress_line(bool enabled);
    ~progress_line() { clear(); }
    progress_line(const progress_line&) = delete;
    progress_line& operator=(const progress_line&) = delete;
    void show(const std::string& text);
    void clear();

private:
    bool enabled_;
    std::size_t width_ = 0;
};

// "[#########...........]  45 %, about 12 s left": a bar of 20, the percentage, and the time left at the rate so far.
std::string progress_bar(double fraction, double elapsed_s);

}  // namespace swgpu
