#!/usr/bin/env bash
# bench_sweep3d.sh BIN_DIR [SIZES] [LOOPS]: `swgpu sweep3d` on the GPU against the CPU backend on every core (3-D
# tiles in wavefront order on the threads), in the form of Table IV of Pennycook et al.: for each N, L and precision
# the time of each (the GPU's steps by CUDA events, the CPU's sweep by wall clock, neither counting the copy of the
# grid or its allocation) and the speed-up; both checksums must agree. The dd kernel (8 angles) once per N too.
# SWGPU_TUNE=sweep.schedule=launch|grid in the environment forces the GPU's schedule (a launch per step, or one launch with
# a grid barrier between steps).
set -uo pipefail
BIN=$1
SIZES=${2:-"160 320 640 1024"}
LOOPS=${3:-"1 5 10"}
threads=$(nproc)
echo "N L precision cpu_s gpu_s speedup (cpu: $threads threads)"
run() {  # run BACKEND ARGS...: prints "checksum time"
  "$BIN/swgpu" sweep3d "$@" -q | awk '{print $2, $4}'
}
for n in $SIZES; do
  for l in $LOOPS; do
    for prec in single double; do
      [[ $n -ge 1024 && $l -gt 1 ]] && continue  # the CPU side would take minutes
      read -r cg tg <<< "$(run --n "$n" --loops "$l" --precision "$prec" --backend gpu)"
      read -r cc tc <<< "$(run --n "$n" --loops "$l" --precision "$prec" --backend cpu)"
      same=$([[ $cg == "$cc" ]] && echo same || echo DIFFERENT)
      awk -v n="$n" -v l="$l" -v p="$prec" -v c="$tc" -v g="$tg" -v same="$same" 'BEGIN {
        printf "summary: sweep3d fmod N=%d L=%d %s: cpu %.4f s, gpu %.4f s, %.1fx (checksums %s)\n", n, l, p, c, g, c / g, same }'
    done
  done
  read -r cg tg <<< "$(run --n "$n" --kernel dd --angles 8 --backend gpu)"
  read -r cc tc <<< "$(run --n "$n" --kernel dd --angles 8 --backend cpu)"
  same=$([[ $cg == "$cc" ]] && echo same || echo DIFFERENT)
  awk -v n="$n" -v c="$tc" -v g="$tg" -v same="$same" 'BEGIN {
    printf "summary: sweep3d dd N=%d 8 angles double: cpu %.4f s, gpu %.4f s, %.1fx (checksums %s)\n", n, c, g, c / g, same }'
done
