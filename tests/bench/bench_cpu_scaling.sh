#!/usr/bin/env bash
# bench_cpu_scaling.sh BENCH_LONG_PAIR [LENGTH [SMALL_LENGTH [THREADS...]]]: how the CPU long-pair score pass scales
# with threads, beside what the host itself gives.
#
#   1. one pair of LENGTH (default 200000) on T threads (default 1 2 4 8 and the host's count): GCUPS and the parallel
#      efficiency GCUPS(T) / (T · GCUPS(1));
#   2. the host's ceiling for the same kernel: T independent processes at once, each one pair of SMALL_LENGTH (default
#      30000) on one thread; their summed GCUPS over T times one such process alone. No sharing between them, so what
#      is lost here is the host's (cores that are hyperthreads of one another, a lower clock with every core busy,
#      shared caches and memory), and (1)'s efficiency over (2)'s is what the program itself loses.
#
# Prints a line per measurement and "summary:" lines. Each figure is the median of the bench's runs after a warm-up.
set -euo pipefail
bench=$1
length=${2:-200000}
small=${3:-30000}
shift $(( $# < 3 ? $# : 3 ))
threads=("$@")
cores=$(nproc)
if [ ${#threads[@]} -eq 0 ]; then
  for t in 1 2 4 8 16 32 64; do [ "$t" -le "$cores" ] && threads+=("$t"); done
  [ "${threads[-1]}" -eq "$cores" ] || threads+=("$cores")
fi
# GCUPS of the forward pass to two decimals, from the summary's sizes and time (it prints one decimal).
gcups() {
  sed -n 's/^summary: cpu \([0-9]*\)x\([0-9]*\) .*forward pass \([0-9.]*\) s = .*/\1 \2 \3/p' |
    awk '{printf "%.2f\n", $1 * $2 / $3 / 1e9}'
}
echo "# host: $cores CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(lscpu | sed -n 's/^Thread(s) per core: *//p') thread(s) per core"

declare -A one_pair ceiling
for t in "${threads[@]}"; do
  reps=$(( t == 1 ? 1 : 3 ))
  g=$("$bench" --length "$length" --backend cpu --threads "$t" --score-only --reps "$reps" | gcups)
  one_pair[$t]=$g
  echo "one pair ${length}: $t threads $g GCUPS"
done
for t in "${threads[@]}"; do
  dir=$(mktemp -d)
  for ((k = 0; k < t; ++k)); do
    "$bench" --length "$small" --backend cpu --threads 1 --score-only --reps 3 --seed $((k + 1)) >"$dir/$k" &
  done
  wait
  sum=0
  for ((k = 0; k < t; ++k)); do sum=$(awk -v a="$sum" -v b="$(gcups <"$dir/$k")" 'BEGIN{print a + b}'); done
  rm -rf "$dir"
  ceiling[$t]=$sum
  echo "independent processes: $t at once, $sum GCUPS in all"
done
base=${threads[0]}
for t in "${threads[@]}"; do
  awk -v t="$t" -v b="$base" -v p="${one_pair[$t]}" -v p1="${one_pair[$base]}" -v c="${ceiling[$t]}" -v c1="${ceiling[$base]}" 'BEGIN{
    ep = p / (t / b * p1); ec = c / (t / b * c1);
    printf "summary: %2d threads: one pair %.2f GCUPS (efficiency %.0f %%), independent processes %.2f GCUPS (%.0f %%), the pair at %.0f %% of the host'"'"'s ceiling\n", t, p, 100 * ep, c, 100 * ec, 100 * ep / ec }'
done
