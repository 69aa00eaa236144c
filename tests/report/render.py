#!/usr/bin/env python3
"""The HTML report of a real run, rendered by headless Chromium: a small job (collectives,
pairwise, training pattern and scaling on 4 ranks in 2 emulated nodes) -> `fabricmap report` ->
`chromium --headless --screenshot`. The PNG must exist, be large enough, not be blank, and
Chromium must log no console or JavaScript errors (the page has no scripts; an error means broken
markup or an attempted fetch). Exit 77 (skip) only when Chromium is not installed.

usage: render.py --fabricmap BIN --mpiexec MPIEXEC [--keep DIR]
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77


def check(cond, message):
    if not cond:
        print(f"FAIL: {message}", file=sys.stderr)
        sys.exit(1)


def png_pixels(path):
    """(width, height, rows of RGB(A) byte tuples) of an 8-bit RGB/RGBA PNG, with the standard library only."""
    with open(path, "rb") as f:
        data = f.read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG")
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            check(depth == 8 and colour in (2, 6), f"unexpected PNG format depth {depth} colour {colour}")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = prev[x]
            c = prev[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + b) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fabricmap", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--keep", help="leave the .h5, .html and .png here")
    args = ap.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("SKIP: chromium not installed (scripts/setup.sh installs it)")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="fabricmap-report-")
    try:
        out = args.keep or tmp
        os.makedirs(out, exist_ok=True)
        h5 = os.path.join(out, "run.h5")
        run = [args.mpiexec, "-n", "4", "--oversubscribe", args.fabricmap, "run", "--ranks-per-node", "2",
               "--patterns", "collectives,pairwise,training", "--layout", "tp=2,pp=1,dp=2", "--scaling",
               "--scaling-bytes", "256K", "--ops", "all_reduce,all_gather,sendrecv", "-b", "8", "-e", "1M", "-f", "8",
               "-n", "3", "-w", "1", "--pair-bytes", "64K", "--pair-iters", "3", "--latency-iters", "20",
               "--seq-len", "128", "--hidden", "256", "--train-iters", "3", "--progress", "off", "-o", h5]
        p = subprocess.run(run, capture_output=True, text=True, timeout=240)
        check(p.returncode == 0, f"run exit {p.returncode}: {p.stderr[-1500:]}")

        # the default output sits beside the input
        p = subprocess.run([args.fabricmap, "report", h5], capture_output=True, text=True, timeout=60)
        check(p.returncode == 0 and os.path.exists(os.path.join(out, "run.html")), f"report exit {p.returncode}: {p.stderr}")
        html = os.path.join(out, "report.html")
        p = subprocess.run([args.fabricmap, "report", h5, "-o", html], capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, f"report -o exit {p.returncode}: {p.stderr}")
        page = open(html, encoding="utf-8").read()
        for needle in ("Verdict", "Node x node bandwidth", "Rank x rank bandwidth", "all_reduce", "Training traffic",
                       "<h3>Scaling</h3>", "Provenance"):
            check(needle in page, f"report lacks {needle!r}")
        check("http://" not in page and "https://" not in page and "<script" not in page, "report is not self-contained")
        print(f"report: {len(page)} bytes")

        # unusable input: one line, exit 2; the results file is never overwritten
        bad = os.path.join(out, "not.h5")
        with open(bad, "w") as f:
            f.write("not hdf5\n")
        p = subprocess.run([args.fabricmap, "report", bad, "-o", os.path.join(out, "bad.html")],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, f"bad input: {p.returncode} {p.stderr}")
        p = subprocess.run([args.fabricmap, "report", h5, "-o", h5], capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and "is also this command's input" in p.stderr, f"-o over the input: {p.returncode} {p.stderr}")

        png = os.path.join(out, "report.png")
        profile = tempfile.mkdtemp(prefix="chromium-", dir=tmp)
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--enable-logging=stderr", "--v=0", f"--user-data-dir={profile}", f"--screenshot={png}",
               "--window-size=1400,3000", "file://" + os.path.abspath(html)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"chromium exit {p.returncode}: {p.stderr[-2000:]}")
        errors = [line for line in p.stderr.splitlines()
                  if "CONSOLE" in line or "Uncaught" in line or "SyntaxError" in line or "net::ERR_" in line]
        check(not errors, "chromium logged page errors:\n" + "\n".join(errors))
        check(os.path.exists(png) and os.path.getsize(png) > 20000, f"screenshot missing or tiny: {png}")
        width, height, channels, rows = png_pixels(png)
        check((width, height) == (1400, 3000), f"screenshot is {width}x{height}")
        colours, inked = set(), 0
        for y in range(0, height, 4):
            row = rows[y]
            for x in range(0, width * channels, channels * 4):
                px = row[x:x + 3]
                colours.add(px)
                inked += px != b"\xff\xff\xff" and px != b"\xf8\xfa\xfc"  # white, the page background
        samples = (height // 4) * (width // 4)
        print(f"screenshot {width}x{height}: {len(colours)} distinct colours, {100 * inked / samples:.1f}% inked")
        check(len(colours) >= 50, f"screenshot looks blank: {len(colours)} colours")
        check(inked > samples // 20, f"screenshot looks blank: {inked} of {samples} samples inked")
        print("OK")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
