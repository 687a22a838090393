#!/usr/bin/env python3
"""make_long_pair.py LENGTH OUT_PREFIX [--seed S] [--sub RATE] [--indel-every N] [--max-indel L]

Writes OUT_PREFIX.a.fa (a random DNA sequence of LENGTH bases) and OUT_PREFIX.b.fa (a relative of it with known
edits: substitutions at RATE, an insertion or deletion of 1..L bases about every N bases), and OUT_PREFIX.edits.tsv
listing every edit (position in a, kind, length), for the long-pair tests and benchmarks. Deterministic for a seed.
"""
import argparse
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("length", type=int)
    ap.add_argument("prefix")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sub", type=float, default=0.05)
    ap.add_argument("--indel-every", type=int, default=10000)
    ap.add_argument("--max-indel", type=int, default=50)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    a = "".join(rng.choice("ACGT") for _ in range(args.length))
    b, edits = [], []
    i = 0
    while i < len(a):
        if args.indel_every > 0 and rng.random() < 1.0 / args.indel_every:
            n = rng.randint(1, args.max_indel)
            if rng.random() < 0.5:
                edits.append((i, "deletion", n))
                i += n
                continue
            edits.append((i, "insertion", n))
            b.extend(rng.choice("ACGT") for _ in range(n))
        c = a[i]
        if rng.random() < args.sub:
            c = rng.choice("ACGT".replace(c, ""))
            edits.append((i, "substitution", 1))
        b.append(c)
        i += 1
    for name, seq in (("a", a), ("b", "".join(b))):
        with open(f"{args.prefix}.{name}.fa", "w") as f:
            f.write(f">{name} length={len(seq)} seed={args.seed}\n")
            for k in range(0, len(seq), 80):
                f.write(seq[k:k + 80] + "\n")
    with open(f"{args.prefix}.edits.tsv", "w") as f:
        f.write("position_in_a\tkind\tlength\n")
        for e in edits:
            f.write(f"{e[0]}\t{e[1]}\t{e[2]}\n")


if __name__ == "__main__":
    main()
