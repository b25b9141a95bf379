#!/usr/bin/env python3
"""Issue 22 (helper wgap): the virtio disk's 4 KiB random-write rate against
the depth the device itself holds, for fio and storlab alike.

Each variant is one tool at one requested depth (plus options); variants run
in alternating order (A B C …, … C B A) for --rounds rounds, --runtime seconds
each, on one file laid out by fio. While a run goes, the block device's stat
file is sampled every 50 ms; the *steady window* is the run's sampled
intervals with writes, less the first and last 0.3 s (start-up and the end
fsync stay out). Per variant it prints the medians of: the tool's own IOPS, the
device's completed writes per second in the window, the device's mean queue
(aqu-sz: weighted time in queue / window), the device's time per write (aqu /
rate, Little's law), and the tool's CPU per I/O (rusage of the process tree).

A variant is LABEL=TOOL:QD[:extra,options] with TOOL fio or storlab, extra
options comma-separated in the tool's own syntax, e.g.
  fio128=fio:128  s128=storlab:128  s48=storlab:48
  fio128b=fio:128:--iodepth_batch_submit=32,--iodepth_batch_complete_min=32
  sZero=storlab:128:--buffer-pattern=zero  fNomap=fio:128:--norandommap=1
Items NAME=VALUE among the options set the tool's environment instead, except
SPIN=N (N busy loops at SCHED_IDLE beside the run), PIN=C (run the tool on CPU
C only) and BUSY=1 (with PIN: a busy loop at normal priority on that CPU).
The busy column is the tool's CPU-seconds per second of run (1.0: a
one-thread tool is CPU-bound). Issue 22's A/Bs (docs/PERFORMANCE.md):
  scripts/write-gap-ab.py --dir /var/tmp --rounds 5 s128=storlab:128 \
    f128=fio:128 sZero=storlab:128:--buffer-pattern=zero \
    sNomap=storlab:128:--random-with-replacement=1 fNomap=fio:128:--norandommap=1 \
    s64=storlab:64 --ratio s128/f128 --ratio sZero/s128 --ratio sNomap/s128 \
    --ratio fNomap/f128 --ratio s64/s128

Prints one line per variant, then one ratio line per goal given with
--ratio A/B (median IOPS of A over B)."""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def stat_path(path):
    st = os.stat(path)
    p = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}/stat"
    if not os.path.exists(p):
        sys.exit(f"no block stat file for {path} ({p}); use a file on a block device")
    return p


def counters(p):
    with open(p) as f:
        v = [int(x) for x in f.read().split()]
    return v[4], v[7], v[10]  # writes completed, write ms, weighted ms in queue


def run_sampled(cmd, sp):
    # Items NAME=VALUE (no leading dash) among the options set the tool's
    # environment instead of its command line.
    env = dict(os.environ)
    for x in [c for c in cmd if not c.startswith("-") and "=" in c and c.split("=")[0].isupper()]:
        cmd.remove(x)
        k, _, v = x.partition("=")
        env[k] = v
    # SPIN=N: N busy loops at SCHED_IDLE beside the tool, so no vCPU halts
    # while the tool sleeps for completions (they yield to any other task).
    spinners = [subprocess.Popen(["chrt", "-i", "0", "sh", "-c", "while :; do :; done"])
                for _ in range(int(env.pop("SPIN", "0")))]
    # PIN=C: the tool runs on CPU C only; BUSY=1 adds a busy loop at normal
    # priority on that CPU, so the tool gets about half of it (CPU-bound, as
    # fio is at QD 128 on a quiet machine).
    pin = env.pop("PIN", None)
    if pin is not None:
        cmd = ["taskset", "-c", pin] + cmd
        if env.pop("BUSY", "0") == "1":
            spinners.append(subprocess.Popen(["taskset", "-c", pin, "sh", "-c", "while :; do :; done"]))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    samples = [(0.0, counters(sp))]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    while proc.poll() is None:
        time.sleep(0.05)
        samples.append((time.monotonic() - t0, counters(sp)))
    out, err = proc.communicate()
    samples.append((time.monotonic() - t0, counters(sp)))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    for sp_ in spinners:
        sp_.kill()
        sp_.wait()
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{err}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    active = [i for i in range(1, len(samples)) if samples[i][1][0] - samples[i - 1][1][0] > 100]
    dev = {"dev_wps": float("nan"), "aqu": float("nan"), "dev_us_per_w": float("nan")}
    if active:
        ta, tb = samples[active[0] - 1][0] + 0.3, samples[active[-1]][0] - 0.3
        win = [s for s in samples if ta <= s[0] <= tb]
        if len(win) >= 2:
            (t1, a), (t2, b) = win[0], win[-1]
            dt = t2 - t1
            w = b[0] - a[0]
            dev = {"dev_wps": w / dt, "aqu": (b[2] - a[2]) / (dt * 1e3),
                   "dev_us_per_w": (b[2] - a[2]) * 1e3 / max(w, 1)}
    return out, cpu, dev


def fio_cmd(path, size, qd, engine, runtime, extra):
    return ["fio", "--name=curve", f"--filename={path}", "--rw=randwrite", "--bs=4k", f"--iodepth={qd}",
            f"--ioengine={engine}", "--direct=1", f"--size={size}", f"--runtime={runtime}", "--time_based",
            "--end_fsync=1", "--output-format=json"] + extra


def storlab_cmd(binary, path, size, qd, engine, runtime, extra):
    return [binary, "bench", path, "--rw=randwrite", "--bs=4k", f"--iodepth={qd}", f"--engine={engine}",
            f"--size={size}", f"--runtime={runtime}s", "--time-based", "--output-format=json", "--quiet",
            "--no-save", "--cache", "direct", "--allow-destroy"] + extra


def parse_variant(s):
    label, _, rest = s.partition("=")
    parts = rest.split(":", 2)
    if len(parts) < 2 or parts[0] not in ("fio", "storlab"):
        sys.exit(f"bad variant {s!r}: want LABEL=fio|storlab:QD[:opts]")
    extra = parts[2].split(",") if len(parts) == 3 and parts[2] else []
    return label, parts[0], int(parts[1]), extra


def one_run(v, a, path, sp):
    label, tool, qd, extra = v
    if tool == "fio":
        out, cpu, dev = run_sampled(fio_cmd(path, a.size, qd, a.engine, a.runtime, extra), sp)
        j = json.loads(out[out.index("{"):])["jobs"][0]
        iops, ios, lat = j["write"]["iops"], j["write"]["total_ios"], j["write"]["lat_ns"]["mean"]
    else:
        size = a.size_bytes
        out, cpu, dev = run_sampled(storlab_cmd(a.storlab, path, size, qd, a.engine, a.runtime, extra), sp)
        ph = json.loads(out)["phases"][0]
        iops, ios = ph["write"]["iops"], ph["write"]["ops"]
        lat = (ph["write"].get("lat_ns") or {}).get("mean", float("nan"))
    # busy: CPU seconds the tool spent per second of its run; near 1.0 a
    # one-thread tool is CPU-bound and its completions wait to be reaped.
    return dict(dev, iops=iops, lat_us=lat / 1e3, cpu_us_per_io=cpu * 1e6 / max(ios, 1),
                busy=cpu * 1e6 / max(ios, 1) * iops / 1e6, load=os.getloadavg()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--dir", default="/var/tmp")
    ap.add_argument("--size", default="1G")
    ap.add_argument("--engine", default="libaio")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=3)
    ap.add_argument("--ratio", action="append", default=[], help="A/B: print median IOPS of A over B")
    ap.add_argument("--json-out", default="")
    ap.add_argument("--storlab", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "storlab"))
    a = ap.parse_args()
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    s = a.size.lower().rstrip("ib")
    a.size_bytes = int(s[:-1]) * units[s[-1]] if s[-1] in units else int(s)
    variants = [parse_variant(v) for v in a.variants]
    tmp = tempfile.mkdtemp(prefix="storlab-write-gap.", dir=a.dir)
    path = os.path.join(tmp, "curve.dat")
    try:
        subprocess.run(["fio", "--name=layout", f"--filename={path}", "--rw=write", "--bs=1M",
                        f"--size={a.size}", "--direct=1", "--end_fsync=1", "--output-format=json"],
                       check=True, capture_output=True)
        sp = stat_path(path)
        print(f"device stat {sp}; uptime: {open('/proc/loadavg').read().strip()}", flush=True)
        res = {v[0]: [] for v in variants}
        for r in range(a.rounds):
            order = variants if r % 2 == 0 else variants[::-1]
            for v in order:
                x = one_run(v, a, path, sp)
                res[v[0]].append(x)
                print(f"  round {r} {v[0]:>10}: IOPS {x['iops']:8.0f} dev w/s {x['dev_wps']:8.0f} aqu {x['aqu']:6.1f} "
                      f"dev {x['dev_us_per_w']:6.0f} us/w lat {x['lat_us']:6.0f} us CPU {x['cpu_us_per_io']:5.2f} us/IO busy {x['busy']:.2f} "
                      f"load {x['load']:.1f}", flush=True)
        med = {}
        for label, runs in res.items():
            med[label] = {k: statistics.median(x[k] for x in runs) for k in runs[0]}
            m = med[label]
            print(f"{label:>10}: IOPS {m['iops']:8.0f} (min {min(x['iops'] for x in runs):.0f} max "
                  f"{max(x['iops'] for x in runs):.0f}) device w/s {m['dev_wps']:8.0f} aqu {m['aqu']:6.1f} "
                  f"device {m['dev_us_per_w']:5.0f} us/write, tool lat {m['lat_us']:5.0f} us, CPU {m['cpu_us_per_io']:.2f} us/IO, "
                  f"busy {m['busy']:.2f} CPU-s/s, load {m['load']:.1f}")
        for q in a.ratio:
            x, _, y = q.partition("/")
            ratios = [p["iops"] / r["iops"] for p, r in zip(res[x], res[y])]
            print(f"ratio {x}/{y} IOPS {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")
        print(f"uptime at end: {open('/proc/loadavg').read().strip()}")
        if a.json_out:
            with open(a.json_out, "w") as f:
                json.dump({"variants": a.variants, "runs": res, "median": med}, f, indent=1)
    finally:
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
