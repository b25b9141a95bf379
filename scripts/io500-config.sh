# Sourced by scripts/compare-io500.sh (and so scripts/compare-io500-mpi.sh): the
# one io500 config.ini both tools run in a comparison.
#
# write_io500_config FILE DATADIR RESULTDIR STONEWALL_S writes FILE with the
# sizes EASY_BLOCK, HARD_SEGMENTS, MD_EASY_N, MD_HARD_N from the environment
# (defaults: io500's ior-easy at 2 MiB transfers, small enough for tmpfs).
# RUN_ONLY="ior-hard mdtest-easy ..." (io500's workload sections: ior-easy,
# ior-hard, mdtest-easy, mdtest-hard, find) turns every other workload off
# with io500's own `run = FALSE`, to compare one workload in isolation.
write_io500_config() {
    local off=()
    if [[ -n "${RUN_ONLY:-}" ]]; then
        for w in ior-easy ior-hard mdtest-easy mdtest-hard find; do
            [[ " $RUN_ONLY " == *" $w "* ]] || off+=("$w")
        done
    fi
    run_line() { [[ " ${off[*]:-} " == *" $1 "* ]] && echo "run = FALSE" || true; }
    cat > "$1" <<INI
[global]
datadir = $2
resultdir = $3
drop-caches = FALSE

[debug]
stonewall-time = $4

[ior-easy]
$(run_line ior-easy)
transferSize = 2m
blockSize = ${EASY_BLOCK:-512m}

[ior-hard]
$(run_line ior-hard)
segmentCount = ${HARD_SEGMENTS:-4000}

[mdtest-easy]
$(run_line mdtest-easy)
n = ${MD_EASY_N:-200000}

[mdtest-hard]
$(run_line mdtest-hard)
n = ${MD_HARD_N:-100000}

[find]
$(run_line find)
INI
}
