#!/bin/sh
# The sweep performance goal (issue 11): a 6-point block-size sweep of
# reads on one 1 GiB file lays the file out once, and its wall time is at
# most 1.15 x (sum of the points' measured runtimes + one layout).
#
# Side by side in one run, alternating, REPS times each:
#   storlab: storlab sweep DIR --vary bs=4k,16k,64k,256k,1m,4m --rw read --size 1g
#   fio:     the shell loop people write (one fio per block size on one file)
# Prints per repetition and the medians: wall time, sum of measured
# runtimes, layout time, and wall / (runtimes + layout).
# Usage: scripts/bench-sweep.sh [DIR] [RUNTIME_S] [REPS]   (default . 3 3)
set -eu
dir=${1:-.}
rt=${2:-3}
reps=${3:-3}
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=$(pwd)/target/release/storlab
work=$(mktemp -d "$dir/storlab-bench-sweep.XXXXXX")
trap 'rm -rf "$work"' EXIT
bss="4k 16k 64k 256k 1m 4m"
now() { date +%s%N; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
sl_ratios="" ; fio_ratios=""
i=1
while [ "$i" -le "$reps" ]; do
  # storlab: one command; it reports its own measured and layout time.
  s=$(now)
  "$bin" sweep "$work" -q --no-save --vary "bs=$(echo $bss | tr ' ' ',')" --rw read \
    --size 1g --runtime "${rt}s" --time-based --output-format json >"$work/sweep.json"
  e=$(now)
  line=$(python3 - "$work/sweep.json" "$s" "$e" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
wall = (int(sys.argv[3]) - int(sys.argv[2])) / 1e9
meas = d["measured_ns"] / 1e9
lay = d["layout_ns"] / 1e9
print(f"{wall:.2f} {meas:.2f} {lay:.2f} {d['layout_bytes']} {wall / (meas + lay):.3f}")
PY
)
  set -- $line
  echo "rep $i storlab: wall $1 s, measured $2 s, layout $3 s ($4 bytes laid out), ratio $5"
  sl_ratios="$sl_ratios $5"
  if command -v fio >/dev/null; then
    # fio: lay the file out once (as a first write job), then one fio per bs.
    f="$work/fio.dat"
    s=$(now)
    fio --name=layout --filename="$f" --size=1g --rw=write --bs=1m --direct=1 \
      --end_fsync=1 --output-format=json >"$work/fio-layout.json"
    m=$(now)
    for bs in $bss; do
      fio --name=p --filename="$f" --size=1g --rw=read --bs="$bs" --direct=1 \
        --ioengine=io_uring --runtime="$rt" --time_based --output-format=json >"$work/fio-$bs.json"
    done
    e=$(now)
    line=$(python3 - "$work" "$s" "$m" "$e" "$bss" <<'PY'
import json, sys
w, s, m, e = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
runtime = sum(json.load(open(f"{w}/fio-{bs}.json"))["jobs"][0]["read"]["runtime"] / 1e3
              for bs in sys.argv[5].split())
wall, lay = (e - s) / 1e9, (m - s) / 1e9
print(f"{wall:.2f} {runtime:.2f} {lay:.2f} {wall / (runtime + lay):.3f}")
PY
)
    set -- $line
    echo "rep $i fio loop: wall $1 s, measured $2 s, layout $3 s, ratio $4"
    fio_ratios="$fio_ratios $4"
    rm -f "$f"
  fi
  i=$((i + 1))
done
echo "median ratio wall / (measured + one layout): storlab $(echo $sl_ratios | tr ' ' '\n' | median) (goal <= 1.15)"
[ -n "$fio_ratios" ] && echo "median ratio, fio shell loop: $(echo $fio_ratios | tr ' ' '\n' | median)"
exit 0
