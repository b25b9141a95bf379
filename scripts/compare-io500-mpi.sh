#!/usr/bin/env bash
# Real io500 and `storlab io500` both under `mpirun -np NP`, with the same
# config on the same file system, in alternating pairs: scripts/compare-io500.sh
# with STORLAB_MPI=1 (storlab's ranks as MPI processes instead of threads).
# Everything that script takes applies (DEVICE=1, BUDGET, the sizes,
# KEEP_FIGURES, REGEX_SHIM, RUN_ONLY); it prints every phase's median figure
# for both, the per-pair ratios (storlab / io500) and one line per goal
# (issue 25: each phase within ±15 %, the score within ±10 %).
#
# usage: scripts/compare-io500-mpi.sh [DIR] [RUNS] [NP] [STONEWALL_S]
#   as scripts/compare-io500.sh; STORLAB must be built with --features mpi.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
STORLAB_MPI=1 exec "$here/scripts/compare-io500.sh" "$@"
