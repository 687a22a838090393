#!/usr/bin/env bash
# bench_ab.sh BASE_BIN NEW_BIN DATA_DIR [COPIES] [RUNS]: two builds of swgpu side by side on one machine, for the
# "before and after" of a change: classic20 against uniprot_db20k repeated COPIES times (default 100) from a .swdb,
# and against db20k.fasta.gz itself (the FASTA reader), top 10 hits, BLAST tabular, whole process. The two builds run
# in turn (base, new, base, new, ...) RUNS times each (default 3) after a warm-up of each, so that drift of the
# machine falls on both alike; their outputs must be byte-identical. Prints the wall times of every run and, last,
# one "summary:" line per database with both medians and their ratio.
set -uo pipefail
BASE=$1
NEW=$2
DATA=$3
COPIES=${4:-100}
RUNS=${5:-3}
. "$(dirname "$0")/db20k_copies.sh"
db20k_copies "$NEW" "$DATA" "$COPIES" || exit 1

now() { date +%s.%N; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
# one BIN TAG DB: wall seconds of one run (its output kept as $tmp/ab_TAG.tsv)
one() {
  local t0 t1
  t0=$(now)
  "$1/swgpu" align "$queries" "$3" -k 10 -q -o "$tmp/ab_$2.tsv" || { echo "swgpu ($1) failed" >&2; exit 1; }
  t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'
}
compare() {  # compare LABEL DB
  local label=$1 dbfile=$2 base_t=() new_t=()
  one "$BASE" base "$dbfile" > /dev/null
  one "$NEW" new "$dbfile" > /dev/null
  for _ in $(seq "$RUNS"); do
    base_t+=("$(one "$BASE" base "$dbfile")")
    new_t+=("$(one "$NEW" new "$dbfile")")
  done
  echo "== $label: base ${base_t[*]} s; new ${new_t[*]} s"
  if cmp -s "$tmp/ab_base.tsv" "$tmp/ab_new.tsv"; then same=identical; else same=DIFFERENT; fi
  local mb mn
  mb=$(printf '%s\n' "${base_t[@]}" | median)
  mn=$(printf '%s\n' "${new_t[@]}" | median)
  awk -v l="$label" -v b="$mb" -v n="$mn" -v s="$same" 'BEGIN {
    printf "summary: %s: base %.3f s, new %.3f s (new/base %.3f), medians; outputs %s\n", l, b, n, n / b, s }'
}
compare "classic20 x db20k x$COPIES (.swdb)" "$db.swdb"
compare "classic20 x db20k (FASTA, gzip)" "$DATA/uniprot_db20k.fasta.gz"
