#!/usr/bin/env python3
"""sass_step_counts.py SASS_FILE: instructions per cell of the long-pair band kernels' inner loop.

SASS_FILE is `cuobjdump -sass` of a program holding gpu/align/long_pair_kernels.cuh (bench_long_pair, swgpu). For every
band_kernel<R, Kind> in it, the innermost loop that holds at least R VIADDMNMX.RELU (one per cell: the step over a
chunk's columns; the 16-bit kind: R / 2 VIADDMNMX.S16x2.RELU, one per word of two cells) is found; the branch that stores checkpoint columns and block maxima (from the branch before the first
STG/REDG to the last one) is left out, as it runs once per K columns. Prints, per kernel, the instructions of one
column and lane, per cell, the DPX instructions (VI*) per cell and the commonest opcodes.
"""
import collections
import re
import sys

KINDS = {"0": "bands (row_cells)", "1": "bands (row_cells_h)", "3": "bands, split", "4": "compensation",
         "5": "bands, 16-bit cells"}


def instructions(function_text):
    out = []
    for line in function_text.split("\n"):
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            out.append((int(m.group(1), 16), m.group(2).strip()))
    return out


def opcode(text):
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]


def step_loop(ins, rows, relu="VIADDMNMX.RELU"):
    index = {a: i for i, (a, _) in enumerate(ins)}
    best = None
    for i, (a, text) in enumerate(ins):
        m = re.search(r"BRA.*?0x([0-9a-f]+)", text)
        if not m:
            continue
        target = int(m.group(1), 16)
        if target >= a or target not in index:
            continue
        body = ins[index[target]:i + 1]
        cells = sum(opcode(t) == relu for _, t in body)
        if cells >= rows and (best is None or len(body) < len(best)):
            best = body
    return best


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    text = open(sys.argv[1]).read()
    for function in re.split(r"\n\s*Function : ", text):
        name = function.split("\n", 1)[0]
        m = re.search(r"band_kernelILi(\d+)ELi(\d+)E", name)
        if not m:
            continue
        rows, kind = int(m.group(1)), m.group(2)
        # the 16-bit kind: one VIADDMNMX.S16x2.RELU per word of two cells, R cells per lane and step
        body = step_loop(instructions(function), rows // 2, "VIADDMNMX.S16x2.RELU") if kind == "5" else \
            step_loop(instructions(function), rows)
        if body is None:
            continue
        stores = [i for i, (_, t) in enumerate(body) if opcode(t).startswith(("STG", "REDG"))]
        hot = body
        if stores:
            first = stores[0]
            while first > 0 and "BRA" not in body[first - 1][1]:
                first -= 1
            hot = body[:first] + body[stores[-1] + 1:]
        ops = collections.Counter(opcode(t) for _, t in hot)
        dpx = sum(v for k, v in ops.items() if k.startswith("VI"))
        common = ", ".join(f"{k} {v}" for k, v in ops.most_common(8))
        print(f"summary: R {rows} {KINDS.get(kind, 'kind ' + kind)}: {len(hot)} instructions per column and lane, "
              f"{len(hot) / rows:.2f} per cell, DPX {dpx / rows:.2f} per cell ({common})")


if __name__ == "__main__":
    main()
