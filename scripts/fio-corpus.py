#!/usr/bin/env python3
"""Run fio's own example job files (fio's `examples/*.fio`) through
`storlab bench --fio-job` and print which ran and which were refused, why.

Usage: scripts/fio-corpus.py EXAMPLES_DIR [--storlab BIN] [--size 16m]
                             [--runtime 1s] [--delay-scale 0.01]
                             [--only a.fio,b.fio] [--markdown]

EXAMPLES_DIR is fio's `examples/` directory (e.g. from `git clone
https://github.com/axboe/fio`), or tests/fixtures/fio-examples (the copies
storlab keeps, GPL-2.0 as fio's COPYING says).

The corpus is every example whose `ioengine=` lines all name an engine
storlab has (libaio, io_uring, psync, sync, pvsync, null) or that names no
engine (fio's default, psync), less the `xnvme-*` files: they name no engine
only because they are meant for `--ioengine=xnvme` on fio's command line
(their comments say so). Each file is copied without its `filename=` and
`directory=` lines, with each `startdelay=N` (seconds) shortened as the
runtime is (times --delay-scale: 1mbs_clients.fio's 124 s become 1.24 s),
and run as

    storlab bench --fio-job FILE SCRATCH --size 16m --runtime 1s --time-based

on a scratch directory of its own (removed afterwards) with a private
results database, so nothing outside the scratch directory is touched.
The files in fio's zonemode=zbd (zbd-*.fio, 256 MiB zones: more than a
shortened --size) run with their zonesize= and bs= divided by 256 (256M
zones become 1M, a 2M write 8k, the 256M trim of one zone 1M), so every
ratio of the file stays (blocks per zone, the trim of a zone, offset=524z).
FIO_BS=4096 is set for the files that read it (sprandom.fio; its comments
say to set it), unless the environment sets it.
The totals also count the files that name their engine in an `ioengine=`
line (35 at fio's commit f5344384: the count issue 27 gives). A file "ran"
when storlab exits 0; otherwise the first error line is its
refusal. The totals line ends the table; the exit code is 0 whatever the
count (the integration test `fiojob::corpus_*` checks the count).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ENGINES = {"libaio", "io_uring", "psync", "sync", "pvsync", "null"}
ENGINE_RE = re.compile(r"^\s*ioengine\s*=\s*([^\s;#]+)", re.M)
TARGET_RE = re.compile(r"^\s*(filename|directory)\s*=", re.I)
DELAY_RE = re.compile(r"^(\s*startdelay\s*=\s*)(\d+)\s*$", re.I)
ZBD_RE = re.compile(r"^\s*zonemode\s*=\s*zbd\b", re.I | re.M)
ZBD_SIZE_RE = re.compile(r"^(\s*(?:zonesize|bs)\s*=\s*)(\d+)([kmg]?)\s*$", re.I)
# fio's zbd examples have 256 MiB zones: more than a shortened --size. Their
# zone and block sizes are divided by this (256M zones become 1M), keeping
# every ratio of the file (blocks per zone, a trim of one zone, 524z).
ZBD_SCALE = 256


def selected(path):
    """Whether storlab has every engine the file names (none = fio's default)."""
    name = os.path.basename(path)
    if name.startswith("xnvme-"):
        return False
    with open(path, encoding="utf-8", errors="replace") as f:
        engines = set(ENGINE_RE.findall(f.read()))
    return engines <= ENGINES


def names_engine(path):
    """Whether the file says its engine (issue 27 counted these: 35)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return bool(ENGINE_RE.search(f.read()))


def shortened(line, scale):
    """`startdelay=N` (fio: seconds) times `scale`, in milliseconds."""
    m = DELAY_RE.match(line)
    if not m:
        return line
    return f"{m.group(1)}{round(int(m.group(2)) * scale * 1000)}ms\n"


def zbd_scaled(line):
    """`zonesize=`/`bs=` of a zonemode=zbd file divided by ZBD_SCALE."""
    m = ZBD_SIZE_RE.match(line)
    if not m:
        return line
    n = int(m.group(2)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(3).lower()]
    return f"{m.group(1)}{n // ZBD_SCALE}\n"


def stripped(src, dst, scale=1.0):
    """Copy `src` to `dst` without its filename=/directory= lines, its
    startdelays times `scale`, a zbd file's zones shortened (zbd_scaled)."""
    with open(src, encoding="utf-8", errors="replace") as f:
        text = f.read()
    zbd = bool(ZBD_RE.search(text))
    lines = [shortened(l, scale) for l in text.splitlines(True) if not TARGET_RE.match(l)]
    if zbd:
        lines = [zbd_scaled(l) for l in lines]
    with open(dst, "w", encoding="utf-8") as f:
        f.writelines(lines)


def reason(stderr):
    """The refusal: the first line that says what is wrong."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    for l in lines:
        if l.lower().startswith("error"):
            return l
    return lines[0] if lines else "(no message)"


def run_one(binary, path, args, work):
    scratch = tempfile.mkdtemp(prefix="scratch-", dir=work)
    job = os.path.join(work, os.path.basename(path))
    stripped(path, job, args.delay_scale)
    env = dict(os.environ)
    env.setdefault("FIO_BS", "4096")
    env["STORLAB_DB"] = os.path.join(work, "results.db")
    env["NO_COLOR"] = "1"
    env["XDG_CONFIG_HOME"] = os.path.join(work, "config")
    env["XDG_DATA_HOME"] = os.path.join(work, "data")
    cmd = [binary, "bench", "--fio-job", job, scratch, "--size", args.size,
           "--runtime", args.runtime, "--time-based"]
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=args.timeout, stdin=subprocess.DEVNULL)
        code, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        code, err = -1, f"timed out after {args.timeout} s"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    # Name the example, not the scratch copy's directory.
    return code, err.replace(work + os.sep, "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("examples")
    ap.add_argument("--storlab", default=os.environ.get("STORLAB", "storlab"))
    ap.add_argument("--size", default="16m")
    ap.add_argument("--runtime", default="1s")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--delay-scale", type=float, default=0.01)
    ap.add_argument("--only", default="")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    files = sorted(
        os.path.join(args.examples, f) for f in os.listdir(args.examples)
        if f.endswith(".fio"))
    files = [f for f in files if selected(f)]
    if args.only:
        keep = set(args.only.split(","))
        files = [f for f in files if os.path.basename(f) in keep]
    ran = 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="fio-corpus-") as work:
        for f in files:
            code, err = run_one(args.storlab, f, args, work)
            name = os.path.basename(f)
            if code == 0:
                ran += 1
                rows.append((name, "ran", ""))
            else:
                rows.append((name, f"refused (exit {code})", reason(err)))
            print(f"{name}: {rows[-1][1]} {rows[-1][2]}", file=sys.stderr)
    if args.markdown:
        print("| file | result | reason |\n|---|---|---|")
        for n, r, why in rows:
            print(f"| {n} | {r} | {why.replace('|', '/')} |")
    else:
        w = max((len(n) for n, _, _ in rows), default=4)
        for n, r, why in rows:
            print(f"{n:<{w}}  {r:<16}  {why}")
    named = [os.path.basename(f) for f in files if names_engine(f)]
    named_ran = sum(1 for n, r, _ in rows if n in named and r == "ran")
    print(f"\ntotal: {ran} of {len(rows)} ran, {len(rows) - ran} refused; "
          f"of the {len(named)} that name their engine, {named_ran} ran")


if __name__ == "__main__":
    main()
