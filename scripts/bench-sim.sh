#!/bin/sh
# Time `storlab sim` in release mode (the goals of issue 14):
#  * the discrete-event solver on examples/sim/cluster-10000-clients-write.toml
#    (sequential write, 64 MiB per client in 1 MiB requests) at 1,000 to
#    10,000 clients: wall time, events, events per second;
#  * a 1,000-point analytic sweep (clients=1..10000/1000) of the same scenario.
# N runs per case (default 5); prints the median, min and max wall time.
# There is no peer tool to run beside it: the figures are storlab's own.
# Usage: scripts/bench-sim.sh [runs]
set -eu
runs=${1:-5}
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin storlab
bin=./target/release/storlab
scn=examples/sim/cluster-10000-clients-write.toml
out=$(mktemp)
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
tfile=$(mktemp)
trap 'rm -f "$out" "$tfile"' EXIT
# Wall (date +%s%N) and CPU (user + sys, /usr/bin/time: 10 ms resolution)
# time of each run, in ms; medians of both, since on a shared machine the wall time
# includes waiting for a core. Events/s are over wall time (conservative).
time_case() {
  times=""
  cpus=""
  i=0
  while [ "$i" -lt "$runs" ]; do
    s=$(date +%s%N)
    /usr/bin/time -f "%e %U %S" -o "$tfile" "$@" >"$out"
    e=$(date +%s%N)
    times="$times $(( (e - s) / 1000000 ))"
    cpus="$cpus $(awk '{ printf "%d", ($2 + $3) * 1000 }' "$tfile")"
    i=$((i + 1))
  done
  ms=$(echo $times | tr ' ' '\n' | median)
  min=$(echo $times | tr ' ' '\n' | sort -n | head -1)
  max=$(echo $times | tr ' ' '\n' | sort -n | tail -1)
  cpu=$(echo $cpus | tr ' ' '\n' | median)
}
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
for n in 1000 2000 5000 10000; do
  time_case $bin sim $scn --solver des --vary clients=$n --output-format json --no-save
  events=$(grep -m1 '"events"' "$out" | tr -dc 0-9)
  simns=$(grep -m1 '"simulated_ns"' "$out" | tr -dc 0-9)
  eps=$(awk -v e="$events" -v m="$ms" 'BEGIN { printf "%.0f", e / (m / 1000) }')
  echo "des clients=$n: median ${ms} ms wall (min $min, max $max, $runs runs), ${cpu} ms CPU, $events events, ${eps} events/s of wall time, simulated $(awk -v s="$simns" 'BEGIN { printf "%.2f", s / 1e9 }') s"
done
# Unsynchronised clients: random reads, each request to a drive drawn with
# the seeded RNG (16 drive classes; completions no longer come in batches).
rnd=examples/sim/random-reads-queue-depth-knee.toml
for n in 100 250; do
  time_case $bin sim $rnd --solver des --vary clients=$n --output-format json --no-save
  events=$(grep -m1 '"events"' "$out" | tr -dc 0-9)
  eps=$(awk -v e="$events" -v m="$ms" 'BEGIN { printf "%.0f", e / (m / 1000) }')
  echo "des random reads clients=$n: median ${ms} ms wall (min $min, max $max, $runs runs), ${cpu} ms CPU, $events events, ${eps} events/s of wall time"
done
time_case $bin sim $scn --solver analytic --vary clients=1..10000/1000 --output-format json --no-save
points=$(grep -c '"analytic": {' "$out" || true)
echo "analytic sweep clients=1..10000/1000: median ${ms} ms wall (min $min, max $max, $runs runs), ${cpu} ms CPU, $points points"
