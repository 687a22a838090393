#!/usr/bin/env bash
# sanitize_cpu.sh [BUILD_DIR]: the host test suite (swgpu_tests) built without CUDA under AddressSanitizer and
# UndefinedBehaviorSanitizer (-O1, every finding fatal), then run. BUILD_DIR defaults to build-sanitize. Run after
# scripts/setup.sh (which installs the compiler and libraries); CI runs it after the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-sanitize}
mkdir -p "$dir"
cmake -S . -B "$dir" -DSWGPU_CUDA=OFF -DSWGPU_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined" \
  > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" --target swgpu_tests -j"$(nproc 2>/dev/null || echo 2)"
UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 "$dir/tests/swgpu_tests"
