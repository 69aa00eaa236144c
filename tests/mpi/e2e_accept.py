"""The planner's journey end to end: README.md's walk-throughs ("Accept a rented server in three
commands", and from a provider's logs) run as written, the GPU profile swapped for a host profile
this machine can pass; then what the verdict says when a check is missing, fails, or the profile is
bad."""
import json
import os
import re
import shlex
import subprocess

import h5py

from e2e_support import check, mpirun, one_error_line, text

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
README = os.path.join(HERE, "..", "..", "README.md")
HOST_PROFILE = os.path.join(DATA, "profiles", "host-pass.txt")  # NO_GPU, every figure far below a fabric's
FAIL_PROFILE = os.path.join(DATA, "profiles", "host-fail.txt")  # 10 TB/s inside a node
A100_LOG = os.path.join(DATA, "nccl-tests", "a100-sxm4-8gpu-allreduce-superbench-testdata.txt")
GH200_LOG = os.path.join(DATA, "nccl-tests", "gh200-2node-8gpu-allreduce-slingshot-cscs-alps.txt")
NV18_TOPO = os.path.join(DATA, "topo", "h100-sxm-8gpu-nv18-thunderkittens-167.txt")
# an 8x A100 SXM topology: the H100 output above with NV12 for NV18 (tests/data/topo/README.md)
NV12_TOPO = os.path.join(DATA, "topo", "derived", "a100-sxm-8gpu-nv12-from-thunderkittens-167.txt")


def walkthrough(name):
    """The commands of the README block after `<!-- walkthrough: NAME ...-->`, split as a shell would."""
    with open(README) as f:
        readme = f.read()
    m = re.search(r"<!-- walkthrough: " + re.escape(name) + r"\b[^>]*-->\s*```\n(.*?)```", readme, re.S)
    check(m is not None, f"README.md has no walkthrough '{name}'")
    return [shlex.split(line) for line in m.group(1).splitlines() if line.strip()] if m else []


def substitute(words, table):
    return [table.get(w, w) for w in words]


def fm(args, *argv):
    return subprocess.run([args.fabricmap] + list(argv), capture_output=True, text=True, timeout=120)


def run_walkthrough_command(args, words):
    """A README command: `mpirun -np N fabricmap ...` under the test's mpiexec (this machine's ranks),
    `fabricmap ...` as it is."""
    if words[:1] == ["mpirun"]:
        fabricmap = words.index("fabricmap")
        return mpirun(args, args.np, [args.fabricmap] + words[fabricmap + 1:] + ["--progress", "off"])
    check(words[:1] == ["fabricmap"], f"a walkthrough line is not a fabricmap command: {words}")
    return fm(args, *words[1:])


def last_line(p):
    lines = p.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def case_accept(args, tmp):
    """`run --accept` on one "server" (this machine's ranks, one node), the customer's `verify`, the
    report's headline; then the same journey from a provider's logs."""
    server = os.path.join(tmp, "server.h5")
    html = os.path.join(tmp, "server.html")
    table = {"hgx-h100-8": HOST_PROFILE, "server.h5": server, "server.html": html}
    steps = [substitute(w, table) for w in walkthrough("accept")]
    check(len(steps) == 3, f"three commands: {steps}")
    for words in steps:  # verify takes a profile file as --profile-file
        if "--profile" in words:
            words[words.index("--profile")] = "--profile-file"
    outputs = [run_walkthrough_command(args, w) for w in steps]
    run, verify, report = outputs + [None] * (3 - len(outputs))
    check(run is not None and run.returncode == 0, f"run --accept: exit {run and run.returncode}: {run and run.stderr[-800:]}")
    if run is None or run.returncode != 0:
        return
    check(last_line(run).startswith("VERDICT: PASS (") and "missing (allowed by --allow-missing)" in last_line(run)
          and "inter_allreduce_busbw_per_nic" in last_line(run), f"the verdict is run's last word: {last_line(run)}")
    print("run --accept: " + last_line(run))
    with h5py.File(server, "r") as f:
        v = f["verdict"].attrs
        check(text(v["verdict"]) == "pass" and text(v["profile"]) == "host-smoke" and bool(v["allow_missing"])
              and int(v["missing"]) >= 1 and int(v["failed"]) == 0, f"/verdict {dict(v)}")
        ops = {text(r["op"]) for r in f["collectives"][:]}
        scopes = {text(r["scope"]) for r in f["collectives"][:]}
        sizes = sorted({int(r["bytes"]) for r in f["collectives"][:]})
        check(ops == {"all_reduce"} and sizes[-1] >= 1 << 20, f"all_reduce to the plateau sizes: {ops} {sizes[-1:]}")
        check(scopes == {"world"}, f"one node: only its world scope runs ({scopes})")
        scaling = sorted(int(r["n"]) for r in f["patterns/scaling"][:] if text(r["level"]) == "gpus")
        check(scaling[-2:] == [args.np // 2, args.np], f"scaling points {scaling}")
        check("pairs" in f and len(f["pairs"]) > 0, "pairs measured")
    check(verify.returncode == 0 and last_line(verify).startswith("VERDICT: PASS ("),
          f"the customer's verify: exit {verify.returncode}: {last_line(verify)} {verify.stderr[-300:]}")
    check("intra_allreduce_busbw" in verify.stdout and "one node: its world scope is the node's inside" in verify.stdout,
          "one node's intra judged on its world rows")
    check(report.returncode == 0, f"report: {report.returncode} {report.stderr}")
    with open(html) as f:
        page = f.read()
    headline = page.find('<div class="verdict v-ok">ACCEPTANCE: PASS against profile host-smoke')
    check(0 <= headline < page.find("Findings: "), "the report's headline is the verdict, before the findings")
    shown = fm(args, "show", server)
    check(shown.stdout.startswith("# ACCEPTANCE: PASS against profile host-smoke"), f"show: {shown.stdout[:200]}")

    # without --allow-missing the checks one node cannot answer leave it NOT JUDGED, exit 1
    strict = fm(args, "verify", server, "--profile-file", HOST_PROFILE, "--json")
    doc = json.loads(strict.stdout) if strict.stdout.strip() else {}
    missing = {c["check"]: c for c in doc.get("checks", []) if c["status"] == "missing"}
    # the scaling point is judged unless the 2 shared cores made it noisy, which verify then says
    noisy = "noisy" in missing.get("scaling_efficiency", {}).get("detail", "")
    check(strict.returncode == 1 and doc.get("verdict") == "not_judged" and doc.get("failed") == 0
          and "inter_allreduce_busbw_per_nic" in missing and doc.get("passed", 0) >= (4 if noisy else 5)
          and ("scaling_efficiency" not in missing or noisy),
          f"verify without --allow-missing: exit {strict.returncode}, {doc.get('verdict')}, missing {missing}")
    # a profile the server fails: FAIL, exit 1 on every rank; a profile that is none: exit 2, nothing run
    failing = mpirun(args, args.np, [args.fabricmap, "run", "--accept", FAIL_PROFILE, "-b", "1M", "-e", "1M",
                                     "--progress", "off", "-o", os.path.join(tmp, "fail.h5")])
    check(failing.returncode == 1 and last_line(failing).startswith("VERDICT: FAIL (")
          and "intra_allreduce_busbw" in last_line(failing), f"run --accept failing: {failing.returncode} {last_line(failing)}")
    bad = mpirun(args, args.np, [args.fabricmap, "run", "--accept", os.path.join(tmp, "absent.txt"),
                                 "-o", os.path.join(tmp, "bad.h5")])
    ok, lines = one_error_line(bad)
    check(bad.returncode == 2 and ok and "not a built-in profile" in lines[0], f"a bad profile: {bad.returncode} {lines}")
    check(not os.path.exists(os.path.join(tmp, "bad.h5")), "nothing written for a bad profile")
    accept_logs(args, tmp)


def accept_logs(args, tmp):
    """README's logs walk-through on the real A100 log (one server, all_reduce to 8 GiB, A100-SXM4-40GB)
    with an A100 server's NV12 topology; then what is missing without --topo, another model's topology
    refused, and a two-node log's NIC check and caveat."""
    provider = os.path.join(tmp, "provider-a.h5")
    steps = [substitute(w, {"all_reduce_perf.log": A100_LOG, "topo.txt": NV12_TOPO, "provider-a.h5": provider})
             for w in walkthrough("logs")]
    check(len(steps) == 2, f"two commands: {steps}")
    imported, verify = [run_walkthrough_command(args, w) for w in steps] + [None] * (2 - len(steps))
    check(imported.returncode == 0 and "results not checked (-c 0" in imported.stdout,
          f"import: {imported.returncode} {imported.stderr} {imported.stdout[-400:]}")
    check(verify.returncode == 0 and last_line(verify).startswith("VERDICT: PASS ("),
          f"verify the log: {verify.returncode} {last_line(verify)}")
    doc = json.loads(fm(args, "verify", provider, "--profile", "hgx-a100-40gb-8", "--allow-missing", "--json").stdout)
    checks = {c["check"]: c for c in doc["checks"]}
    check(checks["topology_class"]["status"] == "pass" and checks["topology_class"]["measured"] == "FULL_NVSWITCH",
          f"the class from --topo: {checks['topology_class']}")
    check(checks["intra_allreduce_busbw"]["status"] == "pass" and 230 < checks["intra_allreduce_busbw"]["measured"] < 236,
          f"the log's world is the server's inside: {checks['intra_allreduce_busbw']}")
    check(checks["gpu_memory_gb"]["status"] == "pass" and abs(checks["gpu_memory_gb"]["measured"] - 42.95) < 0.01,
          f"40 GiB from the GPU name: {checks['gpu_memory_gb']}")
    print("log: " + ", ".join(f"{c['check']} {c['status']}" for c in doc["checks"]))
    # without --topo the class is missing, not failed; without --allow-missing: NOT JUDGED, exit 1
    bare = os.path.join(tmp, "bare.h5")
    check(fm(args, "import", "nccl-tests", A100_LOG, "-o", bare).returncode == 0, "import without --topo")
    shown = fm(args, "show", bare).stdout
    check("out of bounds values: results not checked (-c 0)" in shown, "a -c 0 log's '0 OK' is not quoted as a check")
    strict = fm(args, "verify", bare, "--profile", "hgx-a100-40gb-8")
    check(strict.returncode == 1 and last_line(strict).startswith("VERDICT: NOT JUDGED (")
          and "topology_class node0 (localhost)" in last_line(strict) and ", 0 failed" in last_line(strict),
          f"a log alone: {strict.returncode} {last_line(strict)}")
    # a saved topology of another server is refused: NV18 pairs that no A100 has, 4 GPUs for 8 ranks
    h100 = fm(args, "import", "nccl-tests", A100_LOG, "--topo", NV18_TOPO, "-o", os.path.join(tmp, "h100.h5"))
    ok, lines = one_error_line(h100)
    check(h100.returncode == 2 and ok and "NV18 between GPU0 and GPU1" in lines[0] and "(12)" in lines[0],
          f"--topo of an H100 server for an A100 log: {lines}")
    four = fm(args, "import", "nccl-tests", A100_LOG, "--topo", os.path.join(DATA, "topo", "h100-4gpu-nv6-allpairs-nic-nccl-1617.txt"),
              "-o", os.path.join(tmp, "four.h5"))
    ok, lines = one_error_line(four)
    check(four.returncode == 2 and ok and "not that server's topology" in lines[0], f"--topo of 4 GPUs: {lines}")
    # two nodes: the world crosses the network, judged per NIC with the Tree/NVLS caveat where it
    # is judged; a sweep to 128 MiB cannot show the HGX profiles' 1 GiB plateau (missing, with what
    # to ask the provider for, and no caveat on a figure not judged); a superchip's name tells no
    # GPU memory; a GH200 is no H200
    two = os.path.join(tmp, "gh200.h5")
    check(fm(args, "import", "nccl-tests", GH200_LOG, "-o", two).returncode == 0, "import gh200")
    doc = json.loads(fm(args, "verify", two, "--profile", "hgx-h200-8", "--json").stdout)
    checks = {c["check"]: c for c in doc["checks"]}
    check(checks["inter_allreduce_busbw_per_nic"]["status"] == "missing"
          and "ask for a log run with -e 1 GiB" in checks["inter_allreduce_busbw_per_nic"]["detail"]
          and not any("Tree/NVLS" in n for n in doc["notes"]), f"NIC check of a 128 MiB log: {checks['inter_allreduce_busbw_per_nic']}")
    check(checks["intra_allreduce_busbw"]["status"] == "missing" and checks["gpu_memory_gb"]["status"] == "missing",
          "two nodes: no intra scope, no memory from GH200 names")
    check(checks["gpu_model"]["status"] == "fail" and doc["verdict"] == "fail", "a GH200 is no H200")
    nic_profile = os.path.join(tmp, "nic.txt")
    with open(nic_profile, "w") as f:
        f.write("name = per-nic\nmin_inter_allreduce_busbw_per_nic = 10\nnics_per_node = 4\n")
    doc = json.loads(fm(args, "verify", two, "--profile-file", nic_profile, "--json").stdout)
    nic = doc["checks"][0]
    check(nic["status"] == "pass" and nic["subject"] == "world (2 nodes)" and any("Tree/NVLS" in n for n in doc["notes"]),
          f"the world per NIC on two nodes, with the caveat: {nic} {doc['notes']}")
