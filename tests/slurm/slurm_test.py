#!/usr/bin/env python3
"""Slurm tests: `sbatch slurm/fabricmap.sbatch` against a real slurmctld and slurmd started for the
test (slurm_cluster.py), on one node and on two, through srun and through mpirun inside the
allocation; the results file must name the job. Exit 77 (skipped) where Slurm cannot run here.

usage: slurm_test.py --fabricmap BIN CASE      cases: one-node, two-nodes, mpirun, bad-input
"""
import argparse
import os
import sys
import tempfile

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slurm_cluster  # noqa: E402

SKIP = 77
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SBATCH = os.path.join(ROOT, "slurm", "fabricmap.sbatch")
FAILURES = []
# small measurements: a short sweep and the quick pairwise matrices
RUN_ARGS = ["--collectives", "--pairwise", "--pairwise-mode", "quick", "-b", "1K", "-e", "64K", "-f", "8", "-n", "3",
            "-w", "1", "--ops", "all_reduce,all_gather", "--pair-bytes", "64K", "--pair-iters", "3",
            "--latency-iters", "10", "--progress", "off"]


def check(cond, message):
    if not cond:
        FAILURES.append(message)
        print("FAIL: " + message, file=sys.stderr, flush=True)
    return cond


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def job(args, nodes, tasks, launcher="srun", run_args=RUN_ARGS, expect=0):
    """Submits the job script on `nodes` nodes x `tasks` tasks and checks what it leaves behind;
    returns (attributes of the results file or None, the job's output)."""
    with slurm_cluster.SlurmCluster(nodes=max(nodes, 1)) as s, tempfile.TemporaryDirectory(prefix="fm-submit-") as cwd:
        os.chmod(cwd, 0o755)
        env = {"FABRICMAP": args.fabricmap, "FABRICMAP_LAUNCHER": launcher}
        if nodes > 1:
            # Slurm nodes on one host: Open MPI takes them for separate hosts, and its shared-memory
            # transport between "hosts" that share one machine crashes; TCP, as between real nodes
            env["OMPI_MCA_btl"] = "self,tcp"
        options = [f"--nodes={nodes}", f"--ntasks-per-node={tasks}", "--gpus-per-node=0", "--time=00:05:00",
                   "--output=job-%j.out"]
        jobid, code, r = s.sbatch([SBATCH] + run_args, options, cwd=cwd, env=env)
        out_path = os.path.join(cwd, f"job-{jobid}.out")
        output = open(out_path, errors="replace").read() if jobid and os.path.exists(out_path) else ""
        print(f"  job {jobid} on {nodes} node(s) x {tasks} with {launcher}: exit {code} in {r.elapsed:.1f}s", flush=True)
        if not check(jobid is not None and code == expect,
                     f"sbatch exit {code} (expected {expect}): {r.stdout} {r.stderr}\n{output[-3000:]}\n{s.logs()}"):
            return None, output
        results = os.path.join(cwd, "results", f"{jobid}.h5")
        if expect != 0:
            check(not os.path.exists(results) or expect == 1, f"a failed job left {results}")
            return None, output
        if not check(os.path.exists(results), f"no results/{jobid}.h5; job output:\n{output[-2000:]}"):
            return None, output
        with h5py.File(results, "r") as f:
            attrs = {k: text(f.attrs[k]) for k in f.attrs}
        check(attrs["slurm_job_id"] == jobid, f"slurm_job_id {attrs['slurm_job_id']} != {jobid}")
        check(attrs["slurm_nodelist"] == s.nodelist, f"slurm_nodelist {attrs['slurm_nodelist']} != {s.nodelist}")
        check(attrs["slurm_partition"] == "test", f"slurm_partition {attrs['slurm_partition']}")
        check(attrs["slurm_gpus_per_node"] == "0", f"slurm_gpus_per_node {attrs['slurm_gpus_per_node']}")
        check(attrs["launcher"] == launcher, f"launcher {attrs['launcher']} != {launcher}")
        check(bool(attrs["complete"]) and int(attrs["world_size"]) == nodes * tasks,
              f"complete {attrs['complete']}, world size {attrs['world_size']}")
        check(os.path.getsize(os.path.join(cwd, "results", f"{jobid}.html")) > 1000
              if os.path.exists(os.path.join(cwd, "results", f"{jobid}.html")) else False,
              f"no report results/{jobid}.html beside the results")
        check("# preflight: OK" in output and f"results in results/{jobid}.h5 (exit 0)" in output,
              f"job output:\n{output[-2000:]}")
        return attrs, output


def case_one_node(args):
    job(args, 1, 2)


def case_two_nodes(args):
    # two slurmd on this host: the ranks of both share its memory, so fabricmap is told where
    # Slurm's node boundary is (--ranks-per-node); block distribution puts ranks 0-1 on fm1
    attrs, _ = job(args, 2, 2, run_args=RUN_ARGS + ["--ranks-per-node", "2"])
    if attrs is not None:
        check(int(attrs["node_count"]) == 2, f"node count {attrs['node_count']}")


def case_mpirun(args):
    job(args, 2, 2, launcher="mpirun", run_args=RUN_ARGS + ["--ranks-per-node", "2"])


def case_bad_input(args):
    # a bad option: the preflight (the job's first step) refuses it, the job exits 2, one message
    _, output = job(args, 1, 2, run_args=["--ops", "all_reduce,bogus"], expect=2)
    errors = [l for l in output.splitlines() if l.startswith("fabricmap run: error")]
    check(len(errors) == 1 and "bogus" in errors[0], f"error lines {errors} in:\n{output[-1500:]}")


CASES = {"one-node": case_one_node, "two-nodes": case_two_nodes, "mpirun": case_mpirun, "bad-input": case_bad_input}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fabricmap", required=True)
    ap.add_argument("case", choices=sorted(CASES))
    args = ap.parse_args()
    args.fabricmap = os.path.abspath(args.fabricmap)
    reason = slurm_cluster.skip_reason()
    if reason:
        print(f"SKIP: Slurm cannot run here: {reason}")
        return SKIP
    CASES[args.case](args)
    if FAILURES:
        print(f"{args.case}: {len(FAILURES)} check(s) failed", file=sys.stderr)
        return 1
    print(f"{args.case}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
