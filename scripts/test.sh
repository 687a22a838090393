#!/usr/bin/env bash
# test.sh: set-up and build of everything (scripts/setup.sh all), then run the whole test suite through CTest. The
# GPU test executable reports "skipped" where there is no CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh all
cd build
ctest --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" --timeout 1200
