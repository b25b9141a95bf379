#!/usr/bin/env bash
# What IOR's read check (-R) costs in io500's ior-easy-read, beside storlab's
# ior-easy-read, on one file system: a diagnostic for the IOR read phases of
# `scripts/compare-io500.sh`. Writes NP files of BLOCK with IOR as io500's
# ior-easy-write does, then in alternating rounds reads them with io500's
# ior-easy-read command line (-r -R: every 8-byte word checked) and with the
# same line without -R (no check), and runs storlab's io500 with only the
# ior-easy workload (its ior-easy-read checks every word, as IOR's -R).
# Prints the median of each (GiB/s), IOR's rate without the check over its
# rate with it (how much of IOR's read the check is), and storlab's rate
# over IOR's with the check (the io500 comparison's ratio). On tmpfs the
# reads are CPU-bound and the check's cost decides them; on a disk it should
# not. storlab's run has io500's 5 s stonewall (its ior-rnd4K-easy-read runs
# that long): on a file system slower than NP x BLOCK per 5 s its write, and
# so its read, is cut short where IOR's here is not.
#
# usage: scripts/compare-ior-readcheck.sh [DIR] [ROUNDS] [NP] [BLOCK]
#   DIR     file system (default: a new directory in /dev/shm)
#   ROUNDS  alternating rounds (default 5)
#   NP      ranks (default 2)
#   BLOCK   bytes per rank (default 2g; transfers of 2 MiB, as io500's)
# env: IOR (default /work/io500-peers/build/build/ior/src/ior, else built
#      with ../shared/peers/build-ior.sh), STORLAB (default
#      target/release/storlab), IOR_MPI_ARGS (words added to IOR's mpirun,
#      e.g. "-x GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=4194304"
#      for IOR's buffers in huge pages as storlab's are).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/io500-config.sh
source "$here/scripts/io500-config.sh"
made_dir=""
if [[ -n "${1:-}" ]]; then dir=$1; else dir=$(mktemp -d /dev/shm/compare-readcheck.XXXXXX); made_dir=$dir; fi
rounds=${2:-5}
np=${3:-2}
block=${4:-2g}
storlab=${STORLAB:-${CARGO_TARGET_DIR:-$here/target}/release/storlab}
ior=${IOR:-/work/io500-peers/build/build/ior/src/ior}
if [[ ! -x "$ior" ]]; then
    ior=$("$here/../shared/peers/build-ior.sh" "${IOR_BUILD:-/tmp/ior-build}" | tail -1)
fi
for x in "$storlab" "$ior"; do
    [[ -x "$x" ]] || { echo "missing $x (see the usage above)" >&2; exit 2; }
done
work=$(mktemp -d "$dir/readcheck.XXXXXX")
trap 'rm -rf "$work"; [[ -n "$made_dir" ]] && rmdir "$made_dir" 2>/dev/null || true' EXIT
mkdir -p "$work/ior" "$work/storlab" "$work/res"
mpi=(mpirun --allow-run-as-root --oversubscribe)
# io500's ior-easy command lines (phase_ior_easy.c, phase_ior_easy_write.c,
# phase_ior_easy_read.c), without the stonewall: a fixed amount is read.
common=(--dataPacketType=timestamp -g -G 27 -k -e -o "$work/ior/ior_file_easy" -C -Q 1 -t 2m -b "$block" -F)
# shellcheck disable=SC2086 # IOR_MPI_ARGS is a list of mpirun words
ior_run() { "${mpi[@]}" ${IOR_MPI_ARGS:-} -np "$np" "$ior" "${common[@]}" "$@" 2>&1; }
# IOR's summary line "read  MAX MIN MEAN ..." (MiB/s) as GiB/s
ior_rate() { awk '$1 == "read" && $2 ~ /^[0-9.]+$/ { printf "%.4f\n", $2 / 1024; exit }'; }
ior_run -w > "$work/ior-write.log" || { cat "$work/ior-write.log" >&2; exit 1; }
# A 5 s stonewall: io500 runs ior-rnd4K-easy-read after the ior-easy phases
# for the stonewall time (the write of BLOCK is over well before it here).
RUN_ONLY=ior-easy EASY_BLOCK=$block write_io500_config "$work/config.ini" "$work/storlab" "$work/res" 5
storlab_rate() {
    "$storlab" io500 "$work/config.ini" "$work/storlab" --np "$np" --no-save -q 2>/dev/null |
        awk '$2 == "ior-easy-read" { print $3; exit }'
}
: > "$work/rates"
for i in $(seq 1 "$rounds"); do
    if (( i % 2 )); then
        a=$(ior_run -r -R | ior_rate); b=$(ior_run -r | ior_rate); s=$(storlab_rate)
    else
        s=$(storlab_rate); b=$(ior_run -r | ior_rate); a=$(ior_run -r -R | ior_rate)
    fi
    [[ -n "$a" && -n "$b" && -n "$s" ]] || { echo "round $i: a run printed no rate ($a, $b, $s)" >&2; exit 1; }
    echo "$a $b $s" >> "$work/rates"
    echo "round $i: IOR -r -R $a, IOR -r $b, storlab $s GiB/s (load average $(cut -d' ' -f1 /proc/loadavg))" >&2
done
python3 - "$work/rates" "$np" "$block" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
a, b, s = (statistics.median(c) for c in zip(*rows))
def pairs(i, j):
    r = [x[i] / x[j] for x in rows]
    return f"{statistics.median(r):.3f} (rounds {min(r):.2f}-{max(r):.2f})"
print(f"ior-easy-read, {sys.argv[2]} ranks x {sys.argv[3]}, median of {len(rows)} rounds (GiB/s):")
print(f"  IOR with its check (-r -R, io500's) {a:.3f}; IOR without it (-r) {b:.3f}; storlab io500 {s:.3f}")
print(f"  IOR without / with the check: {pairs(1, 0)}")
print(f"  storlab / IOR with the check (io500's ratio): {pairs(2, 0)}")
print(f"  storlab / IOR without the check: {pairs(2, 1)}")
PY
