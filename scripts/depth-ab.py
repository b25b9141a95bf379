#!/usr/bin/env python3
"""A/B of storlab builds (or settings) on the achieved queue depth (issue 22).

For each case (4 KiB random read/write at a depth with an engine), runs every
variant in turn, alternating the order each round (A B, B A, ...), and
prints per case and variant the medians of: achieved depth as % of the
requested, IOPS, CPU per I/O (user+sys of the process from rusage / I/Os),
the runs that printed a depth warning, and the load average.

usage: scripts/depth-ab.py --target FILE_OR_DEV [--size 1G] [--rounds 5]
         [--runtime 3] [--cases randread:32:io_uring,randread:128:libaio,...]
         --variant LABEL=BIN[:VAR=VALUE[,VAR=VALUE...]] [--variant ...]
         [--json-out FILE]

A variant is a binary plus optional environment settings (e.g. the
diagnostic STORLAB_REFILL_TRACE=FILE). Reads on a block device need no
flag; writes to one are refused by storlab without --allow-destroy, which
this script never passes: give a file for write cases.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys

DEFAULT_CASES = "randread:32:io_uring,randread:128:io_uring,randread:32:libaio,randread:128:libaio"


def parse_variant(s):
    label, rest = s.split("=", 1)
    parts = rest.split(":", 1)
    env = {}
    if len(parts) > 1 and parts[1]:
        for kv in parts[1].split(","):
            k, v = kv.split("=", 1)
            env[k] = v
    return label, parts[0], env


def run_one(binary, env, target, size, rw, qd, engine, runtime):
    cmd = [binary, "bench", target, "--rw", rw, "--bs", "4k", "--iodepth", str(qd),
           "--engine", engine, "--size", size, "--runtime", f"{runtime}s", "--time-based",
           "--cache", "direct", "--output-format", "json", "--no-save"]
    e = dict(os.environ)
    e.update(env)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, env=e, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {p.stderr}")
    doc = json.loads(p.stdout)
    phases = doc["phases"] if isinstance(doc, dict) and "phases" in doc else doc
    ph = phases[0]
    d = ph["depth"]
    ios = ph["total"]["iops"] * ph["elapsed_ns"] / 1e9
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    warn = [w for w in ph.get("warnings", []) if "in flight on average" in w]
    return {
        "depth_pct": 100.0 * d["achieved"] / d["requested"],
        "iops": ph["total"]["iops"],
        "cpu_us": 1e6 * cpu / ios if ios else float("nan"),
        "warning": warn[0] if warn else None,
        "load": os.getloadavg()[0],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--size", default="1G")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=float, default=3)
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--variant", action="append", required=True)
    ap.add_argument("--json-out")
    a = ap.parse_args()
    variants = [parse_variant(v) for v in a.variant]
    results = {}
    for case in a.cases.split(","):
        rw, qd, engine = case.split(":")
        for r in range(a.rounds):
            order = variants if r % 2 == 0 else list(reversed(variants))
            for label, binary, env in order:
                res = run_one(binary, env, a.target, a.size, rw, int(qd), engine, a.runtime)
                results.setdefault(case, {}).setdefault(label, []).append(res)
                print(f"{case:22} {label:10} round {r}: depth {res['depth_pct']:5.1f} %  "
                      f"{res['iops']:8.0f} IOPS  {res['cpu_us']:5.2f} µs/IO  load {res['load']:.1f}"
                      + (f"  WARN: {res['warning']}" if res["warning"] else ""), flush=True)
    print("\nmedians:")
    for case, per in results.items():
        for label, runs in per.items():
            med = lambda k: statistics.median(x[k] for x in runs)
            print(f"{case:22} {label:10} depth {med('depth_pct'):5.1f} %  IOPS {med('iops'):8.0f}  "
                  f"CPU {med('cpu_us'):5.2f} µs/IO  warnings {sum(bool(x['warning']) for x in runs)}/"
                  f"{len(runs)}  load {med('load'):.1f}")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
