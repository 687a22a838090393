#!/usr/bin/env bash
# bench_sor_table2.sh BIN [N]: Table II of the K-layer SSOR paper (convergence of SSOR, red-black SOR and its parallel
# MLSSOR at four subdomain sizes, three inputs, 8192 x 8192) on our GPU, with the paper's numbers beside ours.
#   BIN: the swgpu program, or the folder that holds it. N: the grid (default 8192).
#   Environment: BACKEND (gpu; cpu to try the script on a small grid), OMEGA (1.25 for every method and input),
#   SSOR_CAP and CAP (the most sweeps over the grid one run may take: 10000 for ssor, whose lexicographic sweeps are
#   the slowest on the GPU, 25000 for the others; a run stopped there is marked "cap"), BRACKETS (12: the paper's
#   bracketed column, MLSSOR sweeping forward only, for inputs 1 and 2; all; none), INPUTS (the inputs to run, default
#   "1 2 3"; the others are printed as not run: input 3 takes about 10^4 sweeps).
# The paper states neither its three inputs nor omega nor how its tolerance is measured; ours (the README says why):
#   input 1  --problem rough   (Laplace's equation from a random start in [0, 1))  tol 1e-3
#   input 2  --problem blocks  (from a random start of +-1 on 8 x 8 blocks)         tol 1e-3
#   input 3  --problem blocks                                                      tol 1e-6
# with the tolerance on ||f - A u|| / ||f||, the residual relative to the initial one. Counts are sweeps over the
# grid (an ssor iteration is 2, an mlssor one 2K; the residual is looked at after each iteration, so ssor's counts are
# even and MLSSOR's multiples of 2K); the paper's "iterations" are read as sweeps. Time: the solve's wall time
# (sweeps and the residual after each iteration, not the set-up and copies), and that time per sweep.
set -uo pipefail
if [[ $# -lt 1 ]]; then
  echo "usage: bench_sor_table2.sh BIN [N]" >&2
  exit 2
fi
SWGPU=$1
[[ -d $SWGPU ]] && SWGPU=$SWGPU/swgpu
N=${2:-8192}
BACKEND=${BACKEND:-gpu}
OMEGA=${OMEGA:-1.25}
SSOR_CAP=${SSOR_CAP:-10000}
CAP=${CAP:-25000}
BRACKETS=${BRACKETS:-12}
INPUTS=${INPUTS:-1 2 3}

problems=(rough blocks blocks)
tols=(1e-3 1e-3 1e-6)
# the paper's Table II, inputs 1 2 3; the bracketed numbers (forward sweeps only) after the slash
declare -A paper=(
  [ssor]="64 67 10214"
  [redblack]="78 70 10567"
  [4]="112/139 105/120 12769/13215"
  [8]="96/111 91/92 11463/12043"
  [16]="76/82 71/85 10735/10997"
  [32]="71/81 64/70 10447/10853"
)

# run INPUT METHOD_ARGS... -> "sweeps seconds state" (sweeps over the grid)
run() {
  local input=$1 cap_sweeps=$3  # $2, the sweeps of an iteration, is swgpu's business since it counts sweeps itself
  shift 3
  local line rc
  # exit code 6: stopped above the tolerance (the cap): the line is printed all the same
  line=$("$SWGPU" sor --problem "${problems[$input]}" --size "$N" --omega "$OMEGA" --tol "${tols[$input]}" \
      --max-sweeps "$cap_sweeps" --stagnation 0 --backend "$BACKEND" "$@" 2>/dev/null)
  rc=$?
  if (( rc != 0 && rc != 6 )); then
    echo "0 0 failed"
    echo "bench_sor_table2: swgpu sor --problem ${problems[$input]} $*: exit code $rc" >&2
    return
  fi
  # method M omega W n N sweeps S iterations I residual R STATE time T s ...
  echo "$line" | awk '{ state = $13 == "converged" ? "" : "cap"; printf "%d %s %s\n", $8, $15, state }'
}

cell() {  # sweeps seconds state -> "sweeps | ms per sweep | total s"
  awk -v s="$1" -v t="$2" -v st="${3:-}" 'BEGIN {
    if (st == "failed") { printf "failed | | "; exit }
    mark = st == "cap" ? " (cap, not converged)" : "";
    printf "%d%s | %.3f | %.2f", s, mark, (s > 0 ? 1000 * t / s : 0), t }'
}

start=$(date +%s)
echo "# Table II of the K-layer SSOR paper, N = $N, backend $BACKEND, omega $OMEGA, $("$SWGPU" --version 2>/dev/null | head -1)"
echo "# input 1: rough, tol 1e-3; input 2: blocks, tol 1e-3; input 3: blocks, tol 1e-6. Caps: ssor $SSOR_CAP sweeps, others $CAP."
header="| method |"
rule="|---|"
for input in 1 2 3; do
  header+=" input $input: paper | ours (sweeps) | ms/sweep | total s |"
  rule+="---|---|---|---|"
done
echo "$header"
echo "$rule"

row() {  # label paper_key per cap method args...
  local label=$1 key=$2 per=$3 cap=$4 which=$5
  shift 5
  local line="| $label |"
  for input in 0 1 2; do
    local p
    p=$(echo "${paper[$key]}" | awk -v i=$((input + 1)) '{ print $i }')
    if [[ " $INPUTS " != *" $((input + 1)) "* ]]; then
      [[ $which == forward ]] && p="(${p#*/})" || p=${p%/*}
      line+=" $p | not run | | |"
      continue
    fi
    if [[ $which == forward ]]; then
      p=${p#*/}
      if [[ $BRACKETS == none || ($BRACKETS == 12 && $input == 2) ]]; then
        line+=" ($p) | not run | | |"
        continue
      fi
      p="($p)"
    else
      p=${p%/*}
    fi
    # shellcheck disable=SC2046
    line+=" $p | $(cell $(run "$input" "$per" "$cap" "$@")) |"
  done
  echo "$line"
}

row "SSOR" ssor 2 "$SSOR_CAP" both --method ssor
row "RBSOR" redblack 1 "$CAP" both --method redblack
for m in 4 8 16 32; do
  k=$((m / 2))
  row "MLSSOR $k x $m x $m" "$m" $((2 * k)) "$CAP" both --method mlssor --subdomain "${m}x${m}" --layers "$k"
done
for m in 4 8 16 32; do
  k=$((m / 2))
  row "(MLSSOR $k x $m x $m, forward only)" "$m" $((2 * k)) "$CAP" forward --method mlssor --subdomain "${m}x${m}" \
    --layers "$k" --forward-only
done
echo "# $(( $(date +%s) - start )) s in all"
