#!/usr/bin/env python3
"""An emulated multi-node cluster on one Linux host, for tests: one network namespace per node on a
bridge, own hostnames, an rsh agent for Open MPI's mpirun, and tc rate limits. Root only; stdlib only.

    with Cluster(nodes=4) as c:
        r = c.mpirun(["fabricmap", "run", "-o", c.path("out.h5")], ranks_per_node=2)
        c.limit_node(2, rate="200mbit")

Node names, the subnet and the prefix of every name it creates can be chosen (`names=`, `subnet=`,
`prefix=`), and `rails=K` gives each node K more interfaces, one per local rank, each rail on its
own bridge and subnet, with each rank's MPI traffic bound to its rail (one NIC per GPU).
`leaves=[leaf of node 0, leaf of node 1, ...]` builds two levels instead of one bridge: each leaf
switch a bridge in its own namespace, its nodes on it, every leaf cabled by one veth pair to the
spine bridge (the fabric namespace); limit_uplink() slows a leaf's cable to the spine, and
fabric_text() is the cluster as a `--fabric` file.

Everything the cluster creates (namespaces, bridge, veths, /etc/netns entries, temp dir, processes
inside its namespaces) is removed on exit, when the body raises, on SIGTERM, and by a detached
reaper process when this process is killed outright (ctest kills a timed-out test with SIGKILL).
See README.md in this folder. `python3 cluster.py cleanup [--all]` removes leftovers by hand.
"""
import dataclasses
import ipaddress
import itertools
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

PREFIX = "fmc-"  # every namespace and temp dir this harness creates starts with it (by default)
SUBNET = ipaddress.ip_network("10.77.0.0/24")  # the default management network (eth0)
NETNS_ETC = "/etc/netns"
NETNS_RUN = "/run/netns"
TBF_BURST = "32kbit"  # the tbf settings shared/ENVIRONMENT.md checked on this kernel
TBF_LATENCY = "50ms"
# Every node's TCP congestion control, the first of these that a namespace may use (the kernel's
# tcp_allowed_congestion_control): a loss-based one rather than the host's default (bbr on some).
# bbr paces each connection by its own model of the path, which this host's scheduling delays
# move: healthy connections' cwnd ranged 20-280 segments, and one between two healthy emulated
# nodes ran at 0.2-0.6x of the line rate in all its samples and was blamed as a slow link (see
# README.md). tbf's deep queues drop nothing at these sizes, so a loss-based one grows to the rate.
TCP_CONGESTION = ("cubic", "reno")
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


def node_congestion():
    """The congestion control for the nodes' namespaces (TCP_CONGESTION), or None to keep the
    default where none of them is allowed."""
    try:
        with open("/proc/sys/net/ipv4/tcp_allowed_congestion_control") as f:
            allowed = f.read().split()
    except OSError:
        return None
    return next((cc for cc in TCP_CONGESTION if cc in allowed), None)


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


def _owner_pid(name, prefix=PREFIX):
    """The pid embedded in a harness name `<prefix><pid>-...`, or None."""
    if not name.startswith(prefix):
        return None
    head = name[len(prefix):].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def cleanup_stale(everything=False, prefix=PREFIX):
    """Removes harness namespaces, /etc/netns entries and temp dirs named `<prefix><pid>-...` whose
    owning process is gone (all of them with everything=True). Returns the names removed."""
    def stale(name):
        pid = _owner_pid(name, prefix)
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


_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,62}\Z")  # a hostname that is also safe in a shell
MAX_RAILS = 8

# A TCP probe: one stream of n bytes from a sender to a receiver, its rate in bytes/s (stdlib only,
# run with this Python inside the nodes).
PROBE_PORT = 5201
_RECEIVER = r"""
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(1)
print("listening", flush=True)
conn, _ = s.accept()
while conn.recv(1 << 20):
    pass
conn.sendall(b"k"); conn.close()
"""
_SENDER = r"""
import socket, sys, time
host, port, n, src = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
s = socket.create_connection((host, port), timeout=60, source_address=(src, 0) if src else None)
buf = b"x" * (1 << 20); t = time.monotonic(); left = n
while left > 0:
    left -= s.send(buf[:min(left, len(buf))])
s.shutdown(socket.SHUT_WR); s.recv(1)
print(n / (time.monotonic() - t))
"""


class Cluster:
    """`nodes` emulated hosts (node0..node<N-1> unless `names` says otherwise), node i at the
    (i+1)-th address of `subnet` (default 10.77.0.0/24) on eth0.

    `rails=K` (0..8): each node also gets interfaces rail0..rail<K-1>, rail k on its own bridge and
    subnet (the k+1-th block of the subnet's size after it: 10.77.1.0/24, 10.77.2.0/24, ...); the
    fabric namespace routes between rails, as a spine does, and each node sends from a rail address
    out of that rail (policy routing). mpirun then starts every rank through a wrapper that binds
    local rank r's MPI (TCP btl, UCX) traffic to rail r mod K; eth0 carries only Open MPI's own
    out-of-band traffic. Node and link limits then apply to the rails (a node's NICs), and
    limit_rail() slows one rank's path.

    `leaves` (a leaf index per node, 0..L-1, every leaf used; not with rails): two levels, each leaf
    a bridge in a namespace of its own (`<tag>-leafK`, bridge br0, the uplink `up0`), cabled to
    the spine bridge in the fabric namespace (port `dK`). The nodes stay on one subnet (the
    bridges switch, nothing routes), so MPI sees the same hosts; what crosses leaves crosses two
    more bridges and the leaves' uplinks, which limit_uplink() throttles.

    Attributes: names (hostnames), namespaces, fabric (the bridges' namespace; the spine with
    leaves), leaf_of and leaf_namespaces (with leaves), subnet, rail_subnets, devs (the interfaces that carry MPI traffic: eth0, or the rails), tmp (a
    directory every node sees; results files go here), agent (the rsh agent script)."""

    def __init__(self, nodes=4, reap=True, names=None, subnet=None, prefix=PREFIX, rails=0, leaves=None):
        if not 1 <= nodes <= 200:
            raise ValueError("nodes must be 1..200")
        if not 0 <= rails <= MAX_RAILS:
            raise ValueError(f"rails must be 0..{MAX_RAILS}")
        names = list(names) if names is not None else [f"node{i}" for i in range(nodes)]
        if len(names) != nodes or len(set(names)) != nodes or not all(_NAME.match(n) for n in names):
            raise ValueError(f"names must be {nodes} distinct hostnames (letters, digits, '-'): {names}")
        if not re.fullmatch(r"[a-z][a-z0-9]{1,7}-", prefix):
            raise ValueError(f"prefix must be 2-8 lower-case letters or digits and a '-': {prefix!r}")
        self.subnet = ipaddress.ip_network(subnet or SUBNET)
        if self.subnet.version != 4 or not self.subnet.is_private or self.subnet.num_addresses < nodes + 3:
            raise ValueError(f"subnet {self.subnet}: a private IPv4 network with room for {nodes} nodes")
        self.rail_subnets = [ipaddress.ip_network(
            (int(self.subnet.network_address) + (k + 1) * self.subnet.num_addresses, self.subnet.prefixlen))
            for k in range(rails)]
        if not all(r.is_private for r in self.rail_subnets):
            raise ValueError(f"the rail subnets after {self.subnet} leave the private range")
        self.leaf_of = list(leaves) if leaves is not None else []
        if leaves is not None and (len(self.leaf_of) != nodes or rails
                                   or sorted(set(self.leaf_of)) != list(range(max(self.leaf_of) + 1))):
            raise ValueError(f"leaves must give each of the {nodes} nodes a leaf 0..L-1, every leaf used, "
                             f"and no rails: {leaves}")
        taken = {"fabric"} | {f"leaf{k}" for k in range(max(self.leaf_of, default=-1) + 1)}
        if taken & set(names):
            raise ValueError(f"node names {sorted(taken & set(names))} are the harness's own namespaces' names")
        self.nodes = nodes
        self.rails = rails
        self.prefix = prefix
        self.tag = f"{prefix}{os.getpid()}-{next(_instances)}"
        self.fabric = f"{self.tag}-fabric"
        self.names = names
        self.namespaces = [f"{self.tag}-{n}" for n in self.names]
        self.leaf_namespaces = [f"{self.tag}-leaf{k}" for k in range(max(self.leaf_of, default=-1) + 1)]
        self.devs = [f"rail{k}" for k in range(rails)] if rails else ["eth0"]
        self.tmp = None
        self.agent = None
        self.rail_exec = None
        self._reap = reap
        self._reaper_fd = None
        self._made_etc = False  # whether this cluster created /etc/netns
        self._old_handlers = {}
        # (node, dev) -> {"egress": (rate, burst)|None, "ingress": (rate, burst)|None,
        #                 "links": {dst: (rate, burst)}}
        self._limits = {}
        self._uplink_limits = set()  # leaves whose uplink qdiscs are in place

    # ---- lifetime -------------------------------------------------------------------------------

    def __enter__(self):
        cleanup_stale(prefix=self.prefix)
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
        return self.namespaces + self.leaf_namespaces + [self.fabric]

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
        if self.rails:
            # the fabric namespace routes between the rails' bridges (a spine)
            self._sysctl(fab, {"net/ipv4/ip_forward": 1, "net/ipv4/conf/all/rp_filter": 0,
                               "net/ipv4/conf/default/rp_filter": 0})
            for k, net in enumerate(self.rail_subnets):
                br = self.rail_bridge(k)
                _run(["ip", "-n", fab, "link", "add", br, "type", "bridge"])
                _run(["ip", "-n", fab, "addr", "add", f"{self.rail_router(k)}/{net.prefixlen}", "dev", br])
                _run(["ip", "-n", fab, "link", "set", br, "up"])
        for k, ns in enumerate(self.leaf_namespaces):
            # a leaf switch: its bridge, and one cable up to the spine's bridge
            _run(["ip", "netns", "add", ns])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"])
            _run(["ip", "-n", ns, "link", "add", "br0", "type", "bridge"])
            _run(["ip", "-n", ns, "link", "set", "br0", "up"])
            _run(["ip", "-n", ns, "link", "add", "up0", "type", "veth", "peer", "name", f"d{k}", "netns", fab])
            _run(["ip", "-n", ns, "link", "set", "up0", "master", "br0", "up"])
            _run(["ip", "-n", fab, "link", "set", f"d{k}", "master", "br0", "up"])
        congestion = node_congestion()
        hosts = "127.0.0.1 localhost\n" + "".join(
            f"{self.ip(i)} {name}\n" for i, name in enumerate(self.names))
        for i, ns in enumerate(self.namespaces):
            _run(["ip", "netns", "add", ns])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"])
            self._plug(i, "eth0", "br0", self.ip(i), self.subnet)  # the node's leaf's bridge, with leaves
            if congestion:
                self._sysctl(ns, {"net/ipv4/tcp_congestion_control": congestion})
            if self.rails:
                self._sysctl(ns, {"net/ipv4/conf/all/rp_filter": 0, "net/ipv4/conf/default/rp_filter": 0})
            for k, net in enumerate(self.rail_subnets):
                dev, addr, table = f"rail{k}", self.rail_ip(i, k), str(100 + k)
                self._plug(i, dev, self.rail_bridge(k), addr, net)
                # what a rail address sends leaves through that rail, also towards other rails
                _run(["ip", "-n", ns, "rule", "add", "from", addr, "table", table])
                _run(["ip", "-n", ns, "route", "add", str(net), "dev", dev, "src", addr, "table", table])
                _run(["ip", "-n", ns, "route", "add", "default", "via", self.rail_router(k), "dev", dev,
                      "table", table])
            etc = os.path.join(NETNS_ETC, ns)
            os.makedirs(etc, exist_ok=True)
            with open(os.path.join(etc, "hosts"), "w") as f:
                f.write(hosts)
        self.agent = os.path.join(self.tmp, "rsh-agent")
        with open(self.agent, "w") as f:
            f.write(self._agent_script())
        os.chmod(self.agent, 0o755)
        if self.rails:
            self.rail_exec = os.path.join(self.tmp, "rail-exec")
            with open(self.rail_exec, "w") as f:
                f.write(self._rail_exec_script())
            os.chmod(self.rail_exec, 0o755)

    def _plug(self, node, dev, bridge, addr, net):
        """A veth pair: `dev` inside the node with `addr`, its peer on `bridge` in the fabric (the
        node's leaf, with leaves)."""
        ns, port, sw = self.namespaces[node], self.bridge_port(node, dev), self.port_namespace(node)
        _run(["ip", "-n", sw, "link", "add", port, "type", "veth", "peer", "name", dev, "netns", ns])
        _run(["ip", "-n", sw, "link", "set", port, "master", bridge, "up"])
        _run(["ip", "-n", ns, "addr", "add", f"{addr}/{net.prefixlen}", "dev", dev])
        _run(["ip", "-n", ns, "link", "set", dev, "up"])

    @staticmethod
    def _sysctl(ns, values):
        script = "".join(f"echo {v} > /proc/sys/{k}\n" for k, v in values.items())
        _run(["ip", "netns", "exec", ns, "sh", "-ec", script])

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

    def _rail_exec_script(self):
        return (
            "#!/bin/sh\n"
            "# Binds a rank's MPI traffic to its rail: local rank r uses interface rail<r mod K>.\n"
            "r=${OMPI_COMM_WORLD_LOCAL_RANK:-0}\n"
            f"dev=rail$((r % {self.rails}))\n"
            "export OMPI_MCA_btl_tcp_if_include=$dev UCX_NET_DEVICES=$dev\n"
            "exec \"$@\"\n")

    # ---- naming ---------------------------------------------------------------------------------

    def ip(self, node):
        """`node`'s eth0 address (its name resolves to it)."""
        return str(self.subnet.network_address + node + 1)

    def rail_ip(self, node, rail):
        return str(self.rail_subnets[rail].network_address + node + 1)

    def rail_router(self, rail):
        """The fabric's address on a rail's bridge (the route between rails)."""
        return str(self.rail_subnets[rail].broadcast_address - 1)

    def rail_bridge(self, rail):
        return f"br-rail{rail}"

    def dev_ip(self, node, dev):
        """The address of interface `dev` (eth0 or rail<k>) of `node`."""
        return self.ip(node) if dev == "eth0" else self.rail_ip(node, self._rail_of(dev))

    def _rail_of(self, dev):
        k = int(dev[4:]) if dev.startswith("rail") and dev[4:].isdigit() else -1
        if not 0 <= k < self.rails:
            raise ValueError(f"no interface {dev!r} (rails: {self.rails})")
        return k

    def bridge_port(self, node, dev="eth0"):
        """The bridge-side veth of `node`'s interface `dev`, inside port_namespace(node)."""
        return f"v{node}" if dev == "eth0" else f"v{node}r{self._rail_of(dev)}"

    def port_namespace(self, node):
        """The namespace of the bridge `node` hangs on: its leaf's, or the fabric's."""
        return self.leaf_namespaces[self.leaf_of[node]] if self.leaf_of else self.fabric

    def fabric_text(self, leaf_names=None, spine="spine"):
        """The cluster as fabricmap's `--fabric` text form: each node on its leaf (port = its place
        among the leaf's nodes, from 1), each leaf's one cable up (leaf port 1 + the most nodes a
        leaf has) to the spine (port = leaf index + 1). `leaf_names`: default leaf0, leaf1, ..."""
        if not self.leaf_of:
            raise ValueError("fabric_text needs a cluster built with leaves")
        names = list(leaf_names or [f"leaf{k}" for k in range(len(self.leaf_namespaces))])
        up = 1 + max(self.leaf_of.count(k) for k in range(len(names)))
        lines = [f"{names[k]}:{up} -> {spine}:{k + 1}" for k in range(len(names))]
        for i, name in enumerate(self.names):
            k = self.leaf_of[i]
            lines.append(f"{name} -> {names[k]}:{self.leaf_of[:i].count(k) + 1}")
        return "\n".join(lines) + "\n"

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
        replacing, the defaults below (value None drops a default); env: {VAR: value} for -x.
        With rails, every rank starts through the rail wrapper, which picks its interface."""
        params = {
            "plm_rsh_agent": self.agent,
            # mpirun starts every daemon itself; no daemon starts others through the agent
            "plm_rsh_no_tree_spawn": "1",
            "oob_tcp_if_include": str(self.subnet),
            # with rails the wrapper sets it per rank (a value here would reach every rank)
            "btl_tcp_if_include": None if self.rails else str(self.subnet),
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
        return cmd + ([self.rail_exec] if self.rails else []) + list(argv)

    def mpirun(self, argv, ranks_per_node=1, mca=None, env=None, timeout=240, check=False):
        """Runs an MPI job on every node (ranks_per_node ranks each, rank r on node r // ranks_per_node);
        returns a RunResult. A job past `timeout` is ended (mpirun, then anything left in the
        nodes) and reported with timed_out=True and returncode 124."""
        return self._spawn(self.node_argv(0, self.mpirun_argv(argv, ranks_per_node, mca, env)),
                           timeout, check)

    def _spawn(self, argv, timeout, check):
        start = time.monotonic()
        # A session of its own: with the kernel's autogroup scheduling every session shares the
        # CPUs as one, and the agent starts each other node's daemon in a session of its own. In
        # the caller's session mpirun and node0's ranks would share one node's CPU time with
        # everything else the caller runs (compilers, other tests): node0 measured 10-100x slow.
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
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

    def tcp_rate(self, src, dst, nbytes=8 << 20, dev="eth0", dst_dev=None, timeout=60):
        """Bytes/s of one TCP stream of `nbytes` from node src to node dst: from src's interface
        `dev` (eth0, or a rail: sent from its address) to dst's `dst_dev` (default: `dev`)."""
        py = sys.executable
        to, frm = self.dev_ip(dst, dst_dev or dev), "" if dev == "eth0" else self.dev_ip(src, dev)
        rx = self.popen(dst, [py, "-c", _RECEIVER, to, str(PROBE_PORT)], stdout=subprocess.PIPE, text=True)
        try:
            rx.stdout.readline()  # listening
            r = self.run(src, [py, "-c", _SENDER, to, str(PROBE_PORT), str(nbytes), frm], timeout=timeout)
            if r.returncode != 0:
                raise RuntimeError(f"probe {src}->{dst} ({dev}): {r.stderr.strip()[-500:]}")
            rx.wait(timeout=30)
            return float(r.stdout)
        finally:
            if rx.poll() is None:
                rx.kill()
                rx.wait()

    # ---- rate limits ----------------------------------------------------------------------------

    def limit_node(self, node, rate="200mbit", direction="both", burst=None, devs=None):
        """Limits what `node` sends (egress: tbf on its interface), receives (ingress: tbf on the
        interface's bridge-side veth), or both, to `rate` (tc syntax: 200mbit, 1gbit, ...) on
        each of `devs` (default: every interface that carries MPI traffic, self.devs). `burst`:
        tbf's bucket (default 32kbit, what shared/ENVIRONMENT.md checked; a rate near a veth's
        line rate needs more, or tbf itself becomes the limit)."""
        if direction not in ("both", "egress", "ingress"):
            raise ValueError(f"direction must be both, egress or ingress, not {direction!r}")
        for dev in devs or self.devs:
            state = self._limit_state(node, dev)
            if direction in ("both", "egress"):
                state["egress"] = (rate, burst or TBF_BURST)
                self._apply_egress(node, dev)
            if direction in ("both", "ingress"):
                state["ingress"] = (rate, burst or TBF_BURST)
                self._apply_ingress(node, dev)

    def limit_rail(self, node, rail, rate="200mbit", direction="both", burst=None):
        """Limits one rail of `node` (the path of the ranks bound to it) as limit_node does."""
        self.limit_node(node, rate, direction, burst, devs=[f"rail{rail}"])

    def limit_link(self, src, dst, rate="200mbit", burst=None, devs=None):
        """Limits only traffic from `src` to `dst` (htb on each of src's `devs`, default self.devs;
        u32 filters on dst's addresses pick the slow class, everything else goes through an
        unlimited default class)."""
        if src == dst:
            raise ValueError("a link joins two different nodes")
        self._check_node(dst)
        for dev in devs or self.devs:
            self._limit_state(src, dev)["links"][dst] = (rate, burst or TBF_BURST)
            self._apply_egress(src, dev)

    def limit_uplink(self, leaf, rate="200mbit", direction="both", burst=None):
        """Limits leaf `leaf`'s cable to the spine: what the leaf sends up (`up`: tbf on its `up0`),
        what the spine sends down to it (`down`: tbf on the spine's port `d<leaf>`), or both.
        Traffic between two nodes of that leaf does not cross it."""
        if not 0 <= leaf < len(self.leaf_namespaces):
            raise ValueError(f"leaf {leaf} out of range (leaves: {len(self.leaf_namespaces)})")
        if direction not in ("both", "up", "down"):
            raise ValueError(f"direction must be both, up or down, not {direction!r}")
        ends = [(self.leaf_namespaces[leaf], "up0")] * (direction != "down") \
            + [(self.fabric, f"d{leaf}")] * (direction != "up")
        for ns, dev in ends:
            _run(["tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf", "rate", rate,
                  "burst", burst or TBF_BURST, "latency", TBF_LATENCY])
        self._uplink_limits.add(leaf)

    def clear_limits(self):
        """Removes every rate limit."""
        for node, dev in list(self._limits):
            self._limits[(node, dev)] = {"egress": None, "ingress": None, "links": {}}
            self._apply_egress(node, dev)
            self._apply_ingress(node, dev)
        self._limits = {}
        for leaf in sorted(self._uplink_limits):
            for ns, dev in ((self.leaf_namespaces[leaf], "up0"), (self.fabric, f"d{leaf}")):
                _run(["tc", "-n", ns, "qdisc", "del", "dev", dev, "root"], check=False)
        self._uplink_limits = set()

    def tc_show(self):
        """The qdiscs, classes and filters in place, for a failing test's log."""
        lines = []
        for i, ns in enumerate(self.namespaces):
            for dev in dict.fromkeys(["eth0"] + self.devs):
                for what in ("qdisc", "class", "filter"):
                    p = _run(["tc", "-n", ns, what, "show", "dev", dev], check=False)
                    lines += [f"{self.names[i]} {dev} {what}: {l}" for l in p.stdout.splitlines()]
                p = _run(["tc", "-n", self.port_namespace(i), "qdisc", "show", "dev", self.bridge_port(i, dev)],
                         check=False)
                lines += [f"{self.names[i]} {dev} bridge port qdisc: {l}" for l in p.stdout.splitlines()]
        for k, ns in enumerate(self.leaf_namespaces):
            for sw, dev in ((ns, "up0"), (self.fabric, f"d{k}")):
                p = _run(["tc", "-n", sw, "qdisc", "show", "dev", dev], check=False)
                lines += [f"leaf{k} uplink {dev} qdisc: {l}" for l in p.stdout.splitlines()]
        return "\n".join(lines)

    def _check_node(self, node):
        if not 0 <= node < self.nodes:
            raise ValueError(f"node {node} out of range 0..{self.nodes - 1}")

    def _limit_state(self, node, dev):
        self._check_node(node)
        self.bridge_port(node, dev)  # checks dev
        return self._limits.setdefault((node, dev), {"egress": None, "ingress": None, "links": {}})

    def _apply_egress(self, node, dev):
        """Rebuilds `dev`'s root qdisc in `node` from its state: none, tbf (node limit only), or
        htb (per-link limits, with the node limit, if any, capping the whole root class)."""
        state = self._limit_state(node, dev)
        tc = ["tc", "-n", self.namespaces[node]]
        _run(tc + ["qdisc", "del", "dev", dev, "root"], check=False)  # absent at first: fine
        egress = state["egress"]
        if not state["links"]:
            if egress:
                _run(tc + ["qdisc", "add", "dev", dev, "root", "tbf", "rate", egress[0],
                           "burst", egress[1], "latency", TBF_LATENCY])
            return
        cap = ["rate", egress[0], "burst", egress[1], "cburst", egress[1], "quantum", "1514"] \
            if egress else HTB_OPEN
        _run(tc + ["qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10"])
        _run(tc + ["class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb"] + cap)
        _run(tc + ["class", "add", "dev", dev, "parent", "1:1", "classid", "1:10", "htb"] + cap)
        for dst, (rate, burst) in sorted(state["links"].items()):
            cls = f"1:{0x100 + dst:x}"  # 1:100 + dst (tc reads minors as hex)
            _run(tc + ["class", "add", "dev", dev, "parent", "1:1", "classid", cls, "htb",
                       "rate", rate, "ceil", rate, "burst", burst, "cburst", burst, "quantum", "1514"])
            # every address of dst that MPI traffic goes to (its eth0, or all its rails)
            for addr in sorted({self.dev_ip(dst, d) for d in self.devs}):
                _run(tc + ["filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1",
                           "u32", "match", "ip", "dst", f"{addr}/32", "flowid", cls])

    def _apply_ingress(self, node, dev):
        state = self._limit_state(node, dev)
        tc = ["tc", "-n", self.port_namespace(node)]
        port = self.bridge_port(node, dev)
        _run(tc + ["qdisc", "del", "dev", port, "root"], check=False)
        if state["ingress"]:
            rate, burst = state["ingress"]
            _run(tc + ["qdisc", "add", "dev", port, "root", "tbf", "rate", rate,
                       "burst", burst, "latency", TBF_LATENCY])


def main(argv):
    """usage: cluster.py check | cleanup [--all] [--prefix P] | up [NODES] [--rails K | --leaves L]
  check    says whether the harness can run here (exit 77 when not)
  cleanup  removes what crashed runs left (namespaces, /etc/netns entries, temp dirs) named
           fmc-* (or P*); --all also what live runs own
  up       builds a cluster (default 4 nodes; K rails: one interface per local rank; L leaf
           switches under a spine), prints how to use it, waits for Ctrl-C"""
    opts = {}
    args = []
    it = iter(argv)
    for a in it:
        if a in ("--prefix", "--rails", "--leaves"):
            opts[a] = next(it, None)
        else:
            args.append(a)
    if args[:1] == ["up"]:
        rails, leaves = int(opts.get("--rails") or 0), int(opts.get("--leaves") or 0)
        n = int(args[1]) if len(args) > 1 else 4
        with Cluster(nodes=n, rails=rails, leaves=[i * leaves // n for i in range(n)] if leaves else None) as c:
            print(f"nodes {', '.join(c.names)} at {c.ip(0)}..{c.ip(c.nodes - 1)}"
                  + "".join(f", rail{k} {net}" for k, net in enumerate(c.rail_subnets))
                  + f", files in {c.tmp}")
            if leaves:
                print("as a --fabric file:\n" + c.fabric_text(), end="")
            print("a shell on node1:\n  " + shlex.join(c.node_argv(1, ["bash"])))
            print("an MPI job, 2 ranks per node:\n  "
                  + shlex.join(c.node_argv(0, c.mpirun_argv(["hostname"], ranks_per_node=2))))
            print("Ctrl-C tears it down.", flush=True)
            try:
                signal.pause()
            except KeyboardInterrupt:
                pass
        return 0
    if args[:1] == ["cleanup"]:
        for name in cleanup_stale(everything="--all" in args[1:], prefix=opts.get("--prefix") or PREFIX):
            print("removed", name)
        return 0
    if args[:1] == ["check"]:
        reason = skip_reason()
        print(reason or "ok")
        return 77 if reason else 0
    print(main.__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
