//! Issue 23, the figures still missing (helper `groups3`): the fio-json of
//! a phase of job groups as fio writes a concurrent job file (one entry per
//! group with its own percentiles and latency distribution, `disk_util`
//! from the sampled device), read back by `storlab import`. (The null
//! engine's exact N/S figures are `groups::null_engine_groups_give_exactly_n_over_s_each_and_overlap`.)

use crate::util::{LoopDev, cmd, have, json, ok, skip, u, write};
use serde_json::Value;
use std::path::Path;

fn in_db(dir: &Path) -> std::process::Command {
    let mut c = cmd();
    c.env("STORLAB_DB", dir.join("results.db"));
    c
}

/// `bench TARGET ARGS --output-format fio-json --json-out record.json`:
/// (fio's document, storlab's record).
fn fio_json_and_record(db: &Path, target: &Path, args: &[&str]) -> (Value, Value) {
    let record = db.join("record.json");
    let out = in_db(db)
        .arg("bench")
        .arg(target)
        .args(args)
        .args([
            "--no-save",
            "-q",
            "--output-format",
            "fio-json",
            "--json-out",
        ])
        .arg(&record)
        .output()
        .unwrap();
    let fio = json(&out);
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    (fio, rec)
}

/// `storlab import` of fio's document, then the stored record.
fn imported(db: &Path, fio: &Value) -> Value {
    let file = write(db, "fio.json", &fio.to_string());
    ok(&in_db(db).arg("import").arg(&file).output().unwrap());
    let shown = json(&in_db(db).args(["show", "1", "--json"]).output().unwrap());
    shown[0]["report"].clone()
}

fn pct(v: &Value, p: &str) -> u64 {
    v["percentile"][p]
        .as_u64()
        .unwrap_or_else(|| panic!("no percentile {p}: {v}"))
}

/// A phase of a reader group and a writer group in fio-json: two entries
/// of one groupid (fio's number for jobs that ran together), each with its
/// own figures, its own `percentile_list` value and standard percentiles
/// (the group's, not the phase's) and its own latency distribution
/// summing to 100 %; fio-plot's keys present; `storlab import` makes it one
/// phase of the same two groups again with the same bytes. Before, a
/// group's entry had no `percentile_list` value and empty `latency_*`.
#[test]
fn fio_json_of_a_group_phase_has_each_groups_own_percentiles_and_imports_back() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let (fio, rec) = fio_json_and_record(
        d.path(),
        &target,
        &[
            "--engine",
            "null",
            "--null-latency",
            "200us",
            "--size",
            "4m",
            "--runtime",
            "1s",
            "--time-based",
            "--percentile-list",
            "95",
            "--group",
            "name=readers rw=randread numjobs=2 iodepth=1 bs=4k",
            "--group",
            "name=writers rw=write numjobs=1 iodepth=4 bs=64k",
        ],
    );
    let jobs = fio["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "one entry per group");
    let groups = rec["phases"][0]["groups"]["groups"].as_array().unwrap();
    for (job, g, dir) in [
        (&jobs[0], &groups[0], "read"),
        (&jobs[1], &groups[1], "write"),
    ] {
        assert_eq!(job["jobname"], g["name"]);
        assert_eq!(job["groupid"], 0, "one groupid: they ran together");
        for k in ["iodepth", "numjobs", "bs", "rw"] {
            assert!(job["job options"][k].is_string(), "job options.{k}: {job}");
        }
        assert_eq!(u(&job[dir]["io_bytes"]), u(&g[dir]["bytes"]));
        assert_eq!(u(&job[dir]["total_ios"]), u(&g[dir]["ops"]));
        let want95 = g["percentiles"][dir][0].clone();
        assert_eq!(want95[0], 95.0, "{}", g["percentiles"]);
        for key in ["clat_ns", "lat_ns"] {
            let l = &job[dir][key];
            assert_eq!(pct(l, "95.000000"), u(&want95[1]), "{key}: {l}");
            assert_eq!(pct(l, "99.000000"), u(&g[dir]["lat_ns"]["p99"]));
            assert_eq!(pct(l, "50.000000"), u(&g[dir]["lat_ns"]["p50"]));
        }
        let shares: f64 = ["latency_ns", "latency_us", "latency_ms"]
            .iter()
            .flat_map(|k| job[*k].as_object().unwrap().values())
            .map(|v| v.as_f64().unwrap())
            .sum();
        assert!(
            (shares - 100.0).abs() < 0.01,
            "{}: the buckets hold every I/O: {shares}",
            g["name"]
        );
        for k in ["usr_cpu", "sys_cpu"] {
            assert!(job[k].is_number(), "{k}");
        }
    }
    // The writers (QD 4 at 200 µs of 64 KiB) and the readers (QD 1 of
    // 4 KiB) are different workloads: their entries are not the phase's.
    assert_ne!(jobs[0]["read"]["iops"], jobs[1]["write"]["iops"]);

    let back = imported(d.path(), &fio);
    let phases = back["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 1, "one phase of groups: {back}");
    let got = phases[0]["groups"]["groups"].as_array().unwrap();
    let names: Vec<&str> = got.iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["readers", "writers"]);
    for (a, b) in groups.iter().zip(got) {
        for dir in ["read", "write"] {
            assert_eq!(a[dir]["bytes"], b[dir]["bytes"], "{} {dir}", a["name"]);
            assert_eq!(a[dir]["ops"], b[dir]["ops"], "{} {dir}", a["name"]);
        }
    }
}

/// `disk_util` holds fio's per-device counters when the run sampled its
/// device (`--monitor`): on a private loop device with ext4, a grouped
/// phase of O_DIRECT readers and writers shows the loop device first,
/// with at least as many requests each way as the bytes moved need at the
/// device's largest request, ticks and a utilisation in 0–100 %; the
/// import reads the device back. Before, `disk_util` was always empty.
#[test]
fn fio_json_disk_util_counts_the_sampled_devices_requests() {
    let test = "fio_json_disk_util_counts_the_sampled_devices_requests";
    if !have("mkfs.ext4") {
        skip(test, "mkfs.ext4 not installed (e2fsprogs)");
        return;
    }
    let Some(mut lo) = LoopDev::new(96 << 20) else {
        return;
    };
    let mnt = tempfile::tempdir().unwrap();
    let dev = lo.path();
    lo.stack().ext4_mounted(&dev, mnt.path()).unwrap();
    let db = tempfile::tempdir().unwrap();
    let (fio, rec) = fio_json_and_record(
        db.path(),
        mnt.path(),
        &[
            "--engine",
            "psync",
            "--direct",
            "--size",
            "8m",
            "--monitor",
            "--monitor-interval",
            "100ms",
            "--group",
            "name=readers rw=read numjobs=1 bs=64k",
            "--group",
            "name=writers rw=write numjobs=1 bs=64k",
        ],
    );
    lo.stack().umount(mnt.path());
    let name = lo.name();
    let du = fio["disk_util"]
        .as_array()
        .unwrap_or_else(|| panic!("no disk_util: {fio}"));
    assert!(!du.is_empty(), "disk_util empty: {}", rec["monitor"]);
    let d = &du[0];
    assert_eq!(
        d["name"],
        name.as_str(),
        "the target's device first: {du:?}"
    );
    let max_req = std::fs::read_to_string(format!("/sys/block/{name}/queue/max_sectors_kb"))
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map_or(512 << 10, |kb| kb << 10);
    let ph = &rec["phases"][0];
    for (dir, key) in [("read", "read_ios"), ("write", "write_ios")] {
        let bytes = u(&ph[dir]["bytes"]);
        assert!(bytes >= 8 << 20, "{dir}: {bytes}");
        let ios = u(&d[key]);
        assert!(
            ios >= bytes / max_req,
            "{key} {ios}: {bytes} bytes need at least {} requests of {max_req}",
            bytes / max_req
        );
    }
    for k in [
        "read_merges",
        "write_merges",
        "read_ticks",
        "write_ticks",
        "in_queue",
    ] {
        assert!(d[k].is_u64(), "{k}: {d}");
    }
    assert!(u(&d["read_ticks"]) + u(&d["write_ticks"]) > 0, "{d}");
    let util = d["util"].as_f64().unwrap();
    assert!(util > 0.0 && util <= 100.0, "util {util}");

    let back = imported(db.path(), &fio);
    assert_eq!(
        back["target"]["device"],
        format!("/dev/{name}").as_str(),
        "{}",
        back["target"]
    );
}
