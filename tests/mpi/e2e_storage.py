"""End-to-end cases of the storage feed (`run --storage PATH`): real files under a temporary
directory, written and read by every rank or each node's first, the rows per rank, node and job
adding up, only the run's own files removed; an unusable path (missing, read-only, full) one
message and exit 2 with nothing left behind."""
import os
import subprocess
import tempfile

import h5py

from e2e_support import *  # noqa: F401,F403 (the checks and helpers every case uses)


def storage_rows(path):
    with h5py.File(path, "r") as f:
        d = f["storage"][:]
        return [{k: (text(row[k]) if d.dtype[k].kind == "O" else row[k].item()) for k in d.dtype.names} for row in d]


def run_storage(args, out, path, *extra):
    return mpirun(args, args.np, [args.fabricmap, "run", "--ranks-per-node", "2", "--storage", path, "--progress", "off",
                                  "-o", out] + list(extra), timeout=120)


def check_sums(rows, tests, readers, what):
    """Every test has a row per reading rank, per node and for the job, the job's bytes their sum."""
    for test in tests:
        mine = [r for r in rows if r["test"] == test]
        ranks = [r for r in mine if r["level"] == "rank"]
        nodes = [r for r in mine if r["level"] == "node"]
        total = [r for r in mine if r["level"] == "all"]
        check(sorted(r["rank"] for r in ranks) == readers, f"{what} {test}: rank rows {[r['rank'] for r in ranks]}")
        check(len(total) == 1 and total[0]["bytes"] == sum(r["bytes"] for r in ranks) == sum(r["bytes"] for r in nodes)
              and total[0]["ranks"] == len(readers), f"{what} {test}: rows do not add up: {mine}")
        check(all(r["gbps"] > 0 and r["seconds"] > 0 and r["cache"] in ("direct", "dropped", "cached") for r in mine),
              f"{what} {test}: {mine}")
        check(total[0]["seconds"] == max(r["seconds"] for r in ranks), f"{what} {test}: the job's time is not the slowest")


def case_storage(args, tmp):
    data = os.path.join(tmp, "data")
    os.makedirs(os.path.join(data, "keep"))
    sentinel = os.path.join(data, "keep", "sentinel.bin")
    with open(sentinel, "wb") as f:
        f.write(os.urandom(3 << 20))
    out = os.path.join(tmp, "storage.h5")
    p = run_storage(args, out, data, "--storage-write", "--storage-bytes", "6M")
    check(p.returncode == 0, f"--storage-write run: exit {p.returncode}: {p.stderr[-2000:]}")
    check("# storage feed (/storage)" in p.stdout and "randread" in p.stdout and "Out of bounds" not in p.stdout,
          f"console: {p.stdout[-1500:]}")
    rows = storage_rows(out)
    check_sums(rows, ["write", "read", "randread"], list(range(args.np)), "every rank")
    check(all(r["bytes"] == 6 << 20 for r in rows if r["level"] == "rank" and r["test"] != "randread"),
          f"6 MiB per rank: {[r['bytes'] for r in rows if r['level'] == 'rank']}")
    check(sorted(os.listdir(data)) == ["keep"] and os.listdir(os.path.join(data, "keep")) == ["sentinel.bin"]
          and os.path.getsize(sentinel) == 3 << 20, f"left behind or touched: {os.listdir(data)}")
    # the files already there, each node's first rank
    found = os.path.join(tmp, "found.h5")
    with open(os.path.join(data, "second.bin"), "wb") as f:
        f.write(os.urandom(2 << 20))
    p = run_storage(args, found, data, "--storage-ranks", "node")
    check(p.returncode == 0, f"found files run: exit {p.returncode}: {p.stderr[-2000:]}")
    rows = storage_rows(found)
    check_sums(rows, ["read", "randread"], [0, 2], "each node's first")
    check(sum(r["bytes"] for r in rows if r["level"] == "all" and r["test"] == "read") == 5 << 20,
          f"the two files read whole: {rows}")
    check(not any(r["test"] == "write" for r in rows), "a write without --storage-write")
    bad_paths(args, tmp)


def refused(args, tmp, path, want, *extra):
    p = run_storage(args, os.path.join(tmp, "no.h5"), path, *extra)
    ok, lines = one_error_line(p)
    check(p.returncode == 2 and ok and want in lines[0], f"--storage {path} {extra}: exit {p.returncode} {lines}")


def bad_paths(args, tmp):
    refused(args, tmp, os.path.join(tmp, "absent"), "No such file or directory")
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty)
    refused(args, tmp, empty, "no file under")
    if os.geteuid() != 0:
        return  # the mounts below need root
    small = os.path.join(tmp, "small")
    readonly = os.path.join(tmp, "readonly")
    for d in (small, readonly):
        os.makedirs(d)
    mounted = []
    try:
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", readonly]).returncode == 0:
            mounted.append(readonly)
            refused(args, tmp, readonly, "read-only file system", "--storage-write", "--storage-bytes", "64K")
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", small]).returncode == 0:
            mounted.append(small)
            refused(args, tmp, small, "free", "--storage-write", "--storage-bytes", "4M")
            # each rank's 512 KiB fits alone, four do not: the disk fills while writing
            refused(args, tmp, small, "--storage write: rank", "--storage-write", "--storage-bytes", "512K")
            check(os.listdir(small) == [], f"a full disk kept the run's files: {os.listdir(small)}")
    finally:
        for d in mounted:
            subprocess.run(["umount", d])
