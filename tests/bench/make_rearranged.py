#!/usr/bin/env python3
"""make_rearranged.py PIECE OUT_PREFIX [--seed S]

Writes OUT_PREFIX.g.fa (a random DNA genome of 12 pieces of PIECE bases) and OUT_PREFIX.r.fa (a relative of it with
pieces 2, 6 and 9 inverted and pieces 4 and 7 swapped: three inversions and two translocations), the shape of the
collinear-blocks test (tests/gpu/align/test_align_backends.cpp), for benchmarks of `--zdrop Z --max-hsps N` on long
pairs. Deterministic for a seed.
"""
import argparse
import random

ORDER = [0, 1, 2, 3, 7, 5, 6, 4, 8, 9, 10, 11]
INVERTED = {2, 6, 9}


def revcomp(s):
    return s[::-1].translate(str.maketrans("ACGT", "TGCA"))


def write(path, name, seq):
    with open(path, "w") as f:
        f.write(">" + name + "\n")
        for k in range(0, len(seq), 80):
            f.write(seq[k:k + 80] + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("piece", type=int)
    ap.add_argument("prefix")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    g = "".join(rng.choice("ACGT") for _ in range(12 * args.piece))
    pieces = [g[k * args.piece:(k + 1) * args.piece] for k in range(12)]
    r = "".join(revcomp(pieces[k]) if k in INVERTED else pieces[k] for k in ORDER)
    write(args.prefix + ".g.fa", "g", g)
    write(args.prefix + ".r.fa", "r", r)


if __name__ == "__main__":
    main()
