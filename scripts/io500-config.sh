# Sourced by scripts/compare-io500.sh and scripts/compare-io500-mpi.sh: the
# one io500 config.ini both tools run in a comparison.
#
# write_io500_config FILE DATADIR RESULTDIR STONEWALL_S writes FILE with the
# sizes EASY_BLOCK, HARD_SEGMENTS, MD_EASY_N, MD_HARD_N from the environment
# (defaults: io500's ior-easy at 2 MiB transfers, small enough for tmpfs).
write_io500_config() {
    cat > "$1" <<INI
[global]
datadir = $2
resultdir = $3
drop-caches = FALSE

[debug]
stonewall-time = $4

[ior-easy]
transferSize = 2m
blockSize = ${EASY_BLOCK:-512m}

[ior-hard]
segmentCount = ${HARD_SEGMENTS:-4000}

[mdtest-easy]
n = ${MD_EASY_N:-200000}

[mdtest-hard]
n = ${MD_HARD_N:-100000}
INI
}
