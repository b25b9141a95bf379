#!/usr/bin/env python3
"""storlab md beside mdtest: file create, stat and delete rates at the same
parameters, alternating A/B/A/B, medians and the ratio storlab / mdtest.

Usage: scripts/compare-mdtest.py [--rounds N] [--files N] [--ranks 1,4]
                                 [--dirs unique,shared] [--fs tmpfs,ext4]
                                 [--storlab BIN] [--mdtest BIN]

Each configuration is a number of ranks (both tools launched by
`mpirun --oversubscribe -np N`; one rank runs storlab without mpirun),
a unique directory per rank (mdtest `-u`, storlab `--unique-dir`) or one
shared directory, and a file system: tmpfs (a temporary directory under
/dev/shm) or ext4 on a loop device this script makes, formats, mounts and
removes (root). Both tools make `--files` files per rank in the top
directory of their tree (mdtest `-n N -F -C -T -r`, storlab `--files N
--ops create,stat,delete`): zero-byte files, no tree below the top. The
figures are each tool's own aggregate rate: mdtest's SUMMARY mean (items /
rank 0's barrier-to-barrier time) and storlab's `total.iops` (items / the
window from the ranks' common start to the last one done). The runs
alternate, storlab first in odd rounds and mdtest first in even ones, so a
drift of the machine falls on both, and each run starts after a `sync`:
on ext4 the journal and the freed inodes of the previous run's deletes
are otherwise paid by whichever run comes next (unsynced, the tool that
ran second was up to 1.5x faster or slower depending on the order).

With `--cpu`, one rank only: the CPU time per item of each tool (user +
system; storlab's per-phase figure of its worker thread, mdtest's from the
rusage of `-C`, `-T`, `-r` run as separate invocations less a 1-file run),
and the ratio mdtest / storlab (above 1: storlab spends less CPU per
item). On a machine shared with other work the wall rates follow the CPU
share each run happened to get; the CPU per item does not.

On ext4 every run gets a file system of its own, made and mounted just
before it and removed after: ext4's allocator places a new top-level
directory in another block group each time, so on a reused file system a
tool that keeps its directory (mdtest's `-d` stays) works in a warm group
while one that makes a new one (storlab's run directory) starts cold.

Prints every run, then per configuration and operation the medians and the
ratio with its spread (min-max of the per-round ratios). Needs a release
build of storlab with the MPI feature for ranks > 1
(`cargo build --release --features mpi`) and mdtest
(`/work/shared/peers/build-ior.sh DEST` builds it as DEST/src/mdtest).
"""

import argparse
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

OPS = ["create", "stat", "delete"]
MDTEST_NAMES = {"File creation": "create", "File stat": "stat", "File removal": "delete"}


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


def storlab(args, d, ranks, unique):
    cmd = [args.storlab, "md", d, "--files", str(args.files), "--ops", "create,stat,delete",
           "--no-save", "-q", "--json"]
    if unique:
        cmd.append("--unique-dir")
    if ranks > 1:
        cmd = mpirun(ranks) + cmd
    r = json.loads(run(cmd))
    return {p["params"]["md"]["op"]: p["total"]["iops"] for p in r["phases"]}


def mdtest(args, d, ranks, unique):
    cmd = mpirun(ranks) + [args.mdtest, "-n", str(args.files), "-F", "-C", "-T", "-r",
                           "-d", os.path.join(d, "mdtest")]
    if unique:
        cmd.append("-u")
    out = run(cmd)
    rates = {}
    for line in out.splitlines():
        for name, op in MDTEST_NAMES.items():
            m = re.match(r"\s*" + re.escape(name) + r"\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", line)
            if m:
                rates[op] = float(m.group(3))
    if set(rates) != set(OPS):
        sys.exit(f"could not read mdtest's summary:\n{out}")
    return rates


class Ext4Loop:
    """A 2 GiB ext4 file system on a loop device, made fresh (mkfs) for
    every run so that no run inherits another's directory blocks, freed
    inodes or journal, mounted with the same options for both tools."""

    def __init__(self, mount_opts):
        self.mount_opts = mount_opts

    def __enter__(self):
        self.tmp = tempfile.mkdtemp(prefix="storlab-mdcmp-", dir=os.environ.get("TMPDIR", "/var/tmp"))
        img = os.path.join(self.tmp, "ext4.img")
        with open(img, "wb") as f:
            f.truncate(2 << 30)
        self.dev = run(["losetup", "-f", "--show", img]).strip()
        self.mnt = None
        try:
            run(["mkfs.ext4", "-q", "-F", "-N", "2000000", self.dev])
            mnt = os.path.join(self.tmp, "mnt")
            os.mkdir(mnt)
            cmd = ["mount"] + (["-o", self.mount_opts] if self.mount_opts else []) + [self.dev, mnt]
            run(cmd)
            self.mnt = mnt
        except BaseException:
            self.__exit__()
            raise
        return self.mnt

    def __exit__(self, *exc):
        if self.mnt:
            subprocess.run(["umount", self.mnt])
        subprocess.run(["losetup", "-d", self.dev])
        shutil.rmtree(self.tmp, ignore_errors=True)


class Tmpfs:
    """A fresh directory under /dev/shm for one run."""

    def __init__(self, _mount_opts):
        pass

    def __enter__(self):
        self.d = tempfile.mkdtemp(prefix="storlab-mdcmp-", dir="/dev/shm")
        return self.d

    def __exit__(self, *exc):
        shutil.rmtree(self.d, ignore_errors=True)


FS = {"tmpfs": Tmpfs, "ext4": Ext4Loop}


def load():
    return os.getloadavg()[0]


def compare(args, fs, results):
    for ranks in args.ranks:
        for unique in args.dirs:
            key = (fs, ranks, "unique" if unique else "shared")
            rows = results.setdefault(key, [])
            for i in range(args.rounds):
                pair = {}
                order = [("storlab", storlab), ("mdtest", mdtest)]
                if i % 2:
                    order.reverse()
                loads = []
                for name, f in order:
                    with FS[fs](args.mount_options) as d:
                        os.sync()
                        loads.append(load())
                        pair[name] = f(args, d, ranks, unique)
                pair["load"] = statistics.mean(loads)
                rows.append(pair)
                print(f"{fs} np={ranks} {key[2]} round {i + 1} ({order[0][0]} first, load "
                      f"{pair['load']:.1f}): " + "  ".join(
                          f"{op} {pair['storlab'][op]:.0f}/{pair['mdtest'][op]:.0f}" for op in OPS),
                      flush=True)


def child_cpu(cmd):
    """Run `cmd`; its user and system CPU seconds (children reaped)."""
    a = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = run(cmd)
    b = resource.getrusage(resource.RUSAGE_CHILDREN)
    return b.ru_utime - a.ru_utime, b.ru_stime - a.ru_stime, out


def mdtest_cpu(args, fs, n):
    """mdtest's CPU per phase: one process (no mpirun), each phase its own
    invocation (-C, then -T, then -r on the same tree)."""
    out = {}
    with FS[fs](args.mount_options) as d:
        os.sync()
        for flag, op in (("-C", "create"), ("-T", "stat"), ("-r", "delete")):
            u, s, _ = child_cpu([args.mdtest, "-n", str(n), "-F", flag, "-d", os.path.join(d, "mdtest")])
            out[op] = (u, s)
    return out


def storlab_cpu(args, fs):
    """storlab's CPU per phase, as it measures it (the thread that does the
    operations, from the first to the last)."""
    with FS[fs](args.mount_options) as d:
        os.sync()
        r = json.loads(run([args.storlab, "md", d, "--files", str(args.files), "--ops", "create,stat,delete",
                            "--no-save", "-q", "--json"]))
    return {p["params"]["md"]["op"]: (p["cpu"]["user_ns"] / 1e9, p["cpu"]["sys_ns"] / 1e9) for p in r["phases"]}


def compare_cpu(args, fs):
    """CPU microseconds per item of each tool, one rank. On a loaded machine
    the wall rates follow each run's share of the CPUs; the CPU per item does
    not. mdtest's start (MPI_Init) is taken out by subtracting a 1-file run."""
    base = mdtest_cpu(args, fs, 1)
    rows = []
    for i in range(args.rounds):
        order = [("storlab", lambda: storlab_cpu(args, fs)), ("mdtest", lambda: mdtest_cpu(args, fs, args.files))]
        if i % 2:
            order.reverse()
        got = {name: f() for name, f in order}
        row = {}
        for op in OPS:
            su, ss = (x / args.files * 1e6 for x in got["storlab"][op])
            mu, ms = ((x - b) / (args.files - 1) * 1e6 for x, b in zip(got["mdtest"][op], base[op]))
            row[op] = (su, ss, mu, ms)
        rows.append(row)
        print(f"{fs} cpu round {i + 1} (load {load():.1f}): " + "  ".join(
            f"{op} {v[0] + v[1]:.2f}/{v[2] + v[3]:.2f}" for op, v in row.items()) + " us per item", flush=True)
    print()
    print(f"{'fs':6} {'op':7} {'storlab us/item':>22} {'mdtest us/item':>22} {'ratio':>6}")
    for op in OPS:
        s = [statistics.median(r[op][k] for r in rows) for k in range(4)]
        print(f"{fs:6} {op:7} {s[0] + s[1]:>6.2f} (user {s[0]:5.2f}) {s[2] + s[3]:>6.2f} (user {s[2]:5.2f}) "
              f"{(s[2] + s[3]) / (s[0] + s[1]):>6.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--files", type=int, default=100000, help="files per rank")
    ap.add_argument("--ranks", default="1,4")
    ap.add_argument("--dirs", default="unique,shared")
    ap.add_argument("--fs", default="tmpfs,ext4")
    ap.add_argument("--storlab", default="target/release/storlab")
    ap.add_argument("--mdtest", default="/work/peers-build/src/mdtest")
    ap.add_argument("--cpu", action="store_true",
                    help="measure CPU per item (one rank, mdtest's phases run separately) instead of rates")
    ap.add_argument("--mount-options", default="",
                    help="ext4 mount options, the same for both tools (e.g. noinit_itable)")
    args = ap.parse_args()
    # SIGTERM unwinds like Ctrl-C, so the loop device is unmounted and detached.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args.ranks = [int(x) for x in args.ranks.split(",")]
    args.dirs = [x == "unique" for x in args.dirs.split(",")]
    results = {}
    for fs in args.fs.split(","):
        if fs not in FS:
            sys.exit(f"unknown --fs {fs}: tmpfs or ext4")
        if fs == "ext4" and os.geteuid() != 0:
            print("SKIP ext4: needs root for a loop device", file=sys.stderr)
            continue
        if args.cpu:
            compare_cpu(args, fs)
        else:
            compare(args, fs, results)
    if args.cpu:
        return
    print()
    print(f"{'fs':6} {'np':>3} {'dir':7} {'op':7} {'storlab/s':>11} {'mdtest/s':>11} {'ratio':>6} "
          f"{'spread':>12} {'load':>5}")
    for (fs, ranks, dirs), rows in results.items():
        for op in OPS:
            s = statistics.median(r["storlab"][op] for r in rows)
            m = statistics.median(r["mdtest"][op] for r in rows)
            ratios = [r["storlab"][op] / r["mdtest"][op] for r in rows]
            print(f"{fs:6} {ranks:>3} {dirs:7} {op:7} {s:>11.0f} {m:>11.0f} "
                  f"{statistics.median(ratios):>6.2f} {min(ratios):>5.2f}-{max(ratios):<5.2f} "
                  f"{statistics.median(r['load'] for r in rows):>5.1f}")


if __name__ == "__main__":
    main()
