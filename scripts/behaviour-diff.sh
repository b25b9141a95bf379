#!/usr/bin/env bash
# behaviour-diff.sh OLD NEW — does a user see any difference between two storlab binaries?
#
# Runs one battery of commands through OLD, then the same battery through NEW,
# and diffs what a user sees: stdout, stderr and the exit code of every command
# (and the content of files a command writes: charts, reports, exports, man
# pages). Issue 21's rule is "nothing a user sees changes except where a fork
# was a bug"; this script is the proof, by behaviour rather than by reading code.
#
#   scripts/behaviour-diff.sh /work/old-storlab target/debug/storlab
#   ONLY='^(plan|sim)-' scripts/behaviour-diff.sh OLD NEW   # only cases whose name matches
#   KEEP=1 scripts/behaviour-diff.sh OLD NEW                # keep the raw and masked outputs
#   MAXLINES=200 scripts/behaviour-diff.sh OLD NEW          # longer diffs (default 40 lines a case)
#
# Exit 0: no difference; 1: differences (each printed as a unified diff of the
# masked outputs, then a summary listing the differing cases); 2: bad usage.
#
# Isolation: everything happens under one `mktemp -d` directory (removed at the
# end unless KEEP=1). Each side runs in the same path ($TMP/run, moved aside
# afterwards) with the binary copied to $TMP/run/bin/storlab, so paths, argv[0]
# and clap's "Usage: storlab" are the same for both. Each command gets a fresh
# environment (`env -i`): HOME, XDG_CONFIG_HOME, XDG_DATA_HOME and STORLAB_DB
# inside the temp dir, a config.toml with a fixed host label and tag, NO_COLOR,
# TZ=UTC, LC_ALL=C.UTF-8, stdin from /dev/null, the scratch dir as cwd. Fixtures
# (examples/, profiles/, tests/fixtures, crates/fio/fixtures, docs/SIM.md) are
# copied from the checkout holding this script, so both binaries read the same
# inputs. No command touches a device or anything outside the temp dir: runs
# use the null engine (no I/O) on files in the scratch dir, campaigns and sweeps
# are tiny, `tune` is only asked for help and for bad input.
#
# Masking (what must differ): timestamps (ISO and compact forms), the random
# suffix of sweep/campaign ids, free-space figures. Cases marked `nums`
# (anything that measured: null-engine bench, sweep, md, campaign, and the DB
# commands reading those runs) also have every number replaced by N, the unit
# of a measured time (ns/µs/ms/s), a comparison's sign and verdict (better,
# worse, noise), the spread's source and per-run chart lists masked, runs of
# blanks and table rules squeezed, and of a chart or HTML report only its texts
# kept: their layout, labels, keys, messages and exit codes are compared, not
# their figures. In `nums` cases whose stdout is JSON, every `params` object
# (what the job resolved to: sizes, pattern, engine, depths, groups; seeds left
# out) is still compared exactly (needs jq; skipped without it). Deterministic
# cases (help, plan, sim, monitor --replay, inspect of recorded trees, trace,
# import of fixtures and the DB commands on imported runs, profiles,
# completions, man, bad input) are compared exactly after the time masks.
# `behaviour-diff.sh OLD OLD` reports no difference (checked on da0d7eb): the
# masks leave no noise. About 400 commands; 3-4 minutes for both sides.
#
# Old databases: the DBs the OLD battery wrote are copied (byte for byte) into
# the NEW side, and runs/show/export/compare/check/report are run on that copy
# by both binaries (cases `olddb-*`): the new binary must read what the old one
# stored and say the same about it.
set -uo pipefail
export LC_ALL=C.UTF-8

if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
    echo "usage: $0 OLD-STORLAB NEW-STORLAB (two executable storlab binaries)" >&2
    exit 2
fi
OLD=$(readlink -f "$1")
NEW=$(readlink -f "$2")
REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
ONLY=${ONLY:-}
KEEP=${KEEP:-0}
MAXLINES=${MAXLINES:-40}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/behaviour-diff.XXXXXX")
R=$TMP/run
cleanup() {
    if [ "$KEEP" = 1 ]; then
        echo "outputs kept in $TMP (old/out, new/out; masked in $TMP/masked)" >&2
    else
        rm -rf "$TMP"
    fi
}
trap cleanup EXIT

# ---------------------------------------------------------------- running ----

# c NAME MODE ARGS... : run `storlab ARGS...` as case NAME; MODE is `exact` or
# `nums` (mask every number). Optional environment for one case:
#   DB=path       the results database (default $R/db/main.db; `none`: no STORLAB_DB)
#   FILES="a b"   files (relative to the scratch dir) whose content is part of
#                 the output; each is removed afterwards
#   CFG=dir       another XDG_CONFIG_HOME
c() {
    local name=$1 mode=$2
    shift 2
    if [ -n "$ONLY" ] && ! [[ $name =~ $ONLY ]]; then return 0; fi
    local o=$R/out/$name
    echo "$mode" >"$o.mode"
    printf '%q ' storlab "$@" | sed "s#$R#<TMP>#g" >"$o.cmd"
    local db=(STORLAB_DB="${DB:-$R/db/main.db}")
    [ "${DB-unset}" = none ] && db=()
    (
        cd "$R/s" || exit 99
        env -i PATH="$PATH" HOME="$R/home" USER=root LOGNAME=root \
            XDG_CONFIG_HOME="${CFG:-$R/home/.config}" XDG_DATA_HOME="$R/home/.local/share" \
            "${db[@]}" NO_COLOR=1 TZ=UTC LC_ALL=C.UTF-8 TERM=dumb \
            COLUMNS=100 timeout 300 "$R/bin/storlab" "$@" </dev/null >"$o.out" 2>"$o.err"
        echo $? >"$o.rc"
    )
    local f
    for f in ${FILES:-}; do
        if [ -f "$R/s/$f" ] && [ "$mode" = nums ] && [[ $f =~ \.(svg|html)$ ]]; then
            # Measured figures move axes, ticks and bars: keep the words only.
            {
                printf -- '--- file %s (its texts, sorted):\n' "$f"
                sed -e 's/<[^>]*>/\n/g' "$R/s/$f" | sed -e 's/^[[:space:]]*//' -e '/^$/d' | sort -u
            } >>"$o.out"
            rm -f "$R/s/$f"
        elif [ -f "$R/s/$f" ]; then
            case $f in
            *.png | *.gz) printf -- '--- file %s: %s bytes, png=%s\n' "$f" \
                "$(stat -c %s "$R/s/$f")" "$(head -c 8 "$R/s/$f" | od -An -c | tr -d ' ')" ;;
            *) printf -- '--- file %s:\n' "$f"; cat "$R/s/$f" ;;
            esac >>"$o.out"
            rm -f "$R/s/$f"
        elif [ -d "$R/s/$f" ]; then
            (cd "$R/s/$f" && find . -type f | sort | while read -r g; do
                printf -- '--- file %s/%s:\n' "$f" "$g"
                cat "$g"
            done) >>"$o.out"
            rm -rf "${R:?}/s/$f"
        else
            printf -- '--- file %s: absent\n' "$f" >>"$o.out"
        fi
    done
}

# The help of every command and subcommand, found by walking `Commands:` of
# both binaries' help (a command one binary lacks shows as a difference).
help_tree() {
    local path=("$@")
    local name="help${path[*]:+-}$(IFS=-; echo "${path[*]}")"
    c "$name" exact "${path[@]}" --help
    local subs
    subs=$( { "$OLD" "${path[@]}" --help; "$NEW" "${path[@]}" --help; } 2>/dev/null |
        awk '/^Commands:/ {on=1; next} on && /^[^ ]/ {on=0} on && /^  [a-z][a-z-]* / {print $1}' |
        grep -vx help | sort -u)
    local s
    for s in $subs; do help_tree "${path[@]}" "$s"; done
}

# A tiny null-engine campaign of two cells on scratch directories.
campaign_file() {
    mkdir -p "$R/s/cells/a" "$R/s/cells/b"
    cat >"$R/s/tiny-campaign.toml" <<EOF
name = "tiny"
baseline = "a"
[matrix]
cell = ["a", "b"]
[template]
name = "{cell}"
tags = { letter = "{cell}" }
setup = ["true"]
teardown = ["true"]
target = "$R/s/cells/{cell}"
run = [["bench", "--rw", "read", "--engine", "null", "--size", "1M", "--bs", "64k"]]
EOF
    # A second campaign of another name: two campaigns of one name started in
    # the same second would share an id, and which happened would depend on time.
    sed -e 's/^name = "tiny"/name = "tiny2"/' "$R/s/tiny-campaign.toml" >"$R/s/tiny2-campaign.toml"
    # The shipped example, pointed at the scratch dir, for --dry-run only.
    sed -e "s#/mnt/storlab-campaign#$R/s/mnt#g" "$R/fx/examples/campaigns/fs-choice.toml" \
        >"$R/s/fs-choice.toml"
}

battery() {
    local S=$R/s FX=$R/fx
    local NULL=(--engine null --size 1m)

    # --- help, version, completions, man ------------------------------------
    help_tree
    c top-h exact -h
    c version exact --version
    local cmd
    for cmd in bench runs show import check export compare report plan sweep profiles campaign \
        tune sim md monitor inspect trace completions man; do
        c "help-h-$cmd" exact "$cmd" -h
    done
    c help-sub-plan-layout exact help plan layout
    for sh in bash zsh fish elvish powershell; do c "completions-$sh" exact completions "$sh"; done
    c man exact man
    c man-bench exact man bench
    c man-plan-layout exact man plan layout
    FILES=mandir c man-dir exact man --dir mandir

    # --- profiles ---------------------------------------------------------------
    c profiles exact profiles
    c profiles-list exact profiles list
    c profiles-list-json exact profiles list --json
    local p
    for p in "$FX"/profiles/*.toml; do
        p=$(basename "$p" .toml)
        c "profiles-show-$p" exact profiles show "$p"
    done
    c profiles-show-json exact profiles show seq --json
    c profiles-show-missing exact profiles show nosuch

    # --- bench: --ior --dry-run, --dry-run elsewhere, null-engine runs -------
    c bench-ior-dry exact bench t --ior "-w -r -t 1m -b 4m -s 2 -F" --dry-run
    c bench-ior-dry-shared exact bench t --ior "-w -t 64k -b 1m -s 4" --dry-run
    c bench-ior-dry-json exact bench t --ior "-r -t 1m -b 4m" --dry-run --json
    c bench-ior-bad exact bench t --ior "-w -Q 7" --dry-run
    c bench-dry-flags exact bench t --rw randread --bs 4k --iodepth 8 --dry-run
    # --dry-run is documented for --ior only; the old binary ignores it with
    # --job/--profile and runs the job, so these carry the null engine and a
    # small size in case a binary runs them.
    c bench-dry-job nums bench t --job "$FX/examples/iozone-like.toml" --dry-run "${NULL[@]}" --runtime 100ms --no-save
    c bench-dry-fio exact bench --fio-job "$FX/crates/fio/fixtures/fio-3.33-jobfile-clones.fio" --dry-run
    c bench-dry-profile nums bench t --profile seq --dry-run "${NULL[@]}" --runtime 100ms --no-save
    c bench-null nums bench t --rw read "${NULL[@]}" --bs 64k
    c bench-null-json nums bench t --rw randread "${NULL[@]}" --bs 4k -q --json
    c bench-null-of-json nums bench t --rw randwrite "${NULL[@]}" --bs 4k --iodepth 4 --numjobs 2 \
        --output-format json --tag suite=bd
    c bench-null-mix nums bench t --rw randrw --rwmixread 70 --bssplit 4k/50:64k/50 "${NULL[@]}" -q --json
    c bench-null-loops nums bench t --rw read "${NULL[@]}" --bs 4k --loops 2 --note loops
    c bench-null-timed nums bench t --rw randread --engine null --size 1m --runtime 200ms --time-based -q
    c bench-null-group nums bench t --engine null --size 1m --runtime 200ms --time-based \
        --group "name=r,rw=randread,numjobs=2" --group "name=w,rw=write" -q --json
    c bench-null-job nums bench t --job "$FX/examples/iozone-like.toml" "${NULL[@]}" --runtime 100ms -q
    c bench-null-sasjob nums bench t --job "$FX/examples/sas-analytics.toml" "${NULL[@]}" --runtime 100ms -q
    # fio's unit grammar: in a job file 4KiB is 4000 bytes (as fio reads it):
    # a block size of 4000 is refused, a size of 1MiB is 1,000,000 bytes.
    printf '[global]\nioengine=null\nsize=1MiB\n[r]\nrw=read\nbs=4k\n[w]\nstonewall\nrw=randwrite\nbs=64k\nsize=256KiB\niodepth=4\n' \
        >"$S/units.fio"
    printf '[global]\nioengine=null\nsize=1m\n[r]\nrw=read\nbs=4KiB\n' >"$S/units-bs.fio"
    c bench-fio-units nums bench --fio-job units.fio --directory "$S" -q --json --no-save
    c bench-fio-units-bs exact bench --fio-job units-bs.fio --directory "$S" -q --json --no-save
    c bench-null-fio nums bench --fio-job "$FX/crates/fio/fixtures/fio-3.33-jobfile-clones.fio" \
        --directory "$S" "${NULL[@]}" --runtime 100ms -q --no-save
    for p in seq iops oltp sas; do
        c "bench-null-profile-$p" nums bench t --profile "$p" "${NULL[@]}" --runtime 100ms -q --no-save
    done
    c bench-null-design nums bench t --rw read "${NULL[@]}" --design "R6/12 --drive exos-x18-18tb" -q
    c bench-null-repeat nums bench t --rw read "${NULL[@]}" --repeat 2 -q
    c bench-null-quick nums bench t "${NULL[@]}" --runtime 100ms -q --no-save --json
    c bench-null-flags nums bench t --rw randwrite "${NULL[@]}" --bs 4k --cache cold --fsync-every 8 \
        --rate-iops 50000 --thinktime 10us --buffer-pattern zero --seed 7 --fallocate none -q --no-save --json
    c bench-null-shared nums bench t --rw read "${NULL[@]}" --shared-file --stride 64k --bs 4k --numjobs 2 \
        -q --no-save --json
    c bench-null-verify nums bench t --rw write "${NULL[@]}" --bs 4k --verify -q --no-save
    c bench-null-steady nums bench t --rw read --engine null --size 1m --runtime 300ms --time-based \
        --steadystate iops:20 --steadystate-duration 100ms --log-interval 50ms -q --no-save
    c bench-null-monitor nums bench t --rw read "${NULL[@]}" --monitor --monitor-interval 100ms -q --no-save
    c bench-null-keep nums bench t --rw write "${NULL[@]}" --keep -q --no-save
    rm -rf "$S/t"
    c bench-null-kb-base nums bench t --rw read "${NULL[@]}" --bs 4KiB --kb-base 1000 -q --no-save --json
    c bench-clients-no-mpi exact bench t --rw read "${NULL[@]}" --clients 1,2 --no-save
    FILES="bj.json" c bench-null-json-out nums bench t --rw read "${NULL[@]}" -q --no-save --json-out bj.json

    # --- sweep -------------------------------------------------------------------
    c sweep-dry exact sweep t --vary bs=4k..64k:x2 --rw read "${NULL[@]}" --dry-run
    c sweep-null nums sweep t --vary bs=4k..64k:x4 --rw read "${NULL[@]}" --no-save
    c sweep-null-json nums sweep t --vary bs=4k,64k --vary numjobs=1,2 --rw read "${NULL[@]}" \
        --no-save --output-format json
    c sweep-null-zip nums sweep t --vary bs=4k,64k --vary iodepth=4,1 --zip --rw randread "${NULL[@]}" -q
    c sweep-null-plus nums sweep t --vary numjobs=1..3:+1 --rw read "${NULL[@]}" -q --no-save
    FILES="sw.svg" c sweep-null-chart nums sweep t --vary bs=4k,64k --rw read "${NULL[@]}" -q --no-save \
        --chart sw.svg
    local sid
    sid=$(grep -oE 'sw-[0-9T-]+[0-9a-f-]*' "$R/out/sweep-null-zip.out" 2>/dev/null | head -1)
    c sweep-resume nums sweep --resume "${sid:-none}"
    c sweep-null-qd nums sweep t --vary qd=1,2 --rw read "${NULL[@]}" -q --no-save
    c sweep-null-iodepth-alias nums sweep t --vary iodepth=1,2 --rw read "${NULL[@]}" -q --no-save

    # --- campaign ----------------------------------------------------------------
    campaign_file
    c campaign-dry exact campaign tiny-campaign.toml --dry-run
    c campaign-example-dry exact campaign fs-choice.toml --dry-run
    c campaign-run nums campaign tiny-campaign.toml --yes --dir camp
    local cid
    cid=$(grep -oE 'tiny-[0-9]{8}-[0-9]{6}[0-9a-f-]*' "$R/out/campaign-run.out" 2>/dev/null | head -1)
    c campaign-resume nums campaign --resume "${cid:-none}" --yes --dir camp
    c campaign-run-json nums campaign tiny2-campaign.toml --yes --dir camp2 --json
    rm -rf "$S/camp" "$S/camp2"

    # --- md ------------------------------------------------------------------------
    mkdir -p "$S/mdt"
    c md nums md mdt --files 20 --depth 1 --branch 2
    c md-json nums md mdt --files 10 --ops create,stat,delete --no-save --json
    c md-mdtest nums md -d mdt -n 12 -F -z 1 -b 2 -u -w 4k -q

    # --- plan ------------------------------------------------------------------------
    c plan-catalog exact plan catalog
    c plan-catalog-json exact plan catalog --json
    c plan-layout exact plan layout R60/12/48
    c plan-layout-drive exact plan layout R60/12/48 --drive exos-x18-18tb --enclosure jbod-4u60-sas12 --cores 64
    c plan-layout-lvm exact plan layout "lvm(4*R6/12, stripe=1M)" --controllers 2
    c plan-layout-params exact plan layout R6/12 --capacity 2TB --mtbf 600000h --ber 1e-15 \
        --sector-size 512 --rebuild-rate 50MB/s
    c plan-layout-mix exact plan layout R6/12 --mix-sequential --mix-size 8k --mix-read 50 \
        --mix-buffered --streams 16 --qd 1
    c plan-layout-json exact plan layout R6/12 --drive exos-x18-18tb --json
    c plan-layout-raid6 exact plan layout RAID6/12
    c plan-search exact plan search --drive constellation-es3-4tb --drives 48 --min-usable 120TB \
        --max-controllers 2
    c plan-search-layout exact plan search --layout R60/12/x --drives 24..240 --min-usable 500TB \
        --min-mttdl 1000y --top 5
    c plan-search-json exact plan search --drive exos-x18-18tb --drives 24 --top 3 --json

    # --- sim ---------------------------------------------------------------------------
    local f n
    for f in "$FX"/examples/sim/*.toml "$FX"/docs-sim/*.toml; do
        n=$(basename "$f" .toml)
        c "sim-$n" exact sim "$f" --no-save
        c "sim-$n-json" exact sim "$f" --no-save --json
    done
    c sim-vary-clients exact sim "$FX/examples/sim/two-port-1g-fc-array.toml" --vary clients=1..1024 --no-save
    c sim-vary-movers exact sim "$FX/examples/sim/data-movers-parallel-fs.toml" --vary movers=1,2,3,4 --no-save
    c sim-vary-filesize-both exact sim "$FX/examples/sim/fast-cache-slow-backend.toml" \
        --vary file_size=64MiB,1GiB,16GiB --solver both --no-save
    c sim-vary-times exact sim "$FX/examples/sim/two-port-1g-fc-array.toml" --vary clients=1..64:x4 --no-save
    c sim-vary-plus exact sim "$FX/examples/sim/two-port-1g-fc-array.toml" --vary clients=1..7:+2 --no-save
    c sim-vary-points exact sim "$FX/examples/sim/two-port-1g-fc-array.toml" --vary clients=1..64/3 --no-save
    c sim-vary-json exact sim "$FX/examples/sim/two-port-1g-fc-array.toml" --vary clients=1,16,256 --json --no-save
    c sim-des exact sim "$FX/examples/sim/random-reads-queue-depth-knee.toml" --solver des --seed 3 --no-save
    FILES="sim.svg" c sim-chart exact sim "$FX/examples/sim/data-movers-parallel-fs.toml" \
        --vary movers=1,2,4 --chart sim.svg --no-save
    c sim-saved exact sim "$FX/examples/sim/two-port-1g-fc-array.toml" --tag suite=sim

    # --- monitor --replay, inspect -------------------------------------------------------
    local LS=$FX/tests/fixtures/monitor/loopstack MD=$FX/tests/fixtures/monitor/md-lvm
    c monitor-replay exact monitor --replay "$LS/replay.txt" --sys-root "$LS" loop0p1 loop0p2 loop1 loop2 --count 1
    c monitor-replay-all exact monitor --replay "$LS/replay.txt" --sys-root "$LS" --layer all
    c monitor-replay-leaf exact monitor --replay "$LS/replay.txt" --sys-root "$LS" --layer leaf -z -t
    c monitor-replay-si exact monitor --replay "$LS/replay.txt" --sys-root "$LS" --units si --count 2
    c monitor-replay-csv exact monitor --replay "$LS/replay.txt" --sys-root "$LS" --output-format csv
    c monitor-replay-json exact monitor --replay "$LS/replay.txt" --sys-root "$LS" --output-format json
    c monitor-replay-jsonl exact monitor --replay "$LS/replay.txt" --sys-root "$LS" --output-format jsonl
    c monitor-replay-md exact monitor --replay "$MD/replay.txt" --sys-root "$MD" --layer all
    c monitor-tree exact monitor --tree --sys-root "$LS"
    c monitor-tree-md exact monitor --tree --sys-root "$MD"
    c inspect-md exact inspect /data --sys-root "$MD"
    c inspect-md-root exact inspect / --sys-root "$MD"
    c inspect-md-json exact inspect /data --sys-root "$MD" --json
    c inspect-scratch nums inspect "$S"
    c inspect-scratch-json nums inspect "$S" --json

    # --- trace ---------------------------------------------------------------------------
    for f in "$FX"/tests/fixtures/darshan/*.darshan "$FX"/tests/fixtures/iolog/*.iolog; do
        n=$(basename "$f")
        c "trace-summary-$n" exact trace summary "$f"
        c "trace-summary-json-$n" exact trace summary "$f" --json
        c "trace-to-job-$n" exact trace to-job "$f"
    done
    c trace-mpiio exact trace summary "$FX/tests/fixtures/darshan/dxt.darshan" --dxt-module mpiio

    # --- import of fio fixtures, and the DB commands on them (deterministic) --------------
    local I=$R/db/import.db
    for f in "$FX"/crates/fio/fixtures/*.json; do
        n=$(basename "$f" .json)
        DB=$I c "import-$n" exact import "$f" --host oss01 --tag src=fixture
    done
    # The same fio JSON with its job options written with fio's binary units.
    sed -e 's/"bs" : "4k"/"bs" : "4KiB"/' -e 's/"size" : "4m"/"size" : "4MiB"/' \
        "$FX/crates/fio/fixtures/fio-3.33-randread.json" >"$S/units.json"
    DB=$I c import-units exact import units.json --json
    DB=$I c import-units-show exact show latest --json
    DB=$I c import-json exact import "$FX/crates/fio/fixtures/fio-3.33-randread.json" --json --tag again=yes
    DB=$I c import-note-design exact import "$FX/crates/fio/fixtures/fio-3.33-randread.json" \
        --note "a note" --design "R6/12 --drive exos-x18-18tb"
    db_commands imp "$I" exact
    # --format: the older spelling of --output-format (export, report, sim).
    DB=$I c format-alias-export exact export 1 2 --format md
    DB=$I FILES=fa.svg c format-alias-report exact report 1 --format svg --chart throughput -o fa.svg
    c format-alias-sim exact sim "$FX/examples/sim/iscsi-array-members.toml" --format json --no-save
    c format-alias-json-conflict exact runs --json --output-format table

    # --- the DB of the bench/sweep/sim runs above (figures masked) ------------------------
    db_commands main "$R/db/main.db" nums

    # --- config: a bad config file is named ------------------------------------------------
    mkdir -p "$R/badcfg/storlab"
    printf 'bogus = 1\n' >"$R/badcfg/storlab/config.toml"
    CFG=$R/badcfg c config-bad exact runs
    mkdir -p "$R/dbcfg/storlab"
    printf 'database = "%s"\n' "$R/db/import.db" >"$R/dbcfg/storlab/config.toml"
    CFG=$R/dbcfg DB=none c config-database exact runs

    # --- bad input: a clear message, exit 2 --------------------------------------------------
    c bad-unit exact bench t --rw read --engine null --size 1q
    c bad-unit-bs exact bench t --rw read --engine null --size 1m --bs 4kb7
    c bad-option exact bench t --nope
    c bad-option-runs exact runs --frobnicate
    c bad-rw exact bench t --rw sideways --engine null --size 1m
    c bad-engine exact bench t --rw read --engine warp --size 1m
    c bad-range exact sweep t --vary bs=64k..4k:x2 --rw read "${NULL[@]}" --no-save
    c bad-range-step exact sweep t --vary numjobs=1..8:x1 --rw read "${NULL[@]}" --no-save
    c bad-vary-key exact sweep t --vary nosuch=1,2 --rw read "${NULL[@]}" --no-save
    c bad-sim-vary exact sim "$FX/examples/sim/two-port-1g-fc-array.toml" --vary clients=10..1 --no-save
    c bad-sim-key exact sim "$FX/examples/sim/two-port-1g-fc-array.toml" --vary nosuch=1,2 --no-save
    c missing-job exact bench t --job missing.toml
    c missing-fio-job exact bench --fio-job missing.fio
    c missing-sim exact sim missing.toml
    c missing-import exact import missing.json
    c missing-replay exact monitor --replay missing.txt
    c missing-trace exact trace summary missing.darshan
    c missing-campaign exact campaign missing.toml --dry-run
    c missing-profile exact bench t --profile nosuch
    c missing-inspect exact inspect /no/such/path
    c bad-layout exact plan layout R7/3
    c bad-layout-groups exact plan layout R6/10/20
    c bad-drive exact plan layout R6/12 --drive nosuch-drive
    c bad-tolerance exact check 1 --baseline 1 --tolerance lots
    c bad-run-id exact show 999
    c bad-chart exact report 1 --output-format svg --chart nope -o x.svg
    c bad-export-format exact export latest --output-format xml
    c bad-shell exact completions tcsh
    c bad-tune exact tune readahead /no/such/path
    c bad-md exact md mdt --files 0
    c bad-monitor-interval exact monitor --replay "$LS/replay.txt" --sys-root "$LS" --interval -1

    # --- the DBs the OLD binary wrote, read by this binary -----------------------------------
    if [ "$SIDE" = old ]; then
        cp "$R/db/main.db" "$TMP/olddb-main.db"
        cp "$R/db/import.db" "$TMP/olddb-import.db"
    fi
    cp "$TMP/olddb-main.db" "$R/db/olddb-main.db"
    cp "$TMP/olddb-import.db" "$R/db/olddb-import.db"
    db_commands olddb-main "$R/db/olddb-main.db" exact
    db_commands olddb-imp "$R/db/olddb-import.db" exact
}

# runs/show/export/compare/check/report on one database.
db_commands() {
    local tag=$1 db=$2 mode=$3
    DB=$db c "$tag-runs" "$mode" runs
    DB=$db c "$tag-runs-json" "$mode" runs --json
    DB=$db c "$tag-runs-filter" "$mode" runs --host oss01 --rw randread --limit 3
    DB=$db c "$tag-runs-kind-sim" "$mode" runs --kind sim
    DB=$db c "$tag-runs-kind-md" "$mode" runs --kind md
    DB=$db c "$tag-runs-tag" "$mode" runs --tag src=fixture
    DB=$db c "$tag-show" "$mode" show 1
    DB=$db c "$tag-show-latest" "$mode" show latest
    DB=$db c "$tag-show-all-json" "$mode" show --all --json
    DB=$db c "$tag-export-json" "$mode" export --all
    DB=$db c "$tag-export-csv" "$mode" export --all --output-format csv
    DB=$db c "$tag-export-md" "$mode" export 1 2 --output-format md
    DB=$db FILES=ex.csv c "$tag-export-file" "$mode" export 1 --output-format csv -o ex.csv
    DB=$db c "$tag-compare" "$mode" compare 2 3 --baseline 1
    DB=$db c "$tag-compare-json" "$mode" compare --all --baseline 1 --json
    DB=$db c "$tag-compare-vary" "$mode" compare --all --baseline 1 --vary bs
    DB=$db c "$tag-compare-vary-qd" "$mode" compare --all --baseline 1 --vary qd
    DB=$db c "$tag-check" "$mode" check latest --baseline 1
    DB=$db c "$tag-check-json" "$mode" check latest --baseline 1 --tolerance 5% --json
    DB=$db c "$tag-check-vary" "$mode" check latest --baseline 1 --vary iodepth
    DB=$db FILES=r.html c "$tag-report-html" "$mode" report --all --baseline 1 -o r.html
    local chart
    for chart in throughput latency relative vs-numjobs vs-bs clients groups predicted simulated \
        sweep heat-map sim nope; do
        DB=$db FILES="c-$chart.svg" c "$tag-report-chart-$chart" "$mode" report --all \
            --chart "$chart" --output-format svg -o "c-$chart.svg"
    done
    DB=$db FILES=c.png c "$tag-report-png" "$mode" report 1 2 --chart throughput --output-format png -o c.png
    # A fit or a prediction of measured (noisy) figures is only compared exactly.
    [ "$mode" = nums ] && return 0
    DB=$db FILES=cal.toml c "$tag-calibrate" "$mode" plan calibrate --all --as my-disk \
        --like exos-x18-18tb --output cal.toml
    DB=$db c "$tag-plan-against" "$mode" plan layout R6/12 --against 1
}

run_side() {
    SIDE=$1
    local bin=$2
    rm -rf "$R"
    mkdir -p "$R/bin" "$R/out" "$R/s" "$R/db" "$R/home/.config/storlab" "$R/home/.local/share" \
        "$R/fx/crates/fio" "$R/fx/tests" "$R/fx/docs-sim"
    # A copy, not a link: commands that run storlab again (campaign cells) use
    # /proc/self/exe, which would name the link's target.
    cp "$bin" "$R/bin/storlab"
    printf 'host = "behaviour-host"\n[tags]\nsite = "behaviour"\n' >"$R/home/.config/storlab/config.toml"
    cp -r "$REPO/examples" "$REPO/profiles" "$R/fx/"
    cp -r "$REPO/crates/fio/fixtures" "$R/fx/crates/fio/"
    cp -r "$REPO/tests/fixtures" "$R/fx/tests/"
    # The scenarios of docs/SIM.md (its ```toml blocks), as files.
    awk -v dir="$R/fx/docs-sim" '
        /^```toml/ {n++; out = sprintf("%s/docs-sim-%d.toml", dir, n); on = 1; next}
        /^```/ {on = 0}
        on {print > out}' "$REPO/docs/SIM.md"
    echo "running the battery with $SIDE: $bin" >&2
    battery
    mv "$R" "$TMP/$SIDE"
}

# ---------------------------------------------------------------- masking ----

mask() { # mask FILE MODE
    local sedx=(
        -e "s#$TMP/run#<TMP>#g"
        -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2}| ?UTC)?/<TIME>/g'
        -e 's/(^|[^0-9.])20[0-9]{2}[01][0-9][0-3][0-9]T?-?[0-9]{6}(-[0-9a-f]{4,})?/\1<ID>/g'
        -e 's/("free_bytes_(before|after)"): [0-9]+/\1: N/g'
    )
    if [ "$2" = nums ]; then
        sedx+=(
            -e 's/[0-9]+([.,][0-9]+)*([eE][-+]?[0-9]+)?/N/g'
            -e 's/[+-]N/N/g'
            -e 's/N([  ,]N)+/N/g'
            -e 's/N ?(ns|µs|us|ms|s)\b/N <t>/g'
            -e 's/(N ?%|"|: |, ) ?(noise|better|worse|configuration differs)\b/\1<verdict>/g'
            -e 's/N[kKMGT]\b/N/g'
            -e 's/N [KMGT]iB moved/N <size> moved/g'
            -e 's/\((default|N runs?)\)/(<spread>)/g'
            -e 's/[─═━]{2,}|-{3,}/──/g'
            -e 's/(app|applat|timeline|util)N(, (app|applat|timeline|util)N)*/<per-run charts>/g'
            -e 's/[ \t]+/ /g'
            -e 's/ +$//'
            -e 's/,$//'
            -e '/^ ?(N|N <t>|N ?%.*|N [KMGT]?i?B(\/s)?)$/d'
            -e '/the groups moved data together for only/d'
            -e 's/per N <t> interval: MB\/s min N, median N, max N \(N intervals\); //'
            -e '/^ ?(<TIME>|[^ ]{1,12}…)$/d'
        )
    fi
    sed -E "${sedx[@]}" "$1"
}

# ---------------------------------------------------------------- main ----

run_side old "$OLD"
run_side new "$NEW"

M=$TMP/masked
# Every `params` object of a JSON document (runs, phases, groups), compared
# exactly even where the figures are masked: job building must not change.
PARAMS='[.. | objects | select(has("params")) | .params] | walk(if type == "object" then del(.seed) else . end)'
mkdir -p "$M/old" "$M/new"
same=0
differ=()
for name in $( (ls "$TMP/old/out"; ls "$TMP/new/out") | sed -E 's/\.(out|err|rc|mode|cmd)$//' | sort -u); do
    mode=$(cat "$TMP/new/out/$name.mode" "$TMP/old/out/$name.mode" 2>/dev/null | head -1)
    for side in old new; do
        f=$TMP/$side/out/$name
        if [ -f "$f.rc" ]; then
            {
                echo "exit $(cat "$f.rc")"
                echo "--- stdout"
                mask "$f.out" "$mode"
                if [ "$mode" = nums ] && params=$(jq -S "$PARAMS" "$f.out" 2>/dev/null) &&
                    [ -n "$params" ] && [ "$params" != "[]" ]; then
                    echo "--- the parameters in that JSON (exact; seeds left out)"
                    echo "$params" | mask /dev/stdin exact
                fi
                echo "--- stderr"
                mask "$f.err" "$mode"
            } >"$M/$side/$name"
        else
            echo "(no such case on this side)" >"$M/$side/$name"
        fi
    done
    if cmp -s "$M/old/$name" "$M/new/$name"; then
        same=$((same + 1))
    else
        differ+=("$name")
        echo "=== $name ($mode): $(cat "$TMP/new/out/$name.cmd" "$TMP/old/out/$name.cmd" 2>/dev/null | head -1)"
        diff -u --label "old/$name" --label "new/$name" "$M/old/$name" "$M/new/$name" | head -n "$MAXLINES"
        echo
    fi
done
echo "behaviour-diff: $((same + ${#differ[@]})) cases, $same the same, ${#differ[@]} different"
for d in "${differ[@]}"; do echo "  differs: $d"; done
[ ${#differ[@]} -eq 0 ]
