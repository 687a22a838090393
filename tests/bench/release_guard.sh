#!/usr/bin/env bash
# release_guard.sh NEW_BIN OLD_BIN DATA [RUNS]: the whole-process speed of `swgpu align` against the last release, on
# the same machine, the two programs run alternately (new, old, new, old, ...) so that clocks and heat treat both
# alike. NEW_BIN and OLD_BIN hold a swgpu each (bundles: scripts/build_release.sh builds a release's); DATA holds
# classic20_queries.fa and uniprot_db20k.fasta.gz. Each program searches its own .swdb (made by its own makedb: the
# format may differ between releases) with `-k 10`, E-values and alignments included, in four workloads:
#   classic20 x db20k x10, one query (ADH1A_HUMAN, 375 aa) x db20k x10, classic20 x db20k x100, one query x db20k x100.
# Prints per workload the seconds of each run, the ratio of the medians (new / old; above 1 is slower) and
# REGRESSION when the new build is more than 3 % slower, and checks that both print the same bytes (cmp).
# Lines starting "summary:" are what run_device.sh's table collects. With CUDASW4 naming the folder of CUDASW++4.0's
# `align` and `makedb` (tests/bench/build_cudasw4.sh), it runs third in every alternation, on its own database, as the
# peer's whole process (`--top 10 --dpx --uploadFull --prefetchDBFile`), and each workload's line adds its median
# and the ratio peer / new (above 1: swgpu is faster).
set -uo pipefail
new=$(cd "${1:?usage: release_guard.sh NEW_BIN OLD_BIN DATA [RUNS]}" && pwd)
old=$(cd "${2:?old bin}" && pwd)
data=$(cd "${3:?data folder}" && pwd)
runs=${4:-3}
tmp=${TMPDIR:-/tmp}/swgpu_release_guard
mkdir -p "$tmp"
awk '/^>/{keep = index($0, "ADH1A_HUMAN") > 0} keep' "$data/classic20_queries.fa" > "$tmp/one.fa"
cp "$data/classic20_queries.fa" "$tmp/classic20.fa"
[ -s "$tmp/db20k.fa" ] || zcat "$data/uniprot_db20k.fasta.gz" > "$tmp/db20k.fa"
for copies in 10 100; do
  [ -s "$tmp/db20kx$copies.fa" ] || for _ in $(seq "$copies"); do cat "$tmp/db20k.fa"; done > "$tmp/db20kx$copies.fa"
  for side in new old; do
    bin=$([ $side = new ] && echo "$new" || echo "$old")
    "$bin/swgpu" makedb -q "$tmp/db20kx$copies.fa" "$tmp/$side.db20kx$copies" || { echo "summary: makedb failed ($side)"; exit 1; }
  done
  if [ -n "${CUDASW4:-}" ] && [ ! -s "$tmp/cudasw.db20kx$copies.done" ]; then
    "$CUDASW4/makedb" "$tmp/db20kx$copies.fa" "$tmp/cudasw.db20kx$copies" > "$tmp/cudasw.makedb.log" 2>&1 ||
      { echo "summary: CUDASW++4.0 makedb failed"; tail -3 "$tmp/cudasw.makedb.log"; exit 1; }
    echo done > "$tmp/cudasw.db20kx$copies.done"
  fi
done
peer() {  # CUDASW++4.0 on query file $1 against copies $2
  "$CUDASW4/align" --query "$tmp/$1.fa" --db "$tmp/cudasw.db20kx$2" --top 10 --dpx --uploadFull --prefetchDBFile \
    --tsv --of "$tmp/cudasw.out" > /dev/null 2>&1
}
median() { sort -g | awk '{v[NR] = $1} END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
status=0
for work in "classic20 10" "one 10" "classic20 100" "one 100"; do
  set -- $work
  label="$1 x db20k x$2"
  times_new=() times_old=()
  # One untimed run of each first: the first run of a workload is the slower one, and it would always be the new build's.
  for side in new old; do
    bin=$([ $side = new ] && echo "$new" || echo "$old")
    "$bin/swgpu" align -q -k 10 "$tmp/$1.fa" "$tmp/$side.db20kx$2.swdb" -o "$tmp/$side.out" >/dev/null 2>&1 || true
  done
  [ -n "${CUDASW4:-}" ] && { peer "$1" "$2" || true; }
  times_peer=()
  for r in $(seq "$runs"); do
    for side in new old; do
      bin=$([ $side = new ] && echo "$new" || echo "$old")
      start=$(date +%s%N)
      "$bin/swgpu" align -q -k 10 "$tmp/$1.fa" "$tmp/$side.db20kx$2.swdb" -o "$tmp/$side.out" || { echo "summary: $label: $side failed"; status=1; }
      secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
      if [ $side = new ]; then times_new+=("$secs"); else times_old+=("$secs"); fi
    done
    cmp -s "$tmp/new.out" "$tmp/old.out" || { echo "summary: $label: outputs differ (run $r)"; status=1; }
    if [ -n "${CUDASW4:-}" ]; then
      start=$(date +%s%N)
      peer "$1" "$2" || echo "summary: $label: CUDASW++4.0 failed"
      times_peer+=("$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')")
    fi
  done
  mn=$(printf '%s\n' "${times_new[@]}" | median)
  mo=$(printf '%s\n' "${times_old[@]}" | median)
  verdict=$(awk -v n="$mn" -v o="$mo" 'BEGIN { r = n / o; printf "%.3f%s", r, (r > 1.03 ? " REGRESSION (more than 3 % slower)" : "") }')
  peer_note=""
  if [ ${#times_peer[@]} -gt 0 ]; then
    mp=$(printf '%s\n' "${times_peer[@]}" | median)
    peer_note=$(awk -v p="$mp" -v n="$mn" -v t="${times_peer[*]}" 'BEGIN { printf "; CUDASW++4.0 %s s, peer/new medians %.2f", t, p / n }')
  fi
  echo "summary: $label: new ${times_new[*]} s, old ${times_old[*]} s, new/old medians $verdict$peer_note"
done
exit $status
