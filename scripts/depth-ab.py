#!/usr/bin/env python3
"""A/B of storlab builds (or settings) on the achieved queue depth (issue 22).

For each case (4 KiB random read/write at a depth with an engine), runs every
variant in turn, alternating the order each round (A B, B A, ...), and
prints per case and variant the medians of: achieved depth as % of the
requested, IOPS, CPU per I/O (user+sys of the process from rusage / I/Os),
the device's own mean queue over the run (aqu-sz, from its /sys stat) and
requests per I/O, the runs that printed a depth warning, and the load
average. With --threads it also samples /proc/PID/task/*/stat while each run
goes and prints the CPU of the threads other than storlab's own (an
SQPOLL ring's kernel thread "iou-sqp-PID", io-wq workers) and checks that
rusage counted them.

usage: scripts/depth-ab.py --target FILE_OR_DEV [--size 1G] [--rounds 5]
         [--runtime 3] [--cases randread:32:io_uring,randread:128:libaio,...]
         --variant LABEL=BIN[:ITEM,ITEM...] [--variant ...] [--threads]
         [--json-out FILE]

A variant is a binary plus optional items: VAR=VALUE sets an environment
variable (e.g. the diagnostic STORLAB_REFILL_TRACE=FILE), --flag=VALUE
adds a command-line option (e.g. --sqpoll=1, --iodepth-batch=2), --flag alone
a switch. Reads on a block device need no flag; writes to one are refused by
storlab without --allow-destroy, which this script passes only for write
cases on a regular file (--target must then be a scratch file of your own:
its contents are overwritten).
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

DEFAULT_CASES = "randread:32:io_uring,randread:128:io_uring,randread:32:libaio,randread:128:libaio"
TICK = os.sysconf("SC_CLK_TCK")


def parse_variant(s):
    label, rest = s.split("=", 1)
    parts = rest.split(":", 1)
    env, args = {}, []
    if len(parts) > 1 and parts[1]:
        for item in parts[1].split(","):
            if item.startswith("--") and "=" not in item:
                args.append(item)
                continue
            k, v = item.split("=", 1)
            if k.startswith("--"):
                args.append(f"{k}={v}")
            else:
                env[k] = v
    return label, parts[0], env, args


def device_stat_path(path):
    """/sys/.../stat of the block device (or partition) holding path, or None."""
    st = os.stat(path)
    dev = st.st_rdev if os.path.exists(path) and (st.st_mode & 0o170000) == 0o060000 else st.st_dev
    sysdev = f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/stat"
    return sysdev if os.path.exists(sysdev) else None


def device_counters(stat_path):
    """(reads + writes completed, weighted ms with I/O queued) (fields 1, 5, 11)."""
    if not stat_path:
        return None
    with open(stat_path) as f:
        v = f.read().split()
    return int(v[0]) + int(v[4]), int(v[10])


def task_times(pid):
    """{tid: (comm, CPU seconds)} of every thread of pid now."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                s = f.read()
        except OSError:
            continue
        comm = s[s.index("(") + 1:s.rindex(")")]
        f = s[s.rindex(")") + 2:].split()
        # fields 14, 15 (utime, stime) are f[11], f[12] after "pid (comm) ".
        out[tid] = (comm, (int(f[11]) + int(f[12])) / TICK)
    return out


def run_one(binary, env, args, target, size, rw, qd, engine, runtime, threads):
    cmd = [binary, "bench", target, "--rw", rw, "--bs", "4k", "--iodepth", str(qd),
           "--engine", engine, "--size", size, "--runtime", f"{runtime}s", "--time-based",
           "--cache", "direct", "--output-format", "json", "--no-save"] + args
    if "write" in rw and os.path.isfile(target):
        # The scratch file given as --target (never a block device).
        cmd.append("--allow-destroy")
    e = dict(os.environ)
    e.update(env)
    stat_path = device_stat_path(target)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    c0, t0 = device_counters(stat_path), time.monotonic()
    p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = {}
    if threads:
        # The last reading of each thread before it (or the process) ended.
        while p.poll() is None:
            seen.update(task_times(p.pid))
            time.sleep(0.05)
    out, err = p.communicate()
    c1, t1 = device_counters(stat_path), time.monotonic()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {err}")
    doc = json.loads(out)
    phases = doc["phases"] if isinstance(doc, dict) and "phases" in doc else doc
    ph = phases[0]
    d = ph["depth"]
    ios = ph["total"]["iops"] * ph["elapsed_ns"] / 1e9
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    warn = [w for w in ph.get("warnings", []) if "in flight on average" in w]
    res = {
        "depth_pct": 100.0 * d["achieved"] / d["requested"],
        "iops": ph["total"]["iops"],
        "cpu_us": 1e6 * cpu / ios if ios else float("nan"),
        "warning": warn[0] if warn else None,
        "load": os.getloadavg()[0],
        # Whole run (start-up included), and shared with any other I/O.
        "aqu": (c1[1] - c0[1]) / ((t1 - t0) * 1e3) if stat_path else float("nan"),
        "dev_per_io": (c1[0] - c0[0]) / ios if stat_path and ios else float("nan"),
    }
    if threads:
        tasks = seen.values()
        other = [(c, t) for c, t in tasks if not c.startswith("storlab")
                 and not c.startswith("job")]
        res["threads"] = sorted({c for c, _ in tasks})
        res["tasks_cpu_s"] = sum(t for _, t in tasks)
        res["rusage_cpu_s"] = cpu
        res["other_cpu_us"] = 1e6 * sum(t for _, t in other) / ios if ios else float("nan")
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--size", default="1G")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=float, default=3)
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--variant", action="append", required=True)
    ap.add_argument("--threads", action="store_true",
                    help="sample each thread's CPU from /proc while the run goes")
    ap.add_argument("--json-out")
    a = ap.parse_args()
    variants = [parse_variant(v) for v in a.variant]
    results = {}
    for case in a.cases.split(","):
        rw, qd, engine = case.split(":")
        for r in range(a.rounds):
            order = variants if r % 2 == 0 else list(reversed(variants))
            for label, binary, env, args in order:
                res = run_one(binary, env, args, a.target, a.size, rw, int(qd), engine,
                              a.runtime, a.threads)
                results.setdefault(case, {}).setdefault(label, []).append(res)
                extra = ""
                if a.threads:
                    extra = (f"  threads {','.join(res['threads'])}: /proc {res['tasks_cpu_s']:.2f} s"
                             f" rusage {res['rusage_cpu_s']:.2f} s, others {res['other_cpu_us']:.2f} µs/IO")
                print(f"{case:22} {label:10} round {r}: depth {res['depth_pct']:5.1f} %  "
                      f"{res['iops']:8.0f} IOPS  {res['cpu_us']:5.2f} µs/IO  aqu-sz {res['aqu']:6.2f}  "
                      f"dev/IO {res['dev_per_io']:4.2f}  load {res['load']:.1f}{extra}"
                      + (f"  WARN: {res['warning']}" if res["warning"] else ""), flush=True)
    print("\nmedians:")
    for case, per in results.items():
        for label, runs in per.items():
            def med(k):
                return statistics.median(x[k] for x in runs)
            extra = f"  others {med('other_cpu_us'):5.2f} µs/IO" if a.threads else ""
            print(f"{case:22} {label:10} depth {med('depth_pct'):5.1f} %  IOPS {med('iops'):8.0f}  "
                  f"CPU {med('cpu_us'):5.2f} µs/IO{extra}  aqu-sz {med('aqu'):6.2f}  "
                  f"warnings {sum(bool(x['warning']) for x in runs)}/{len(runs)}  "
                  f"load {med('load'):.1f}")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
