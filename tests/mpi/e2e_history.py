"""End-to-end case of `fabricmap history`: several real runs (one with a corrupted rank, so its node
is blamed in that run only), then history's JSON, HTML and baseline, and verify/compare against
the baseline; what each figure should be is worked out here from the files with h5py."""
import json
import os
import subprocess

import h5py
import numpy

from e2e_support import *  # noqa: F401,F403 (the checks and helpers every case uses)

MEASURE = ["--ranks-per-node", "2", "--collectives", "--ops", "all_reduce", "--scopes", "world,intra", "-b", "64K",
           "-e", "256K", "-f", "4", "-n", "3", "-w", "1", "--pairwise"] + PAIR_ARGS + ["--progress", "off"]


def expected_of(path):
    """(created, node names, node matrix, blamed node names, blamed pairs of names, node class baseline)."""
    with h5py.File(path, "r") as f:
        created = text(f.attrs["created_utc"])
        names = [text(n["name"]) for n in f["topology/nodes"][:]]
        bw = f["matrix/node/bw"][:]
        blamed, pairs = set(), set()
        for r in f["findings"][:]:
            if text(r["severity"]) not in ("error", "warning"):
                continue
            ends = [int(r["node_a"]), int(r["node_b"])]
            blamed.update(e for e in ends if e >= 0)
            if min(ends) >= 0 and ends[0] != ends[1]:
                pairs.add(tuple(sorted(names[e] for e in ends)))
        node_baseline = float(f["matrix/node"].attrs["expected_bw"])
    return created, names, bw, {names[i] for i in blamed}, pairs, node_baseline


def node_median(bw, i):
    cells = [v for j, v in enumerate(bw[i]) if j != i] + [v for j, v in enumerate(bw[:, i]) if j != i]
    cells = [v for v in cells if numpy.isfinite(v)]
    return float(numpy.median(cells)) if cells else None


def flapping(blamed_list):
    """Blamed in a run and clean in a later one (runs oldest first)."""
    first = next((i for i, b in enumerate(blamed_list) if b), None)
    return first is not None and not all(blamed_list[first:])


def case_history(args, tmp):
    runs = os.path.join(tmp, "runs")
    os.makedirs(os.path.join(runs, "later"))
    paths = [os.path.join(runs, "r1.h5"), os.path.join(runs, "r2.h5"), os.path.join(runs, "later", "r3.h5")]
    victim = args.np - 1  # on the last node
    for i, path in enumerate(paths):
        fault = ["--inject-fault", f"corrupt:rank={victim}:op=all_reduce"] if i == 1 else []
        p = mpirun(args, args.np, [args.fabricmap, "run"] + MEASURE + fault + ["-o", path], timeout=120)
        check(p.returncode == (1 if fault else 0) and os.path.exists(path),
              f"run {i}: exit {p.returncode}: {p.stderr[-600:]}")
    with open(os.path.join(runs, "notes.h5"), "w") as f:
        f.write("not hdf5\n")

    def fm(*extra):
        return subprocess.run([args.fabricmap] + list(extra), capture_output=True, text=True, timeout=120)

    baseline = os.path.join(tmp, "history.json")
    page = os.path.join(tmp, "history.html")
    p = fm("history", runs, "--json", "--html", page, "--write-baseline", baseline)
    check(p.returncode == 0, f"history exit {p.returncode}: {p.stderr[-800:]}")
    warnings = [l for l in p.stderr.splitlines() if "warning" in l]
    check(len(warnings) == 1 and "notes.h5" in warnings[0], f"one warning for the one bad file: {p.stderr}")
    doc = json.loads(p.stdout) if p.returncode == 0 else {"runs": [], "nodes": [], "pairs": [], "skipped": []}
    files = sorted((expected_of(path) + (path,) for path in paths), key=lambda e: (e[0], e[6]))
    check([r["file"] for r in doc["runs"]] == [e[6] for e in files], f"runs in created order: {doc['runs']}")
    check(len(doc["skipped"]) == 1, f"skipped {doc['skipped']}")
    names = sorted({n for e in files for n in e[1]})
    check([n["node"] for n in doc["nodes"]] == names, f"nodes {[n['node'] for n in doc['nodes']]} != {names}")
    victim_node = files[0][1][victim // 2]
    for n in doc["nodes"]:
        blamed = [n["node"] in e[3] for e in files]
        series = [node_median(e[2], e[1].index(n["node"])) for e in files]
        check(n["runs"] == 3 and n["blamed"] == sum(blamed), f"{n['node']}: runs {n['runs']} blamed {n['blamed']}")
        check(n["flapping"] == flapping(blamed), f"{n['node']}: flapping {n['flapping']} for blamed {blamed}")
        got = [s["gbs"] for s in n["series"]]
        check(len(got) == 3 and all(abs(a - b) <= 1e-6 * b for a, b in zip(got, series)),
              f"{n['node']}: {got} != {series}")
        check(n["first_seen"] == files[0][0] and n["last_seen"] == files[2][0], f"{n['node']} seen {n}")
    # the corrupted run by its path: runs of one second sort by path, so it need not be the middle one
    corrupted = next(i for i, e in enumerate(files) if e[6] == paths[1])
    blamed_there = victim_node in files[corrupted][3]
    check(blamed_there and doc["nodes"][names.index(victim_node)]["series"][corrupted]["blamed"],
          f"{victim_node} blamed in the corrupted run (run {corrupted} in time order): {files[corrupted][3]}")
    expected_pairs = sorted({p for e in files for p in e[4]})
    check([(p["a"], p["b"]) for p in doc["pairs"]] == expected_pairs, f"pairs {doc['pairs']} != {expected_pairs}")
    print("history: " + ", ".join(f"{n['node']} {n['status']} {n['blamed']}/{n['runs']}" for n in doc["nodes"]))

    html = open(page).read() if os.path.exists(page) else ""
    check("<svg" in html and "<script" not in html and all(n in html for n in names), f"html: {html[:300]}")
    check(not os.path.exists(page + ".new"), "the page's working copy was left behind")

    base = json.load(open(baseline)) if os.path.exists(baseline) else {}
    check(base.get("kind") == "fabricmap-baseline" and base.get("runs") == 3, f"baseline {str(base)[:300]}")
    node_class = [c for c in base.get("classes", []) if c["population"] == "node"]
    want = float(numpy.median([e[5] for e in files]))
    check(node_class and node_class[0]["runs"] == 3 and abs(node_class[0]["median_gbs"] - want) <= 1e-6 * want,
          f"node class baseline {node_class}, expected median {want}")
    scopes = {(c["scope"], c["op"], c["bytes"]) for c in base.get("collectives", [])}
    check({("world", "all_reduce", 65536), ("intra", "all_reduce", 262144)} <= scopes, f"collectives {scopes}")

    v = fm("verify", paths[0], "--baseline", baseline, "--json")
    check(v.returncode in (0, 1), f"verify --baseline exit {v.returncode}: {v.stderr}")
    checks = json.loads(v.stdout)["checks"] if v.returncode in (0, 1) else []
    names_judged = {c["check"] for c in checks}
    check({"baseline_class_bw", "baseline_busbw"} <= names_judged, f"baseline checks {checks[:3]}")

    def scaled(factor, name):
        doctored = dict(base)
        for part in ("classes", "collectives"):
            doctored[part] = [dict(c, median_gbs=c["median_gbs"] * factor, spread_gbs=0) for c in base.get(part, [])]
        out = os.path.join(tmp, name)
        with open(out, "w") as f:
            json.dump(doctored, f)
        return out

    high = fm("verify", paths[0], "--baseline", scaled(1000, "high.json"))
    check(high.returncode == 1 and "VERDICT: FAIL" in high.stdout and "baseline_class_bw node pairs" in high.stdout
          and "baseline_busbw world all_reduce float 64 KiB" in high.stdout,
          f"verify high: {high.returncode} {high.stdout[-800:]}")
    low = fm("verify", paths[0], "--baseline", scaled(0.001, "low.json"))
    check(low.returncode == 0 and "VERDICT: PASS" in low.stdout, f"verify low: {low.returncode} {low.stdout[-800:]}")

    c = fm("compare", paths[2], "--baseline", baseline, "--json")
    cdoc = json.loads(c.stdout) if c.returncode == 0 else {}
    rows = {r["key"]: r for r in cdoc.get("rows", [])}
    check(c.returncode == 0 and cdoc["files"][0]["baseline"] is True and "pairs.node.baseline" in rows
          and abs(rows["pairs.node.baseline"]["values"][0]["value"] - want) <= 1e-6 * want,
          f"compare --baseline: {c.returncode} {c.stderr} {list(rows)[:20]}")

    # unusable input: exit 2 with one message
    notes = os.path.join(runs, "notes.h5")
    for bad in (fm("history", notes), fm("verify", paths[0], "--baseline", notes),
                fm("compare", paths[0], "--baseline", paths[0])):
        ok, lines = one_error_line(bad)
        check(bad.returncode == 2 and ok and bad.stdout == "",
              f"bad input: exit {bad.returncode}: {lines} {bad.stdout[:200]}")
