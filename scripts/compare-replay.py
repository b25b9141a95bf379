#!/usr/bin/env python3
"""storlab replay against fio's read_iolog on the same recorded I/O, side by
side, alternating A/B/A/B; prints each round and the median ratio (issue 26).

Usage: scripts/compare-replay.py [--dir DIR] [--rounds N] [--ops N]
                                 [--size MIB] [--storlab BIN]

A fio v2 iolog of N random 4 KiB reads over a SIZE MiB file is written; both
tools replay it as fast as each allows (fio: `--read_iolog --replay_no_stall=1`,
psync, buffered; storlab: `replay --speed max`), each from a cold page cache
(fio invalidates the file before its job, storlab evicts its laid-out copy and
checks with mincore). Both files live in DIR on the same file system. The rate
is each tool's own report: fio's read IOPS, storlab's operations over its
replay window. A second part replays the same log at its recorded timing
(--rate-iops, default 250) with storlab and reports the achieved rate and the
start lag's p99.

Needs fio and a release build of storlab (`cargo build --release`).
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile


def write_file(path, size):
    with open(path, "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(size >> 20):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())


def write_iolog(path, target, ops, size, gap_us=0):
    """A fio v2 iolog of `ops` random 4 KiB reads of `target`, each after a
    `wait` of `gap_us` microseconds when a gap is asked for."""
    rnd = random.Random(42)
    blocks = size // 4096
    with open(path, "w") as f:
        f.write("fio version 2 iolog\n")
        f.write(f"{target} add\n{target} open\n")
        for _ in range(ops):
            if gap_us:
                f.write(f"{target} wait {gap_us} 0\n")
            f.write(f"{target} read {rnd.randrange(blocks) * 4096} 4096\n")
        f.write(f"{target} close\n")


def fio_rate(log, workdir):
    out = subprocess.run(
        ["fio", "--name=replay", f"--read_iolog={log}", "--ioengine=psync",
         "--replay_no_stall=1", "--invalidate=1", "--output-format=json",
         f"--directory={workdir}"],
        check=True, capture_output=True, text=True)
    j = json.loads(out.stdout)
    return j["jobs"][0]["read"]["iops"]


def storlab_replay(bin_, log, target, mapping, speed, db):
    out = subprocess.run(
        [bin_, "replay", log, target, "--speed", speed, "--map", mapping,
         "--json", "--db", db],
        check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument("--size", type=int, default=512, help="MiB")
    ap.add_argument("--rate-iops", type=int, default=250)
    ap.add_argument("--storlab", default="target/release/storlab")
    a = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("fio is not installed (apt-get install fio)")
    work = tempfile.mkdtemp(prefix="storlab-replay-", dir=a.dir)
    try:
        data = os.path.join(work, "app.dat")
        write_file(data, a.size << 20)
        log = os.path.join(work, "max.iolog")
        write_iolog(log, data, a.ops, a.size << 20)
        target = os.path.join(work, "t")
        os.mkdir(target)
        db = os.path.join(work, "r.db")
        ratios = []
        for r in range(a.rounds):
            f = fio_rate(log, work)
            s = storlab_replay(a.storlab, log, target, f"{data}=app.dat", "max", db)
            srate = s["phases"][0]["total"]["iops"]
            ratios.append(srate / f)
            print(f"round {r + 1}: storlab {srate:,.0f} IOPS, fio read_iolog {f:,.0f} IOPS, ratio {srate / f:.3f}")
        print(f"--speed max vs fio read_iolog: median ratio {statistics.median(ratios):.3f} "
              f"(range {min(ratios):.3f}-{max(ratios):.3f}, {a.rounds} rounds)")
        gap = 1_000_000 // a.rate_iops
        timed = os.path.join(work, "timed.iolog")
        write_iolog(timed, data, 4 * a.rate_iops, a.size << 20, gap_us=gap)
        for r in range(a.rounds):
            s = storlab_replay(a.storlab, timed, target, f"{data}=app.dat", "original", db)
            p = s["phases"][0]
            ops = p["total"]["ops"]
            lag = [w for w in p["warnings"] if w.startswith("start lag")]
            print(f"timed round {r + 1}: {ops} reads in {p['elapsed_ns'] / 1e9:.3f} s; {lag[0] if lag else ''}")
        print(f"(load average: {os.getloadavg()[0]:.1f})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
