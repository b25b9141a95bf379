#!/usr/bin/env bash
# The default quick check (`storlab bench` with no arguments) N times in a
# fresh directory: each phase's achieved depth against the requested one,
# and every depth warning it printed (issue 22: on a healthy device it
# prints none). Prints one line per phase per run, then per phase the median
# depth and how many runs warned, and the load average before and after.
#
# usage: scripts/quick-check-depth.sh [N] [DIR] [STORLAB]
#   N        runs (default 5)
#   DIR      where the temporary directory is made (default: /tmp; put it on
#            the device to check, e.g. a directory on the disk under test)
#   STORLAB  the binary (default: target/release/storlab, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-5}
BASE=${2:-/tmp}
BIN=${3:-${CARGO_TARGET_DIR:-target}/release/storlab}
if [ ! -x "$BIN" ]; then
  cargo build -q --release --bin storlab
fi
WORK=$(mktemp -d "$BASE/quick-check-depth.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)   binary: $BIN   dir: $WORK"
for i in $(seq "$N"); do
  rm -rf "$WORK/run" && mkdir "$WORK/run"
  # A private config and database: nothing of the user's is read or written.
  (cd "$WORK/run" && XDG_CONFIG_HOME="$WORK/cfg" XDG_DATA_HOME="$WORK/data" \
    "$BIN" bench --no-save --output-format json > "$WORK/out-$i.json" 2> "$WORK/err-$i.txt") || {
    echo "run $i failed:"; cat "$WORK/err-$i.txt"; exit 1; }
done
python3 - "$WORK" "$N" <<'EOF'
import json, statistics, sys
work, n = sys.argv[1], int(sys.argv[2])
by_phase = {}
for i in range(1, n + 1):
    doc = json.load(open(f"{work}/out-{i}.json"))
    phases = doc["phases"] if isinstance(doc, dict) and "phases" in doc else doc
    for ph in phases:
        name = ph["params"].get("name") or ph["params"]["rw"]
        d = ph.get("depth") or {}
        req, ach = d.get("requested"), d.get("achieved")
        warns = [w for w in ph.get("warnings", []) if "in flight on average" in w]
        iops = ph["total"].get("iops", 0.0)
        pct = 100.0 * ach / req if req else float("nan")
        print(f"run {i} {name:11} depth {ach:7.2f} of {req:3} ({pct:5.1f} %)  {iops:9.0f} IOPS"
              + ("" if not warns else "  WARNING: " + warns[0]))
        by_phase.setdefault(name, []).append((pct, bool(warns)))
print("summary (median achieved % of requested, runs that warned):")
for name, v in by_phase.items():
    med = statistics.median(p for p, _ in v)
    print(f"  {name:11} {med:5.1f} %   warned {sum(w for _, w in v)}/{len(v)}")
EOF
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
