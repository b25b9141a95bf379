//! Issue 22: the engine keeps the queue full on the real device, and where
//! the depth still falls short the warning names the cause it measured
//! (a rate cap, think time, refused submissions, waiting for a CPU, a
//! saturated CPU, the kernel's submission path), never a fixed guess.

use crate::util::{cmd, skip, stderr, uring_and_direct};
use serde_json::Value;

/// Run `bench` on `file` with `args`, JSON out; the first phase.
fn phase(file: &std::path::Path, args: &[&str]) -> Value {
    let out = cmd()
        .arg("bench")
        .arg(file)
        .args(["--no-save", "--output-format=json", "-q"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["phases"][0].clone()
}

fn depth_warning(ph: &Value) -> Option<String> {
    ph["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .find(|w| w.contains("in flight on average"))
        .map(str::to_string)
}

/// The causes the warning may name, each from a measurement.
const CAUSES: [&str; 8] = [
    "--rate-iops",
    "--thinktime",
    "--fsync",
    "device throttling",
    "machine is busy",
    "CPU saturated",
    "kernel's submission path",
    "resubmission of its slot",
];

#[test]
fn a_rate_capped_run_names_the_cap_as_the_cause_of_its_depth() {
    // Before issue 22 a paced run's depth was never explained.
    let d = tempfile::tempdir().unwrap();
    let ph = phase(
        &d.path().join("paced"),
        &[
            "--engine=null",
            "--null-latency=1ms",
            "--rw=randread",
            "--bs=4k",
            "--size=1M",
            "--iodepth=8",
            "--rate-iops=100",
            "--runtime=1s",
            "--time-based",
        ],
    );
    let w = depth_warning(&ph).unwrap_or_else(|| panic!("no depth warning: {}", ph["warnings"]));
    assert!(w.contains("--rate-iops 100") && w.contains("asleep"), "{w}");
    assert!(ph["depth"]["achieved"].as_f64().unwrap() < 0.95 * 8.0);
}

#[test]
fn io_uring_at_qd_32_keeps_the_queue_full_or_names_why() {
    let d = tempfile::tempdir().unwrap();
    if let Err(why) = uring_and_direct(d.path()) {
        skip("io_uring_at_qd_32_keeps_the_queue_full_or_names_why", &why);
        return;
    }
    let file = d.path().join("qd32.dat");
    let ph = phase(
        &file,
        &[
            "--rw=randread",
            "--bs=4k",
            "--size=64M",
            "--iodepth=32",
            "--runtime=2s",
            "--time-based",
        ],
    );
    let depth = &ph["depth"];
    let achieved = depth["achieved"].as_f64().unwrap();
    // Little's law holds whatever the batching.
    let iops = ph["read"]["iops"].as_f64().unwrap();
    let lat = ph["read"]["lat_ns"]["mean"].as_f64().unwrap() / 1e9;
    assert!(
        (iops * lat - achieved).abs() / achieved < 0.05,
        "IOPS × latency {} vs {achieved}",
        iops * lat
    );
    match depth_warning(&ph) {
        None => assert!(achieved >= 0.95 * 32.0, "{achieved} in flight, no warning"),
        Some(w) => {
            assert!(achieved < 0.95 * 32.0, "{w}");
            assert!(
                CAUSES.iter().any(|c| w.contains(c)),
                "no measured cause: {w}"
            );
        }
    }
    // Refills share a stamp; the bound on what that overstates is reported.
    assert!(depth["stamp_error_ns"].as_u64().is_some(), "{depth}");
    eprintln!(
        "QD 32: {achieved:.2} in flight, {iops:.0} IOPS, stamp error {}",
        depth["stamp_error_mean_ns"]
    );
}
