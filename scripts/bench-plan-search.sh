#!/bin/sh
# Time `storlab plan search` in release mode: N runs per case, print the
# median, min and max wall time and how many designs were evaluated.
# Usage: scripts/bench-plan-search.sh [runs]   (default 11)
set -eu
runs=${1:-11}
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=./target/release/storlab
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for args in \
  "--drives 1000 --max-controllers 8" \
  "--drives 12..1000 --max-controllers 8" \
  "--drives 12..1000 --max-controllers 8 --levels r0,r10,r5,r6 --chunks 64k,128k,256k,512k,1M"
do
  times=""
  i=0
  while [ "$i" -lt "$runs" ]; do
    s=$(date +%s%N)
    # shellcheck disable=SC2086
    $bin plan search --drive exos-x18-18tb $args --output-format json >/tmp/storlab-plan-search.json
    e=$(date +%s%N)
    times="$times $(( (e - s) / 1000000 ))"
    i=$((i + 1))
  done
  ms=$(echo $times | tr ' ' '\n' | median)
  min=$(echo $times | tr ' ' '\n' | sort -n | head -1)
  max=$(echo $times | tr ' ' '\n' | sort -n | tail -1)
  evaluated=$(grep -m1 '"evaluated"' /tmp/storlab-plan-search.json | tr -dc 0-9)
  echo "plan search $args: median ${ms} ms (min $min, max $max, $runs runs), $evaluated designs evaluated"
done
rm -f /tmp/storlab-plan-search.json
