#!/usr/bin/env python3
"""Real-time priority in timed replays (issue 26): what it buys and what it
costs the machine.

Usage: scripts/compare-replay-rt.py [--storlab BIN] [--runs N] [--parts 1,2]
                                   [--dense-secs S] [--json-out FILE]

1. The 250-IOPS stream (a v3 iolog of 4 KiB reads, one every 4 ms, 2,000
   reads) replayed at `--speed original`, N times with real-time priority
   allowed and N times without (`STORLAB_NO_RT=1`), alternating: the
   replayed rate and the start lag's p50/p99/max of each run, and the
   medians. (Real time needs root or CAP_SYS_NICE.)
2. A dense trace (4 KiB reads 20 us apart, S seconds) replayed at
   `--speed original`, and beside it `sha256sum` of 100 MB (from
   /dev/zero through a pipe, so no disk is involved): the time it takes
   alone, beside the replay with real time allowed, and beside it with
   `STORLAB_NO_RT=1` (ordinary priority). A replay whose threads hold the
   CPUs at SCHED_FIFO stretches the ordinary process's time.

The load average is printed: quote it with the figures.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def write_stream(path, n, every_us, data="/app/data"):
    with open(path, "w") as f:
        f.write(f"fio version 3 iolog\n0 {data} add\n0 {data} open\n")
        for i in range(n):
            f.write(f"{i * every_us} {data} read {(i * 37 % 256) * 4096} 4096\n")
        f.write(f"{n * every_us} {data} close\n")


def replay(storlab, work, log, rt, tag):
    target = os.path.join(work, f"t-{tag}")
    os.makedirs(target, exist_ok=True)
    env = dict(os.environ)
    if not rt:
        env["STORLAB_NO_RT"] = "1"
    p = subprocess.run([storlab, "replay", log, target, "--json",
                        "--db", os.path.join(work, "r.db")],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"storlab replay failed ({p.returncode}):\n{p.stderr}")
    rep = json.loads(p.stdout)["replay"]
    rate = (rep.get("rate_ops_per_s") or {}).get("replayed") or float("nan")
    lag = rep["lag_ns"]
    return {"rt_allowed": rep.get("realtime"), "rt_ops": rep.get("realtime_ops"),
            "rate": rate, "p50_ms": lag["p50"] / 1e6, "p99_ms": lag["p99"] / 1e6,
            "max_ms": lag["max"] / 1e6}


def sha_time():
    t = time.monotonic()
    subprocess.run("head -c 100000000 /dev/zero | sha256sum", shell=True,
                   capture_output=True, check=True)
    return time.monotonic() - t


def beside(storlab, work, log, rt, tag):
    """sha256sum of 100 MB started 0.5 s into the dense replay."""
    target = os.path.join(work, f"d-{tag}")
    os.makedirs(target, exist_ok=True)
    env = dict(os.environ)
    if not rt:
        env["STORLAB_NO_RT"] = "1"
    p = subprocess.Popen([storlab, "replay", log, target, "--json",
                          "--db", os.path.join(work, "d.db")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(0.5)
    secs = sha_time()
    still = p.poll() is None
    out, err = p.communicate()
    if p.returncode != 0:
        sys.exit(f"storlab replay failed ({p.returncode}):\n{err}")
    doc = json.loads(out)
    return {"sha256sum_s": secs, "replay_still_running": still,
            "replay_ops_per_s": doc["phases"][0]["total"]["iops"],
            "rt_ops": doc["replay"].get("realtime_ops")}


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--storlab", default="target/release/storlab")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--parts", default="1,2")
    ap.add_argument("--dense-secs", type=float, default=4.0)
    ap.add_argument("--json-out", default=None)
    a = ap.parse_args()
    parts = {int(x) for x in a.parts.split(",")}
    work = tempfile.mkdtemp(prefix="compare-replay-rt-")
    result = {}
    try:
        if 1 in parts:
            log = os.path.join(work, "250.iolog")
            write_stream(log, 2000, 4000)
            runs = {"rt": [], "no_rt": []}
            for i in range(a.runs):
                order = ["rt", "no_rt"] if i % 2 == 0 else ["no_rt", "rt"]
                for who in order:
                    r = replay(a.storlab, work, log, who == "rt", f"{who}{i}")
                    r["load"] = load()
                    runs[who].append(r)
                    print(f"250-IOPS run {i + 1} {who:5}: {r['rate']:.2f} ops/s, lag p50 "
                          f"{r['p50_ms']:.4f} ms, p99 {r['p99_ms']:.3f} ms, max {r['max_ms']:.2f} ms, "
                          f"RT ops {r['rt_ops']} (load {r['load']})", flush=True)
            for who, rs in runs.items():
                print(f"{who}: median p99 {statistics.median(x['p99_ms'] for x in rs):.3f} ms, "
                      f"median max {statistics.median(x['max_ms'] for x in rs):.2f} ms, "
                      f"rates {min(x['rate'] for x in rs):.2f}-{max(x['rate'] for x in rs):.2f}")
            result["stream"] = runs
        if 2 in parts:
            log = os.path.join(work, "dense.iolog")
            write_stream(log, int(a.dense_secs * 50_000), 20)
            alone = [sha_time() for _ in range(3)]
            print(f"sha256sum of 100 MB alone: {statistics.median(alone):.2f} s "
                  f"(3 runs, load {load()})", flush=True)
            dense = {"alone_s": alone}
            for who in ["rt", "no_rt"]:
                r = beside(a.storlab, work, log, who == "rt", who)
                r["load"] = load()
                dense[who] = r
                print(f"sha256sum beside the dense replay, {who:5}: {r['sha256sum_s']:.2f} s "
                      f"(replay {r['replay_ops_per_s']:.0f} ops/s, RT ops {r['rt_ops']}, "
                      f"load {r['load']})", flush=True)
            result["dense"] = dense
        print(f"load average at the end: {load()} on {os.cpu_count()} CPUs")
        if a.json_out:
            with open(a.json_out, "w") as f:
                json.dump(result, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
