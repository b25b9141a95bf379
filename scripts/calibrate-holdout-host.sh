#!/usr/bin/env bash
# The host centre of issue 24 checked against the kernel's and the bench's
# own counts (docs/MODEL.md §8, "The host's cost per request falls with
# depth"): 4 KiB random and sequential O_DIRECT reads at QD 1..32, one bench
# run per point under `perf stat`, which counts the io_uring_enter system
# calls (syscalls:sys_enter_io_uring_enter) and the requests submitted
# (io_uring:io_uring_submit_req). Per point it prints the IOPS, the bench's
# own CPU per I/O (the phase record's cpu.cpu_ns_per_io: user + system time
# of the process / I/Os), the I/Os per system call (requests submitted /
# io_uring_enter calls) and the CPU per call: the batching the model's host
# centre describes (a cost per call shared by its requests), as the
# kernel counted it for the bench's own thread (the fitted host centre
# holds more: the virtual disk's path outside the process).
# Unattended, about 30 s; needs perf and root.
#
#   scripts/calibrate-holdout-host.sh [DIR] [STORLAB] [RUNTIME]
#   scripts/calibrate-holdout-host.sh /var/tmp/host target/release/storlab 1s
set -euo pipefail

DIR=${1:-/var/tmp/storlab-holdout-host}
STORLAB=${2:-target/release/storlab}
RUNTIME=${3:-1s}

if [ ! -x "$STORLAB" ]; then
    echo "no storlab binary at $STORLAB: cargo build --release, or give its path as the 2nd argument" >&2
    exit 2
fi
if ! command -v perf > /dev/null; then
    echo "perf is not installed (linux-perf): it counts the system calls" >&2
    exit 2
fi
if [ -e "$DIR" ]; then
    echo "$DIR exists: give a new directory (it is removed afterwards)" >&2
    exit 2
fi
mkdir -p "$DIR/data"
trap 'rm -rf "$DIR"' EXIT
if [ "$(stat -f -c %T "$DIR")" = tmpfs ]; then
    echo "$DIR is on tmpfs: give a directory on the disk to calibrate" >&2
    exit 2
fi
export STORLAB_DB=$DIR/results.db

for rw in randread read; do
    for qd in 1 2 4 8 16 32; do
        printf '[global]\nsize = "256M"\ncache = "direct"\nruntime = "%s"\ntime_based = true\n[[phase]]\nname = "%s-4k-qd%s"\nrw = "%s"\nbs = "4k"\niodepth = %s\n' \
            "$RUNTIME" "$rw" "$qd" "$rw" "$qd" > "$DIR/job.toml"
        perf stat -x, -o "$DIR/$rw-$qd.perf" \
            -e syscalls:sys_enter_io_uring_enter -e io_uring:io_uring_submit_req \
            "$STORLAB" bench "$DIR/data" --job "$DIR/job.toml" --json > "$DIR/$rw-$qd.json" 2> /dev/null
    done
done
python3 - "$DIR" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import json, sys
d, load = sys.argv[1], sys.argv[2]
def counts(path):
    c = {}
    for line in open(path):
        f = line.strip().split(",")
        if len(f) > 2 and f[0].replace(".", "").isdigit():
            c[f[2]] = float(f[0])
    return c
print(f"4 KiB O_DIRECT reads, one run per point (load average {load})")
print(f"{'requests':<11} {'QD':>3} {'IOPS':>9} {'CPU/I/O us':>11} {'I/Os per call':>14} {'CPU/call us':>12}")
for rw in ("randread", "read"):
    for qd in (1, 2, 4, 8, 16, 32):
        doc = json.load(open(f"{d}/{rw}-{qd}.json"))
        ph = doc["phases"][0] if "phases" in doc else doc["report"]["phases"][0]
        iops, cpu = ph["read"]["iops"], ph["cpu"]["cpu_ns_per_io"] / 1e3
        c = counts(f"{d}/{rw}-{qd}.perf")
        calls, subs = c.get("syscalls:sys_enter_io_uring_enter", 0), c.get("io_uring:io_uring_submit_req", 0)
        per = subs / calls if calls else float("nan")
        print(f"{rw:<11} {qd:>3} {iops:>9.0f} {cpu:>11.2f} {per:>14.2f} {cpu * per:>12.2f}")
PY
