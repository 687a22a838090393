#!/usr/bin/env bash
# demo.sh: set-up and build of the program alone (scripts/setup.sh program), then search the bundled queries against
# the bundled database and print the best hits of each query in BLAST tabular format.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh program
echo "== swgpu align data/demo_queries.fa data/demo_db.fa --max-target-seqs 5" >&2
build/app/swgpu align data/demo_queries.fa data/demo_db.fa --max-target-seqs 5
