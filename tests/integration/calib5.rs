//! Issue 24, the host centre: a calibrated drive whose entry carries the
//! host's cost per request (`host_s`) and per system call (`host_call_s`,
//! shared by the requests one call carries, so the cost per request falls
//! with the depth) gives the same answer in `plan layout` and in a
//! one-client `sim` (docs/MODEL.md §8, docs/SIM.md): sim queues each
//! stream's host by the same load-dependent centre plan's MVA solves.
//! Before, sim had no host centre: the host's time was lost from the round
//! trip and from the saturated rate.

use crate::util::{ok, run_in};
use serde_json::Value;
use std::path::Path;

/// A controller that adds nothing to the device as it was measured.
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

/// A calibrated drive as `plan calibrate` writes it: sequential reads
/// merged by the block layer with a fixed host cost per request (the
/// fields of the merge model), random reads with a batching host.
const DRIVE: &str = r#"[[drive]]
name = "host-disk"
kind = "ssd"
capacity = "800GB"
read_iops = 50000
write_iops = 20000
seq_read = "2.5GB/s"
seq_write = "1GB/s"
mtbf = "2000000h"
ber = 1e-17
sector_size = 512
rebuild_rate = "200MB/s"
source = "test: a calibrated entry with a host centre"

[drive.queue.seq_read]
latency_s = 6.0e-5
latency_bytes_per_s = 3.0e9
demand_s = 1.5e-5
demand_bytes_per_s = 1.5e9
points = 15
min_in_flight = 1
max_in_flight = 32
rms_log_error = 0.1
host_s = 1.2e-5
merges = [{ bytes = 4096, in_flight = 8, factor = 1.6 }, { bytes = 4096, in_flight = 32, factor = 4.5 }]
"#;

/// The same entry's random reads with a host of 8 µs per request and
/// 30 µs per call.
const BATCHED: &str = r#"
[drive.queue.rand_read]
latency_s = 5.0e-5
latency_bytes_per_s = 3.8e9
demand_s = 5.0e-6
demand_bytes_per_s = 1.2e9
points = 15
min_in_flight = 1
max_in_flight = 32
rms_log_error = 0.06
host_s = 8.0e-6
host_call_s = 3.0e-5
"#;

/// `plan layout R0/1` of the drive at `qd`, 4 KiB requests: the figure
/// for `pattern` (`seq_read`, `rand_read`), bytes/s.
fn plan_at(dir: &Path, cat: &Path, pattern: &str, qd: u32) -> f64 {
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
            cat.to_str().unwrap(),
            "--drive",
            "host-disk",
            "--catalog",
            direct.to_str().unwrap(),
            "--controller",
            "as-measured",
            "--streams",
            "1",
            "--qd",
            &qd,
            "--random-size",
            "4k",
            "--seq-size",
            "4k",
            "--json",
        ],
    );
    let v: Value = serde_json::from_str(&ok(&p)).unwrap();
    v["performance"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["pattern"] == pattern)
        .unwrap_or_else(|| panic!("no {pattern} in {v}"))["bytes_per_s"]
        .as_f64()
        .unwrap()
}

/// A one-client sim of the drive at `qd`, 4 KiB requests of `pattern`
/// (`read`, `randread`): the analytic figure and the components' use.
fn sim_at(dir: &Path, cat: &Path, pattern: &str, qd: u32) -> (f64, Value) {
    let f = dir.join("scenario.toml");
    std::fs::write(
        &f,
        format!(
            "name = \"host\"\n[clients]\ncount = 1\nnic = \"1000GB/s\"\n\
             [array]\nraid = \"R0/1\"\ndrive = \"host-disk\"\nport = \"1000GB/s\"\n\
             [workload]\npattern = \"{pattern}\"\nbs = \"4KiB\"\nfile_size = \"1GiB\"\niodepth = {qd}\n"
        ),
    )
    .unwrap();
    let s = run_in(
        dir,
        &[
            "sim",
            f.to_str().unwrap(),
            "--catalog",
            cat.to_str().unwrap(),
            "--no-save",
            "--output-format",
            "json",
        ],
    );
    let v: Value = serde_json::from_str(&ok(&s)).unwrap();
    let a = v["points"][0]["analytic"].clone();
    (a["aggregate_bytes_per_s"].as_f64().unwrap(), a)
}

fn agree(dir: &Path, cat: &Path, sim_pattern: &str, plan_pattern: &str, depths: &[u32]) {
    for &qd in depths {
        let plan = plan_at(dir, cat, plan_pattern, qd);
        let (sim, point) = sim_at(dir, cat, sim_pattern, qd);
        println!(
            "{sim_pattern} 4 KiB QD {qd}: plan {:.1} MB/s, sim {:.1} MB/s",
            plan / 1e6,
            sim / 1e6
        );
        assert!(
            (sim / plan - 1.0).abs() <= 0.01,
            "{sim_pattern} QD {qd}: sim {sim} vs plan {plan}: {point}"
        );
        let host = point["utilisation"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["component"] == "client host")
            .unwrap_or_else(|| panic!("no client host in {point}"));
        assert!(host["pct"].as_f64().unwrap() > 0.0, "{point}");
    }
}

/// The merge model's fields alone (`host_s`, `merges`: what `plan
/// calibrate` wrote before the per-call cost): sequential 4 KiB reads at
/// QD 1, 8, 32 and 256, plan and a one-client sim within 1 %. Fails
/// before sim had a host centre: sim lost the host's 12 µs per request,
/// 83.0 MB/s against plan's 66.7 at QD 1 (+24 %), 675 against 341 at QD 32
/// (bound by the device's share of a merged command instead of the host).
#[test]
fn a_calibrated_host_centre_gives_the_same_answer_in_plan_and_sim() {
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("host-disk.toml");
    std::fs::write(&cat, DRIVE).unwrap();
    agree(dir.path(), &cat, "read", "seq_read", &[1, 8, 32, 256]);
}

/// The batching host (`host_call_s`): random 4 KiB reads at QD 1, 2, 8,
/// 32 and 256, plan and a one-client sim within 1 %; deep, the call is
/// shared by many requests, so plan moves well over the 26,300/s a host
/// paying its whole 38 µs (8 + 30) per request would allow.
#[test]
fn a_batching_host_gives_the_same_answer_in_plan_and_sim() {
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("host-disk.toml");
    std::fs::write(&cat, format!("{DRIVE}{BATCHED}")).unwrap();
    agree(
        dir.path(),
        &cat,
        "randread",
        "rand_read",
        &[1, 2, 8, 32, 256],
    );
    let deep = plan_at(dir.path(), &cat, "rand_read", 256) / 4096.0;
    assert!(deep > 1.0 / 38e-6 * 1.5, "{deep} requests/s");
}
