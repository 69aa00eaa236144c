#!/usr/bin/env python3
"""A simulated fat tree and fabricmap run on it (SimGrid SMPI, the sim build).

    python3 bench/sim/fabric.py --build build/sim --shape SHAPE --out DIR [-- RUN ARGS]

writes DIR/fabric.txt (the --fabric file) and DIR/hosts (the hostfile) from SHAPE (the format is in
bench/sim/fat_tree.h), then runs `fabricmap run --fabric DIR/fabric.txt --output DIR/run.h5 RUN ARGS`
as simulated ranks on that fabric and prints its output. The same functions serve
bench/sim_scenarios.py and the suite's sim test.
"""
import argparse
import ctypes
import os
import subprocess
import sys
import time

# Simulated time only: the ranks' own computation (buffer fills, checks) takes none, and no
# rank's globals need privatizing (fabricmap keeps no mutable globals a rank could share).
# Open MPI's collective algorithms, as a real run's: SMPI's default selection made a 256-rank
# MPI_Allgather of 600 bytes take 107 s of real time (0.09 s with these).
SMPIRUN_CFG = ["--cfg=smpi/simulate-computation:no", "--cfg=smpi/privatization:no", "--cfg=smpi/coll-selector:ompi",
               "--cfg=smpi/display-timing:yes", "--log=root.thres:warning", "--log=smpi_config.thres:error"]


def platform_library(build):
    return os.path.join(os.path.abspath(build), "lib", "libfabricmap_sim_platform.so")


def write_fabric(build, shape, out):
    """Writes out/fabric.txt and out/hosts for the shape file; returns their paths."""
    os.makedirs(out, exist_ok=True)
    fabric, hosts = os.path.join(out, "fabric.txt"), os.path.join(out, "hosts")
    lib = ctypes.CDLL(platform_library(build))
    error = ctypes.create_string_buffer(512)
    if lib.fabricmap_sim_write(shape.encode(), fabric.encode(), hosts.encode(), error, len(error)) != 0:
        raise SystemExit(f"{shape}: {error.value.decode()}")
    return fabric, hosts


def write_shape(path, settings, faults=()):
    """A shape file from a dict of settings and fault lines (lists of words)."""
    with open(path, "w") as f:
        for key, value in settings.items():
            f.write(f"{key} {value}\n")
        for fault in faults:
            f.write("fault " + " ".join(str(w) for w in fault) + "\n")
    return path


def run(build, shape, out, args, timeout=1800, with_fabric=True):
    """fabricmap run on the simulated fabric (given its --fabric file unless with_fabric is False):
    (exit code, output, real seconds, simulated seconds)."""
    fabric, hosts = write_fabric(build, shape, out)
    ranks = sum(1 for _ in open(hosts))
    env = dict(os.environ, FABRICMAP_SIM_SHAPE=os.path.abspath(shape))
    cmd = (["smpirun", "-np", str(ranks), "-hostfile", hosts, "-platform", platform_library(build)] + SMPIRUN_CFG +
           [os.path.join(build, "bin", "fabricmap"), "run"] + (["--fabric", fabric] if with_fabric else []) +
           ["--output", os.path.join(out, "run.h5"), "--force"] + list(args))
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    real = time.monotonic() - start
    simulated = None
    for line in p.stdout.splitlines():  # smpi/display-timing: "Simulated time: 12.3 seconds."
        if "Simulated time:" in line:
            simulated = float(line.split("Simulated time:")[1].split()[0])
    return p.returncode, p.stdout, real, simulated


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build/sim")
    ap.add_argument("--shape", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    code, output, real, simulated = run(a.build, a.shape, a.out, args)
    sys.stdout.write(output)
    print(f"# simulated {simulated} s in {real:.1f} s real")
    return code


if __name__ == "__main__":
    sys.exit(main())
