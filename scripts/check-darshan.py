#!/usr/bin/env python3
"""Print pydarshan's own reading of a Darshan log's DXT data, per rank, as JSON.

Usage: check-darshan.py LOG [DXT_POSIX|DXT_MPIIO]

The integration test `trace::darshan_agrees_with_pydarshan` compares this with
`storlab trace summary --json LOG`: the per-rank read and write counts and
bytes must be equal. Needs `pip install darshan==3.5.0` (CI installs it).
Exit 2 when the log has no such module.
"""
import json
import sys

import darshan


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path = sys.argv[1]
    module = sys.argv[2] if len(sys.argv) == 3 else "DXT_POSIX"
    report = darshan.DarshanReport(path, read_all=False)
    if module not in report.modules:
        print(f"{path}: no {module} module", file=sys.stderr)
        return 2
    report.mod_read_all_dxt_records(module)
    ranks = {}
    for rec in report.records[module]:
        r = ranks.setdefault(
            int(rec["rank"]),
            {"rank": int(rec["rank"]), "reads": 0, "writes": 0,
             "bytes_read": 0, "bytes_written": 0},
        )
        r["reads"] += len(rec["read_segments"])
        r["writes"] += len(rec["write_segments"])
        r["bytes_read"] += sum(int(s["length"]) for s in rec["read_segments"])
        r["bytes_written"] += sum(int(s["length"]) for s in rec["write_segments"])
    doc = {
        "log_version": report.metadata["job"]["log_ver"],
        "nprocs": int(report.metadata["job"]["nprocs"]),
        "module": module,
        "partial": bool(report.modules[module].get("partial_flag", False)),
        "ranks": [ranks[k] for k in sorted(ranks)],
    }
    json.dump(doc, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
