//! Issue 22 (fourth round): where the depth warning still fires, it quotes
//! the missing I/Os and the parts they were measured in, and those parts
//! add up to the shortfall it reports.

use crate::util::{cmd, stderr};
use serde_json::Value;

/// The numbers in `s`, in order.
fn numbers(s: &str) -> Vec<f64> {
    s.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|x| x.trim_matches('.').parse().ok())
        .collect()
}

#[test]
fn an_fsync_every_few_writes_is_named_and_the_missing_depth_adds_up() {
    // Every 4 writes the queue drains for an fsync: the depth falls far
    // below 8. Before this round the warning named a guess ("the time
    // between a completion and the resubmission ...") with fractions of the
    // window; now it names --fsync and splits the missing I/Os into parts.
    let d = tempfile::tempdir().unwrap();
    let out = cmd()
        .arg("bench")
        .arg(d.path().join("synced"))
        .args(["--no-save", "--output-format=json", "-q"])
        .args([
            "--engine=null",
            "--null-latency=200us",
            "--rw=randwrite",
            "--bs=4k",
            "--size=1M",
            "--iodepth=8",
            "--fsync=4",
            "--runtime=1s",
            "--time-based",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ph = &v["phases"][0];
    let achieved = ph["depth"]["achieved"].as_f64().unwrap();
    let w = ph["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .find(|w| w.contains("in flight on average"))
        .unwrap_or_else(|| panic!("no depth warning at {achieved}: {}", ph["warnings"]))
        .to_string();
    assert!(w.contains("--fsync 4"), "{w}");
    // "of the X I/Os missing on average, A while ..., B during ...": X is
    // 8 − achieved, and A + B + ... = X (each rounded to 0.1).
    let (head, rest) = w
        .split_once(" I/Os missing on average, ")
        .unwrap_or_else(|| panic!("no breakdown: {w}"));
    let missing = *numbers(head).last().unwrap();
    assert!(
        (missing - (8.0 - achieved)).abs() < 0.051,
        "{missing} missing vs 8 − {achieved}: {w}"
    );
    let parts: Vec<f64> = rest
        .split(", ")
        .filter_map(|p| p.split(' ').next()?.parse().ok())
        .collect();
    assert!(!parts.is_empty(), "{w}");
    let sum: f64 = parts.iter().sum();
    // Each quoted part is rounded to 0.1, parts under 0.05 are left out.
    assert!(
        (sum - missing).abs() <= 0.25,
        "parts {parts:?} vs {missing}: {w}"
    );
    assert!(missing > 0.5, "{w}");
}
