#!/usr/bin/env python3
"""Test matrices for `swgpu levels`, as Matrix Market files (plain Python 3, no numpy).

  make_matrices.py lap2d NX NY -o A.mtx [--values ic0|laplacian]      lower factor of the 2-D 5-point Laplacian
  make_matrices.py lap3d NX NY NZ -o A.mtx [--values ic0|laplacian]   lower factor of the 3-D 7-point Laplacian
  make_matrices.py banded N BW -o A.mtx                               lower triangle of bandwidth BW (all diagonals)
  make_matrices.py random N LEVELS -o A.mtx [--deps D] [--seed S] [--integer]
                                                                      random lower triangle with exactly LEVELS levels
  make_matrices.py rhs N -o B.npy [--seed S]                          a float64 .npy vector of N values in [-1, 1)

Every matrix is written "coordinate real general" with the lower triangle and the diagonal only, rows numbered in
the natural (lexicographic) order of the grid. Laplacians: the operator is 4 (2-D) or 6 (3-D) on the diagonal and -1
for each grid neighbour. --values ic0 (the default) writes the incomplete-Cholesky factor L with zero fill-in (IC(0)):
on these stencils no two lower neighbours of a row share a lower neighbour, so L[i][j] = a_ij / L[j][j] and
L[i][i] = sqrt(a_ii - sum_j L[i][j]^2) exactly; --values laplacian writes the lower triangle of the operator itself.
Both have the same sparsity, hence the same levels (nx + ny - 1 for 2-D, nx + ny + nz - 2 for 3-D).
random: rows are sorted by level; a row of level l > 1 reads one row of level l - 1 and D - 1 more rows of lower
levels (drawn at random, repeats dropped); --integer gives off-diagonal values of +-1 and a unit diagonal, so a solve
with integer b is exact in float64 while |x| < 2^53.
"""
import argparse
import math
import random
import struct
import sys


def write_mtx(path, n, rows, comment):
    """rows[i] = list of (j, value) with j <= i, j ascending, diagonal last."""
    nnz = sum(len(r) for r in rows)
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write("% " + comment + "\n")
        f.write("%d %d %d\n" % (n, n, nnz))
        out = []
        for i, r in enumerate(rows):
            for j, v in r:
                out.append("%d %d %s\n" % (i + 1, j + 1, repr(float(v)) if not float(v).is_integer() else "%d" % v))
            if len(out) > 100000:
                f.write("".join(out))
                out = []
        f.write("".join(out))


def laplacian(dims, values):
    strides = []
    s = 1
    for d in dims:
        strides.append(s)
        s *= d
    n = s
    diag_a = 2.0 * len(dims)
    rows = []
    ldiag = [0.0] * n
    for i in range(n):
        coord = []
        rem = i
        for d in dims:
            coord.append(rem % d)
            rem //= d
        lower = []
        # lower neighbours in ascending column order: the largest stride first
        for axis in reversed(range(len(dims))):
            if coord[axis] > 0:
                lower.append(i - strides[axis])
        if values == "laplacian":
            rows.append([(j, -1) for j in lower] + [(i, int(diag_a))])
        else:
            entries = [(j, -1.0 / ldiag[j]) for j in lower]
            d = math.sqrt(diag_a - sum(v * v for _, v in entries))
            ldiag[i] = d
            rows.append(entries + [(i, d)])
    return n, rows


def banded(n, bw):
    rows = []
    for i in range(n):
        r = [(j, -1.0 / (i - j + 1)) for j in range(max(0, i - bw), i)]
        r.append((i, float(bw + 1)))
        rows.append(r)
    return rows


def random_levels(n, levels, deps, seed, integer):
    if levels < 1 or levels > n:
        sys.exit("make_matrices.py: LEVELS must be in 1..N")
    rng = random.Random(seed)
    # every level non-empty: one row each, the rest spread at random
    lv = list(range(1, levels + 1)) + [rng.randint(1, levels) for _ in range(n - levels)]
    lv.sort()
    first = {}
    for i, l in enumerate(lv):
        first.setdefault(l, i)
    rows = []
    for i, l in enumerate(lv):
        cols = set()
        if l > 1:
            cols.add(rng.randrange(first[l - 1], first[l]))  # a row of level l - 1
            for _ in range(deps - 1):
                cols.add(rng.randrange(0, first[l]))
        entries = []
        for j in sorted(cols):
            entries.append((j, rng.choice((-1, 1)) if integer else rng.uniform(-1, 1)))
        entries.append((i, 1 if integer else rng.uniform(1, 2)))
        rows.append(entries)
    return rows


def write_npy_f64(path, values):
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    total = (10 + len(header) + 1 + 63) // 64 * 64
    header = header + " " * (total - 10 - len(header) - 1) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%dd" % len(values), *values))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=["lap2d", "lap3d", "banded", "random", "rhs"])
    p.add_argument("sizes", type=int, nargs="+")
    p.add_argument("-o", "--out", required=True)
    p.add_argument("--values", choices=["ic0", "laplacian"], default="ic0")
    p.add_argument("--deps", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--integer", action="store_true")
    a = p.parse_args()
    need = {"lap2d": 2, "lap3d": 3, "banded": 2, "random": 2, "rhs": 1}[a.kind]
    if len(a.sizes) != need:
        sys.exit("make_matrices.py: %s takes %d sizes" % (a.kind, need))
    if a.kind in ("lap2d", "lap3d"):
        n, rows = laplacian(a.sizes, a.values)
        write_mtx(a.out, n, rows, "%s %s, %s lower factor" % (a.kind, "x".join(map(str, a.sizes)), a.values))
    elif a.kind == "banded":
        n, bw = a.sizes
        write_mtx(a.out, n, banded(n, bw), "banded lower triangle, bandwidth %d" % bw)
    elif a.kind == "random":
        n, levels = a.sizes
        write_mtx(a.out, n, random_levels(n, levels, a.deps, a.seed, a.integer),
                  "random lower triangle, %d levels, %d dependences per row, seed %d" % (levels, a.deps, a.seed))
    else:
        rng = random.Random(a.seed)
        write_npy_f64(a.out, [rng.uniform(-1, 1) for _ in range(a.sizes[0])])


if __name__ == "__main__":
    main()
