#!/usr/bin/env bash
# serve_bench.sh SWGPU_BIN_DIR DATA_DIR [REQUESTS] [COPIES]: `swgpu serve` against one `swgpu align` process per
# query (and CUDASW++4.0 per query when CUDASW4 names the folder of its `align` and `makedb`, as release_guard.sh),
# on one query per request x db20k x COPIES (default 100). DATA_DIR holds classic20_queries.fa and
# uniprot_db20k.fasta.gz (release_guard.sh's). Needs bash and Python 3's standard library only.
#
# Prints (lines starting "summary:"):
#   - the service on the issue's shape, every request the same query (ADH1A_HUMAN, 375 aa): one client, then 4, 16
#     and 64 concurrent clients: queries per second and p50/p99 latency;
#   - the service on a mix: REQUESTS requests (default 200) of one query each, cycling through classic20 (144 to
#     5,478 aa, mean 2,088), with 1 and 16 clients;
#   - the kernel time of that one query against the resident database (bench_gpu_search's "device" time, when the
#     bundle holds bench_gpu_search), which the issue's p50 target is a multiple of;
#   - every answer checked against `swgpu align -k 10` of the same query (cmp), once per query;
#   - one process per query: `swgpu align -q -k 10 one.fa db.swdb` (5 runs of ADH1A_HUMAN): the median whole-process
#     seconds, i.e. the queries per second of one process per query; the score pass's time of that run (-v, "backend
#     ..."), the kernel time the issue's p50 target refers to;
#   - CUDASW++4.0 per query likewise (--top 10 --dpx --uploadFull --prefetchDBFile), when CUDASW4 is set.
set -uo pipefail
bin=$(cd "${1:?usage: serve_bench.sh SWGPU_BIN_DIR DATA_DIR [REQUESTS] [COPIES]}" && pwd)
data=$(cd "${2:?data folder}" && pwd)
requests=${3:-200}
copies=${4:-100}
tmp=${TMPDIR:-/tmp}/swgpu_serve_bench
mkdir -p "$tmp"
awk '/^>/{keep = index($0, "ADH1A_HUMAN") > 0} keep' "$data/classic20_queries.fa" > "$tmp/one.fa"
cp "$data/classic20_queries.fa" "$tmp/classic20.fa"
[ -s "$tmp/db20k.fa" ] || zcat "$data/uniprot_db20k.fasta.gz" > "$tmp/db20k.fa"
[ -s "$tmp/db20kx$copies.fa" ] || for _ in $(seq "$copies"); do cat "$tmp/db20k.fa"; done > "$tmp/db20kx$copies.fa"
[ -s "$tmp/db20kx$copies.swdb" ] || "$bin/swgpu" makedb -q "$tmp/db20kx$copies.fa" "$tmp/db20kx$copies" ||
  { echo "summary: makedb failed"; exit 1; }
db="$tmp/db20kx$copies.swdb"
median() { sort -g | awk '{v[NR] = $1} END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One process per query.
"$bin/swgpu" align -q -k 10 "$tmp/one.fa" "$db" -o "$tmp/one.out" || { echo "summary: align failed"; exit 1; }
times=()
for _ in 1 2 3 4 5; do
  start=$(date +%s%N)
  "$bin/swgpu" align -q -k 10 "$tmp/one.fa" "$db" -o "$tmp/one.out"
  times+=("$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')")
done
per_process=$(printf '%s\n' "${times[@]}" | median)
kernel=$("$bin/swgpu" align -v -k 10 "$tmp/one.fa" "$db" -o "$tmp/one.out" 2>&1 | sed -n 's/.*(backend \([0-9.]*\) s.*/\1/p' | head -1)
device_ms=0
if [ -x "$bin/bench_gpu_search" ]; then
  device_ms=$("$bin/bench_gpu_search" "$tmp/one.fa" "$data/uniprot_db20k.fasta.gz" "$copies" 5 --label one |
    sed -n 's/^summary: .*device \([0-9.]*\) ms.*/\1/p')
  echo "summary: the score kernels alone, ADH1A_HUMAN x db20k x$copies (bench_gpu_search, median of 5): ${device_ms:-?} ms"
fi
echo "summary: one swgpu align process per query (ADH1A_HUMAN x db20k x$copies, -k 10): ${times[*]} s, median $per_process s" \
     "= $(awk -v t="$per_process" 'BEGIN { printf "%.2f", 1 / t }') queries/s; its score pass (backend) ${kernel:-?} s"
# Each classic20 query's expected answer, by a process of its own.
awk -v dir="$tmp" '/^>/{n++; f = sprintf("%s/q%02d.fa", dir, n)} {print > f}' "$tmp/classic20.fa"
for f in "$tmp"/q[0-9][0-9].fa; do "$bin/swgpu" align -q -k 10 "$f" "$db" -o "${f%.fa}.out"; done

if [ -n "${CUDASW4:-}" ]; then
  [ -s "$tmp/cudasw.db20kx$copies.done" ] || { "$CUDASW4/makedb" "$tmp/db20kx$copies.fa" "$tmp/cudasw.db20kx$copies" \
    > "$tmp/cudasw.makedb.log" 2>&1 && echo done > "$tmp/cudasw.db20kx$copies.done"; }
  peer=()
  for r in 0 1 2 3 4 5; do
    start=$(date +%s%N)
    "$CUDASW4/align" --query "$tmp/one.fa" --db "$tmp/cudasw.db20kx$copies" --top 10 --dpx --uploadFull \
      --prefetchDBFile --tsv --of "$tmp/cudasw.out" > /dev/null 2>&1 || echo "summary: CUDASW++4.0 failed"
    [ $r -gt 0 ] && peer+=("$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')")
  done
  mp=$(printf '%s\n' "${peer[@]}" | median)
  echo "summary: one CUDASW++4.0 process per query: ${peer[*]} s, median $mp s = $(awk -v t="$mp" 'BEGIN { printf "%.2f", 1 / t }') queries/s"
fi

# The service.
"$bin/swgpu" serve "$db" --listen 127.0.0.1:0 -k 10 --max-queue 4096 2> "$tmp/serve.log" &
server=$!
port=""
for _ in $(seq 600); do
  port=$(sed -n 's/.*on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/serve.log" | head -1)
  [ -n "$port" ] && break
  kill -0 $server 2>/dev/null || break
  sleep 0.5
done
[ -n "$port" ] || { echo "summary: the server did not start"; cat "$tmp/serve.log"; exit 1; }
python3 - "$port" "$tmp" "$requests" "$per_process" "${device_ms:-0}" <<'EOF'
import glob, http.client, os, sys, threading, time
port, tmp, requests, per_process, kernel = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]) / 1e3
mix = []
for f in sorted(glob.glob(os.path.join(tmp, "q[0-9][0-9].fa"))):
    mix.append((open(f, "rb").read(), open(f[:-3] + ".out", "rb").read()))
same = [(open(os.path.join(tmp, "one.fa"), "rb").read(), open(os.path.join(tmp, "one.out"), "rb").read())]
queries = mix
wrong = []
def one(conn, k):
    body, want = queries[k % len(queries)]
    t = time.perf_counter()
    conn.request("POST", "/search", body=body, headers={"Accept": "text/tab-separated-values", "Content-Type": "text/x-fasta"})
    r = conn.getresponse(); got = r.read()
    dt = time.perf_counter() - t
    if r.status != 200 or got != want:
        wrong.append((k % len(queries), r.status, len(got), len(want)))
    return dt
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
for k in range(len(queries)):  # warm-up: the database is prepared (copied to the GPUs) at the first search; answers checked
    one(conn, k)
def run(clients, what):
    lat, lock = [], threading.Lock()
    per = max(1, requests // clients) if clients == 1 else max(requests, 4 * clients) // clients
    def worker(c):
        cn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        mine = [one(cn, c * per + i) for i in range(per)]
        with lock:
            lat.extend(mine)
    start = time.perf_counter()
    ts = [threading.Thread(target=worker, args=(c,)) for c in range(clients)]
    [t.start() for t in ts]; [t.join() for t in ts]
    wall = time.perf_counter() - start
    lat.sort()
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
    print("summary: serve, %s, %d client(s), %d requests of one query: %.2f queries/s (%.1fx one process per query), "
          "latency p50 %.1f ms, p99 %.1f ms%s" % (what, clients, len(lat), len(lat) / wall, len(lat) / wall * per_process,
          p(0.5) * 1e3, p(0.99) * 1e3, ", p50/kernel %.2f" % (p(0.5) / kernel) if kernel > 0 and queries is same else ""))
queries = same
for clients in (1, 4, 16, 64):
    run(clients, "ADH1A_HUMAN every request")
queries = mix
for clients in (1, 16):
    run(clients, "classic20 in turn")
print("summary: answers equal to swgpu align's: %s" % ("all" if not wrong else "NO, %d differ: %s" % (len(wrong), wrong[:5])))
sys.exit(1 if wrong else 0)
EOF
status=$?
python3 -c "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:$port/metrics').read().decode())" | grep -E '^swgpu_(batches_total|batched_requests_total) ' | sed 's/^/summary: /'
kill -TERM $server
wait $server
echo "summary: server exit code $?"
exit $status
