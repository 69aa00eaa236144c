#!/usr/bin/env python3
"""fabricmap against the reference tools on one GPU machine: the figures table of scripts/gpu-check.sh.

usage: gpu_figures.py OUTDIR     (prints markdown)

OUTDIR is gpu-check's output: nccl-sweep-<round>.h5 (fabricmap's NCCL sweeps at nccl-tests'
sizes), nccl-tests-<round>.h5 (nccl-tests' logs of the run before each, read by `fabricmap
import`), nccl-types.h5, gpu-copies.h5, nvbandwidth.txt and copy-bandwidth.txt; what is missing is
left out. Collectives are compared out-of-place, by algbw (with one GPU busbw is 0 for the
reductions, and the ratio is the same), median of fabricmap's runs against median of nccl-tests'.
"""
import os
import re
import statistics
import sys

import h5py

QUOTED_SIZES = [8, 1 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30]
LARGE = 64 << 20  # the ">= 64 MiB" goal


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def rows(path, table):
    if not os.path.exists(path):
        return []
    with h5py.File(path, "r") as f:
        if table not in f:
            return []
        d = f[table][:]
        return [{k: text(r[k]) if d.dtype[k].kind in "OS" else r[k].item() for k in d.dtype.names} for r in d]


def attr(path, name):
    with h5py.File(path, "r") as f:
        return text(f.attrs.get(name, ""))


def out_of_place(path):
    """(op, bytes) -> row of the out-of-place float collectives."""
    return {(r["op"], r["bytes"]): r for r in rows(path, "collectives") if not r["in_place"] and r["dtype"] == "float"}


def size_label(b):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def collectives(out):
    ours = [r for r in (out_of_place(os.path.join(out, f"nccl-sweep-{i}.h5")) for i in (1, 2)) if r]
    refs = [r for r in (out_of_place(os.path.join(out, f"nccl-tests-{i}.h5")) for i in (1, 2)) if r]
    if not ours or not refs:
        print("(no collective sweep or no nccl-tests logs to compare)\n")
        return
    print(f"fabricmap (NCCL {attr(os.path.join(out, 'nccl-sweep-1.h5'), 'nccl_version')}) vs nccl-tests, "
          f"out-of-place float: medians of {len(ours)} and {len(refs)} interleaved runs\n")
    print("| op | size | fabricmap us | nccl-tests us | fabricmap algbw | nccl-tests algbw | ratio |")
    print("|---|---|---|---|---|---|---|")
    worst = {}
    for op, size in sorted(ours[0]):
        mine = [run[(op, size)] for run in ours if (op, size) in run]
        theirs = [ref[(op, size)] for ref in refs if (op, size) in ref]
        if not theirs:
            continue
        bw, us = statistics.median(m["algbw"] for m in mine), statistics.median(m["time_us_mean"] for m in mine)
        ref_bw = statistics.median(t["algbw"] for t in theirs)
        ref_us = statistics.median(t["time_us_mean"] for t in theirs)
        ratio = bw / ref_bw if ref_bw > 0 else float("nan")
        if size >= LARGE:
            worst[op] = min(worst.get(op, ratio), ratio)
        if size in QUOTED_SIZES:
            print(f"| {op} | {size_label(size)} | {us:.1f} | {ref_us:.1f} | {bw:.2f} | "
                  f"{ref_bw:.2f} | {ratio:.3f} |")
    print("\nworst ratio at >= 64 MiB (goal >= 0.98): " +
          ", ".join(f"{op} {v:.3f}" for op, v in sorted(worst.items())) + "\n")


def correctness(out):
    print("| file | rows | wrong rows | waived steps |")
    print("|---|---|---|---|")
    for name in ("nccl-types.h5", "nccl-sweep-1.h5", "nccl-sweep-2.h5", "nccl-graph.h5", "nccl-tests-1.h5",
                 "nccl-tests-2.h5"):
        path = os.path.join(out, name)
        if not os.path.exists(path):
            continue
        coll = rows(path, "collectives")
        steps = rows(path, "steps")
        wrong = sum(1 for r in coll if r["checked"] and r["wrong"] > 0)
        waived = sum(1 for s in steps if s["status"] == "waived")
        print(f"| {name} | {len(coll)} | {wrong} | {waived} |")
    print()


def copies(out):
    path = os.path.join(out, "gpu-copies.h5")
    for r in rows(path, "copies"):
        print(f"fabricmap copy {r['method']} ({r['path']}), local ranks {r['a']}-{r['b']}, {size_label(r['bytes'])}: "
              f"write {r['write_ab']:.1f} / {r['write_ba']:.1f} GB/s, bidir {r['write_bidir']:.1f}; "
              f"read {r['read_ab']:.1f} / {r['read_ba']:.1f}, bidir {r['read_bidir']:.1f}; wrong {r['wrong']}")
    for name in ("nvbandwidth.txt", "copy-bandwidth.txt"):
        p = os.path.join(out, name)
        if os.path.exists(p):
            with open(p) as f:
                lines = [line.rstrip() for line in f if re.match(r"^(SUM |device|host|NOTE|nvbandwidth Version|"
                                                                 r"Built from|CUDA Runtime|Driver)", line)]
            print("\n" + name + ":\n\n```\n" + "\n".join(lines) + "\n```")
    print()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    print("## Collectives\n")
    collectives(out)
    print("## Correctness\n")
    correctness(out)
    print("## Copies\n")
    copies(out)


if __name__ == "__main__":
    main()
