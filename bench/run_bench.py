#!/usr/bin/env python3
"""Side-by-side benchmarks for bench/README.md (run from the repository root after ./test.sh or
./run.sh has built build/release):

  python3 bench/run_bench.py [--reps 7] [--np 4]

(a) harness overhead: fabricmap's all_reduce mean time vs a bare MPI_Allreduce loop with the same
    ranks, iterations and warm-up, alternating the two in each repetition; median of the ratios.
(b) wall time of the default quick suite (`fabricmap run`, 4 ranks), median of repetitions.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

BIN = "build/release/bin"


def mpirun(np, cmd):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run(["mpirun", "-np", str(np), "--oversubscribe"] + cmd, env=env, check=True,
                          capture_output=True, text=True)


def fabricmap_us(np, size, iters, warmup, tmp):
    out = os.path.join(tmp, "o.h5")
    mpirun(np, [f"{BIN}/fabricmap", "run", "--ops", "all_reduce", "--scopes", "world",
                "--out-of-place", "-b", str(size), "-e", str(size), "-n", str(iters), "-w",
                str(warmup), "-o", out])
    doc = json.loads(subprocess.run([f"{BIN}/fabricmap", "show", out, "--json"], check=True,
                                    capture_output=True, text=True).stdout)
    return doc["collectives"][0]["time_us_mean"]


def bare_us(np, size, iters, warmup):
    return float(mpirun(np, [f"{BIN}/fabricmap_bare_allreduce", str(size), str(iters),
                             str(warmup)]).stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--suite-reps", type=int, default=3, help="0 skips the quick-suite timing")
    ap.add_argument("--sizes", default="8,1048576", help="all_reduce sizes in bytes, comma-separated")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(x) for x in args.sizes.split(",")):
            iters = 1000 if size <= 65536 else 50
            fm, bare, ratio = [], [], []
            for rep in range(args.reps):
                # alternate which one runs first, so neither gains from going second
                if rep % 2 == 0:
                    a = fabricmap_us(args.np, size, iters, 5, tmp)
                    b = bare_us(args.np, size, iters, 5)
                else:
                    b = bare_us(args.np, size, iters, 5)
                    a = fabricmap_us(args.np, size, iters, 5, tmp)
                fm.append(a)
                bare.append(b)
                ratio.append(a / b)
            print(f"all_reduce {size:>8} B, {args.np} ranks, {iters} iters: fabricmap median "
                  f"{statistics.median(fm):9.2f} us, bare MPI_Allreduce median "
                  f"{statistics.median(bare):9.2f} us, ratio median {statistics.median(ratio):.3f} "
                  f"(min {min(ratio):.3f}, max {max(ratio):.3f})")
        walls = []
        for _ in range(args.suite_reps):
            start = time.monotonic()
            mpirun(4, [f"{BIN}/fabricmap", "run", "-o", os.path.join(tmp, "quick.h5")])
            walls.append(time.monotonic() - start)
        if not walls:
            return
        print(f"default quick suite, 4 ranks: wall median {statistics.median(walls):.1f} s "
              f"(runs: {', '.join(f'{w:.1f}' for w in walls)}); target < 60 s")


if __name__ == "__main__":
    main()
