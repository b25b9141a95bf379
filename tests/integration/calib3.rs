//! Issue 24, the concurrency knee in use: a queue-depth sweep measured on
//! this machine's disk, `plan calibrate --hold-out alternate` writes the
//! entry with its knee (`[drive.queue.rand_read]`), and a held-out point of
//! the sweep is predicted by `plan layout --catalog FILE` exactly as the
//! fit's MVA predicts it (so within the error the fit reports), and by a
//! one-client `sim --catalog FILE` within 1 % of plan.

use crate::calib_holdout::{DISK, bench, real_disk_dir};
use crate::util::{ok, run_in, skip};
use serde_json::Value;
use std::path::Path;

/// A controller that adds nothing to the device as it was measured (its
/// fitted latency already holds the path from the host): a host link of
/// 1000 GB/s, as the sim scenario's port and NIC.
const AS_MEASURED: &str = r#"[[link]]
name = "as-measured-path"
rate = "1000GB/s"
source = "test: the path the device was measured through, whose time is in its fitted latency"

[[controller]]
name = "as-measured"
write_back = false
backend = "as-measured-path"
host = "as-measured-path"
source = "test: nothing between the host and the calibrated device"
"#;

/// `plan layout R0/1` of the calibrated drive at `qd`, random reads of
/// `bs`, behind [`AS_MEASURED`]: bytes/s and the explanation.
fn plan_at(dir: &Path, cat: &str, bs: &str, qd: u32) -> (f64, String) {
    let direct = dir.join("as-measured.toml");
    std::fs::write(&direct, AS_MEASURED).unwrap();
    let qd = qd.to_string();
    let p = run_in(
        dir,
        &[
            "plan",
            "layout",
            "R0/1",
            "--catalog",
            cat,
            "--drive",
            "qd-disk",
            "--catalog",
            direct.to_str().unwrap(),
            "--controller",
            "as-measured",
            "--streams",
            "1",
            "--qd",
            &qd,
            "--random-size",
            bs,
            "--json",
        ],
    );
    let v: Value = serde_json::from_str(&ok(&p)).unwrap();
    let w = v["performance"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["pattern"] == "rand_read")
        .unwrap_or_else(|| panic!("no rand_read in {v}"))
        .clone();
    (
        w["bytes_per_s"].as_f64().unwrap(),
        w["explanation"].as_str().unwrap_or("").to_string(),
    )
}

/// A one-client sim of the calibrated drive at `qd`: the analytic figure.
fn sim_at(dir: &Path, cat: &str, bs: &str, qd: u32) -> f64 {
    let f = dir.join("scenario.toml");
    std::fs::write(
        &f,
        format!(
            "name = \"knee\"\n[clients]\ncount = 1\nnic = \"1000GB/s\"\n\
             [array]\nraid = \"R0/1\"\ndrive = \"qd-disk\"\nport = \"1000GB/s\"\n\
             [workload]\npattern = \"randread\"\nbs = \"{bs}\"\nfile_size = \"1GiB\"\niodepth = {qd}\n"
        ),
    )
    .unwrap();
    let s = run_in(
        dir,
        &[
            "sim",
            f.to_str().unwrap(),
            "--catalog",
            cat,
            "--no-save",
            "--output-format",
            "json",
        ],
    );
    let v: Value = serde_json::from_str(&ok(&s)).unwrap();
    v["points"][0]["analytic"]["aggregate_bytes_per_s"]
        .as_f64()
        .unwrap()
}

#[test]
fn a_calibrated_knee_predicts_a_held_out_depth_in_plan_and_sim() {
    let _turn = DISK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = match real_disk_dir() {
        Ok(d) => d,
        Err(why) => {
            skip("calib3", &why);
            return;
        }
    };
    // Random reads, two sizes x six depths: the knee of one kind of
    // request, the other half of the checkerboard held out.
    let mut g = Vec::new();
    for bs in ["4k", "64k"] {
        for qd in [1u32, 2, 4, 8, 16, 32] {
            g.push(("randread".to_string(), bs.to_string(), qd));
        }
    }
    bench(dir.path(), &g, "150ms");
    let cat = dir.path().join("qd-disk.toml");
    let o = run_in(
        dir.path(),
        &[
            "plan",
            "calibrate",
            "--all",
            "--as",
            "qd-disk",
            "--like",
            "dc-s3700-800gb",
            "--hold-out",
            "alternate",
            "--output",
            cat.to_str().unwrap(),
            "--json",
        ],
    );
    let v: Value = serde_json::from_str(&ok(&o)).unwrap();
    let text = std::fs::read_to_string(&cat).unwrap();
    assert!(text.contains("[drive.queue.rand_read]"), "{text}");
    assert!(text.contains("min_in_flight = 1"), "{text}");
    let held = v["calibration"]["held_out"]["points"].as_array().unwrap();
    assert_eq!(held.len(), 6, "{v}");
    let cat_s = cat.to_str().unwrap();
    for p in held {
        let label = p["label"].as_str().unwrap();
        let name = held_name(label).unwrap_or(label);
        let mut parts = name.rsplitn(2, "-qd");
        let qd: u32 = parts.next().unwrap().parse().unwrap();
        let bs = parts.next().unwrap().trim_start_matches("randread-");
        let bytes: f64 = if bs == "4k" { 4096.0 } else { 65536.0 };
        let by_fit = p["predicted_iops"].as_f64().unwrap() * bytes;
        let measured = p["measured_iops"].as_f64().unwrap() * bytes;
        let (plan, why) = plan_at(dir.path(), cat_s, bs, qd);
        let sim = sim_at(dir.path(), cat_s, bs, qd);
        println!(
            "{name}: measured {:.1} MB/s, the fit's MVA {:.1}, plan {:.1}, sim {:.1} ({why})",
            measured / 1e6,
            by_fit / 1e6,
            plan / 1e6,
            sim / 1e6
        );
        // plan predicts the held-out point as the fit does: its error
        // against the measurement is the fit's held-out error.
        assert!(
            (plan / by_fit - 1.0).abs() < 0.01,
            "{name}: plan {plan} vs the fit's {by_fit}"
        );
        assert!(why.contains("calibrated queue"), "{name}: {why}");
        assert!(
            (sim / plan - 1.0).abs() < 0.01,
            "{name}: sim {sim} vs plan {plan}"
        );
    }
}

/// The phase name (`randread-4k-qd2`) inside a held-out point's label.
fn held_name(label: &str) -> Option<&str> {
    label
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .find(|w| w.starts_with("randread-"))
}
