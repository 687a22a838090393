#!/usr/bin/env bash
# long_pair_guard.sh NEW_BIN OLD_BIN [RUNS]: the whole-process speed of `swgpu align` on long pairs against the last
# release, on the same machine, the two programs run alternately (new, old, new, old, ...), as release_guard.sh does
# for database searches. NEW_BIN and OLD_BIN hold a swgpu each. Workloads (generated, deterministic):
#   100 kbp pair      tests/bench/make_long_pair.py 100000: b against a, both strands (two long pairs)
#   1 Mbp pair        make_long_pair.py 1000000, --strand plus
#   contigs x genome  tests/bench/make_contigs.py (47 contigs, 1.13 Mbp, against a 2.1 Mbp genome), -k 3
#   10 Mbp pair       make_long_pair.py 10000000, --strand plus (only with LONG_10M=1: about a minute a run)
# all with `--outfmt "6 std score"` (alignments included), after one untimed run of each program. Prints per workload the seconds of each run, the ratio of
# the medians (new / old; above 1 is slower) and REGRESSION past 3 %, and checks that both print the same bytes.
# Lines starting "summary:" are what run_device.sh's table collects.
set -uo pipefail
new=$(cd "${1:?usage: long_pair_guard.sh NEW_BIN OLD_BIN [RUNS]}" && pwd)
old=$(cd "${2:?old bin}" && pwd)
runs=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
tmp=${TMPDIR:-/tmp}/swgpu_long_pair_guard
mkdir -p "$tmp"
[ -s "$tmp/p100k.a.fa" ] || python3 "$here/make_long_pair.py" 100000 "$tmp/p100k" --seed 1
[ -s "$tmp/p1m.a.fa" ] || python3 "$here/make_long_pair.py" 1000000 "$tmp/p1m" --seed 2
[ -s "$tmp/ctg.genome.fa" ] || python3 "$here/make_contigs.py" "$tmp/ctg"
works=("100kbp|$tmp/p100k.b.fa $tmp/p100k.a.fa"
       "1Mbp|$tmp/p1m.b.fa $tmp/p1m.a.fa --strand plus"
       "contigs|$tmp/ctg.contigs.fa $tmp/ctg.genome.fa -k 3")
if [ "${LONG_10M:-0}" = 1 ]; then
  [ -s "$tmp/p10m.a.fa" ] || python3 "$here/make_long_pair.py" 10000000 "$tmp/p10m" --seed 3
  works+=("10Mbp|$tmp/p10m.b.fa $tmp/p10m.a.fa --strand plus")
fi
median() { sort -g | awk '{v[NR] = $1} END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
status=0
for work in "${works[@]}"; do
  label=${work%%|*}
  args=${work#*|}
  times_new=() times_old=()
  # One untimed run of each first (as release_guard.sh): the first run of a workload is the slower one.
  for side in new old; do
    bin=$([ $side = new ] && echo "$new" || echo "$old")
    # shellcheck disable=SC2086
    "$bin/swgpu" align -q $args --outfmt "6 std score" -o "$tmp/$side.out" >/dev/null 2>&1 || true
  done
  for r in $(seq "$runs"); do
    for side in new old; do
      bin=$([ $side = new ] && echo "$new" || echo "$old")
      start=$(date +%s%N)
      # shellcheck disable=SC2086
      "$bin/swgpu" align -q $args --outfmt "6 std score" -o "$tmp/$side.out" ||
        { echo "summary: $label: $side failed"; status=1; }
      secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
      if [ $side = new ]; then times_new+=("$secs"); else times_old+=("$secs"); fi
    done
    cmp -s "$tmp/new.out" "$tmp/old.out" || { echo "summary: $label: outputs differ (run $r)"; status=1; }
  done
  mn=$(printf '%s\n' "${times_new[@]}" | median)
  mo=$(printf '%s\n' "${times_old[@]}" | median)
  verdict=$(awk -v n="$mn" -v o="$mo" 'BEGIN { r = n / o; printf "%.3f%s", r, (r > 1.03 ? " REGRESSION (more than 3 % slower)" : "") }')
  echo "summary: $label: new ${times_new[*]} s, old ${times_old[*]} s, new/old medians $verdict"
done
exit $status
