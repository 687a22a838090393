// The matrices shipped in data/matrices, compiled into the program by the build (see core/CMakeLists.txt), so that a
// relocated binary needs no data directory.
#pragma once

#include <span>

namespace swgpu {

struct builtin_matrix_text {
    const char* name;
    const char* text;
};

std::span<const builtin_matrix_text> builtin_matrix_texts();

}  // namespace swgpu
