// What a run will hold at its peak, estimated by the code that knows what it allocates before it allocates, with the
// words a refusal says: io::check_memory (io/memory.hpp) refuses it with exit code 4 when it exceeds the memory
// available (docs/conventions.md, "Memory"): "WHAT (NEED); LIMIT'S SOURCE: ADVICE".
#pragma once

#include <string>

namespace swgpu {

struct memory_need {
    double bytes = 0;
    std::string what;    // "--n 1200 is a 1200 x 1200 x 1200 grid of float64"
    std::string advice;  // "use a smaller --n or --precision single"
};

}  // namespace swgpu
