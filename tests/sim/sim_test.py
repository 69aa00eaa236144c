#!/usr/bin/env python3
"""The real fabricmap on a simulated fat tree (SimGrid SMPI: the sim build and bench/sim), judged as
the blame scenarios are (tests/cluster/blame.py). Exits 77 (skipped) without smpirun, h5py or the
sim build (scripts/build.sh sim; ./test.sh builds it).

    python3 tests/sim/sim_test.py --build build/sim cable

Cases: `cable`, a 64-node fat tree (8 leaves of 8 hosts under 8 spines, routed by destination,
2 ranks per host) with leaf03's cable to spine05 at 30% both ways, run with --fabric: exactly that
leaf's uplinks named, nothing else of warning or worse, and no pair across that cable measured a
second time after a retest as slow as its first figure; `clean`, the same fabric with one rank per
host and no fault: nothing of warning or worse.
"""
import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "sim"))
sys.path.insert(0, os.path.join(ROOT, "tests", "cluster"))
import fabric  # noqa: E402  (bench/sim)

SKIP = 77
SHAPE = {"levels": 2, "leaves": 8, "hosts-per-leaf": 8, "spines": 8, "ranks-per-host": 1}
RANKS_PER_HOST = {"cable": 2, "clean": 1}
# blame.py's pairwise options: small transfers, as a user's first run
RUN_ARGS = ["--pairwise", "--pair-bytes", "64K", "--pair-window", "4", "--pair-iters", "4"]
CASES = {
    "cable": ([["cable", "leaf03", "spine05", 0.3, "both"]],
              [{"kind": "uplink", "switch": "leaf03", "node_a": -1, "node_b": -1, "rank": -1, "both": False,
                "label": "a cable of leaf03's uplinks"}]),
    "clean": ([], []),
}


def across_the_cable(x, y):
    """Whether node pair traffic x -> y crosses leaf03's cable to spine05 (D-mod-K by destination:
    up from a leaf to spine y mod 8, down to the leaf the same way), hosts n0000.. 8 to a leaf."""
    return x // 8 != y // 8 and ((x // 8 == 3 and y % 8 == 5) or (y // 8 == 3 and x % 8 == 5))


def settled_again(path):
    """The node pairs across the slow cable measured in a second retest: none should be, as their
    first retest, as slow as their first figure, settled them."""
    import h5py
    with h5py.File(path, "r") as f:
        host = {int(n["node"]): int(n["hostname"].decode().lstrip("n")) for n in f["topology"]["nodes"][:]}
        pairs = f["pairs"][:]
    second = {(int(p["a"]), int(p["b"])) for p in pairs if p["level"] == b"node" and int(p["sample"]) == 2}
    return sorted((a, b) for a, b in second
                  if across_the_cable(host[a], host[b]) or across_the_cable(host[b], host[a]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("case", choices=sorted(CASES))
    a = ap.parse_args()
    if not shutil.which("smpirun") or not os.path.exists(fabric.platform_library(a.build)):
        print("skipped: no smpirun or no sim build (scripts/build.sh sim)")
        return SKIP
    try:
        import blame  # noqa: F401  (h5py)
        import h5py  # noqa: F401
    except ImportError:
        print("skipped: no h5py")
        return SKIP
    import blame
    faults, culprits = CASES[a.case]
    with tempfile.TemporaryDirectory(prefix="fmsim-") as out:
        settings = dict(SHAPE, **{"ranks-per-host": RANKS_PER_HOST[a.case]})
        shape = fabric.write_shape(os.path.join(out, "shape"), settings, faults)
        code, output, real, _ = fabric.run(a.build, shape, out, RUN_ARGS, timeout=240)
        print(output[-6000:])
        print(f"# {real:.1f} s real")
        if code != 0:
            print(f"FAIL: fabricmap exited {code}")
            return 1
        results = blame.read_results(os.path.join(out, "run.h5"))
        verdict = blame.score(culprits, results["findings"])
        settled = settled_again(os.path.join(out, "run.h5")) if faults else []
    for f in verdict["findings"]:
        print(f"  {f['verdict']:8} {f['severity']} {f['kind']} {f['subject']}")
    if settled:
        print(f"FAIL: pairs across the slow cable measured a third time after two slow figures: {settled[:6]}")
        return 1
    if verdict["false_blame"] or verdict["missed"] or not verdict["exact"]:
        print(f"FAIL: exact {verdict['exact']}, false blame {verdict['false_blame']}, missed {verdict['missed']}")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
