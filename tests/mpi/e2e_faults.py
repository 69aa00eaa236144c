"""End-to-end cases of runs that go wrong: hangs, frozen and crashed ranks, a killed rank 0, resume."""
import json
import os
import subprocess
import time

from e2e_support import *  # noqa: F401,F403 (the checks and helpers every case uses)


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
