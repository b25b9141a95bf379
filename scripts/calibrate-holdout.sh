#!/usr/bin/env bash
# The calibration goal of issue 24 on this machine's own disk, with longer
# runtimes than the CI test (tests/integration/calib_holdout.rs): storlab's
# bench sweeps block size 4k..1m x iodepth 1..32 for random and sequential
# reads and writes (O_DIRECT, a file under DIR on the disk), ROUNDS times
# (each round the whole grid: a point's repeats are interleaved with the
# others'); `plan calibrate --hold-out alternate --repeats median` (REPEATS=
# best for the fastest repeat) fits on half the grid (a checkerboard) and
# predicts the other half; the table of held-out points with each point's
# run-to-run spread, and the median and worst error beside the median and
# worst spread, are printed (goal: median <= 15 %, worst <= 35 %;
# docs/MODEL.md §8). Every phase records the device's own request counters
# (bench's device_stat), so the fit takes each point's merge factor from
# them; the report lists the held-out points the counts improved or made
# worse against the same fit without them, and the last lines are the goal
# line (median and worst error beside the points' own run-to-run spread)
# and the error and spread per kind of request. Unattended; 120 points x
# RUNTIME x ROUNDS plus about 10 % (1 s x 3 rounds: about 7 minutes).
#
#   scripts/calibrate-holdout.sh [DIR] [RUNTIME] [ROUNDS] [STORLAB]
#   scripts/calibrate-holdout.sh /var/tmp/calib 1s 3 target/release/storlab
#   PATTERN=zero scripts/calibrate-holdout.sh /var/tmp/calib 500ms 3 target/debug/storlab
#
# DIR must be on the disk to calibrate (not tmpfs); it is created and
# removed. Writes use random data (the release build generates it fast
# enough); PATTERN=zero writes zeroed buffers, as the CI test does with the
# debug build, whose per-write payload stamps hold 1 MiB writes at QD 1
# below one request in flight.
set -euo pipefail

DIR=${1:-/var/tmp/storlab-calibrate-holdout}
RUNTIME=${2:-1s}
ROUNDS=${3:-3}
STORLAB=${4:-target/release/storlab}
PATTERN=${PATTERN:-random}
REPEATS=${REPEATS:-median}

if [ ! -x "$STORLAB" ]; then
    echo "no storlab binary at $STORLAB: cargo build --release, or give its path as the 4th argument" >&2
    exit 2
fi
if [ -e "$DIR" ]; then
    echo "$DIR exists: give a new directory (it is removed afterwards)" >&2
    exit 2
fi
mkdir -p "$DIR/data"
# KEEP_DB=FILE keeps the measurements (the results database) for another
# `plan calibrate --db FILE --all ...` afterwards.
trap '[ -n "${KEEP_DB:-}" ] && cp "$DIR/results.db" "$KEEP_DB"; rm -rf "$DIR"' EXIT
if [ "$(stat -f -c %T "$DIR")" = tmpfs ]; then
    echo "$DIR is on tmpfs: give a directory on the disk to calibrate" >&2
    exit 2
fi

JOB=$DIR/sweep.toml
{
    printf '[global]\nsize = "256M"\ncache = "direct"\nruntime = "%s"\ntime_based = true\nbuffer_pattern = "%s"\n' \
        "$RUNTIME" "$PATTERN"
    for rw in randread read randwrite write; do
        for bs in 4k 16k 64k 256k 1M; do
            for qd in 1 2 4 8 16 32; do
                printf '\n[[phase]]\nname = "%s-%s-qd%s"\nrw = "%s"\nbs = "%s"\niodepth = %s\n' \
                    "$rw" "$bs" "$qd" "$rw" "$bs" "$qd"
            done
        done
    done
} > "$JOB"

export STORLAB_DB=$DIR/results.db
start=$(date +%s)
for r in $(seq 1 "$ROUNDS"); do
    echo "round $r of $ROUNDS ($RUNTIME per point, 120 points)" >&2
    "$STORLAB" bench "$DIR/data" --job "$JOB" > /dev/null
done
echo "measured in $(( $(date +%s) - start )) s; load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$STORLAB" plan calibrate --all --as this-disk --like dc-s3700-800gb \
    --hold-out alternate --repeats "$REPEATS" --output "$DIR/this-disk.toml"
"$STORLAB" plan calibrate --all --as this-disk --like dc-s3700-800gb \
    --hold-out alternate --repeats "$REPEATS" --output "$DIR/again.toml" --json > "$DIR/calibration.json"
python3 - "$DIR/calibration.json" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import json, statistics, sys
doc = json.load(open(sys.argv[1]))
cal = doc.get("calibration", doc)
h = cal.get("held_out") or {}
pts = [p for p in h.get("points", []) if p.get("error") is not None]
pct = lambda x: "-" if x is None else f"{100 * x:.1f} %"
med, worst = h.get("median_error"), h.get("worst_error")
met = med is not None and worst is not None and med <= 0.15 and worst <= 0.35
within = sum(1 for p in pts if p.get("spread") is not None and abs(p["error"]) <= p["spread"])
print(f"goal (median <= 15 %, worst <= 35 %): median {pct(med)}, worst {pct(worst)}: "
      f"{'MET' if met else 'not met'}; run-to-run spread of the same points: median "
      f"{pct(h.get('median_spread'))}, worst {pct(h.get('worst_spread'))}; "
      f"{within} of {len(pts)} errors within their point's own spread; "
      f"load average {sys.argv[2]}")
if h.get("median_error_without_merges") is not None:
    print(f"without the merge counts: median {pct(h['median_error_without_merges'])}, "
          f"worst {pct(h.get('worst_error_without_merges'))}")
kinds = {(False, True): "random reads", (False, False): "sequential reads",
         (True, True): "random writes", (True, False): "sequential writes"}
for key, name in kinds.items():
    of = [p for p in pts if (p["write"], p["random"]) == key]
    if not of:
        continue
    e = statistics.median(abs(p["error"]) for p in of)
    sp = [p["spread"] for p in of if p.get("spread") is not None]
    s = f"{100 * statistics.median(sp):.1f} %" if sp else "-"
    print(f"  {name}: median error {100 * e:.1f} %, median spread {s}")
PY
