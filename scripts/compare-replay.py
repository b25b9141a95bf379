#!/usr/bin/env python3
"""Replay speed and timing of `storlab replay` against fio's `read_iolog`
(issue 26).

Usage: scripts/compare-replay.py [--dir DIR] [--rounds N] [--ops N]
                                 [--size MIB] [--storlab BIN] [--json-out FILE]
                                 [--own-ops N] [--parts 1,2,3]
                                 [--devices ram,vda,dir] [--loop MIB]

Part 3 runs on each of --devices in turn (root): `ram`, an ext4 on a
loop device backed by /dev/shm (CPU-bound: a difference is the tool's
own), and `vda`, an ext4 on a loop device backed by a file on the shared
disk (direct I/O: the device's request counts are this script's alone).
Its last lines are the goals, one line each per device. Needs fio (Debian package `fio`) and a
release build of storlab
(`cargo build --release`). Two measurements, in DIR (default: a new
directory under /tmp), everything removed at the end:

1. Speed: fio records an iolog (`write_iolog`) of N random 4 KiB reads
   (psync, buffered) on a file of SIZE MiB. Then, alternating A/B/A/B for
   ROUNDS rounds, fio replays it as fast as it goes (`read_iolog`,
   `replay_no_stall=1`, the file's cache invalidated first) and storlab
   replays it at `--speed max` (its own copy of the file, laid out and
   evicted from the page cache first). Each tool's IOPS is its own report
   (fio: read.iops; storlab: the phase's total IOPS, operations / time
   from the replay's start to the last completion). Printed: each round's
   ratio storlab/fio and their median.
2. Timing: a 250-IOPS stream (a v3 iolog of 4 KiB reads, one every 4 ms,
   8 s) replayed at `--speed original`: the replayed rate (issue times of
   the first and last operation) against the recorded one, and the start
   lag behind the recorded times (p50, p99, max), as storlab prints them.
3. Storlab's own iolog: `storlab bench --write-iolog` records a run of N
   (`--own-ops`, default 200,000) random 4 KiB reads (psync, cache cold: buffered after eviction, one job,
   the file kept), then storlab replays that iolog at `--speed max` twice,
   as it replays by default (no page-cache hint: the kernel's read-ahead,
   what the recording had) and with `--fadvise sequential` (the hint fio's
   `read_iolog` gives every file it opens: fio's `fadvise_hint=1` hints by
   the job's `rw`, which an iolog replay leaves at `read`), and fio replays
   it with `read_iolog` (`replay_no_stall=1`, `invalidate=1`, on the file
   the run kept). Each round records anew; the replays run in turn, the
   order reversed every other round. Printed: per round the replay's rate
   against the run that recorded it (storlab's default replay: the same
   device work as the recording) and against fio's replay (storlab with
   fio's hint: the same device work as fio; and, for information, storlab's
   default against fio), and their medians (the goals: >= 0.95 and >= 1.0);
   beside each tool's rate its CPU per operation (its own measured window,
   and the whole process from rusage) and the device's read requests and
   KiB per operation (/sys/dev/block/M:N/stat), the figures that stay put
   when a shared device makes the rates noisy (the hint shows there: fio
   and `--fadvise sequential` read ahead twice as far, so fewer, larger
   requests).

The load average at the end is printed (the machine is shared: figures on
a loaded machine are noisy; say so when quoting them).
"""

import argparse
import json
import os
import resource
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return p.stdout


def secs(text):
    """'12.34 µs' -> seconds."""
    m = re.match(r"\s*([0-9.]+)\s*(\S+)", text)
    if not m or m.group(2) not in UNITS:
        sys.exit(f"cannot read the duration {text!r}")
    return float(m.group(1)) * UNITS[m.group(2)]


def record_iolog(work, data, ops, size_mib):
    log = os.path.join(work, "recorded.iolog")
    run(["fio", "--name=rec", f"--filename={data}", f"--size={size_mib}M",
         "--rw=randread", "--bs=4k", "--ioengine=psync", f"--number_ios={ops}",
         f"--write_iolog={log}", "--output-format=json"])
    return log


def fio_replay(work, log, full=False):
    out = run(["fio", "--name=replay", f"--read_iolog={log}", "--ioengine=psync",
               "--replay_no_stall=1", "--invalidate=1", "--output-format=json"], cwd=work)
    job = json.loads(out)["jobs"][0]
    if not full:
        return job["read"]["iops"]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    cpu_ns = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] * 1e6
    return job["read"]["iops"], cpu_ns / max(ios, 1)


def device_stat(path):
    """(reads completed, sectors read) of the block device holding path."""
    dev = os.stat(path).st_dev
    p = f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/stat"
    try:
        with open(p) as f:
            v = [int(x) for x in f.read().split()]
        return v[0], v[2]
    except OSError:
        return 0, 0


class Measured:
    """A tool's run: its device reads and sectors, and its whole process's
    CPU (rusage of the child, layout included)."""

    def __init__(self, work):
        self.work = work

    def __enter__(self):
        self.dev0 = device_stat(self.work)
        self.ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return self

    def __exit__(self, *exc):
        d = device_stat(self.work)
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.reqs = d[0] - self.dev0[0]
        self.kib = (d[1] - self.dev0[1]) / 2
        self.cpu_s = (ru.ru_utime - self.ru0.ru_utime) + (ru.ru_stime - self.ru0.ru_stime)
        return False


def storlab_replay(storlab, work, log, data, speed, human=False, mapped=True, full=False,
                   fadvise=None):
    target = os.path.join(work, "target")
    os.makedirs(target, exist_ok=True)
    cmd = [storlab, "replay", log, target, "--speed", speed,
           "--db", os.path.join(work, "replay.db")]
    if fadvise:
        cmd += ["--fadvise", fadvise]
    if mapped:
        cmd += ["--map", f"{os.path.dirname(data)}=w"]
    if not human:
        cmd.append("--json")
    out = run(cmd)
    if human:
        return out
    phase = json.loads(out)["phases"][0]
    if full:
        return phase["total"]["iops"], phase["cpu"]["cpu_ns_per_io"]
    return phase["total"]["iops"]


def own_iolog(storlab, work, ops, rounds, dev=""):
    """Part 3: an iolog storlab recorded, replayed by storlab and by fio.
    Beside each rate: the tool's own CPU per operation over its measured
    window (bench and replay: their phase's cpu_ns_per_io; fio: usr+sys
    over the job's runtime), the whole process's CPU per operation (rusage
    of the child: bench and storlab replay include laying out and filling
    the file, fio's file exists), and the device's read requests and KiB
    per operation (/sys/dev/block/M:N/stat of the device under DIR: other
    processes' reads on it count too)."""
    out = []
    for r in range(rounds):
        target = os.path.join(work, f"bench{r}")
        os.makedirs(target)
        log = os.path.join(work, f"own{r}.iolog")
        with Measured(work) as m:
            doc = json.loads(run([storlab, "bench", target, "--rw", "randread", "--bs", "4k",
                                  "--size", f"{ops * 4}k", "--engine", "psync", "--cache", "cold",
                                  "--keep", "--no-save", "-q", "--json", "--write-iolog", log]))
        phase = doc["phases"][0]
        got = {"bench": (phase["total"]["iops"], phase["cpu"]["cpu_ns_per_io"], m)}
        order = ["storlab", "storlab-seq", "fio"]
        for who in order if r % 2 == 0 else order[::-1]:
            with Measured(work) as m:
                if who == "fio":
                    iops, cpu = fio_replay(work, log, full=True)
                else:
                    iops, cpu = storlab_replay(
                        storlab, work, log, os.path.join(target, "x"), "max", mapped=False,
                        full=True, fadvise="sequential" if who == "storlab-seq" else None)
            got[who] = (iops, cpu, m)
        row = {"load": open("/proc/loadavg").read().split()[0]}
        for who, (iops, cpu, m) in got.items():
            row[who] = {"iops": iops, "cpu_ns_per_op": cpu,
                        "process_cpu_us_per_op": m.cpu_s * 1e6 / ops,
                        "device_reads_per_op": m.reqs / ops,
                        "device_kib_per_op": m.kib / ops}
        row["vs_bench"] = row["storlab"]["iops"] / row["bench"]["iops"]
        row["vs_fio"] = row["storlab-seq"]["iops"] / row["fio"]["iops"]
        row["default_vs_fio"] = row["storlab"]["iops"] / row["fio"]["iops"]
        out.append(row)
        print(f"{dev} round {r + 1} (load {row['load']}): storlab replay / bench "
              f"{row['vs_bench']:.3f}; --fadvise sequential / fio {row['vs_fio']:.3f} "
              f"(default / fio {row['default_vs_fio']:.3f})", flush=True)
        for who in ["bench", "storlab", "storlab-seq", "fio"]:
            x = row[who]
            print(f"  {who:11} {x['iops']:9.0f} IOPS  CPU {x['cpu_ns_per_op'] / 1e3:6.2f} us/op "
                  f"(process {x['process_cpu_us_per_op']:6.2f} us/op)  device "
                  f"{x['device_reads_per_op']:.3f} reads/op, {x['device_kib_per_op']:.2f} KiB/op",
                  flush=True)
        shutil.rmtree(target, ignore_errors=True)
        os.remove(log)
    return out



class Workdir:
    """Where part 3 runs: `ram` an ext4 on a loop device backed by a file in
    /dev/shm (the loop driver's buffered I/O to tmpfs: every tool's path is
    CPU-bound and the device adds no noise of its own), `vda` an ext4 on a
    loop device backed by a file under ROOT with direct I/O (the shared
    virtio disk; the device's request counts are this script's alone),
    `dir` ROOT itself. Detached, unmounted and deleted on exit."""

    def __init__(self, root, kind, mib):
        self.root, self.kind, self.mib = root, kind, mib
        self.loop = self.backing = self.mnt = None

    def __enter__(self):
        if self.kind == "dir":
            self.path = os.path.join(self.root, "dir")
            os.makedirs(self.path)
            self.label = "dir (the file system under DIR)"
            return self
        if self.kind == "ram":
            self.backing = f"/dev/shm/compare-replay-{os.getpid()}.img"
            direct = "off"
        else:
            self.backing = os.path.join(self.root, "backing.img")
            direct = "on"
        with open(self.backing, "wb") as f:
            f.truncate(self.mib << 20)
        self.loop = run(["losetup", "--find", "--show", f"--direct-io={direct}",
                         self.backing]).strip()
        run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", self.loop])
        self.mnt = os.path.join(self.root, f"mnt-{self.kind}")
        os.makedirs(self.mnt)
        run(["mount", self.loop, self.mnt])
        self.path = os.path.join(self.mnt, "w")
        os.makedirs(self.path)
        where = "/dev/shm, RAM" if self.kind == "ram" else "a file on the virtio disk, direct I/O"
        self.label = f"{self.kind} (ext4 on {self.loop}, backed by {where})"
        return self

    def __exit__(self, *exc):
        if self.mnt:
            subprocess.run(["umount", self.mnt], check=False)
        if self.loop:
            subprocess.run(["losetup", "-d", self.loop], check=False)
        if self.backing and os.path.exists(self.backing):
            os.remove(self.backing)
        return False


def own_summary(own, dev, ops, rounds, label):
    """Part 3's medians on one device, and its two goal lines."""
    print(f"{label}: {ops} random 4 KiB reads, {rounds} rounds, medians:")
    for who in ["bench", "storlab", "storlab-seq", "fio"]:
        med = {k: statistics.median(x[who][k] for x in own)
               for k in ["iops", "cpu_ns_per_op", "process_cpu_us_per_op",
                         "device_reads_per_op", "device_kib_per_op"]}
        print(f"  {who:11} {med['iops']:9.0f} IOPS  CPU {med['cpu_ns_per_op'] / 1e3:6.2f} "
              f"us/op (process {med['process_cpu_us_per_op']:6.2f})  device "
              f"{med['device_reads_per_op']:.3f} reads/op, {med['device_kib_per_op']:.2f} KiB/op")
    loads = [float(x["load"]) for x in own]
    lines = []
    for key, what, goal in [
            ("vs_bench", "replay --speed max / the run that recorded it", 0.95),
            ("vs_fio", "replay --speed max --fadvise sequential / fio's read_iolog of the same "
                       "file (both hint sequential)", 1.0),
            ("default_vs_fio", "replay --speed max (no hint) / fio's read_iolog (information)",
             None)]:
        v = [x[key] for x in own]
        med = statistics.median(v)
        verdict = "" if goal is None else f"; goal >= {goal}: {'met' if med >= goal else 'NOT met'}"
        lines.append(f"{dev}: {what}: median {med:.3f} "
                     f"(range {min(v):.3f}-{max(v):.3f}, {len(v)} rounds, load "
                     f"{min(loads):.1f}-{max(loads):.1f}{verdict})")
    return lines


def timed(storlab, work):
    """A 250-IOPS v3 iolog replayed at its recorded timing."""
    data = "/app/timed.dat"
    log = os.path.join(work, "timed.iolog")
    with open(log, "w") as f:
        f.write(f"fio version 3 iolog\n0 {data} add\n0 {data} open\n")
        for i in range(2000):
            f.write(f"{i * 4000} {data} read {(i * 37 % 1024) * 4096} 4096\n")  # µs
        f.write(f"{2000 * 4000} {data} close\n")
    text = storlab_replay(storlab, work, log, data, "original", human=True)
    rate = re.search(r"rate: ([0-9.]+) operations/s replayed, ([0-9.]+) recorded", text)
    lag = re.search(r"start lag behind the recorded timing: p50 (.+?), p99 (.+?), max (.+)$",
                    text, re.M)
    if not rate or not lag:
        sys.exit(f"cannot read storlab's output:\n{text}")
    return {
        "replayed_iops": float(rate.group(1)),
        "recorded_iops": float(rate.group(2)),
        "lag_p50_ms": secs(lag.group(1)) * 1e3,
        "lag_p99_ms": secs(lag.group(2)) * 1e3,
        "lag_max_ms": secs(lag.group(3)) * 1e3,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ops", type=int, default=50000)
    ap.add_argument("--size", type=int, default=256, help="MiB")
    ap.add_argument("--storlab", default="target/release/storlab")
    ap.add_argument("--json-out", default=None)
    ap.add_argument("--own-ops", type=int, default=200000,
                    help="random 4 KiB reads of the storlab-recorded run (part 3; 200,000 "
                         "make runs of 4-7 s: at 20,000 a run lasts under half a second and "
                         "start-up decides the rate)")
    ap.add_argument("--parts", default="1,2,3", help="which parts to run (1,2,3)")
    ap.add_argument("--devices", default="ram,vda",
                    help="where part 3 runs, each in turn (root): ram = ext4 on a loop device "
                         "backed by a file in /dev/shm (--direct-io=off; CPU-bound, so a "
                         "difference is the tool's own), vda = ext4 on a loop device backed by a "
                         "file under DIR (direct I/O to the shared disk), dir = DIR itself")
    ap.add_argument("--loop", type=int, default=2560, metavar="MIB",
                    help="size of each loop device's ext4 (MiB)")
    a = ap.parse_args()
    parts = {int(x) for x in a.parts.split(",")}
    if not shutil.which("fio"):
        sys.exit("fio not found (Debian: apt-get install fio)")
    if not os.access(a.storlab, os.X_OK):
        sys.exit(f"{a.storlab} not found: cargo build --release (or give --storlab BIN)")
    root = tempfile.mkdtemp(prefix="compare-replay-", dir=a.dir)
    work = os.path.join(root, "plain")
    os.makedirs(work)
    devices = [d for d in a.devices.split(",") if d]
    for d in devices:
        if d not in ("ram", "vda", "dir"):
            sys.exit(f"--devices: {d!r} is not ram, vda or dir")
    try:
        result = {}
        if 1 in parts:
            data = os.path.join(work, "data")
            log = record_iolog(work, data, a.ops, a.size)
            rounds = []
            for r in range(a.rounds):
                f = fio_replay(work, log)
                s = storlab_replay(a.storlab, work, log, data, "max")
                rounds.append({"fio_iops": f, "storlab_iops": s, "ratio": s / f})
                print(f"round {r + 1}: storlab {s:.0f} IOPS, fio {f:.0f} IOPS, ratio {s / f:.3f}")
            median = statistics.median(x["ratio"] for x in rounds)
            spread = (min(x["ratio"] for x in rounds), max(x["ratio"] for x in rounds))
            print(f"--speed max vs fio read_iolog ({a.ops} random 4 KiB reads, {a.size} MiB): "
                  f"median ratio {median:.3f} (range {spread[0]:.3f} to {spread[1]:.3f})")
            result.update(rounds=rounds, median_ratio=median)
        if 2 in parts:
            t = timed(a.storlab, work)
            print(f"--speed original, 250 IOPS recorded: {t['replayed_iops']:.2f} IOPS replayed "
                  f"({t['recorded_iops']:.2f} recorded); start lag p50 {t['lag_p50_ms']:.3f} ms, "
                  f"p99 {t['lag_p99_ms']:.3f} ms, max {t['lag_max_ms']:.3f} ms")
            result.update(timed=t)
        if 3 in parts:
            goals = []
            for dev in devices:
                with Workdir(root, dev, a.loop) as wd:
                    own = own_iolog(a.storlab, wd.path, a.own_ops, a.rounds, dev)
                result[f"own_{dev}"] = own
                goals += own_summary(own, dev, a.own_ops, a.rounds, wd.label)
            print("goals (storlab-recorded iolog, --speed max; medians over rounds):")
            for line in goals:
                print("  " + line)
        with open("/proc/loadavg") as f:
            load = f.read().split()[:3]
        print(f"load average at the end: {' '.join(load)} on {os.cpu_count()} CPUs")
        result.update(load=load)
        if a.json_out:
            with open(a.json_out, "w") as f:
                json.dump(result, f, indent=1)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
