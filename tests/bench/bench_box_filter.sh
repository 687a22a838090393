#!/usr/bin/env bash
# bench_box_filter.sh SWGPU_BIN [RUNS] [PYTHON]: `swgpu sat IN.npy --box-filter 5 -o OUT` against the same work in
# Python with NumPy and OpenCV, file to file, on the same machine and cores (docs/performance.md, "Box filter").
#   swgpu:  the whole process (started by the driver, wall clock), CPU backend, all hardware threads
#   OpenCV: np.load + cv2.boxFilter + np.save (or cv2.imwrite for .png) inside one Python process (its start and
#           imports not counted; cv2 uses its own threads)
# Inputs: 4096 x 4096 uint8 (uniform 0..255) and float32 (uniform [0, 1000)), generated once. Outputs .npy and .png
# (uint8 only), plus the PNG writer alone: `--box-filter 0` (the identity) to .png against cv2.imwrite of the array.
# Best of RUNS (default 7) for each, the two taking turns; outputs compared (uint8 identical; float32 max difference).
set -euo pipefail
BIN=$(readlink -f "$1")
RUNS=${2:-7}
PY=${3:-/usr/bin/python3}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
"$PY" - "$BIN" "$RUNS" "$DIR" <<'PYEOF'
import os, subprocess, sys, time
import numpy as np, cv2
binary, runs, d = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(1)
np.save(os.path.join(d, "u8.npy"), rng.integers(0, 256, (4096, 4096), dtype=np.uint8))
np.save(os.path.join(d, "f32.npy"), (rng.random((4096, 4096)) * 1000).astype(np.float32))
print("cv2 %s, %d threads; numpy %s; %d CPUs" % (cv2.__version__, cv2.getNumThreads(), np.__version__, os.cpu_count()))

def ours(src, r, dst):
    t = time.perf_counter()
    subprocess.run([binary, "sat", src, "--box-filter", str(r), "-o", dst, "--backend", "cpu", "-q"], check=True)
    return time.perf_counter() - t

def theirs(src, r, dst):
    t = time.perf_counter()
    a = np.load(src)
    b = cv2.boxFilter(a, -1, (2 * r + 1, 2 * r + 1)) if r > 0 else a
    if dst.endswith(".npy"):
        np.save(dst, b)
    else:
        cv2.imwrite(dst, b)
    return time.perf_counter() - t

for name, r, ext in [("u8", 5, "npy"), ("f32", 5, "npy"), ("u8", 5, "png"), ("u8", 0, "png")]:
    src = os.path.join(d, name + ".npy")
    a_out, b_out = os.path.join(d, "ours." + ext), os.path.join(d, "cv." + ext)
    ta, tb = [], []
    for _ in range(runs):
        ta.append(ours(src, r, a_out))
        tb.append(theirs(src, r, b_out))
    if ext == "npy":
        x, y = np.load(a_out), np.load(b_out)
    else:
        x, y = cv2.imread(a_out, cv2.IMREAD_UNCHANGED), cv2.imread(b_out, cv2.IMREAD_UNCHANGED)
    diff = np.abs(x.astype(np.float64) - y.astype(np.float64)).max()
    what = "--box-filter %d" % r if r else "PNG writer alone (identity)"
    print("%-4s %-28s -> .%s: swgpu %.1f ms (whole process), OpenCV %.1f ms (in-process), max |diff| %g, sizes %d / %d bytes"
          % (name, what, ext, 1e3 * min(ta), 1e3 * min(tb), diff, os.path.getsize(a_out), os.path.getsize(b_out)))
PYEOF
