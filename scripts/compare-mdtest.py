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
    """A 2 GiB ext4 file system on a loop device, mounted on a temp dir."""

    def __enter__(self):
        self.tmp = tempfile.mkdtemp(prefix="storlab-mdcmp-", dir=os.environ.get("TMPDIR", "/var/tmp"))
        img = os.path.join(self.tmp, "ext4.img")
        with open(img, "wb") as f:
            f.truncate(2 << 30)
        self.dev = run(["losetup", "-f", "--show", img]).strip()
        run(["mkfs.ext4", "-q", "-F", "-N", "2000000", self.dev])
        self.mnt = os.path.join(self.tmp, "mnt")
        os.mkdir(self.mnt)
        run(["mount", self.dev, self.mnt])
        return self.mnt

    def __exit__(self, *exc):
        subprocess.run(["umount", self.mnt])
        subprocess.run(["losetup", "-d", self.dev])
        shutil.rmtree(self.tmp, ignore_errors=True)


def compare(args, fs, d, results):
    for ranks in args.ranks:
        for unique in args.dirs:
            key = (fs, ranks, "unique" if unique else "shared")
            rows = results.setdefault(key, [])
            for i in range(args.rounds):
                pair = {}
                order = [("storlab", storlab), ("mdtest", mdtest)]
                if i % 2:
                    order.reverse()
                for name, f in order:
                    os.sync()
                    pair[name] = f(args, d, ranks, unique)
                rows.append(pair)
                print(f"{fs} np={ranks} {key[2]} round {i + 1}: " + "  ".join(
                    f"{op} {pair['storlab'][op]:.0f}/{pair['mdtest'][op]:.0f}" for op in OPS),
                    flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--files", type=int, default=100000, help="files per rank")
    ap.add_argument("--ranks", default="1,4")
    ap.add_argument("--dirs", default="unique,shared")
    ap.add_argument("--fs", default="tmpfs,ext4")
    ap.add_argument("--storlab", default="target/release/storlab")
    ap.add_argument("--mdtest", default="/work/peers-build/src/mdtest")
    args = ap.parse_args()
    # SIGTERM unwinds like Ctrl-C, so the loop device is unmounted and detached.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args.ranks = [int(x) for x in args.ranks.split(",")]
    args.dirs = [x == "unique" for x in args.dirs.split(",")]
    results = {}
    for fs in args.fs.split(","):
        if fs == "tmpfs":
            d = tempfile.mkdtemp(prefix="storlab-mdcmp-", dir="/dev/shm")
            try:
                compare(args, fs, d, results)
            finally:
                shutil.rmtree(d, ignore_errors=True)
        elif fs == "ext4":
            if os.geteuid() != 0:
                print("SKIP ext4: needs root for a loop device", file=sys.stderr)
                continue
            with Ext4Loop() as d:
                compare(args, fs, d, results)
        else:
            sys.exit(f"unknown --fs {fs}: tmpfs or ext4")
    print()
    print(f"{'fs':6} {'np':>3} {'dir':7} {'op':7} {'storlab/s':>11} {'mdtest/s':>11} {'ratio':>6} {'spread':>12}")
    for (fs, ranks, dirs), rows in results.items():
        for op in OPS:
            s = statistics.median(r["storlab"][op] for r in rows)
            m = statistics.median(r["mdtest"][op] for r in rows)
            ratios = [r["storlab"][op] / r["mdtest"][op] for r in rows]
            print(f"{fs:6} {ranks:>3} {dirs:7} {op:7} {s:>11.0f} {m:>11.0f} "
                  f"{statistics.median(ratios):>6.2f} {min(ratios):>5.2f}-{max(ratios):<5.2f}")


if __name__ == "__main__":
    main()
