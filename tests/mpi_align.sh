#!/usr/bin/env bash
# mpi_align.sh MPIEXEC SWGPU SOURCE_DIR: `mpiexec -np 3 swgpu align` (CPU backend) writes byte for byte what one
# process writes, for protein and DNA, for several chunk sizes (more chunks than ranks, fewer, one), formats and a
# database written by makedb (whose chunks other ranks search are skipped unread); an
# error on the ranks ends the run with the error's exit code and leaves no output file.
set -euo pipefail
mpiexec=$1
swgpu=$2
cd "$3"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Run as root in containers, 3 ranks on a machine with fewer cores, and launched locally (no ssh needed).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_plm=isolated
strip_pg() { grep -v '^@PG' "$1" || true; }
checks=0
check() {  # check NAME INPUTS ARGS...
  local name=$1 inputs=$2
  shift 2
  # shellcheck disable=SC2086
  "$swgpu" align --backend cpu -t 1 $inputs "$@" -o "$tmp/$name.one"
  # shellcheck disable=SC2086
  "$mpiexec" -np 3 "$swgpu" align --backend cpu -t 1 -v $inputs "$@" -o "$tmp/$name.three" 2> "$tmp/$name.log"
  grep -q 'merged the scans of 3 MPI ranks' "$tmp/$name.log" || {
    echo "FAIL: $name: the 3 processes did not run as one MPI job:"; cat "$tmp/$name.log"; exit 1; }
  if ! cmp -s <(strip_pg "$tmp/$name.one") <(strip_pg "$tmp/$name.three"); then
    echo "FAIL: $name: 3 ranks differ from one process ($*)"
    diff <(strip_pg "$tmp/$name.one") <(strip_pg "$tmp/$name.three") | head -5
    exit 1
  fi
  [[ $(wc -l < "$tmp/$name.one") -gt 3 ]] || { echo "FAIL: $name: too little output"; exit 1; }
  checks=$((checks + 1))
}
protein="data/demo_queries.fa data/demo_db.fa"
check small-chunks "$protein" -k 20 --db-chunk 30000
check two-chunks "$protein" -k 5 --db-chunk 300000
check one-chunk "$protein" -k 10
check sam "$protein" -k 10 --db-chunk 50000 --outfmt sam
check columns "$protein" -k 3 --db-chunk 50000 --outfmt "6 std score cigar qseq sseq"
check dna "tests/data/crosscheck/lambda_pieces.fa tests/data/crosscheck/lambda_pieces.fa" -k 4 --db-chunk 10000
# From a .swdb, each rank passes the other ranks' chunks without reading them: the same output.
"$swgpu" makedb data/demo_db.fa "$tmp/demo" > /dev/null
check swdb-small-chunks "data/demo_queries.fa $tmp/demo.swdb" -k 20 --db-chunk 30000
check swdb-two-chunks "data/demo_queries.fa $tmp/demo.swdb" -k 5 --db-chunk 300000 --outfmt "6 std score"
# An error (a missing query file) on every rank: its exit code, no output file.
set +e
"$mpiexec" -np 3 "$swgpu" align --backend cpu "$tmp/missing.fa" data/demo_db.fa -o "$tmp/none.out" 2> "$tmp/err"
code=$?
set -e
if [[ $code -eq 0 || -e $tmp/none.out ]] || ! grep -q 'swgpu: error:.*missing.fa' "$tmp/err"; then
  echo "FAIL: an error under MPI: exit $code, output file $([[ -e $tmp/none.out ]] && echo left || echo absent)"
  cat "$tmp/err"
  exit 1
fi
echo "ok: $checks comparisons of 3 MPI ranks with one process, and the error case"
