#!/usr/bin/env bash
# bench_multi_gpu.sh BIN_DIR DATA_DIR [COPIES] [RUNS]: swgpu on 1, 2, 4, 8 GPUs of one host (those present), each
# count chosen with CUDA_VISIBLE_DEVICES, against the same run on the first GPU alone:
#   search   classic20 x uniprot_db20k repeated COPIES times (default 100) from a .swdb, `-k 10`, BLAST tabular:
#            whole-process wall (median of RUNS, default 3, after a warm-up), TCUPS, efficiency against one GPU,
#            the score kernels' device time (SWGPU_TUNE=search.profile=1, summed over chunks and divided by the GPUs), and
#            whether the output is byte-identical to one GPU's
#   peer     CUDASW++4.0 (`align --dpx --top 10`) on the same GPUs and database, when CUDASW4 names the folder holding
#            its `align` and `makedb` (built from its public source; it uses every visible GPU): wall, median of RUNS
#   long     a LONG_LENGTH x LONG_LENGTH DNA pair (default 10000000; 0 skips it) made by make_long_pair.py,
#            `--mode pairwise --strand plus`, one run per GPU count: wall, TCUPS, efficiency, identical alignment;
#            split by rows (the default); on 2 GPUs or more also split by columns (SWGPU_TUNE=long.split=columns;
#            LONG_COLUMNS=0 leaves it out)
#   mpi      `mpirun -np G` with one rank per GPU (MPIRUN, default mpirun; MPIRUN=none skips it; MPIRUN_ARGS are
#            passed on), with Open MPI's default binding and with --bind-to none: wall, efficiency against one
#            process on one GPU, identical output, and the fixed cost of a job (classic20 against itself)
# GPU_COUNTS overrides the counts (default "1 2 4 8", those above the GPUs present dropped); STEPS chooses among
# "search peer long mpi" (default all). The last lines printed start with "summary:".
set -uo pipefail
BIN=$1
DATA=$2
COPIES=${3:-100}
RUNS=${4:-3}
STEPS=${STEPS:-search peer long mpi}
. "$(dirname "$0")/db20k_copies.sh"
here=$(cd "$(dirname "$0")" && pwd)

present=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[[ $present -ge 1 ]] || { echo "bench_multi_gpu: no GPU" >&2; exit 1; }
counts=()
for g in ${GPU_COUNTS:-1 2 4 8}; do [[ $g -le $present ]] && counts+=("$g"); done
devices() { seq -s, 0 $(($1 - 1)); }  # devices 3 -> 0,1,2
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b - a}'; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
summaries=()
echo "# bench_multi_gpu: $present GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | tr -s ' ' | tr '\n' ' ')"
nvidia-smi topo -m 2>/dev/null | head -n $((present + 1))

if [[ " $STEPS " == *" search "* || " $STEPS " == *" peer "* || " $STEPS " == *" mpi "* ]]; then
  db20k_copies "$BIN" "$DATA" "$COPIES" || exit 1
  qres=$(grep -v '^>' "$queries" | tr -d '\n\r ' | wc -c)
  dbres=$(zcat "$DATA/uniprot_db20k.fasta.gz" | grep -v '^>' | tr -d '\n\r ' | wc -c)
  dbres=$((dbres * COPIES))
  echo "query residues $qres, database residues $dbres"
fi

# --- swgpu database search on G GPUs
if [[ " $STEPS " == *" search "* ]]; then
  CUDA_VISIBLE_DEVICES=0 "$BIN/swgpu" align "$queries" "$db.swdb" -k 10 -o "$tmp/mg.warmup.tsv" || exit 1
  one=""
  for g in "${counts[@]}"; do
    times=()
    for r in $(seq "$RUNS"); do
      t0=$(now)
      CUDA_VISIBLE_DEVICES=$(devices "$g") SWGPU_TUNE=search.profile=1 "$BIN/swgpu" align "$queries" "$db.swdb" -k 10 -v \
        -o "$tmp/mg.$g.tsv" > "$tmp/mg.$g.log" 2>&1 || { echo "swgpu failed on $g GPU(s):"; cat "$tmp/mg.$g.log"; exit 1; }
      times+=("$(secs "$t0" "$(now)")")
    done
    m=$(printf '%s\n' "${times[@]}" | median)
    [[ -n $one ]] || one=$m
    grep -E 'spread over|score pass|waited' "$tmp/mg.$g.log" | sed 's/^/  /' | head -4
    # score kernels of the last run: the "score X" of every search call, summed, over the GPUs
    kernel=$(grep -o 'score [0-9.]*' "$tmp/mg.$g.log" | awk -v g="$g" '{s += $2} END {printf "%.3f", s / 1000 / g}')
    if cmp -s "$tmp/mg.$g.tsv" "$tmp/mg.warmup.tsv"; then same=identical; else same=DIFFERENT; fi
    echo "== swgpu, $g GPU(s): wall ${times[*]} s"
    summaries+=("$(awk -v g="$g" -v m="$m" -v o="$one" -v k="$kernel" -v q="$qres" -v d="$dbres" -v c="$COPIES" -v same="$same" 'BEGIN {
      printf "summary: swgpu classic20 x db20k x%d on %d GPU(s): whole process %.2f s (median), %.2f TCUPS, efficiency %.0f %%; score kernels %.2f s per GPU (%.2f TCUPS); output %s\n",
        c, g, m, q * d / m / 1e12, 100 * o / m / g, k, q * d / k / 1e12, same }')")
    echo "${summaries[-1]}"
  done
fi

# --- CUDASW++4.0 on the same GPUs and database
if [[ " $STEPS " == *" peer "* && -n ${CUDASW4:-} ]]; then
  cdb=$tmp/cudasw_db20kx$COPIES/db
  if [[ ! -s $cdb.chunk0 && ! -d $tmp/cudasw_db20kx$COPIES.done ]]; then
    mkdir -p "$(dirname "$cdb")"
    zcat "$DATA/uniprot_db20k.fasta.gz" > "$tmp/db20k.fa"
    for _ in $(seq "$COPIES"); do cat "$tmp/db20k.fa"; done > "$tmp/cudasw.fa"
    "$CUDASW4/makedb" "$tmp/cudasw.fa" "$cdb" > "$tmp/cudasw_makedb.log" 2>&1 || { cat "$tmp/cudasw_makedb.log"; exit 1; }
    rm -f "$tmp/cudasw.fa"
    mkdir -p "$tmp/cudasw_db20kx$COPIES.done"
  fi
  CUDA_VISIBLE_DEVICES=0 "$CUDASW4/align" --query "$queries" --db "$cdb" --top 10 --dpx --tsv --of "$tmp/cs.warmup.tsv" > /dev/null 2>&1
  one=""
  for g in "${counts[@]}"; do
    times=()
    for r in $(seq "$RUNS"); do
      t0=$(now)
      CUDA_VISIBLE_DEVICES=$(devices "$g") "$CUDASW4/align" --query "$queries" --db "$cdb" --top 10 --dpx --tsv \
        --of "$tmp/cs.$g.tsv" --verbose > "$tmp/cs.$g.log" 2>&1 || { echo "CUDASW++4.0 failed:"; tail "$tmp/cs.$g.log"; break; }
      times+=("$(secs "$t0" "$(now)")")
    done
    m=$(printf '%s\n' "${times[@]}" | median)
    [[ -n $one ]] || one=$m
    grep -iE 'TCUPS|GCUPS' "$tmp/cs.$g.log" | tail -2 | sed 's/^/  /'
    echo "== CUDASW++4.0, $g GPU(s): wall ${times[*]} s"
    summaries+=("$(awk -v g="$g" -v m="$m" -v o="$one" -v q="$qres" -v d="$dbres" -v c="$COPIES" 'BEGIN {
      printf "summary: CUDASW++4.0 DPX classic20 x db20k x%d on %d GPU(s): whole process %.2f s (median), %.2f TCUPS, efficiency %.0f %%\n",
        c, g, m, q * d / m / 1e12, 100 * o / m / g }')")
    echo "${summaries[-1]}"
  done
fi

# --- a long pair split over G GPUs
LONG_LENGTH=${LONG_LENGTH:-10000000}
if [[ " $STEPS " == *" long "* && $LONG_LENGTH -gt 0 ]]; then
  tmp=${tmp:-${TMPDIR:-/tmp}/swgpu_bench_db_stream}
  mkdir -p "$tmp"
  lp=$tmp/long$LONG_LENGTH
  [[ -s $lp.b.fa ]] || python3 "$here/make_long_pair.py" "$LONG_LENGTH" "$lp" || exit 1
  la=$(grep -v '^>' "$lp.a.fa" | tr -d '\n' | wc -c)
  lb=$(grep -v '^>' "$lp.b.fa" | tr -d '\n' | wc -c)
  # long_run G NAME LABEL [ENV...]: one aligned run of the pair on G GPUs (its output $tmp/NAME.G.tsv), its summary
  # against the first run on one GPU (wall $one, output $tmp/lp.1.tsv); false when swgpu failed.
  long_run() {
    local g=$1 name=$2 label=$3
    shift 3
    local t0 m same
    t0=$(now)
    env CUDA_VISIBLE_DEVICES="$(devices "$g")" "$@" "$BIN/swgpu" align "$lp.a.fa" "$lp.b.fa" --mode pairwise --strand plus \
      --outfmt "6 std score" -v -o "$tmp/$name.$g.tsv" > "$tmp/$name.$g.log" 2>&1 || {
      echo "swgpu failed ($name, $g GPUs):"; cat "$tmp/$name.$g.log"; return 1; }
    m=$(secs "$t0" "$(now)")
    [[ -n $one ]] || one=$m
    grep -E 'forward pass' "$tmp/$name.$g.log" | sed 's/^/  /' | head -2
    if cmp -s "$tmp/$name.$g.tsv" "$tmp/lp.1.tsv"; then same=identical; else same=DIFFERENT; fi
    summaries+=("$(awk -v g="$g" -v m="$m" -v o="$one" -v a="$la" -v b="$lb" -v same="$same" -v l="$label" 'BEGIN {
      printf "summary: swgpu long pair %d x %d on %d GPU(s)%s: whole process %.2f s, %.2f TCUPS, efficiency %.0f %%; alignment %s\n",
        a, b, g, l, m, a * b / m / 1e12, 100 * o / m / g, same }')")
    echo "${summaries[-1]}"
  }
  one=""
  for g in "${counts[@]}"; do
    label=""
    [[ $g -ge 2 ]] && label=", split by rows"
    long_run "$g" lp "$label" || exit 1
    # The split by columns (SWGPU_TUNE=long.split=columns), on the same GPUs; LONG_COLUMNS=0 leaves it out.
    if [[ $g -ge 2 && ${LONG_COLUMNS:-1} != 0 ]]; then long_run "$g" lpc ", split by columns" SWGPU_TUNE=long.split=columns; fi
  done
fi

# --- MPI, one rank per GPU: with Open MPI's default binding (one core per rank when there are at most 2 ranks) and
# with --bind-to none; and the fixed cost of a job (classic20 against itself: launch, MPI and CUDA start-up, merge)
if [[ " $STEPS " == *" mpi "* && ${MPIRUN:-mpirun} != none ]] && ! command -v "${MPIRUN:-mpirun}" > /dev/null; then
  echo "bench_multi_gpu: no ${MPIRUN:-mpirun} on PATH, MPI not run"
elif [[ " $STEPS " == *" mpi "* && ${MPIRUN:-mpirun} != none ]]; then
  t0=$(now)
  CUDA_VISIBLE_DEVICES=0 "$BIN/swgpu" align "$queries" "$db.swdb" -k 10 -o "$tmp/mpi.one.tsv" || exit 1
  one=$(secs "$t0" "$(now)")
  t0=$(now)
  CUDA_VISIBLE_DEVICES=0 "$BIN/swgpu" align "$queries" "$queries" -k 10 -o "$tmp/mpi.tiny.tsv" || exit 1
  tiny=$(secs "$t0" "$(now)")
  for g in "${counts[@]}"; do
    [[ $g -ge 2 ]] || continue
    for binding in default none; do
      bind=()
      [[ $binding == none ]] && bind=(--bind-to none)
      t0=$(now)
      # shellcheck disable=SC2086
      CUDA_VISIBLE_DEVICES=$(devices "$g") ${MPIRUN:-mpirun} -np "$g" "${bind[@]}" ${MPIRUN_ARGS:-} "$BIN/swgpu" align \
        "$queries" "$queries" -k 10 -o "$tmp/mpi.tiny.$g.tsv" 2> /dev/null || { echo "mpirun failed"; continue; }
      mtiny=$(secs "$t0" "$(now)")
      t0=$(now)
      # shellcheck disable=SC2086
      CUDA_VISIBLE_DEVICES=$(devices "$g") ${MPIRUN:-mpirun} -np "$g" "${bind[@]}" ${MPIRUN_ARGS:-} "$BIN/swgpu" align \
        "$queries" "$db.swdb" -k 10 -v -o "$tmp/mpi.$g.tsv" 2> "$tmp/mpi.$g.log" || {
        echo "mpirun failed:"; cat "$tmp/mpi.$g.log"; continue; }
      m=$(secs "$t0" "$(now)")
      grep -E 'MPI|score pass' "$tmp/mpi.$g.log" | head -3 | sed 's/^/  /'
      if cmp -s "$tmp/mpi.$g.tsv" "$tmp/mpi.one.tsv"; then same=identical; else same=DIFFERENT; fi
      summaries+=("$(awk -v g="$g" -v m="$m" -v o="$one" -v c="$COPIES" -v same="$same" -v b="$binding" -v t="$tiny" -v mt="$mtiny" 'BEGIN {
        printf "summary: MPI classic20 x db20k x%d, %d ranks on %d GPUs, binding %s: %.2f s against one process on one GPU %.2f s, efficiency %.0f %%; output %s; a tiny job %.2f s against %.2f s\n",
          c, g, g, b, m, o, 100 * o / m / g, same, mt, t }')")
      echo "${summaries[-1]}"
    done
  done
fi

echo
printf '%s\n' "${summaries[@]}"
