#!/usr/bin/env bash
# Run the bench crate's unit tests under valgrind's memcheck: the engine's
# buffer ownership (slots the kernel holds, the drain on drop, the huge-page
# buffer mapping) checked for invalid reads/writes and use after free.
# Miri and the address sanitizer need a nightly toolchain, which this
# project's machines do not have; memcheck runs on the stable build.
# The null-engine timing test is skipped (valgrind slows the clock-driven
# part past its 2 % tolerance); everything else runs, including the
# io_uring error-path test on a loop device when root.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind not found (apt-get install valgrind)"; exit 2; }
bin=$(cargo test -p storlab-bench --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m["target"]["name"]=="storlab_bench" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])' | tail -1)
echo "valgrind memcheck: $bin"
valgrind --error-exitcode=99 -q "$bin" --test-threads=1 --skip null_engine_with_fixed
