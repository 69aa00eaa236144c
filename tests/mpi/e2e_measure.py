"""End-to-end cases of measuring: sweeps, emulated nodes, pairwise, copies, bad input, injected corruption."""
import json
import math
import os
import socket
import subprocess

import h5py

from e2e_support import *  # noqa: F401,F403 (the checks and helpers every case uses)


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
    check(attrs["schema_version"] == 4, "schema_version")
    check("Open MPI" in attrs["mpi_version"], "mpi_version")
    # rank 0's own costs: real planning, analysis (the pairs' matrices) and writing, its memory
    costs = [attrs[f"rank0_{k}_seconds"] for k in ("plan", "analysis", "write")]
    check(all(0 < c < 60 for c in costs), f"rank 0's costs {costs}")
    check(32 << 20 < attrs["rank0_peak_rss_bytes"] < 8 << 30, f"rank 0's memory {attrs['rank0_peak_rss_bytes']}")
    check("# Rank 0: planning " in p.stdout and "peak memory" in p.stdout, "rank 0's costs line missing")
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
    # emulated nodes are one machine: one boot id, said once, latency among them not judged
    with open("/proc/sys/kernel/random/boot_id") as f:
        boot_id = f.read().strip()
    ids = {n["boot_id"] for n in t["topology/nodes"]}
    check(ids == {boot_id}, f"boot ids {ids}, this machine's {boot_id}")
    shared = [x for x in t["findings"] if x["kind"] == "shared_host"]
    check(len(shared) == 1 and shared[0]["severity"] == "info" and int(shared[0]["measured"]) == nodes
          and boot_id in shared[0]["message"], f"shared_host findings {shared}")
    check(not any(x["kind"] in ("node_latency", "link_latency") and x["severity"] != "info" for x in t["findings"]),
          "a latency finding among one machine's nodes was judged")


def case_inventory(args, tmp):
    """Each node's inventory from a saved sysfs tree (--sysfs-root: an HGX node with one NIC at
    200G and one port down): recorded in /inventory on both emulated nodes, judged at the start
    (nic_down, nic_rate_mismatch, once per node, on the console and in /findings), and the port
    counters recorded at the end, unchanged. A tree that is not there is notes, not an error."""
    tree = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "sysfs", "nic-200g-port-down")
    out = os.path.join(tmp, "inventory.h5")
    p = mpirun(args, args.np, [args.fabricmap, "run", "--ranks-per-node", "2", "--ops", "all_reduce", "-b", "8",
                               "-e", "64", "-n", "2", "-w", "0", "--sysfs-root", tree, "-o", out])
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    attrs, t = read(out)
    nodes = args.np // 2
    nics = [n for n in t["inventory/nics"] if n["kind"] == "rdma"]
    check(len(nics) == 8 * nodes and {n["node"] for n in nics} == set(range(nodes)), f"RDMA ports {len(nics)}")
    slow = [n for n in nics if n["rate"] == 200.0]
    check(len(slow) == nodes and all(n["device"] == "mlx5_3" and n["speed"] == "HDR" for n in slow), f"{slow}")
    check(len([g for g in t["inventory/pcie"] if g["gpu"]]) == 8 * nodes, "GPU PCIe links")
    check([n["gpudirect"] for n in t["inventory/node"]] == ["yes"] * nodes, f"{t['inventory/node']}")
    counters = t["inventory/counters"]
    check(len(counters) > 0 and all(c["start"] == c["end"] for c in counters), f"{len(counters)} counters")
    kinds = sorted((f["kind"], f["node_a"], f["severity"]) for f in t["findings"] if f["kind"].startswith("nic_"))
    want = sorted([("nic_down", n, "error") for n in range(nodes)] + [("nic_rate_mismatch", n, "warning")
                                                                        for n in range(nodes)])
    check(kinds == want, f"inventory findings {kinds}")
    check("# NIC DOWN (vm/0: mlx5_5 port 1)" in p.stdout.replace(os.uname().nodename, "vm"), p.stdout[-2000:])
    line = (f"# inventory: NICs 1x 200 Gb/s IB (HDR), 1x 25 Gb/s Ethernet, 6x 400 Gb/s IB (NDR); mlx5_5 port 1 DOWN, "
            f"GPUDirect yes on {nodes} of {nodes} nodes")
    check(line in p.stdout, f"no inventory line on the console: {p.stdout[:1500]}")
    shown = subprocess.run([args.fabricmap, "show", out], capture_output=True, text=True, timeout=60)
    check(shown.returncode == 0 and line in shown.stdout, f"show: {shown.stdout[:1500]}")
    html = os.path.join(tmp, "inventory.html")
    r = subprocess.run([args.fabricmap, "report", out, "-o", html], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and 'id="inventory"' in open(html).read(), f"report: {r.stderr}")
    missing = os.path.join(tmp, "missing.h5")
    small = [args.fabricmap, "run", "--ops", "all_reduce", "-b", "8", "-e", "8", "-n", "1", "-w", "0", "-o", missing]
    # a mistyped root (absent, or a file) is refused before anything runs; an empty tree is a machine without sysfs
    for root in (os.path.join(tmp, "no-such-tree"), html):
        p = mpirun(args, args.np, small + ["--sysfs-root", root])
        check(p.returncode == 2 and "--sysfs-root" in p.stderr and not os.path.exists(missing),
              f"a mistyped --sysfs-root {root}: exit {p.returncode}: {p.stderr[-500:]}")
    empty = os.path.join(tmp, "empty-tree")
    os.mkdir(empty)
    p = mpirun(args, args.np, small + ["--sysfs-root", empty])
    check(p.returncode == 0, f"an empty tree: exit {p.returncode}: {p.stderr}")
    _, t = read(missing)
    check(t["inventory/nics"] == [] and "no sysfs here" in t["inventory/node"][0]["notes"], f"{t['inventory/node']}")


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
    # the second quick round (only around pairs that looked slow, which are then retested) may
    # reach every pair of 8 ranks; without a suspect, quick mode measures a subset
    suspects = any(pr["sample"] > 0 for pr in t["pairs"])
    check(suspects or len(first) < args.np * (args.np - 1) // 2, "quick mode measured every pair with no suspect")
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
    fabric_files(args, tmp, out)


def fabric_files(args, tmp, out):
    """--fabric: the file kept in /fabric, shown on the console and by show --json; a missing file,
    a line it cannot read (FILE:LINE) and a file that names none of the run's nodes are one message
    from rank 0 and exit 2, nothing measured."""
    good = os.path.join(tmp, "good.fabric")
    host = socket.gethostname()  # the emulated nodes are "<host>/<k>"
    with open(good, "w") as f:
        f.write("".join(f"{host}/{k} -> leaf{k % 2}\n" for k in range(args.np)) + "leaf0 -> spine0\nleaf1 -> spine0\n")
    p = mpirun(args, args.np, [args.fabricmap, "run", "-o", out, "--pairwise", "--ranks-per-node", "1", "--fabric", good,
                               "--pair-bytes", "64K", "--progress", "off"], timeout=60)
    check(p.returncode == 0 and f"of {args.np} nodes in it" in p.stdout and "# fabric (/fabric): 3 switches" in p.stdout,
          f"--fabric run: exit {p.returncode} {p.stdout[-1500:]} {p.stderr[-1500:]}")
    shown = subprocess.run([args.fabricmap, "show", out, "--json"], capture_output=True, text=True, timeout=60)
    fabric = json.loads(shown.stdout)["fabric"] if shown.returncode == 0 else {}
    check(len(fabric.get("devices", [])) == args.np + 3 and len(fabric.get("links", [])) == args.np + 2,
          f"show --json fabric: {fabric}")
    # judged again from the file, by show and report (a file without a node matrix refused)
    again = subprocess.run([args.fabricmap, "show", out, "--fabric", good], capture_output=True, text=True, timeout=60)
    check(again.returncode == 0 and "# fabric (/fabric): 3 switches" in again.stdout, f"show --fabric: {again.stderr}")
    page = os.path.join(tmp, "fabric.html")
    again = subprocess.run([args.fabricmap, "report", out, "--fabric", good, "-o", page], capture_output=True, text=True,
                           timeout=60)
    check(again.returncode == 0 and os.path.exists(page), f"report --fabric: {again.stderr}")
    os.remove(out)
    unreadable = os.path.join(tmp, "loop.fabric")
    with open(unreadable, "w") as f:
        f.write("leaf0 -> spine0\nspine0 -> leaf0\n")
    elsewhere = os.path.join(tmp, "elsewhere.fabric")
    with open(elsewhere, "w") as f:
        f.write("other0 -> leaf0\nother1 -> leaf0\n")
    for path, want in ((os.path.join(tmp, "absent.fabric"), "absent.fabric"), (unreadable, "loop.fabric:2"),
                       (elsewhere, "none of the run's nodes")):
        p = mpirun(args, args.np, [args.fabricmap, "run", "-o", out, "--pairwise", "--fabric", path], timeout=60)
        ok, lines = one_error_line(p)
        check(p.returncode == 2 and ok and want in lines[0], f"--fabric {path}: exit {p.returncode} {lines}")
        check(not os.path.exists(out), f"--fabric {path}: left a results file")


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


def case_ucx(args, tmp):
    """--backend ucx: the pairwise matrices over UCP (every pair, finite positive figures, checked
    transfers exact), no collective planned, the UCX version and UCX_* settings in the provenance;
    collectives asked of it, and a UCX that cannot start (an unknown UCX_TLS), are one error line
    from rank 0 and exit 2."""
    out = os.path.join(tmp, "ucx.h5")
    env = dict(os.environ, UCX_TLS="self,sm,tcp")
    cmd = [args.mpiexec, "-n", str(args.np), "--oversubscribe", "-x", "UCX_TLS",
           args.fabricmap, "run", "--backend", "ucx", "--ranks-per-node", "2", "--retests", "0", "-o", out] + PAIR_ARGS
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    check(p.returncode == 0, f"ucx run: exit {p.returncode}: {p.stdout[-2000:]} {p.stderr[-2000:]}")
    check_pairwise(out, args.np)
    attrs, t = read(out)
    check(text(attrs["backend"]) == "ucx", f"backend {attrs['backend']}")
    check(text(attrs["ucx_version"]).count(".") >= 2, f"ucx_version {attrs['ucx_version']!r}")
    check("UCX_TLS=self,sm,tcp" in text(attrs["ucx_environment"]), f"ucx_environment {attrs['ucx_environment']!r}")
    kinds = {s["kind"] for s in t["steps"]}
    check(not t["collectives"] and "collective" not in kinds, f"collectives planned on the ucx backend: {kinds}")
    check(all(r["wrong"] == 0 for r in t["pairs"]), "a checked UCX transfer arrived wrong")
    check("# UCX " in p.stdout, "the console does not name UCX")
    check(text(attrs["mpi_transport"]).startswith("pml "), f"mpi_transport {attrs['mpi_transport']!r}")
    ends = t.get("inventory/endpoints", [])
    check(sorted({e["rank"] for e in ends}) == list(range(args.np)) and all(text(e["transports"]) for e in ends),
          f"/inventory/endpoints: {ends}")
    check("# endpoints (transports per peer" in p.stdout, "the console does not say how UCX reached the peers")
    # the same pairs by remote writes (ucp_put_nbx and a flush)
    rma = os.path.join(tmp, "ucx-rma.h5")
    cmd = [args.mpiexec, "-n", str(args.np), "--oversubscribe", "-x", "UCX_TLS", args.fabricmap, "run",
           "--backend", "ucx", "--ucx-api", "rma", "--nic-per-rank", "auto", "--ranks-per-node", "2", "--retests", "0",
           "-o", rma] + PAIR_ARGS
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    check(p.returncode == 0, f"ucx rma run: exit {p.returncode}: {p.stdout[-2000:]} {p.stderr[-2000:]}")
    check_pairwise(rma, args.np)
    attrs, t = read(rma)
    check(json.loads(text(attrs["run_config"]))["ucx_api"] == "rma", "run_config lacks ucx_api rma")
    check(all(r["wrong"] == 0 for r in t["pairs"]), "a checked UCX remote write arrived wrong")
    # shared-memory FIFOs of 2 entries: a send completes here while what the peer still needs (a
    # rendezvous' answer) waits in UCX's queue for this side's progress; a rank that went into MPI
    # then (the agreement after the warm-up) held its peer forever
    tiny = os.path.join(tmp, "ucx-fifo.h5")
    fifo_env = dict(env, UCX_POSIX_FIFO_SIZE="2", UCX_SYSV_FIFO_SIZE="2")
    cmd = [args.mpiexec, "-n", str(args.np), "--oversubscribe", "-x", "UCX_TLS", "-x", "UCX_POSIX_FIFO_SIZE",
           "-x", "UCX_SYSV_FIFO_SIZE", args.fabricmap, "run", "--backend", "ucx", "--ranks-per-node", "2",
           "--retests", "0", "-o", tiny] + PAIR_ARGS
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=fifo_env)
    except subprocess.TimeoutExpired:
        check(False, "ucx run with 2-entry shared-memory FIFOs hung")
        return
    check(p.returncode == 0, f"ucx run with 2-entry FIFOs: exit {p.returncode}: {p.stderr[-2000:]}")
    check_pairwise(tiny, args.np)
    # --nic-per-rank auto without GPUs: the host's interfaces that are up, in turn by local rank
    up = sorted(n["device"] for n in t["inventory/nics"] if n["kind"] == "ethernet" and n["state"] == "up")
    pinned = [r["nic_pinned"] for r in t["topology/ranks"]]
    want = [up[r["local_rank"] % len(up)] if up else "" for r in t["topology/ranks"]]
    check(pinned == want, f"nic_pinned {pinned}, want {want} (interfaces up: {up})")
    # the mpi backend pins MPI's NIC before MPI_Init: the same interfaces, the run unharmed
    pinned_mpi = os.path.join(tmp, "mpi-pinned.h5")
    p = mpirun(args, args.np, [args.fabricmap, "run", "--backend", "mpi", "--nic-per-rank", "auto",
                               "--ranks-per-node", "2", "--retests", "0", "-o", pinned_mpi] + PAIR_ARGS, timeout=240)
    check(p.returncode == 0, f"mpi run with --nic-per-rank auto: exit {p.returncode}: {p.stderr[-2000:]}")
    _, t = read(pinned_mpi)
    pinned = [r["nic_pinned"] for r in t["topology/ranks"]]
    check(pinned == want, f"mpi backend: nic_pinned {pinned}, want {want}")
    refused = mpirun(args, args.np, [args.fabricmap, "run", "--backend", "mpi", "--ucx-api", "rma",
                                     "-o", os.path.join(tmp, "no.h5")], timeout=60)
    ok, lines = one_error_line(refused)
    check(refused.returncode == 2 and ok and "--ucx-api rma needs the ucx backend" in lines[0],
          f"--ucx-api rma on mpi: {refused.returncode} {lines}")
    refused = mpirun(args, args.np, [args.fabricmap, "run", "--backend", "ucx", "--collectives",
                                     "-o", os.path.join(tmp, "no.h5")], timeout=60)
    ok, lines = one_error_line(refused)
    check(refused.returncode == 2 and ok and "needs the mpi or nccl backend" in lines[0],
          f"collectives on ucx: {refused.returncode} {lines}")
    # GPU memory: on mpi never; on ucx only where every rank has a GPU (none here: refused before UCX starts)
    refused = mpirun(args, args.np, [args.fabricmap, "run", "--backend", "mpi", "--pair-memory", "cuda",
                                     "-o", os.path.join(tmp, "no.h5")], timeout=60)
    ok, lines = one_error_line(refused)
    check(refused.returncode == 2 and ok and "--pair-memory cuda needs the" in lines[0] and "uses mpi" in lines[0],
          f"--pair-memory cuda on mpi: {refused.returncode} {lines}")
    if not os.path.exists("/dev/nvidia0"):
        refused = mpirun(args, args.np, [args.fabricmap, "run", "--backend", "ucx", "--pair-memory", "cuda",
                                         "-o", os.path.join(tmp, "no.h5")], timeout=60)
        ok, lines = one_error_line(refused)
        wants = ("--pair-memory cuda needs one GPU per rank: no GPU on",  # a CUDA build
                 "--pair-memory cuda needs the nccl backend (this run uses ucx")  # a build without CUDA
        check(refused.returncode == 2 and ok and any(w in lines[0] for w in wants),
              f"--pair-memory cuda without GPUs: {refused.returncode} {lines}")
    bad = dict(os.environ, UCX_TLS="no_such_transport")
    cmd = [args.mpiexec, "-n", str(args.np), "--oversubscribe", "-x", "UCX_TLS",
           args.fabricmap, "run", "--backend", "ucx", "-o", os.path.join(tmp, "bad.h5")]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=bad)
    ok, lines = one_error_line(p)
    check(p.returncode == 2 and ok and "UCX cannot start on rank 0" in lines[0] and "no_such_transport" in lines[0],
          f"unknown UCX_TLS: exit {p.returncode}, {lines}\n{p.stderr[-2000:]}")
