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
# docs/MODEL.md §8).
#
#   scripts/calibrate-holdout.sh [DIR] [RUNTIME] [ROUNDS] [STORLAB]
#   scripts/calibrate-holdout.sh /var/tmp/calib 1s 3 target/release/storlab
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
trap 'rm -rf "$DIR"' EXIT
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
