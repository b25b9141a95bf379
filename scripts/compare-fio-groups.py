#!/usr/bin/env python3
"""storlab's concurrent job groups against fio on the same two-job file.

One fio job file with a reader and a writer that no `stonewall` separates
(fio runs them at once) is run by fio (`--output-format=json`) and by
storlab (`storlab bench --fio-job FILE`: one phase of two groups),
alternating A/B/A/B in one directory. For each round the aggregate is
defined the same way for both tools: all bytes moved / the union window
(storlab: the phase's `total.bw_bytes_per_s`; fio: the sum of every job's
io_bytes / the longest job runtime). The medians and the median of the
per-round ratios storlab/fio are printed, overall and per job (storlab's
group over its own window against fio's job over its runtime).

Usage: scripts/compare-fio-groups.py [--dir DIR] [--rounds N] [--runtime SECS]
                                     [--size SIZE] [--bs BS] [--iodepth N]
                                     [--engine io_uring|libaio|psync]
                                     [--buffered] [--storlab BIN]

Needs fio and a release build of storlab (`cargo build --release`); DIR
should be on the file system under test (default: a temporary directory
under the current one).

Both tools start every round from the same state: no file of the round
exists, each lays out the reader's file itself right before its timed
window and writes the writer's file new. (Before, fio's directory was kept
across rounds, so from round 2 on fio read a file laid out rounds earlier
and overwrote its writer's old file, while storlab read a file it had just
laid out and wrote a new one: not the same workload on a virtual disk
whose host caches what was written last. `--reuse-fio-files` keeps that
old behaviour, for the A/B.) For each tool and round the block device's
own counters (/sys/block/DEV/stat, deltas; other programs' I/O on the
device counts too) are printed: requests, MiB, mean request size and mean
time per request, for reads and writes.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    return p.stdout


def job_file(a):
    direct = "0" if a.buffered else "1"
    return (
        "[global]\n"
        f"ioengine={a.engine}\n"
        f"direct={direct}\n"
        f"bs={a.bs}\n"
        f"iodepth={a.iodepth}\n"
        f"size={a.size}\n"
        f"runtime={a.runtime}\n"
        "time_based\n\n"
        "[reader]\nrw=read\n\n"
        "[writer]\nrw=write\n"
    )


def block_dev(path):
    """The /sys/block name of the disk holding path (a partition's parent)."""
    st = os.stat(path)
    sys_dev = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    real = os.path.realpath(sys_dev)
    if os.path.exists(os.path.join(real, "partition")):
        real = os.path.dirname(real)
    return os.path.basename(real)


def dev_stat(dev):
    if not dev:
        return None
    try:
        with open(f"/sys/block/{dev}/stat") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return None


def dev_delta(before, after):
    """Reads and writes on the device between two samples: (requests, MiB,
    mean KiB per request, mean ms per request) each, and flushes."""
    if not before or not after:
        return None
    d = [y - x for x, y in zip(before, after)]

    def side(ios, sectors, ticks):
        return (ios, sectors * 512 / 2**20, sectors * 512 / 1024 / ios if ios else 0.0,
                ticks / ios if ios else 0.0)
    flushes = d[15] if len(d) > 15 else 0
    return side(d[0], d[2], d[3]), side(d[4], d[6], d[7]), flushes


def fmt_dev(x):
    if not x:
        return "device counters unavailable"
    (ri, rm, rk, rt), (wi, wm, wk, wt), fl = x
    return (f"device: reads {ri} req {rm:.0f} MiB {rk:.0f} KiB/req {rt:.2f} ms/req; "
            f"writes {wi} req {wm:.0f} MiB {wk:.0f} KiB/req {wt:.2f} ms/req; flushes {fl}")


def clear(d):
    for name in os.listdir(d):
        p = os.path.join(d, name)
        if os.path.isfile(p):
            os.remove(p)


def fio_round(a, job, d):
    if not a.reuse_fio_files:
        clear(d)
    env = None
    if not a.fio_4k_buffers:
        # fio's I/O buffers in transparent huge pages, as storlab's are:
        # glibc's malloc then asks for them (its buffers are over the mmap
        # threshold set here), so a 1 MiB I/O is a few physical segments
        # and not split by the device's segment limit.
        env = dict(os.environ,
                   GLIBC_TUNABLES="glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=4194304")
    out = run(["fio", "--output-format=json", f"--directory={d}", job], env=env)
    doc = json.loads(out[out.index("{"):])
    jobs = {}
    total_bytes = 0
    longest_ms = 0
    for j in doc["jobs"]:
        b = j["read"]["io_bytes"] + j["write"]["io_bytes"]
        ms = max(j["read"]["runtime"], j["write"]["runtime"])
        jobs[j["jobname"]] = b / (ms / 1000) if ms else 0.0
        total_bytes += b
        longest_ms = max(longest_ms, ms)
    return total_bytes / (longest_ms / 1000), jobs


def storlab_round(a, job, d):
    out = run([a.storlab, "bench", "--fio-job", job, "--directory", d,
               "--no-save", "--output-format=json", "-q"])
    doc = json.loads(out)
    ph = doc["phases"][0]
    groups = {g["name"]: g["total"]["bw_bytes_per_s"] for g in ph["groups"]["groups"]}
    return ph["total"]["bw_bytes_per_s"], groups, ph["groups"]["overlap"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=10)
    ap.add_argument("--size", default="1G")
    ap.add_argument("--bs", default="1M")
    ap.add_argument("--iodepth", type=int, default=16)
    ap.add_argument("--engine", default="io_uring")
    ap.add_argument("--buffered", action="store_true")
    ap.add_argument("--storlab", default="target/release/storlab")
    ap.add_argument("--fio-4k-buffers", action="store_true",
                    help="leave fio's buffers in 4 KiB pages (the old, unequal setup: "
                         "each 1 MiB I/O splits into two requests on a 254-segment device)")
    ap.add_argument("--reuse-fio-files", action="store_true",
                    help="keep fio's files across rounds (the old, unequal setup)")
    a = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("fio is not installed (Debian: apt-get install fio)")
    base = a.dir or tempfile.mkdtemp(prefix="storlab-groups-", dir=".")
    job = os.path.join(base, "two-jobs.fio")
    with open(job, "w") as f:
        f.write(job_file(a))
    fio_dir = os.path.join(base, "fio")
    os.makedirs(fio_dir, exist_ok=True)
    agg = {"fio": [], "storlab": []}
    per = {"reader": [], "writer": []}
    ratios, overlaps = [], []
    dev = block_dev(base)
    try:
        for r in range(a.rounds):
            s0 = dev_stat(dev)
            f_agg, f_jobs = fio_round(a, job, fio_dir)
            s1 = dev_stat(dev)
            s_agg, s_groups, ov = storlab_round(a, job, base)
            s2 = dev_stat(dev)
            agg["fio"].append(f_agg)
            agg["storlab"].append(s_agg)
            ratios.append(s_agg / f_agg if f_agg else float("nan"))
            overlaps.append(ov)
            for name in per:
                if f_jobs.get(name):
                    per[name].append(s_groups.get(name, 0.0) / f_jobs[name])
            print(f"round {r + 1}: fio {f_agg / 1e6:.1f} MB/s, storlab {s_agg / 1e6:.1f} MB/s "
                  f"(ratio {ratios[-1]:.3f}, overlap {ov:.3f}); load {os.getloadavg()[0]:.1f}",
                  flush=True)
            print(f"  fio     {fmt_dev(dev_delta(s0, s1))}", flush=True)
            print(f"  storlab {fmt_dev(dev_delta(s1, s2))}", flush=True)
    finally:
        if not a.dir:
            shutil.rmtree(base, ignore_errors=True)
        else:
            shutil.rmtree(fio_dir, ignore_errors=True)
    med = statistics.median
    print(f"\n{a.engine} {'buffered' if a.buffered else 'direct'} bs={a.bs} QD{a.iodepth}, "
          f"reader + writer at once, {a.rounds} rounds of {a.runtime} s, fio's files "
          f"{'kept across rounds' if a.reuse_fio_files else 'new each round'}, fio's buffers in "
          f"{'4 KiB pages' if a.fio_4k_buffers else 'huge pages'}")
    print(f"aggregate MB/s (all bytes / union window): fio {med(agg['fio']) / 1e6:.1f}, "
          f"storlab {med(agg['storlab']) / 1e6:.1f}; median ratio {med(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
    for name, rs in per.items():
        if rs:
            print(f"  {name}: median ratio storlab group / fio job {med(rs):.3f}")
    print(f"storlab's overlap (all groups moving): median {med(overlaps):.3f}")


if __name__ == "__main__":
    main()
