#!/usr/bin/env bash
# sanitize.sh [GPU_TEST_BINARY]: compute-sanitizer memcheck and racecheck over a small configuration of the GPU engine
# (every schedule, row barrier, tiled tuning entry and scan entry, on problems that still cross tile boundaries: the
# GPU test named "sanitize"). Exit 0 when both tools report no error, 77 when there is no GPU or no compute-sanitizer.
set -uo pipefail
bin=${1:-build/tests/gpu/swgpu_gpu_tests}
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [ -z "$sanitizer" ]; then echo "sanitize: compute-sanitizer not found: skipped"; exit 77; fi
# A name no test has: the binary checks the device and its inputs, runs nothing and says so (exit 2), or exits 77
# without a device.
probe=$("$bin" "no test has this name" 2>&1)
case $? in
  77) echo "sanitize: no CUDA device: skipped"; exit 77 ;;
  2) if [[ $probe != *"no test name contains"* ]]; then echo "sanitize: $bin cannot run: $probe"; exit 1; fi ;;
  *) echo "sanitize: $bin cannot run: $probe"; exit 1 ;;
esac
status=0
for tool in memcheck racecheck; do
  echo "== compute-sanitizer --tool $tool"
  "$sanitizer" --tool "$tool" --error-exitcode 99 "$bin" sanitize
  rc=$?
  echo "== $tool: exit code $rc"
  [ $rc -eq 0 ] || status=1
done
exit $status
