#!/usr/bin/env python3
"""How often does fabricmap blame the right part? Randomized fault scenarios on an emulated
cluster (network namespaces, tests/cluster/cluster.py), scored against the truth
(tests/cluster/blame.py). Root only; needs h5py.

    sudo python3 bench/scenarios.py --fabricmap build/release/bin/fabricmap --seed 14 --scenarios 40 \\
        --json /tmp/scenarios.json

Scenario i of a seed is always the same (its own random stream), whatever --scenarios is. Kinds
come in shuffled rounds of seven: clean, node (both ways), egress, ingress, link (one direction or
both), rank (one rail of a node, rails layout) and two (two faults on disjoint nodes). Each has
4-8 nodes of 1 rank or 4-6 of 2, node names, a subnet and throttles of its own. A throttle takes 20% to
99.5% of the measured line rate away (weighted to the strong end, where a fault should be named:
fabricmap's small pairwise transfers reach a fraction of a veth's rate, so mild throttles slow
them little or not at all; each fault's `observed` effect in the matrix says how much).
See bench/README.md, "Blame under noise".

`--levels 2` runs two-level fabrics instead (issue 19): 3-4 leaf switches of 2-4 nodes (nodes
placed on leaves at random) under one spine, 1 rank per node, and `fabricmap run --fabric` with
the cluster's shape; kinds in shuffled rounds of six: clean, node, egress, link, uplink (a leaf's
cable to the spine, both ways) and two (two faults of node, egress, link, uplink on disjoint
nodes). `--without-fabric` runs the same scenarios without the file, to compare.
"""
import argparse
import json
import os
import random
import shlex
import string
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cluster"))
import blame  # noqa: E402
import cluster  # noqa: E402

KINDS = ["clean", "node", "egress", "ingress", "link", "rank", "two"]
FAULT_OF_KIND = {"node": "node", "egress": "node_egress", "ingress": "node_ingress", "link": "link",
                 "rank": "rank"}
# throttle bands (share of the line rate taken away) and how often each is drawn
THROTTLES = [((0.20, 0.80), 0.2), ((0.80, 0.95), 0.25), ((0.95, 0.99), 0.25), ((0.99, 0.995), 0.3)]
KINDS_2 = ["clean", "node", "egress", "link", "uplink", "two"]
FAULT_OF_KIND_2 = {"node": "node", "egress": "node_egress", "link": "link", "uplink": "uplink"}
MAX_NODES_2 = 9  # all pairs of 9 nodes measured on 2 shared cores: about a minute with a fault


def node_names(rng, n):
    """Host names unlike the tests' node0..: one of a few naming schemes."""
    style = rng.randrange(4)
    row = rng.choice(string.ascii_lowercase)
    rack = rng.randint(1, 9)
    base = rng.randint(1, 40)
    return [[f"gpu-{row}{base + i:02d}", f"h100-r{rack}-{base + i:02d}", f"dgx{base + i:03d}",
             f"sxm{rack}-{i}"][style] for i in range(n)]


def subnet(rng):
    """A private /24 (room after it for the rails' subnets), never the tests' 10.77.0.0/24."""
    third = 4 * rng.randint(0, 60)
    return rng.choice([f"10.{rng.randint(100, 250)}.{third}.0/24", f"172.{rng.randint(16, 31)}.{third}.0/24",
                       f"192.168.{third}.0/24"])


def throttle(rng):
    (lo, hi), = rng.choices([b for b, _ in THROTTLES], weights=[w for _, w in THROTTLES])
    return round(rng.uniform(lo, hi), 3)


def make_fault(rng, kind, free, ranks_per_node):
    """A fault of `kind` on nodes drawn from `free` (a list it removes them from)."""
    node = free.pop(rng.randrange(len(free)))
    f = blame.Fault(kind=kind, node=node, throttle=throttle(rng))
    if kind == "link":
        f.peer = free.pop(rng.randrange(len(free)))
        f.both = rng.random() < 0.5
    if kind == "rank":
        f.rail = rng.randrange(ranks_per_node)
    return f


def make_scenario(seed, i):
    """Scenario i of `seed`: its kind from the seed's shuffled rounds of KINDS, the rest from its
    own random stream."""
    order = KINDS[:]
    random.Random(f"{seed}:round:{i // len(KINDS)}").shuffle(order)
    kind = order[i % len(KINDS)]
    rng = random.Random(f"{seed}:scenario:{i}")
    faults = [FAULT_OF_KIND[kind]] if kind in FAULT_OF_KIND else []
    if kind == "two":
        faults = [rng.choice(blame.FAULT_KINDS) for _ in range(2)]
    has_rank = "rank" in faults
    ranks_per_node = 2 if has_rank else rng.randint(1, 2)
    # 2 ranks per node on at most 6 nodes: a 99.5% throttle keeps a run near a minute on 2 cores
    nodes = rng.randint(4, 8 if ranks_per_node == 1 else 6)
    layout = "rails" if has_rank or (ranks_per_node == 2 and rng.random() < 0.5) else "shared"
    free = list(range(nodes))
    made = [make_fault(rng, k, free, ranks_per_node) for k in faults]
    return blame.Scenario(id=i, kind=kind, nodes=nodes, ranks_per_node=ranks_per_node, layout=layout,
                          names=node_names(rng, nodes), subnet=subnet(rng), faults=made)


def leaf_names(rng, leaves):
    """Switch names of one of a few schemes."""
    style, row = rng.randrange(3), rng.choice(string.ascii_lowercase)
    return [[f"leaf{k + 1}", f"sw-{row}{k + 1}", f"ib-l{k + 1:02d}"][style] for k in range(leaves)]


def make_fault_2(rng, kind, free, leaves):
    """A two-level fault of `kind`: an uplink takes a leaf all of whose nodes are still free (and
    them); the others take nodes from `free` as make_fault does."""
    if kind != "uplink":
        return make_fault(rng, kind, free, 1)
    whole = [k for k in range(max(leaves) + 1) if all(i in free for i, x in enumerate(leaves) if x == k)]
    leaf = rng.choice(whole)
    free[:] = [i for i in free if leaves[i] != leaf]
    return blame.Fault(kind="uplink", node=-1, leaf=leaf, throttle=throttle(rng))


def make_scenario_2(seed, i, fabric=True):
    """Two-level scenario i of `seed` (its own rounds and random stream, apart from the flat ones)."""
    order = KINDS_2[:]
    random.Random(f"{seed}:levels2:round:{i // len(KINDS_2)}").shuffle(order)
    kind = order[i % len(KINDS_2)]
    rng = random.Random(f"{seed}:levels2:scenario:{i}")
    count = rng.choice([3, 3, 4])
    sizes = [2] * count
    for _ in range(rng.randint(0, MAX_NODES_2 - 2 * count)):
        sizes[rng.choice([k for k in range(count) if sizes[k] < 4])] += 1
    leaves = [k for k in range(count) for _ in range(sizes[k])]
    rng.shuffle(leaves)
    faults = [FAULT_OF_KIND_2[kind]] if kind in FAULT_OF_KIND_2 else []
    if kind == "two":
        faults = [rng.choice(list(FAULT_OF_KIND_2.values())) for _ in range(2)]
    free = list(range(len(leaves)))
    made = [make_fault_2(rng, k, free, leaves) for k in faults]
    return blame.Scenario(id=i, kind=kind, nodes=len(leaves), ranks_per_node=1, layout="shared",
                          names=node_names(rng, len(leaves)), subnet=subnet(rng), faults=made,
                          leaves=leaves, leaf_names=leaf_names(rng, count), fabric=fabric)


def report(records, args, wall, what="wall time"):
    two = getattr(args, "levels", 1) == 2
    fabric = "" if not two else " --fabric FILE" if not getattr(args, "without_fabric", False) else " (no --fabric)"
    lines = [f"# fabricmap blame scenarios{', two levels' if two else ''}: seed {args.seed}, {len(records)} scenario(s), "
             f"run arguments: {' '.join(records[0]['run_args']) if records else ''}{fabric}; {what} {wall / 60:.1f} min"
             + (f"; links shaped to {args.line_rate / 1e9:.3g} GB/s" if getattr(args, "shaped", False) else ""),
             "",
             blame.format_table(blame.SUMMARY_HEADER, blame.summary_rows(records, lambda r: r["scenario"]["kind"],
                                                                          KINDS_2 if two else KINDS)),
             "",
             blame.format_table(blame.FAULT_HEADER, blame.fault_rows(records, blame.throttle_band)),
             "",
             blame.format_table(blame.FAULT_HEADER, blame.fault_rows(records, blame.observed_band))]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fabricmap", required=True, help="the fabricmap binary")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--scenarios", type=int, default=40, help="how many (scenarios 0..N-1 of the seed)")
    ap.add_argument("--ids", default="", help="only these scenario numbers, e.g. 3,7,12")
    ap.add_argument("--levels", type=int, choices=(1, 2), default=1,
                    help="1: one bridge (the kinds above); 2: leaf switches under a spine, with --fabric")
    ap.add_argument("--without-fabric", action="store_true",
                    help="--levels 2: run fabricmap without the --fabric file (what it says without the fabric)")
    ap.add_argument("--run-args", default=" ".join(blame.DEFAULT_RUN_ARGS),
                    help="the pairwise options (default: %(default)s)")
    ap.add_argument("--extra-args", default="", help="more `fabricmap run` arguments, appended")
    ap.add_argument("--line-rate", type=float, default=None,
                    help="line rate in B/s instead of measuring it on each cluster")
    ap.add_argument("--shaped", action="store_true",
                    help="shape every link to --line-rate first (tbf both ways): a fabric whose links, not the "
                         "host's CPUs, set a healthy pair's rate; faults take their share of that rate")
    ap.add_argument("--timeout", type=int, default=180, help="seconds per fabricmap run")
    ap.add_argument("--json", default=None, help="write every scenario's details here (after each one)")
    ap.add_argument("--table", default=None, help="write the summary tables here too")
    ap.add_argument("--keep", default=None, help="copy each results file into this folder")
    ap.add_argument("--list", action="store_true", help="print the scenarios and stop")
    ap.add_argument("--rescore", default=None, metavar="JSON",
                    help="score the findings recorded in a --json file again and print the tables; runs nothing")
    args = ap.parse_args()

    if args.rescore:
        with open(args.rescore) as f:
            saved = json.load(f)
        records = saved["scenarios"]
        for rec in records:
            if rec["status"] == "ok":
                culprits = [{k: v for k, v in c.items() if k not in ("status", "observed")} for c in rec["culprits"]]
                observed = (blame.observed_effects(culprits, rec) if "ranks" in rec
                            else [c.get("observed") for c in rec["culprits"]])
                rec.update(blame.score(culprits, rec["all_findings"]))
                for c, seen in zip(rec["culprits"], observed):
                    c["observed"] = seen
            print(blame.verdict_line(rec))
        args.seed = saved["seed"]
        args.levels = saved.get("levels", 1)
        args.without_fabric = saved.get("without_fabric", False)
        print("\n" + report(records, args, sum(r.get("seconds", 0) for r in records), "scenarios' time"))
        return 0

    ids = [int(x) for x in args.ids.split(",") if x.strip()] or list(range(args.scenarios))
    if args.without_fabric and args.levels != 2:
        ap.error("--without-fabric needs --levels 2")
    scenarios = [make_scenario_2(args.seed, i, not args.without_fabric) if args.levels == 2
                 else make_scenario(args.seed, i) for i in ids]
    if args.list:
        for s in scenarios:
            print(s.describe())
        return 0
    if args.shaped and not args.line_rate:
        ap.error("--shaped needs --line-rate")
    reason = cluster.skip_reason()
    if reason:
        print(f"SKIP: the cluster harness cannot run here: {reason}")
        return 77
    fabricmap = os.path.abspath(args.fabricmap) if os.sep in args.fabricmap else args.fabricmap
    run_args = shlex.split(args.run_args) + shlex.split(args.extra_args)
    records = []
    start = time.monotonic()
    for s in scenarios:
        try:
            rec = blame.run_scenario(s, fabricmap, run_args, keep_dir=args.keep, timeout=args.timeout,
                                     line_rate=args.line_rate, shaped=args.shaped)
        except Exception as e:  # noqa: BLE001 (a harness error: record it, go on with the next)
            rec = {"scenario": blame.as_dict(s), "run_args": run_args, "status": "failed", "returncode": None,
                   "error": f"{type(e).__name__}: {e}"}
            print(f"{s.describe()}: harness error: {rec['error']}", file=sys.stderr)
        rec["seed"] = args.seed
        records.append(rec)
        print(blame.verdict_line(rec), flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"seed": args.seed, "levels": args.levels, "without_fabric": args.without_fabric,
                           "fabricmap": args.fabricmap, "run_args": run_args,
                           "scenarios": records}, f, indent=1)
    text = report(records, args, time.monotonic() - start)
    print("\n" + text)
    if args.table:
        with open(args.table, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
