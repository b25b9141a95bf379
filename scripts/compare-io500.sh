#!/usr/bin/env bash
# Real io500 and `storlab io500` with the same config on the same file
# system, in pairs (io500 first in odd pairs, storlab first in even ones,
# so a drift of the machine or a warm cache falls on both), NP ranks each;
# prints every phase's median figure for both, the ratio of the medians
# (storlab / io500), the median and min-max of the per-pair ratios (a pair
# ran within a minute or two, so its ratio cancels slow drifts of the
# machine's load), the score ratios, and one line per goal. Goal (issue
# 25): each phase within ±15 %, the score within ±10 %.
#
# Runs unattended in at most BUDGET seconds (default 540): a pair is only
# started when the pairs so far say it ends in time (at least 2 pairs).
#
# usage: scripts/compare-io500.sh [DIR] [RUNS] [NP] [STONEWALL_S]
#   DIR        file system to measure (default: a new directory in /dev/shm)
#   RUNS       pairs at most (default 4; medians are reported)
#   NP         ranks (default 2): mpirun -np NP io500, storlab io500 --np NP
#   STONEWALL  seconds (default 5; io500 marks anything but 300 INVALID)
# env: IO500 (path of io500; default: /work/io500-peers/build/io500 when
#      built, else built with ../shared/peers/build-io500.sh),
#      STORLAB (default target/release/storlab, or $CARGO_TARGET_DIR's),
#      BUDGET (seconds, default 540), and the sizes EASY_BLOCK,
#      HARD_SEGMENTS, MD_EASY_N, MD_HARD_N; KEEP_FIGURES=DIR keeps every
#      run's summary there (and storlab's whole JSON result: per-second
#      series, per-rank figures); IO500_MPI_ARGS adds words to io500's mpirun, e.g.
#      "-x GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=4194304"
#      to put IOR's transfer buffers in huge pages as storlab's are (see
#      docs/PERFORMANCE.md); REGEX_SHIM=1 preloads scripts/peer-shims/
#      regexec-substring.c into io500 (pfind's regexec() of `.*01.*`
#      answered by strstr(), the same files found: a diagnostic of the find
#      phase's CPU, not io500 as built; see docs/PERFORMANCE.md);
#      RUN_ONLY="ior-hard ..." runs only those io500
#      workloads (the others get io500's own `run = FALSE`; see
#      scripts/io500-config.sh). Every run's load average is printed and the
#      table ends with the range of load averages seen.
#
# STORLAB_MPI=1: storlab's ranks are MPI processes (`mpirun -np NP storlab
#      io500 …`, a build with --features mpi), as io500's are, instead of
#      threads of one process (`--np NP`). On this VM the two differ where a
#      phase waits on the device one I/O at a time per rank (ior-rnd4K-easy-
#      read): see docs/PERFORMANCE.md.
#
# DEVICE=1: the device-bound mode (needs root). On tmpfs every phase is
#      CPU-bound and the comparison measures the tools' own CPU cost; here
#      both run on ext4 on a loop device (--direct-io=on, so the host does
#      not cache it twice) over a sparse file in DEVICE_DIR (default
#      /var/tmp: the virtio disk; DIR is then ignored), DEVICE_SIZE (default
#      12G), and each run (mpirun and io500, or storlab) inside a memory
#      cgroup whose limit MEM (default 384M) is well below the data written,
#      so the page cache cannot hold it and the reads come from the disk
#      (cgroup v2's memory.max where the memory controller is on v2, else
#      v1's memory.limit_in_bytes; page cache is charged to the cgroup of
#      the process that first touches it). The file system is unmounted and
#      mounted again before every run (nothing of the last run is cached).
#      Sizes default to EASY_BLOCK=2g, HARD_SEGMENTS=20000, MD_HARD_N=100000
#      (about 4.7 GiB written with NP=2); each run's peak cgroup memory and
#      the MiB the loop device read and wrote during it are printed (the two
#      tools doing the same I/O read and write about the same). Both tools read with one transfer in flight per rank and
#      check each before the next (IOR: psync reads with -R; storlab: the
#      psync engine at depth 1, the check in the worker after each read).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/io500-config.sh
source "$here/scripts/io500-config.sh"
device=${DEVICE:-0}
cg="" mnt="" loopdev="" img=""
undo_device() {
    if [[ -n "$mnt" ]]; then umount "$mnt" 2>/dev/null || true; rmdir "$mnt" 2>/dev/null || true; fi
    if [[ -n "$loopdev" ]]; then losetup -d "$loopdev" 2>/dev/null || true; fi
    if [[ -n "$img" ]]; then rm -f "$img"; fi
    if [[ -n "$cg" ]]; then rmdir "$cg" 2>/dev/null || true; fi
}
if [[ "$device" == 1 ]]; then
    if [[ $(id -u) != 0 ]]; then echo "DEVICE=1 needs root (losetup, mount, cgroups)" >&2; exit 2; fi
    trap undo_device EXIT
    mem_bytes=$(numfmt --from=iec "${MEM:-384M}")
    if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
        cg=/sys/fs/cgroup/compare-io500.$$
        mkdir "$cg"
        echo "$mem_bytes" > "$cg/memory.max"
        echo 0 > "$cg/memory.swap.max" 2>/dev/null || true
        cg_peak() { cat "$cg/memory.peak" 2>/dev/null || echo 0; }
        cg_reset() { echo 0 > "$cg/memory.peak" 2>/dev/null || true; }
        cg_ooms() { awk '$1 == "oom_kill" { print $2 }' "$cg/memory.events"; }
    elif [[ -d /sys/fs/cgroup/memory ]]; then
        cg=/sys/fs/cgroup/memory/compare-io500.$$
        mkdir "$cg"
        echo "$mem_bytes" > "$cg/memory.limit_in_bytes"
        cg_peak() { cat "$cg/memory.max_usage_in_bytes"; }
        cg_reset() { echo 0 > "$cg/memory.max_usage_in_bytes"; }
        cg_ooms() { awk '$1 == "oom_kill" { print $2 }' "$cg/memory.oom_control"; }
    else
        echo "DEVICE=1: no memory cgroup (neither v2's memory controller nor v1's /sys/fs/cgroup/memory)" >&2
        exit 2
    fi
    img=$(mktemp "${DEVICE_DIR:-/var/tmp}/compare-io500.XXXXXX.img")
    truncate -s "${DEVICE_SIZE:-12G}" "$img"
    loopdev=$(losetup -f --show --direct-io=on "$img")
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$loopdev"
    mnt=$(mktemp -d /tmp/compare-io500-mnt.XXXXXX)
    mount "$loopdev" "$mnt"
    dir=$mnt
    : "${EASY_BLOCK:=2g}" "${HARD_SEGMENTS:=20000}" "${MD_HARD_N:=100000}"
    echo "device-bound: ext4 on $loopdev over $img, memory cgroup $cg limited to ${MEM:-384M}" >&2
else
    made_dir=
    if [[ -z "${1:-}" ]]; then made_dir=$(mktemp -d /dev/shm/compare-io500.XXXXXX); fi
    dir=${1:-$made_dir}
fi
# Run a command in the memory cgroup (DEVICE=1); else as it is.
in_cg() {
    if [[ -z "$cg" ]]; then "$@"; return; fi
    sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}
# Before a run (DEVICE=1): the file system mounted afresh (nothing of the
# last run cached), the cgroup's peak reset; after it, the peak printed.
# The loop device's sectors read and written so far (its stat file).
dev_sectors() { awk '{print $3, $7}' "/sys/block/${loopdev#/dev/}/stat"; }
before_run() {
    if [[ -z "$cg" ]]; then return; fi
    sync
    umount "$mnt" && mount "$loopdev" "$mnt"
    cg_reset
    read -r rd0 wr0 < <(dev_sectors)
    oom0=$(cg_ooms)
}
after_run() {
    if [[ -z "$cg" ]]; then return; fi
    read -r rd1 wr1 < <(dev_sectors)
    echo "  $1: cgroup memory peak $(numfmt --to=iec "$(cg_peak)") (limit ${MEM:-384M});" \
        "device read $(( (rd1 - rd0) / 2048 )) MiB, written $(( (wr1 - wr0) / 2048 )) MiB" >&2
    # The kernel's OOM killer inside the cgroup (a limit too tight for the
    # file system's own allocations): that run's figures are not kept.
    local ooms=$(( $(cg_ooms) - oom0 ))
    if (( ooms > 0 )); then
        echo "  $1: the memory cgroup's OOM killer killed $ooms process(es): this run is left out (raise MEM)" >&2
        return 1
    fi
}
# After run WHO (exit code RC, log LOG, figures FIG): the cgroup's figures,
# and a run that failed or lost a process to the OOM killer reported with
# its log's last lines and its figures left out (so no pair ratio is made
# of it). (An INVALID run, as every run with a short stonewall is, exits 0.)
end_run() {
    local who=$1 rc=$2 log=$3 fig=$4
    if after_run "$who" && (( rc == 0 )); then return; fi
    echo "  $who failed (exit code $rc); the end of its log:" >&2
    tail -5 "$log" | sed 's/^/    /' >&2
    rm -f "$fig"
}
runs=${2:-4}
np=${3:-2}
wall=${4:-5}
budget=${BUDGET:-540}
start=$SECONDS
storlab=${STORLAB:-${CARGO_TARGET_DIR:-$here/target}/release/storlab}
if [[ ! -x "$storlab" ]]; then
    echo "no storlab binary at $storlab: build one (cargo build --release) or set STORLAB" >&2
    exit 2
fi
io500=${IO500:-}
if [[ -z "$io500" && -x /work/io500-peers/build/io500 ]]; then
    io500=/work/io500-peers/build/io500
fi
if [[ -z "$io500" ]]; then
    io500=$("$here/../shared/peers/build-io500.sh" "${IO500_BUILD:-/tmp/io500-build}" | tail -1)
fi
if [[ -n "$cg" ]]; then
    # The measured file system holds only the data; the config, logs and
    # figures stay outside it (it is unmounted between runs).
    work=$(mktemp -d /tmp/compare-io500.XXXXXX)
    data=$mnt
else
    work=$(mktemp -d "$dir/cmp.XXXXXX")
    data=$work
fi
trap 'rm -rf "$work"; [[ -n "${made_dir:-}" ]] && rmdir "$made_dir" 2>/dev/null; undo_device' EXIT
mkdir -p "$data/io500-data" "$work/io500-results" "$data/storlab" "$work/figures"
io500_mpi_args=${IO500_MPI_ARGS:-}
if [[ "${REGEX_SHIM:-}" == 1 ]]; then
    cc -O2 -shared -fPIC -o "$work/regexec-substring.so" "$here/scripts/peer-shims/regexec-substring.c" -ldl
    io500_mpi_args+=" -x LD_PRELOAD=$work/regexec-substring.so"
    echo "REGEX_SHIM=1: io500's find (pfind) with regexec() of .*01.* answered by strstr(): a diagnostic, not io500 as built" >&2
fi
write_io500_config "$work/config.ini" "$data/io500-data" "$work/io500-results" "$wall"

run_io500() {
    local rc=0
    before_run
    # shellcheck disable=SC2086 # io500_mpi_args is a list of mpirun words
    (cd "$work" && in_cg mpirun --allow-run-as-root --oversubscribe $io500_mpi_args -np "$np" "$io500" config.ini > "$work/io500-$1.log" 2>&1) || rc=$?
    summary=$(ls -t "$work"/io500-results/*/result_summary.txt 2>/dev/null | head -1)
    if [[ -n "$summary" ]]; then cp "$summary" "$work/figures/io500-$1.txt"; fi
    end_run "io500 $1" "$rc" "$work/io500-$1.log" "$work/figures/io500-$1.txt"
    # a rank killed by the OOM killer may still be exiting: retry once
    rm -rf "$data"/io500-data/* "$work"/io500-results/* 2>/dev/null || { sleep 2; rm -rf "$data"/io500-data/* "$work"/io500-results/*; }
}
if [[ "${STORLAB_MPI:-}" == 1 ]]; then
    storlab_cmd=(mpirun --allow-run-as-root --oversubscribe -np "$np" "$storlab" io500)
    storlab_ranks=()
else
    storlab_cmd=("$storlab" io500)
    storlab_ranks=(--np "$np")
fi
run_storlab() {
    local rc=0
    before_run
    in_cg "${storlab_cmd[@]}" "$work/config.ini" "$data/storlab" "${storlab_ranks[@]}" --no-save -q \
        --json-out "$work/figures/storlab-$1.json" > "$work/figures/storlab-$1.txt" 2>"$work/storlab-$1.log" || rc=$?
    end_run "storlab $1" "$rc" "$work/storlab-$1.log" "$work/figures/storlab-$1.txt"
}
load() { cut -d' ' -f1 /proc/loadavg; }
done_pairs=0
for i in $(seq 1 "$runs"); do
    t0=$SECONDS
    l0=$(load)
    if (( i % 2 == 1 )); then run_io500 "$i"; run_storlab "$i"; else run_storlab "$i"; run_io500 "$i"; fi
    l1=$(load)
    echo "$l0 $l1" >> "$work/figures/loads"
    done_pairs=$i
    took=$((SECONDS - t0))
    echo "pair $i of $runs done in ${took}s (load average $l0 before, $l1 after)" >&2
    if (( i >= 2 && SECONDS - start + took > budget )); then
        echo "stopping after $i pairs: another would pass the ${budget}s budget" >&2
        break
    fi
done
if [[ -n "${KEEP_FIGURES:-}" ]]; then
    mkdir -p "$KEEP_FIGURES" && cp "$work"/figures/* "$KEEP_FIGURES"/
fi

if [[ -n "$cg" ]]; then
    echo "mode: device-bound (ext4 on a loop device over $img, memory cgroup limit ${MEM:-384M}; EASY_BLOCK=$EASY_BLOCK HARD_SEGMENTS=$HARD_SEGMENTS MD_HARD_N=$MD_HARD_N)"
else
    echo "mode: $dir"
fi
if [[ "${STORLAB_MPI:-}" == 1 ]]; then echo "storlab's ranks: mpirun -np $np (MPI processes)"; else echo "storlab's ranks: --np $np (threads)"; fi
python3 - "$work/figures" "$done_pairs" <<'PY'
import re, statistics, sys, pathlib
d, runs = pathlib.Path(sys.argv[1]), int(sys.argv[2])
# io500 prints its extended phases (ior-rnd4K-easy-read) with a blank tag
line = re.compile(r"\[(?:RESULT| *)\]\s+(\S+)\s+([0-9.]+)\s+(\S+)\s+:\s+time\s+([0-9.]+)")
score = re.compile(r"\[SCORE ?\]\s+Bandwidth\s+([0-9.]+).*IOPS\s+([0-9.]+).*TOTAL\s+([0-9.]+)")
def read(p):
    out = {}
    if not p.exists():
        return out
    for l in p.read_text().splitlines():
        m = line.search(l)
        if m and m.group(1) != "timestamp":
            out[m.group(1)] = float(m.group(2))
        m = score.search(l)
        if m:
            out["SCORE bandwidth"], out["SCORE iops"], out["SCORE total"] = map(float, m.groups())
    return out
figs = {t: [read(d / f"{t}-{i}.txt") for i in range(1, runs + 1)] for t in ("io500", "storlab")}
names = []
for f in figs["io500"] + figs["storlab"]:
    names += [k for k in f if k not in names]
if not names:
    sys.exit("no figures: see the io500-*.log and storlab-*.log of the runs")
print(f"{'phase':24} {'io500':>12} {'storlab':>12} {'ratio':>7} {'pair med':>8} {'pairs min-max':>14}")
goals = []
for n in names:
    a = [f[n] for f in figs["io500"] if n in f]
    b = [f[n] for f in figs["storlab"] if n in f]
    if not a or not b:
        # a phase only one tool ran (io500's extended ior-rnd4K-easy-read)
        who = "io500" if a else "storlab"
        print(f"{n:24} {'-' if not a else statistics.median(a):>12} {'-' if not b else statistics.median(b):>12}   figures from {who} only")
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    r = mb / ma if ma else float("nan")
    pairs = [y[n] / x[n] for x, y in zip(figs["io500"], figs["storlab"]) if x.get(n) and n in y]
    pm = statistics.median(pairs) if pairs else float("nan")
    spread = f"{min(pairs):.2f}-{max(pairs):.2f}" if pairs else "-"
    print(f"{n:24} {ma:12.4f} {mb:12.4f} {r:7.3f} {pm:8.3f} {spread:>14}")
    if n in ("SCORE total",) or not n.startswith("SCORE"):
        goals.append((n, pm))
loads = [float(x) for l in (d / "loads").read_text().split("\n") if l for x in l.split()]
print(f"pairs: {runs}; load average {min(loads):.1f}-{max(loads):.1f} on {__import__('os').cpu_count()} CPUs")
for n, r in goals:
    goal = 0.10 if n == "SCORE total" else 0.15
    verdict = "within" if abs(r - 1) <= goal else "OUTSIDE"
    print(f"goal {n}: median pair ratio {r:.3f} {verdict} ±{goal:.0%}")
PY
