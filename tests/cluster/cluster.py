#!/usr/bin/env python3
"""An emulated multi-node cluster on one Linux host, for tests: one network namespace per node on a
bridge, own hostnames, an rsh agent for Open MPI's mpirun, and tc rate limits. Root only; stdlib only.

    with Cluster(nodes=4) as c:
        r = c.mpirun(["fabricmap", "run", "-o", c.path("out.h5")], ranks_per_node=2)
        c.limit_node(2, rate="200mbit")

Everything the cluster creates (namespaces, bridge, veths, /etc/netns entries, temp dir, processes
inside its namespaces) is removed on exit, when the body raises, on SIGTERM, and by a detached
reaper process when this process is killed outright (ctest kills a timed-out test with SIGKILL).
See README.md in this folder. `python3 cluster.py cleanup [--all]` removes leftovers by hand.
"""
import dataclasses
import ipaddress
import itertools
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

PREFIX = "fmc-"  # every namespace and temp dir this harness creates starts with it
SUBNET = ipaddress.ip_network("10.77.0.0/24")
NETNS_ETC = "/etc/netns"
NETNS_RUN = "/run/netns"
TBF_BURST = "32kbit"  # the tbf settings shared/ENVIRONMENT.md checked on this kernel
TBF_LATENCY = "50ms"
# An htb class that never limits: above what a veth pair moves here (~2.4 GB/s), with an explicit
# burst and quantum because tc's computed ones overflow (burst 0b) or warn at such rates.
HTB_OPEN = ["rate", "100gbit", "burst", "1mb", "cburst", "1mb", "quantum", "65536"]

_instances = itertools.count(1)  # numbers the clusters of this process: names stay unique


def skip_reason():
    """Why the harness cannot run on this machine, or None when it can."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, bridge, tc)"
    for tool in ("ip", "tc", "unshare", "hostname", "mpirun"):
        if shutil.which(tool) is None:
            return f"'{tool}' not found on PATH"
    name = f"{PREFIX}{os.getpid()}-probe"
    p = _run(["ip", "netns", "add", name], check=False)
    if p.returncode != 0:
        return "cannot create a network namespace: " + p.stderr.strip()
    try:
        p = _run(["ip", "netns", "exec", name, "unshare", "--uts", "hostname", "probe"], check=False)
        if p.returncode != 0:
            return "cannot set a hostname in a UTS namespace: " + p.stderr.strip()
        p = _run(["ip", "-n", name, "link", "add", "br0", "type", "bridge"], check=False)
        if p.returncode != 0:
            return "cannot create a Linux bridge: " + p.stderr.strip()
    finally:
        _run(["ip", "netns", "delete", name], check=False)
    return None


def _run(argv, check=True, timeout=60):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if check and p.returncode != 0:
        raise RuntimeError(f"cluster: '{shlex.join(argv)}' failed ({p.returncode}): {p.stderr.strip()}")
    return p


def _netns_list():
    try:
        return sorted(os.listdir(NETNS_RUN))
    except FileNotFoundError:
        return []


def _netns_pids(ns):
    p = _run(["ip", "netns", "pids", ns], check=False)
    return {int(x) for x in p.stdout.split()} if p.returncode == 0 else set()


def _kill_all(pids, grace=3.0):
    """SIGTERM, then SIGKILL what is still there after `grace` seconds."""
    pids = {p for p in pids if p != os.getpid()}
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while pids and time.monotonic() < deadline:
            pids = {p for p in pids if os.path.exists(f"/proc/{p}")
                    and not _is_zombie(p)}
            time.sleep(0.05)
        if not pids:
            return


def _is_zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True


def destroy(namespaces, tmpdir=None, etc_root=False):
    """Removes namespaces (after ending every process inside them; their veths and bridge go with
    them), their /etc/netns entries, /etc/netns itself when etc_root and it is empty, and tmpdir.
    Idempotent; never raises for what is already gone."""
    present = [ns for ns in namespaces if os.path.exists(os.path.join(NETNS_RUN, ns))]
    pids = set()
    for ns in present:
        pids |= _netns_pids(ns)
    _kill_all(pids)
    for ns in present:
        _run(["ip", "netns", "delete", ns], check=False)
    for ns in namespaces:
        shutil.rmtree(os.path.join(NETNS_ETC, ns), ignore_errors=True)
    if etc_root:
        try:
            os.rmdir(NETNS_ETC)  # fails while another cluster still has entries there
        except OSError:
            pass
    if tmpdir:
        shutil.rmtree(tmpdir, ignore_errors=True)


def _owner_pid(name):
    """The pid embedded in a harness name `fmc-<pid>-...`, or None."""
    if not name.startswith(PREFIX):
        return None
    head = name[len(PREFIX):].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def cleanup_stale(everything=False):
    """Removes harness namespaces, /etc/netns entries and temp dirs whose owning process is gone
    (all of them with everything=True). Returns the names removed."""
    def stale(name):
        pid = _owner_pid(name)
        return pid is not None and (everything or not os.path.exists(f"/proc/{pid}"))

    names = set(n for n in _netns_list() if stale(n))
    if os.path.isdir(NETNS_ETC):
        names |= set(n for n in os.listdir(NETNS_ETC) if stale(n))
    tmp = tempfile.gettempdir()
    dirs = [os.path.join(tmp, n) for n in os.listdir(tmp) if stale(n)]
    destroy(sorted(names))
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
    return sorted(names) + dirs


@dataclasses.dataclass
class RunResult:
    """What subprocess.CompletedProcess holds, plus the wall time and whether it timed out."""
    args: list
    returncode: int
    stdout: str
    stderr: str
    elapsed: float
    timed_out: bool = False


class Cluster:
    """`nodes` emulated hosts node0..node<N-1>, node i at 10.77.0.(i+1) on eth0.

    Attributes: names (hostnames), namespaces, fabric (the bridge's namespace), tmp (a directory
    every node sees; results files go here), agent (the rsh agent script)."""

    def __init__(self, nodes=4, reap=True):
        if not 1 <= nodes <= 200:
            raise ValueError("nodes must be 1..200")
        self.nodes = nodes
        self.tag = f"{PREFIX}{os.getpid()}-{next(_instances)}"
        self.fabric = f"{self.tag}-fabric"
        self.names = [f"node{i}" for i in range(nodes)]
        self.namespaces = [f"{self.tag}-{n}" for n in self.names]
        self.tmp = None
        self.agent = None
        self._reap = reap
        self._reaper_fd = None
        self._made_etc = False  # whether this cluster created /etc/netns
        self._old_handlers = {}
        self._limits = {}  # node -> {"egress": rate|None, "ingress": rate|None, "links": {dst: rate}}

    # ---- lifetime -------------------------------------------------------------------------------

    def __enter__(self):
        cleanup_stale()
        self._install_signal_handlers()
        try:
            self._made_etc = not os.path.exists(NETNS_ETC)
            self.tmp = tempfile.mkdtemp(prefix=self.tag + "-")
            os.chmod(self.tmp, 0o755)
            if self._reap:
                self._start_reaper()
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        keep = os.environ.get("FABRICMAP_CLUSTER_KEEP_TMP") == "1"
        destroy(self._all_namespaces(), None if keep else self.tmp, self._made_etc)
        if keep and self.tmp:
            print(f"cluster: kept {self.tmp}", file=sys.stderr)
        if self._reaper_fd is not None:
            try:
                os.write(self._reaper_fd, b"q")  # done: the reaper exits without touching anything
            except OSError:
                pass
            os.close(self._reaper_fd)
            self._reaper_fd = None
        self._restore_signal_handlers()

    def _all_namespaces(self):
        return self.namespaces + [self.fabric]

    def _install_signal_handlers(self):
        def on_signal(signum, _frame):
            raise SystemExit(128 + signum)  # unwinds through __exit__, which tears down

        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGHUP):
            self._old_handlers[sig] = signal.signal(sig, on_signal)

    def _restore_signal_handlers(self):
        for sig, old in self._old_handlers.items():
            signal.signal(sig, old)
        self._old_handlers = {}

    def _start_reaper(self):
        """A detached process (double fork: ctest's timeout kill walks the test's process tree)
        that tears the cluster down if this process dies without doing it: it waits for EOF on a
        pipe whose only writer is this process."""
        r, w = os.pipe()
        names, tmp, etc_root = self._all_namespaces(), self.tmp, self._made_etc
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                if os.fork() != 0:
                    os._exit(0)
                for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                    signal.signal(sig, signal.SIG_IGN)
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)  # never hold ctest's output pipe open
                os.closerange(3, r)
                os.closerange(r + 1, 65536)
                os.chdir("/")
                while True:
                    try:
                        data = os.read(r, 1)
                        break
                    except InterruptedError:
                        continue
                if data == b"":
                    destroy(names, tmp, etc_root)
            finally:
                os._exit(0)
        os.close(r)
        os.waitpid(pid, 0)
        self._reaper_fd = w

    def _build(self):
        fab = self.fabric
        _run(["ip", "netns", "add", fab])
        _run(["ip", "-n", fab, "link", "set", "lo", "up"])
        _run(["ip", "-n", fab, "link", "add", "br0", "type", "bridge"])
        _run(["ip", "-n", fab, "link", "set", "br0", "up"])
        hosts = "127.0.0.1 localhost\n" + "".join(
            f"{self.ip(i)} {name}\n" for i, name in enumerate(self.names))
        for i, ns in enumerate(self.namespaces):
            _run(["ip", "netns", "add", ns])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"])
            _run(["ip", "-n", fab, "link", "add", self.bridge_port(i), "type", "veth",
                  "peer", "name", "eth0", "netns", ns])
            _run(["ip", "-n", fab, "link", "set", self.bridge_port(i), "master", "br0", "up"])
            _run(["ip", "-n", ns, "addr", "add", f"{self.ip(i)}/{SUBNET.prefixlen}", "dev", "eth0"])
            _run(["ip", "-n", ns, "link", "set", "eth0", "up"])
            etc = os.path.join(NETNS_ETC, ns)
            os.makedirs(etc, exist_ok=True)
            with open(os.path.join(etc, "hosts"), "w") as f:
                f.write(hosts)
        self.agent = os.path.join(self.tmp, "rsh-agent")
        with open(self.agent, "w") as f:
            f.write(self._agent_script())
        os.chmod(self.agent, 0o755)

    def _agent_script(self):
        cases = "".join(f"  {name}|{self.ip(i)}) ns={ns} name={name} ;;\n"
                        for i, (name, ns) in enumerate(zip(self.names, self.namespaces)))
        return (
            "#!/bin/sh\n"
            "# Open MPI rsh agent for an emulated cluster: <host> <command...>. Runs the command in\n"
            "# the host's network namespace with its hostname, joined for a shell as ssh does.\n"
            "host=$1; shift\n"
            "case \"$host\" in\n"
            f"{cases}"
            "  *) echo \"rsh-agent: unknown host '$host'\" >&2; exit 255 ;;\n"
            "esac\n"
            "exec ip netns exec \"$ns\" unshare --uts sh -c \"hostname $name && $*\"\n")

    # ---- naming ---------------------------------------------------------------------------------

    def ip(self, node):
        return str(SUBNET.network_address + node + 1)

    def bridge_port(self, node):
        """The bridge-side veth of `node`, inside the fabric namespace."""
        return f"v{node}"

    def path(self, *parts):
        """An absolute path in the shared temp dir (every node sees the same file system)."""
        return os.path.join(self.tmp, *parts)

    def node_argv(self, node, argv):
        """argv wrapped to run inside `node`'s namespace with its hostname."""
        return ["ip", "netns", "exec", self.namespaces[node], "unshare", "--uts", "sh", "-c",
                f'hostname {self.names[node]} && exec "$@"', "sh"] + list(argv)

    def hostfile(self, ranks_per_node):
        path = self.path(f"hostfile-{ranks_per_node}")
        with open(path, "w") as f:
            f.write("".join(f"{name} slots={ranks_per_node}\n" for name in self.names))
        return path

    # ---- running --------------------------------------------------------------------------------

    def run(self, node, argv, timeout=60, check=False):
        """Runs a command on one node; returns a RunResult."""
        return self._spawn(self.node_argv(node, argv), timeout, check)

    def popen(self, node, argv, **kwargs):
        """Starts a command on one node (a server for a probe, say); the caller waits for it."""
        return subprocess.Popen(self.node_argv(node, argv), **kwargs)

    def mpirun_argv(self, argv, ranks_per_node=1, mca=None, env=None):
        """The full mpirun command line (run inside node0). mca: {param: value} added to, or
        replacing, the defaults below (value None drops a default); env: {VAR: value} for -x."""
        params = {
            "plm_rsh_agent": self.agent,
            # mpirun starts every daemon itself; no daemon starts others through the agent
            "plm_rsh_no_tree_spawn": "1",
            "oob_tcp_if_include": str(SUBNET),
            "btl_tcp_if_include": str(SUBNET),
            "btl": "self,vader,tcp",
            # Every emulated node shares this machine's cores, but Open MPI sees K slots per host
            # and so does not know it is oversubscribed: make waiting ranks yield, as it would on
            # one oversubscribed host (busy-polling ranks ran world all_reduce ~20x slower here).
            "mpi_yield_when_idle": "1",
            # session directories in the cluster's temp dir, so a killed run leaves nothing in /tmp
            "orte_tmpdir_base": self.tmp,
        }
        params.update(mca or {})
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
               "--hostfile", self.hostfile(ranks_per_node), "-np", str(ranks_per_node * self.nodes)]
        for k, v in params.items():
            if v is not None:
                cmd += ["--mca", k, str(v)]
        for k, v in (env or {}).items():
            cmd += ["-x", f"{k}={v}"]
        return cmd + list(argv)

    def mpirun(self, argv, ranks_per_node=1, mca=None, env=None, timeout=240, check=False):
        """Runs an MPI job on every node (ranks_per_node ranks each, rank r on node r // ranks_per_node);
        returns a RunResult. A job past `timeout` is ended (mpirun, then anything left in the
        nodes) and reported with timed_out=True and returncode 124."""
        return self._spawn(self.node_argv(0, self.mpirun_argv(argv, ranks_per_node, mca, env)),
                           timeout, check)

    def _spawn(self, argv, timeout, check):
        start = time.monotonic()
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        timed_out = False
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            p.terminate()  # mpirun ends its daemons and ranks on SIGTERM
            try:
                out, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
            self.kill_node_processes()  # whatever mpirun left behind
        except BaseException:  # SIGTERM (as SystemExit), Ctrl-C: end the job before unwinding
            p.kill()
            p.wait()
            self.kill_node_processes()
            raise
        r = RunResult(argv, 124 if timed_out else p.returncode, out, err,
                      time.monotonic() - start, timed_out)
        if check and r.returncode != 0:
            raise RuntimeError(f"cluster: exit {r.returncode} from {shlex.join(argv)}\n{r.stderr}")
        return r

    def kill_node_processes(self):
        """Ends every process left in the nodes' namespaces (daemons of a job that was killed)."""
        pids = set()
        for ns in self.namespaces:
            pids |= _netns_pids(ns)
        _kill_all(pids)

    # ---- rate limits ----------------------------------------------------------------------------

    def limit_node(self, node, rate="200mbit", direction="both"):
        """Limits what `node` sends (egress: tbf on its eth0), receives (ingress: tbf on its
        bridge-side veth), or both, to `rate` (tc syntax: 200mbit, 1gbit, ...)."""
        if direction not in ("both", "egress", "ingress"):
            raise ValueError(f"direction must be both, egress or ingress, not {direction!r}")
        state = self._limit_state(node)
        if direction in ("both", "egress"):
            state["egress"] = rate
            self._apply_egress(node)
        if direction in ("both", "ingress"):
            state["ingress"] = rate
            self._apply_ingress(node)

    def limit_link(self, src, dst, rate="200mbit"):
        """Limits only traffic from `src` to `dst` (htb on src's eth0; a u32 filter on dst's
        address picks the slow class, everything else goes through an unlimited default class)."""
        if src == dst:
            raise ValueError("a link joins two different nodes")
        self._check_node(dst)
        self._limit_state(src)["links"][dst] = rate
        self._apply_egress(src)

    def clear_limits(self):
        """Removes every rate limit."""
        for node in list(self._limits):
            self._limits[node] = {"egress": None, "ingress": None, "links": {}}
            self._apply_egress(node)
            self._apply_ingress(node)
        self._limits = {}

    def tc_show(self):
        """The qdiscs, classes and filters in place, for a failing test's log."""
        lines = []
        for i, ns in enumerate(self.namespaces):
            for what in ("qdisc", "class", "filter"):
                p = _run(["tc", "-n", ns, what, "show", "dev", "eth0"], check=False)
                lines += [f"{self.names[i]} eth0 {what}: {l}" for l in p.stdout.splitlines()]
            p = _run(["tc", "-n", self.fabric, "qdisc", "show", "dev", self.bridge_port(i)], check=False)
            lines += [f"{self.names[i]} bridge port qdisc: {l}" for l in p.stdout.splitlines()]
        return "\n".join(lines)

    def _check_node(self, node):
        if not 0 <= node < self.nodes:
            raise ValueError(f"node {node} out of range 0..{self.nodes - 1}")

    def _limit_state(self, node):
        self._check_node(node)
        return self._limits.setdefault(node, {"egress": None, "ingress": None, "links": {}})

    def _apply_egress(self, node):
        """Rebuilds eth0's root qdisc in `node` from its state: none, tbf (node limit only), or
        htb (per-link limits, with the node limit, if any, capping the whole root class)."""
        state = self._limit_state(node)
        tc = ["tc", "-n", self.namespaces[node]]
        _run(tc + ["qdisc", "del", "dev", "eth0", "root"], check=False)  # absent at first: fine
        if not state["links"]:
            if state["egress"]:
                _run(tc + ["qdisc", "add", "dev", "eth0", "root", "tbf", "rate", state["egress"],
                           "burst", TBF_BURST, "latency", TBF_LATENCY])
            return
        cap = ["rate", state["egress"], "burst", TBF_BURST, "cburst", TBF_BURST, "quantum", "1514"] \
            if state["egress"] else HTB_OPEN
        _run(tc + ["qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default", "10"])
        _run(tc + ["class", "add", "dev", "eth0", "parent", "1:", "classid", "1:1", "htb"] + cap)
        _run(tc + ["class", "add", "dev", "eth0", "parent", "1:1", "classid", "1:10", "htb"] + cap)
        for dst, rate in sorted(state["links"].items()):
            cls = f"1:{0x100 + dst:x}"  # 1:100 + dst (tc reads minors as hex)
            _run(tc + ["class", "add", "dev", "eth0", "parent", "1:1", "classid", cls, "htb",
                       "rate", rate, "ceil", rate, "burst", TBF_BURST, "cburst", TBF_BURST,
                       "quantum", "1514"])
            _run(tc + ["filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1",
                       "u32", "match", "ip", "dst", f"{self.ip(dst)}/32", "flowid", cls])

    def _apply_ingress(self, node):
        state = self._limit_state(node)
        tc = ["tc", "-n", self.fabric]
        port = self.bridge_port(node)
        _run(tc + ["qdisc", "del", "dev", port, "root"], check=False)
        if state["ingress"]:
            _run(tc + ["qdisc", "add", "dev", port, "root", "tbf", "rate", state["ingress"],
                       "burst", TBF_BURST, "latency", TBF_LATENCY])


def main(argv):
    """usage: cluster.py check | cleanup [--all] | up [NODES]
  check    says whether the harness can run here (exit 77 when not)
  cleanup  removes what crashed runs left (namespaces, /etc/netns entries, temp dirs);
           --all also what live runs own
  up       builds a cluster (default 4 nodes), prints how to use it, waits for Ctrl-C"""
    if argv[:1] == ["up"]:
        with Cluster(nodes=int(argv[1]) if len(argv) > 1 else 4) as c:
            print(f"nodes {', '.join(c.names)} at {c.ip(0)}..{c.ip(c.nodes - 1)}, files in {c.tmp}")
            print("a shell on node1:\n  " + shlex.join(c.node_argv(1, ["bash"])))
            print("an MPI job, 2 ranks per node:\n  "
                  + shlex.join(c.node_argv(0, c.mpirun_argv(["hostname"], ranks_per_node=2))))
            print("Ctrl-C tears it down.", flush=True)
            try:
                signal.pause()
            except KeyboardInterrupt:
                pass
        return 0
    if argv[:1] == ["cleanup"]:
        for name in cleanup_stale(everything="--all" in argv[1:]):
            print("removed", name)
        return 0
    if argv[:1] == ["check"]:
        reason = skip_reason()
        print(reason or "ok")
        return 77 if reason else 0
    print(main.__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
