//! Issue 27, helper `grpverify`: verification inside job groups (fio's
//! `verify=` in a job that runs beside others, `enospc-pressure.fio`).
//! A verifying group checks its own writes (inline with `verify_backlog`
//! and its verified reads, and in a pass after its writes on its own
//! thread while the other groups run on); `verify_fatal` stops the job at
//! its first mismatch; the result records what was checked per group, and
//! a mismatch fails the run (exit 1).

use crate::util::{cmd, json, stderr, stdout, u};
use serde_json::Value;
use std::path::Path;

/// fio's example, kept in the repository (GPL-2.0, see its README.md).
fn enospc_pressure() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fio-examples/enospc-pressure.fio");
    std::fs::read_to_string(p).expect("the fixture")
}

/// `storlab bench ARGS --no-save --output-format json -q` in `dir`: the
/// output (any exit code) and the JSON document.
fn bench(dir: &Path, args: &[&str]) -> (std::process::Output, Value) {
    let out = cmd()
        .current_dir(dir)
        .arg("bench")
        .args(args)
        .args(["--no-save", "--output-format", "json", "-q"])
        .output()
        .expect("run storlab");
    let doc = if out.stdout.is_empty() {
        Value::Null
    } else {
        json(&out)
    };
    (out, doc)
}

fn group<'a>(phase: &'a Value, name: &str) -> &'a Value {
    phase["groups"]["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .find(|g| g["name"] == name)
        .unwrap_or_else(|| panic!("no group {name} in {phase}"))
}

/// fio's enospc-pressure.fio (its filename=/directory= lines removed, as
/// the corpus runs it): its three jobs run at the same time (one phase of
/// three groups whose windows overlap), the trim job punches holes in its
/// own file while the verifier writes, reads and checks its own: the
/// verifier's pass after its writes checked every 4 KiB unit of its 4 MiB
/// region, its verified reads checked more, and nothing mismatched (a
/// healthy file system). Before, the file was refused ("verify is not
/// supported inside groups").
#[test]
fn enospc_pressure_runs_its_three_jobs_together_and_the_verifier_checks_its_writes() {
    let d = tempfile::tempdir().unwrap();
    let text: String = enospc_pressure()
        .lines()
        .filter(|l| {
            let k = l.trim_start();
            !(k.starts_with("filename") || k.starts_with("directory"))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let job = d.path().join("enospc-pressure.fio");
    std::fs::write(&job, text).unwrap();
    let scratch = d.path().join("scratch");
    let (out, doc) = bench(
        d.path(),
        &[
            "--fio-job",
            job.to_str().unwrap(),
            scratch.to_str().unwrap(),
            "--size",
            "4m",
            "--runtime",
            "1s",
            "--time-based",
        ],
    );
    assert!(out.status.success(), "{}\n{}", stderr(&out), stdout(&out));
    let phases = doc["phases"].as_array().expect("phases");
    assert_eq!(
        phases.len(),
        1,
        "one phase: no stonewall separates the jobs"
    );
    let ph = &phases[0];
    let groups = ph["groups"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 3);
    // They ran at the same time: every window starts before any ends.
    let last_start = groups.iter().map(|g| u(&g["start_ns"])).max().unwrap();
    let first_end = groups.iter().map(|g| u(&g["end_ns"])).min().unwrap();
    assert!(last_start < first_end, "windows do not overlap: {groups:?}");
    assert!(
        ph["groups"]["overlap"].as_f64().unwrap() > 0.5,
        "{}",
        ph["groups"]
    );
    // The trim job trimmed (its own file: each job has its own here).
    let trim = group(ph, "punch_hole-raicer");
    assert_eq!(trim["params"]["rw"], "randtrim");
    assert!(u(&trim["total"]["ops"]) > 0, "no trims: {trim}");
    // The verifier checked every unit of its region after its writes, and
    // more inline (its reads), with no mismatch.
    let v = group(ph, "aio-dio-verifier");
    let gv = &v["verify"];
    assert_eq!(gv["pass"], "ran", "{gv}");
    assert_eq!(
        u(&gv["pass_blocks_checked"]),
        4 * 1024 * 1024 / 4096,
        "{gv}"
    );
    assert!(
        u(&gv["blocks_checked"]) > u(&gv["pass_blocks_checked"]),
        "{gv}"
    );
    assert_eq!(u(&gv["mismatches"]), 0, "{gv}");
    assert_eq!(v["params"]["verify_opts"]["async_threads"], 4);
    assert_eq!(v["params"]["verify_opts"]["fatal"], true);
    // The other groups do not verify; the phase's figure is the verifier's.
    assert!(group(ph, "dio-raicer").get("verify").is_none());
    assert_eq!(ph["verify"]["blocks_checked"], gv["blocks_checked"]);
    assert_eq!(u(&ph["verify"]["mismatches"]), 0);
}

/// The first job's data file (`job0.dat` in storlab's run directory under
/// `dir`), once it holds `len` bytes.
fn first_job_file(dir: &Path, len: u64) -> Option<std::path::PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).ok()?.flatten() {
            let p = e.path();
            let md = e.metadata().ok()?;
            if md.is_dir() {
                stack.push(p);
            } else if e.file_name() == "job0.dat" && md.len() >= len {
                return Some(p);
            }
        }
    }
    None
}

/// A phase of two groups: `v` verifies (4 KiB I/Os with pattern `rw` over
/// 1 MiB, paced at 100 IOPS: its 256 writes take about 2.6 s; `extra` is
/// added to it) and `r` reads its own file for 3 s beside it. One second
/// after `v`'s file is laid out, this test writes `bytes` of 0x5a (no
/// storlab header) at its start: blocks `v` wrote in its first 0.16 s,
/// before its verify pass.
fn corrupted(rw: &str, extra: &str, bytes: usize) -> (std::process::Output, Value) {
    use std::os::unix::fs::FileExt;
    let d = tempfile::tempdir().unwrap();
    let v = format!("name=v rw={rw} bs=4k size=1m verify=1 rate_iops=100 engine=psync {extra}");
    let r = "name=r rw=randread bs=4k size=1m runtime=3s time_based=1 engine=psync";
    let scratch = d.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let child = cmd()
        .current_dir(d.path())
        .arg("bench")
        .arg(&scratch)
        .args(["--group", &v, "--group", r])
        .args(["--no-save", "--output-format", "json", "-q"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run storlab");
    let t0 = std::time::Instant::now();
    let file = loop {
        if let Some(f) = first_job_file(&scratch, 1 << 20) {
            break f;
        }
        assert!(t0.elapsed().as_secs() < 30, "no data file appeared");
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    std::thread::sleep(std::time::Duration::from_secs(1));
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.write_all_at(&vec![0x5a; bytes], 0).unwrap();
    f.sync_all().unwrap();
    drop(f);
    let out = child.wait_with_output().unwrap();
    let doc = if out.stdout.is_empty() {
        Value::Null
    } else {
        json(&out)
    };
    (out, doc)
}

/// A verifying group's blocks corrupted between its writes and its verify
/// pass (while another group ran beside it) are found by the pass,
/// reported in the group's `verify` (file and offset) and the phase's, and
/// the run fails with exit 1.
#[test]
fn a_verify_group_finds_blocks_corrupted_before_its_pass() {
    let (out, doc) = corrupted("write", "", 64 << 10);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}\n{}",
        stderr(&out),
        stdout(&out)
    );
    let ph = &doc["phases"][0];
    let gv = &group(ph, "v")["verify"];
    assert_eq!(gv["pass"], "ran", "{gv}");
    assert_eq!(u(&gv["pass_blocks_checked"]), 256, "{gv}");
    // The 16 corrupted blocks, unless v was slow to write some of them.
    let bad = u(&gv["mismatches"]);
    assert!((1..=16).contains(&bad), "{gv}");
    let first = &gv["first_mismatches"][0];
    assert!(
        first["file"].as_str().unwrap().contains("storlab."),
        "{first}"
    );
    assert!(u(&first["offset_bytes"]) < 64 << 10, "{first}");
    assert_eq!(u(&ph["verify"]["mismatches"]), bad);
    assert!(group(ph, "r").get("verify").is_none());
    // The other group kept running while v wrote and checked.
    assert!(u(&group(ph, "r")["elapsed_ns"]) > 2_500_000_000);
}

/// With verify_fatal, the verifying group's job stops at its first
/// mismatch: its pass after the writes ends there (one mismatch); a
/// time-based reader-writer (its reads checked inline) that would run 4 s
/// stops soon after its file was corrupted, with one mismatch, and its
/// pass does not run (the result says why). The run fails with exit 1.
/// Without verify_fatal the same job runs its 4 s and counts more.
#[test]
fn verify_fatal_stops_a_verify_group_at_its_first_mismatch() {
    let (out, doc) = corrupted("write", "verify_fatal=1", 64 << 10);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}\n{}",
        stderr(&out),
        stdout(&out)
    );
    let gv = &group(&doc["phases"][0], "v")["verify"];
    assert_eq!(u(&gv["mismatches"]), 1, "{gv}");
    assert_eq!(gv["pass"], "ran", "{gv}");
    let timed = "runtime=4s time_based=1";
    let (out, doc) = corrupted("randrw", &format!("{timed} verify_fatal=1"), 1 << 20);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}\n{}",
        stderr(&out),
        stdout(&out)
    );
    let g = group(&doc["phases"][0], "v");
    let gv = &g["verify"];
    assert_eq!(u(&gv["mismatches"]), 1, "{gv}");
    assert!(
        gv["pass"].as_str().unwrap().contains("verify_fatal"),
        "{gv}"
    );
    assert!(u(&g["elapsed_ns"]) < 3_000_000_000, "not stopped: {g}");
    let (out, doc) = corrupted("randrw", timed, 1 << 20);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}\n{}",
        stderr(&out),
        stdout(&out)
    );
    let g = group(&doc["phases"][0], "v");
    assert!(u(&g["verify"]["mismatches"]) > 1, "{}", g["verify"]);
    assert!(u(&g["elapsed_ns"]) > 3_500_000_000, "{g}");
}
