#!/usr/bin/env bash
# io500's find phase alone: pfind (io500's parallel find, as io500 runs it)
# beside storlab's find, on one tree shaped as io500's data directory at
# find time (mdtest-easy: a directory per rank; mdtest-hard: one shared
# directory of 3,901-byte files; made by the real mdtest), alternately,
# with 1 and NP ranks each; prints each one's rate in io500's unit
# (files looked at / runtime / 1000), the ratios, and with STRACE=1 the
# system calls per file looked at of each (strace -f -c, every rank).
#
# usage: scripts/compare-io500-find.sh [DIR] [ROUNDS] [NP] [FILES]
#   DIR     file system (default: a new directory in /dev/shm)
#   ROUNDS  alternating rounds (default 3)
#   NP      ranks (default 2)
#   FILES   mdtest-easy files per rank (default 60000; mdtest-hard gets half)
# env: STORLAB_FIND (default: the `pfind` example of storlab-io500, built
#      with cargo build --release -p storlab-io500 --features run --example pfind),
#      IO500_BUILD (default /work/io500-peers/build: DIR/build/pfind/pfind,
#      DIR/build/ior/src/mdtest), STRACE=1, PFIND_MPI_ARGS (words added to
#      pfind's mpirun), REGEX_SHIM=1 (a diagnostic: pfind's regexec() of
#      `.*01.*` answered by a substring test, scripts/peer-shims/
#      regexec-substring.c preloaded; the file-system work is unchanged).
# Every round checks that both found the same files (pfind's `found:`,
# storlab's `found`) and fails (exit 1) if not.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
made_dir=""
if [[ -n "${1:-}" ]]; then dir=$1; else dir=$(mktemp -d /dev/shm/compare-find.XXXXXX); made_dir=$dir; fi
rounds=${2:-3}
np=${3:-2}
files=${4:-60000}
b=${IO500_BUILD:-/work/io500-peers/build}
pfind=$b/build/pfind/pfind
mdtest=$b/build/ior/src/mdtest
sfind=${STORLAB_FIND:-${CARGO_TARGET_DIR:-$here/target}/release/examples/pfind}
for x in "$pfind" "$mdtest" "$sfind"; do
    [[ -x "$x" ]] || { echo "missing $x (see the usage above)" >&2; exit 2; }
done
work=$(mktemp -d "$dir/find.XXXXXX")
trap 'rm -rf "$work"; [[ -n "$made_dir" ]] && rmdir "$made_dir" 2>/dev/null || true' EXIT
mkdir -p "$work/data" "$work/res"
touch "$work/res/timestampfile"
mpi=(mpirun --allow-run-as-root --oversubscribe)
pfind_mpi_args=${PFIND_MPI_ARGS:-}
if [[ "${REGEX_SHIM:-}" == 1 ]]; then
    cc -O2 -shared -fPIC -o "$work/regexec-substring.so" "$here/scripts/peer-shims/regexec-substring.c" -ldl
    pfind_mpi_args+=" -x LD_PRELOAD=$work/regexec-substring.so"
    echo "REGEX_SHIM=1: pfind's regexec() of .*01.* answered by strstr() (a diagnostic, not io500 as built)" >&2
fi
(cd "$work" && "${mpi[@]}" -np "$np" "$mdtest" -n "$files" -u -L -F -N 1 -d "$work/data/mdtest-easy" -C >/dev/null 2>&1)
(cd "$work" && "${mpi[@]}" -np "$np" "$mdtest" -n $((files / 2)) -t -F -w 3901 -e 3901 -N 1 -d "$work/data/mdtest-hard" -C >/dev/null 2>&1)
args=("$work/data" -newer "$work/res/timestampfile" -size 3901c -name '*01*' -C -q 10000 -D rates)
# Each prints "RATE FOUND" (io500's kIOPS, files found).
# shellcheck disable=SC2086 # pfind_mpi_args is a list of mpirun words
run_pfind() { "${mpi[@]}" $pfind_mpi_args -np "$1" "$pfind" "${args[@]}" 2>/dev/null | sed -n 's/.*rate: \([0-9.]*\) kiops.* found: \([0-9]*\).*/\1 \2/p'; }
run_storlab() { "$sfind" "$work/data" "$work/res/timestampfile" "$1" | sed -n 's/^found \([0-9]*\) .* rate \([0-9.]*\) kIOPS.*/\2 \1/p'; }
: > "$work/rates"
for i in $(seq 1 "$rounds"); do
    for n in 1 "$np"; do
        if (( i % 2 )); then a=$(run_pfind "$n"); s=$(run_storlab "$n"); else s=$(run_storlab "$n"); a=$(run_pfind "$n"); fi
        read -r ar af <<< "$a"; read -r sr sf <<< "$s"
        echo "$n $ar $sr" >> "$work/rates"
        echo "round $i, $n ranks: pfind $ar, storlab $sr kIOPS; found $af and $sf (load average $(cut -d' ' -f1 /proc/loadavg))" >&2
        if [[ -z "$af" || "$af" != "$sf" ]]; then
            echo "pfind and storlab did not find the same number of files ($af, $sf)" >&2
            exit 1
        fi
    done
done
python3 - "$work/rates" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
for n in sorted({r[0] for r in rows}, key=int):
    a = [float(r[1]) for r in rows if r[0] == n]
    s = [float(r[2]) for r in rows if r[0] == n]
    pairs = [y / x for x, y in zip(a, s)]
    print(f"find, {n} rank(s): pfind {statistics.median(a):.1f} kIOPS, storlab {statistics.median(s):.1f} kIOPS, "
          f"ratio {statistics.median(pairs):.2f} (pairs {min(pairs):.2f}-{max(pairs):.2f})")
PY
if [[ "${STRACE:-}" == 1 ]]; then
    # The walk's file-system calls, every rank's summed: directory opens and
    # stats that name the data directory, and every getdents64.
    total=$(find "$work/data" -type f | wc -l)
    calls=getdents64,newfstatat,statx,lstat,stat,openat,open
    # one strace per rank, pfind's arguments quoted as above
    { echo '#!/bin/bash'; printf 'exec strace -f -e trace=%s -o %s/tr.pfind.$1.$OMPI_COMM_WORLD_RANK %q' "$calls" "$work" "$pfind"; printf ' %q' "${args[@]}"; echo; } > "$work/traced-pfind"
    chmod +x "$work/traced-pfind"
    for n in 1 "$np"; do
        "${mpi[@]}" -np "$n" "$work/traced-pfind" "$n" >/dev/null 2>&1 || true
        strace -f -e trace=$calls -o "$work/tr.storlab.$n" "$sfind" "$work/data" "$work/res/timestampfile" "$n" >/dev/null
        for t in pfind storlab; do
            cat "$work"/tr.$t.$n* | awk -v t="$t" -v n="$n" -v total="$total" -v data="$work/data" '
                { split($2, a, "("); k = a[1] }
                k == "getdents64" || index($0, data) { c[k]++ }
                END { printf "strace %s, %s rank(s), %d files looked at:", t, n, total
                      for (k in c) printf " %s %d (%.4f/file)", k, c[k], c[k] / total; printf "\n" }'
        done
    done
fi
