#!/usr/bin/env bash
# sanitize_threads.sh [BUILD_DIR] [TAGS]: the host tests of the threaded code built without CUDA under ThreadSanitizer
# (-O1, every report fatal) and run: the search pipeline (reader, score passes and finishing on their threads), the
# CPU search across threads, long pairs (tiles in waves, batches of pairs on pools of their own), the library's
# resident database searched from several threads, the thread pool's users in the numerical subcommands (box filter,
# SOR strips in a pipeline, sweep3d waves, levels). BUILD_DIR defaults to build-tsan; TAGS to the Catch tags below.
# Run after scripts/setup.sh; takes about 20 minutes on 2 cores (build included).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-tsan}
tags=${2:-"[finish],[search],[spread],[long],[library],[windows],[sor],[sweep3d],[levels],[sat],[output]"}
mkdir -p "$dir"
cmake -S . -B "$dir" -DSWGPU_CUDA=OFF -DSWGPU_BENCHMARKS=OFF -DSWGPU_PYTHON=OFF -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=thread" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" \
  > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" --target swgpu swgpu_tests -j"$(nproc 2>/dev/null || echo 2)"
# The CLI tests start the instrumented program too; its reports go to stderr and fail them.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  "$dir/tests/swgpu_tests" "$tags"
