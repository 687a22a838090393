#!/usr/bin/env bash
# bench_align.sh BIN_DIR DATA_DIR: `swgpu align` end to end on the reference data sets, GPU and CPU backend, top 10
# hits per query with alignments and E-values. Prints the times swgpu reports (-v: score pass, alignments, output) for
# 3 GPU runs and 1 CPU run per workload, checks that both backends wrote identical files, and ends with summary lines.
set -uo pipefail
BIN=$1
DATA=$2
tmp=${TMPDIR:-/tmp}/swgpu_bench_align
mkdir -p "$tmp"
zcat "$DATA/uniprot_db20k.fasta.gz" > "$tmp/db20k.fa"
for i in $(seq 10); do cat "$tmp/db20k.fa"; done > "$tmp/db20kx10.fa"
zcat "$DATA/uniprot_query500.fasta.gz" > "$tmp/query500.fa"

run() {  # name backend queries db
  "$BIN/swgpu" align "$3" "$4" -k 10 -v --backend "$2" -o "$tmp/$1.$2.tsv" 2>&1 | tee "$tmp/$1.$2.log" | grep -E 'score pass|alignments'
}
for w in "classic20_db20kx10 $DATA/classic20_queries.fa $tmp/db20kx10.fa" "query500_db20k $tmp/query500.fa $tmp/db20k.fa"; do
  set -- $w
  echo "== $1"
  for r in 1 2 3; do run "$1" gpu "$2" "$3"; done
  run "$1" cpu "$2" "$3"
  if cmp -s "$tmp/$1.gpu.tsv" "$tmp/$1.cpu.tsv"; then same=identical; else same=DIFFERENT; fi
  score=$(grep -o 'score pass [0-9.]* s' "$tmp/$1.gpu.log" | awk '{print $3}')
  aln=$(grep -o 'alignments [0-9.]* s' "$tmp/$1.gpu.log" | awk '{print $2}')
  echo "summary: $1 gpu score pass ${score}s, alignments ${aln}s (last of 3 runs); gpu vs cpu output $same ($(wc -l < "$tmp/$1.gpu.tsv") lines)"
done
