"""A real Slurm cluster on this host for tests: munged, slurmctld and one slurmd per node (several
slurmd on one host, Debian's build allows it), all under a temporary directory, stopped and
removed again also when a test fails. Needs root (slurmd starts jobs as any user) and the Debian
packages slurmctld, slurmd, slurm-client and munge (scripts/setup.sh installs them).

    with SlurmCluster(nodes=2) as s:
        job = s.sbatch(["slurm/fabricmap.sbatch", "--collectives"], ["--nodes=2"], cwd=...)
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

DAEMONS = ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo")


def skip_reason():
    if os.geteuid() != 0:
        return "not root (slurmd must run as root)"
    missing = [d for d in DAEMONS if shutil.which(d) is None and not os.path.exists(f"/usr/sbin/{d}")]
    return f"missing {', '.join(missing)} (scripts/setup.sh installs slurmctld slurmd slurm-client munge)" if missing else ""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlurmCluster:
    def __init__(self, nodes=2, cpus=8):
        self.nodes = nodes
        self.cpus = cpus
        self.tmp = tempfile.mkdtemp(prefix="fabricmap-slurm-")
        os.chmod(self.tmp, 0o755)
        self.conf = os.path.join(self.tmp, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.names = [f"fm{i + 1}" for i in range(nodes)]
        self.nodelist = self.names[0] if nodes == 1 else f"fm[1-{nodes}]"

    def __enter__(self):
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def _run(self, argv, **kw):
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=kw.pop("timeout", 30), **kw)

    def _start(self):
        for d in ("munge", "state", "log", "spool", "tmp"):
            os.makedirs(self.path(d), exist_ok=True)
        os.chmod(self.path("munge"), 0o755)  # clients reach the socket through it
        key = self.path("munge", "key")
        subprocess.run(["mungekey", "-c", "-k", key], check=True, capture_output=True)
        os.chmod(key, 0o600)
        self.socket = self.path("munge", "munge.socket.2")
        subprocess.run(["munged", f"--key-file={key}", f"--socket={self.socket}",
                        f"--pid-file={self.path('munge', 'munged.pid')}", f"--log-file={self.path('munge', 'munged.log')}",
                        f"--seed-file={self.path('munge', 'seed')}"], check=True, capture_output=True)
        host = socket.gethostname()
        ctld, slurmd_base = free_port(), free_port()
        ports = [free_port() for _ in self.names]
        lines = [
            "ClusterName=fabricmap-test",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={ctld}",
            f"SlurmdPort={slurmd_base}",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={self.socket}",
            "SlurmUser=root", "SlurmdUser=root",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
            "MpiDefault=none", "SwitchType=switch/none",
            "SchedulerType=sched/backfill", "ReturnToService=2",
            # the nodes claim more CPUs than this machine has: they are placeholders for real ones
            "SlurmdParameters=config_overrides",
            "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none",
            f"StateSaveLocation={self.path('state')}",
            f"SlurmdSpoolDir={self.path('spool', '%n')}",
            f"SlurmctldPidFile={self.path('slurmctld.pid')}",
            f"SlurmdPidFile={self.path('slurmd-%n.pid')}",
            f"SlurmctldLogFile={self.path('log', 'slurmctld.log')}",
            f"SlurmdLogFile={self.path('log', 'slurmd-%n.log')}",
            # per-node TmpFS: several slurmd on one host must not share PMIx's directories
            f"TmpFS={self.path('tmp', '%n')}",
            "InactiveLimit=0", "KillWait=5", "MinJobAge=300",
        ]
        for name, port in zip(self.names, ports):
            lines.append(f"NodeName={name} NodeHostname={host} NodeAddr=127.0.0.1 Port={port} CPUs={self.cpus} "
                         f"Sockets=1 CoresPerSocket={self.cpus} ThreadsPerCore=1 RealMemory=2000 State=UNKNOWN")
            os.makedirs(self.path("tmp", name), exist_ok=True)
            os.makedirs(self.path("spool", name), exist_ok=True)
        lines.append(f"PartitionName=test Nodes={','.join(self.names)} Default=YES MaxTime=INFINITE State=UP")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        r = self._run(["slurmctld", "-f", self.conf])
        if r.returncode != 0:
            raise RuntimeError(f"slurmctld: {r.stderr}")
        for name in self.names:
            r = self._run(["slurmd", "-f", self.conf, "-N", name])
            if r.returncode != 0:
                raise RuntimeError(f"slurmd {name}: {r.stderr}")
        # a slurmd registers within seconds on an idle machine; under a loaded CI host one took
        # over 30 s (the node stayed "unk*")
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            r = self._run(["sinfo", "-h", "-o", "%t %D"])
            if r.returncode == 0 and r.stdout.split() == ["idle", str(self.nodes)]:
                return
            time.sleep(0.5)
        raise RuntimeError(f"the Slurm nodes never became idle: {r.stdout} {r.stderr}\n{self.logs()}")

    def logs(self):
        out = []
        for name in sorted(os.listdir(self.path("log"))):
            with open(self.path("log", name), errors="replace") as f:
                out.append(f"--- {name}\n" + "".join(f.readlines()[-20:]))
        return "\n".join(out)

    def sbatch(self, script_and_args, options, cwd, env=None, timeout=240):
        """Submits and waits (sbatch --wait); returns (job id, exit code, sbatch's result)."""
        e = dict(self.env, **(env or {}))
        start = time.monotonic()
        r = subprocess.run(["sbatch", "--wait", "--parsable"] + options + script_and_args, cwd=cwd, env=e,
                           capture_output=True, text=True, timeout=timeout)
        r.elapsed = time.monotonic() - start
        m = re.match(r"(\d+)", r.stdout.strip())
        return (m.group(1) if m else None), r.returncode, r

    def stop(self):
        if os.path.exists(self.conf):
            self._run(["scontrol", "shutdown"], timeout=15)
        munged = None
        try:
            with open(self.path("munge", "munged.pid")) as f:
                munged = int(f.read().strip())
        except (OSError, ValueError):
            pass
        deadline = time.monotonic() + 10
        pids = [p for p in self._pids() if p != munged]
        while pids and time.monotonic() < deadline:
            time.sleep(0.3)
            pids = [p for p in self._pids() if p != munged]
        for pid in pids:  # whatever did not stop: slurmstepd of a stuck job, a daemon
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if munged is not None:
            try:
                os.kill(munged, signal.SIGTERM)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _pids(self):
        """Processes of this cluster: daemons and job steps started with our configuration."""
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
                with open(f"/proc/{entry}/environ", "rb") as f:
                    environ = f.read()
            except OSError:
                continue
            if self.conf in cmd or self.conf.encode() in environ or self.tmp in cmd:
                if int(entry) != os.getpid():
                    pids.append(int(entry))
        return pids
