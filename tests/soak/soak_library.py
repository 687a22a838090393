#!/usr/bin/env python3
"""soak_library.py [--calls N] [--threads T] [--backend B] [--db FASTA]: the library's resident database under load.

Three swgpu.Database objects (different settings: BLOSUM62 11/1, BLOSUM45 14/2 with E <= 1e-3, BLOSUM62 with SEG)
over one database (default data/demo_db.fa) are searched N times in all (default 10,000) from T threads (default 4),
each call with a random setting and a random query set drawn from a pool of 40 (random subsets of the demo queries
and random peptides of 20 to 400 residues). Every result must equal what a single swgpu.search call with the same
records and settings gives (computed once per pair of setting and query set beforehand). The process's resident
memory (VmRSS) and open file descriptors are read after a warm-up of 2 % of the calls and at the end: memory must
stay within 10 % (or 16 MB) and the descriptors must not grow. Prints one summary line; exit 1 on any failure.
Run with the build's module on the path: PYTHONPATH=build/python /usr/bin/python3 tests/soak/soak_library.py
"""
import argparse
import os
import random
import sys
import threading
import time

import swgpu

SETTINGS = [
    dict(matrix="BLOSUM62", gap_open=11, gap_extend=1, max_target_seqs=20),
    dict(matrix="BLOSUM45", gap_open=14, gap_extend=2, evalue=1e-3, max_target_seqs=50),
    dict(matrix="BLOSUM62", gap_open=11, gap_extend=1, seg=True, max_target_seqs=5),
]
AMINO = "ACDEFGHIKLMNPQRSTVWY"


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def as_tuples(hits):
    return [(h.qseqid, h.sseqid, h.score, h.evalue, h.qstart, h.qend, h.sstart, h.send, h.cigar) for h in hits]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--backend", default="auto")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--db", default=os.path.join(here, "..", "..", "data", "demo_db.fa"))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    demo = swgpu.read_sequences(os.path.join(here, "..", "..", "data", "demo_queries.fa"))
    pool = []
    for k in range(40):
        if k % 2 == 0:
            picked = rng.sample(demo, rng.randint(1, len(demo)))
            pool.append([(s.name, s.residues) for s in picked])
        else:
            pool.append([(f"random{k}_{j}", "".join(rng.choice(AMINO) for _ in range(rng.randint(20, 400))))
                         for j in range(rng.randint(1, 3))])
    common = dict(backend=args.backend, threads=1)
    databases = [swgpu.Database(args.db, **s, **common) for s in SETTINGS]
    expected = {(s, q): as_tuples(swgpu.search(pool[q], args.db, **SETTINGS[s], **common))
                for s in range(len(SETTINGS)) for q in range(len(pool))}
    warm = max(1, args.calls // 50)
    failures = []
    done = [0]
    lock = threading.Lock()
    marks = {}
    plan = [(rng.randrange(len(SETTINGS)), rng.randrange(len(pool))) for _ in range(args.calls)]
    next_call = [0]

    def worker():
        while True:
            with lock:
                k = next_call[0]
                if k >= len(plan):
                    return
                next_call[0] += 1
            s, q = plan[k]
            got = as_tuples(databases[s].search(pool[q]))
            with lock:
                if got != expected[(s, q)] and len(failures) < 5:
                    failures.append(f"call {k}: setting {s}, query set {q}: {len(got)} hits, expected "
                                    f"{len(expected[(s, q)])}")
                done[0] += 1
                if done[0] == warm:
                    marks["start"] = (rss_kib(), open_fds(), time.time())

    threads = [threading.Thread(target=worker) for _ in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    end_rss, end_fds = rss_kib(), open_fds()
    start_rss, start_fds, t0 = marks["start"]
    seconds = time.time() - t0
    grew = end_rss - start_rss
    memory_ok = grew <= max(start_rss // 10, 16 * 1024)
    fds_ok = end_fds <= start_fds
    print(f"soak_library: {args.calls} calls from {args.threads} threads ({seconds:.1f} s after the warm-up), "
          f"{len(failures)} differing results; VmRSS {start_rss} -> {end_rss} KiB "
          f"({'flat' if memory_ok else 'GREW'}), open descriptors {start_fds} -> {end_fds} "
          f"({'flat' if fds_ok else 'GREW'})")
    for f in failures:
        print("  " + f)
    return 0 if not failures and memory_ok and fds_ok else 1


if __name__ == "__main__":
    sys.exit(main())
