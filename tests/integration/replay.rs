//! `storlab replay`: a recorded trace issued again on a target directory,
//! through the real binary (issue 26).

use crate::util::{cmd, ok, refused_storing_nothing, stderr, stdout, storlab};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A fio v3 iolog of `ops` 4 KiB reads, one every `gap_us`, and `writes`
/// 64 KiB writes to a second file.
fn iolog(dir: &Path, ops: u64, gap_us: u64, writes: u64) -> PathBuf {
    let mut t = String::from("fio version 3 iolog\n0 /app/in.dat add\n0 /app/out.dat add\n");
    for i in 0..ops {
        writeln!(
            t,
            "{} /app/in.dat read {} 4096",
            i * gap_us,
            (i * 31 % 256) * 4096
        )
        .expect("text");
    }
    for i in 0..writes {
        writeln!(
            t,
            "{} /app/out.dat write {} 65536",
            ops * gap_us + i,
            i * 65536
        )
        .expect("text");
    }
    let p = dir.join("app.iolog");
    std::fs::write(&p, t).expect("trace written");
    p
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn a_replay_is_stored_with_the_traces_bytes_and_its_files_are_removed() {
    let d = tempfile::tempdir().expect("tempdir");
    let trace = iolog(d.path(), 100, 1_000, 8);
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let db = d.path().join("r.db");
    let out = cmd()
        .args([
            "replay",
            trace.to_str().expect("utf8"),
            target.to_str().expect("utf8"),
            "--json",
            "--db",
        ])
        .arg(&db)
        .output()
        .expect("run");
    let text = ok(&out);
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let p = &v["phases"][0];
    assert_eq!(p["params"]["name"], "replay");
    assert_eq!(p["read"]["bytes"], 100 * 4096);
    assert_eq!(p["write"]["bytes"], 8 * 65536);
    assert_eq!(p["jobs"].as_array().map(Vec::len), Some(1), "one rank");
    assert!(
        entries(&target).is_empty(),
        "laid-out files removed: {:?}",
        entries(&target)
    );
    let runs = storlab(&["runs", "--db", db.to_str().expect("utf8"), "--json"]);
    assert!(ok(&runs).contains("\"replay\""), "{}", stdout(&runs));
}

#[test]
fn bad_traces_and_options_are_refused_before_anything_is_written() {
    let d = tempfile::tempdir().expect("tempdir");
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let cut = d.path().join("cut.iolog");
    std::fs::write(&cut, "fio version 3 iolog\n0 /a add\n5 /a read 0\n").expect("written");
    let good = iolog(d.path(), 4, 10, 1);
    let cases: [(Vec<&str>, &str); 4] = [
        (vec![cut.to_str().expect("utf8")], "line 3"),
        (
            vec![good.to_str().expect("utf8"), "--speed", "fast"],
            "--speed \"fast\"",
        ),
        (
            vec![good.to_str().expect("utf8"), "--map", "/app/in.dat=in"],
            "/app/out.dat",
        ),
        (
            vec![good.to_str().expect("utf8"), "--map", "/app=/etc"],
            "relative path inside TARGET",
        ),
    ];
    for (args, want) in cases {
        let db = d.path().join("r.db");
        let out = cmd()
            .arg("replay")
            .args(&args[..1])
            .arg(&target)
            .args(&args[1..])
            .arg("--db")
            .arg(&db)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
        assert!(
            entries(&target).is_empty(),
            "{args:?} wrote {:?}",
            entries(&target)
        );
        assert!(!db.exists(), "{args:?}: no database made before the checks");
    }
}

#[test]
fn sigterm_keeps_what_was_replayed_and_removes_the_files() {
    let d = tempfile::tempdir().expect("tempdir");
    // 20 s of recorded time: one read every 10 ms.
    let trace = iolog(d.path(), 2_000, 10_000, 0);
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let db = d.path().join("r.db");
    let child = cmd()
        .args([
            "replay",
            trace.to_str().expect("utf8"),
            target.to_str().expect("utf8"),
            "--json",
            "--db",
        ])
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let t0 = Instant::now();
    while entries(&target).is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no run directory appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill with a valid pid of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(v["interrupted"], true);
    assert!(
        v["stop_reason"].as_str().unwrap_or("").contains("SIGTERM"),
        "{v}"
    );
    let reads = v["phases"][0]["read"]["ops"].as_u64().unwrap_or(0);
    assert!(reads > 10 && reads < 2_000, "partial: {reads}");
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/darshan")
        .join(name)
}

#[test]
fn ranks_n_replays_only_the_traces_first_n_ranks_and_names_the_rest() {
    let d = tempfile::tempdir().expect("tempdir");
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let trace = fixture("dxt-4ranks-3.41.darshan");
    let out = cmd()
        .arg("replay")
        .arg(&trace)
        .arg(&target)
        .args(["--ranks", "2", "--speed", "max", "--json", "--db"])
        .arg(d.path().join("r.db"))
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).expect("JSON");
    let p = &v["phases"][0];
    let jobs: Vec<u64> = p["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| j["job"].as_u64().expect("rank"))
        .collect();
    assert_eq!(jobs, [0, 1], "trace ranks 0 and 1 only");
    for j in p["jobs"].as_array().expect("jobs") {
        assert_eq!(j["read"]["ops"], 6126, "{j}");
        assert_eq!(j["write"]["ops"], 1497, "{j}");
        assert_eq!(j["read"]["bytes"], 22_517_726_u64);
        assert_eq!(j["write"]["bytes"], 13_021_781_u64);
    }
    let warnings = p["warnings"].to_string();
    assert!(
        warnings.contains("rank 2: not replayed") && warnings.contains("rank 3: not replayed"),
        "{warnings}"
    );
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
}

#[test]
fn ranks_above_the_traces_ranks_are_refused_naming_both_before_any_io() {
    let d = tempfile::tempdir().expect("tempdir");
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let db = d.path().join("r.db");
    for (n, want) in [
        ("5", "--ranks 5, but the trace has 4 ranks"),
        ("0", "--ranks 0"),
    ] {
        let out = cmd()
            .arg("replay")
            .arg(fixture("dxt-4ranks-3.41.darshan"))
            .arg(&target)
            .args(["--ranks", n, "--db"])
            .arg(&db)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(want), "{}", stderr(&out));
        assert!(entries(&target).is_empty(), "{:?}", entries(&target));
        assert!(!db.exists(), "no database made before the checks");
    }
}

#[test]
fn a_block_device_target_is_refused_before_the_store_or_the_device_is_touched() {
    use crate::util::loopdev::Loop;
    if !crate::util::root_with(
        "replay::a_block_device_target_is_refused",
        &["losetup"],
        "a loop device",
        "Debian: mount",
    ) {
        return;
    }
    let d = tempfile::tempdir().expect("tempdir");
    let lo = Loop::sparse(&d.path().join("disk.img"), 64 << 20).expect("loop device");
    let trace = iolog(d.path(), 4, 10, 1);
    let db = d.path().join("r.db");
    let args = ["replay".as_ref(), trace.as_os_str(), lo.dev.as_ref()];
    refused_storing_nothing(&args, &db, &["is a block device", "give a directory"]);
    let file = d.path().join("plain");
    std::fs::write(&file, b"x").expect("file");
    let args = ["replay".as_ref(), trace.as_os_str(), file.as_os_str()];
    refused_storing_nothing(&args, &db, &["is not a directory"]);
    assert_eq!(
        std::fs::read(&file).expect("file"),
        b"x",
        "the file is untouched"
    );
}
