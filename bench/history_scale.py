#!/usr/bin/env python3
"""How long `fabricmap history` takes over many results files: N copies of one real results file
(by default the fuzz template tests/fuzz/templates/complete-copies-pairs.h5: 4 ranks, 2 nodes, pairs
and copies) in a temporary directory, then `history DIR --json` (and with --write-baseline, which also
reads /collectives), each timed --reps times; the median wall time and per file.

  python3 bench/history_scale.py [--copies 1000] [--file RUN.h5] [--reps 3]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("FABRICMAP_BIN", os.path.join(HERE, "..", "build", "release", "bin"))


def timed(command, reps):
    times = []
    for _ in range(reps):
        start = time.monotonic()
        p = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times.append(time.monotonic() - start)
        if p.returncode != 0:
            sys.exit(f"{' '.join(command)}: exit {p.returncode}: {p.stderr[-500:]}")
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=1000)
    ap.add_argument("--file",
                    default=os.path.join(HERE, "..", "tests", "fuzz", "templates", "complete-copies-pairs.h5"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--fabricmap", default=os.path.join(BIN, "fabricmap"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fabricmap-history-bench-") as tmp:
        for i in range(args.copies):
            shutil.copyfile(args.file, os.path.join(tmp, f"run{i:05d}.h5"))
        size = os.path.getsize(args.file)
        print(f"{args.copies} copies of {os.path.basename(args.file)} ({size / 1024:.0f} KiB each)")
        for label, extra in (("history --json", []),
                             ("history --json --write-baseline", ["--write-baseline", os.path.join(tmp, "b.json")])):
            t = timed([args.fabricmap, "history", tmp, "--json"] + extra, args.reps)
            print(f"  {label:<34} {t:6.2f} s  ({t / args.copies * 1e3:.2f} ms per file, median of {args.reps})")


if __name__ == "__main__":
    main()
