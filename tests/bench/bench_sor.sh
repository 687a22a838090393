#!/usr/bin/env bash
# bench_sor.sh BIN_DIR [N_SWEEP] [N_TOL]: `swgpu sor` on the rough problem (`--problem rough`: f = A w for w uniform
# in [0, 1), zero boundary). Not the model problem: its f is an eigenvector of A, so CG solves it in one iteration and
# it flatters no solver fairly; a sweep's time does not depend on f.
#   per sweep: N_SWEEP^2 (default 8192), 64 sweeps of each method on the GPU (lex: two batches of sweeps run at once
#              at 8192) and 20 on the CPU (all cores), time per sweep (residual included: the run reports a residual
#              after every sweep) against the copy bound of a sweep (u read and written, f read: 24 bytes per point at
#              2995 GB/s)
#   to tolerance: N_TOL^2 (default 1024), tol 1e-8, each method on the GPU: sweeps (over the grid: an ssor iteration
#   is 2, an mlssor one 2K with K = 3 layers), iterations and seconds
#   BACKENDS="gpu" (or "cpu") measures one backend per sweep only
#   mlssor-4x4, mlssor-32x32: the K-layer paper's parallel MLSSOR (--subdomain, K = 2 and 16), per sweep only
#   --max-sweeps counts sweeps; a run ends with the iteration that reaches it (mlssor-32x32: one iteration of 32)
set -uo pipefail
BIN=$1
NS=${2:-8192}
NT=${3:-1024}
for backend in ${BACKENDS:-gpu cpu}; do
  for m in lex redblack ssor mlssor mlssor-4x4 mlssor-32x32; do
    args=(--method "$m")
    [[ $m == mlssor-4x4 ]] && args=(--method mlssor --subdomain 4x4)
    [[ $m == mlssor-32x32 ]] && args=(--method mlssor --subdomain 32x32)
    sweeps=20
    [[ $backend == gpu ]] && sweeps=64
    line=$("$BIN/swgpu" sor --problem rough --size "$NS" "${args[@]}" --tol 1e-300 --max-sweeps "$sweeps" \
      --stagnation 0 --backend "$backend" -q)
    # stdout: method M omega W n N sweeps S iterations I residual R STATE time T s ...
    awk -v b="$backend" -v m="$m" -v n="$NS" -v line="$line" 'BEGIN {
      split(line, f, " "); s = f[8]; it = f[10]; t = f[15];
      bound = 24.0 * n * n / 2995e9;
      printf "summary: sor %s N=%d %s: %.3f ms per sweep (%d sweeps, %d iterations, in %.3f s), copy bound %.2f ms (%.1f %%)\n",
        m, n, b, 1000 * t / s, s, it, t, 1000 * bound, 100 * bound * s / t }'
  done
done
for m in lex redblack ssor mlssor; do
  omega=""
  [[ $m == ssor || $m == mlssor ]] && omega="--omega 1.9"
  # shellcheck disable=SC2086
  line=$("$BIN/swgpu" sor --problem rough --size "$NT" --method "$m" $omega --tol 1e-8 --max-sweeps 100000 --backend gpu -q)
  echo "summary: sor to tolerance 1e-8, N=$NT, gpu: $line"
done
