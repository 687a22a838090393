#!/usr/bin/env bash
# bench_sor.sh BIN_DIR [N_SWEEP] [N_TOL]: `swgpu sor` on the model problem.
#   per sweep: N_SWEEP^2 (default 8192), 64 sweeps of each method on the GPU (lex: two batches of sweeps run at once
#              at 8192) and 20 on the CPU (all cores), time per sweep (residual included: the run reports a residual
#              after every sweep) against the copy bound of a sweep (u read and written, f read: 24 bytes per point at
#              2995 GB/s)
#   to tolerance: N_TOL^2 (default 1024), tol 1e-8, each method on the GPU: sweeps and seconds (mlssor: K = 3 layers;
#   its sweeps count iterations of 2K sweeps)
#   BACKENDS="gpu" (or "cpu") measures one backend per sweep only
#   mlssor-4x4, mlssor-32x32: the K-layer paper's parallel MLSSOR (--subdomain, K = 2 and 16), per sweep only: an
#   iteration is 2K sweeps, so its time per iteration is divided by 2K (the line says both)
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
    line=$("$BIN/swgpu" sor --model "$NS" "${args[@]}" --tol 1e-300 --max-sweeps "$sweeps" --backend "$backend" -q)
    if [[ $m == mlssor-* ]]; then
      awk -v b="$backend" -v m="$m" -v n="$NS" -v line="$line" 'BEGIN {
        split(line, f, " "); s = f[8]; t = f[13]; k = f[16];
        printf "summary: sor %s N=%d %s: %.2f ms per iteration of %d sweeps, %.3f ms per sweep (%d iterations in %.3f s)\n",
          m, n, b, 1000 * t / s, 2 * k, 1000 * t / (s * 2 * k), s, t }'
      continue
    fi
    awk -v b="$backend" -v m="$m" -v n="$NS" -v line="$line" 'BEGIN {
      split(line, f, " "); s = f[8]; t = f[13];
      bound = 24.0 * n * n / 2995e9;
      printf "summary: sor %s N=%d %s: %.2f ms per sweep (%d sweeps in %.3f s), copy bound %.2f ms (%.1f %%)\n",
        m, n, b, 1000 * t / s, s, t, 1000 * bound, 100 * bound * s / t }'
  done
done
for m in lex redblack ssor mlssor; do
  omega=""
  [[ $m == ssor || $m == mlssor ]] && omega="--omega 1.9"
  # shellcheck disable=SC2086
  line=$("$BIN/swgpu" sor --model "$NT" --method "$m" $omega --tol 1e-8 --max-sweeps 20000 --backend gpu -q)
  echo "summary: sor to tolerance 1e-8, N=$NT, gpu: $line"
done
