#!/usr/bin/env bash
# run_device.sh [BIN_DIR] [OUT_DIR]: everything one session checks and measures on a GPU machine, in one go.
#
# BIN_DIR holds swgpu, swgpu_gpu_tests and the benchmark programs (a bundle from scripts/bundle.sh: bin/ beside lib/),
# and for the step "faults" swgpu_tests and libswgpu_fault.so (the host fault tests, run there on both backends);
# default .carry/engine/bundle/bin. OUT_DIR receives one log per step plus the files steps write (default $OUT, else
# /tmp/swgpu-device). Steps run in order; a failing step is reported and the next one still runs. The last thing
# printed is a short table: each step's exit code, time and last output line, then every line a step printed starting
# with "summary:".
#
# To add a step, append one line to STEPS: "name|command" (the command runs with bash; $BIN and $OUTDIR are set).
# Steps whose name is listed in SWGPU_SKIP (space-separated) are skipped; each step is killed after SWGPU_STEP_TIMEOUT
# seconds (default 600), so the table is always printed. SCAN_ARGS and SCHEDULES_ARGS replace the benchmarks'
# arguments (a quick look: SCHEDULES_ARGS="--cells-log2 26 --extra-cells-log2 0 --reps 1"). SWGPU_DATA is the folder of
# the reference data sets (classic20_queries.fa, uniprot_db20k.fasta.gz, uniprot_query500.fasta.gz) for the search
# benchmarks. OLD_BIN is the bundle of the last release (scripts/build_release.sh) for the step release_guard (the
# whole-process search workloads against that release, alternately; with CUDASW4, CUDASW++4.0 runs third in each
# alternation). On a machine with several GPUs, bench_multi_gpu runs too (CUDASW4 and an mpirun on PATH, when present,
# add CUDASW++4.0 and MPI to it).
set -uo pipefail
BIN=$(cd "${1:-.carry/engine/bundle/bin}" && pwd)
OUTDIR=${2:-${OUT:-/tmp/swgpu-device}}
mkdir -p "$OUTDIR"
export BIN OUTDIR
repo=$(cd "$(dirname "$0")/../.." && pwd)

SCAN_ARGS=${SCAN_ARGS:---min-log2 14 --max-log2 28 --reps 7}
SCHEDULES_ARGS=${SCHEDULES_ARGS:---reps 3}
STEPS=(
  "version|\$BIN/swgpu --version"
  "gpu_tests|\$BIN/swgpu_gpu_tests"
  "sanitize|$repo/scripts/sanitize.sh \$BIN/swgpu_gpu_tests"
  "faults|if [ -x \$BIN/swgpu_tests ]; then SWGPU_BINARY=\$BIN/swgpu SWGPU_SOURCE_DIR=$repo SWGPU_FAULT_LIBRARY=\$BIN/libswgpu_fault.so \$BIN/swgpu_tests '[faults]'; else echo 'summary: swgpu_tests and libswgpu_fault.so not bundled, host fault tests on the GPU backend not run'; fi"
  "bench_weighted_scan|\$BIN/bench_weighted_scan $SCAN_ARGS"
  "bench_schedules|\$BIN/bench_schedules $SCHEDULES_ARGS --fit \$OUTDIR/hybrid_switch.tsv"
  "bench_gpu_search_classic20|\$BIN/bench_gpu_search \${SWGPU_DATA:-data}/classic20_queries.fa \${SWGPU_DATA:-data}/uniprot_db20k.fasta.gz 10 5 --check 2 --label classic20_db20kx10"
  "bench_align|$repo/tests/bench/bench_align.sh \$BIN \${SWGPU_DATA:-data} \${ALIGN_RUNS:-9}"
  "bench_gpu_search_query500|\$BIN/bench_gpu_search \${SWGPU_DATA:-data}/uniprot_query500.fasta.gz \${SWGPU_DATA:-data}/uniprot_db20k.fasta.gz 1 5 --check 4 --label query500_db20k"
  "bench_gpu_align_query500|\$BIN/bench_gpu_align \${SWGPU_DATA:-data}/uniprot_query500.fasta.gz \${SWGPU_DATA:-data}/uniprot_db20k.fasta.gz -r 7"
  "bench_long_pair_100k|\$BIN/bench_long_pair --length 100000 --reps 5"
  "bench_long_pair_1M_score|\$BIN/bench_long_pair --length 1000000 --reps 5 --score-only"
  "bench_long_pair_1M_align|\$BIN/bench_long_pair --length 1000000 --reps 5"
  "long_pair_entries|\$BIN/swgpu_gpu_tests 'every forward entry' | tail -1; for e in 0 6 7 0 6 7; do SWGPU_TUNE=long.entry=\$e \$BIN/bench_long_pair --length 1000000 --reps 3 --score-only | sed -n 's/^summary:/summary: long.entry '\$e':/p'; done; if command -v cuobjdump >/dev/null; then cuobjdump -sass \$BIN/bench_long_pair > \$OUTDIR/long_pair.sass && python3 $repo/scripts/sass_step_counts.py \$OUTDIR/long_pair.sass; fi"
  "cpu_long_pair_threads|$repo/tests/bench/bench_cpu_scaling.sh \$BIN/bench_long_pair 200000 30000"
  "cpu_long_pair_schedule|for r in 1 2; do for s in waves dataflow; do SWGPU_TUNE=long.cpu_schedule=\$s \$BIN/bench_long_pair --length 200000 --backend cpu --score-only --reps 3 | sed -n 's/^summary:/summary: '\$s':/p'; done; done"
  "cpu_long_pair_one_thread|for n in 0 1; do SWGPU_TUNE=long.cpu_narrow=\$n \$BIN/bench_long_pair --length 30000 --backend cpu --threads 1 --score-only --reps 5 --parasail | sed -n 's/^summary:/summary: long.cpu_narrow '\$n':/p'; done"
  "cpu_long_pair_1M|for s in 2 4; do SWGPU_TUNE=long.cpu_task_tiles=\$s \$BIN/bench_long_pair --length 1000000 --backend cpu --score-only --reps 0 | sed -n 's/^summary:/summary: tasks of '\$s' tiles:/p'; done"
  "reads_vs_genome|python3 $repo/tests/bench/make_reads.py 5000000 100000 150 \$OUTDIR/rg && /usr/bin/time -f 'summary: 100k reads x 5 Mbp, both strands, -k 1, whole process %e s' \$BIN/swgpu align \$OUTDIR/rg.reads.fa \$OUTDIR/rg.genome.fa -k 1 --outfmt '6 std score' -o \$OUTDIR/rg.tsv"
  "bench_sweep3d|$repo/tests/bench/bench_sweep3d.sh \$BIN"
  "bench_sor|$repo/tests/bench/bench_sor.sh \$BIN 8192 512"
  "bench_db_stream|$repo/tests/bench/bench_db_stream.sh \$BIN \${SWGPU_DATA:-data} \${DB_COPIES:-100} \${DB_RUNS:-3}"
  "bench_sat|\$BIN/bench_sat --reps 7 && \$BIN/bench_sat_cpu --size 16384 --reps 3"
  "bench_levels|\$BIN/bench_levels --lap3d 100 --reps 7 && \$BIN/bench_levels --lap3d 216 --reps 5"
  "bench_levels_loops|$repo/tests/bench/bench_levels_loops.sh \$BIN \$OUTDIR/loops medium"
  "bench_sor_table2|INPUTS='1 2' $repo/tests/bench/bench_sor_table2.sh \$BIN 8192 && INPUTS=3 BRACKETS=all $repo/tests/bench/bench_sor_table2.sh \$BIN 1026"
  "bench_multi_gpu|if [ \$(nvidia-smi -L | grep -c '^GPU') -ge 2 ]; then $repo/tests/bench/bench_multi_gpu.sh \$BIN \${SWGPU_DATA:-data} \${DB_COPIES:-100} \${DB_RUNS:-3}; else echo 'summary: one GPU, bench_multi_gpu not run'; fi"
  "release_guard|if [ -x \${OLD_BIN:-/nonexistent}/swgpu ]; then $repo/tests/bench/release_guard.sh \$BIN \$OLD_BIN \${SWGPU_DATA:-data} \${GUARD_RUNS:-3}; else echo 'summary: OLD_BIN (the last release, scripts/build_release.sh) not given: release guard not run'; fi"
  "bench_gpu_search_query500_early|\$BIN/bench_gpu_search \${SWGPU_DATA:-data}/uniprot_query500.fasta.gz \${SWGPU_DATA:-data}/uniprot_db20k.fasta.gz 1 5 --check 4 --early --label query500_db20k_batches_in_flight"
)

echo "# run_device.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader 2>/dev/null || true
table=()
for step in "${STEPS[@]}"; do
  name=${step%%|*}
  cmd=${step#*|}
  if [[ " ${SWGPU_SKIP:-} " == *" $name "* ]]; then table+=("$(printf '%-22s %5s %8s' "$name" skip -)"); continue; fi
  echo
  echo "===== $name: $cmd"
  start=$(date +%s%N)
  timeout --signal=KILL "${SWGPU_STEP_TIMEOUT:-600}" bash -c "$cmd" 2>&1 | tee "$OUTDIR/$name.log"
  rc=${PIPESTATUS[0]}
  secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  last=$(grep -v '^[[:space:]]*$' "$OUTDIR/$name.log" | tail -n 1 | cut -c1-70)
  table+=("$(printf '%-22s %5s %8s  %s' "$name" "$rc" "$secs" "$last")")
done

echo
echo "===== summary ($(date -u +%Y-%m-%d))"
printf '%-22s %5s %8s  %s\n' step exit seconds "last line"
for line in "${table[@]}"; do echo "$line"; done
for step in "${STEPS[@]}"; do
  name=${step%%|*}
  [ -f "$OUTDIR/$name.log" ] && grep -h '^summary:' "$OUTDIR/$name.log" | sed "s/^summary:/$name:/"
done
exit 0
