#!/usr/bin/env bash
# bench_db_stream.sh BIN_DIR DATA_DIR [COPIES] [RUNS]: `swgpu align` whole process on a database far larger than one
# chunk: classic20 queries against uniprot_db20k repeated COPIES times (default 100: 906 M residues, 10 chunks), read
# from a .swdb, top 10 hits per query, BLAST tabular output. Median wall time of RUNS (3) runs of each configuration:
#   default      the database stream as built (chunk k+1 read, encoded and packed while chunk k is searched)
#   gpu-mem-2G   the same within --gpu-mem 2G
#   no-prepare   packing inside the score pass (SWGPU_TUNE=search.prepare=0), for comparison
#   logical-2/4  the score pass spread over 2 or 4 logical devices on the GPU (search.logical_devices): the cost of
#                the multi-GPU path itself
#   chunk-250M   --db-chunk 250000000 (fewer, larger chunks)
#   batch-4      the queries as 4 files through --batch (one pass); their outputs, concatenated, must be the file
# TCUPS = query residues x database residues / wall seconds. Every configuration must write the same file.
set -uo pipefail
BIN=$1
DATA=$2
COPIES=${3:-100}
RUNS=${4:-3}
. "$(dirname "$0")/db20k_copies.sh"
db20k_copies "$BIN" "$DATA" "$COPIES" || exit 1
qres=$(grep -v '^>' "$queries" | tr -d '\n\r ' | wc -c)
dbres=$(zcat "$DATA/uniprot_db20k.fasta.gz" | grep -v '^>' | tr -d '\n\r ' | wc -c)
dbres=$((dbres * COPIES))
echo "query residues $qres, database residues $dbres"

now() { date +%s.%N; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
# run NAME [ENV...] -- [ARGS...]: prints the wall seconds of one run; keeps its -v log and output
run() {
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local t0 t1
  t0=$(now)
  env "${envs[@]}" "$BIN/swgpu" align "$queries" "$db.swdb" -k 10 -v "$@" -o "$tmp/$name.tsv" > "$tmp/$name.log" 2>&1 || {
    echo "swgpu failed:" >&2; cat "$tmp/$name.log" >&2; exit 1; }
  t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'
}
# Warm the page cache and the driver.
run warmup -- > /dev/null
for config in "default|SWGPU_TUNE=search.profile=1|" "gpu-mem-2G|SWGPU_TUNE=search.profile=1|--gpu-mem 2G" \
              "no-prepare|SWGPU_TUNE=search.prepare=0,search.profile=1|" \
              "logical-2|SWGPU_TUNE=search.logical_devices=2|" "logical-4|SWGPU_TUNE=search.logical_devices=4|" \
              "chunk-250M|SWGPU_TUNE=search.profile=1|--db-chunk 250000000"; do
  IFS='|' read -r name envs args <<< "$config"
  times=()
  for r in $(seq "$RUNS"); do
    # shellcheck disable=SC2086
    times+=("$(run "$name" $envs -- $args)")
  done
  echo "== $name: wall ${times[*]} s"
  grep -E 'score pass|swgpu: search' "$tmp/$name.log" | sed 's/^/  /' | head -4
  if cmp -s "$tmp/$name.tsv" "$tmp/warmup.tsv"; then same=identical; else same=DIFFERENT; fi
  m=$(printf '%s\n' "${times[@]}" | median)
  awk -v n="$name" -v m="$m" -v q="$qres" -v d="$dbres" -v c="$COPIES" -v same="$same" 'BEGIN {
    printf "summary: classic20 x db20k x%d %s: whole process %.2f s (median), %.2f TCUPS; output %s\n",
      c, n, m, q * d / m / 1e12, same }'
done

# The queries as 4 files through --batch.
awk -v dir="$tmp" '/^>/ { n++ } { print > (dir "/part" int((n - 1) / 5) ".fa") }' "$queries"
ls "$tmp"/part*.fa | sort -V > "$tmp/list.txt"
times=()
for r in $(seq "$RUNS"); do
  t0=$(now)
  "$BIN/swgpu" align --batch "$tmp/list.txt" "$db.swdb" -k 10 -v -o "$tmp" > "$tmp/batch.log" 2>&1 || {
    echo "swgpu failed:"; cat "$tmp/batch.log"; exit 1; }
  t1=$(now)
  times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}')")
done
echo "== batch-4: wall ${times[*]} s"
for f in $(cat "$tmp/list.txt"); do cat "$f.out"; done > "$tmp/batch.tsv"
if cmp -s "$tmp/batch.tsv" "$tmp/warmup.tsv"; then same=identical; else same=DIFFERENT; fi
m=$(printf '%s\n' "${times[@]}" | median)
awk -v m="$m" -v q="$qres" -v d="$dbres" -v c="$COPIES" -v same="$same" 'BEGIN {
  printf "summary: classic20 x db20k x%d as 4 query files, --batch: whole process %.2f s (median), %.2f TCUPS; outputs concatenated %s\n",
    c, m, q * d / m / 1e12, same }'
