#!/usr/bin/env bash
# bench_sweep3d.sh BIN_DIR [SIZES] [LOOPS]: `swgpu sweep3d` on the GPU against the CPU backend on every core (3-D
# tiles in wavefront order on the threads, each tile a vectorised wavefront with the exact inline fmod), in the form of
# Table IV of Pennycook et al.: for each N, L and precision the time of each (the GPU's steps by CUDA events, the CPU's
# sweep by wall clock, neither counting the copy of the grid or its allocation) and the speed-up; both checksums must
# agree. The dd kernel (8 angles) once per N too, in double and single.
# The CPU side is the best of CPU_REPS runs (default 3) over the tile edges CPU_TILES (default "16 32"; the best edge is
# printed) on CPU_THREADS threads (default: every core). The counted work rate of each side is printed too: fmod,
# point updates per second (N^3 L updates of 3 additions and one fmod each); dd, cell-angles per second (N^3 A, each
# 3 products, 3 additions, one division, 4 additions and subtractions for psi and its faces, one product and one
# addition for the flux: 13 operations).
# SWGPU_TUNE=sweep.schedule=launch|grid in the environment forces the GPU's schedule (a launch per step, or one launch with
# a grid barrier between steps).
set -uo pipefail
BIN=$1
SIZES=${2:-"160 320 640 1024"}
LOOPS=${3:-"1 5 10"}
threads=${CPU_THREADS:-$(nproc)}
tiles=${CPU_TILES:-"16 32"}
reps=${CPU_REPS:-3}
echo "N L precision cpu_s gpu_s speedup (cpu: $threads threads, best of $reps runs over tiles $tiles)"
run() {  # run ARGS...: prints "checksum time"
  "$BIN/swgpu" sweep3d "$@" -q | awk '{print $2, $4}'
}
cpu_best() {  # cpu_best ARGS...: prints "checksum time tile", the best time over the tiles and runs
  local best="" best_tile="" sum="" c t
  for tile in $tiles; do
    for ((r = 0; r < reps; ++r)); do
      read -r c t <<< "$(run "$@" --backend cpu --threads "$threads" --tile "$tile")"
      if [[ -z $best ]] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; best_tile=$tile; fi
      if [[ -n $sum && $c != "$sum" ]]; then sum=DIFFERENT; elif [[ -z $sum ]]; then sum=$c; fi
    done
  done
  echo "$sum $best $best_tile"
}
for n in $SIZES; do
  for l in $LOOPS; do
    for prec in single double; do
      [[ $n -ge 1024 && $l -gt 1 ]] && continue  # the CPU side would take long
      read -r cg tg <<< "$(run --n "$n" --loops "$l" --precision "$prec" --backend gpu)"
      read -r cc tc tile <<< "$(cpu_best --n "$n" --loops "$l" --precision "$prec")"
      same=$([[ $cg == "$cc" ]] && echo same || echo DIFFERENT)
      awk -v n="$n" -v l="$l" -v p="$prec" -v c="$tc" -v g="$tg" -v same="$same" -v tile="$tile" 'BEGIN {
        u = n * n * n * l
        printf "summary: sweep3d fmod N=%d L=%d %s: cpu %.4f s (tile %d), gpu %.4f s, %.1fx (checksums %s); updates/s cpu %.3g, gpu %.3g\n",
          n, l, p, c, tile, g, c / g, same, u / c, u / g }'
    done
  done
  for prec in double single; do
    read -r cg tg <<< "$(run --n "$n" --kernel dd --angles 8 --precision "$prec" --backend gpu)"
    read -r cc tc tile <<< "$(cpu_best --n "$n" --kernel dd --angles 8 --precision "$prec")"
    same=$([[ $cg == "$cc" ]] && echo same || echo DIFFERENT)
    awk -v n="$n" -v p="$prec" -v c="$tc" -v g="$tg" -v same="$same" -v tile="$tile" 'BEGIN {
      u = n * n * n * 8
      printf "summary: sweep3d dd N=%d 8 angles %s: cpu %.4f s (tile %d), gpu %.4f s, %.1fx (checksums %s); cell-angles/s cpu %.3g, gpu %.3g\n",
        n, p, c, tile, g, c / g, same, u / c, u / g }'
  done
done
