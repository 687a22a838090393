#!/usr/bin/env bash
# soak_batch.sh SWGPU [FILES] [BACKEND]: `swgpu align --batch` over FILES small query files (default 1000: random
# subsets of the demo queries and random peptides, one to three records each) against data/demo_db.fa, in one
# process whose open-file limit is 64 (a descriptor kept per file would fail the run long before the end). Checks:
# exit 0; every output equal to a run with that file alone (a sample of 25 files, both ends and between); the peak
# resident memory (GNU time's maximum RSS) of the whole run within 2x that of a run over the first 100 files (the
# hits of every query are kept until the pass ends, so memory grows a little with the queries).
# Prints one summary line; exit 1 on any failure. BACKEND: cpu (default), gpu or auto.
set -euo pipefail
bin=$(readlink -f "$1")
files=${2:-1000}
backend=${3:-cpu}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 - "$root/data/demo_queries.fa" "$work" "$files" <<'EOF'
import random, sys
demo, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
records, name = [], None
for line in open(demo):
    line = line.strip()
    if line.startswith(">"):
        records.append([line[1:].split()[0], ""])
    elif line:
        records[-1][1] += line
rng = random.Random(7)
with open(f"{work}/list.txt", "w") as lst, open(f"{work}/list100.txt", "w") as first:
    for k in range(n):
        if k % 2 == 0:
            chosen = rng.sample(records, rng.randint(1, len(records)))
        else:
            chosen = [(f"r{k}_{j}", "".join(rng.choice("ACDEFGHIKLMNPQRSTVWY") for _ in range(rng.randint(20, 300))))
                      for j in range(rng.randint(1, 3))]
        path = f"{work}/q{k}.fa"
        with open(path, "w") as f:
            for nm, seq in chosen:
                f.write(f">{nm}\n{seq}\n")
        lst.write(path + "\n")
        if k < 100:
            first.write(path + "\n")
EOF
peak() {  # peak LIST OUTDIR: runs the batch with at most 64 open files; prints the maximum RSS in KiB
  ( ulimit -n 64; /usr/bin/time -f "%M" -o "$work/rss" "$bin" align --backend "$backend" --batch "$1" \
      "$root/data/demo_db.fa" -k 10 -o "$2" 2> "$work/err" ) || { echo "soak_batch: the run failed:"; cat "$work/err"; exit 1; }
  cat "$work/rss"
}
rss100=$(peak "$work/list100.txt" "$work/out100")
rss=$(peak "$work/list.txt" "$work/out")
bad=0
for k in 0 1 2 3 4 $(seq 40 40 $((files - 1))) $((files - 2)) $((files - 1)); do
  [[ $k -ge 0 && $k -lt $files ]] || continue
  "$bin" align --backend "$backend" "$work/q$k.fa" "$root/data/demo_db.fa" -k 10 > "$work/alone"
  cmp -s "$work/alone" "$work/out/q$k.fa.out" || { echo "  q$k.fa: batch output differs from a run alone"; bad=$((bad + 1)); }
done
produced=$(ls "$work/out" | wc -l)
grew=$(awk -v a="$rss" -v b="$rss100" 'BEGIN { print (a > 2 * b) ? "GREW" : "flat" }')
echo "soak_batch: $files query files in one run with at most 64 open files: $produced outputs, $bad of the sampled" \
     "differing from runs alone; peak RSS $rss100 KiB over 100 files, $rss KiB over $files ($grew)"
[[ $bad -eq 0 && $produced -eq $files && $grew == flat ]]
