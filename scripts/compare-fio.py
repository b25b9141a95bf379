#!/usr/bin/env python3
"""Run the same workloads with storlab and fio on the same file, alternating
A/B/A/B, and print the median ratio storlab/fio with its spread.

Usage: scripts/compare-fio.py [--dir DIR] [--rounds N] [--runtime SECS]
                              [--size SIZE] [--only NAME,...] [--storlab BIN]

Needs fio (Debian package `fio`) and a release build of storlab
(`cargo build --release`). The file is created and laid out once by fio,
then both tools run on it; it is removed at the end. Figures are each tool's
own report: IOPS, bandwidth (MB/s = 10^6 B/s), and CPU time per I/O
(user+sys of the process over the run / completed I/Os).

Latency is printed beside fio's: storlab's mean (from the submitting system
call to the reap) with its achieved depth, fio's `lat` (slat + clat: from
when fio prepares the I/O) and `clat`, and IOPS x latency for each. The
device's own mean queue depth while each tool ran (iostat's aqu-sz: the
weighted-time field of /sys/block/DEV/stat over the run) is measured the
same way, from outside, for both.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

WORKLOADS = [
    # name, rw, bs, iodepth, direct, engine, warm page cache
    ("randread-4k-qd32-uring-direct", "randread", "4k", 32, True, "io_uring", False),
    ("read-1m-qd1-uring-direct", "read", "1M", 1, True, "io_uring", False),
    ("read-1m-qd32-uring-direct", "read", "1M", 32, True, "io_uring", False),
    ("write-1m-qd1-uring-direct", "write", "1M", 1, True, "io_uring", False),
    ("write-1m-qd32-uring-direct", "write", "1M", 32, True, "io_uring", False),
    ("randread-4k-psync-cached", "randread", "4k", 1, False, "psync", True),
    # Linux native AIO, the engine many sites standardise on (storlab's own
    # io_submit/io_getevents binding against fio's libaio).
    ("randread-4k-qd32-libaio-direct", "randread", "4k", 32, True, "libaio", False),
    ("randread-4k-qd1-libaio-direct", "randread", "4k", 1, True, "libaio", False),
    ("read-1m-qd32-libaio-direct", "read", "1M", 32, True, "libaio", False),
    ("write-1m-qd32-libaio-direct", "write", "1M", 32, True, "libaio", False),
]


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


def weighted_ms(stat_path):
    """Field 11 of the block stat file: ms spent with I/O queued, weighted by depth."""
    if not stat_path:
        return None
    with open(stat_path) as f:
        return int(f.read().split()[10])


def run_timed(cmd):
    """Run cmd; return (stdout, CPU seconds of the whole process tree).

    Both tools are measured the same way from outside: user+sys of every
    thread of every process they ran (io_uring workers included), which fio's
    own usr/sys figures (per job thread) leave out."""
    import resource
    import time
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    stat_path = device_stat_path(run_timed.path) if getattr(run_timed, "path", None) else None
    w0, t0 = weighted_ms(stat_path), time.monotonic()
    out = run(cmd)
    w1, t1 = weighted_ms(stat_path), time.monotonic()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # Mean device queue over the whole run (start-up and layout included, a
    # little below the steady state for both tools alike).
    run_timed.aqu = (w1 - w0) / ((t1 - t0) * 1e3) if stat_path else float("nan")
    return out, cpu


def fio_json(text):
    # fio may print warnings before the JSON document.
    return json.loads(text[text.index("{"):])


def run_fio(w, path, size, runtime):
    name, rw, bs, qd, direct, engine, warm = w
    cmd = ["fio", "--name=cmp", f"--filename={path}", f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}",
           f"--ioengine={engine}", f"--direct={1 if direct else 0}", f"--size={size}",
           f"--runtime={runtime}", "--time_based", "--output-format=json"]
    if rw in ("write", "randwrite"):
        cmd.append("--end_fsync=1")
    if warm:
        cmd.append("--invalidate=0")
    out, cpu_s = run_timed(cmd)
    j = fio_json(out)["jobs"][0]
    d = j["write"] if rw in ("write", "randwrite") else j["read"]
    ios = d["total_ios"]
    runtime_ms = j["job_runtime"]
    own_cpu_ns = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * runtime_ms * 1e6
    return {"iops": d["iops"], "mbps": d["bw_bytes"] / 1e6, "cpu_ns_per_io": cpu_s * 1e9 / max(ios, 1),
            "own_cpu_ns_per_io": own_cpu_ns / max(ios, 1),
            "lat_us": d["lat_ns"]["mean"] / 1e3, "clat_us": d["clat_ns"]["mean"] / 1e3,
            "iops_x_lat": d["iops"] * d["lat_ns"]["mean"] / 1e9,
            "iops_x_clat": d["iops"] * d["clat_ns"]["mean"] / 1e9,
            "device_aqu": run_timed.aqu}


def run_storlab(binary, w, path, size, runtime):
    name, rw, bs, qd, direct, engine, warm = w
    cmd = [binary, "bench", path, f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}", f"--engine={engine}",
           f"--size={size}", f"--runtime={runtime}s", "--time-based", "--output-format=json", "--quiet", "--no-save",
           "--cache", "direct" if direct else ("warm" if warm else "cold")]
    if rw in ("write", "randwrite"):
        cmd.append("--allow-destroy")
    out, cpu_s = run_timed(cmd)
    ph = json.loads(out)["phases"][0]
    d = ph["write"] if rw in ("write", "randwrite") else ph["read"]
    lat = (d.get("lat_ns") or {}).get("mean", 0.0)
    return {"iops": d["iops"], "mbps": d["bw_bytes_per_s"] / 1e6, "cpu_ns_per_io": cpu_s * 1e9 / max(d["ops"], 1),
            "own_cpu_ns_per_io": ph["cpu"]["cpu_ns_per_io"],
            "lat_us": lat / 1e3, "iops_x_lat": d["iops"] * lat / 1e9,
            "depth": (ph.get("depth") or {}).get("achieved", float("nan")),
            "device_aqu": run_timed.aqu}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=".", help="directory for the test file (default: .)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=8, help="seconds per run")
    ap.add_argument("--size", default="1G")
    ap.add_argument("--only", default="", help="comma-separated workload names")
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
        selected = [w for w in WORKLOADS if not a.only or w[0] in a.only.split(",")]
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
            row = {"workload": w[0]}
            for tool in ("storlab", "fio"):
                row[tool + "_latency"] = {k: statistics.median(x[k] for x in res[tool])
                                          for k in res[tool][0] if k not in ("iops", "mbps")}
            for metric in ("iops", "mbps", "cpu_ns_per_io", "own_cpu_ns_per_io"):
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
                  f"ratio {m['cpu_ns_per_io']['ratio_median']:.3f} [{m['cpu_ns_per_io']['ratio_min']:.3f}-{m['cpu_ns_per_io']['ratio_max']:.3f}]",
                  flush=True)
            sl, fl = m["storlab_latency"], m["fio_latency"]
            print(f"{'':32} latency: storlab {sl['lat_us']:.1f} us (depth {sl['depth']:.2f}, IOPSxlat {sl['iops_x_lat']:.2f}) | "
                  f"fio lat {fl['lat_us']:.1f} us clat {fl['clat_us']:.1f} us (IOPSxlat {fl['iops_x_lat']:.2f}, IOPSxclat {fl['iops_x_clat']:.2f}) | "
                  f"device aqu-sz storlab {sl['device_aqu']:.2f} fio {fl['device_aqu']:.2f}", flush=True)
        print(json.dumps({"rounds": a.rounds, "runtime_s": a.runtime, "size": a.size, "results": rows}, indent=1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
