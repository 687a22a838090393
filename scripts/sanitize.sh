#!/usr/bin/env bash
# sanitize.sh [GPU_TEST_BINARY [FILTER [TOOL...]]]: compute-sanitizer over the GPU tests whose names contain one of
# FILTER's '|'-separated parts, under each TOOL (default: memcheck racecheck synccheck initcheck). The default FILTER
# takes the tests named "sanitize" (small configurations of every engine schedule, row barrier, tiled tuning entry and
# scan entry, of the GPU aligner, the search and the long-pair rectangles, on problems that still cross tile
# boundaries) and the short tests of the numerical subcommands' own kernels (tables and histograms on every schedule,
# rectangle queries, the box filter, SOR anti-diagonally and red-black (its column strips and compensation method have
# their own "sanitize" test), sweep3d tiles and hyperplanes, the levels inspector and level_p2p). swgpu processes the
# tests start are checked too. racecheck skips level_p2p in the default set: its kernel has no shared memory
# (racecheck's only subject) and its one launch needs every thread of the grid running at once; under racecheck it
# does not advance and stops at its 20-s deadline.
# Exit 0 when every tool reports no error, 77 when there is no GPU or no compute-sanitizer.
set -uo pipefail
bin=${1:-build/tests/gpu/swgpu_gpu_tests}
default_filter="sanitize|[sat] integral histograms|rectangle queries on the device|every dtype equals|GPU sweeps anti-diagonal"
default_filter+="|one-pass red-black|sweep3d dd|sweep3d fmod|GPU inspector|level_p2p"
filter=${2:-$default_filter}
race_filter=${2:-${default_filter%|level_p2p}}
shift $(( $# < 2 ? $# : 2 ))
tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(memcheck racecheck synccheck initcheck)
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
for tool in "${tools[@]}"; do
  echo "== compute-sanitizer --tool $tool"
  start=$SECONDS
  if [ "$tool" = racecheck ]; then tool_filter=$race_filter; else tool_filter=$filter; fi
  "$sanitizer" --tool "$tool" --target-processes all --error-exitcode 99 "$bin" "$tool_filter"
  rc=$?
  echo "== $tool: exit code $rc, $((SECONDS - start)) s"
  [ $rc -eq 0 ] || status=1
done
exit $status
