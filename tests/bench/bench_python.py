"""The Python package's cost over the work it calls (docs/performance.md, "The Python package").

    PYTHONPATH=build/python python3 tests/bench/bench_python.py --db DB.swdb --query ONE.fa [--size 16384] [--reps 10]

1. Database.search: one query against a database already loaded on the GPU (Database(db, backend="gpu")), the median
   of --reps calls after a first one, against the score kernels' device time of the same calls, which the library
   reports itself (SWGPU_TUNE=search.profile=1 makes each GPU search print "score X ms" on stderr; this script
   sets it and reads those lines back).
2. sat: a (size, size) uint8 array from NumPy to its uint64 table as a NumPy array (swgpu.sat(a, backend="gpu")),
   median of --reps, against one copy of the array to the device and one copy of a table-sized array back (CuPy,
   pageable NumPy memory as a NumPy user has it; skipped without CuPy) plus the table kernel's time from --sat-kernel-ms
   (bench_sat's median for the same size, run in the same job).
"""

import argparse
import os
import re
import statistics
import sys
import tempfile
import time

os.environ["SWGPU_TUNE"] = ",".join(x for x in (os.environ.get("SWGPU_TUNE", ""), "search.profile=1,sat.profile=1") if x)

import numpy  # noqa: E402

import swgpu  # noqa: E402


def timed(f, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times), min(times)


def with_stderr_to(path, f):
    """Runs f with file descriptor 2 (the library's stderr) written to `path`."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "w") as log:
        os.dup2(log.fileno(), 2)
        try:
            return f()
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def bench_search(db_path, query_path, reps):
    query = swgpu.read_sequences(query_path)[:1]
    t = time.perf_counter()
    db = swgpu.Database(db_path, backend="gpu")
    made = (time.perf_counter() - t) * 1e3
    first = timed(lambda: db.search(query), 1)[0]
    log = tempfile.mktemp(suffix=".log")
    median, best = with_stderr_to(log, lambda: timed(lambda: db.search(query), reps))
    text = open(log).read()
    os.unlink(log)

    def med(pattern):
        found = [float(x) for x in re.findall(pattern, text)]
        return statistics.median(found) if found else float("nan")

    score = re.findall(r"score ([0-9.]+)", text)
    kernel = med(r"score ([0-9.]+)")
    print("Database.search: %d records, %d residues; query %s (%d residues); made in %.0f ms, first search %.1f ms"
          % (len(db), db.residues, query[0].name, len(query[0].residues), made, first))
    print("Database.search: median %.1f ms (min %.1f) per call; score kernels %.1f ms per call (median of %d); "
          "ratio %.2f" % (median, best, kernel, len(score), median / kernel))
    print("Database.search, medians of the library's own report: GPU search with set-up and tear-down %.1f ms; "
          % med(r"GPU search in all ([0-9.]+) ms"), end="")
    print("GPU call %.1f ms (pack %.1f, select %.1f); "
          "pipeline scan %.1f ms, after it %.1f ms; library search %.1f ms, hits as the face's %.1f ms"
          % (med(r"total ([0-9.]+) ms"), med(r"pack ([0-9.]+) ms"), med(r"select ([0-9.]+)"),
             med(r"pipeline: scan ([0-9.]+) ms"), med(r"(?:then|finishing) ([0-9.]+) ms"),
             med(r"library search: ([0-9.]+) ms"), med(r"hits as the face's ([0-9.]+) ms")))


def bench_sat(size, reps, kernel_ms):
    rng = numpy.random.default_rng(1)
    a = rng.integers(0, 256, (size, size), dtype=numpy.uint8)
    swgpu.sat(a[:256, :256], backend="gpu")  # the device started
    try:
        import cupy
    except ImportError:
        cupy = None
    if cupy is not None:
        device_table = cupy.asarray(numpy.empty((size, size), dtype=numpy.uint64))
        cupy.cuda.Device().synchronize()

    def copies():
        d = cupy.asarray(a)
        back = cupy.asnumpy(device_table)
        cupy.cuda.Device().synchronize()
        return d, back

    # The two alternate, call by call: the copies' speed into fresh host memory drifts by tens of percent from run to
    # run, and alternating puts both under the same drift.
    ours, theirs = [], []
    for _ in range(reps):
        ours.append(timed(lambda: swgpu.sat(a, backend="gpu"), 1)[0])
        if cupy is not None:
            theirs.append(timed(copies, 1)[0])
    median = statistics.median(ours)
    print("sat %d^2 uint8 -> uint64: swgpu.sat median %.1f ms (min %.1f)" % (size, median, min(ours)))
    if cupy is None:
        print("sat: no CuPy here; the copies were not measured")
        return
    copy_median = statistics.median(theirs)
    bound = copy_median + kernel_ms
    print("sat: one copy each way (CuPy, pageable NumPy memory), alternating with it: median %.1f ms (min %.1f); "
          "+ kernel %.2f ms = %.1f ms; ratio %.2f" % (copy_median, min(theirs), kernel_ms, bound, median / bound))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db")
    p.add_argument("--query")
    p.add_argument("--size", type=int, default=16384)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--sat-kernel-ms", type=float, default=float("nan"))
    a = p.parse_args()
    if a.db and a.query:
        bench_search(a.db, a.query, a.reps)
    if a.size:
        bench_sat(a.size, a.reps, a.sat_kernel_ms)


if __name__ == "__main__":
    main()
