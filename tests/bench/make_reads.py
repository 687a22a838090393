#!/usr/bin/env python3
"""make_reads.py GENOME_LENGTH READS READ_LENGTH OUT_PREFIX [--seed S] [--error RATE]

Writes OUT_PREFIX.genome.fa (a random DNA sequence) and OUT_PREFIX.reads.fa (READS reads of READ_LENGTH bases taken
from random positions of it, half of them reverse-complemented, with substitutions at RATE), for benchmarks of many
short queries against one long subject. Deterministic for a seed.
"""
import argparse
import random

COMPLEMENT = str.maketrans("ACGT", "TGCA")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("genome_length", type=int)
    ap.add_argument("reads", type=int)
    ap.add_argument("read_length", type=int)
    ap.add_argument("prefix")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--error", type=float, default=0.02)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    genome = "".join(rng.choices("ACGT", k=args.genome_length))
    with open(f"{args.prefix}.genome.fa", "w") as f:
        f.write(f">genome length={len(genome)} seed={args.seed}\n")
        for k in range(0, len(genome), 80):
            f.write(genome[k:k + 80] + "\n")
    with open(f"{args.prefix}.reads.fa", "w") as f:
        for r in range(args.reads):
            pos = rng.randrange(0, len(genome) - args.read_length)
            read = list(genome[pos:pos + args.read_length])
            for i in range(len(read)):
                if rng.random() < args.error:
                    read[i] = rng.choice("ACGT".replace(read[i], ""))
            s = "".join(read)
            strand = "+"
            if rng.random() < 0.5:
                s = s.translate(COMPLEMENT)[::-1]
                strand = "-"
            f.write(f">read{r} pos={pos} strand={strand}\n{s}\n")


if __name__ == "__main__":
    main()
