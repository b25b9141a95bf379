#!/usr/bin/env python3
"""Run the same workloads with storlab and fio on the same file, alternating
A/B/A/B, and print the median ratio storlab/fio with its spread.

Usage: scripts/compare-fio.py [--dir DIR] [--rounds N] [--runtime SECS]
                              [--size SIZE] [--only NAME,...] [--all]
                              [--storlab BIN] [--json-out FILE]

Needs fio (Debian package `fio`) and a release build of storlab
(`cargo build --release`). The file is created and laid out once by fio,
then both tools run on it; it is removed at the end. Figures are each tool's
own report: IOPS, bandwidth (MB/s = 10^6 B/s), and CPU time per I/O
(user+sys of the whole process tree over the run, from rusage, / completed
I/Os), the figure the goals are set on.

The default selection is issue 22's cases: 4 KiB random read and write at
QD 1, 32 and 128 with io_uring and libaio (against fio's same engine),
1 MiB sequential at QD 16, psync at QD 1, the null engine (no device: the
tools' own cost), and two jobs x QD 64 (the aggregate against the device's
saturation, fio at QD 128 being the reference). `--all` adds the older
issue-2/15 cases (1 MiB at QD 1 and 32, page-cached psync).

The CPU per I/O is also split into user and system (kernel) time, the same
way for both tools: where both spend nearly all of it in the kernel's I/O
path (4 KiB at QD 1: a virtio notification and a sleep/wake-up per I/O),
the system-time ratio bounds what any change to storlab's own code can
reach. Each tool's system time per I/O is also fitted over its runs as
a + b/IOPS (a per I/O, b per second of run), which compares the kernel's
work per I/O between runs that ran at different device speeds.

Latency is printed beside fio's: storlab's mean (from the submitting system
call to the reap) with its achieved depth, fio's `lat` (slat + clat: from
when fio prepares the I/O) and `clat`, and IOPS x latency for each. Beside
each tool's own claim, the device's: the requests the kernel completed on
the block device holding the file (/sys/dev/block/M:m/stat, reads or writes
completed) per I/O the tool reports, and its mean queue (iostat's aqu-sz:
the weighted-time field over the run), measured the same way for both.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

# name, rw, bs, iodepth, direct, engine, warm page cache, numjobs, in default set
WORKLOADS = [
    ("randread-4k-qd1-uring", "randread", "4k", 1, True, "io_uring", False, 1, True),
    ("randread-4k-qd32-uring", "randread", "4k", 32, True, "io_uring", False, 1, True),
    ("randread-4k-qd128-uring", "randread", "4k", 128, True, "io_uring", False, 1, True),
    ("randwrite-4k-qd1-uring", "randwrite", "4k", 1, True, "io_uring", False, 1, True),
    ("randwrite-4k-qd32-uring", "randwrite", "4k", 32, True, "io_uring", False, 1, True),
    ("randwrite-4k-qd128-uring", "randwrite", "4k", 128, True, "io_uring", False, 1, True),
    ("randread-4k-qd1-libaio", "randread", "4k", 1, True, "libaio", False, 1, True),
    ("randread-4k-qd32-libaio", "randread", "4k", 32, True, "libaio", False, 1, True),
    ("randread-4k-qd128-libaio", "randread", "4k", 128, True, "libaio", False, 1, True),
    ("randwrite-4k-qd1-libaio", "randwrite", "4k", 1, True, "libaio", False, 1, True),
    ("randwrite-4k-qd32-libaio", "randwrite", "4k", 32, True, "libaio", False, 1, True),
    ("randwrite-4k-qd128-libaio", "randwrite", "4k", 128, True, "libaio", False, 1, True),
    ("read-1m-qd16-uring", "read", "1M", 16, True, "io_uring", False, 1, True),
    ("write-1m-qd16-uring", "write", "1M", 16, True, "io_uring", False, 1, True),
    ("read-1m-qd16-libaio", "read", "1M", 16, True, "libaio", False, 1, True),
    ("randread-4k-qd1-psync", "randread", "4k", 1, True, "psync", False, 1, True),
    ("randread-4k-qd32-null", "randread", "4k", 32, False, "null", False, 1, True),
    ("randread-4k-2x64-uring", "randread", "4k", 64, True, "io_uring", False, 2, True),
    # Older cases (issues 2 and 15), with --all.
    ("read-1m-qd1-uring", "read", "1M", 1, True, "io_uring", False, 1, False),
    ("read-1m-qd32-uring", "read", "1M", 32, True, "io_uring", False, 1, False),
    ("write-1m-qd1-uring", "write", "1M", 1, True, "io_uring", False, 1, False),
    ("write-1m-qd32-uring", "write", "1M", 32, True, "io_uring", False, 1, False),
    ("randread-4k-psync-cached", "randread", "4k", 1, False, "psync", True, 1, False),
    ("read-1m-qd32-libaio", "read", "1M", 32, True, "libaio", False, 1, False),
    ("write-1m-qd32-libaio", "write", "1M", 32, True, "libaio", False, 1, False),
]


def writes(rw):
    return rw in ("write", "randwrite")


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    return p.stdout


def device_stat_path(path):
    """/sys/.../stat of the block device (or partition) holding path, or None."""
    st = os.stat(path)
    sysdev = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}/stat"
    return sysdev if os.path.exists(sysdev) else None


def device_counters(stat_path):
    """(reads completed, writes completed, weighted ms with I/O queued) of the
    block stat file (fields 1, 5 and 11)."""
    if not stat_path:
        return None
    with open(stat_path) as f:
        v = f.read().split()
    return int(v[0]), int(v[4]), int(v[10])


def run_timed(cmd):
    """Run cmd; return (stdout, CPU seconds of the whole process tree).

    Both tools are measured the same way from outside: user+sys of every
    thread of every process they ran (io_uring workers included), which fio's
    own usr/sys figures (per job thread) leave out. Also sets run_timed.aqu
    (the device's mean queue over the run) and run_timed.dev_ios (reads and
    writes the device completed)."""
    import resource
    import time
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    stat_path = device_stat_path(run_timed.path) if getattr(run_timed, "path", None) else None
    c0, t0 = device_counters(stat_path), time.monotonic()
    out = run(cmd)
    c1, t1 = device_counters(stat_path), time.monotonic()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    run_timed.sys = after.ru_stime - before.ru_stime
    # Mean device queue over the whole run (start-up and layout included, a
    # little below the steady state for both tools alike). The device is
    # shared: other programs' I/O in the same seconds counts too.
    if stat_path:
        run_timed.aqu = (c1[2] - c0[2]) / ((t1 - t0) * 1e3)
        run_timed.dev_ios = (c1[0] - c0[0], c1[1] - c0[1])
    else:
        run_timed.aqu, run_timed.dev_ios = float("nan"), (0, 0)
    return out, cpu


def sys_fit(runs):
    """Fit each run's system time per I/O as a + b / IOPS over a tool's runs:
    a is the kernel's cost per I/O, b (ns per second of run) the system time
    not tied to an I/O (on a shared VM: interrupts and scheduling charged to
    whoever runs, start-up, the end fsync). Pairs at different IOPS compare
    per-I/O figures that mix the two; a compares like with like (issue 22's
    QD 1 writes). None when the IOPS did not vary."""
    xs = [1.0 / r["iops"] for r in runs if r["iops"] > 0]
    ys = [r["sys_ns_per_io"] for r in runs if r["iops"] > 0]
    if len(xs) < 3:
        return None
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return {"sys_ns_per_io": my - b * mx, "sys_ns_per_s": b}


def fio_json(text):
    # fio may print warnings before the JSON document.
    return json.loads(text[text.index("{"):])


def run_fio(w, path, size, runtime):
    name, rw, bs, qd, direct, engine, warm, jobs, _ = w
    cmd = ["fio", "--name=cmp", f"--filename={path}", f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}",
           f"--ioengine={engine}", f"--direct={1 if direct else 0}", f"--size={size}",
           f"--runtime={runtime}", "--time_based", "--output-format=json", f"--numjobs={jobs}",
           "--group_reporting"]
    if writes(rw) and engine != "null":
        cmd.append("--end_fsync=1")
    if warm:
        cmd.append("--invalidate=0")
    out, cpu_s = run_timed(cmd)
    j = fio_json(out)["jobs"][0]
    d = j["write"] if writes(rw) else j["read"]
    ios = d["total_ios"]
    runtime_ms = j["job_runtime"]
    own_cpu_ns = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * runtime_ms * 1e6
    return {"iops": d["iops"], "mbps": d["bw_bytes"] / 1e6, "cpu_ns_per_io": cpu_s * 1e9 / max(ios, 1),
            "sys_ns_per_io": run_timed.sys * 1e9 / max(ios, 1),
            "own_cpu_ns_per_io": own_cpu_ns / max(ios, 1),
            "lat_us": d["lat_ns"]["mean"] / 1e3, "clat_us": d["clat_ns"]["mean"] / 1e3,
            "iops_x_lat": d["iops"] * d["lat_ns"]["mean"] / 1e9,
            "iops_x_clat": d["iops"] * d["clat_ns"]["mean"] / 1e9,
            "device_aqu": run_timed.aqu, "device_per_io": device_per_io(rw, ios)}


def device_per_io(rw, ios):
    """Requests the device completed (in the tool's direction) per I/O the
    tool reports: 1.0 when every I/O reached the device as one request."""
    n = run_timed.dev_ios[1 if writes(rw) else 0]
    return n / ios if ios else float("nan")


def size_bytes(size):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    s = size.lower().rstrip("ib")
    return int(s[:-1]) * units[s[-1]] if s[-1] in units else int(s)


def run_storlab(binary, w, path, size, runtime):
    name, rw, bs, qd, direct, engine, warm, jobs, _ = w
    # fio's jobs each cover the whole file; storlab's share it (--shared-file
    # gives each job its own 1/jobs of the file), same bytes in all.
    cmd = [binary, "bench", path, f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}", f"--engine={engine}",
           f"--size={size_bytes(size) // jobs}", f"--runtime={runtime}s", "--time-based", "--output-format=json", "--quiet", "--no-save",
           f"--numjobs={jobs}"]
    if engine != "null":
        cmd += ["--cache", "direct" if direct else ("warm" if warm else "cold")]
    if jobs > 1:
        cmd.append("--shared-file")
    if writes(rw):
        cmd.append("--allow-destroy")
    out, cpu_s = run_timed(cmd)
    ph = json.loads(out)["phases"][0]
    d = ph["write"] if writes(rw) else ph["read"]
    lat = (d.get("lat_ns") or {}).get("mean", 0.0)
    return {"iops": d["iops"], "mbps": d["bw_bytes_per_s"] / 1e6, "cpu_ns_per_io": cpu_s * 1e9 / max(d["ops"], 1),
            "sys_ns_per_io": run_timed.sys * 1e9 / max(d["ops"], 1),
            "own_cpu_ns_per_io": ph["cpu"]["cpu_ns_per_io"],
            "lat_us": lat / 1e3, "iops_x_lat": d["iops"] * lat / 1e9,
            "depth": (ph.get("depth") or {}).get("achieved", float("nan")),
            "depth_warning": any("in flight on average" in x for x in ph.get("warnings", [])),
            "device_aqu": run_timed.aqu, "device_per_io": device_per_io(rw, d["ops"])}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=".", help="directory for the test file (default: .)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=8, help="seconds per run")
    ap.add_argument("--size", default="1G")
    ap.add_argument("--only", default="", help="comma-separated workload names")
    ap.add_argument("--all", action="store_true", help="also the older issue-2/15 cases")
    ap.add_argument("--json-out", default="", help="also write the results as JSON to this file")
    ap.add_argument("--storlab", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "storlab"))
    a = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("fio not found: apt-get install fio")
    if not os.path.exists(a.storlab):
        sys.exit(f"{a.storlab} not found: run cargo build --release")
    print("fio:", run(["fio", "--version"]).strip(), "| storlab:", run([a.storlab, "--version"]).strip())
    print("kernel:", os.uname().release, "| cpus:", os.cpu_count())
    tmp = tempfile.mkdtemp(prefix="storlab-vs-fio.", dir=a.dir)
    path = os.path.join(tmp, "cmp.dat")
    run_timed.path = tmp
    try:
        # Lay the file out once (fio writes it fully before its first read job).
        run(["fio", "--name=layout", f"--filename={path}", "--rw=write", "--bs=1M", f"--size={a.size}",
             "--direct=1", "--end_fsync=1", "--output-format=json"])
        if a.only:
            selected = [w for w in WORKLOADS if w[0] in a.only.split(",")]
        else:
            selected = [w for w in WORKLOADS if w[8] or a.all]
        rows = []
        for w in selected:
            res = {"storlab": [], "fio": []}
            for r in range(a.rounds):
                order = ["storlab", "fio"] if r % 2 == 0 else ["fio", "storlab"]
                for tool in order:
                    if tool == "fio":
                        res[tool].append(run_fio(w, path, a.size, a.runtime))
                    else:
                        res[tool].append(run_storlab(a.storlab, w, path, a.size, a.runtime))
            row = {"workload": w[0], "load_average": os.getloadavg()}
            for tool in ("storlab", "fio"):
                row[tool + "_latency"] = {k: statistics.median(x[k] for x in res[tool])
                                          for k in res[tool][0] if k not in ("iops", "mbps")}
            row["storlab_depth_warnings"] = sum(x["depth_warning"] for x in res["storlab"])
            row["pairs"] = res
            row["sys_fit"] = {tool: sys_fit(res[tool]) for tool in ("storlab", "fio")}
            for metric in ("iops", "mbps", "cpu_ns_per_io", "sys_ns_per_io", "own_cpu_ns_per_io"):
                ratios = [s[metric] / f[metric] for s, f in zip(res["storlab"], res["fio"]) if f[metric] > 0]
                row[metric] = {
                    "storlab_median": statistics.median(s[metric] for s in res["storlab"]),
                    "fio_median": statistics.median(f[metric] for f in res["fio"]),
                    "ratio_median": statistics.median(ratios),
                    "ratio_min": min(ratios),
                    "ratio_max": max(ratios),
                }
            rows.append(row)
            m = row
            print(f"{w[0]:32} IOPS {m['iops']['storlab_median']:>10.0f} vs {m['iops']['fio_median']:>10.0f} "
                  f"ratio {m['iops']['ratio_median']:.3f} [{m['iops']['ratio_min']:.3f}-{m['iops']['ratio_max']:.3f}]  "
                  f"MB/s {m['mbps']['storlab_median']:>8.1f} vs {m['mbps']['fio_median']:>8.1f}  "
                  f"CPU/IO {m['cpu_ns_per_io']['storlab_median']/1e3:>7.2f} vs {m['cpu_ns_per_io']['fio_median']/1e3:>7.2f} us "
                  f"ratio {m['cpu_ns_per_io']['ratio_median']:.3f} [{m['cpu_ns_per_io']['ratio_min']:.3f}-{m['cpu_ns_per_io']['ratio_max']:.3f}] "
                  f"(of it system {m['sys_ns_per_io']['storlab_median']/1e3:.2f} vs {m['sys_ns_per_io']['fio_median']/1e3:.2f} us) "
                  f"load {os.getloadavg()[0]:.1f}",
                  flush=True)
            sl, fl = m["storlab_latency"], m["fio_latency"]
            print(f"{'':32} latency: storlab {sl['lat_us']:.1f} us (depth {sl['depth']:.2f}, IOPSxlat {sl['iops_x_lat']:.2f}) | "
                  f"fio lat {fl['lat_us']:.1f} us clat {fl['clat_us']:.1f} us (IOPSxlat {fl['iops_x_lat']:.2f}, IOPSxclat {fl['iops_x_clat']:.2f}) | "
                  f"device aqu-sz storlab {sl['device_aqu']:.2f} fio {fl['device_aqu']:.2f} | "
                  f"device requests per I/O storlab {sl['device_per_io']:.2f} fio {fl['device_per_io']:.2f} | "
                  f"storlab depth warnings {m['storlab_depth_warnings']}/{a.rounds}", flush=True)
            fits = m["sys_fit"]
            if all(fits.values()):
                print(f"{'':32} system time fitted as a + b/IOPS: storlab {fits['storlab']['sys_ns_per_io']/1e3:.2f} us/IO "
                      f"+ {fits['storlab']['sys_ns_per_s']/1e6:.1f} ms/s, fio {fits['fio']['sys_ns_per_io']/1e3:.2f} us/IO "
                      f"+ {fits['fio']['sys_ns_per_s']/1e6:.1f} ms/s", flush=True)
        doc = json.dumps({"rounds": a.rounds, "runtime_s": a.runtime, "size": a.size,
                          "load_average_end": os.getloadavg(), "results": rows}, indent=1)
        if a.json_out:
            with open(a.json_out, "w") as f:
                f.write(doc)
        else:
            print(doc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
