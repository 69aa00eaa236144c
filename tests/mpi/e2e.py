#!/usr/bin/env python3
"""End-to-end tests of the real fabricmap binary under mpiexec; results read back with h5py.

usage: e2e.py --fabricmap BIN --mpiexec MPIEXEC --np N CASE
cases: sweep, emulated, bad-input, corrupt, rank-fault, show, pairwise-quick, pairwise-single, pair-window, copies,
       hang, frozen-rank, frozen-root, crash, kill-root, resume, training, predict, import, verify
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import h5py

FAILURES = []
ARGS = None


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
                     "findings"]:
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


def case_sweep(args, tmp):
    out = os.path.join(tmp, "sweep.h5")
    p = mpirun(args, args.np,
               [args.fabricmap, "run", "-b", "8", "-e", "64K", "-f", "8", "-n", "3", "-w", "1", "-o", out]
               + PAIR_ARGS)
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    check("Out of bounds values : 0 OK" in p.stdout, "console summary missing")
    check("# all_reduce float sum in scope world" in p.stdout, "nccl-tests style block missing")
    attrs, t = read(out)
    check(attrs["world_size"] == args.np, "world_size")
    check(attrs["backend"] == "mpi", "backend")
    check(attrs["schema_version"] == 3, "schema_version")
    check("Open MPI" in attrs["mpi_version"], "mpi_version")
    check(len(t["topology/ranks"]) == args.np, "ranks table")
    rows = check_rows(attrs, t, args.np)
    ops = {r["op"] for rs in rows.values() for r in rs}
    check(ops == {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall",
                  "sendrecv"}, f"ops measured: {sorted(ops)}")
    sizes = sorted({r["bytes"] for rs in rows.values() for r in rs if r["op"] == "all_reduce"})
    check(sizes == [8, 64, 512, 4096, 32768], f"all_reduce sizes {sizes}")
    # show --json is the same content
    j = subprocess.run([args.fabricmap, "show", out, "--json"], capture_output=True, text=True, timeout=60)
    check(j.returncode == 0, "show --json failed")
    doc = json.loads(j.stdout)
    check(len(doc["collectives"]) == len(t["collectives"]), "show --json rows")
    check(doc["complete"] is True and doc["provenance"]["run_config"]["iters"] == 3, "show --json")
    s = subprocess.run([args.fabricmap, "show", out], capture_output=True, text=True, timeout=60)
    check(s.returncode == 0 and "complete" in s.stdout and "all_reduce" in s.stdout, "show text")
    check("Bottlenecks" in s.stdout and "Bottlenecks" in p.stdout, "no Bottlenecks section")
    check_pairwise(out, args.np)
    check(len(doc["pairs"]) > 0 and doc["matrices"]["rank"]["bw_unidir"][0][0] is None, "show --json pairs")


def case_emulated(args, tmp):
    out = os.path.join(tmp, "emulated.h5")
    p = mpirun(args, args.np,
               [args.fabricmap, "run", "-b", "1K", "-e", "64K", "-f", "8", "-n", "3", "-w", "1", "--ranks-per-node", "2",
                "--ops", "all_reduce,alltoall", "--collectives", "--pairwise", "-o", out] + PAIR_ARGS)
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    attrs, t = read(out)
    check(bool(attrs["emulated"]) and attrs["ranks_per_node"] == 2, "emulated attributes")
    nodes = (args.np + 1) // 2
    check(attrs["node_count"] == nodes and len(t["topology/nodes"]) == nodes, "node count")
    scopes = {s["scope"]: s for s in t["scopes"]}
    if args.np == 4:
        check(scopes["intra"]["members"] == "0-1;2-3", f"intra {scopes['intra']}")
        check(scopes["inter"]["members"] == "0,2;1,3", f"inter {scopes['inter']}")
    elif args.np == 3:
        check(scopes["intra"]["members"] == "0-1", f"intra {scopes['intra']}")
        check(scopes["inter"]["members"] == "0,2", f"inter {scopes['inter']}")
    for s in ("world", "intra", "inter"):
        check(scopes[s]["status"] == "active", f"scope {s} not active")
    rows = check_rows(attrs, t, args.np)
    for scope in ("intra", "inter"):
        groups = {r["group"] for rs in rows.values() for r in rs if r["scope"] == scope}
        check(groups == set(range(scopes[scope]["groups"])), f"{scope} groups measured {groups}")
    local = [r["local_rank"] for r in t["topology/ranks"]]
    check(local == [i % 2 for i in range(args.np)], f"local ranks {local}")
    check_pairwise(out, args.np)
    node_pairs = [p for p in t["pairs"] if p["level"] == "node" and p["sample"] == 0]
    check(len(node_pairs) == nodes * (nodes - 1) // 2, f"node pairs {node_pairs}")
    check(all(p["streams"] == (2 if args.np % 2 == 0 else 1) for p in node_pairs), "streams per node pair")


def case_pairwise_quick(args, tmp):
    out = os.path.join(tmp, "quick.h5")
    p = mpirun(args, args.np, [args.fabricmap, "run", "--pairwise", "--pairwise-mode", "quick",
                               "--pairwise-peers", "3", "-o", out] + PAIR_ARGS)
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    attrs, t = read(out)
    check(not any(s["kind"] == "collective" for s in t["steps"]), "--pairwise ran collectives")
    first = [pr for pr in t["pairs"] if pr["level"] == "rank" and pr["sample"] == 0]
    degree = {r: 0 for r in range(args.np)}
    for pr in first:
        degree[pr["a"]] += 1
        degree[pr["b"]] += 1
    check(all(d >= 3 for d in degree.values()), f"every rank meets 3+ peers: {degree}")
    check(len(first) < args.np * (args.np - 1) // 2, "quick mode measured every pair")
    check_pairwise(out, args.np, mode="quick")
    import numpy
    with h5py.File(out, "r") as f:
        medians = f["matrix/rank/peer_median"][:]
    check(numpy.isfinite(medians).all() and (medians > 0).all(), f"peer medians {medians}")


def case_pair_window(args, tmp):
    """The window a pair stream used is what the file and the console say: osu_bw's 64 by default,
    N with --pair-window N, in every /pairs row, the /matrix/rank attributes and the console line."""
    for extra, window in (([], 64), (["--pair-window", "8"], 8)):
        out = os.path.join(tmp, f"w{window}.h5")
        p = mpirun(args, args.np, [args.fabricmap, "run", "--pairwise", "--retests", "0", "-o", out]
                   + PAIR_ARGS + extra)
        check(p.returncode == 0, f"window {window}: exit {p.returncode}: {p.stderr}")
        with h5py.File(out, "r") as f:
            windows = {int(r["window"]) for r in f["pairs"][:]}
            check(windows == {window}, f"/pairs window {windows}, expected {window}")
            check(int(f["matrix/rank"].attrs["window"]) == window,
                  f"/matrix/rank window {f['matrix/rank'].attrs['window']}, expected {window}")
        check(f"window {window}," in p.stdout, f"console does not say window {window}")


def case_pairwise_single(args, tmp):
    p = mpirun(args, 1, [args.fabricmap, "run", "--pairwise", "-o", os.path.join(tmp, "x.h5")], timeout=60)
    ok, lines = one_error_line(p)
    check(p.returncode == 2 and ok and "at least 2 ranks" in lines[0], f"{p.returncode} {lines}")


def one_error_line(p):
    lines = [l for l in p.stderr.splitlines() if l.startswith("fabricmap")]
    return len(lines) == 1 and "error" in lines[0], lines


def case_bad_input(args, tmp):
    out = os.path.join(tmp, "bad.h5")
    cases = [
        ["--no-such-option"],
        ["-b", "1M", "-e", "1K"],
        ["-f", "1"],
        ["--ops", "all_reduce,bogus"],
        ["-d", "float128"],
        ["-b", "6"],
        ["-r", str(args.np)],
        ["--backend", "warp"],
        ["-e", "1T"],
        ["-o", "sun"],
        ["-f", "2", "-i", "8"],
        ["--collectives", "-d", "half"],
        ["--pair-bytes", "0"],
        ["--pair-bytes", "4G"],
        ["--slow-threshold", "0"],
        ["--slow-threshold", "1.5"],
        ["--latency-factor", "0.5"],
        ["--pairwise-mode", "sideways"],
        ["--copies", "--copy-bytes", "0"],
        ["--cuda-graph", "--backend", "mpi"],
        ["--step-timeout", "0"],
        ["--inject-fault", "freeze:rank=1"],
    ]
    for extra in cases:
        p = mpirun(args, args.np, [args.fabricmap, "run", "-o", out] + extra, timeout=60)
        ok, lines = one_error_line(p)
        check(p.returncode == 2, f"{extra}: exit {p.returncode}")
        check(ok, f"{extra}: expected one error line from fabricmap, got {lines}")
        check(p.stdout.strip() == "", f"{extra}: stdout not empty: {p.stdout[:200]}")
        check(not os.path.exists(out), f"{extra}: left a results file")
        check(p.elapsed < 30, f"{extra}: took {p.elapsed:.1f}s")
    p = mpirun(args, args.np, [args.fabricmap, "run", "-o", os.path.join(tmp, "missing", "dir", "x.h5")],
               timeout=60)
    ok, lines = one_error_line(p)
    check(p.returncode == 2 and ok and "does not exist" in lines[0], f"unwritable: {p.returncode} {lines}")


def case_corrupt(args, tmp):
    out = os.path.join(tmp, "corrupt.h5")
    victim = args.np - 1
    p = mpirun(args, args.np,
               [args.fabricmap, "run", "-b", "4K", "-e", "16K", "-n", "2", "--ops", "all_reduce,all_gather",
                "--inject-fault", f"corrupt:rank={victim}:op=all_reduce", "-o", out])
    check(p.returncode == 1, f"exit {p.returncode}")
    check("wrong results" in p.stderr and f"rank(s) {victim}" in p.stderr and "all_reduce" in p.stderr,
          f"message does not name op and rank: {p.stderr}")
    attrs, t = read(out)
    check(attrs["complete"] == True, "a run with wrong results still completes its file")
    bad = [r for r in t["collectives"] if r["wrong"] > 0]
    check(bad and all(r["op"] == "all_reduce" and r["wrong_ranks"] == str(victim) for r in bad),
          f"wrong rows {bad}")
    check(all(s["status"] == "wrong" for s in t["steps"] if s["op"] == "all_reduce"), "step status")
    corruption = [f for f in t["findings"] if f["kind"] == "data_corruption"]
    check(len(corruption) == len(bad) and all(f["rank"] == victim and f["severity"] == "error" for f in corruption),
          f"data_corruption findings {corruption} for {len(bad)} wrong rows")
    # one culprit line for the victim however many steps it spoiled, on the run's console and on
    # show's: "#   ERROR   data_corruption rank R (host): N findings, worst ..., confidence 1.00"
    s = subprocess.run([args.fabricmap, "show", out], capture_output=True, text=True, timeout=60)
    for label, text in (("run", p.stdout), ("show", s.stdout)):
        lines = [l for l in text.splitlines() if l.startswith("#   ERROR   ")]
        check(len(corruption) > 1 and len(lines) == 1
              and lines[0].startswith(f"#   ERROR   data_corruption rank {victim} (")
              and f": {len(corruption)} findings, worst " in lines[0] and lines[0].endswith(", confidence 1.00"),
              f"{label}: culprit lines {lines} for {len(corruption)} findings:\n{text[-1500:]}")
        check(text.count("# DATA CORRUPTION") <= 1, f"{label}: wrong data said more than once as found")


def case_rank_fault(args, tmp):
    """A runtime failure on one rank only must end the whole job promptly with exit 3, naming the
    rank and host, not leave the other ranks waiting in a collective."""
    out = os.path.join(tmp, "fault.h5")
    victim = args.np - 1
    p = mpirun(args, args.np, [args.fabricmap, "run", "-b", "8", "-e", "64K", "-f", "8", "-n", "2",
                               "--inject-fault", f"error:rank={victim}:step=3", "-o", out], timeout=120)
    check(p.returncode == 3, f"exit {p.returncode}: {p.stderr[-500:]}")
    check(f"fabricmap run: error on rank {victim} (" in p.stderr and "step 3" in p.stderr,
          f"rank not named: {p.stderr[-800:]}")
    check(p.elapsed < 60, f"took {p.elapsed:.0f}s to end")
    attrs, t = read(out)
    check(attrs["complete"] == False, "an aborted run must not claim to be complete")
    # Rank 0 writes step k before it joins step k+1, so when the victim fails at the start of step
    # 3 (after step 2 ended everywhere), steps 0 and 1 are on disk; step 2 is if rank 0 was faster
    # than the abort. Either way only whole steps, in order.
    kept = [s["step"] for s in t["steps"]]
    check(kept in ([0, 1], [0, 1, 2]), f"steps kept: {kept}")


def case_copies(args, tmp):
    """Copies between the ranks of each node (host memory on the mpi backend): uneven nodes of 3
    and 2 ranks, after a one-step sweep, without the pairwise phase."""
    import numpy
    out = os.path.join(tmp, "copies.h5")
    p = mpirun(args, args.np, [args.fabricmap, "run", "--collectives", "--copies", "--ops", "all_reduce",
                               "-b", "1K", "-e", "1K", "--copy-bytes", "1M", "--copy-iters", "3",
                               "--ranks-per-node", "3", "-o", out])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-500:]}")
    check("host copy write bandwidth" in p.stdout, "console shows no copy matrix")
    attrs, t = read(out)
    with h5py.File(out, "r") as f:
        d = f["copies"][:]
        copies = [{k: (text(row[k]) if d.dtype[k].kind == "O" else row[k].item()) for k in d.dtype.names}
                  for row in d]
        gpu = {node: {k: f[f"matrix/gpu/{node}/{k}"][:] for k in f[f"matrix/gpu/{node}"]}
               for node in f["matrix/gpu"]}
        fold = f["matrix/rank/copy_unidir"][:]
        check("matrix/rank/bw_unidir" not in f, "pairwise matrices written without a pairwise phase")
    collectives = [s["step"] for s in t["steps"] if s["kind"] == "collective"]
    copy_steps = [s for s in t["steps"] if s["kind"] == "copy"]
    check(attrs["complete"] == True and len(t["steps"]) == attrs["planned_steps"], "incomplete file")
    check(len(copy_steps) == 3 and all(s["status"] == "ok" for s in copy_steps), f"copy steps {copy_steps}")
    check(min(s["step"] for s in copy_steps) > max(collectives), "copies must follow the collectives")
    # node 0 (ranks 0-2) measures pairs 0-1, 0-2, 1-2; node 1 (ranks 3-4) only 0-1
    want = {(0, 0, 1), (0, 0, 2), (0, 1, 2), (1, 0, 1)}
    check({(c["node"], c["a"], c["b"]) for c in copies} == want, f"copy rows {copies}")
    for c in copies:
        rates = [c[k] for k in ("write_ab", "write_ba", "write_bidir", "read_ab", "read_ba", "read_bidir")]
        check(all(math.isfinite(r) and r > 0 for r in rates), f"rates {c}")
        check(c["method"] == "host" and c["path"] == "shared_memory" and c["wrong"] == 0, f"row {c}")
        check(c["rank_a"] == c["node"] * 3 + c["a"] and c["rank_b"] == c["node"] * 3 + c["b"], f"ranks {c}")
    check(sorted(gpu) == ["0", "1"], f"gpu groups {sorted(gpu)}")
    for node, n in (("0", 3), ("1", 2)):
        m = gpu[node]["host_write_unidir"]
        off = ~numpy.eye(n, dtype=bool)
        check(m.shape == (n, n) and numpy.isfinite(m[off]).all() and numpy.isnan(numpy.diag(m)).all(),
              f"node {node} write matrix {m}")
        check(list(gpu[node]["ranks"]) == [int(node) * 3 + i for i in range(n)], f"ranks {gpu[node]['ranks']}")
    same = numpy.array([[a // 3 == b // 3 and a != b for b in range(5)] for a in range(5)])
    check(numpy.isfinite(fold[same]).all() and numpy.isnan(fold[~same]).all(), f"rank fold {fold}")
    s = subprocess.run([args.fabricmap, "show", "--json", out], capture_output=True, text=True, timeout=30)
    j = json.loads(s.stdout)
    check(len(j["copies"]) == 4 and len(j["matrices"]["gpu"]) == 2, "show --json lacks the copies")


def parent_of(pid):
    """The parent PID of `pid` (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def descends_from(pid, ancestor):
    while pid is not None and pid > 1:
        if pid == ancestor:
            return True
        pid = parent_of(pid)
    return False


def rank_pids(rank, launcher):
    """PIDs of the fabricmap processes that this test's mpirun (PID `launcher`) started as world
    rank `rank`: never another run's, whoever else runs fabricmap on this machine."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if (cmd and cmd[0].endswith(b"fabricmap") and f"OMPI_COMM_WORLD_RANK={rank}".encode() in env
                and descends_from(int(pid), launcher)):
            pids.append(int(pid))
    return pids


def steps_of(path):
    with h5py.File(path, "r") as f:
        steps = [int(r["step"]) for r in f["steps"][:]]
        findings = [{k: (text(r[k]) if f["findings"].dtype[k].kind == "O" else r[k].item())
                     for k in f["findings"].dtype.names} for r in f["findings"][:]]
        return bool(f.attrs["complete"]), steps, findings


TIMEOUT = 4  # --step-timeout of the fault cases: the job must end within it + 10 s


def case_hang(args, tmp):
    """A rank that stops making progress at step 3 (injected stall): rank 0's watchdog names it and
    its host, records a hang finding, keeps steps 0-2 and ends the job with exit 3 in time."""
    out = os.path.join(tmp, "hang.h5")
    victim = args.np - 1
    p = mpirun(args, args.np, [args.fabricmap, "run", "-b", "1K", "-e", "64K", "-n", "3", "--ranks-per-node", "2",
                               "--step-timeout", str(TIMEOUT), "--inject-fault", f"stall:rank={victim}:step=3",
                               "-o", out], timeout=120)
    check(p.returncode == 3, f"exit {p.returncode}: {p.stderr[-600:]}")
    check(p.elapsed < TIMEOUT + 10, f"took {p.elapsed:.1f}s, bound {TIMEOUT + 10}s")
    lines = [l for l in p.stderr.splitlines() if l.startswith("fabricmap run: error")]
    check(len(lines) == 1 and f"rank {victim} (" in lines[0] and "never reached the measurement" in lines[0]
          and "step 3" in lines[0], f"message: {lines}")
    complete, steps, findings = steps_of(out)
    check(not complete and steps == [0, 1, 2], f"file: complete={complete} steps={steps}")
    hangs = [f for f in findings if f["kind"] == "hang"]
    check(len(hangs) == 1 and hangs[0]["rank"] == victim and hangs[0]["node_a"] == victim // 2,
          f"hang findings {hangs}")
    s = subprocess.run([args.fabricmap, "show", out], capture_output=True, text=True, timeout=30)
    check(s.returncode == 0 and "INCOMPLETE" in s.stdout and "hung" in s.stdout, f"show: {s.stdout[-400:]}")


def frozen_run(args, tmp, victim, extra=()):
    """Starts a long sweep, freezes world rank `victim` with SIGSTOP once it runs, and returns the
    finished process, its stderr and the seconds from the freeze to the end."""
    out = os.path.join(tmp, f"frozen{victim}.h5")
    cmd = [args.mpiexec, "-n", str(args.np), "--oversubscribe", args.fabricmap, "run", "-b", "1K", "-e", "1G",
           "-f", "2", "-n", "20", "--step-timeout", str(TIMEOUT), "-o", out] + list(extra)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    frozen = None
    deadline = time.monotonic() + 60
    while frozen is None and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(1.5)
        pids = rank_pids(victim, proc.pid)
        for pid in pids:
            os.kill(pid, 19)  # SIGSTOP
        if pids:
            frozen = time.monotonic()
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        check(False, "a frozen rank hung the job")
    check(frozen is not None, "the victim rank was never found")
    return proc, err, time.monotonic() - (frozen or 0), out


def case_frozen_rank(args, tmp):
    """SIGSTOP on one rank mid-sweep: it goes silent; rank 0 names it as stopped responding."""
    victim = args.np - 1
    proc, err, after, out = frozen_run(args, tmp, victim, ["--ranks-per-node", "2"])
    check(proc.returncode == 3, f"exit {proc.returncode}: {err[-600:]}")
    check(after < TIMEOUT + 10, f"ended {after:.1f}s after the freeze, bound {TIMEOUT + 10}s")
    check(f"rank {victim} (" in err and "stopped responding" in err, f"message: {err[-600:]}")
    complete, steps, findings = steps_of(out)
    check(not complete and steps == list(range(len(steps))), f"steps {steps}")
    check([f["rank"] for f in findings if f["kind"] == "hang"] == [victim], f"findings {findings}")


def case_frozen_root(args, tmp):
    """SIGSTOP on rank 0 itself: the other ranks' own deadlines end the job."""
    proc, err, after, _ = frozen_run(args, tmp, 0)
    check(proc.returncode == 3, f"exit {proc.returncode}: {err[-600:]}")
    check(after < TIMEOUT + 10, f"ended {after:.1f}s after the freeze, bound {TIMEOUT + 10}s")
    check("rank 0 did not end the job" in err, f"message: {err[-600:]}")


def case_crash(args, tmp):
    """A rank killed at step 2 (injected SIGKILL): mpirun ends the job at once and names the rank;
    the file keeps the steps before it and says it is incomplete."""
    out = os.path.join(tmp, "crash.h5")
    p = mpirun(args, args.np, [args.fabricmap, "run", "-b", "1K", "-e", "64K", "-n", "3",
                               "--inject-fault", "crash:rank=1:step=2", "-o", out], timeout=120)
    check(p.returncode != 0, "a killed rank must fail the job")
    check(p.elapsed < 15, f"took {p.elapsed:.1f}s")
    check("rank 1" in p.stderr and "signal 9" in p.stderr, f"mpirun does not name the rank: {p.stderr[-600:]}")
    complete, steps, _ = steps_of(out)
    check(not complete and steps in ([0, 1], [0, 1, 2]) and steps[:2] == [0, 1], f"steps {steps}")


def whole_steps(path, label):
    """Reads a results file as `fabricmap show --json` does (from its journal when the run died)
    and checks that it holds only whole steps: a prefix of the plan, every ok step with one row
    per group. Returns the number of steps, or None when it could not be read."""
    s = subprocess.run([args_fabricmap(), "show", "--json", path], capture_output=True, text=True, timeout=60)
    check(s.returncode == 0, f"{label}: show exit {s.returncode}: {s.stderr[-300:]}")
    if s.returncode != 0:
        return None
    j = json.loads(s.stdout)
    steps = [st["step"] for st in j["steps"]]
    check(steps == list(range(len(steps))), f"{label}: steps not a prefix of the plan: {steps}")
    rows = {}
    for r in j["collectives"]:
        rows[r["step"]] = rows.get(r["step"], 0) + 1
    for st in j["steps"]:
        if st["kind"] == "collective" and st["status"] != "waived":
            check(rows.get(st["step"], 0) == st["groups"],
                  f"{label}: step {st['step']} has {rows.get(st['step'], 0)} rows for {st['groups']} groups")
    check(j["complete"] is False or len(steps) == j["provenance"]["planned_steps"], f"{label}: complete early")
    return len(steps)


def case_kill_root(args, tmp):
    """SIGKILL to rank 0 (the writer) at random moments in 20 runs: whatever file is left behind
    reads back, with whole steps only."""
    import random
    seed = int(os.environ.get("FABRICMAP_KILL_SEED", time.time()))
    rng = random.Random(seed)
    print(f"kill-root: seed {seed}")
    # a bystander that looks like another job's rank 0 (named fabricmap, rank 0 in its environment):
    # the kills must spare it
    import shutil
    decoy_bin = os.path.join(tmp, "decoy", "fabricmap")
    os.makedirs(os.path.dirname(decoy_bin))
    shutil.copy(shutil.which("sleep"), decoy_bin)
    decoy = subprocess.Popen([decoy_bin, "600"], env=dict(os.environ, OMPI_COMM_WORLD_RANK="0"))
    checked = 0
    killed = 0
    resumable = None
    for i in range(20):
        out = os.path.join(tmp, f"killed{i}.h5")
        cmd = [args.mpiexec, "-n", str(args.np), "--oversubscribe", args.fabricmap, "run", "-b", "1K", "-e", "16M",
               "-f", "2", "-n", "10", "-w", "1", "--ops", "all_reduce,all_gather,broadcast", "-o", out]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        when = rng.uniform(0.3, 3.0)
        time.sleep(when)
        for pid in rank_pids(0, proc.pid):
            os.kill(pid, 9)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            check(False, f"run {i}: the job did not end after rank 0 was killed")
        if not os.path.exists(out) and not os.path.exists(out + ".journal"):
            continue  # killed before rank 0 created the file: nothing left to read
        killed += proc.returncode != 0
        n = whole_steps(out, f"run {i} (killed at {when:.2f}s)")
        if n is not None:
            checked += 1
            if proc.returncode != 0:
                resumable = out
    check(decoy.poll() is None, "the kills hit a fabricmap process this test did not start")
    decoy.kill()
    decoy.wait()
    print(f"kill-root: {checked} files left behind ({killed} of them by a killed run), all readable")
    check(killed >= 10, f"only {killed} of 20 runs were killed with a file behind: nothing much tested")
    if resumable:
        # the last file a kill left behind is finished by --resume
        p = mpirun(args, args.np, [args.fabricmap, "run", "--resume", resumable], timeout=120)
        n = whole_steps(resumable, "resumed after the kill")
        check(p.returncode == 0 and n is not None and json.loads(subprocess.run(
            [args.fabricmap, "show", "--json", resumable], capture_output=True, text=True).stdout)["complete"],
              f"resume of a killed run: exit {p.returncode}: {p.stderr[-400:]}")


def step_list(path):
    """The step list of a results file as `show --json` reads it: what each step measured."""
    s = subprocess.run([args_fabricmap(), "show", "--json", path], capture_output=True, text=True, timeout=60)
    check(s.returncode == 0, f"show {path}: {s.stderr[-300:]}")
    j = json.loads(s.stdout) if s.returncode == 0 else {"steps": [], "collectives": [], "findings": []}
    keys = ("step", "kind", "scope", "op", "dtype", "redop", "bytes", "in_place", "groups", "status")
    return j, [tuple(st[k] for k in keys) for st in j["steps"]]


def case_resume(args, tmp):
    """A run stopped by a hang in its pairwise phase is finished by `run --resume`: the steps it
    recorded are kept as measured, the rest run, and the step list equals a clean run's. A resume
    killed at a random moment loses nothing recorded; other configurations and layouts are refused
    without touching the file; a complete file has nothing to resume."""
    import random
    import shutil
    base = ["-b", "1K", "-e", "16K", "-f", "4", "-n", "3", "-w", "1", "--ops", "all_reduce,broadcast",
            "--ranks-per-node", "2", "--collectives", "--copies", "--pairwise", "--copy-bytes", "1M",
            "--pair-bytes", "64K", "--retests", "0", "--step-timeout", str(TIMEOUT)]
    clean = os.path.join(tmp, "clean.h5")
    p = mpirun(args, args.np, [args.fabricmap, "run"] + base + ["-o", clean], timeout=120)
    check(p.returncode == 0, f"clean run: exit {p.returncode}: {p.stderr[-600:]}")
    clean_json, clean_steps = step_list(clean)
    pairwise = [st[0] for st in clean_steps if st[1] == "pairwise"]
    check(len(pairwise) >= 2 and any(st[1] == "copy" for st in clean_steps), f"plan: {clean_steps}")
    stop_at = pairwise[1] if len(pairwise) >= 2 else 1
    out = os.path.join(tmp, "resumed.h5")
    p = mpirun(args, args.np, [args.fabricmap, "run"] + base +
               ["--inject-fault", f"stall:rank={args.np - 1}:step={stop_at}", "-o", out], timeout=120)
    check(p.returncode == 3, f"stopped run: exit {p.returncode}: {p.stderr[-600:]}")
    stopped_json, stopped_steps = step_list(out)
    check(stopped_steps == clean_steps[:stop_at], f"stopped run kept {len(stopped_steps)} steps, expected {stop_at}")
    for name in ("copy", "killed"):  # the same stopped run, for the refusals and the kill below
        shutil.copy(out, os.path.join(tmp, f"{name}.h5"))
        shutil.copy(out + ".journal", os.path.join(tmp, f"{name}.h5.journal"))

    p = mpirun(args, args.np, [args.fabricmap, "run", "--resume", out], timeout=120)
    check(p.returncode == 0, f"resume: exit {p.returncode}: {p.stderr[-600:]}")
    check(f"{stop_at} of {len(clean_steps)} steps taken from the file" in p.stdout, f"resume said: {p.stdout[:900]}")
    resumed_json, resumed_steps = step_list(out)
    check(resumed_json["complete"] is True and not os.path.exists(out + ".journal"), "resumed file is not complete")
    check(resumed_steps == clean_steps, f"resumed step list differs from a clean run's:\n{resumed_steps}\n{clean_steps}")
    kept = [r for r in resumed_json["collectives"] if r["step"] < stop_at]
    check(kept == stopped_json["collectives"], "the recorded measurements were not kept as they were")
    check([f["kind"] for f in resumed_json["findings"]].count("hang") == 1, "the stopped run's hang is not kept")
    check("bw_unidir" in resumed_json["matrices"]["rank"] and resumed_json["matrices"].get("gpu"),
          f"matrices of the resumed run: {list(resumed_json.get('matrices', {}))}")
    resumed = resumed_json["provenance"]["resumed"]
    check(resumed.count("\n") == 0 and f"kept {stop_at} of {len(clean_steps)} steps" in resumed, f"resumed: {resumed}")

    # nothing left to resume; another configuration; another layout: exit 2, one line, file untouched
    copy = os.path.join(tmp, "copy.h5")
    refusals = [(args.np, ["--resume", out], "is complete"),
                (args.np, base[:6] + ["-n", "4"] + base[8:] + ["--resume", copy], "iters: 3 vs 4"),
                (args.np - 1, ["--resume", copy], f"measured by {args.np} ranks, this job has {args.np - 1}")]
    for np_, extra, expected in refusals:
        p = mpirun(args, np_, [args.fabricmap, "run"] + extra, timeout=60)
        ok, lines = one_error_line(p)
        check(p.returncode == 2 and ok and expected in lines[0], f"resume {extra[-1]} on {np_} ranks: "
                                                                 f"{p.returncode} {lines}")
    check(step_list(copy)[1] == stopped_steps, "a refused resume changed the file")

    # a resume killed at a random moment (rank 0, the writer) keeps at least what was recorded
    killed = os.path.join(tmp, "killed.h5")
    seed = int(os.environ.get("FABRICMAP_KILL_SEED", time.time()))
    when = random.Random(seed).uniform(0.2, 1.5)
    proc = subprocess.Popen([args.mpiexec, "-n", str(args.np), "--oversubscribe", args.fabricmap, "run",
                             "--resume", killed], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(when)
    for pid in rank_pids(0, proc.pid):
        os.kill(pid, 9)
    proc.wait(timeout=60)
    n = whole_steps(killed, f"resume killed at {when:.2f}s (seed {seed})")
    check(n is not None and n >= stop_at, f"resume killed at {when:.2f}s lost recorded steps: {n} < {stop_at}")
    finished = step_list(killed)[0].get("complete") is True  # the kill came after its end
    print(f"resume: killed at {when:.2f}s (seed {seed}): {n} of {len(clean_steps)} steps kept, complete={finished}")
    p = mpirun(args, args.np, [args.fabricmap, "run", "--resume", killed], timeout=120)
    check(p.returncode == (2 if finished else 0) and step_list(killed)[1] == clean_steps,
          f"resume after the killed resume: exit {p.returncode}: {p.stderr[-400:]}")


def patterns(path):
    """The /patterns tables of a results file, as lists of dicts."""
    out = {}
    with h5py.File(path, "r") as f:
        for name in ("layout", "training", "scaling"):
            d = f["patterns/" + name][:] if "patterns/" + name in f else []
            out[name] = [{k: (text(row[k]) if d.dtype[k].kind == "O" else row[k].item()) for k in d.dtype.names}
                         for row in d]
        out["layout_text"] = text(f["patterns/layout"].attrs["layout"]) if "patterns/layout" in f else None
    return out


def check_training(path, layout, types, ops):
    """Every traffic type of the layout recorded alone and with the others, with positive figures;
    the concurrent rows carry their interference against the isolated ones."""
    pt = patterns(path)
    check(pt["layout_text"] == layout, f"layout {pt['layout_text']} != {layout}")
    check([r["rank"] for r in pt["layout"]] == list(range(8)), f"layout rows {pt['layout']}")
    rows = pt["training"]
    for mode in ("isolated", "concurrent"):
        got = sorted(r["traffic"] for r in rows if r["mode"] == mode)
        check(got == sorted(types), f"{layout} {mode} traffic {got}, expected {types}")
    for r in rows:
        check(r["time_us_median"] > 0 and r["busbw"] > 0 and r["messages"] > 0 and math.isfinite(r["busbw"]),
              f"{layout} row {r}")
        check(r["ops"] == ops.get(r["traffic"], r["ops"]), f"{layout} {r['traffic']} ops {r['ops']}")
        if r["mode"] == "concurrent":
            alone = [a for a in rows if a["mode"] == "isolated" and a["traffic"] == r["traffic"]][0]
            check(abs(r["interference"] - r["time_us_median"] / alone["time_us_median"]) < 1e-9,
                  f"interference {r['interference']} of {r['traffic']}")
        else:
            check(math.isnan(r["interference"]), f"isolated row with interference {r}")
    return pt


def case_training(args, tmp):
    """The training pattern on 8 ranks in 2 emulated nodes of 4 (tp=2,pp=2,dp=2 with the scaling
    sweep; tp=4,dp=2 with sequence parallelism and ZeRO), a TP group across nodes (a warning, or
    a refusal with --strict-layout), bad layouts, and a run stopped in the pattern and resumed."""
    base = ["--ranks-per-node", "4", "--seq-len", "128", "--hidden", "256", "--train-iters", "4",
            "--step-timeout", "60", "--progress", "off"]
    # with a small sweep of the ops the layout uses, for predict's curves
    full = ["run", "--patterns", "collectives,training", "--layout", "tp=2,pp=2,dp=2", "--scaling", "--scaling-bytes",
            "1M", "-n", "5", "-w", "1", "--ops", "all_reduce,sendrecv", "--scopes", "intra,inter", "--out-of-place",
            "-b", "16K", "-e", "1M", "-f", "4"]
    first = os.path.join(tmp, "t3d.h5")
    p = mpirun(args, 8, [args.fabricmap] + full + ["-o", first] + base, timeout=180)
    check(p.returncode == 0, f"tp=2,pp=2,dp=2: exit {p.returncode}: {p.stderr[-600:]}")
    check("training pattern, layout tp=2,pp=2,dp=2,ep=1" in p.stdout and "interference" in p.stdout,
          f"console: {p.stdout[-1500:]}")
    pt = check_training(first, "tp=2,pp=2,dp=2,ep=1", ["tp", "pp", "dp"], {"tp": "all_reduce", "pp": "sendrecv"})
    # messages: activations 1 x 128 x 256 x 2 B; gradients 12 x 256^2 x 2 layers x 2 B / tp 2, one bucket
    sizes = {r["traffic"]: (r["bytes"], r["messages"], r["nranks"], r["groups"]) for r in pt["training"]}
    check(sizes == {"tp": (65536, 8, 2, 4), "pp": (65536, 2, 2, 4), "dp": (1572864, 1, 2, 4)}, f"sizes {sizes}")
    scaling = pt["scaling"]
    check([(r["level"], r["n"], r["groups"], r["nranks"]) for r in scaling] ==
          [("gpus", 2, 2, 2), ("gpus", 4, 2, 4), ("nodes", 1, 1, 4), ("nodes", 2, 1, 8)], f"scaling {scaling}")
    check(all(r["busbw"] > 0 and r["wrong"] == 0 for r in scaling), f"scaling figures {scaling}")
    check(scaling[0]["efficiency"] == 1.0 and scaling[2]["efficiency"] == 1.0, "a level's smallest point is its baseline")
    check(abs(scaling[1]["efficiency"] - scaling[1]["busbw"] / scaling[0]["busbw"]) < 1e-9, "efficiency")
    attrs, t = read(first)
    kinds = [s["kind"] for s in t["steps"]]
    check(attrs["complete"] == True and kinds == ["collective"] * 16 + ["scaling"] * 4 + ["training"] * 4,
          f"steps {kinds}")
    # predict prices every traffic type of the layout on the file's curves, with the concurrent
    # pattern's interference: a complete JSON
    pr = subprocess.run([args.fabricmap, "predict", first, "--params", "20M", "--layers", "4", "--hidden", "256",
                         "--seq", "128", "--global-batch", "8", "--layout", "tp=2,pp=2,dp=2", "--bucket-bytes", "512K",
                         "--peak-tflops", "50", "--price-per-gpu-hour", "2", "--json"],
                        capture_output=True, text=True, timeout=60)
    check(pr.returncode == 0, f"predict: exit {pr.returncode}: {pr.stderr[-600:]}")
    doc = json.loads(pr.stdout) if pr.returncode == 0 else {"predictions": [{"traffic": []}]}
    prediction = doc["predictions"][0]
    measured = {r["traffic"]: r["interference"] for r in pt["training"] if r["mode"] == "concurrent"}
    for t in prediction["traffic"]:
        if t["type"] in ("tp", "pp", "dp"):
            check(t["status"] == "ok" and t["exposed_seconds"] > 0 and all(l["busbw_gbs"] > 0 for l in t["legs"]),
                  f"predict {t['type']}: {t}")
            check(t["interference"] is not None and math.isclose(t["interference"], measured[t["type"]], rel_tol=1e-9),
                  f"predict {t['type']} interference {t['interference']} vs measured {measured.get(t['type'])}")
        else:
            check(t["status"] == "none", f"predict {t['type']}: {t['status']}")
    for key in ("compute_seconds", "step_seconds", "gpu_utilization", "tokens_per_second", "days", "gpu_hours", "cost"):
        check(isinstance(prediction.get(key), (int, float)) and prediction[key] > 0, f"predict {key}: {prediction.get(key)}")
    check(prediction.get("unknown_reason") == "", f"predict unknown: {prediction.get('unknown_reason')}")
    shown = subprocess.run([args.fabricmap, "show", first], capture_output=True, text=True, timeout=60)
    check(shown.returncode == 0 and "concurrent" in shown.stdout and "efficiency" in shown.stdout,
          f"show: {shown.stdout[-800:]}")

    second = os.path.join(tmp, "t2d.h5")
    p = mpirun(args, 8, [args.fabricmap, "run", "--patterns", "training", "--layout", "tp=4,dp=2", "--sequence-parallel",
                         "--dp-mode", "zero", "-o", second] + base, timeout=180)
    check(p.returncode == 0, f"tp=4,dp=2: exit {p.returncode}: {p.stderr[-600:]}")
    check_training(second, "tp=4,pp=1,dp=2,ep=1", ["tp", "dp"],
                   {"tp": "all_gather+reduce_scatter", "dp": "reduce_scatter+all_gather"})
    check(not [f for f in read(second)[1]["findings"] if f["kind"] == "layout"], "tp=4 inside nodes got a layout finding")

    # TP across the two nodes: measured with a warning; refused when strict
    wide = os.path.join(tmp, "wide.h5")
    p = mpirun(args, 8, [args.fabricmap, "run", "--patterns", "training", "--layout", "tp=8", "-o", wide] + base,
               timeout=180)
    check(p.returncode == 0, f"tp=8: exit {p.returncode}: {p.stderr[-600:]}")
    layout_findings = [f for f in read(wide)[1]["findings"] if f["kind"] == "layout"]
    check(len(layout_findings) == 1 and layout_findings[0]["severity"] == "warning" and
          "ranks 0-7" in layout_findings[0]["message"], f"layout findings {layout_findings}")
    for extra, expected in ((["--layout", "tp=8", "--strict-layout"], "strict-layout"),
                            (["--layout", "tp=3,dp=2"], "the job has 8 ranks"),
                            (["--layout", "tp=2,dp=4,ep=3"], "does not divide"),
                            (["--layout", "tp=2,dp=x"], "positive integer")):
        bad = os.path.join(tmp, "bad.h5")
        p = mpirun(args, 8, [args.fabricmap, "run", "--patterns", "training", "-o", bad] + base + extra, timeout=60)
        ok, lines = one_error_line(p)
        check(p.returncode == 2 and ok and expected in lines[0] and not os.path.exists(bad),
              f"{extra}: exit {p.returncode} {lines}")

    # stopped in the concurrent step, resumed: the same step list as a clean run
    stopped = os.path.join(tmp, "stopped.h5")
    clean_steps = step_list(first)[1]
    concurrent = [st[0] for st in clean_steps if st[1] == "training" and st[2] == "concurrent"][0]
    p = mpirun(args, 8, [args.fabricmap] + full + base[:-4] + ["--step-timeout", str(TIMEOUT), "--inject-fault",
                                                               f"stall:rank=5:step={concurrent}", "-o", stopped],
               timeout=120)
    check(p.returncode == 3, f"stalled run: exit {p.returncode}: {p.stderr[-600:]}")
    check(len(step_list(stopped)[1]) == concurrent, f"stalled run kept {step_list(stopped)[1]}")
    p = mpirun(args, 8, [args.fabricmap, "run", "--resume", stopped], timeout=180)
    check(p.returncode == 0, f"resume: exit {p.returncode}: {p.stderr[-600:]}")
    resumed = step_list(stopped)[1]
    check([st[:-1] for st in resumed] == [st[:-1] for st in clean_steps],
          f"resumed steps differ from a clean run's:\n{resumed}\n{clean_steps}")
    check(len([r for r in patterns(stopped)["training"] if r["mode"] == "concurrent"]) == 3,
          "the resumed concurrent step is missing rows")


def case_show(args, tmp):
    notes = os.path.join(tmp, "notes.txt")
    with open(notes, "w") as f:
        f.write("not an hdf5 file\n")
    for target in (notes, os.path.join(tmp, "absent.h5")):
        p = subprocess.run([args.fabricmap, "show", target], capture_output=True, text=True, timeout=30)
        ok, lines = one_error_line(p)
        check(p.returncode == 2 and ok, f"show {target}: {p.returncode} {lines}")
    # a damaged file on which libhdf5 itself loops forever: the reader's CPU-time guard ends it
    damaged = os.path.join(os.path.dirname(__file__), "..", "data", "damaged", "hdf5-heap-loop.h5")
    start = time.monotonic()
    p = subprocess.run([args.fabricmap, "show", damaged], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, FABRICMAP_READ_CPU_LIMIT="2"))
    elapsed = time.monotonic() - start
    ok, lines = one_error_line(p)
    check(p.returncode == 2 and ok and "did not finish after 2 s of CPU time" in lines[0] and elapsed < 15,
          f"show of a file libhdf5 loops on: exit {p.returncode} after {elapsed:.1f}s: {lines}")


def case_predict(args, tmp):
    """`predict` on a file this run measures: scopes chosen, figures sourced, unknowns explained."""
    out = os.path.join(tmp, "measured.h5")
    p = mpirun(args, args.np,
               [args.fabricmap, "run", "--ranks-per-node", "2", "--collectives", "--ops", "all_reduce,sendrecv",
                "-b", "4M", "-e", "32M", "-f", "2", "-n", "3", "-w", "1", "--progress", "off", "-o", out])
    check(p.returncode == 0, f"run exit {p.returncode}: {p.stderr}")

    def predict(*extra):
        return subprocess.run([args.fabricmap, "predict", out] + list(extra), capture_output=True, text=True,
                              timeout=60)

    base = ["--model", "llama-7b", "--layout", "tp=2,pp=2,dp=2", "--global-batch", "64", "--peak-tflops", "989",
            "--price-per-gpu-hour", "2.5"]
    j = predict(*base, "--json")
    check(j.returncode == 0, f"predict --json exit {j.returncode}: {j.stderr}")
    doc = json.loads(j.stdout) if j.returncode == 0 else {"predictions": [{}]}
    pr = doc["predictions"][0]
    traffic = {t["type"]: t for t in pr.get("traffic", [])}
    # nodes of 2 ranks: TP pairs {0,1} inside a node, PP {0,2} and DP {0,4} one rank per node
    for kind, scope, op in (("tp", "intra", "all_reduce"), ("pp", "inter", "sendrecv"), ("dp", "inter", "all_reduce")):
        t = traffic.get(kind, {})
        check(t.get("status") == "ok" and t.get("scope") == scope, f"predict {kind}: {t}")
        leg = (t.get("legs") or [{}])[0]
        check(leg.get("op") == op and leg.get("busbw_gbs", 0) > 0 and out in leg.get("source", ""),
              f"predict {kind} leg {leg}")
    check(traffic.get("tp", {}).get("legs", [{}])[0].get("bytes_per_message") == 32 << 20, "tp message 32 MiB")
    check(traffic.get("ep", {}).get("status") == "none", "dense model has no ep traffic")
    exposed = sum(t["exposed_seconds"] for t in traffic.values() if t["status"] == "ok")
    # pp=2: the 1F1B bubble is compute x (pp - 1) / micro-batches per step
    cfg = doc["config"]
    check(math.isclose(pr.get("bubble_seconds", -1), pr["compute_seconds"] * (cfg["layout"]["pp"] - 1)
                       / (cfg["micro_batches_per_step"] * cfg["virtual_stages"]), rel_tol=1e-9),
          f"bubble {pr.get('bubble_seconds')} of compute {pr['compute_seconds']}")
    check(pr.get("step_seconds") is not None
          and math.isclose(pr["step_seconds"], pr["compute_seconds"] + pr["bubble_seconds"] + exposed, rel_tol=1e-9),
          f"step = compute + bubble + exposed: {pr.get('step_seconds')}")
    check(pr.get("cost") is not None and math.isclose(pr["cost"], 2.5 * pr["gpu_hours"], rel_tol=1e-9), "cost")
    text_run = predict(*base)
    check(text_run.returncode == 0 and "interpolated (log-log)" in text_run.stdout and "GPU utilization" in text_run.stdout
          and "pipeline bubble" in text_run.stdout, f"predict text: {text_run.stdout}")
    # two providers side by side
    both = subprocess.run([args.fabricmap, "predict", out, out] + base, capture_output=True, text=True, timeout=60)
    check(both.returncode == 0 and both.stdout.count(out) >= 3 and "step time s" in both.stdout,
          f"side by side: {both.stdout}")
    # what the file did not measure is unknown with the reason, never guessed
    moe = predict("--model", "mixtral-8x7b", "--layout", "tp=2,dp=2,ep=2", "--global-batch", "64",
                  "--peak-tflops", "989", "--json")
    check(moe.returncode == 0, f"mixtral exit {moe.returncode}: {moe.stderr}")
    if moe.returncode == 0:
        m = json.loads(moe.stdout)["predictions"][0]
        ep = [t for t in m["traffic"] if t["type"] == "ep"][0]
        check(ep["status"] == "unknown" and "alltoall not measured" in ep["reason"], f"ep: {ep}")
        check(m["step_seconds"] is None and "step time unknown" in m["unknown_reason"], "mixtral step unknown")
    # bad input: one message, exit 2
    for extra in (base[:-4] + [],  # a host-memory file records no GPU: --peak-tflops is needed
                  ["--model", "llama-8b", "--dp", "2", "--peak-tflops", "989"],
                  ["--model", "llama-7b", "--dp", "3", "--peak-tflops", "989"],
                  base + ["--virtual-stages", "3"]):  # 32 layers do not split into 2 x 3 chunks
        bad = predict(*extra)
        ok, lines = one_error_line(bad)
        check(bad.returncode == 2 and ok, f"predict {extra}: exit {bad.returncode} {lines}")
    missing = subprocess.run([args.fabricmap, "predict", os.path.join(tmp, "absent.h5")] + base,
                             capture_output=True, text=True, timeout=60)
    ok, lines = one_error_line(missing)
    check(missing.returncode == 2 and ok, f"predict of a missing file: exit {missing.returncode} {lines}")


def case_import(args, tmp):
    """`import nccl-tests` on the real logs of tests/data/nccl-tests: the file holds the figures as
    printed, says where they came from, and show prints them; bad input is one message and exit 2."""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "nccl-tests")
    gh200 = os.path.join(data, "gh200-2node-8gpu-allreduce-slingshot-cscs-alps.txt")
    a100 = os.path.join(data, "a100-sxm4-8gpu-allreduce-superbench-testdata.txt")

    def run(*argv):
        return subprocess.run([args.fabricmap] + list(argv), capture_output=True, text=True, timeout=60)

    # two logs of the same ranks: an all_reduce and an all_gather (the same log, other binary)
    with open(gh200) as f:
        log_text = f.read()
    gather = os.path.join(tmp, "gh200-all-gather.log")
    with open(gather, "w") as f:
        f.write("".join("[1,0]<stdout>:" + l + "\r\n"
                        for l in log_text.replace("all_reduce_perf", "all_gather_perf").splitlines()))
    out = os.path.join(tmp, "imported.h5")
    p = run("import", "nccl-tests", gh200, gather, "-o", out)
    check(p.returncode == 0, f"import exit {p.returncode}: {p.stderr}")
    attrs, t = read(out)
    check(text(attrs["backend"]) == "nccl-tests (imported)", f"backend {attrs['backend']}")
    check(json.loads(text(attrs["imported_from"])) == [gh200, gather], f"imported_from {attrs['imported_from']}")
    check(bool(attrs["complete"]) and attrs["planned_steps"] == 100 and len(t["steps"]) == 100,
          f"complete {attrs['complete']}, {len(t['steps'])} steps of {attrs['planned_steps']}")
    check([s["step"] for s in t["steps"]] == list(range(100)), "steps numbered in order")
    check([r["hostname"] for r in t["topology/ranks"]] == ["nid005471"] * 4 + ["nid005487"] * 4, "rank hosts")
    check([n["ranks"] for n in t["topology/nodes"]] == [4, 4], "nodes")
    rows = t["collectives"]
    check(len(rows) == 100 and {r["op"] for r in rows[:50]} == {"all_reduce"}
          and {r["op"] for r in rows[50:]} == {"all_gather"}, "ops of the rows")
    last = rows[49]
    check(last["bytes"] == 134217728 and last["in_place"] and last["busbw"] == 123.11
          and last["time_us_mean"] == 1907.8 and last["time_us_median"] == 1907.8 and math.isnan(last["time_us_min"])
          and last["nranks"] == 8 and last["ranks"] == "0-7" and last["checked"] and last["wrong"] == 0,
          f"last all_reduce row {last}")
    check(max(r["busbw"] for r in rows[:50] if not r["in_place"]) == 122.57, "peak out-of-place busbw")
    with h5py.File(out, "r") as f:
        imported = f["imported"][:]
    check(len(imported) == 2, f"{len(imported)} /imported rows")
    for row, name in zip(imported, (gh200, gather)):
        check(text(row["file"]) == name and text(row["avg_bus_bandwidth_line"]) == "# Avg bus bandwidth    : 19.7866"
              and row["avg_bus_bandwidth"] == 19.7866 and text(row["out_of_bounds"]) == "0 OK",
              f"/imported row {row}")
    j = run("show", "--json", out)
    doc = json.loads(j.stdout) if j.returncode == 0 else {}
    check(j.returncode == 0 and [i["file"] for i in doc.get("imported", [])] == [gh200, gather]
          and doc["provenance"]["imported_from"] == [gh200, gather] and len(doc["collectives"]) == 100,
          f"show --json: {j.returncode} {j.stderr}")
    s = run("show", out)
    check(s.returncode == 0 and f"# imported from nccl-tests: {gh200}, {gather}" in s.stdout
          and s.stdout.count("# Avg bus bandwidth    : 19.7866") == 2, f"show: {s.stdout[:600]}")
    # the old table layout (no root column, error N/A) imports as well
    old = os.path.join(tmp, "a100.h5")
    p = run("import", "nccl-tests", a100, "-o", old)
    check(p.returncode == 0, f"import a100 exit {p.returncode}: {p.stderr}")
    if p.returncode == 0:
        attrs, t = read(old)
        check(len(t["collectives"]) == 68 and max(r["busbw"] for r in t["collectives"]) == 235.26
              and all(not r["checked"] and r["root"] == -1 for r in t["collectives"])
              and {s["status"] for s in t["steps"]} == {"unchecked"}, "a100 rows")
    # bad input: exit 2, one message naming the file (and line), no file written
    garbage = os.path.join(tmp, "garbage.log")
    with open(garbage, "w") as f:
        f.write(log_text.replace("    17.65    0.00", "    17.65    zero"))
    empty = os.path.join(tmp, "empty.log")
    open(empty, "w").close()
    bad_out = os.path.join(tmp, "bad.h5")
    for argv, want in (([garbage], garbage + ":18: "), ([empty], empty + ": no nccl-tests result table"),
                       ([os.path.join(tmp, "absent.log")], "absent.log: no such file"),
                       ([gh200, a100], "were measured on different ranks")):
        p = run("import", "nccl-tests", *argv, "-o", bad_out)
        ok, lines = one_error_line(p)
        check(p.returncode == 2 and ok and want in lines[0], f"import {argv}: exit {p.returncode} {lines}")
        check(not os.path.exists(bad_out), f"import {argv} left {bad_out}")
    p = run("import", "nccl-tests", gh200, "-o", out)
    ok, lines = one_error_line(p)
    check(p.returncode == 2 and ok and "--force" in lines[0], f"import over a file: {p.returncode} {lines}")
    check(run("import", "nccl-tests", gh200, "-o", out, "--force").returncode == 0, "import --force")
PROFILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "profiles")


def case_verify(args, tmp):
    """`verify` on a measured file: a custom profile it passes (0) and one it fails (1, the check named),
    a built-in GPU profile (1: NO_GPU), unusable input (2); `compare` of runs with different rank counts."""
    big = os.path.join(tmp, "big.h5")
    small = os.path.join(tmp, "small.h5")
    measure = ["--ranks-per-node", "2", "--collectives", "--ops", "all_reduce", "-b", "256K", "-e", "4M", "-f", "2",
               "-n", "3", "-w", "1", "--pairwise", "--scaling", "--progress", "off"]
    for path, np_ in ((big, args.np), (small, 2)):
        p = mpirun(args, np_, [args.fabricmap, "run"] + measure + ["-o", path])
        check(p.returncode == 0, f"run np {np_} exit {p.returncode}: {p.stderr}")

    def fm(*extra):
        return subprocess.run([args.fabricmap] + list(extra), capture_output=True, text=True, timeout=60)

    passing = fm("verify", big, "--profile", "custom", "--profile-file", os.path.join(PROFILES, "host-pass.txt"), "--json")
    check(passing.returncode == 0, f"verify host-pass exit {passing.returncode}: {passing.stdout} {passing.stderr}")
    if passing.returncode == 0:
        doc = json.loads(passing.stdout)
        checks = {(c["check"], c["status"]) for c in doc["checks"]}
        check(doc["verdict"] == "pass" and doc["failed"] == 0 and doc["missing"] == 0, f"verdict {doc['verdict']}")
        for name in ("topology_class", "gpus_per_node", "intra_allreduce_busbw", "inter_allreduce_busbw_per_nic",
                     "pair_fraction", "scaling_efficiency"):
            check((name, "pass") in checks, f"check {name} passed: {sorted(checks)}")
        intra = [c for c in doc["checks"] if c["check"] == "intra_allreduce_busbw"]
        check(len(intra) == args.np // 2 and all(c["measured"] > 0 and "1 MiB..4 MiB" in c["detail"] for c in intra),
              f"intra judged per node on the plateau: {intra}")
        print("verify pass: " + ", ".join(f"{c['check']} {c['subject']} {c['measured']}" for c in doc["checks"]
                                          if isinstance(c["measured"], float)))
    failing = fm("verify", big, "--profile-file", os.path.join(PROFILES, "host-fail.txt"))
    check(failing.returncode == 1 and "VERDICT: FAIL" in failing.stdout
          and "intra_allreduce_busbw node0" in failing.stdout.splitlines()[-1],
          f"verify host-fail: exit {failing.returncode}: {failing.stdout[-600:]}")
    builtin = fm("verify", big, "--profile", "hgx-h100-8", "--json")
    check(builtin.returncode == 1, f"verify hgx-h100-8 exit {builtin.returncode}: {builtin.stderr}")
    if builtin.stdout.strip():
        doc = json.loads(builtin.stdout)
        classes = [c for c in doc["checks"] if c["check"] == "topology_class"]
        check(classes and all(c["status"] == "fail" and c["measured"] == "NO_GPU" for c in classes),
              f"hgx-h100-8 topology class: {classes}")
        # a 4 MiB sweep cannot show an NVSwitch plateau: not measured, with the reason
        intra = [c for c in doc["checks"] if c["check"] == "intra_allreduce_busbw"]
        check(intra and intra[0]["status"] == "missing" and "min_plateau_bytes" in intra[0]["detail"], f"{intra}")
    # --record writes /verdict
    rec = fm("verify", big, "--profile-file", os.path.join(PROFILES, "host-fail.txt"), "--record")
    check(rec.returncode == 1, f"verify --record exit {rec.returncode}: {rec.stderr}")
    with h5py.File(big, "r") as f:
        v = f["verdict"].attrs if "verdict" in f else {}
        check(v and bool(v["pass"]) is False and text(v["profile"]) == "host-too-fast" and int(v["failed"]) >= 1
              and "intra_allreduce_busbw" in text(v["reasons"]), f"/verdict {dict(v)}")
    check(not os.path.exists(big + ".verdict"), "the verdict's working copy was left behind")
    shown = fm("show", big)
    check(shown.returncode == 0 and "# acceptance: FAIL against profile host-too-fast" in shown.stdout,
          f"show after --record: {shown.stdout[:800]} {shown.stderr}")
    shown = fm("show", big, "--json")
    acceptance = json.loads(shown.stdout)["acceptance"] if shown.returncode == 0 else None
    check(acceptance and acceptance["pass"] is False and acceptance["verdict"] == "fail"
          and any("intra_allreduce_busbw" in r for r in acceptance["reasons"]), f"show --json acceptance: {acceptance}")
    # unusable input: exit 2 with one message
    notes = os.path.join(tmp, "notes.h5")
    with open(notes, "w") as f:
        f.write("not hdf5\n")
    bad_profile = os.path.join(tmp, "bad.txt")
    with open(bad_profile, "w") as f:
        f.write("# ok\nmin_pair_fraction = lots\n")
    for extra, expect in (([notes, "--profile", "pcie-8"], "not an HDF5 file"),
                          ([os.path.join(tmp, "absent.h5"), "--profile", "pcie-8"], "absent.h5"),
                          ([big, "--profile", "dgx-9000"], "unknown profile"),
                          ([big, "--profile-file", bad_profile], "bad.txt:2: min_pair_fraction")):
        p = fm("verify", *extra)
        ok, lines = one_error_line(p)
        check(p.returncode == 2 and ok and expect in lines[0], f"verify {extra}: exit {p.returncode} {lines}")

    # compare: 4 ranks against 2, figures side by side
    c = fm("compare", big, small, "--label", "np4", "--label", "np2", "--json")
    check(c.returncode == 0, f"compare exit {c.returncode}: {c.stderr}")
    if c.returncode == 0:
        doc = json.loads(c.stdout)
        check([f["ranks"] for f in doc["files"]] == [args.np, 2] and doc["reference"] == "np4", "compare files")
        rows = {r["key"]: r for r in doc["rows"]}
        for key in ("collectives.intra.all_reduce.plateau_busbw", "collectives.world.all_reduce.peak_busbw",
                    "topology.classes", "findings.error"):
            check(key in rows and len(rows[key]["values"]) == 2, f"compare row {key}")
        world = rows.get("collectives.world.all_reduce.plateau_busbw", {"values": [{}, {}]})["values"]
        check(all(isinstance(v.get("value"), float) and v["value"] > 0 for v in world), f"world plateau {world}")
        check(isinstance(world[1].get("ratio"), float) and isinstance(world[1].get("differs"), bool), f"{world}")
        # one node of 2 ranks measures no separate intra scope: absent there, never marked
        intra = rows.get("collectives.intra.all_reduce.plateau_busbw", {"values": [{}, {}]})["values"]
        check(intra[0].get("value", 0) > 0 and intra[1].get("value") is None and intra[1]["differs"] is False,
              f"intra plateau {intra}")
        check(rows.get("pairs.inter_node.median", {"values": [{}, {}]})["values"][1].get("value") is None,
              "np2 (one node) has no inter-node pairs")
        print("compare: " + "; ".join(f"{k} {[v['value'] for v in r['values']]} differs {[v['differs'] for v in r['values']]}"
                                     for k, r in rows.items() if "plateau_busbw" in k))
    t = fm("compare", big, small, "--tolerance", "0.05")
    check(t.returncode == 0 and "# fabricmap compare: 2 files, reference" in t.stdout and "tolerance 5%" in t.stdout,
          f"compare text: {t.stdout[:400]} {t.stderr}")
    bad = fm("compare", big, notes)
    ok, lines = one_error_line(bad)
    check(bad.returncode == 2 and ok, f"compare of an unusable file: exit {bad.returncode} {lines}")


CASES = {"sweep": case_sweep, "emulated": case_emulated, "bad-input": case_bad_input,
         "corrupt": case_corrupt, "show": case_show, "rank-fault": case_rank_fault,
         "pairwise-quick": case_pairwise_quick, "pairwise-single": case_pairwise_single,
         "pair-window": case_pair_window,
         "copies": case_copies, "hang": case_hang, "frozen-rank": case_frozen_rank,
         "frozen-root": case_frozen_root, "crash": case_crash, "kill-root": case_kill_root,
         "resume": case_resume, "training": case_training, "predict": case_predict,
         "import": case_import, "verify": case_verify}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fabricmap", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("case", choices=sorted(CASES))
    args = ap.parse_args()
    global ARGS
    ARGS = args
    with tempfile.TemporaryDirectory(prefix="fabricmap-e2e-") as tmp:
        CASES[args.case](args, tmp)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed", file=sys.stderr)
        return 1
    print(f"{args.case} (np={args.np}): ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
