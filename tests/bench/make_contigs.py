#!/usr/bin/env python3
"""make_contigs.py OUT_PREFIX [--genome-length N] [--contigs C] [--total T] [--seed S] [--sub RATE] [--indel-every N]

Writes OUT_PREFIX.genome.fa (a random DNA "genome" of N bases, default 2.1 Mbp: a bacterial chromosome) and
OUT_PREFIX.contigs.fa (C contigs, default 47, of T bases in all, default 1.13 Mbp: the shape of a 454 assembly of a
relative), for the benchmark of many long-ish queries against one long subject. Contig lengths follow an assembly's
spread: log-normal, from 100 bases to about 130 kbp, scaled to the total. Each contig is a piece of the genome with
substitutions at RATE and an indel of 1..30 bases about every N bases, on the reverse strand for every other contig,
except every tenth contig, which is random (a contaminant: no alignment worth the name). Deterministic for a seed.
"""
import argparse
import math
import random


def mutate(rng, seq, sub, indel_every):
    out = []
    i = 0
    while i < len(seq):
        if indel_every > 0 and rng.random() < 1.0 / indel_every:
            n = rng.randint(1, 30)
            if rng.random() < 0.5:
                i += n
                continue
            out.extend(rng.choice("ACGT") for _ in range(n))
        c = seq[i]
        if rng.random() < sub:
            c = rng.choice("ACGT".replace(c, ""))
        out.append(c)
        i += 1
    return "".join(out)


def reverse_complement(seq):
    return seq[::-1].translate(str.maketrans("ACGT", "TGCA"))


def write_fasta(path, records):
    with open(path, "w") as f:
        for name, seq in records:
            f.write(f">{name}\n")
            for k in range(0, len(seq), 80):
                f.write(seq[k:k + 80] + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("prefix")
    ap.add_argument("--genome-length", type=int, default=2_100_000)
    ap.add_argument("--contigs", type=int, default=47)
    ap.add_argument("--total", type=int, default=1_130_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sub", type=float, default=0.02)
    ap.add_argument("--indel-every", type=int, default=2000)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    genome = "".join(rng.choice("ACGT") for _ in range(args.genome_length))
    # Log-normal lengths (median about 12 kbp, a long tail), clipped to [100, 130000], scaled to the total.
    raw = [min(max(math.exp(rng.gauss(math.log(12000), 1.2)), 100), 130000) for _ in range(args.contigs)]
    scale = args.total / sum(raw)
    lengths = [max(100, min(int(r * scale), args.genome_length // 2)) for r in raw]
    contigs = []
    for k, n in enumerate(lengths):
        if k % 10 == 9:
            seq = "".join(rng.choice("ACGT") for _ in range(n))
            what = "random"
        else:
            at = rng.randrange(0, args.genome_length - n)
            seq = mutate(rng, genome[at:at + n], args.sub, args.indel_every)
            what = f"genome:{at}-{at + n}"
            if k % 2:
                seq = reverse_complement(seq)
                what += ":minus"
        contigs.append((f"contig{k + 1} length={len(seq)} from={what}", seq))
    write_fasta(f"{args.prefix}.genome.fa", [(f"genome length={len(genome)} seed={args.seed}", genome)])
    write_fasta(f"{args.prefix}.contigs.fa", contigs)
    print(f"{len(contigs)} contigs, {sum(len(s) for _, s in contigs)} bases in all "
          f"({min(len(s) for _, s in contigs)}..{max(len(s) for _, s in contigs)}); genome {len(genome)} bases")


if __name__ == "__main__":
    main()
