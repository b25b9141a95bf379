#!/usr/bin/env bash
# Real io500 and `storlab io500` both under `mpirun -np NP`, with the same
# config on the same file system, alternately (io500, storlab, ...); prints
# every phase's median figure for both, their ratio (storlab / io500), and
# one line per goal (issue 25: each phase within ±15 %, the score within
# ±10 %). The same comparison as scripts/compare-io500.sh, with storlab's
# ranks as MPI processes instead of threads (--np).
#
# usage: scripts/compare-io500-mpi.sh [DIR] [RUNS] [NP] [STONEWALL_S]
#   DIR        file system to measure (default: a new directory in /dev/shm)
#   RUNS       alternating runs of each (default 3; medians are reported)
#   NP         MPI ranks of each (default 2)
#   STONEWALL  seconds (default 5; io500 marks anything but 300 INVALID)
# env: IO500 (path of io500; default: built with ../shared/peers/build-io500.sh),
#      STORLAB (default target/release/storlab, built with --features mpi),
#      the sizes EASY_BLOCK, HARD_SEGMENTS, MD_EASY_N, MD_HARD_N.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/io500-config.sh
source "$here/scripts/io500-config.sh"
made_dir=
if [[ -z "${1:-}" ]]; then made_dir=$(mktemp -d /dev/shm/compare-io500-mpi.XXXXXX); fi
dir=${1:-$made_dir}
runs=${2:-3}
np=${3:-2}
wall=${4:-5}
storlab=${STORLAB:-$here/target/release/storlab}
io500=${IO500:-}
if [[ -z "$io500" ]]; then
    io500=$("$here/../shared/peers/build-io500.sh" "${IO500_BUILD:-/tmp/io500-build}" | tail -1)
fi
mpi=(mpirun --oversubscribe -np "$np")
[[ $(id -u) == 0 ]] && mpi=(mpirun --allow-run-as-root --oversubscribe -np "$np")
work=$(mktemp -d "$dir/cmp.XXXXXX")
trap 'rm -rf "$work"; [[ -n "$made_dir" ]] && rmdir "$made_dir" 2>/dev/null' EXIT
mkdir -p "$work/io500-data" "$work/io500-results" "$work/storlab" "$work/figures"
write_io500_config "$work/config.ini" "$work/io500-data" "$work/io500-results" "$wall"

for i in $(seq 1 "$runs"); do
    (cd "$work" && "${mpi[@]}" "$io500" config.ini > "$work/io500-$i.log" 2>&1)
    summary=$(ls -t "$work"/io500-results/*/result_summary.txt | head -1)
    cp "$summary" "$work/figures/io500-$i.txt"
    rm -rf "$work"/io500-data/* "$work"/io500-results/*
    "${mpi[@]}" "$storlab" io500 "$work/config.ini" "$work/storlab" --no-save -q \
        > "$work/figures/storlab-$i.txt" 2> "$work/storlab-$i.log" || true
    echo "run $i of $runs done (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
done

python3 - "$work/figures" "$runs" <<'PY'
import re, statistics, sys, pathlib
d, runs = pathlib.Path(sys.argv[1]), int(sys.argv[2])
line = re.compile(r"\[RESULT\]\s+(\S+)\s+([0-9.]+)\s+(\S+)\s+:\s+time\s+([0-9.]+)")
score = re.compile(r"\[SCORE ?\]\s+Bandwidth\s+([0-9.]+).*IOPS\s+([0-9.]+).*TOTAL\s+([0-9.]+)")
def read(p):
    out = {}
    for l in p.read_text().splitlines():
        m = line.search(l)
        if m:
            out[m.group(1)] = float(m.group(2))
        m = score.search(l)
        if m:
            out["SCORE bandwidth"], out["SCORE iops"], out["SCORE total"] = map(float, m.groups())
    return out
figs = {t: [read(d / f"{t}-{i}.txt") for i in range(1, runs + 1)] for t in ("io500", "storlab")}
names = [k for k in figs["io500"][0]]
print(f"{'phase':24} {'io500':>12} {'storlab':>12} {'ratio':>7}")
ratios = {}
for n in names:
    a = [f[n] for f in figs["io500"] if n in f]
    b = [f[n] for f in figs["storlab"] if n in f]
    if not a or not b:
        print(f"{n:24} {'-':>12} {'-':>12}")
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    ratios[n] = mb / ma if ma else float("nan")
    print(f"{n:24} {ma:12.4f} {mb:12.4f} {ratios[n]:7.3f}")
phases = {n: r for n, r in ratios.items() if not n.startswith("SCORE")}
worst = max(phases, key=lambda n: abs(phases[n] - 1)) if phases else None
if worst:
    r = phases[worst]
    print(f"mpirun -np phases (goal each within ±15 %): worst {worst} ratio {r:.3f} "
          f"{'met' if abs(r - 1) <= 0.15 else 'NOT met'}")
if "SCORE total" in ratios:
    r = ratios["SCORE total"]
    print(f"mpirun -np score (goal within ±10 %): ratio {r:.3f} {'met' if abs(r - 1) <= 0.10 else 'NOT met'}")
PY
