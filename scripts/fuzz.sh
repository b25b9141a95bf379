#!/usr/bin/env bash
# Run every fuzz target (the list: crates/fuzzcheck/src/lib.rs, TARGETS).
#
#   scripts/fuzz.sh [SECONDS]            stable Rust: each target's seeds
#                                        (fuzz/corpus/<target>/) and seeded
#                                        random mutations for SECONDS each
#                                        (default 10); what .ci/run does
#   scripts/fuzz.sh --nightly [SECONDS]  cargo-fuzz, coverage guided (needs
#                                        a nightly toolchain and
#                                        `cargo install cargo-fuzz`); SECONDS
#                                        per target (default 60)
#
# Both call the same checks (crates/fuzzcheck). A failing input is saved
# under fuzz/artifacts/<target>/; replay it with
#   cargo +nightly fuzz run TARGET fuzz/artifacts/TARGET/FILE
# More stable iterations: STORLAB_FUZZ_ITERS=1000000 scripts/fuzz.sh 0
# (0 seconds = no time limit); another seed: STORLAB_FUZZ_SEED=N.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--nightly" ]; then
  secs="${2:-60}"
  command -v cargo-fuzz >/dev/null 2>&1 || {
    echo "fuzz.sh: cargo-fuzz not found; install it with: cargo install cargo-fuzz" >&2
    exit 2
  }
  cd fuzz
  for t in $(cargo +nightly fuzz list); do
    echo "== $t ($secs s)"
    cargo +nightly fuzz run "$t" "corpus/$t" -- -max_total_time="$secs"
  done
  exit 0
fi

secs="${1:-10}"
case "$secs" in
  ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, got '$secs'" >&2; exit 2 ;;
esac
if [ "$secs" = 0 ]; then
  export STORLAB_FUZZ_ITERS="${STORLAB_FUZZ_ITERS:-1000000}"
  unset STORLAB_FUZZ_SECS
else
  export STORLAB_FUZZ_SECS="$secs"
  export STORLAB_FUZZ_ITERS="${STORLAB_FUZZ_ITERS:-100000000}"
fi
# --nocapture: each target prints its seeds, mutations and time.
cargo test -p storlab-fuzzcheck --test pass -- --nocapture
