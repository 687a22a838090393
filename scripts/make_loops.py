#!/usr/bin/env python3
"""Indirect loops for `swgpu levels`: the workloads of Table 2 of Anantpur & Govindarajan (CGO 2013) as index arrays.

  make_loops.py WORKLOAD -o DIR [--size small|medium|paper] [--seed S]
  make_loops.py --list

Every workload is one or more loops ("kernels") over one array A, run in order, each kernel starting from the array
the previous one left:

    for i in 0..n-1:   A[W[i]] = f(A[R[i][0]], ..., A[R[i][k-1]])

DIR receives A0.npy (float64, the initial array), for each kernel K the index arrays K.W.npy (n,) and K.R.npy (n, k)
(int32), and loop.tsv, one line per kernel in order: kernel, writes file, reads file, body, coefficients (comma
separated; '-' for none), i.e. the arguments of

    swgpu levels --writes DIR/K.W.npy --reads DIR/K.R.npy --array A.npy --body BODY [--coefficients C] -o A.npy

The arrays of a benchmark with several arrays lie one after the other in A (the offsets below); a read or write of
one of them is a read or write of A, so every access is monitored for dependences, as the paper monitors them.
Bodies are those of `swgpu levels` (sum, fmod, wsum, dot); reads are listed in the order the body folds them.

  randAcc    n = m: A[W[i]] = fmod(A[R[i]] + 1, 1021), W and R uniform on [0, m) (synthetic, with conflicts)
  randAcc3   the same with three reads: fmod(A[R0] + A[R1] + A[R2] + 1, 1021)
  doAll      A[i] = A[i] + 1 (sum): no conflicts, one level
  2dconv     PolyBench 2DConvolution on N x N: A at 0, B at N^2; for 1 <= i, j <= N-2:
             B[i][j] = c11 A[i-1][j-1] + c12 A[i][j-1] + c13 A[i+1][j-1] + c21 A[i-1][j] + c22 A[i][j] + c23 A[i+1][j]
                     + c31 A[i-1][j+1] + c32 A[i][j+1] + c33 A[i+1][j+1]         (wsum, 9 reads)
             c11..c33 = 0.2, -0.3, 0.4, 0.5, 0.6, 0.7, -0.8, -0.9, 0.1 (PolyBench/GPU's values)
  fdtd-2d    PolyBench fdtd-2d on NX = NY = N, one time step (three kernels): ex (N x N+1) at 0, ey (N+1 x N) at
             E = N(N+1), hz (N x N) at 2E;
               ey: 1 <= i < N, j < N:  ey[i][j] = ey[i][j] - 0.5 hz[i][j] + 0.5 hz[i-1][j]          (wsum, 3 reads)
               ex: i < N, 1 <= j < N:  ex[i][j] = ex[i][j] - 0.5 hz[i][j] + 0.5 hz[i][j-1]          (wsum, 3 reads)
               hz: i < N, j < N:       hz[i][j] = hz[i][j] - 0.7 ex[i][j+1] + 0.7 ex[i][j]
                                                           - 0.7 ey[i+1][j] + 0.7 ey[i][j]          (wsum, 5 reads)
             (PolyBench's a - 0.5 (b - c) as a weighted sum; its source row ey[0][j] = fict[t] is left out: row 0
             of ey keeps its initial values)
  gemm       PolyBench gemm on N x N: C at 0, A at N^2, B at 2 N^2; iteration (i, j):
             C[i][j] = beta C[i][j] + sum_k (alpha A[i][k]) B[k][j]   (dot, 1 + 2N reads: C[i][j], A[i][0], B[0][j],
             A[i][1], B[1][j], ...; alpha = 32412, beta = 2123 as in PolyBench/GPU)
  mvt        PolyBench mvt on N x N (two kernels): a at 0, x1, x2, y1, y2 (N each) after it;
               x1: x1[i] = x1[i] + sum_j a[i][j] y1[j];   x2: x2[i] = x2[i] + sum_j a[j][i] y2[j]
             (dot with alpha = beta = 1: the same operations as PolyBench's loops)

Sizes (n iterations per kernel, as the paper's Table 1 at --size paper):
  paper:  randAcc, randAcc3, doAll n = 2^26 (64M); 2dconv N = 8192; fdtd-2d N = 8000; gemm N = 1024; mvt N = 4096
  medium: n = 2^22; 2dconv 2048; fdtd-2d 2000; gemm 256; mvt 1024
  small:  n = 4096; 2dconv 48; fdtd-2d 40; gemm 16; mvt 48      (what the tests use)
Initial values: uniform on [0, 1) (randAcc, randAcc3: integers in [0, 1021)), from --seed (default 1).
Large index arrays are written in chunks through memory maps: gemm at the paper's size writes an 8.6 GB R.
"""
import argparse
import os
import sys

try:
    import numpy as np
except ImportError:  # pragma: no cover
    sys.exit("make_loops.py: numpy is required")

SIZES = {
    "small": {"randAcc": 4096, "randAcc3": 4096, "doAll": 4096, "2dconv": 48, "fdtd-2d": 40, "gemm": 16, "mvt": 48},
    "medium": {"randAcc": 1 << 22, "randAcc3": 1 << 22, "doAll": 1 << 22, "2dconv": 2048, "fdtd-2d": 2000,
               "gemm": 256, "mvt": 1024},
    "paper": {"randAcc": 1 << 26, "randAcc3": 1 << 26, "doAll": 1 << 26, "2dconv": 8192, "fdtd-2d": 8000,
              "gemm": 1024, "mvt": 4096},
}
WORKLOADS = ["randAcc", "randAcc3", "doAll", "2dconv", "fdtd-2d", "gemm", "mvt"]
CONV = [0.2, -0.3, 0.4, 0.5, 0.6, 0.7, -0.8, -0.9, 0.1]  # c11, c12, c13, c21, c22, c23, c31, c32, c33
GEMM_ALPHA, GEMM_BETA = 32412.0, 2123.0
CHUNK = 1 << 24  # index elements generated at a time


class Kernel:
    """n iterations of k reads; rows(lo, hi) gives (W, R) of iterations lo..hi-1 as int64 arrays."""

    def __init__(self, name, n, k, body, coefficients, rows):
        self.name, self.n, self.k, self.body, self.coefficients, self.rows = name, n, k, body, coefficients, rows


def grid_rows(i0, i1, j0, j1, make):
    """Kernel rows over the grid i0 <= i < i1, j0 <= j < j1 in row-major order: make(i, j) -> (W, R)."""
    cols = j1 - j0

    def rows(lo, hi):
        it = np.arange(lo, hi, dtype=np.int64)
        return make(i0 + it // cols, j0 + it % cols)

    return (i1 - i0) * cols, rows


def workload(name, size, rng):
    """(locations, initial array, kernels)."""
    s = SIZES[size][name]
    if name in ("randAcc", "randAcc3"):
        n = m = s
        k = 1 if name == "randAcc" else 3

        def rows(lo, hi):
            return rng.integers(0, m, hi - lo), rng.integers(0, m, (hi - lo, k))

        a0 = rng.integers(0, 1021, m).astype(np.float64)
        return m, a0, [Kernel("loop", n, k, "fmod", None, rows)]
    if name == "doAll":
        n = m = s

        def rows(lo, hi):
            it = np.arange(lo, hi, dtype=np.int64)
            return it, it[:, None]

        return m, rng.random(m), [Kernel("loop", n, 1, "sum", None, rows)]
    if name == "2dconv":
        N = s
        B = N * N

        def make(i, j):
            cols = [(i - 1, j - 1), (i, j - 1), (i + 1, j - 1), (i - 1, j), (i, j), (i + 1, j), (i - 1, j + 1), (i, j + 1),
                    (i + 1, j + 1)]
            return B + i * N + j, np.stack([a * N + b for a, b in cols], axis=1)

        n, rows = grid_rows(1, N - 1, 1, N - 1, make)
        a0 = np.concatenate([rng.random(N * N), np.zeros(N * N)])
        return 2 * N * N, a0, [Kernel("conv", n, 9, "wsum", CONV, rows)]
    if name == "fdtd-2d":
        N = s
        E = N * (N + 1)

        def ex(i, j):
            return i * (N + 1) + j

        def ey(i, j):
            return E + i * N + j

        def hz(i, j):
            return 2 * E + i * N + j

        n1, r1 = grid_rows(1, N, 0, N, lambda i, j: (ey(i, j), np.stack([ey(i, j), hz(i, j), hz(i - 1, j)], axis=1)))
        n2, r2 = grid_rows(0, N, 1, N, lambda i, j: (ex(i, j), np.stack([ex(i, j), hz(i, j), hz(i, j - 1)], axis=1)))
        n3, r3 = grid_rows(0, N, 0, N, lambda i, j: (hz(i, j), np.stack(
            [hz(i, j), ex(i, j + 1), ex(i, j), ey(i + 1, j), ey(i, j)], axis=1)))
        locations = 2 * E + N * N
        return locations, rng.random(locations), [
            Kernel("ey", n1, 3, "wsum", [1.0, -0.5, 0.5], r1),
            Kernel("ex", n2, 3, "wsum", [1.0, -0.5, 0.5], r2),
            Kernel("hz", n3, 5, "wsum", [1.0, -0.7, 0.7, -0.7, 0.7], r3),
        ]
    if name == "gemm":
        N = s
        kk = np.arange(N, dtype=np.int64)

        def make(i, j):
            r = np.empty((len(i), 1 + 2 * N), dtype=np.int64)
            r[:, 0] = i * N + j
            r[:, 1::2] = N * N + i[:, None] * N + kk[None, :]
            r[:, 2::2] = 2 * N * N + kk[None, :] * N + j[:, None]
            return i * N + j, r

        n, rows = grid_rows(0, N, 0, N, make)
        return 3 * N * N, rng.random(3 * N * N), [Kernel("gemm", n, 1 + 2 * N, "dot", [GEMM_ALPHA, GEMM_BETA], rows)]
    if name == "mvt":
        N = s
        x1, x2, y1, y2 = N * N, N * N + N, N * N + 2 * N, N * N + 3 * N
        jj = np.arange(N, dtype=np.int64)

        def kernel(x, y, transposed):
            def rows(lo, hi):
                i = np.arange(lo, hi, dtype=np.int64)
                r = np.empty((hi - lo, 1 + 2 * N), dtype=np.int64)
                r[:, 0] = x + i
                r[:, 1::2] = (jj[None, :] * N + i[:, None]) if transposed else (i[:, None] * N + jj[None, :])
                r[:, 2::2] = y + jj[None, :]
                return x + i, r

            return rows

        locations = N * N + 4 * N
        return locations, rng.random(locations), [
            Kernel("x1", N, 1 + 2 * N, "dot", [1.0, 1.0], kernel(x1, y1, False)),
            Kernel("x2", N, 1 + 2 * N, "dot", [1.0, 1.0], kernel(x2, y2, True)),
        ]
    raise ValueError(name)


def write(kernel, locations, out):
    wpath = os.path.join(out, kernel.name + ".W.npy")
    rpath = os.path.join(out, kernel.name + ".R.npy")
    w = np.lib.format.open_memmap(wpath, mode="w+", dtype=np.int32, shape=(kernel.n,))
    r = np.lib.format.open_memmap(rpath, mode="w+", dtype=np.int32, shape=(kernel.n, kernel.k))
    step = max(1, CHUNK // max(kernel.k, 1))
    for lo in range(0, kernel.n, step):
        hi = min(kernel.n, lo + step)
        wi, ri = kernel.rows(lo, hi)
        ri = np.asarray(ri).reshape(hi - lo, kernel.k)
        assert wi.min() >= 0 and wi.max() < locations and ri.min() >= 0 and ri.max() < locations
        w[lo:hi] = wi
        r[lo:hi] = ri
    w.flush()
    r.flush()
    del w, r
    return os.path.basename(wpath), os.path.basename(rpath)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("workload", nargs="?", choices=WORKLOADS)
    ap.add_argument("-o", "--out", help="output folder (created)")
    ap.add_argument("--size", choices=sorted(SIZES), default="paper")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--list", action="store_true", help="print the workloads and their sizes")
    args = ap.parse_args()
    if args.list:
        for w in WORKLOADS:
            print(w + "\t" + "\t".join("%s=%d" % (s, SIZES[s][w]) for s in ("small", "medium", "paper")))
        return
    if not args.workload or not args.out:
        ap.error("give a WORKLOAD and -o DIR (or --list)")
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    locations, a0, kernels = workload(args.workload, args.size, rng)
    assert len(a0) == locations
    np.save(os.path.join(args.out, "A0.npy"), np.ascontiguousarray(a0, dtype=np.float64))
    lines = []
    for kern in kernels:
        wname, rname = write(kern, locations, args.out)
        coef = ",".join(repr(float(c)) for c in kern.coefficients) if kern.coefficients else "-"
        lines.append("\t".join([kern.name, wname, rname, kern.body, coef]))
    with open(os.path.join(args.out, "loop.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    total = sum(k.n for k in kernels)
    print("%s (%s): %d locations, %d kernel(s), %d iterations, %s" % (
        args.workload, args.size, locations, len(kernels), total,
        ", ".join("%s: n=%d k=%d %s" % (k.name, k.n, k.k, k.body) for k in kernels)))


if __name__ == "__main__":
    main()
