#!/usr/bin/env python3
"""The real fabricmap on a simulated fat tree (SimGrid SMPI: the sim build and bench/sim), judged as
the blame scenarios are (tests/cluster/blame.py). Exits 77 (skipped) without smpirun, h5py or the
sim build (scripts/build.sh sim; ./test.sh builds it).

    python3 tests/sim/sim_test.py --build build/sim cable

Cases: `cable`, a 64-node fat tree (8 leaves of 8 hosts under 8 spines, routed by destination,
2 ranks per host) with leaf03's cable to spine05 at 30% both ways, run with --fabric: exactly that
leaf's uplinks named, nothing else of warning or worse, and no pair across that cable measured a
second time after a retest as slow as its first figure; `clean`, the same fabric with one rank per
host and no fault: nothing of warning or worse; `rounds`, one rank per host, leaf02's cable to
spine00 at 37.5% and 1 MiB messages (bandwidth-bound): that cable named, and every figure of a
pair across leaves whose route avoids it (first pass and retests) at 0.8x of their median or
better: full mode's rounds keep each cable to one pair (lanes; 68 figures at 0.57x without);
`broken`, one rank per host, host n0010's cable at 1% both ways and 1 MiB messages: that node
named, and of its 63 pairs, all far below, only a sample (planner.h kRetestSample) measured
again, its first round's included;
`leaf`, quick mode on a 2:1 tree (4 spines), one rank per host, every cable of leaf07 at 21.5%
and 1 MiB messages: that switch named, nothing else, and no two pairs of a round of the first
pass on one cable (the rounds keep to routing by destination): pairs that met read half their
rate, which widened the spread until the leaf's own pairs passed the bar and a few were named
as links.
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
RANKS_PER_HOST = {"cable": 2, "clean": 1, "rounds": 1, "broken": 1, "leaf": 1}
SPINES = {"leaf": 4}  # 2:1; the others 1:1
MORE_ARGS = {"leaf": ["--pairwise-mode", "quick"]}
# blame.py's pairwise options: small transfers, as a user's first run
RUN_ARGS = ["--pairwise", "--pair-bytes", "64K", "--pair-window", "4", "--pair-iters", "4"]
PAIR_BYTES = {"rounds": "1M", "broken": "1M", "leaf": "1M"}
RETEST_SAMPLE = 4  # orchestrator/run/planner.h kRetestSample


def uplink_of(leaf):
    return [{"kind": "uplink", "switch": leaf, "node_a": -1, "node_b": -1, "rank": -1, "both": False,
             "label": f"a cable of {leaf}'s uplinks"}]


CASES = {
    "cable": ([["cable", "leaf03", "spine05", 0.3, "both"]], uplink_of("leaf03")),
    "clean": ([], []),
    "rounds": ([["cable", "leaf02", "spine00", 0.375, "both"]], uplink_of("leaf02")),
    "broken": ([["host", "n0010", 0.01, "both"]], [{"kind": "node", "node_a": 10, "node_b": -1, "rank": -1,
                                                    "both": False, "label": "n0010"}]),
    "leaf": ([["leaf", "leaf07", 0.215]], [{"kind": "switch", "switch": "leaf07", "node_a": -1, "node_b": -1,
                                            "rank": -1, "both": False, "label": "leaf07"}]),
}


def across_the_cable(x, y, leaf, spine):
    """Whether traffic from host x to host y crosses the cable of leaf `leaf` to spine `spine` either
    way (D-mod-K by destination: up from x's leaf to spine y mod 8, down from it to y's leaf), hosts
    n0000.. 8 to a leaf."""
    return x // 8 != y // 8 and y % 8 == spine and leaf in (x // 8, y // 8)


def cable_of(case):
    """The faulty cable of a case as (leaf, spine) numbers."""
    fault = CASES[case][0][0]
    return int(fault[1][len("leaf"):]), int(fault[2][len("spine"):])


def read_pairs(path):
    """Each node's host number and the /pairs rows."""
    import h5py
    with h5py.File(path, "r") as f:
        host = {int(n["node"]): int(n["hostname"].decode().lstrip("n")) for n in f["topology"]["nodes"][:]}
        return host, f["pairs"][:]


def settled_again(path, cable):
    """The node pairs across the slow cable measured in a second retest: none should be, as their
    first retest, as slow as their first figure, settled them."""
    host, pairs = read_pairs(path)
    second = {(int(p["a"]), int(p["b"])) for p in pairs if p["level"] == b"node" and int(p["sample"]) == 2}
    return sorted((a, b) for a, b in second
                  if across_the_cable(host[a], host[b], *cable) or across_the_cable(host[b], host[a], *cable))


def slowed_off_the_cable(path, cable):
    """Figures (one way) of pairs across leaves off the slow cable below 0.8x of their median: the
    rounds keep each cable to one pair a round (routing by destination, as the simulator's), so
    only another round running beside theirs can slow them. The first pass's and the retests'."""
    host, pairs = read_pairs(path)
    ways = [(p, way, host[int(p[x])], host[int(p[y])]) for p in pairs
            for way, x, y in (("bw_ab", "a", "b"), ("bw_ba", "b", "a"))]
    off = [(float(p[way]), f"n{x:04d} -> n{y:04d} step {int(p['step'])}") for p, way, x, y in ways
           if x // 8 != y // 8 and not across_the_cable(x, y, *cable) and not across_the_cable(y, x, *cable)]
    if not off:
        return ["no pair off the cable"]
    median = sorted(bw for bw, _ in off)[len(off) // 2]
    return [f"{what}: {bw / median:.2f}x" for bw, what in off if bw < 0.8 * median]


def met_on_a_cable(path, spines):
    """First-pass rounds (sample 0) in which two pairs across leaves take one cable the same way
    (D-mod-K by destination: up from the sender's leaf to spine d mod spines, down from it to d's
    leaf; hosts n0000.. 8 to a leaf), as (step, cable)."""
    host, pairs = read_pairs(path)
    use = {}
    for p in pairs:
        if int(p["sample"]) != 0:
            continue
        a, b = host[int(p["a"])], host[int(p["b"])]
        for x, y in ((a, b), (b, a)):
            if x // 8 != y // 8:
                for cable in (("up", x // 8, y % spines), ("down", y // 8, y % spines)):
                    use.setdefault((int(p["step"]), cable), []).append((x, y))
    return sorted((step, cable) for (step, cable), ways in use.items() if len(ways) > 1)


def retested_of(path, hostname):
    """The pairs of a host measured again (sample 1 or later); their count should be a sample."""
    host, pairs = read_pairs(path)
    mine = [n for n, h in host.items() if h == int(hostname.lstrip("n"))]
    return sorted({(int(p["a"]), int(p["b"])) for p in pairs
                   if int(p["sample"]) >= 1 and (int(p["a"]) in mine or int(p["b"]) in mine)})


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
        settings = dict(SHAPE, **{"ranks-per-host": RANKS_PER_HOST[a.case], "spines": SPINES.get(a.case, 8)})
        shape = fabric.write_shape(os.path.join(out, "shape"), settings, faults)
        args = RUN_ARGS + MORE_ARGS.get(a.case, [])
        if a.case in PAIR_BYTES:
            args[args.index("--pair-bytes") + 1] = PAIR_BYTES[a.case]
        code, output, real, _ = fabric.run(a.build, shape, out, args, timeout=240)
        print(output[-6000:])
        print(f"# {real:.1f} s real")
        if code != 0:
            print(f"FAIL: fabricmap exited {code}")
            return 1
        results = blame.read_results(os.path.join(out, "run.h5"))
        verdict = blame.score(culprits, results["findings"])
        path = os.path.join(out, "run.h5")
        settled = settled_again(path, cable_of(a.case)) if a.case == "cable" else []
        slowed = slowed_off_the_cable(path, cable_of(a.case)) if a.case == "rounds" else []
        retested = retested_of(path, "n0010") if a.case == "broken" else []
        met = met_on_a_cable(path, settings["spines"]) if a.case == "leaf" else []
    for f in verdict["findings"]:
        print(f"  {f['verdict']:8} {f['severity']} {f['kind']} {f['subject']}")
    if settled:
        print(f"FAIL: pairs across the slow cable measured a third time after two slow figures: {settled[:6]}")
        return 1
    if slowed:
        print(f"FAIL: {len(slowed)} figures off the slow cable read slow (pairs met): {slowed[:6]}")
        return 1
    if len(retested) > RETEST_SAMPLE:
        print(f"FAIL: {len(retested)} of the broken host's pairs measured again, not a sample: {retested[:8]}")
        return 1
    if met:
        print(f"FAIL: {len(met)} cables of first-pass rounds carried two pairs the same way: {met[:6]}")
        return 1
    if verdict["false_blame"] or verdict["missed"] or not verdict["exact"]:
        print(f"FAIL: exact {verdict['exact']}, false blame {verdict['false_blame']}, missed {verdict['missed']}")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
