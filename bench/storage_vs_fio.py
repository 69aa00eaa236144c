#!/usr/bin/env python3
"""Side-by-side: fabricmap's storage feed (`run --storage DIR --storage-write`) against fio and dd
on the same directory, the same ranks/jobs and bytes: sequential writes and reads of 4 MiB blocks
with O_DIRECT, and 4 KiB reads at random offsets for 2 s, one outstanding read per rank (fio's
psync engine, iodepth 1). Each repetition runs fabricmap, fio and dd back to back, rotating which
goes first; medians of the per-repetition ratios. dd runs one stream only (a single file), so its
column is only shown for --ranks 1. Needs fio (Debian: apt-get install fio; not part of the
project's setup).

  python3 bench/storage_vs_fio.py --dir /var/tmp/fm-bench [--ranks 1] [--bytes 1G] [--reps 5]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import h5py

BIN = os.environ.get("FABRICMAP_BIN", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                                   "release", "bin"))
BLOCK = 4 << 20
RANDOM_SECONDS = 2


def size_bytes(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def fabricmap(args, tmp):
    """{test: job GB/s (IOPS for randread)} of one --storage run with every rank writing and reading."""
    out = os.path.join(tmp, "s.h5")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # unbound, as fio and dd run: a rank bound to a core that something else also runs on reads
    # 4 KiB at random a third slower here (each read's wake-up waits for the core)
    subprocess.run(["mpirun", "-np", str(args.ranks), "--oversubscribe", "--bind-to", "none", f"{BIN}/fabricmap", "run",
                    "--storage",
                    args.dir, "--storage-write", "--storage-bytes", str(args.bytes), "--progress", "off", "-o", out],
                   env=env, check=True, capture_output=True)
    figures = {}
    with h5py.File(out, "r") as f:
        for row in f["storage"][:]:
            level, test = row["level"].decode(), row["test"].decode()
            if level == "all":
                figures[test] = float(row["iops"]) if test == "randread" else float(row["gbps"])
    return figures


def fio_job(args, rw, bs, extra=()):
    cmd = ["fio", "--name=fm", f"--directory={args.dir}", f"--rw={rw}", f"--bs={bs}", "--direct=1",
           "--ioengine=psync", "--iodepth=1", f"--numjobs={args.ranks}", f"--size={args.bytes}",
           "--group_reporting", "--output-format=json"] + list(extra)
    job = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)["jobs"][0]
    return job["write"] if rw == "write" else job["read"]


def fio(args):
    """The same three tests with fio: its files laid out by the write, read back, then read at random."""
    write = fio_job(args, "write", "4M", ["--end_fsync=1"])
    read = fio_job(args, "read", "4M")
    rand = fio_job(args, "randread", "4k", ["--time_based", f"--runtime={RANDOM_SECONDS}"])
    for name in os.listdir(args.dir):
        if name.startswith("fm."):
            os.remove(os.path.join(args.dir, name))
    return {"write": write["bw_bytes"] / 1e9, "read": read["bw_bytes"] / 1e9, "randread": rand["iops"]}


def dd_rate(cmd):
    """GB/s from dd's summary line ("N bytes (...) copied, S s, ...")."""
    err = subprocess.run(cmd, check=True, capture_output=True, text=True).stderr
    m = re.search(r"^(\d+) bytes .* copied, ([0-9.]+) s", err, re.M)
    return int(m.group(1)) / float(m.group(2)) / 1e9


def dd(args):
    path = os.path.join(args.dir, "dd.dat")
    count = str(args.bytes // BLOCK)
    try:
        write = dd_rate(["dd", "if=/dev/zero", f"of={path}", "bs=4M", f"count={count}", "oflag=direct", "conv=fsync"])
        read = dd_rate(["dd", f"if={path}", "of=/dev/null", "bs=4M", "iflag=direct"])
    finally:
        os.remove(path)
    return {"write": write, "read": read}


def report(tests, runs):
    for test in tests:
        mine = [r["fabricmap"][test] for r in runs]
        line = f"{test:>9}: fabricmap {statistics.median(mine):.3f}"
        for peer in ("fio", "dd"):
            if test not in runs[0].get(peer, {}):
                continue
            theirs = [r[peer][test] for r in runs]
            ratio = [a / b for a, b in zip(mine, theirs)]
            line += (f", {peer} {statistics.median(theirs):.3f} (ratio median {statistics.median(ratio):.3f}, "
                     f"{min(ratio):.2f}..{max(ratio):.2f})")
        print(line + ("  IOPS" if test == "randread" else "  GB/s"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True, help="a directory on the file system to measure (not tmpfs)")
    ap.add_argument("--ranks", type=int, default=1, help="fabricmap ranks = fio jobs")
    ap.add_argument("--bytes", default="1G", help="per rank (1G, 256M)")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    args.bytes = size_bytes(args.bytes)
    if shutil.which("fio") is None:
        sys.exit("storage_vs_fio: fio is not installed (Debian: apt-get install fio)")
    os.makedirs(args.dir, exist_ok=True)
    tools = {"fabricmap": lambda: fabricmap(args, tmp), "fio": lambda: fio(args)}
    if args.ranks == 1:
        tools["dd"] = lambda: dd(args)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        order = list(tools)
        for rep in range(args.reps):
            runs.append({name: tools[name]() for name in order})
            order = order[1:] + order[:1]
            print(f"rep {rep + 1}: " + "; ".join(f"{k} {v}" for k, v in runs[-1].items()), file=sys.stderr)
    print(f"# {args.ranks} rank(s) x {args.bytes >> 20} MiB under {args.dir}, {args.reps} repetitions, medians")
    report(["write", "read", "randread"], runs)


if __name__ == "__main__":
    main()
