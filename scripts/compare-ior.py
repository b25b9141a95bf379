#!/usr/bin/env python3
"""storlab under MPI beside IOR, and N ranks beside one process with N jobs.

Usage: scripts/compare-ior.py [--dir DIR] [--rounds N] [--np N] [--size SIZE]
                              [--storlab BIN] [--ior BIN] [--parts ior,ranks,null]

1. storlab vs IOR: the same workload, launched the same way
   (`mpirun --oversubscribe -np N`), alternating A/B/A/B: 1 MiB transfers,
   O_DIRECT, synchronous I/O (storlab `--engine psync`, IOR `-a POSIX`), a
   write then a read-back, with the fsync inside the write's timed window
   (storlab's default; IOR `-e`). Two layouts: a file per rank (N-N; IOR
   `-F`) and one shared file, each rank one contiguous block (N-1
   segmented; IOR's default with `-s 1`). storlab's files are not
   pre-allocated (`--fallocate none`): like IOR's, their blocks are
   allocated by the timed writes. Figures are each tool's own
   aggregate: storlab's bytes over the global window, IOR's bandwidth
   (MiB/s converted to MB/s = 10^6 B/s). IOR runs twice: as built, and
   with its buffer in transparent huge pages (`GLIBC_TUNABLES=
   glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=4194304`), as
   storlab's buffers are: with malloc's 4 KiB pages a 1 MiB O_DIRECT
   transfer has more segments than a virtio disk takes (254) and the
   kernel splits it into two requests.
2. storlab with N ranks of one job each (N-N) vs one storlab process with
   `--numjobs N`, same files and sizes: the cost of coordination.
3. The same with the null engine (no device: 64 KiB writes as fast as the
   CPUs go, IOPS), where coordination would show if it cost anything and a
   shared disk's noise cannot hide it.

Prints every run and the median ratio with its spread. Needs a release
build with the MPI feature (`cargo build --release --features mpi`) and
IOR (`/work/shared/peers/build-ior.sh`, or `--ior`).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    return p.stdout


def mpirun(np_):
    cmd = ["mpirun", "--oversubscribe", "-np", str(np_)]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    return cmd


def storlab_mpi(args, d, layout, size):
    """Aggregate MB/s of the write and the read phase."""
    cmd = mpirun(args.np) + [
        args.storlab, "bench", d, "--no-save", "-q", "--output-format", "json",
        "--engine", "psync", "--direct=1", "--bs", "1M", "--size", size,
        "--fallocate=none", "--job", args.job,
    ]
    if layout == "n-1":
        cmd.append("--shared-file")
    r = json.loads(run(cmd))
    return {p["params"]["name"]: p["total"]["bw_bytes_per_s"] / 1e6 for p in r["phases"]}


def storlab_null(args, d, ranks):
    """IOPS of 64 KiB null-engine writes: N ranks of one job or one process of N."""
    cmd = [args.storlab, "bench", d, "--no-save", "-q", "--output-format", "json",
           "--engine", "null", "--bs", "64k", "--size", "256M", "--rw", "write",
           "--runtime", "2s", "--time-based", "--fallocate=none"]
    if ranks:
        cmd = mpirun(args.np) + cmd
    else:
        cmd += ["--numjobs", str(args.np)]
    r = json.loads(run(cmd))
    return {"iops": r["phases"][0]["total"]["iops"]}


def storlab_numjobs(args, d, size):
    cmd = [
        args.storlab, "bench", d, "--no-save", "-q", "--output-format", "json",
        "--engine", "psync", "--direct=1", "--bs", "1M", "--size", size,
        "--numjobs", str(args.np), "--fallocate=none", "--job", args.job,
    ]
    r = json.loads(run(cmd))
    return {p["params"]["name"]: p["total"]["bw_bytes_per_s"] / 1e6 for p in r["phases"]}


THP = "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=4194304"


def ior_thp(args, d, layout, size):
    """IOR with its transfer buffer in transparent huge pages."""
    return ior(args, d, layout, size, thp=True)


def ior(args, d, layout, size, thp=False):
    """IOR's write and read bandwidth, MB/s (from its MiB/s summary)."""
    f = os.path.join(d, "ior.dat")
    cmd = mpirun(args.np) + (["-x", f"GLIBC_TUNABLES={THP}"] if thp else []) + [
        args.ior, "-a", "POSIX", "--posix.odirect", "-w", "-r", "-e",
        "-t", "1m", "-b", size, "-s", "1", "-i", "1", "-o", f,
    ]
    if layout == "n-n":
        cmd.append("-F")
    out = run(cmd)
    res = {}
    in_summary = False
    for line in out.splitlines():
        if line.startswith("Summary of all tests"):
            in_summary = True
            continue
        cols = line.split()
        if in_summary and cols and cols[0] in ("write", "read"):
            res[cols[0]] = float(cols[3]) * 1048576 / 1e6  # Mean(MiB) -> MB/s
    for name in os.listdir(d):
        if name.startswith("ior.dat"):
            os.remove(os.path.join(d, name))
    if set(res) != {"write", "read"}:
        sys.exit(f"cannot read IOR's summary:\n{out}")
    return res


def summary(label, a, b, names):
    for n in names:
        ratios = [x[n] / y[n] for x, y in zip(a, b)]
        med = statistics.median(ratios)
        print(
            f"{label:<28} {n:<6} storlab {statistics.median(x[n] for x in a):10.1f}  "
            f"peer {statistics.median(y[n] for y in b):10.1f}  ratio median {med:.3f} "
            f"(min {min(ratios):.3f}, max {max(ratios):.3f}, {len(ratios)} pairs)"
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default=None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--size", default="256m", help="bytes per rank (IOR block size)")
    ap.add_argument("--storlab", default="target/release/storlab")
    ap.add_argument("--ior", default=os.environ.get("IOR", "/tmp/ior-build/src/ior"))
    ap.add_argument("--parts", default="ior,ranks,null", help="which comparisons to run")
    args = ap.parse_args()
    parts = args.parts.split(",")
    for tool in (args.storlab, args.ior) if "ior" in parts else (args.storlab,):
        if not shutil.which(tool) and not os.access(tool, os.X_OK):
            sys.exit(f"{tool} not found (cargo build --release --features mpi; build-ior.sh)")
    d = tempfile.mkdtemp(prefix="storlab-ior-", dir=args.dir)
    args.job = os.path.join(d, "write-read.toml")
    with open(args.job, "w") as f:
        f.write('[[phase]]\nname = "write"\nrw = "write"\n[[phase]]\nname = "read"\nrw = "read"\n')
    work = os.path.join(d, "work")
    os.mkdir(work)
    try:
        print(f"{args.np} ranks, 1 MiB transfers, O_DIRECT, {args.size} per rank, in {work}")
        for layout in ("n-n", "n-1") if "ior" in parts else ():
            got = {"storlab": [], "ior": [], "ior-thp": []}
            tools = [("storlab", storlab_mpi), ("ior", ior), ("ior-thp", ior_thp)]
            for r in range(args.rounds):
                # Each tool first, second and third in turn.
                order = tools[r % 3:] + tools[:r % 3]
                for tag, fn in order:
                    res = fn(args, work, layout, args.size)
                    got[tag].append(res)
                    print(f"  {layout} round {r} {tag:<7} "
                          f"write {res['write']:8.1f} read {res['read']:8.1f} MB/s", flush=True)
            summary(f"storlab/IOR {layout}", got["storlab"], got["ior"], ["write", "read"])
            summary(f"storlab/IOR-THP {layout}", got["storlab"], got["ior-thp"], ["write", "read"])
        m, n = [], []
        for r in range(args.rounds if "ranks" in parts else 0):
            order = [("m", 0), ("n", 1)] if r % 2 == 0 else [("n", 1), ("m", 0)]
            for tag, _ in order:
                res = storlab_mpi(args, work, "n-n", args.size) if tag == "m" else storlab_numjobs(args, work, args.size)
                (m if tag == "m" else n).append(res)
                print(f"  round {r} {'ranks' if tag == 'm' else 'numjobs':<7} "
                      f"write {res['write']:8.1f} read {res['read']:8.1f} MB/s", flush=True)
        if m:
            summary(f"{args.np} ranks / --numjobs {args.np}", m, n, ["write", "read"])
        m, n = [], []
        for r in range(args.rounds if "null" in parts else 0):
            for ranks in ([True, False] if r % 2 == 0 else [False, True]):
                res = storlab_null(args, work, ranks)
                (m if ranks else n).append(res)
                print(f"  round {r} null {'ranks' if ranks else 'numjobs':<7} {res['iops']:10.0f} IOPS", flush=True)
        if m:
            summary(f"null: {args.np} ranks / --numjobs", m, n, ["iops"])
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
