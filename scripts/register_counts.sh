#!/usr/bin/env bash
# register_counts.sh [BUILD_DIR] [FILTER]: every kernel of the product's CUDA sources (gpu/) with the registers, spill
# stores/loads and shared memory ptxas gives it, one line per kernel, sorted. It reruns the build's own compile commands
# (BUILD_DIR/compile_commands.json, default build/) with -Xptxas -v into a scratch folder, so the build is untouched.
# A change that must not touch the kernels (a move, a rename) leaves this table the same: diff two builds' tables.
# Anonymous namespaces, whose mangled names hash the file's path, are printed as "(anonymous)".
# FILTER (a regular expression) limits the sources to those whose path matches it.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
filter=${2:-/gpu/}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
/usr/bin/python3 - "$build/compile_commands.json" "$filter" "$scratch" <<'PY' | sort
import json, re, subprocess, sys, os
def stable(name):
    # An anonymous namespace is mangled with a hash of its file's path: drop it (its length prefix tells how much), so
    # that a moved or renamed file's kernels keep their names.
    out, at = "", 0
    for m in re.finditer(r"(\d+)_GLOBAL__N__", name):
        if m.start() < at:
            continue
        out += name[at:m.start()] + "(anonymous)"
        at = m.start(1) + len(m.group(1)) + int(m.group(1))
    return out + name[at:]
entries, pattern, scratch = json.load(open(sys.argv[1])), re.compile(sys.argv[2]), sys.argv[3]
for k, e in enumerate(entries):
    f = e["file"]
    if not f.endswith(".cu") or "/tests/" in f or not pattern.search(f):
        continue
    cmd = re.sub(r" -o \S+", " -o " + os.path.join(scratch, f"{k}.o"), e["command"]) + " -Xptxas -v"
    out = subprocess.run(cmd, shell=True, cwd=e["directory"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"register_counts: compiling {f} failed:\n{out.stderr}")
    kernel, spills = None, "0/0"
    for line in out.stderr.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            kernel = m.group(1)
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            kernel = m.group(1)
            continue
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and kernel:
            spills = f"{m.group(1)}/{m.group(2)}"
            continue
        m = re.search(r"Used (\d+) registers(.*)", line)
        if m and kernel:
            smem = re.search(r"(\d+) bytes smem", m.group(2))
            print(f"{stable(kernel)}\t{m.group(1)} registers\tspill {spills} bytes\t{smem.group(1) if smem else 0} bytes smem")
            kernel, spills = None, "0/0"
PY
