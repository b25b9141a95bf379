//! Honest numbers, checked against outside definitions on the real device:
//! Little's law (IOPS × mean latency = the depth in flight) at several
//! queue depths, the achieved depth flagged when it falls short, a short
//! read (a file truncated under a running benchmark) stopping the phase
//! instead of counting as I/O, and the newcomer's bare `storlab`.

use crate::util::{cmd, skip, stderr, uring_and_direct};
use serde_json::Value;
use std::time::Duration;

/// Write `file` fully with storlab (so storlab created it and later runs may
/// read it) and keep it.
fn lay_out(file: &std::path::Path, size: &str) {
    let out = cmd()
        .arg("bench")
        .arg(file)
        .args([
            "--rw=write",
            "--bs=1M",
            "--iodepth=8",
            "--no-save",
            "--keep",
            "-q",
        ])
        .arg(format!("--size={size}"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn littles_law_holds_on_the_real_device_at_every_depth() {
    let d = tempfile::tempdir().unwrap();
    if let Err(why) = uring_and_direct(d.path()) {
        skip("littles_law_holds_on_the_real_device_at_every_depth", &why);
        return;
    }
    let file = d.path().join("qd.dat");
    let f = file.to_str().unwrap();
    lay_out(&file, "256M");
    for qd in [1u32, 4, 32, 128] {
        let out = cmd()
            .args([
                "bench",
                f,
                "--rw=randread",
                "--bs=4k",
                "--runtime=2s",
                "--time-based",
                "--no-save",
            ])
            .args(["--iodepth", &qd.to_string(), "--output-format=json", "-q"])
            .output()
            .unwrap();
        assert!(out.status.success(), "QD {qd}: {}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let ph = &v["phases"][0];
        let iops = ph["read"]["iops"].as_f64().unwrap();
        let lat = ph["read"]["lat_ns"]["mean"].as_f64().unwrap() / 1e9;
        let depth = &ph["depth"];
        let achieved = depth["achieved"].as_f64().unwrap();
        assert_eq!(depth["requested"].as_u64(), Some(u64::from(qd)));
        // Little's law from two independent counts: the latency histogram
        // and the engine's time-weighted in-flight meter.
        let littles = iops * lat;
        assert!(
            (littles - achieved).abs() / achieved < 0.05,
            "QD {qd}: IOPS × mean latency {littles:.2} vs {achieved:.2} in flight"
        );
        // Never more in flight than asked; a shortfall over 5 % is flagged.
        assert!(achieved <= f64::from(qd) * 1.001, "QD {qd}: {achieved}");
        let flagged = ph["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap_or("").contains("in flight on average"));
        assert_eq!(
            flagged,
            achieved < 0.95 * f64::from(qd),
            "QD {qd}: achieved {achieved:.2}, warnings {}",
            ph["warnings"]
        );
        if qd <= 4 {
            assert!(
                achieved >= 0.95 * f64::from(qd),
                "QD {qd}: only {achieved:.2} in flight"
            );
        }
        eprintln!(
            "QD {qd}: {iops:.0} IOPS × {:.1} µs = {littles:.2}; in flight {achieved:.2}",
            lat * 1e6
        );
    }
}

#[test]
fn a_file_truncated_under_a_running_read_stops_the_phase() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("shrinks.dat");
    let f = file.to_str().unwrap().to_string();
    lay_out(&file, "64M");
    let child = cmd()
        .args([
            "bench",
            &f,
            "--rw=randread",
            "--bs=4k",
            "--size=64M",
            "--iodepth=8",
            "--runtime=20s",
            "--time-based",
        ])
        .args([
            "--engine=psync",
            "--cache=cold",
            "--output-format=json",
            "-q",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    let ph = &v["phases"][0];
    assert!(
        ph["errors"]["short_read"].as_u64().unwrap_or(0) >= 1,
        "{}",
        ph["errors"]
    );
    assert!(
        v["stop_reason"]
            .as_str()
            .unwrap_or("")
            .contains("short read"),
        "{}",
        v["stop_reason"]
    );
    // What was counted before the truncation is plausible, not 455k IOPS of
    // zero-byte reads: every counted I/O moved a whole block.
    let r = &ph["read"];
    assert_eq!(
        r["bytes"].as_u64().unwrap(),
        r["ops"].as_u64().unwrap() * 4096
    );
}

#[test]
fn bare_storlab_is_the_quick_check() {
    // The newcomer's first command, exactly as typed: `storlab`.
    let d = tempfile::tempdir().unwrap();
    let out = cmd()
        .current_dir(d.path())
        .env_remove("STORLAB_DB")
        .env("XDG_DATA_HOME", d.path().join("data"))
        .output()
        .unwrap();
    let text = crate::util::assert_quick_check(&out, d.path());
    assert!(text.contains("Saved as run 1"), "{text}");
    let db = d.path().join("data/storlab/storlab.db");
    assert!(db.exists(), "results kept in the per-user database");
    assert!(
        text.contains(&db.display().to_string()),
        "says where: {text}"
    );
}
