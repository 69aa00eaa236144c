#!/usr/bin/env python3
"""Training pattern vs a bare MPI program of the same traffic, for bench/README.md (e). Run from the
repository root after ./test.sh or ./run.sh has built build/release:

  python3 bench/training_vs_bare.py [--np 4] [--tp 2] [--reps 7] [--hidden 1024] [--seq-len 512]

Each repetition runs `fabricmap run --patterns training --layout tp=T,dp=N/T` and then
bench/bare_traffic.cpp with the message sizes and counts fabricmap recorded in /patterns/training,
alternating which goes first. Quoted: per traffic type and mode, the medians of both and the median
(min..max) of the per-repetition ratios fabricmap / bare, and the interference ratio each reports.
"""
import argparse
import os
import statistics
import subprocess
import tempfile

import h5py

BIN = "build/release/bin"


def mpirun(np, cmd):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run(["mpirun", "-np", str(np), "--oversubscribe"] + cmd, env=env, check=True,
                          capture_output=True, text=True)


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def fabricmap_rows(args, path):
    """{(traffic, mode): (median us, bytes, messages)} from one fabricmap run."""
    mpirun(args.np, [f"{BIN}/fabricmap", "run", "--patterns", "training", "--layout",
                     f"tp={args.tp},pp=1,dp={args.np // args.tp}", "--hidden", str(args.hidden), "--seq-len",
                     str(args.seq_len), "--train-iters", str(args.steps), "--progress", "off", "-o", path])
    with h5py.File(path, "r") as f:
        rows = f["patterns/training"][()]
    return {(text(r["traffic"]), text(r["mode"])): (float(r["time_us_median"]), int(r["bytes"]), int(r["messages"]))
            for r in rows}


def bare_rows(args, fm):
    tp = fm[("tp", "isolated")]
    dp = fm[("dp", "isolated")]
    out = mpirun(args.np, [f"{BIN}/fabricmap_bare_traffic", str(args.tp), str(tp[1]), str(tp[2]), str(dp[1]),
                           str(dp[2]), str(args.steps), "1"]).stdout.split()
    t = [float(x) for x in out]
    return {("tp", "isolated"): t[0], ("dp", "isolated"): t[1], ("tp", "concurrent"): t[2],
            ("dp", "concurrent"): t[3]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--tp", type=int, default=2)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--steps", type=int, default=10, help="timed training steps per measurement")
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--seq-len", type=int, default=512)
    args = ap.parse_args()
    keys = [("tp", "isolated"), ("tp", "concurrent"), ("dp", "isolated"), ("dp", "concurrent")]
    fm_us = {k: [] for k in keys}
    bare_us = {k: [] for k in keys}
    sizes = None
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            path = os.path.join(tmp, f"t{rep}.h5")
            if rep % 2 == 0:
                fm = fabricmap_rows(args, path)
                bare = bare_rows(args, fm)
            else:  # the bare program first; its sizes come from the previous repetition's file
                bare = bare_rows(args, fm)
                fm = fabricmap_rows(args, path)
            sizes = {k[0]: fm[k][1:] for k in keys}
            for k in keys:
                fm_us[k].append(fm[k][0])
                bare_us[k].append(bare[k])
    print(f"{args.np} ranks, tp={args.tp}, dp={args.np // args.tp}, h={args.hidden}, s={args.seq_len}, "
          f"{args.steps} steps x {args.reps} repetitions; "
          + ", ".join(f"{t}: {b} B x {m}" for t, (b, m) in sizes.items()))
    print("| traffic | mode | fabricmap median | bare median | ratio median (min..max) |")
    print("|---|---|---|---|---|")
    for k in keys:
        ratios = [a / b for a, b in zip(fm_us[k], bare_us[k])]
        print(f"| {k[0]} | {k[1]} | {statistics.median(fm_us[k]):.0f} us | {statistics.median(bare_us[k]):.0f} us | "
              f"{statistics.median(ratios):.3f} ({min(ratios):.2f}..{max(ratios):.2f}) |")
    for t in ("tp", "dp"):
        fi = [c / i for c, i in zip(fm_us[(t, "concurrent")], fm_us[(t, "isolated")])]
        bi = [c / i for c, i in zip(bare_us[(t, "concurrent")], bare_us[(t, "isolated")])]
        print(f"interference {t}: fabricmap {statistics.median(fi):.2f}, bare {statistics.median(bi):.2f} "
              "(concurrent / isolated, medians over repetitions)")


if __name__ == "__main__":
    main()
