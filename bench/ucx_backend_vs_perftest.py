#!/usr/bin/env python3
"""Side-by-side: fabricmap's ucx backend (2 ranks, --pairwise) against ucx_perftest on the same
machine and UCX transports, both APIs: --ucx-api tag against tag_bw / tag_lat, --ucx-api rma
against ucp_put_bw / ucp_put_lat. Each repetition runs fabricmap and ucx_perftest back to back,
alternating which goes first; medians of the per-repetition ratios. The same bytes per
measurement on both sides. Needs Debian's ucx-utils (scripts/setup.sh installs it).

  python3 bench/ucx_backend_vs_perftest.py [--reps 5] [--tls self,sm] [--sizes 1048576,67108864]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pairwise_vs_ucx import BIN, env, ucx  # noqa: E402 (ucx_perftest's server and client)

SIZES = [1 << 20, 4 << 20, 16 << 20, 64 << 20]
VOLUME = 1 << 30  # bytes streamed per measurement
LAT_ITERS = 20000
PERFTEST = {"tag": ("tag_bw", "tag_lat"), "rma": ("ucp_put_bw", "ucp_put_lat")}


def shape(size):
    """fabricmap's window (osu_bw's 64, fewer for large messages) and iterations for VOLUME."""
    window = max(1, min(64, (256 << 20) // size))
    return window, max(3, VOLUME // (size * window))


def fabricmap(api, size, tls, tmp):
    """(bandwidth GB/s a->b, one-way latency us) of a 2-rank --backend ucx run."""
    window, iters = shape(size)
    out = os.path.join(tmp, "u.h5")
    cmd = ["mpirun", "-np", "2", "--mca", "btl", "self,vader", "-x", "UCX_TLS", f"{BIN}/fabricmap", "run",
           "--backend", "ucx", "--ucx-api", api, "--pair-bytes", str(size), "--pair-window", str(window),
           "--pair-iters", str(iters), "--latency-iters", str(LAT_ITERS), "--retests", "0", "--progress", "off",
           "-o", out]
    subprocess.run(cmd, env=env(tls), check=True, capture_output=True)
    with h5py.File(out, "r") as f:
        p = f["pairs"][0]
        return float(p["bw_ab"]), float(p["latency_us"])


def ratio_line(what, mine, theirs):
    r = [a / b for a, b in zip(mine, theirs)]
    return (f"{what}: fabricmap {statistics.median(mine):.3f}, ucx_perftest {statistics.median(theirs):.3f}; "
            f"ratio median {statistics.median(r):.3f} ({min(r):.2f}..{max(r):.2f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tls", default="self,sm")
    ap.add_argument("--apis", default="tag,rma")
    ap.add_argument("--sizes", default=",".join(str(s) for s in SIZES), help="bytes, comma-separated")
    args = ap.parse_args()
    port = 13700
    sizes = [int(x) for x in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for api in args.apis.split(","):
            bw_test, lat_test = PERFTEST[api]
            lat = {"fabricmap": [], "ucx": [], "ucx_median": []}
            for size in sizes:
                bw = {"fabricmap": [], "ucx": []}
                window, iters = shape(size)
                for rep in range(args.reps):
                    port += 2
                    runs = [("fabricmap", lambda: fabricmap(api, size, args.tls, tmp)),
                            ("ucx", lambda: ucx(bw_test, size, window * iters, args.tls, port)[:2])]
                    for name, run in runs[rep % 2:] + runs[:rep % 2]:  # alternate who goes first
                        b, l = run()
                        bw[name].append(b)
                        if size == sizes[0] and name == "fabricmap":
                            lat[name].append(l)
                    if size == sizes[0]:
                        _, overall, median = ucx(lat_test, 8, LAT_ITERS, args.tls, port + 1)
                        lat["ucx"].append(overall)
                        lat["ucx_median"].append(median)
                print(ratio_line(f"{api} bandwidth {size:>9} B (GB/s, {bw_test})", bw["fabricmap"], bw["ucx"]),
                      flush=True)
            print(ratio_line(f"{api} latency 8 B (us, {lat_test} overall)", lat["fabricmap"], lat["ucx"])
                  + f"; ucx_perftest's 50th percentile {statistics.median(lat['ucx_median']):.3f}", flush=True)


if __name__ == "__main__":
    main()
