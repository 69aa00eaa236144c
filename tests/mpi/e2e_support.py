"""Shared helpers of the end-to-end tests (e2e.py): the checks, mpirun, reading results back."""
import json
import math
import subprocess
import sys
import time

import h5py

FAILURES = []


ARGS = None


def set_args(args):
    global ARGS
    ARGS = args


def args_fabricmap():
    return ARGS.fabricmap


def check(cond, message):
    if not cond:
        FAILURES.append(message)
        print("FAIL: " + message, file=sys.stderr)


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def mpirun(args, np, command, timeout=240):
    cmd = [args.mpiexec, "-n", str(np), "--oversubscribe"] + command
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    p.elapsed = time.monotonic() - start
    return p


def read(path):
    with h5py.File(path, "r") as f:
        attrs = {k: f.attrs[k] for k in f.attrs}
        tables = {}
        for name in ["topology/ranks", "topology/nodes", "scopes", "steps", "collectives", "pairs",
                     "findings", "inventory/nics", "inventory/pcie", "inventory/node", "inventory/counters",
                     "inventory/endpoints"]:
            d = f[name][:]
            tables[name] = [{k: (text(row[k]) if d.dtype[k].kind == "O" else row[k].item())
                             for k in d.dtype.names} for row in d]
    return attrs, tables


def check_rows(attrs, t, np):
    """Every ok step has one finite, positive row per group of its scope."""
    scopes = {s["scope"]: s for s in t["scopes"]}
    rows_by_step = {}
    for r in t["collectives"]:
        rows_by_step.setdefault(r["step"], []).append(r)
    check(attrs["complete"] == True, "file not complete")
    check(len(t["steps"]) == attrs["planned_steps"],
          f"{len(t['steps'])} steps recorded of {attrs['planned_steps']}")
    for s in t["steps"]:
        if s["kind"] == "pairwise":
            continue  # checked by check_pairwise
        rows = rows_by_step.get(s["step"], [])
        if s["status"] == "waived":
            check(rows == [] and s["reason"], f"waived step {s['step']} has rows or no reason")
            continue
        check(s["status"] == "ok", f"step {s['step']} status {s['status']}")
        scope = scopes[s["scope"]]
        members = scope["members"].split(";")
        check(len(rows) == scope["groups"] == len(members),
              f"step {s['step']}: {len(rows)} rows for {scope['groups']} groups")
        for r in rows:
            what = f"step {s['step']} {r['scope']} {r['op']} {r['bytes']} B group {r['group']}"
            check(r["ranks"] == members[r["group"]], f"{what}: ranks {r['ranks']}")
            for k in ["algbw", "busbw", "algbw_median", "busbw_median", "time_us_mean"]:
                check(math.isfinite(r[k]) and r[k] > 0, f"{what}: {k}={r[k]}")
            check(r["time_us_min"] <= r["time_us_median"] <= r["time_us_max"], f"{what}: order")
            check(r["time_us_p95"] <= r["time_us_max"], f"{what}: p95 above max")
            check(r["wrong"] == 0, f"{what}: wrong={r['wrong']}")
            check(r["iters"] == 3, f"{what}: iters={r['iters']}")
    return rows_by_step


PAIR_ARGS = ["--pair-bytes", "64K", "--pair-iters", "3", "--latency-iters", "20"]


def dense(f, name):
    """A matrix dataset as an n x n array: as stored (full mode), or rebuilt from the table of
    measured cells (row, col, value) that quick mode stores, NaN elsewhere (-1 for link classes)."""
    import numpy
    d = f[name]
    if d.dtype.names is None:
        return d[:]
    n = int(d.attrs["n"])
    out = numpy.full((n, n), -1 if name.endswith("link_class") else numpy.nan)
    for cell in d[:]:
        out[int(cell["row"]), int(cell["col"])] = cell["value"]
    return out


def check_pairwise(path, np_, mode="full"):
    """The matrices and /pairs of a pairwise run: every pair measured once per round schedule,
    rounds of disjoint pairs, finite positive figures, link classes from the topology. Quick mode
    stores only the measured cells."""
    import numpy
    with h5py.File(path, "r") as f:
        unidir = dense(f, "matrix/rank/bw_unidir")
        bidir = dense(f, "matrix/rank/bw_bidir")
        latency = dense(f, "matrix/rank/latency")
        classes = dense(f, "matrix/rank/link_class")
        sparse = f["matrix/rank/bw_unidir"].dtype.names is not None
        if sparse:
            class_names = dict(enumerate(f["matrix/rank/link_class"].attrs["classes"].split(",")))
            class_names[-1] = "unmeasured"
            cells = len(f["matrix/rank/bw_unidir"])
        else:
            class_names = {v: k for k, v in h5py.check_enum_dtype(f["matrix/rank/link_class"].dtype).items()}
        node_bw = dense(f, "matrix/node/bw")
        node_measured = bool(f["matrix/node"].attrs["measured"])
        ranks = f["topology/ranks"][:]
        nodes = f["topology/nodes"][:]
        pairs = f["pairs"][:]
        steps = f["steps"][:]
        findings = f["findings"][:]
        check(f["matrix/rank/bw_unidir"].attrs["units"] == "GB/s", "matrix units")
    check(unidir.shape == (np_, np_), f"rank matrix shape {unidir.shape}")
    check(all(numpy.isnan(unidir[i, i]) for i in range(np_)), "diagonal must be NaN")
    node_of = [int(r["node"]) for r in ranks]
    first = [p for p in pairs if p["level"].decode() == "rank" and p["sample"] == 0]
    measured = {(int(p["a"]), int(p["b"])) for p in first}
    check(sparse == (mode == "quick"), f"{mode} mode stored {'sparse' if sparse else 'dense'} matrices")
    if sparse:
        check(cells == 2 * len(measured), f"quick mode keeps the measured cells only: {cells} for {len(measured)} pairs")
    for a in range(np_):
        for b in range(np_):
            want = "self" if a == b else ("same_node_host" if node_of[a] == node_of[b] else "inter_node")
            if sparse and (min(a, b), max(a, b)) not in measured:
                want = "unmeasured"
            check(class_names[int(classes[a, b])] == want, f"link class {a},{b}")
    if mode == "full":
        check(len(first) == np_ * (np_ - 1) // 2 and len(measured) == len(first),
              f"full mode measures each rank pair once: {len(first)} rows, {len(measured)} distinct")
        check(numpy.isfinite(unidir[~numpy.eye(np_, dtype=bool)]).all(), "unmeasured cells in full mode")
        rounds = {int(p["step"]) for p in first}
        check(len(rounds) == (np_ - 1 if np_ % 2 == 0 else np_), f"{len(rounds)} rounds for {np_} ranks")
    for a, b in measured:
        for x, y in ((a, b), (b, a)):
            check(numpy.isfinite(unidir[x, y]) and unidir[x, y] > 0, f"unidir {x}->{y}={unidir[x, y]}")
            check(numpy.isfinite(latency[x, y]) and latency[x, y] > 0, f"latency {x}->{y}")
        check(bidir[a, b] == bidir[b, a] and bidir[a, b] > 0, f"bidir {a},{b} not symmetric/positive")
    for step in {int(p["step"]) for p in pairs}:
        members = [m for p in pairs if p["step"] == step for m in (int(p["a"]), int(p["b"]))]
        check(len(members) == len(set(members)), f"round {step} pairs are not disjoint: {members}")
    check(all(p["wrong"] == 0 for p in pairs), "checked transfers went wrong")
    kinds = {s["kind"].decode() for s in steps}
    check("pairwise" in kinds, "no pairwise steps recorded")
    check(node_bw.shape == (len(nodes), len(nodes)), "node matrix shape")
    if len(nodes) >= 2:
        check(numpy.isfinite(node_bw[~numpy.eye(len(nodes), dtype=bool)]).all(), "node matrix has gaps")
        check(node_measured == any(int(n["ranks"]) > 1 for n in nodes), "node matrix measured flag")
    check(all(fd["severity"].decode() in ("error", "warning", "info") for fd in findings), "finding severity")
    return findings


def one_error_line(p):
    lines = [l for l in p.stderr.splitlines() if l.startswith("fabricmap")]
    return len(lines) == 1 and "error" in lines[0], lines


def steps_of(path):
    with h5py.File(path, "r") as f:
        steps = [int(r["step"]) for r in f["steps"][:]]
        findings = [{k: (text(r[k]) if f["findings"].dtype[k].kind == "O" else r[k].item())
                     for k in f["findings"].dtype.names} for r in f["findings"][:]]
        return bool(f.attrs["complete"]), steps, findings


TIMEOUT = 4  # --step-timeout of the fault cases: the job must end within it + 10 s


def step_list(path):
    """The step list of a results file as `show --json` reads it: what each step measured."""
    s = subprocess.run([args_fabricmap(), "show", "--json", path], capture_output=True, text=True, timeout=60)
    check(s.returncode == 0, f"show {path}: {s.stderr[-300:]}")
    j = json.loads(s.stdout) if s.returncode == 0 else {"steps": [], "collectives": [], "findings": []}
    keys = ("step", "kind", "scope", "op", "dtype", "redop", "bytes", "in_place", "groups", "status")
    return j, [tuple(st[k] for k in keys) for st in j["steps"]]
