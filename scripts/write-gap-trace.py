#!/usr/bin/env python3
"""Issue 22 (helper wgap): where a 4 KiB random write spends its time in the
guest's block layer, per tool, from the kernel's block tracepoints.

Runs the command given after `--` (fio or storlab, one job, on a file of the
block device DEV), and from --start seconds for --seconds records, in a
private ftrace instance, block_bio_queue (Q: the bio enters the block layer,
in the submitter's system call), block_rq_issue (D: handed to the driver,
virtio) and block_rq_complete (C) for DEV. Each write is followed by its
sector, and it prints per tool run: writes traced, mean and median Q->D (time
the write spends in the guest before the driver: plug list and scheduler) and
D->C (the device: virtio queue, host, completion interrupt), the mean number
of writes between D and C (the device's own queue), and how many were handed
to the driver per issue burst (consecutive D events with no other event
between). Needs root and tracefs (/sys/kernel/tracing)."""
import argparse
import os
import statistics
import subprocess
import sys
import time

T = "/sys/kernel/tracing"


def w(path, val):
    with open(path, "w") as f:
        f.write(val)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dev", default="vda")
    ap.add_argument("--start", type=float, default=1.5)
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--label", default="run")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        sys.exit("give the command to trace after --")
    if not os.path.isdir(T):
        sys.exit(f"{T} not found: mount -t tracefs nodev {T}")
    maj, mnr = open(f"/sys/block/{a.dev}/dev").read().strip().split(":")
    devt = (int(maj) << 20) | int(mnr)
    inst = f"{T}/instances/storlab-write-gap-{os.getpid()}"
    os.mkdir(inst)
    try:
        w(f"{inst}/buffer_size_kb", "131072")
        w(f"{inst}/trace_clock", "mono")
        w(f"{inst}/tracing_on", "0")
        for ev in ("block_bio_queue", "block_rq_issue", "block_rq_complete", "block_rq_requeue"):
            w(f"{inst}/events/block/{ev}/filter", f"dev == {devt}")
            w(f"{inst}/events/block/{ev}/enable", "1")
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(a.start)
        w(f"{inst}/tracing_on", "1")
        time.sleep(a.seconds)
        w(f"{inst}/tracing_on", "0")
        p.wait()
        with open(f"{inst}/trace") as f:
            lines = f.read().splitlines()
    finally:
        for ev in ("block_bio_queue", "block_rq_issue", "block_rq_complete", "block_rq_requeue"):
            try:
                w(f"{inst}/events/block/{ev}/enable", "0")
            except OSError:
                pass
        os.rmdir(inst)
    ev_list = []
    for ln in lines:
        if ln.startswith("#") or ": block_" not in ln:
            continue
        head, _, rest = ln.partition(": block_")
        ts = float(head.split()[-1])
        name, _, body = rest.partition(": ")
        parts = body.split()
        if len(parts) < 2 or "W" not in parts[1]:
            continue
        # "254,0 WS 4096 () 123456 + 8 ..." (rq_issue) / "254,0 WS 123456 + 8 [comm]" (bio_queue)
        try:
            i = parts.index("+")
            sector = int(parts[i - 1])
        except (ValueError, IndexError):
            continue
        ev_list.append((ts, name, sector))
    ev_list.sort()
    q, d = {}, {}
    qd, dc = [], []
    bursts, run = [], 0
    last_t = None
    t0 = ev_list[0][0] if ev_list else 0.0
    for ts, name, sector in ev_list:
        last_t = ts
        if name == "rq_issue":
            run += 1
        elif run:
            bursts.append(run)
            run = 0
        if name == "bio_queue":
            q[sector] = ts
        elif name == "rq_issue":
            d[sector] = ts
            if sector in q:
                qd.append(ts - q.pop(sector))
        elif name == "rq_requeue":
            # The driver refused it (virtio ring full): it goes back to the
            # block layer and is issued again later.
            d.pop(sector, None)
        elif name == "rq_complete":
            if sector in d:
                dc.append(ts - d.pop(sector))
    span = (last_t - t0) if last_t else 0.0
    n_rq = sum(1 for e in ev_list if e[1] == "rq_requeue")
    if not dc:
        sys.exit("no writes traced")
    us = lambda v: v * 1e6  # noqa: E731
    print(f"{a.label}: {len(dc)} writes in {span:.2f} s ({len(dc) / max(span, 1e-9):.0f}/s); "
          f"Q->D mean {us(statistics.mean(qd)):.0f} us median {us(statistics.median(qd)):.0f} us; "
          f"D->C mean {us(statistics.mean(dc)):.0f} us median {us(statistics.median(dc)):.0f} us; "
          f"in the device on average {len(dc) / max(span, 1e-9) * statistics.mean(dc):.1f}; "
          f"requeued by the driver {n_rq} ({n_rq / len(dc):.3f} per write); "
          f"writes per issue burst mean {statistics.mean(bursts) if bursts else 0:.1f}; "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
