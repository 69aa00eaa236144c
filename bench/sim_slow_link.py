#!/usr/bin/env python3
"""Does a broken cable hold the cluster? The pairwise phase's simulated wall time on a clean fat
tree beside the same tree with one cable at a small share of its rate (a leaf-spine cable, or a
host's cable), in full and quick pairwise mode, on the sim build (bench/sim). The goal: within 2x
of the clean phase. Also says what was named (the culprit is expected among the warnings).

    scripts/build.sh sim
    /usr/bin/python3 bench/sim_slow_link.py --build build/sim --nodes 64 --share 0.01

Shapes: 64 nodes = 8 leaves x 8 hosts, 256 = 16 x 16, 1 rank per host, 1:1. Needs h5py.
"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "sim"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cluster"))
sys.path.insert(0, HERE)
import blame  # noqa: E402
import fabric  # noqa: E402
import sim_scenarios  # noqa: E402


def once(build, shape, faults, mode, pair_bytes):
    with tempfile.TemporaryDirectory(prefix="fmslow-") as out:
        path = fabric.write_shape(os.path.join(out, "shape"), shape, faults)
        args = sim_scenarios.run_args(pair_bytes) + (["--pairwise-mode", "quick"] if mode == "quick" else [])
        code, output, real, _ = fabric.run(build, path, out, args, timeout=6 * 3600)
        h5 = os.path.join(out, "run.h5")
        if code != 0 or not os.path.exists(h5):
            raise SystemExit(f"run failed ({code}):\n{output[-3000:]}")
        results = blame.read_results(h5)
        named = [f"{f['severity']} {f['kind']} {f['subject']}" for f in results["findings"]
                 if f["severity"] in blame.SERIOUS]
        return sim_scenarios.pairwise_seconds(h5), retests(h5), real, named


def retests(path):
    """The retest rounds of the pairwise phase: how many, and their simulated seconds."""
    import h5py
    with h5py.File(path, "r") as f:
        retested = {int(p["step"]) for p in f["pairs"][:] if int(p["sample"]) > 0}
        seconds = [float(s["seconds"]) for s in f["steps"][:] if int(s["step"]) in retested]
    return len(seconds), sum(seconds)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build/sim")
    ap.add_argument("--nodes", type=int, default=64, choices=sorted(sim_scenarios.SHAPES))
    ap.add_argument("--share", type=float, default=0.01)
    ap.add_argument("--modes", default="full,quick")
    ap.add_argument("--pair-bytes", default=sim_scenarios.PAIR_BYTES)
    a = ap.parse_args()
    leaves = sim_scenarios.SHAPES[a.nodes]
    shape = {"levels": 2, "leaves": leaves, "hosts-per-leaf": leaves, "spines": leaves, "ranks-per-host": 1}
    cases = [("clean", []),
             (f"cable leaf01-spine03 at {a.share}", [["cable", "leaf01", "spine03", a.share, "both"]]),
             (f"host n0010 at {a.share}", [["host", "n0010", a.share, "both"]])]
    print(f"{a.nodes} nodes ({leaves} leaves x {leaves} hosts, {leaves} spines), "
          f"pairs {' '.join(sim_scenarios.run_args(a.pair_bytes)[1:])}")
    for mode in a.modes.split(","):
        clean = None
        for label, faults in cases:
            simulated, (rounds, retest_seconds), real, named = once(a.build, shape, faults, mode, a.pair_bytes)
            clean = clean or simulated
            print(f"{mode:5} {label:30} pairwise {simulated:7.3f} s simulated ({simulated / clean:5.2f}x clean; "
                  f"{rounds} retest rounds, {retest_seconds:.3f} s), {real:4.0f} s real; "
                  f"named: {'; '.join(n[:60] for n in named[:4]) or 'nothing'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
