#!/usr/bin/env bash
# Overhead of `storlab monitor` (docs/PERFORMANCE.md, "## monitor").
#  1. library cost per interval with a synthetic diskstats of 1,000 devices;
#  2. the CLI over a 1,000-device replay file (parse, rates, totals, output);
#  3. live on this machine, side by side with sysstat's iostat, 30 × 1 s.
# Prints the median of RUNS runs of each. usage: scripts/perf-monitor.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
cargo build -q --release -p storlab-monitor --example overhead
cargo build -q --release --bin storlab
BIN=target/release/storlab
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
cpu_s() { # command... -> user+sys seconds of the command
  /usr/bin/env time -f '%U %S' -o "$TMP/t" "$@" > /dev/null 2> "$TMP/err" || { cat "$TMP/err" >&2; return 1; }
  awk '{print $1 + $2}' "$TMP/t"
}

echo "== 1. library, 1000 devices, 600 intervals (ms CPU per interval)"
for _ in $(seq "$RUNS"); do
  target/release/examples/overhead 1000 600 | sed -E 's/.*CPU ([0-9.]+) ms per interval.*/\1/'
done | median

echo "== 2. CLI replay of 1000 devices × 300 intervals (ms CPU per interval)"
target/release/examples/overhead 1000 300 "$TMP/big.txt" > /dev/null
for fmt in none jsonl; do
  for _ in $(seq "$RUNS"); do
    s=$(cpu_s "$BIN" monitor --replay "$TMP/big.txt" --output-format "$fmt")
    echo "$s * 1000 / 300" | bc -l
  done | median | xargs printf "  --output-format %s: %.3f\n" "$fmt"
done

echo "== 3. live, this machine ($(wc -l < /proc/diskstats) devices), 30 × 1 s (CPU seconds in total)"
if command -v iostat > /dev/null; then
  /usr/bin/env time -f '%U %S' -o "$TMP/storlab.t" "$BIN" monitor --interval 1s --count 30 --output-format jsonl > /dev/null & a=$!
  /usr/bin/env time -f '%U %S' -o "$TMP/iostat.t" iostat -d -x 1 31 > /dev/null & b=$!
  wait $a $b
  awk '{printf "  storlab monitor: %.2f s CPU over 30 s = %.3f %% of one core\n", $1 + $2, ($1 + $2) / 30 * 100}' "$TMP/storlab.t"
  awk '{printf "  iostat -d -x:    %.2f s CPU over 30 s = %.3f %% of one core\n", $1 + $2, ($1 + $2) / 30 * 100}' "$TMP/iostat.t"
else
  echo "  iostat not installed; skipped"
fi
