# Sourced by the database benchmarks: db20k_copies BIN DATA COPIES sets `tmp` (the benchmarks' scratch folder),
# `queries` (classic20) and `db` (uniprot_db20k concatenated COPIES times, as PREFIX of a .swdb made once and kept).
db20k_copies() {
  tmp=${TMPDIR:-/tmp}/swgpu_bench_db_stream
  mkdir -p "$tmp"
  queries=$2/classic20_queries.fa
  db=$tmp/db20kx$3
  if [[ ! -s $db.swdb ]]; then
    zcat "$2/uniprot_db20k.fasta.gz" > "$tmp/db20k.fa"
    for _ in $(seq "$3"); do cat "$tmp/db20k.fa"; done > "$db.fa"
    "$1/swgpu" makedb "$db.fa" "$db" || return 1
    rm -f "$db.fa"
  fi
}
