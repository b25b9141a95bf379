//! `storlab compare` and `storlab check` know the configuration: real runs
//! (null engine, a fraction of a second each) that differ in one parameter
//! are never called better or worse unless that parameter is under study,
//! `check` exits 2 on such a difference unless allowed, and phases of
//! different block sizes are never paired.

use crate::util::{ok, run_in, stderr, stdout};
use serde_json::Value;

/// A null-engine random-read run in `dir` with extra flags; returns its id.
fn bench(dir: &std::path::Path, extra: &[&str]) -> i64 {
    let mut args = vec![
        "bench",
        "--rw",
        "randread",
        "--engine",
        "null",
        "--size",
        "1M",
        "--time-based",
        "--output-format",
        "json",
    ];
    if !extra.contains(&"--runtime") {
        args.extend_from_slice(&["--runtime", "200ms"]);
    }
    args.extend_from_slice(extra);
    let out = ok(&run_in(dir, &args));
    let _: Value = serde_json::from_str(&out).expect("bench JSON");
    let runs: Value =
        serde_json::from_str(&ok(&run_in(dir, &["runs", "--output-format", "json"]))).unwrap();
    runs.as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .max()
        .unwrap()
}

#[test]
fn a_rate_cap_is_a_configuration_difference_not_a_loss() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let base = bench(dir, &["--iodepth", "8"]).to_string();
    let capped = bench(dir, &["--iodepth", "8", "--rate-iops", "2000"]).to_string();

    let text = ok(&run_in(dir, &["compare", &capped, "--baseline", &base]));
    assert!(
        text.contains("rate_iops 2000/s per job (base unlimited)"),
        "{text}"
    );
    assert!(text.contains("configuration differs"), "{text}");
    assert!(
        !text.contains("% worse") && !text.contains("% better") && !text.contains("% noise"),
        "no verdict without --vary: {text}"
    );
    assert!(text.contains("--vary rate_iops"), "says how: {text}");

    // Under study: judged (a 2000 IOPS cap on the null engine is a big loss).
    let text = ok(&run_in(
        dir,
        &[
            "compare",
            &capped,
            "--baseline",
            &base,
            "--vary",
            "rate-iops",
        ],
    ));
    assert!(text.contains("% worse"), "{text}");
    assert!(text.contains("[under study]"), "{text}");

    // JSON carries the structured differences; --json is the shorthand.
    let v: Value = serde_json::from_str(&ok(&run_in(
        dir,
        &["compare", &capped, "--baseline", &base, "--json"],
    )))
    .unwrap();
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["is_baseline"] == false)
        .unwrap();
    assert_eq!(row["config"]["other"][0]["key"], "rate_iops");
    assert_eq!(row["changes"][0]["verdict"], "config_differs");
}

#[test]
fn check_exits_2_when_configurations_differ_unless_allowed() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let base = bench(dir, &["--iodepth", "8"]).to_string();
    let capped = bench(dir, &["--iodepth", "1", "--rate-iops", "2000"]).to_string();

    let o = run_in(dir, &["check", &capped, "--baseline", &base]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(text.contains("CONFIGURATION DIFFERS"), "{text}");
    assert!(text.contains("iodepth 1 (base 8)"), "{text}");
    assert!(text.contains("rate_iops"), "{text}");
    assert!(!text.contains("below the baseline"), "not judged: {text}");

    // Both under study: judged, and the cap makes it fail (exit 1).
    let o = run_in(
        dir,
        &[
            "check",
            &capped,
            "--baseline",
            &base,
            "--vary",
            "qd,rate_iops",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("below the baseline"), "{}", stdout(&o));

    // Allowed: judged too; the differences are still named.
    let o = run_in(
        dir,
        &[
            "check",
            &capped,
            "--baseline",
            &base,
            "--allow-config-diff",
            "--output-format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["status"], "failed");
    let keys: Vec<&str> = v["checks"][0]["config"][0]["other"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, vec!["iodepth", "rate_iops"]);

    // The same configuration again: a verdict, no difference listed.
    let again = bench(dir, &["--iodepth", "8"]).to_string();
    let o = run_in(dir, &["check", &again, "--baseline", &base, "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_ne!(v["status"], "config_differs", "{v}");
    assert!(v["checks"][0].get("config").is_none(), "{v}");

    // A typo in --vary is bad input, not a silent pass.
    let o = run_in(
        dir,
        &["check", &capped, "--baseline", &base, "--vary", "qdepth"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown parameter 'qdepth'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn different_block_sizes_are_never_paired_silently() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let base = bench(dir, &["--bs", "4k"]).to_string();
    let big = bench(dir, &["--bs", "1m"]).to_string();
    let text = ok(&run_in(dir, &["compare", &big, "--baseline", &base]));
    assert!(text.contains("not compared"), "{text}");
    assert!(
        !text.contains("% better") && !text.contains("% worse"),
        "{text}"
    );
    let o = run_in(dir, &["check", &big, "--baseline", &base]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no phase in common"), "{}", stderr(&o));
    // Block size under study: paired, and the difference is named.
    let text = ok(&run_in(
        dir,
        &["compare", &big, "--baseline", &base, "--vary", "bs"],
    ));
    assert!(
        text.contains("bs 1 MiB (base 4 KiB) [under study]"),
        "{text}"
    );
}

#[test]
fn the_report_charts_the_applications_own_series() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let id = bench(
        dir,
        &[
            "--null-latency",
            "50us",
            "--runtime",
            "1s",
            "--log-interval",
            "100ms",
        ],
    )
    .to_string();
    let svg = dir.join("app.svg");
    ok(&run_in(
        dir,
        &[
            "report",
            &id,
            "--chart",
            &format!("app-{id}"),
            "--output-format",
            "svg",
            "-o",
            svg.to_str().unwrap(),
        ],
    ));
    let text = std::fs::read_to_string(&svg).unwrap();
    // About ten 100 ms intervals in a 1 s phase, each a point with a tooltip.
    let points = text.matches("<title>read:").count();
    assert!((8..=11).contains(&points), "{points} points: {text}");
    // A run without a device timeline: the timeline chart says why not.
    let o = run_in(
        dir,
        &[
            "report",
            &id,
            "--chart",
            &format!("timeline-{id}"),
            "--output-format",
            "svg",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bench --monitor"), "{}", stderr(&o));
}

#[test]
fn every_command_spells_json_output_the_same_way() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let a = bench(dir, &[]).to_string();
    let b = bench(dir, &[]).to_string();
    let fio = crate::util::store_fixture("fio-3.33-randread.json");
    let sim = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/sim/two-port-1g-fc-array.toml")
        .display()
        .to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "bench",
            "--rw",
            "read",
            "--engine",
            "null",
            "--size",
            "1M",
            "--runtime",
            "100ms",
        ],
        vec!["inspect", "/"],
        vec!["monitor", "--count", "1", "--interval", "100ms"],
        vec!["runs"],
        vec!["show", &a],
        vec!["compare", &b, "--baseline", &a],
        vec!["check", &b, "--baseline", &a, "--tolerance", "100%"],
        vec!["export", &a],
        vec!["import", fio.to_str().unwrap()],
        vec!["plan", "layout", "R6/12", "--drive", "exos-x18-18tb"],
        vec!["plan", "search", "--capacity", "100T", "--drives", "12..24"],
        vec!["plan", "catalog"],
        vec!["sim", &sim, "--no-save"],
    ];
    for args in cases {
        for flag in [&["--json"][..], &["--output-format", "json"][..]] {
            let mut all = args.clone();
            all.extend_from_slice(flag);
            let o = run_in(dir, &all);
            let out = stdout(&o);
            assert!(
                serde_json::from_str::<Value>(&out).is_ok(),
                "storlab {}: not one JSON document (exit {:?}): {out}\n{}",
                all.join(" "),
                o.status.code(),
                stderr(&o)
            );
        }
    }
    // The import said where it saved the run.
    let o = run_in(dir, &["import", fio.to_str().unwrap()]);
    assert!(
        stdout(&o).contains(dir.join("results.db").to_str().unwrap()),
        "{}",
        stdout(&o)
    );
}
