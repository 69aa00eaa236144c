#!/usr/bin/env python3
"""Blame scenarios: plant known faults in an emulated cluster (cluster.py), run `fabricmap run
--pairwise` on it, and score the findings against the truth. bench/scenarios.py runs many
randomized ones; cluster_test.py's `scenarios` case runs a fixed few. Root only; h5py to score.

A scenario is a cluster shape (nodes, ranks per node, and the layout: `shared`, every rank of a
node on its eth0, or `rails`, one interface per local rank, see Cluster(rails=)) and a list of
faults. A fault throttles a share of the line rate away (tbf at (1 - throttle) x the clean veth
rate, measured on the cluster first):

    node         the node's interfaces both ways      truth: `node` <node>
    node_egress  what the node sends                  truth: `node_egress` <node>
    node_ingress what the node receives               truth: `node_ingress` <node>
    link         node -> peer, or both directions     truth: `link` <node> -> <peer> (or <->)
    rank         one rail of a node, both ways        truth: `rank` <that node's local rank>
    uplink       a leaf's cable to the spine, both    truth: `uplink` or `switch_port` naming
                 ways (two-level clusters)                   that leaf's uplinks

A two-level scenario (`leaves`: a leaf per node) builds leaf bridges under a spine bridge
(Cluster(leaves=)) and gives fabricmap the cluster's shape with `--fabric` (unless run without it,
to see what the analysis says without the fabric).

Scoring (score()): a warning or error finding blames parts: a node finding its node's egress and
ingress, node_egress/node_ingress one of them, a link finding its direction(s) between two nodes,
a rank finding that rank, an uplink or switch_port finding the uplinks of the switch its subject
starts with, a switch finding that switch, intra_node and anything else the part it names. It is
  right    when its kind and subject are those of an injected culprit,
  partial  when everything it blames is guilty but it is not a culprit's exact name (a node's
           egress named for a node slowed both ways; latency findings on a slowed node or link;
           the leaf switch named for its slowed uplink; spines named as candidates, "one of 8
           spines (spine00 .. spine07)", among them the slowed one, which it covers),
  false    when it blames anything innocent (an innocent node, link direction, rank: false blame).
A culprit is missed when some part of it is blamed by no warning or error finding. A run is
exactly right when its warning and error findings are exactly the culprits, one each.
"""
import dataclasses
import math
import os
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402  (this folder)

FAULT_KINDS = ("node", "node_egress", "node_ingress", "link", "rank")
FABRIC_KINDS = ("switch", "uplink", "switch_port")  # the switch rule's findings (with --fabric)
SERIOUS = ("warning", "error")
LATENCY_KINDS = ("node_latency", "link_latency")
# The user's pairwise options (issue 14): small transfers, latency measured; the analysis on its
# defaults (no --slow-threshold).
DEFAULT_RUN_ARGS = ["--pairwise", "--pair-bytes", "64K", "--pair-window", "4", "--pair-iters", "4"]
PREFIX = "fmb-"  # namespaces and temp dirs of blame scenarios (the tests' own are fmc-)
LINE_PROBE_BYTES = 32 << 20


@dataclasses.dataclass
class Fault:
    kind: str             # one of FAULT_KINDS
    node: int             # the node (a link's source); cluster index
    throttle: float       # share of the line rate taken away, 0..1
    peer: int = -1        # link: its destination
    both: bool = False    # link: both directions
    rail: int = -1        # rank: the local rank whose rail is slowed
    leaf: int = -1        # uplink: the leaf whose cable to the spine is slowed (node is -1)

    def nodes(self, leaves=None):
        """The cluster nodes it touches (an uplink: every node under its leaf)."""
        if self.kind == "uplink":
            return {i for i, k in enumerate(leaves or []) if k == self.leaf}
        return {self.node} | ({self.peer} if self.kind == "link" else set())

    def label(self, names, leaf_names=None):
        if self.kind == "uplink":
            return f"uplink of {leaf_names[self.leaf]}"
        if self.kind == "link":
            return f"link {names[self.node]} {'<->' if self.both else '->'} {names[self.peer]}"
        if self.kind == "rank":
            return f"rank (local {self.rail}) on {names[self.node]}"
        return f"{self.kind} {names[self.node]}"


@dataclasses.dataclass
class Scenario:
    id: int
    kind: str             # clean, node, egress, ingress, link, rank or two
    nodes: int
    ranks_per_node: int
    layout: str           # shared or rails
    names: list
    subnet: str
    faults: list
    leaves: list = None       # two levels: the leaf of each node (None: one bridge)
    leaf_names: list = None   # the leaves' names in the --fabric file
    fabric: bool = True       # two levels: give fabricmap the --fabric file

    def describe(self):
        what = ", ".join(f"{f.label(self.names, self.leaf_names)} {100 * f.throttle:.1f}%"
                         for f in self.faults) or "clean"
        shape = self.layout
        if self.leaves:
            sizes = "+".join(str(self.leaves.count(k)) for k in range(len(self.leaf_names)))
            shape = f"leaves {sizes}{'' if self.fabric else ' without --fabric'}"
        return f"#{self.id} {self.kind}: {self.nodes}x{self.ranks_per_node} {shape}, {what}"


def as_dict(x):
    return dataclasses.asdict(x)


def scenario_from_dict(d):
    d = dict(d)
    d["faults"] = [Fault(**f) for f in d["faults"]]
    return Scenario(**d)


# ---- injecting -----------------------------------------------------------------------------------

def tc_rate(line_rate, throttle):
    """tbf's rate (bit/s) and bucket (bytes) for `throttle` of `line_rate` (B/s) taken away: a
    bucket of 1 ms at that rate, at least 4 KB (what shared/ENVIRONMENT.md checked); with tbf's
    default 4 KB a rate near the line rate would be tbf's own limit."""
    rate = max(8000, int((1.0 - throttle) * line_rate * 8))
    burst = max(4096, rate // 8 // 1000)
    return rate, burst


def measure_line_rate(c, reps=3):
    """The clean rate of one TCP stream from node 0 to node 1 (with leaves, to the first node on
    another leaf: across the spine) on the interface MPI uses: the median of `reps` streams of
    LINE_PROBE_BYTES (B/s)."""
    dst = next((i for i in range(1, c.nodes) if c.leaf_of[i] != c.leaf_of[0]), 1) if c.leaf_of else 1
    return statistics.median(c.tcp_rate(0, dst, LINE_PROBE_BYTES, dev=c.devs[0]) for _ in range(reps))


def inject(c, fault, line_rate):
    """Applies one fault; returns the tc settings used."""
    rate, burst = tc_rate(line_rate, fault.throttle)
    r, b = f"{rate}bit", str(burst)
    if fault.kind == "node":
        c.limit_node(fault.node, r, "both", burst=b)
    elif fault.kind == "node_egress":
        c.limit_node(fault.node, r, "egress", burst=b)
    elif fault.kind == "node_ingress":
        c.limit_node(fault.node, r, "ingress", burst=b)
    elif fault.kind == "link":
        c.limit_link(fault.node, fault.peer, r, burst=b)
        if fault.both:
            c.limit_link(fault.peer, fault.node, r, burst=b)
    elif fault.kind == "rank":
        if not c.rails:
            raise ValueError("a rank fault needs the rails layout")
        c.limit_rail(fault.node, fault.rail, r, "both", burst=b)
    elif fault.kind == "uplink":
        c.limit_uplink(fault.leaf, r, "both", burst=b)
    else:
        raise ValueError(f"unknown fault kind {fault.kind!r}")
    return {"rate_bit_s": rate, "burst_bytes": burst}


def probe_fault(c, fault, line_rate):
    """One TCP stream along a slowed path, as a share of the line rate: how much tbf took away
    (at rates near the line rate tbf takes more than asked). Small transfers at low rates."""
    rate, _ = tc_rate(line_rate, fault.throttle)
    nbytes = int(min(16 << 20, max(256 << 10, rate / 8 * 0.3)))
    touched = fault.nodes(c.leaf_of)
    other = next(n for n in range(c.nodes) if n not in touched)
    if fault.kind == "uplink":
        return c.tcp_rate(min(touched), other, nbytes) / line_rate
    src, dst, dev = {
        "node": (fault.node, other, c.devs[0]),
        "node_egress": (fault.node, other, c.devs[0]),
        "node_ingress": (other, fault.node, c.devs[0]),
        "link": (fault.node, fault.peer, c.devs[0]),
        "rank": (fault.node, other, f"rail{fault.rail}"),
    }[fault.kind]
    return c.tcp_rate(src, dst, nbytes, dev=dev) / line_rate


# ---- reading the results file ----------------------------------------------------------------

def _value(v):
    if isinstance(v, bytes):
        return v.decode()
    return v.item() if hasattr(v, "item") else v


def read_results(path):
    """What scoring needs from a results file: findings (with `has_confidence`), topology, the
    node and rank bandwidth matrices."""
    import h5py
    out = {}
    with h5py.File(path, "r") as f:
        def table(name):
            if name not in f:
                return [], ()
            d = f[name][:]
            return [{k: _value(row[k]) for k in d.dtype.names} for row in d], d.dtype.names

        out["findings"], cols = table("findings")
        out["has_confidence"] = "confidence" in cols
        out["nodes"], _ = table("topology/nodes")
        out["ranks"], _ = table("topology/ranks")
        for key, name in (("node_bw", "matrix/node/bw"), ("rank_bw", "matrix/rank/bw_unidir"),
                          ("node_latency", "matrix/node/latency")):
            out[key] = f[name][:].tolist() if name in f else None
        out["complete"] = bool(_value(f.attrs["complete"])) if "complete" in f.attrs else False
    return out


# ---- truth and scoring ---------------------------------------------------------------------------

def culprits_of(scenario, results):
    """The injected culprits in the file's numbering (nodes by hostname, ranks by node and local
    rank): [{kind, node_a, node_b, rank, both, label}]."""
    index = {n["hostname"]: n["node"] for n in results["nodes"]}
    node_of = [index[name] for name in scenario.names]
    rank_of = {(r["node"], r["local_rank"]): r["rank"] for r in results["ranks"]}
    out = []
    for f in scenario.faults:
        c = {"kind": f.kind, "node_a": node_of[f.node] if f.node >= 0 else -1, "node_b": -1, "rank": -1,
             "both": False, "label": f.label(scenario.names, scenario.leaf_names)}
        if f.kind == "uplink":
            c["switch"] = scenario.leaf_names[f.leaf]
            c["below"] = sorted(node_of[i] for i in f.nodes(scenario.leaves))
        if f.kind == "link":
            c["node_b"], c["both"] = node_of[f.peer], f.both
            if f.both and c["node_a"] > c["node_b"]:
                c["node_a"], c["node_b"] = c["node_b"], c["node_a"]
        if f.kind == "rank":
            c["rank"] = rank_of[(node_of[f.node], f.rail)]
        out.append(c)
    return out


def _switch_of(subject):
    """The switch a switch rule's finding names: its subject's first word ("leaf1 port 7 -> ...",
    "leaf1 (0x...)")."""
    return str(subject).split(" ", 1)[0]


def _parts(kind, a, b, rank, both, switch=None):
    """The parts a culprit or finding blames: ('out'|'in', node), ('edge', a, b), ('rank', r),
    ('uplink', switch), ('switch', switch)."""
    if kind in ("uplink", "switch_port"):
        return {("uplink", switch)}
    if kind == "switch":
        return {("switch", switch)}
    if kind == "node":
        return {("out", a), ("in", a)}
    if kind == "node_egress":
        return {("out", a)}
    if kind == "node_ingress":
        return {("in", a)}
    if kind == "link":
        return {("edge", a, b), ("edge", b, a)} if both else {("edge", a, b)}
    if kind == "rank":
        return {("rank", rank)}
    return {(kind, a, b, rank)}  # intra_node, hang, ...: a part no fault of ours is


def _culprit_parts(c):
    return _parts(c["kind"], c["node_a"], c["node_b"], c["rank"], c["both"], c.get("switch"))


def _finding_parts(f):
    both = f["kind"] == "link" and "<->" in str(f["subject"])
    switch = _switch_of(f["subject"]) if f["kind"] in FABRIC_KINDS else None
    return _parts(f["kind"], f["node_a"], f["node_b"], f["rank"], both, switch)


def _candidates(f):
    """The name range of a switch finding that names candidates, "one of 8 spines (spine00 ..
    spine07)" (the cable rule's spine: which one is the routing's), else None."""
    subject = str(f["subject"])
    if f["kind"] != "switch" or not subject.startswith("one of ") or " .. " not in subject:
        return None
    first, last = subject[subject.index("(") + 1:subject.rindex(")")].split(" .. ")
    return first, last


def _matches(f, c):
    if c["kind"] == "uplink":  # one cable up is a switch_port finding, several an uplink one
        return f["kind"] in ("uplink", "switch_port") and _switch_of(f["subject"]) == c["switch"]
    if c["kind"] == "switch":  # a whole switch (bench/sim_scenarios.py's leaf and spine faults)
        return f["kind"] == "switch" and _switch_of(f["subject"]) == c["switch"]
    if f["kind"] != c["kind"]:
        return False
    if c["kind"] == "rank":
        return f["rank"] == c["rank"]
    if c["kind"] == "link":
        both = "<->" in str(f["subject"])
        if both != c["both"]:
            return False
        if both:
            return {f["node_a"], f["node_b"]} == {c["node_a"], c["node_b"]}
        return (f["node_a"], f["node_b"]) == (c["node_a"], c["node_b"])
    return f["node_a"] == c["node_a"] and f["node_b"] in (-1, c["node_b"])


def score(culprits, findings):
    """Judges the warning/error findings against the culprits (see the module's docstring).
    Returns {exact, false_blame, missed, findings: [{..., verdict}], culprits: [{..., status}]}."""
    serious = [dict(f) for f in findings if f["severity"] in SERIOUS]
    guilty = set()
    near = set()  # the switch whose uplink is slowed: naming it is partial
    nodes_involved = set()
    for c in culprits:
        guilty |= _culprit_parts(c)
        near |= {("switch", c["switch"])} if c["kind"] == "uplink" else set()
        nodes_involved |= {n for n in (c["node_a"], c["node_b"]) if n >= 0}
    blamed = set()
    for f in serious:
        if f["kind"] in LATENCY_KINDS:
            # no latency fault is planted (no netem here); a slowed part may show it, so latency
            # on a node or link of a culprit is partial, elsewhere false
            ends = {n for n in (f["node_a"], f["node_b"]) if n >= 0}
            f["verdict"] = "partial" if ends & nodes_involved else "false"
            continue
        span = _candidates(f)
        if span is not None:  # one of several spines: partial when the culprit is among them
            inside = [c for c in culprits if c["kind"] == "switch" and span[0] <= c["switch"] <= span[1]]
            f["verdict"] = "partial" if inside else "false"
            for c in inside:
                blamed |= _culprit_parts(c)
            continue
        parts = _finding_parts(f)
        if any(_matches(f, c) for c in culprits):
            f["verdict"] = "right"
        elif parts <= guilty | near:
            f["verdict"] = "partial"
        else:
            f["verdict"] = "false"
        blamed |= parts & guilty
    judged = []
    for c in culprits:
        c = dict(c)
        parts = _culprit_parts(c)
        if any(f["verdict"] == "right" and _matches(f, c) for f in serious):
            c["status"] = "named"
        elif parts <= blamed:
            c["status"] = "covered"  # by findings of other kinds (egress + ingress for a node)
        else:
            c["status"] = "missed"
        judged.append(c)
    used = []
    exact = len(serious) == len(culprits)
    for c in culprits:  # one finding per culprit
        hit = next((i for i, f in enumerate(serious) if i not in used and _matches(f, c)), None)
        if hit is None:
            exact = False
        else:
            used.append(hit)
    return {"exact": exact,
            "false_blame": any(f["verdict"] == "false" for f in serious),
            "missed": any(c["status"] == "missed" for c in judged),
            "findings": serious, "culprits": judged}


def _slows_node_cell(c, x, y):
    """Whether culprit c slows the node matrix cell x -> y (a rank slows its node's cells)."""
    a, b = c["node_a"], c["node_b"]
    return {"uplink": lambda: (x in c["below"]) != (y in c["below"]),
            "node": lambda: a in (x, y), "node_egress": lambda: x == a, "node_ingress": lambda: y == a,
            "link": lambda: (x, y) == (a, b) or (c["both"] and (x, y) == (b, a)),
            "rank": lambda: a in (x, y)}[c["kind"]]()


def observed_effects(culprits, results):
    """Per culprit, the median bandwidth of the cells it slows over the median of the cells no
    culprit slows (node matrix; for a rank, the inter-node cells of the rank matrix): how visible
    it was in the measurement (1: not at all). None where the matrix lacks such cells."""
    def med(v):
        v = [x for x in v if x is not None and math.isfinite(x)]
        return statistics.median(v) if v else None

    nb, rb = results.get("node_bw"), results.get("rank_bw")
    node_of_rank = {r["rank"]: r["node"] for r in results["ranks"]}
    out = []
    for c in culprits:
        m = rb if c["kind"] == "rank" else nb
        if m is None:
            out.append(None)
            continue
        n = len(m)
        if c["kind"] == "rank":
            cells = [(x, y) for x in range(n) for y in range(n) if node_of_rank.get(x) != node_of_rank.get(y)]
            hits = lambda d, x, y: (d["rank"] in (x, y) if d["kind"] == "rank"  # noqa: E731
                                    else _slows_node_cell(d, node_of_rank[x], node_of_rank[y]))
        else:
            cells = [(x, y) for x in range(n) for y in range(n) if x != y]
            hits = lambda d, x, y: _slows_node_cell(d, x, y)  # noqa: E731
        hit = med([m[x][y] for x, y in cells if hits(c, x, y)])
        base = med([m[x][y] for x, y in cells if not any(hits(d, x, y) for d in culprits)])
        out.append(hit / base if hit is not None and base else None)
    return out


# ---- running one scenario ------------------------------------------------------------------------

def shape_links(c, line_rate):
    """Gives every node's interfaces `line_rate` (B/s) both ways (tbf, as a fault's rates): the
    emulated fabric's links then have that line rate, below what the host's CPUs move through a
    veth, so a healthy pair measures the link rather than the CPU scheduler. A fault injected
    afterwards replaces its part's rate (or, for a link, runs under the node's)."""
    rate, burst = tc_rate(line_rate, 0.0)
    for node in range(c.nodes):
        c.limit_node(node, f"{rate}bit", "both", burst=str(burst))


def run_scenario(scenario, fabricmap, run_args=None, keep_dir=None, timeout=180, line_rate=None, log=print,
                 shaped=False):
    """Builds the scenario's cluster, measures its line rate (unless given, B/s), plants the
    faults, runs fabricmap and scores the file. Returns a JSON-able dict of everything.
    `shaped`: every link is shaped to `line_rate` first (shape_links)."""
    run_args = list(DEFAULT_RUN_ARGS if run_args is None else run_args)
    start = time.monotonic()
    rec = {"scenario": as_dict(scenario), "run_args": list(run_args)}  # without the --fabric file
    rails = scenario.ranks_per_node if scenario.layout == "rails" else 0
    with cluster.Cluster(nodes=scenario.nodes, names=scenario.names, subnet=scenario.subnet,
                         prefix=PREFIX, rails=rails, leaves=scenario.leaves) as c:
        if scenario.leaves and scenario.fabric:
            fabric_file = c.path("fabric.txt")
            rec["fabric_file"] = c.fabric_text(scenario.leaf_names)
            with open(fabric_file, "w") as f:
                f.write(rec["fabric_file"])
            run_args += ["--fabric", fabric_file]
        rec["line_rate_B_s"] = line_rate or measure_line_rate(c)
        if shaped:
            shape_links(c, rec["line_rate_B_s"])
            rec["shaped"] = True
        rec["tc"] = [inject(c, f, rec["line_rate_B_s"]) for f in scenario.faults]
        rec["probe_share"] = [probe_fault(c, f, rec["line_rate_B_s"]) for f in scenario.faults]
        out = c.path(f"scenario-{scenario.id}.h5")
        r = c.mpirun([fabricmap, "run"] + run_args + ["-o", out], ranks_per_node=scenario.ranks_per_node,
                     timeout=timeout)
        rec.update(returncode=r.returncode, timed_out=r.timed_out, run_seconds=round(r.elapsed, 1))
        if r.returncode != 0 or not os.path.exists(out):
            rec["status"] = "failed"
            rec["output_tail"] = (r.stdout[-2000:] + "\n" + r.stderr[-2000:]).strip()
            log(f"  {scenario.describe()}: fabricmap exit {r.returncode}"
                f"{' (timed out)' if r.timed_out else ''}\n{rec['output_tail']}")
        else:
            results = read_results(out)
            if keep_dir:
                os.makedirs(keep_dir, exist_ok=True)
                shutil.copy(out, os.path.join(keep_dir, os.path.basename(out)))
            culprits = culprits_of(scenario, results)
            judged = score(culprits, results["findings"])
            for cul, eff in zip(judged["culprits"], observed_effects(culprits, results)):
                cul["observed"] = eff
            rec.update(status="ok", has_confidence=results["has_confidence"], complete=results["complete"],
                       all_findings=results["findings"], node_bw=results["node_bw"],
                       rank_bw=results["rank_bw"], ranks=results["ranks"],
                       node_names=[n["hostname"] for n in results["nodes"]], **judged)
    rec["seconds"] = round(time.monotonic() - start, 1)
    return rec


def verdict_line(rec):
    """One line: the scenario, what was right or wrong, what was named."""
    sc = scenario_from_dict(rec["scenario"])
    if rec["status"] != "ok":
        why = rec.get("error") or f"exit {rec['returncode']}"
        return f"{sc.describe()}: FAILED ({why})"
    flags = "exact" if rec["exact"] else ", ".join(
        x for x, on in (("false blame", rec["false_blame"]), ("missed", rec["missed"])) if on) or "inexact"
    named = "; ".join(f"{f['severity']} {f['kind']} {f['subject']} [{f['verdict']}"
                      + (f" {f['confidence']:.2f}" if rec["has_confidence"] else "") + "]"
                      for f in rec["findings"]) or "none"
    seen = ", ".join("n/a" if c.get("observed") is None else f"{c['observed']:.2f}x" for c in rec["culprits"])
    return (f"{sc.describe()}: {flags} in {rec['seconds']:.0f}s"
            + (f" (observed {seen})" if seen else "") + f"; named: {named}")


# ---- summaries -----------------------------------------------------------------------------------

def _mean(v):
    return f"{statistics.fmean(v):.2f}" if v else "n/a"


def summary_rows(records, key, order=()):
    """Table rows grouped by key(record) (in `order` first): runs, failed, exact, false blame,
    missed, mean confidence of right and of wrong (partial or false) findings; then the total."""
    groups = {}
    for rec in records:
        groups.setdefault(key(rec), []).append(rec)
    names = [k for k in order if k in groups] + [k for k in groups if k not in order]
    rows = []
    for name, recs in [(k, groups[k]) for k in names] + [("total", records)]:
        ok = [r for r in recs if r["status"] == "ok"]
        conf = all(r["has_confidence"] for r in ok) and ok
        right = [f["confidence"] for r in ok for f in r["findings"] if f["verdict"] == "right"] if conf else []
        wrong = [f["confidence"] for r in ok for f in r["findings"] if f["verdict"] != "right"] if conf else []
        rows.append([name, len(recs), len(recs) - len(ok), sum(r["exact"] for r in ok),
                     sum(r["false_blame"] for r in ok), sum(r["missed"] for r in ok),
                     _mean(right), _mean(wrong)])
    return rows


def format_table(header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda r: "  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w)  # noqa: E731
                               for i, (x, w) in enumerate(zip(r, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


SUMMARY_HEADER = ["scenario", "runs", "failed", "exact", "false blame", "missed", "conf right", "conf wrong"]


def fault_rows(records, band):
    """Per injected fault, grouped by band(throttle, observed) -> (sort key, label): faults, named
    exactly, covered by findings of other kinds, missed, median observed effect."""
    groups = {}
    for rec in records:
        if rec["status"] != "ok":
            continue
        for f, c in zip(rec["scenario"]["faults"], rec["culprits"]):
            groups.setdefault(band(f["throttle"], c.get("observed")), []).append(c)
    rows = []
    for key in sorted(groups):
        name, cs = key[1], groups[key]
        seen = [c["observed"] for c in cs if c.get("observed") is not None]
        rows.append([name, len(cs), sum(c["status"] == "named" for c in cs),
                     sum(c["status"] == "covered" for c in cs), sum(c["status"] == "missed" for c in cs),
                     f"{statistics.median(seen):.2f}x" if seen else "n/a"])
    return rows


FAULT_HEADER = ["faults by", "faults", "named", "other kinds", "missed", "observed (median)"]


def throttle_band(throttle, _observed):
    for i, (lo, hi) in enumerate(((0.2, 0.8), (0.8, 0.95), (0.95, 0.99))):
        if throttle < hi:
            return i, f"throttle {100 * lo:.0f}-{100 * hi:.0f}%"
    return 3, "throttle 99%+"


def observed_band(_throttle, observed):
    """How slow the fault's cells measured, over the untouched cells' median."""
    if observed is None:
        return 9, "observed n/a"
    for i, (hi, name) in enumerate(((0.1, "observed < 0.1x"), (0.2, "observed 0.1-0.2x"),
                                    (0.5, "observed 0.2-0.5x"), (0.9, "observed 0.5-0.9x"))):
        if observed < hi:
            return i, name
    return 4, "observed >= 0.9x"
