#!/usr/bin/env python3
"""Side-by-side: fabricmap's 2-rank pair bandwidth and latency vs OSU Micro-Benchmarks' osu_bw and
osu_latency, built separately (never part of this repository; bench/README.md says how), same
ranks, transport, message sizes, window, iterations and warm-up. Samples alternate fabricmap and
OSU in each repetition (rotating who goes first), each taken only when the machine is otherwise
idle (/proc/stat) and retaken when other processes used the CPU while it ran; the script prints
per size the medians and the median of the per-repetition ratios fabricmap / OSU.

  python3 bench/pairwise_vs_osu.py OSU_BUILD_DIR [--fabricmap BIN] [--reps 7] [--sizes 1M,4M,16M,64M]
          [--window 64] [--idle 0.15] [--lat-iters 10000]

OSU_BUILD_DIR is searched for the osu_bw and osu_latency executables.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import h5py

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
# Both programs run under exactly this: two ranks on one host, Open MPI's shared-memory path.
MPIRUN = ["mpirun", "-np", "2", "--mca", "btl", "self,vader"]
LAT_BYTES = 8
VOLUME = 8 << 30  # bytes per direction per measurement, at least 5 and at most 20 iterations


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def find(build_dir, name):
    for root, _, files in os.walk(build_dir):
        path = os.path.join(root, name)
        if name in files and os.access(path, os.X_OK):
            return path
    sys.exit(f"no {name} executable under {build_dir}")


def cpu_times():
    """(all jiffies, idle jiffies) of the machine, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields[:8]), idle  # user..steal; guest time is already in user


def busy_fraction(seconds):
    total0, idle0 = cpu_times()
    time.sleep(seconds)
    total1, idle1 = cpu_times()
    return 1.0 - (idle1 - idle0) / max(1, total1 - total0)


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def others_during(run):
    """Runs run(); returns (its value, the share of all cores that other processes used meanwhile):
    the machine's busy time less what this script's children (mpirun and its ranks) used."""
    total0, idle0 = cpu_times()
    own0 = children_cpu()
    value = run()
    total1, idle1 = cpu_times()
    busy = (total1 - total0) - (idle1 - idle0)
    own = (children_cpu() - own0) * os.sysconf("SC_CLK_TCK")
    return value, max(0.0, busy - own) / max(1, total1 - total0)


def wait_until_idle(threshold, max_wait, gate):
    """Blocks until the whole machine was busy below `threshold` (0..1 of all cores) for two
    consecutive half-second windows; gives up after max_wait seconds. Records what it saw in gate."""
    start = time.monotonic()
    quiet = 0
    while time.monotonic() - start < max_wait:
        load = busy_fraction(0.5)
        quiet = quiet + 1 if load < threshold else 0
        if quiet >= 2:
            gate["waited"] += time.monotonic() - start
            gate["loads"].append(load)
            return True
    gate["timeouts"] += 1
    return False


def pair_shape(size, window):
    iters = max(5, min(20, VOLUME // (size * window)))
    skip = 2 if size > 8192 else 10  # osu_bw's skip; fabricmap's planner uses the same
    return iters, skip


def fabricmap_bw(args, size, tmp):
    """fabricmap's rank 0 -> 1 bandwidth, GB/s, from the file's /pairs table."""
    iters, _ = pair_shape(size, args.window)
    out = os.path.join(tmp, "bw.h5")
    subprocess.run(MPIRUN + [args.fabricmap, "run", "--pairwise", "--pair-bytes", str(size),
                             "--pair-window", str(args.window), "--pair-iters", str(iters),
                             "--latency-iters", "0", "--retests", "0", "--progress", "off", "-o", out],
                   env=ENV, check=True, capture_output=True)
    with h5py.File(out, "r") as f:
        return float(f["pairs"][0]["bw_ab"])


def fabricmap_latency(args, tmp):
    """fabricmap's one-way 8 B latency, us, from /pairs (its streams as small as they go)."""
    out = os.path.join(tmp, "lat.h5")
    subprocess.run(MPIRUN + [args.fabricmap, "run", "--pairwise", "--pair-bytes", "8", "--pair-window", "1",
                             "--pair-iters", "1", "--latency-iters", str(args.lat_iters), "--retests", "0",
                             "--progress", "off", "-o", out],
                   env=ENV, check=True, capture_output=True)
    with h5py.File(out, "r") as f:
        return float(f["pairs"][0]["latency_us"])


def osu_last_value(cmd):
    r = subprocess.run(MPIRUN + cmd, env=ENV, check=True, capture_output=True, text=True)
    rows = [line.split() for line in r.stdout.splitlines() if line.strip() and not line.startswith("#")]
    return float(rows[-1][1])


def osu_bw(args, size):
    """osu_bw at one size with the same window, iterations and warm-up, GB/s (it prints MB/s)."""
    iters, skip = pair_shape(size, args.window)
    return osu_last_value([args.osu_bw, "-m", f"{size}:{size}", "-W", str(args.window), "-i", str(iters),
                           "-x", str(skip)]) / 1e3


def osu_latency(args):
    return osu_last_value([args.osu_latency, "-m", f"{LAT_BYTES}:{LAT_BYTES}", "-i", str(args.lat_iters),
                           "-x", "100"])


def sample(args, gate, run):
    """One sample taken when the machine is idle; retaken (up to --attempts) when other processes
    used more than the idle threshold while it ran, keeping the least disturbed."""
    best = None
    for _ in range(args.attempts):
        wait_until_idle(args.idle, args.max_wait, gate)
        value, others = others_during(run)
        if best is None or others < best[1]:
            best = (value, others)
        if others < args.idle:
            break
        gate["retaken"] += 1
    gate["during"].append(best[1])
    return best[0]


def interleaved(args, gate, first, second):
    """One repetition's pair of samples, each taken idle, in the given order."""
    return [sample(args, gate, f) for f in (first, second)]


def summarize(name, fm, osu, unit, fmt):
    ratios = [a / b for a, b in zip(fm, osu)]
    print(f"| {name} | {len(ratios)} | {statistics.median(fm):{fmt}} {unit} | {statistics.median(osu):{fmt}} {unit} | "
          f"{statistics.median(ratios):.3f} ({min(ratios):.2f}..{max(ratios):.2f}) |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("osu_build_dir")
    ap.add_argument("--fabricmap", default="build/release/bin/fabricmap")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--sizes", default="1M,4M,16M,64M")
    ap.add_argument("--window", type=int, default=64)
    ap.add_argument("--idle", type=float, default=0.15, help="busy fraction of all cores below which a sample starts")
    ap.add_argument("--max-wait", type=float, default=900, help="seconds to wait for idle before sampling anyway")
    ap.add_argument("--attempts", type=int, default=3, help="tries per sample when others used the CPU during it")
    ap.add_argument("--lat-iters", type=int, default=10000)
    args = ap.parse_args()
    args.osu_bw = find(args.osu_build_dir, "osu_bw")
    args.osu_latency = find(args.osu_build_dir, "osu_latency")
    sizes = [parse_size(s) for s in args.sizes.split(",") if s]  # --sizes "": latency only
    gate = {"waited": 0.0, "loads": [], "timeouts": 0, "retaken": 0, "during": []}
    bw = {s: ([], []) for s in sizes}
    lat = ([], [])
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            for size in sizes:
                fm = lambda: fabricmap_bw(args, size, tmp)
                ref = lambda: osu_bw(args, size)
                a, b = interleaved(args, gate, fm, ref) if rep % 2 == 0 else interleaved(args, gate, ref, fm)[::-1]
                bw[size][0].append(a)
                bw[size][1].append(b)
                print(f"rep {rep} {size} B: fabricmap {a:.3f} GB/s, osu_bw {b:.3f} GB/s", file=sys.stderr, flush=True)
            fm = lambda: fabricmap_latency(args, tmp)
            ref = lambda: osu_latency(args)
            a, b = interleaved(args, gate, fm, ref) if rep % 2 == 0 else interleaved(args, gate, ref, fm)[::-1]
            lat[0].append(a)
            lat[1].append(b)
            print(f"rep {rep} latency: fabricmap {a:.3f} us, osu_latency {b:.3f} us", file=sys.stderr, flush=True)
    during = sorted(gate["during"])
    print(f"# window {args.window}, {args.reps} repetitions, {time.monotonic() - start:.0f} s; idle gate "
          f"< {args.idle:.0%} busy: median load before a sample "
          f"{statistics.median(gate['loads']) if gate['loads'] else float('nan'):.1%}, "
          f"{gate['timeouts']} waits gave up after {args.max_wait:.0f} s, {gate['waited']:.0f} s waited; "
          f"other processes during the kept samples: median {statistics.median(during):.1%} of the cores, "
          f"max {during[-1]:.1%}, {sum(d >= args.idle for d in during)} of {len(during)} above the gate; "
          f"{gate['retaken']} samples retaken")
    print("| size | reps | fabricmap median | OSU median | fabricmap / OSU, median (min..max) |")
    print("|---|---|---|---|---|")
    for size in sizes:
        summarize(f"{size >> 20} MiB" if size >= 1 << 20 else f"{size} B", *bw[size], "GB/s", ".2f")
    summarize(f"latency, {LAT_BYTES} B", *lat, "us", ".3f")


if __name__ == "__main__":
    main()
