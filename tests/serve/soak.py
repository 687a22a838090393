#!/usr/bin/env python3
"""A soak of `swgpu serve`: N searches from 4 clients (half over kept-alive connections, half a connection each), every
answer checked byte for byte against `swgpu align`, and the server's resident memory and open descriptors sampled
after a warm-up (10 % of the requests) and at the end: neither may grow (RSS by at most 10 % + 4 MiB, descriptors by
at most 2). Python's standard library only.

    soak.py SWGPU_BINARY SOURCE_DIR N [--threads T]

The database is the first 100 records of data/demo_db.fa (a search costs about a millisecond: the soak measures the
service, not the search). Prints the numbers; exit 1 on any failure.
"""
import http.client
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

BIN, SRC, N = sys.argv[1], sys.argv[2], int(sys.argv[3])
THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 4


def records(path, n):
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith(">"):
                if len(out) == n:
                    break
                out.append([line[1:].split()[0], ""])
            elif line.strip():
                out[-1][1] += line.strip()
    return out


def proc_facts(pid):
    with open("/proc/%d/status" % pid) as f:
        rss = int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))
    return rss, len(os.listdir("/proc/%d/fd" % pid))


def main():
    work = tempfile.mkdtemp()
    db = os.path.join(work, "db.fa")
    recs = records(os.path.join(SRC, "data", "demo_db.fa"), 100)
    with open(db, "w") as f:
        f.write("".join(">%s\n%s\n" % (n, s) for n, s in recs))
    rng = random.Random(5)
    pool = []
    for k in range(50):
        seq = rng.choice(recs)[1]
        start = rng.randint(0, max(0, len(seq) - 60))
        pool.append(("p%02d" % k, seq[start:start + rng.randint(20, 60)]))
    qf = os.path.join(work, "q.fa")
    with open(qf, "w") as f:
        f.write("".join(">%s\n%s\n" % r for r in pool))
    out = subprocess.run([BIN, "align", qf, db, "--backend", "cpu"], check=True, stdout=subprocess.PIPE).stdout
    expected = {n: b"" for n, _ in pool}
    for line in out.splitlines(keepends=True):
        expected[line.split(b"\t", 1)[0].decode()] += line
    server = subprocess.Popen([BIN, "serve", db, "--listen", "127.0.0.1:0", "--backend", "cpu", "-t", "1",
                               "--batch-wait", "1"], stderr=subprocess.PIPE, text=True)
    port = int(re.search(r":(\d+) *$", server.stderr.readline().strip()).group(1))
    threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
    failures = []
    lock = threading.Lock()

    def client(count, seed, keep_alive):
        r = random.Random(seed)
        conn = None
        for _ in range(count):
            name, seq = r.choice(pool)
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                conn.request("POST", "/search", body=(">%s\n%s\n" % (name, seq)).encode(),
                             headers={"Accept": "text/tab-separated-values", "Content-Type": "text/x-fasta"})
                resp = conn.getresponse()
                body = resp.read()
                if resp.status != 200 or body != expected[name]:
                    with lock:
                        failures.append("%s: status %d, %d bytes" % (name, resp.status, len(body)))
            except Exception as e:  # noqa: BLE001
                with lock:
                    failures.append("%s: %r" % (name, e))
                conn = None
            if not keep_alive and conn is not None:
                conn.close()
                conn = None
        if conn is not None:
            conn.close()

    def phase(total, seed):
        per = [total // THREADS + (1 if k < total % THREADS else 0) for k in range(THREADS)]
        ts = [threading.Thread(target=client, args=(per[k], seed * 100 + k, k % 2 == 0)) for k in range(THREADS)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        time.sleep(0.5)

    started = time.time()
    warm = max(1, N // 10)
    phase(warm, 1)
    rss0, fds0 = proc_facts(server.pid)
    phase(N - warm, 2)
    rss1, fds1 = proc_facts(server.pid)
    elapsed = time.time() - started
    server.send_signal(signal.SIGTERM)
    code = server.wait(timeout=60)
    print("%d requests from %d clients in %.1f s (%.0f per second); server RSS %.1f MiB after %d, %.1f MiB after %d; "
          "open descriptors %d and %d; exit code %d" % (N, THREADS, elapsed, N / elapsed, rss0 / 1024, warm,
                                                       rss1 / 1024, N, fds0, fds1, code))
    for f in failures[:10]:
        print("FAIL:", f)
    ok = not failures and code == 0 and rss1 <= rss0 * 1.10 + 4096 and fds1 <= fds0 + 2
    if not ok:
        print("FAIL: %d failed requests; RSS %d -> %d kB; descriptors %d -> %d; exit %d" %
              (len(failures), rss0, rss1, fds0, fds1, code))
        sys.exit(1)
    print("ok")


main()
