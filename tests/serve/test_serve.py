#!/usr/bin/env python3
"""`swgpu serve` against `swgpu align` (docs/serve.md), with Python's standard library only.

    test_serve.py SWGPU_BINARY SOURCE_DIR PART

PART: equality (1,000 random queries from 16 concurrent clients, each answer byte for byte the slice of one local
`swgpu align` run over all of them, under two settings at once; JSON answers against the same run), abuse (truncated
bodies, binary junk, huge headers, slow clients, wrong methods, 2,000 idle connections, while a well-behaved client's
answers stay exact), signal (SIGTERM with a request in flight: answered, exit 0), limits (token, body, queries,
residues, connections, queue, timeout). Exit 0 when every check holds, 1 with the failures listed.
"""
import concurrent.futures
import http.client
import json
import os
import random
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from blast_text import format_bit_score, format_evalue  # noqa: E402 (the tests' one copy of the formats)

BIN, SRC, PART = sys.argv[1], sys.argv[2], sys.argv[3]
DB = os.path.join(SRC, "data", "demo_db.fa")
failures = []
started = []  # servers, killed if the test ends early


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what, flush=True)


def read_fasta(path):
    records, name = [], None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith(">"):
                name = line[1:].split()[0]
                records.append([name, ""])
            elif line:
                records[-1][1] += line
    return records


def random_queries(n, seed):
    """Pieces of the database's records (lengths 20..120), ~10 % of residues changed, and every 5th query random."""
    rng = random.Random(seed)
    db = read_fasta(DB)
    letters = "ACDEFGHIKLMNPQRSTVWY"
    out = []
    for k in range(n):
        length = rng.randint(20, 120)
        if k % 5 == 4:
            seq = "".join(rng.choice(letters) for _ in range(length))
        else:
            rec = rng.choice(db)[1]
            start = rng.randint(0, max(0, len(rec) - length))
            seq = list(rec[start:start + length])
            for i in range(len(seq)):
                if rng.random() < 0.1:
                    seq[i] = rng.choice(letters)
            seq = "".join(seq)
        out.append(("q%04d" % k, seq))
    return out


def fasta(records):
    return "".join(">%s\n%s\n" % r for r in records)


class server:
    def __init__(self, *args, db=DB):
        self.proc = subprocess.Popen([BIN, "serve", db, "--listen", "127.0.0.1:0", "--backend", "cpu", *args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        started.append(self.proc)
        line = self.proc.stderr.readline()
        m = re.search(r"on http://127\.0\.0\.1:(\d+)", line)
        if not m:
            raise SystemExit("the server did not start: " + line + self.proc.stderr.read())
        self.port = int(m.group(1))
        self.log = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stderr:
            self.log.append(line)

    def request(self, method, path, body=None, headers=None, timeout=120):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, r.read(), dict(r.getheaders())
        finally:
            c.close()

    def search_tsv(self, records, settings=None, headers=None):
        path = "/search"
        if settings:
            path += "?" + urllib.parse.urlencode(settings)
        h = {"Accept": "text/tab-separated-values", "Content-Type": "text/x-fasta"}
        h.update(headers or {})
        return self.request("POST", path, fasta(records).encode(), h)

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return -999


def align(records, *args, db=DB):
    with tempfile.NamedTemporaryFile("w", suffix=".fa", delete=False) as f:
        f.write(fasta(records))
        path = f.name
    try:
        return subprocess.run([BIN, "align", path, db, "--backend", "cpu", "-q", *args], check=True,
                              stdout=subprocess.PIPE).stdout
    finally:
        os.unlink(path)


def by_query(tsv_bytes, names, commented=False):
    """The bytes of each query's part of one run's output (format 6: its lines; 7: its block)."""
    parts = {n: b"" for n in names}
    if commented:  # blocks, without the run's last line ("# swgpu processed N queries")
        tsv_bytes = re.sub(rb"^# swgpu processed \d+ queries\n\Z", b"", tsv_bytes, flags=re.M)
        blocks = re.split(rb"(?=^# swgpu \d)", tsv_bytes, flags=re.M)
        for b in blocks:
            m = re.search(rb"^# Query: (\S+)", b, flags=re.M)
            if m:
                parts[m.group(1).decode()] += b
        return parts
    for line in tsv_bytes.splitlines(keepends=True):
        parts[line.split(b"\t", 1)[0].decode()] += line
    return parts


def dna_data(work, n, seed):
    """The lambda phage genome cut into 100 records (the database), and `n` pieces of it (30..150 bp) as queries: half
    reverse-complemented, ~5 % of bases changed, some with IUPAC codes (R, Y, N) or in lower case."""
    import gzip
    with gzip.open(os.path.join(SRC, "data", "lambda_phage.fa.gz"), "rt") as f:
        genome = "".join(l.strip() for l in f if not l.startswith(">"))
    step = len(genome) // 100
    db = os.path.join(work, "lambda.fa")
    with open(db, "w") as f:
        for k in range(100):
            f.write(">part%02d\n%s\n" % (k, genome[k * step:(k + 1) * step]))
    rng = random.Random(seed)
    comp = {"A": "T", "C": "G", "G": "C", "T": "A"}
    queries = []
    for k in range(n):
        length = rng.randint(30, 150)
        start = rng.randint(0, len(genome) - length)
        seq = [c if rng.random() > 0.05 else rng.choice("ACGT") for c in genome[start:start + length]]
        if k % 2:
            seq = [comp[c] for c in reversed(seq)]
        if k % 7 == 3:
            for _ in range(3):
                seq[rng.randrange(len(seq))] = rng.choice("RYN")
        seq = "".join(seq)
        queries.append(("d%04d" % k, seq.lower() if k % 11 == 5 else seq))
    return db, queries


def equality_phase(db, queries, kinds, clients=16):
    """Requests of 1 to 3 queries under the settings of `kinds` (name -> (align's options, the request's settings,
    JSON too[, the first queries it applies to])), from `clients` at once; each answer against the slice of one align
    run per kind."""
    names = [n for n, _ in queries]
    expected = {}
    reach = {kind: (v[3] if len(v) > 3 else len(queries)) for kind, v in kinds.items()}
    for kind, (args, *_) in kinds.items():
        expected[kind] = by_query(align(queries[:reach[kind]], *args, db=db), names[:reach[kind]],
                                  commented="7" in args)
    s = server("-t", "2", db=db)
    rng = random.Random(7)
    jobs, k = [], 0
    while k < len(queries):
        n = min(rng.randint(1, 3), len(queries) - k)
        kind = rng.choice([kind for kind in kinds if k + n <= reach[kind]])
        jobs.append((kind, queries[k:k + n], kinds[kind][2] and rng.random() < 0.3))
        k += n
    batched = []

    def run(job):
        kind, recs, as_json = job
        args, settings = kinds[kind][:2]
        want = b"".join(expected[kind][n] for n, _ in recs)
        if "7" in args:  # a run's last line counts its queries
            want += b"# swgpu processed %d queries\n" % len(recs)
        if as_json:
            body = {"sequences": [{"id": n, "residues": r} for n, r in recs]}
            body.update(settings)
            st, got, h = s.request("POST", "/search", json.dumps(body).encode(), {"Content-Type": "application/json"})
            if st != 200:
                return "%s: JSON status %d %s" % (recs[0][0], st, got[:200])
            hits = json.loads(got)["hits"]
            lines = [l.split(b"\t") for l in want.splitlines()]
            if len(lines) != len(hits):
                return "%s: %d JSON hits, %d lines" % (recs[0][0], len(hits), len(lines))
            for l, hit in zip(lines, hits):
                ints = [hit[c] for c in ("length", "mismatch", "gapopen", "qstart", "qend", "sstart", "send")]
                if (l[0].decode(), l[1].decode(), "%.3f" % hit["pident"], [int(x) for x in l[3:10]]) != \
                        (hit["qseqid"], hit["sseqid"], l[2].decode(), ints):
                    return "%s: JSON hit %s differs from %s" % (recs[0][0], hit, l)
                if (format_evalue(hit["evalue"]), format_bit_score(hit["bitscore"])) != \
                        (l[10].decode(), l[11].decode().strip()):
                    return "%s: JSON evalue %r bitscore %r, TSV %s %s" % (recs[0][0], hit["evalue"], hit["bitscore"],
                                                                         l[10], l[11])
            batched.append(int(h.get("X-Batch-Requests", "1")))
            return None
        st, got, h = s.search_tsv(recs, settings)
        batched.append(int(h.get("X-Batch-Requests", "1")))
        if st != 200:
            return "%s: status %d %s" % (recs[0][0], st, got[:200])
        if got != want:
            return "%s (%s): %d bytes, %d expected" % (recs[0][0], kind, len(got), len(want))
        return None

    started = time.time()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        for err in pool.map(run, jobs):
            check(err is None, err)
    print("%s: %d requests (%d queries) from %d clients under %d settings in %.1f s; largest batch %d requests" %
          (os.path.basename(db), len(jobs), len(queries), clients, len(kinds), time.time() - started, max(batched)))
    check(max(batched) > 1, "no request was batched with another")
    check(s.stop() == 0, "the server's exit code after SIGTERM")


def equality():
    std = []
    cols = ["--outfmt", "6 std score qlen slen nident positive gaps cigar qseq sseq sstrand"]
    equality_phase(DB, random_queries(1000, 48), {
        "default": (std, {}, True),
        "tight": (["-k", "5", "-e", "0.001"], {"max_target_seqs": 5, "evalue": 0.001}, True),
        "seven": (["--outfmt", "7"], {"outfmt": "7"}, False),
        "scores": (["--outfmt", "6 qseqid sseqid evalue bitscore score qlen slen"],  # align computes no alignment
                   {"outfmt": "6 qseqid sseqid evalue bitscore score qlen slen"}, False),
        "rich": (["--seg", "yes", "--comp-based-stats", "1", "--max-hsps", "2", "--matrix", "BLOSUM45", *cols],
                 {"seg": "yes", "comp_based_stats": 1, "max_hsps": 2, "matrix": "BLOSUM45", "outfmt": cols[1]}, False,
                 150)})
    with tempfile.TemporaryDirectory() as work:
        db, queries = dna_data(work, 300, 17)
        equality_phase(db, queries, {
            "default": (cols, {"outfmt": cols[1]}, False),
            "dust": (["--dust", "yes", "-k", "3", *cols], {"dust": "yes", "max_target_seqs": 3, "outfmt": cols[1]},
                     False),
            "plus": (["--strand", "plus", "--max-hsps", "3", "--match", "1", "--mismatch", "-2", "--gap-open", "2",
                      "--gap-extend", "2"],
                     {"strand": "plus", "max_hsps": 3, "match": 1, "mismatch": -2, "gap_open": 2, "gap_extend": 2},
                     True),
            "paf": (["--outfmt", "paf"], {"outfmt": "paf"}, False)})


def well_behaved(s, expected, stop, errors, done):
    rng = random.Random(3)
    while not stop.is_set():
        done.append(1)
        recs = [rng.choice(list(expected))]
        try:
            st, got, _ = s.search_tsv([(n, r) for n, r in expected[recs[0]][0]])
            if st != 200 or got != expected[recs[0]][1]:
                errors.append("well-behaved client: status %d, %d bytes" % (st, len(got)))
        except Exception as e:  # noqa: BLE001 - any failure of the good client counts
            errors.append("well-behaved client: %r" % e)
        time.sleep(0.01)


def raw(port, data, read=True, wait=0.0, timeout=10):
    c = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        c.sendall(data)
        if wait:
            time.sleep(wait)
        if not read:
            return b""
        out = b""
        while True:
            try:
                chunk = c.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        c.close()


def status_of(reply):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", reply)
    return int(m.group(1)) if m else None


def abuse():
    # The idle connections: 2,000 (CTest), or as many as the 4th argument says (10,000 by hand: the server then gets
    # --max-connections above them, one thread each).
    idle_count = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(8192, idle_count + 1024)), hard))
    queries = random_queries(20, 5)
    expected = {}
    for n, r in queries:
        expected[n] = ([(n, r)], align([(n, r)]))
    s = server("-t", "2", "--max-body", "200000", "--client-timeout", "2",
               "--max-connections", str(max(4096, idle_count + 100)))
    stop, errors, done = threading.Event(), [], []
    good = threading.Thread(target=well_behaved, args=(s, expected, stop, errors, done), daemon=True)
    good.start()
    p = s.port
    # Truncated body: 1000 bytes announced, 10 sent, then the connection closed.
    raw(p, b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n>q\nMKV", read=False)
    # A slow client: the same, kept open; the server cuts it off after its read timeout.
    t0 = time.time()
    reply = raw(p, b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n>q\nMKV", timeout=30)
    check(time.time() - t0 < 15, "a slow client was not cut off (%.1f s)" % (time.time() - t0))
    # Binary junk.
    rng = random.Random(1)
    junk = bytes(rng.randrange(256) for _ in range(4096))
    st = status_of(raw(p, junk))
    check(st in (None, 400), "binary junk answered %r" % st)
    # Huge headers.
    st = status_of(raw(p, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100000 + b"\r\n\r\n"))
    check(st in (None, 400, 413, 431), "huge header answered %r" % st)
    # Wrong methods and paths.
    for method, path, want in (("GET", "/search", 405), ("DELETE", "/health", 405), ("PUT", "/metrics", 405),
                               ("POST", "/nowhere", 404), ("GET", "/nowhere", 404)):
        st, body, h = s.request(method, path, b"" if method in ("POST", "PUT") else None)
        check(st == want and json.loads(body)["error"]["kind"], "%s %s: %d %s" % (method, path, st, body[:100]))
    # Bodies: too large, bad FASTA, bad JSON, unknown and refused settings, files.
    st, body, _ = s.request("POST", "/search", b">q\n" + b"A" * 300000, {"Content-Type": "text/x-fasta"})
    check(st == 413, "a body over --max-body: %d" % st)
    for body, ctype, kind in ((b">q\nMK1V\n", "text/x-fasta", "bad_input"), (b"junk\n", "text/x-fasta", "bad_input"),
                              (b"", "text/x-fasta", "bad_input"), (b'{"sequences": [', "application/json", "bad_json"),
                              (b'{"fasta": ">q\\nMKV", "colour": 1}', "application/json", "unknown_setting"),
                              (b'{"fasta": ">q\\nMKV", "out": "/tmp/x"}', "application/json", "refused_setting"),
                              (b'{"fasta": ">q\\nMKV", "matrix": "/etc/passwd"}', "application/json", "bad_setting"),
                              (b'{"fasta": ">q\\nMKV", "matrix": "BLOSUM99"}', "application/json", "bad_setting"),
                              (b'{"fasta": ">q\\nMKV", "evalue": -1}', "application/json", "bad_setting"),
                              (b'{"sequences": [{"id": "a b", "residues": "MKV"}]}', "application/json", "bad_input"),
                              (b'{"fasta": ">q\\nACGTACGTACGTACGTACGT"}', "application/json", "type_mismatch"),
                              (b"[" * 20000 + b"]" * 20000, "application/json", "bad_json"),
                              (b"{" + b",".join(b'"k%d": 1' % i for i in range(15000)) + b"}", "application/json",
                               "unknown_setting")):
        st, got, _ = s.request("POST", "/search", body, {"Content-Type": ctype})
        err = json.loads(got).get("error", {}) if got.startswith(b"{") else {}
        check(st == 400 and err.get("kind") == kind, "%r: %d %s" % (body[:40], st, got[:160]))
    # Idle connections, held while the good client keeps searching.
    idle = []
    t0 = time.time()
    for _ in range(idle_count):
        try:
            idle.append(socket.create_connection(("127.0.0.1", p), timeout=10))
        except OSError as e:
            check(False, "opening idle connection %d: %r" % (len(idle), e))
            break
    st, body, _ = s.request("GET", "/health", timeout=30)
    check(st == 200 and json.loads(body)["status"] == "ok", "health beside %d idle connections: %d" % (len(idle), st))
    with open("/proc/%d/status" % s.proc.pid) as f:
        facts = dict(l.split(":", 1) for l in f)
    print("%d idle connections opened in %.1f s; the server: %s threads, RSS %s; the good client's requests so far: "
          "%d of %d failed" % (len(idle), time.time() - t0, facts["Threads"].strip(), facts["VmRSS"].strip(), len(errors),
                              len(done)))
    time.sleep(1)
    for c in idle:
        c.close()
    time.sleep(0.5)
    stop.set()
    good.join()
    for e in errors[:5]:
        check(False, e)
    st, body, _ = s.request("GET", "/metrics")
    check(st == 200 and b"swgpu_http_requests_total{code=\"200\"}" in body, "metrics after the abuse")
    check(s.proc.poll() is None, "the server died")
    check(s.stop() == 0, "the server's exit code after SIGTERM")


def sigterm():
    queries = random_queries(3, 9)
    want = align(queries)
    for sig in (signal.SIGTERM, signal.SIGINT):
        s = server("--batch-wait", "1500")
        result = {}

        def ask():
            result["answer"] = s.search_tsv(queries)

        t = threading.Thread(target=ask)
        t.start()
        time.sleep(0.5)  # the request waits in its batch for 1.5 s
        s.proc.send_signal(sig)
        t.join()
        st, got, _ = result["answer"]
        check(st == 200 and got == want, "%s with a request in flight: %d, %d bytes" % (sig.name, st, len(got)))
        code = s.proc.wait(timeout=30)
        check(code == 0, "%s: exit code %d" % (sig.name, code))
        try:
            socket.create_connection(("127.0.0.1", s.port), timeout=2).close()
            check(False, "%s: still accepting connections after exit" % sig.name)
        except OSError:
            pass


def limits():
    queries = random_queries(4, 11)
    want = align(queries[:1])
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        f.write("s3cret-token\n")
        token_file = f.name
    s = server("--token-file", token_file, "--max-queries", "2", "--max-residues", "100", "--max-connections", "30",
               "--client-timeout", "2")
    os.unlink(token_file)
    st, body, h = s.search_tsv(queries[:1])
    check(st == 401 and json.loads(body)["error"]["kind"] == "unauthorized", "no token: %d" % st)
    st, body, _ = s.search_tsv(queries[:1], headers={"Authorization": "Bearer wrong"})
    check(st == 401, "a wrong token: %d" % st)
    st, _, _ = s.request("GET", "/health")
    check(st == 401, "health without the token: %d" % st)
    auth = {"Authorization": "Bearer s3cret-token"}
    st, body, _ = s.search_tsv(queries[:1], headers=auth)
    check(st == 200 and body == want, "the token: %d" % st)
    st, body, _ = s.search_tsv(queries[:3], headers=auth)
    check(st == 413 and json.loads(body)["error"]["kind"] == "too_many_queries", "3 queries over 2: %d" % st)
    st, body, _ = s.search_tsv([("long", "MKV" * 40)], headers=auth)
    check(st == 413 and json.loads(body)["error"]["kind"] == "query_too_long", "120 residues over 100: %d" % st)
    # Connections beyond --max-connections: answered 503 at once, the others served after.
    held = [socket.create_connection(("127.0.0.1", s.port), timeout=10) for _ in range(30)]
    time.sleep(0.3)
    reply = raw(s.port, b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"Authorization: Bearer s3cret-token\r\n\r\n")
    check(status_of(reply) == 503 and b"too_many_connections" in reply, "connection 31 of 30: %r" % reply[:60])
    for c in held:
        c.close()
    time.sleep(0.5)
    st, body, _ = s.search_tsv(queries[:1], headers=auth)
    check(st == 200 and body == want, "served after the connections closed: %d" % st)
    check(s.stop() == 0, "exit code")
    # A full queue (503 busy) and a search past its timeout (503 timeout).
    s = server("--max-queue", "1", "--batch-wait", "1500", "--timeout", "1")
    answers = []

    def ask(recs):
        answers.append(s.search_tsv(recs))

    threads = [threading.Thread(target=ask, args=([q],)) for q in queries[:3]]
    for t in threads:
        t.start()
        time.sleep(0.05)
    for t in threads:
        t.join()
    kinds = sorted(json.loads(b)["error"]["kind"] for st, b, _ in answers if st == 503)
    check(len(answers) == 3 and all(st == 503 for st, _, _ in answers) and "busy" in kinds and "timeout" in kinds,
          "queue 1, wait 1.5 s, timeout 1 s: %s" % [(st, b[:80]) for st, b, _ in answers])
    check(s.stop() == 0, "exit code")


def bad_command_lines():
    for args, code in ((["serve"], 2), (["serve", DB, "--listen", "nohost"], 2), (["serve", DB, "--max-batch", "x"], 2),
                       (["serve", "/no/such.fa"], 1), (["serve", DB, "--token-file", "/no/such"], 1),
                       (["serve", DB, "--backend", "cpu", "--memory-check"], 2)):
        r = subprocess.run([BIN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == code and len(lines) == 1 and lines[0].startswith("swgpu: error: "),
              "%s: exit %d, %r" % (args, r.returncode, r.stderr))
    # More memory than allowed: refused before the database is read (exit 4, one line).
    r = subprocess.run([BIN, "serve", DB, "--backend", "cpu"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=30, env=dict(os.environ, SWGPU_TUNE="host.memory_mib=1"))
    check(r.returncode == 4 and r.stderr.count("\n") == 1 and "--max-settings" in r.stderr,
          "the memory check: exit %d, %r" % (r.returncode, r.stderr))


def client():
    """`swgpu align --server URL` prints what a local run prints, and exits with the server's refusal's code."""
    queries = random_queries(30, 21)
    with tempfile.TemporaryDirectory() as d:
        q = os.path.join(d, "q.fa")
        with open(q, "w") as f:
            f.write(fasta(queries))
        s = server()
        url = "http://127.0.0.1:%d" % s.port
        for args in ([], ["-k", "3", "-e", "1e-5"], ["--outfmt", "6 std score qlen slen cigar qseq sseq"],
                     ["--outfmt", "7"], ["--outfmt", "json"], ["--outfmt", "pair"], ["--matrix", "BLOSUM45"],
                     ["--gap-open", "9", "--gap-extend", "2"], ["--max-hsps", "3"], ["--seg", "yes"],
                     ["--comp-based-stats", "1"], ["--no-evalue"]):
            local = subprocess.run([BIN, "align", q, DB, "--backend", "cpu", *args], stdout=subprocess.PIPE,
                                   check=True).stdout
            remote = subprocess.run([BIN, "align", "--server", url, q, *args], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)
            check(remote.returncode == 0 and remote.stdout == local,
                  "align --server %s: exit %d, %d bytes, %d expected %s" % (args, remote.returncode,
                                                                       len(remote.stdout), len(local), remote.stderr))
        r = subprocess.run([BIN, "align", "--server", url, q, "--matrix", "./mine.txt"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        check(r.returncode == 2 and r.stderr.count("\n") == 1, "a matrix file through --server: %d %r" %
              (r.returncode, r.stderr))
        check(s.stop() == 0, "exit code")


try:
    {"equality": equality, "abuse": abuse, "signal": sigterm, "limits": limits, "command_line": bad_command_lines,
     "client": client}[PART]()
finally:
    for p in started:
        if p.poll() is None:
            p.kill()
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
