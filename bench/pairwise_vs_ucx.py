#!/usr/bin/env python3
"""Side-by-side: fabricmap's 2-rank pairwise bandwidth and latency (Open MPI on its UCX pml) vs
ucx_perftest (tag_bw, tag_lat) on the same machine and UCX transports, and vs a bare MPI loop of
the same shape (bench/bare_pair.cpp) that separates fabricmap's own cost from the MPI layer's,
rotating the order in each repetition; medians of the ratios. Needs Debian's ucx-utils
(scripts/setup.sh installs it).

  python3 bench/pairwise_vs_ucx.py [--reps 5] [--tls self,sm] [--sizes 1024,65536]
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

import h5py

BIN = "build/release/bin"
SIZES = [1 << 10, 16 << 10, 256 << 10, 4 << 20, 64 << 20]
VOLUME = 512 << 20  # bytes streamed per measurement
LAT_ITERS = 20000


def env(tls):
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                UCX_TLS=tls)


MPI_UCX = ["mpirun", "-np", "2", "--mca", "pml", "ucx", "--mca", "pml_ucx_tls", "any",
           "--mca", "pml_ucx_devices", "any", "-x", "UCX_TLS"]


def shape(size):
    window = max(1, min(64, (8 << 20) // size))  # 8 MiB per window (fabricmap's default before osu_bw's 64)
    return window, max(1, VOLUME // (size * window))


def bare(size, tls):
    """The same stream and ping-pong in a bare MPI program: (GB/s, us)."""
    window, iters = shape(size)
    r = subprocess.run(MPI_UCX + [f"{BIN}/fabricmap_bare_pair", str(size), str(window), str(iters),
                                  str(LAT_ITERS)], env=env(tls), check=True, capture_output=True, text=True)
    bw, lat = r.stdout.split()
    return float(bw), float(lat)


def fabricmap(size, tls, tmp):
    """(bandwidth GB/s a->b, one-way latency us) of a 2-rank --pairwise run."""
    window, iters = shape(size)
    out = os.path.join(tmp, "p.h5")
    subprocess.run(MPI_UCX + [f"{BIN}/fabricmap", "run",
                    "--pairwise", "--pair-bytes", str(size), "--pair-window", str(window),
                    "--pair-iters", str(iters), "--latency-iters", str(LAT_ITERS), "--retests", "0",
                    "-o", out], env=env(tls), check=True, capture_output=True)
    with h5py.File(out, "r") as f:
        p = f["pairs"][0]
        return float(p["bw_ab"]), float(p["latency_us"])


def ucx(test, size, iters, tls, port):
    """ucx_perftest's final line: (bandwidth GB/s, overall latency us, 50th-percentile latency us).
    "overall" is the whole timed span over the iterations, the statistic fabricmap, OSU and the
    bare loop report (a mean); the percentile is of ucx_perftest's per-iteration samples, lower
    than the mean whenever the machine interrupts some round trips."""
    server = subprocess.Popen(["ucx_perftest", "-p", str(port)], env=env(tls),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        r = subprocess.run(["ucx_perftest", "127.0.0.1", "-p", str(port), "-t", test, "-s", str(size),
                            "-n", str(iters), "-w", str(max(10, iters // 10)), "-f"],
                           env=env(tls), check=True, capture_output=True, text=True)
    finally:
        server.wait(timeout=60)
    fields = r.stdout.strip().splitlines()[-1].split()
    # iterations, latency 50%ile, avg, overall (us), bandwidth avg, overall (MiB/s), rates
    return float(fields[5]) * (1 << 20) / 1e9, float(fields[3]), float(fields[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tls", default="self,sm")
    ap.add_argument("--sizes", default=",".join(str(s) for s in SIZES), help="bytes, comma-separated")
    args = ap.parse_args()
    port = 13500
    with tempfile.TemporaryDirectory() as tmp:
        lat = {"fabricmap": [], "ucx": [], "bare": [], "ucx_median": []}
        sizes = [int(x) for x in args.sizes.split(",")]
        for size in sizes:
            bw = {"fabricmap": [], "ucx": [], "bare": []}
            for rep in range(args.reps):
                port += 1
                runs = [("fabricmap", lambda: fabricmap(size, args.tls, tmp)),
                        ("ucx", lambda: ucx("tag_bw", size, max(20, VOLUME // size), args.tls, port)[:2]),
                        ("bare", lambda: bare(size, args.tls))]
                runs = runs[rep % 3:] + runs[:rep % 3]  # rotate who goes first
                for name, run in runs:
                    b, l = run()
                    bw[name].append(b)
                    if size == sizes[0] and name != "ucx":
                        lat[name].append(l)
                if size == sizes[0]:
                    port += 1
                    _, overall, median = ucx("tag_lat", 8, LAT_ITERS, args.tls, port)
                    lat["ucx"].append(overall)
                    lat["ucx_median"].append(median)
            med = {k: statistics.median(v) for k, v in bw.items()}
            vs_ucx = [a / b for a, b in zip(bw["fabricmap"], bw["ucx"])]
            vs_bare = [a / b for a, b in zip(bw["fabricmap"], bw["bare"])]
            print(f"bandwidth {size:>9} B: fabricmap {med['fabricmap']:6.2f} GB/s, ucx_perftest tag_bw "
                  f"{med['ucx']:6.2f}, bare MPI {med['bare']:6.2f}; fabricmap/ucx_perftest median "
                  f"{statistics.median(vs_ucx):.3f} ({min(vs_ucx):.2f}..{max(vs_ucx):.2f}), fabricmap/bare "
                  f"{statistics.median(vs_bare):.3f} ({min(vs_bare):.2f}..{max(vs_bare):.2f})", flush=True)
        vs_ucx = [a / b for a, b in zip(lat["fabricmap"], lat["ucx"])]
        vs_bare = [a / b for a, b in zip(lat["fabricmap"], lat["bare"])]
        print(f"latency 8 B: fabricmap {statistics.median(lat['fabricmap']):.3f} us, ucx_perftest tag_lat "
              f"{statistics.median(lat['ucx']):.3f} (its 50th percentile "
              f"{statistics.median(lat['ucx_median']):.3f}), bare MPI {statistics.median(lat['bare']):.3f}; "
              f"fabricmap/ucx_perftest median {statistics.median(vs_ucx):.3f} ({min(vs_ucx):.2f}.."
              f"{max(vs_ucx):.2f}), fabricmap/bare {statistics.median(vs_bare):.3f} "
              f"({min(vs_bare):.2f}..{max(vs_bare):.2f})")


if __name__ == "__main__":
    main()
