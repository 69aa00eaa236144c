#!/usr/bin/env python3
"""How often does fabricmap blame the right part at the scale users run? Randomized faults on
simulated fat trees (SimGrid SMPI: the sim build, bench/sim), the real binary running every phase
(planner, rounds, retests, analysis, writer), scored with tests/cluster/blame.py's definitions.

    scripts/build.sh sim
    /usr/bin/python3 bench/sim_scenarios.py --build build/sim --seed 34 --scales 64 --scenarios 24 \\
        --json /tmp/sim-scenarios.json

Scenario i of a seed and scale is always the same (its own random stream). Kinds come in shuffled
rounds: clean, host (a host's cable both ways, or one way: egress or ingress), cable (a leaf-spine
cable, both ways or one), leaf (every cable of a leaf switch), spine (every cable of a spine) and
two (a host and a cable at once, on different leaves). A fault keeps SHARE of its rate: 0.01-0.5,
where a fault must be named. Shapes per scale: 64 nodes = 8 leaves x 8 hosts, 256 = 16 x 16,
1,024 = 32 x 32; spines as many as hosts per leaf (1:1) or half (2:1), one rank per host. With
`--levels 3`, three-level trees instead: 2 pods at 64 nodes (4 at 256, 8 at 1,024) of leaves of 8
(16, 32) hosts, each pod's spines (1:1 or 2:1) under cores (each spine with 4 cables up), where a
`cable` fault is a leaf-spine or a spine-core cable and a `spine` one is a pod's spine.
`--modes full,quick` runs each scenario in full and quick pairwise mode; `--without-fabric` runs
without the --fabric file as well. Pairs send 4 windows of 4 messages of `--pair-bytes` (1M:
bandwidth-bound as a user's default pairs are, where pairs that meet on a cable share it; 64K,
bench/README (k)'s figures before its fourth part: latency-bound, where they hardly do). Needs
h5py (Debian's python3-h5py: run with /usr/bin/python3).
"""
import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "sim"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cluster"))
import blame  # noqa: E402
import fabric  # noqa: E402

KINDS = ["clean", "host", "cable", "leaf", "spine", "two"]
SHAPES = {64: 8, 256: 16, 1024: 32}  # nodes -> leaves (= hosts per leaf)
PAIR_BYTES = "1M"  # bandwidth-bound, as a user's default pairs (256K x a window of 64) are


def run_args(pair_bytes=PAIR_BYTES):
    """The run's options: a few windows of a few messages, so that a simulated run stays short."""
    return ["--pairwise", "--pair-bytes", pair_bytes, "--pair-window", "4", "--pair-iters", "4"]


HOST_KIND = {"both": "node", "up": "node_egress", "down": "node_ingress"}


PODS = {64: 2, 256: 4, 1024: 8}  # three levels: nodes -> pods


def scenario(seed, scale, i, levels=2):
    """Scenario i at `scale`: its shape and faults, and the culprits as blame.py scores them."""
    rng = random.Random(f"{seed}-{scale}-{i}" + ("" if levels == 2 else f"-{levels}"))
    per = SHAPES[scale]  # hosts per leaf
    order = KINDS[:]
    random.Random(f"{seed}-{scale}-round-{i // len(KINDS)}").shuffle(order)
    kind = order[i % len(KINDS)]
    hosts = per * per
    pods = PODS[scale] if levels == 3 else 1
    leaves = hosts // per // pods  # per pod
    spines = per if rng.random() < 0.5 else per // 2  # per pod
    shape = {"levels": levels, "leaves": leaves, "hosts-per-leaf": per, "spines": spines, "ranks-per-host": 1}
    if levels == 3:
        shape.update({"pods": pods, "cores": 4 * spines})
    names = Names(shape)
    share = lambda: round(rng.uniform(0.01, 0.5), 3)  # noqa: E731
    way = lambda: rng.choice(["both", "both", "up", "down"])  # noqa: E731
    faults, culprits = [], []

    def host(h=None):
        h = rng.randrange(hosts) if h is None else h
        w = way()
        faults.append(["host", f"n{h:04d}", share(), w])
        culprits.append({"kind": HOST_KIND[w], "host": f"n{h:04d}", "switch": None, "label": f"host n{h:04d} {w}"})
        return h // per

    def cable(avoid=-1):
        if levels == 3 and rng.random() < 0.5:  # a spine's cable up to a core
            spine = rng.randrange(pods * spines)
            core = (spine % spines) * 4 + rng.randrange(4)
            lower, upper = names.spine(spine), names.core(core)
        else:
            leaf = rng.choice([x for x in range(pods * leaves) if x != avoid])
            lower, upper = names.leaf(leaf), names.spine(leaf // leaves * spines + rng.randrange(spines))
        faults.append(["cable", lower, upper, share(), way()])
        culprits.append({"kind": "uplink", "switch": lower, "host": None, "label": f"cable {lower}-{upper}"})

    def switch(name):
        faults.append([kind, name, share()])
        culprits.append({"kind": "switch", "switch": name, "host": None, "label": name})

    if kind == "host":
        host()
    elif kind == "cable":
        cable()
    elif kind == "leaf":
        switch(names.leaf(rng.randrange(pods * leaves)))
    elif kind == "spine":
        switch(names.spine(rng.randrange(pods * spines)))
    elif kind == "two":
        cable(avoid=host())
    return {"id": i, "scale": scale, "kind": kind, "shape": shape, "faults": faults, "culprits": culprits}


def culprits_in(sc, results):
    """The culprits in the results file's node numbering."""
    index = {n["hostname"]: n["node"] for n in results["nodes"]}
    out = []
    for c in sc["culprits"]:
        node = index[c["host"]] if c["host"] else -1
        out.append({"kind": c["kind"], "node_a": node, "node_b": -1, "rank": -1, "both": False,
                    "switch": c["switch"], "label": c["label"]})
    return out


class Names:
    """The simulated parts' names (fat_tree.h): hosts n0000.., leaves leaf00.. (three levels:
    p0leaf00.., numbered within their pod), spines likewise, cores core00.."""

    def __init__(self, shape):
        self.three = shape["levels"] == 3
        self.leaves, self.spines = shape["leaves"], shape["spines"]

    def _in_pod(self, word, index, per_pod):
        return (f"p{index // per_pod}" if self.three else "") + f"{word}{index % per_pod:02d}"

    def leaf(self, index):
        return self._in_pod("leaf", index, self.leaves)

    def spine(self, index):
        return self._in_pod("spine", index, self.spines)

    def core(self, index):
        return f"core{index:02d}"


def route(shape, a, b):
    """The directed cables from host a to host b, as fat_tree.cpp's FatTree::route names them: by
    destination, up from a leaf to its pod's spine b mod spines, up from a spine to its core
    (b / spines) mod (cores / spines)."""
    names, per, spines = Names(shape), shape["hosts-per-leaf"], shape["spines"]
    leaves = shape["leaves"]
    la, lb = a // per, b // per
    ha, hb = f"n{a:04d}", f"n{b:04d}"
    if la == lb:
        return {ha + "-up", hb + "-down"}
    k = b % spines
    pa, pb = la // leaves, lb // leaves
    sa, sb = names.spine(pa * spines + k), names.spine(pb * spines + k)
    hops = {ha + "-up", f"{names.leaf(la)}-{sa}-up", f"{names.leaf(lb)}-{sb}-down", hb + "-down"}
    if pa != pb:
        per_spine = shape["cores"] // spines
        core = names.core(k * per_spine + (b // spines) % per_spine)
        hops |= {f"{sa}-{core}-up", f"{sb}-{core}-down"}
    return hops


def fault_links(fault, shape):
    """The directed cables a fault slows."""
    def ways(base, way):
        return {base + "-up"} if way == "up" else {base + "-down"} if way == "down" else {base + "-up", base + "-down"}
    if fault[0] == "host":
        return ways(fault[1], fault[3])
    if fault[0] == "cable":
        return ways(f"{fault[1]}-{fault[2]}", fault[4])
    name, names, per = fault[1], Names(shape), shape["hosts-per-leaf"]
    pods = shape.get("pods", 1) if shape["levels"] == 3 else 1
    out = set()
    for leaf in range(pods * shape["leaves"]):
        pod = leaf // shape["leaves"]
        for k in range(shape["spines"]):
            spine = names.spine(pod * shape["spines"] + k)
            if name in (names.leaf(leaf), spine):
                out |= ways(f"{names.leaf(leaf)}-{spine}", "both")
        if name == names.leaf(leaf):
            for h in range(leaf * per, (leaf + 1) * per):
                out |= ways(f"n{h:04d}", "both")
    if shape["levels"] == 3:
        per_spine = shape["cores"] // shape["spines"]
        for s in range(pods * shape["spines"]):
            for j in range(per_spine):
                core = names.core((s % shape["spines"]) * per_spine + j)
                if name == names.spine(s):
                    out |= ways(f"{names.spine(s)}-{core}", "both")
    return out


def affected(fault, shape):
    """Whether directed node pair x -> y (host indices) crosses the fault (fat_tree.h's routing)."""
    links = fault_links(fault, shape)
    return lambda x, y: bool(route(shape, x, y) & links)


def matrix_cells(bw):
    """(row, col, value) of a matrix as read back: dense rows, or quick mode's sparse table of
    (row, col, value) records (SCHEMA.md)."""
    if bw and isinstance(bw[0], (tuple, list)) and len(bw[0]) == 3 and not isinstance(bw[0][0], float):
        return [(int(r), int(c), float(v)) for r, c, v in bw]
    return [(a, b, v) for a, row in enumerate(bw) for b, v in enumerate(row)]


def observed(sc, results):
    """Per fault, how slow the pairs across it measured: the median over them of each pair's
    figure against the median of the pairs the scenario's faults leave alone in the same class
    (inside a leaf, or across leaves). None without a node matrix."""
    bw = results.get("node_bw") or results.get("rank_bw")
    if not bw:
        return [None] * len(sc["faults"])
    host = {n["node"]: int(str(n["hostname"]).lstrip("n")) for n in results["nodes"]}
    per = sc["shape"]["hosts-per-leaf"]
    hit = [affected(f, sc["shape"]) for f in sc["faults"]]
    clean = {True: [], False: []}
    cells = []
    for a, b, v in matrix_cells(bw):
        if a == b or not (v == v and v > 0):
            continue
        x, y = host[a], host[b]
        cells.append((x, y, v))
        if not any(h(x, y) for h in hit):
            clean[x // per == y // per].append(v)
    base = {k: statistics.median(v) for k, v in clean.items() if v}
    out = []
    for h in hit:
        shares = [v / base[x // per == y // per] for x, y, v in cells if h(x, y) and (x // per == y // per) in base]
        out.append(round(statistics.median(shares), 3) if shares else None)
    return out


def rank0_costs(path):
    """Rank 0's own real costs in the run (the file's rank0_* attributes): plan, analysis and write
    seconds, and peak memory in MiB (under SMPI, the whole simulation's process)."""
    import h5py
    with h5py.File(path, "r") as f:
        a = f.attrs
        if "rank0_plan_seconds" not in a:
            return None
        return {"plan_s": round(float(a["rank0_plan_seconds"]), 3), "analysis_s": round(float(a["rank0_analysis_seconds"]), 3),
                "write_s": round(float(a["rank0_write_seconds"]), 3),
                "peak_mib": round(int(a["rank0_peak_rss_bytes"]) / 2**20)}


def pairwise_seconds(path):
    """The simulated seconds of the pairwise phase (its rounds and retests), from /steps."""
    import h5py
    with h5py.File(path, "r") as f:
        steps = f["steps"][:]
        return float(sum(s["seconds"] for s in steps if blame._value(s["kind"]) == "pairwise"))


def run(build, sc, mode, with_fabric, log, pair_bytes=PAIR_BYTES):
    with tempfile.TemporaryDirectory(prefix="fmsims-") as out:
        shape = fabric.write_shape(os.path.join(out, "shape"), sc["shape"], sc["faults"])
        args = run_args(pair_bytes) + (["--pairwise-mode", "quick"] if mode == "quick" else [])
        code, output, real, _ = fabric.run(build, shape, out, args, timeout=6 * 3600, with_fabric=with_fabric)
        rec = {"scenario": sc, "mode": mode, "fabric": with_fabric, "returncode": code, "real_seconds": round(real, 1)}
        path = os.path.join(out, "run.h5")
        if code != 0 or not os.path.exists(path):
            rec.update(status="failed", output_tail=output[-3000:])
            log(f"#{sc['id']} {sc['kind']} {mode}: exit {code}\n{output[-3000:]}")
            return rec
        results = blame.read_results(path)
        judged = blame.score(culprits_in(sc, results), results["findings"])
        for c, seen in zip(judged["culprits"], observed(sc, results)):
            c["observed"] = seen
        rec.update(status="ok", has_confidence=results["has_confidence"], pairwise_seconds=pairwise_seconds(path),
                   rank0=rank0_costs(path), **judged)
        return rec


def describe(rec):
    sc = rec["scenario"]
    faults = ", ".join(" ".join(str(w) for w in f) for f in sc["faults"]) or "clean"
    if rec["status"] != "ok":
        return f"#{sc['id']} {sc['scale']} {sc['kind']} {rec['mode']}: FAILED"
    flags = "exact" if rec["exact"] else ", ".join(
        x for x, on in (("false blame", rec["false_blame"]), ("missed", rec["missed"])) if on) or "inexact"
    named = "; ".join(f"{f['severity']} {f['kind']} {str(f['subject'])[:40]} [{f['verdict']}]"
                      for f in rec["findings"][:6]) or "none"
    return (f"#{sc['id']} {sc['scale']} nodes, {sc['shape']['spines']} spines, {rec['mode']}"
            f"{'' if rec['fabric'] else ' without --fabric'}: {faults}: {flags} "
            f"({rec['real_seconds']:.0f} s real, pairwise {rec.get('pairwise_seconds', 0):.2f} s simulated"
            f"{'; rank 0 ' + str(rec['rank0']) if rec.get('rank0') else ''}); {named}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build/sim")
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--scales", default="64")
    ap.add_argument("--scenarios", type=int, default=12, help="per scale")
    ap.add_argument("--modes", default="full")
    ap.add_argument("--without-fabric", action="store_true")
    ap.add_argument("--levels", type=int, choices=(2, 3), default=2)
    ap.add_argument("--pair-bytes", default=PAIR_BYTES, help="pair message size (64K: latency-bound)")
    ap.add_argument("--json")
    a = ap.parse_args()
    records = []
    for scale in (int(s) for s in a.scales.split(",")):
        for i in range(a.scenarios):
            sc = scenario(a.seed, scale, i, a.levels)
            for mode in a.modes.split(","):
                for with_fabric in [True] + ([False] if a.without_fabric else []):
                    rec = run(a.build, sc, mode, with_fabric, print, a.pair_bytes)
                    records.append(rec)
                    print(describe(rec), flush=True)
                    if a.json:
                        with open(a.json, "w") as f:
                            json.dump(records, f, indent=1)
    key = lambda r: (f"{r['scenario']['scale']} {r['mode']}{'' if r['fabric'] else ' no-fabric'} "  # noqa: E731
                     f"{r['scenario']['kind']}")
    print()
    print(blame.format_table(blame.SUMMARY_HEADER, blame.summary_rows(records, key)))
    print()
    print(blame.format_table(blame.FAULT_HEADER, blame.fault_rows(as_faults(records), observed_band)))
    return 0


def observed_band(_share, seen):
    """The goal's line: a fault observed at 0.5x or worse must be named."""
    if seen is None:
        return (2, "observed: unknown")
    return (0, "observed at 0.5x or worse") if seen <= 0.5 else (1, "observed above 0.5x")


def as_faults(records):
    """The records as blame.fault_rows reads them (a fault's share as its throttle)."""
    out = []
    for r in records:
        if r["status"] == "ok":
            faults = [{"throttle": next(w for w in f if isinstance(w, float))} for f in r["scenario"]["faults"]]
            out.append(dict(r, scenario=dict(r["scenario"], faults=faults)))
    return out


if __name__ == "__main__":
    sys.exit(main())
