// The index arrays of `swgpu levels`' generic loops (--writes W.npy, --reads R.npy), as arrays already read
// (io/arrays/npy.hpp), into a levels::indirect_loop (core/numerics/levels.hpp).
//
// W: integers, (n,) (or (1, n), (n, 1)); R: integers, (n,) or (n, k). Unsigned values above 2^63 - 1 become -1 (out
// of range). Refused, as input_error naming the file: floating or three-dimensional index arrays, W that is not a
// vector, R whose rows are not W's iterations; then (check_loop) indices outside the array, more than 2^31 - 1
// iterations or locations. The array's size is --array's, else --locations, else 1 + the largest index; an array that
// would not fit the memory available is refused (out_of_memory) before it is allocated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/numerics/levels.hpp"
#include "core/numerics/sat.hpp"

namespace swgpu::io {

// An integer array's values as int64; rows and cols as read (a 1-D (n,) array reads as (1, n)).
std::vector<std::int64_t> index_values(const sat::array& a, const std::string& name, std::int64_t& rows, std::int64_t& cols);

// W into loop.writes.
void set_loop_writes(levels::indirect_loop& loop, const sat::array& w, const std::string& name);
// R into loop.reads and loop.reads_per_iteration (after set_loop_writes).
void set_loop_reads(levels::indirect_loop& loop, const sat::array& r, const std::string& name);
// loop.locations: `array_size` when the loop's array was given (>= 0), else `locations` when positive, else 1 + the
// largest index, checked against the memory available (the array and the inspector's state: 16 bytes a location);
// then levels::check_loop, naming `where`.
void set_loop_locations(levels::indirect_loop& loop, std::int64_t array_size, long long locations, const std::string& where);

}  // namespace swgpu::io
