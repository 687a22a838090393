#!/usr/bin/env bash
# bench_mpi.sh BIN_DIR DATA_DIR [COPIES] [RANKS]: `mpirun -np RANKS swgpu align` (GPU backend, the ranks of a host
# sharing its GPUs) against one process on classic20 x uniprot_db20k repeated COPIES times (default 100) from a .swdb:
# wall times, and whether the outputs are identical. MPIRUN names the launcher (default: mpirun on PATH); extra
# launcher arguments come from MPIRUN_ARGS.
set -uo pipefail
BIN=$1
DATA=$2
COPIES=${3:-100}
RANKS=${4:-2}
. "$(dirname "$0")/db20k_copies.sh"
db20k_copies "$BIN" "$DATA" "$COPIES" || exit 1
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b - a}'; }
"$BIN/swgpu" align "$queries" "$db.swdb" -k 10 -o "$tmp/mpi.warmup.tsv" || exit 1
t0=$(now); "$BIN/swgpu" align "$queries" "$db.swdb" -k 10 -o "$tmp/mpi.one.tsv" || exit 1; t1=$(now)
one=$(secs "$t0" "$t1")
# shellcheck disable=SC2086
t0=$(now); ${MPIRUN:-mpirun} -np "$RANKS" ${MPIRUN_ARGS:-} "$BIN/swgpu" align "$queries" "$db.swdb" -k 10 -v \
  -o "$tmp/mpi.many.tsv" 2> "$tmp/mpi.log" || { cat "$tmp/mpi.log"; exit 1; }
t1=$(now)
many=$(secs "$t0" "$t1")
grep -E 'MPI|score pass' "$tmp/mpi.log"
if cmp -s "$tmp/mpi.one.tsv" "$tmp/mpi.many.tsv"; then same=identical; else same=DIFFERENT; fi
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
awk -v o="$one" -v m="$many" -v r="$RANKS" -v g="$gpus" -v same="$same" -v c="$COPIES" 'BEGIN {
  printf "summary: classic20 x db20k x%d: one process %.2f s, %d MPI ranks on %d GPU(s) %.2f s (%.0f %% of one process per GPU); output %s\n",
    c, o, r, g, m, 100 * o / m * 1 / (g < r ? g : r), same }'
