#!/usr/bin/env python3
"""End-to-end tests of the real fabricmap binary under mpiexec; results read back with h5py.

usage: e2e.py --fabricmap BIN --mpiexec MPIEXEC --np N CASE
cases: sweep, emulated, bad-input, corrupt, rank-fault, show
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
        for name in ["topology/ranks", "topology/nodes", "scopes", "steps", "collectives"]:
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


def case_sweep(args, tmp):
    out = os.path.join(tmp, "sweep.h5")
    p = mpirun(args, args.np,
               [args.fabricmap, "run", "-b", "8", "-e", "64K", "-f", "8", "-n", "3", "-w", "1", "-o", out])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    check("Out of bounds values : 0 OK" in p.stdout, "console summary missing")
    check("# all_reduce float sum in scope world" in p.stdout, "nccl-tests style block missing")
    attrs, t = read(out)
    check(attrs["world_size"] == args.np, "world_size")
    check(attrs["backend"] == "mpi", "backend")
    check(attrs["schema_version"] == 1, "schema_version")
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


def case_emulated(args, tmp):
    out = os.path.join(tmp, "emulated.h5")
    p = mpirun(args, args.np,
               [args.fabricmap, "run", "-b", "1K", "-e", "64K", "-f", "8", "-n", "3", "-w", "1", "--ranks-per-node", "2",
                "--ops", "all_reduce,alltoall", "-o", out])
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
        ["-d", "half"],
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
               [args.fabricmap, "run", "-b", "4K", "-e", "4K", "-n", "2", "--ops", "all_reduce,all_gather",
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
    check([s["step"] for s in t["steps"]] == [0, 1, 2], f"steps kept: {[s['step'] for s in t['steps']]}")


def case_show(args, tmp):
    notes = os.path.join(tmp, "notes.txt")
    with open(notes, "w") as f:
        f.write("not an hdf5 file\n")
    for target in (notes, os.path.join(tmp, "absent.h5")):
        p = subprocess.run([args.fabricmap, "show", target], capture_output=True, text=True, timeout=30)
        ok, lines = one_error_line(p)
        check(p.returncode == 2 and ok, f"show {target}: {p.returncode} {lines}")


CASES = {"sweep": case_sweep, "emulated": case_emulated, "bad-input": case_bad_input,
         "corrupt": case_corrupt, "show": case_show, "rank-fault": case_rank_fault}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fabricmap", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("case", choices=sorted(CASES))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fabricmap-e2e-") as tmp:
        CASES[args.case](args, tmp)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed", file=sys.stderr)
        return 1
    print(f"{args.case} (np={args.np}): ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
