#!/usr/bin/env bash
# bench_ab.sh BASE_BIN NEW_BIN DATA_DIR [COPIES] [RUNS]: two builds of swgpu side by side on one machine, for the
# "before and after" of a change. Each workload is a whole `swgpu` process; the two builds run in turn (base, new,
# base, new, ...) RUNS times each (default 3) after a warm-up of each, so that drift of the machine falls on both
# alike, and their outputs must be byte-identical. Workloads (ONLY="name ..." picks some):
#   swdb      classic20 x uniprot_db20k repeated COPIES times (default 100) from a .swdb, -k 10, BLAST tabular
#   fasta     classic20 x uniprot_db20k.fasta.gz (the FASTA reader)
#   longpair  a 1 Mbp DNA pair and its relative (make_long_pair.py), --mode pairwise, one strand, alignment printed
#   sat       the summed-area table of an 8192 x 8192 8-bit image (PGM)
#   sor       SOR on the 4096 x 4096 rough problem (--problem rough), 200 lexicographic sweeps
#   sweep3d   the fmod demonstrator at N = 192, L = 10
#   levels    the triangular solve of the IC(0) factor of the 3-D Laplacian on a 100^3 grid (make_matrices.py)
# Prints the wall times of every run and one "summary:" line per workload with both medians and their ratio.
set -uo pipefail
BASE=$1
NEW=$2
DATA=$3
COPIES=${4:-100}
RUNS=${5:-3}
ONLY=${ONLY:-swdb fasta longpair sat sor sweep3d levels}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/db20k_copies.sh"
db20k_copies "$NEW" "$DATA" "$COPIES" || exit 1
inputs=$tmp/ab_inputs
mkdir -p "$inputs"

now() { date +%s.%N; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
# one BIN TAG EXT ARGS...: wall seconds of `BIN/swgpu ARGS -o $tmp/ab_TAG.EXT`
one() {
  local bin=$1 tag=$2 ext=$3 t0 t1
  shift 3
  t0=$(now)
  "$bin/swgpu" "$@" -o "$tmp/ab_$tag.$ext" > "$tmp/ab_$tag.log" 2>&1 || {
    echo "swgpu ($bin) failed:" >&2; cat "$tmp/ab_$tag.log" >&2; exit 1; }
  t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'
}
# compare NAME EXT LABEL ARGS...: the output file is named .EXT (the numerical subcommands tell formats by it)
compare() {
  local name=$1 ext=$2 label=$3 base_t=() new_t=()
  shift 3
  [[ " $ONLY " == *" $name "* ]] || return 0
  one "$BASE" base "$ext" "$@" > /dev/null
  one "$NEW" new "$ext" "$@" > /dev/null
  for _ in $(seq "$RUNS"); do
    base_t+=("$(one "$BASE" base "$ext" "$@")")
    new_t+=("$(one "$NEW" new "$ext" "$@")")
  done
  echo "== $label: base ${base_t[*]} s; new ${new_t[*]} s"
  if cmp -s "$tmp/ab_base.$ext" "$tmp/ab_new.$ext"; then same=identical; else same=DIFFERENT; fi
  local mb mn
  mb=$(printf '%s\n' "${base_t[@]}" | median)
  mn=$(printf '%s\n' "${new_t[@]}" | median)
  awk -v l="$label" -v b="$mb" -v n="$mn" -v s="$same" 'BEGIN {
    printf "summary: %s: base %.3f s, new %.3f s (new/base %.3f), medians; outputs %s\n", l, b, n, n / b, s }'
}

compare swdb tsv "classic20 x db20k x$COPIES (.swdb)" align "$queries" "$db.swdb" -k 10 -q
compare fasta tsv "classic20 x db20k (FASTA, gzip)" align "$queries" "$DATA/uniprot_db20k.fasta.gz" -k 10 -q
if [[ " $ONLY " == *" longpair "* && ! -s $inputs/lp.b.fa ]]; then
  python3 "$here/make_long_pair.py" 1000000 "$inputs/lp" || exit 1
fi
compare longpair tsv "1 Mbp DNA pair, --mode pairwise, alignment" align "$inputs/lp.a.fa" "$inputs/lp.b.fa" \
  --mode pairwise --strand plus --outfmt "6 std score cigar" -q
if [[ " $ONLY " == *" sat "* && ! -s $inputs/img.pgm ]]; then
  { printf 'P5\n8192 8192\n255\n'; head -c $((8192 * 8192)) /dev/urandom; } > "$inputs/img.pgm"
fi
compare sat npy "sat, 8192 x 8192 uint8" sat "$inputs/img.pgm" -q
compare sor npy "sor --problem rough --size 4096 --method lex, 200 sweeps" sor --problem rough --size 4096 --method lex --tol 1e-300 --max-sweeps 200
compare sweep3d npy "sweep3d --n 192 --loops 10" sweep3d --n 192 --loops 10
if [[ " $ONLY " == *" levels "* && ! -s $inputs/lap3d.mtx ]]; then
  python3 "$here/../../scripts/make_matrices.py" lap3d 100 100 100 -o "$inputs/lap3d.mtx" || exit 1
fi
compare levels npy "levels, IC(0) of lap3d 100^3" levels --matrix "$inputs/lap3d.mtx"
