//! `storlab md`: metadata phases through the real binary. Counts agree
//! across phases (also after a stonewalled create), the tree has the shape
//! asked for, mdtest's spellings mean the same job, bad input exits 2 and
//! makes nothing, Ctrl-C stops and removes everything, and a million files
//! stay within 256 MiB of storlab's memory.

use crate::util::{cmd, json, ok, phase, stderr, stdout, storlab};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A temporary directory on tmpfs (/dev/shm) when there is one: metadata
/// phases are fast there, so counts can be large.
fn shm_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    }
}

fn md(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut a = vec!["md", dir.to_str().unwrap()];
    a.extend(args);
    storlab(&a)
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

#[test]
fn each_operation_is_a_phase_with_equal_counts_and_everything_is_removed() {
    let d = shm_dir();
    let db = d.path().join("r.db");
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let o = md(
        &target,
        &[
            "--files",
            "3000",
            "--dirs",
            "500",
            "--depth",
            "2",
            "--branch",
            "3",
            "--size",
            "1k",
            "--ops",
            "create,stat,read,rename,delete",
            "--json",
            "--db",
            db.to_str().unwrap(),
        ],
    );
    ok(&o);
    let v = json(&o);
    let names: Vec<&str> = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["params"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "dir-create",
            "dir-stat",
            "dir-rename",
            "dir-delete",
            "file-create",
            "file-stat",
            "file-read",
            "file-rename",
            "file-delete"
        ]
    );
    for p in v["phases"].as_array().unwrap() {
        let want = if p["params"]["md"]["item"] == "file" {
            3000
        } else {
            500
        };
        assert_eq!(p["total"]["ops"], want, "{}", p["params"]["name"]);
        assert_eq!(p["errors"], serde_json::json!({}));
        let m = &p["params"]["md"];
        assert_eq!(m["depth"], 2);
        assert_eq!(m["branch"], 3);
        assert_eq!(m["tree_dirs"], 13);
        assert_eq!(m["ranks"], 1);
        // items/s is the count over the phase window.
        let rate = p["total"]["iops"].as_f64().unwrap();
        let secs = p["elapsed_ns"].as_f64().unwrap() / 1e9;
        assert!((rate * secs - want as f64).abs() < 1.0, "{rate} × {secs}");
        let lat = &p["total"]["lat_ns"];
        assert!(lat["p50"].as_u64().unwrap() <= lat["p99"].as_u64().unwrap());
        assert!(p["cpu"]["cpu_ns_per_io"].as_f64().is_some());
    }
    assert_eq!(phase(&v, "file-create")["write"]["bytes"], 3000 * 1024);
    assert_eq!(phase(&v, "file-read")["read"]["bytes"], 3000 * 1024);
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
    // Stored as a run of kind md.
    let runs = storlab(&["runs", "--db", db.to_str().unwrap(), "--kind", "md"]);
    assert!(ok(&runs).lines().count() >= 2, "{}", stdout(&runs));
}

#[test]
fn the_tree_has_the_depth_and_branch_asked_for_and_keep_keeps_it() {
    let d = shm_dir();
    let o = md(
        d.path(),
        &[
            "-n",
            "40",
            "-F",
            "-z",
            "2",
            "-b",
            "2",
            "-u",
            "-C",
            "--keep",
            "--no-save",
            "--json",
        ],
    );
    ok(&o);
    let run_dir = entries(d.path()).pop().unwrap();
    let name = run_dir.file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.starts_with("storlab."), "{name}");
    let top = run_dir.join("rank.0/tree");
    // 7 directories: tree, d1, d2, d1/d3, d1/d4, d2/d5, d2/d6; 40 files,
    // 6 in each (the last 4).
    let mut dirs = vec![top.clone()];
    for p in ["d1", "d2", "d1/d3", "d1/d4", "d2/d5", "d2/d6"] {
        dirs.push(top.join(p));
    }
    let mut files = 0;
    for (i, dir) in dirs.iter().enumerate() {
        let n = entries(dir).into_iter().filter(|p| p.is_file()).count();
        let want = if i < 6 { 6 } else { 4 };
        assert_eq!(n, want, "{}", dir.display());
        files += n;
    }
    assert_eq!(files, 40);
    assert!(top.join("d1/d3/file.mdtest.0.18").is_file());
    let v = json(&o);
    assert_eq!(v["target"]["kept"], true);
    std::fs::remove_dir_all(run_dir).unwrap();
}

#[test]
fn mdtest_spellings_and_long_options_describe_the_same_job() {
    let d = shm_dir();
    let short = md(
        d.path(),
        &[
            "-n",
            "300",
            "-F",
            "-z",
            "1",
            "-b",
            "3",
            "-u",
            "-w",
            "100",
            "-e",
            "50",
            "-C",
            "-T",
            "-E",
            "-r",
            "-U",
            "-N",
            "1",
            "-W",
            "30",
            "--no-save",
            "--json",
        ],
    );
    let long = md(
        d.path(),
        &[
            "--files",
            "300",
            "--depth",
            "1",
            "--branch",
            "3",
            "--unique-dir",
            "--size",
            "100",
            "--read-bytes",
            "50",
            "--ops",
            "delete,read,rename,stat,create",
            "--rank-shift",
            "1",
            "--stonewall",
            "30s",
            "--no-save",
            "--json",
        ],
    );
    ok(&short);
    ok(&long);
    let (a, b) = (json(&short), json(&long));
    let params = |v: &Value| {
        v["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["params"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(params(&a), params(&b));
    let m = &params(&a)[0]["md"];
    assert_eq!(m["unique_dir"], true);
    assert_eq!(m["write_bytes"], 100);
    assert_eq!(m["read_bytes"], 50);
    assert_eq!(m["rank_shift"], 1);
    assert_eq!(m["stonewall_ns"], 30_000_000_000u64);
    assert_eq!(params(&a).len(), 5);
    // -n without -F or -D: files and directories.
    let both = md(d.path(), &["-n", "10", "-C", "--no-save", "--json"]);
    let v = json(&both);
    assert_eq!(v["phases"].as_array().unwrap().len(), 2);
}

#[test]
fn bad_input_exits_2_names_the_fix_and_makes_nothing() {
    let d = shm_dir();
    let file = d.path().join("a-file");
    std::fs::write(&file, b"keep me").unwrap();
    let dir = d.path().to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["md", dir, "--files", "0"], "--files"),
        (
            vec!["md", dir, "--files", "10", "--ops", "chmod"],
            "create,stat,read,rename,delete",
        ),
        (
            vec!["md", dir, "--files", "10", "--depth", "9", "--branch", "10"],
            "smaller --depth",
        ),
        (
            vec!["md", dir, "--files", "10", "-w", "10", "-e", "20"],
            "--size",
        ),
        (
            vec!["md", dir, "--files", "10", "--allow-destroy"],
            "own new subdirectory",
        ),
        (vec!["md", dir, "--dirs", "10", "--ops", "read"], "--files"),
        (
            vec!["md", file.to_str().unwrap(), "--files", "10"],
            "not a directory",
        ),
        (vec!["md", dir, "--files", "10", "-W", "0"], "--stonewall"),
        (vec!["md", dir, "-F", "--files", "10"], "-n"),
    ];
    for (args, want) in cases {
        let o = storlab(&[args.as_slice(), &["--no-save"]].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(want),
            "{args:?} should name {want}: {}",
            stderr(&o)
        );
        assert!(!stderr(&o).contains("panicked"));
    }
    assert_eq!(entries(d.path()), vec![file.clone()], "nothing was made");
    assert_eq!(std::fs::read(&file).unwrap(), b"keep me");
}

#[test]
fn a_stonewalled_create_is_followed_by_as_many_stats_and_deletes_never_enoent() {
    let d = shm_dir();
    let o = md(
        d.path(),
        &[
            "--files",
            "50000000",
            "--depth",
            "1",
            "--branch",
            "4",
            "-W",
            "1",
            "--no-save",
            "--json",
        ],
    );
    ok(&o);
    let v = json(&o);
    let made = phase(&v, "file-create")["total"]["ops"].as_u64().unwrap();
    assert!(made > 0 && made < 50_000_000, "{made}");
    assert_eq!(
        phase(&v, "file-create")["params"]["md"]["stonewalled"],
        true
    );
    for name in ["file-stat", "file-read", "file-delete"] {
        let p = phase(&v, name);
        assert_eq!(p["total"]["ops"].as_u64().unwrap(), made, "{name}");
        assert_eq!(p["errors"], serde_json::json!({}), "{name}");
        assert_eq!(
            p["params"]["md"]["items_by_rank"],
            serde_json::json!([made])
        );
    }
    assert!(entries(d.path()).is_empty());
}

#[test]
fn ctrl_c_stops_promptly_keeps_what_was_measured_and_removes_everything() {
    interrupt_keeps_results_and_removes_everything(libc::SIGINT, "Ctrl-C");
}

#[test]
fn sigterm_stops_md_the_same_way() {
    interrupt_keeps_results_and_removes_everything(libc::SIGTERM, "SIGTERM");
}

fn interrupt_keeps_results_and_removes_everything(signal: i32, named: &str) {
    let d = shm_dir();
    let db = d.path().join("r.db");
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let child = cmd()
        .args([
            "md",
            target.to_str().unwrap(),
            "--files",
            "100000000",
            "--json",
            "--db",
        ])
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until files exist in the tree, then interrupt.
    let t0 = Instant::now();
    let tree = loop {
        let found = entries(&target)
            .pop()
            .map(|r| r.join("shared/tree"))
            .filter(|t| t.is_dir() && entries(t).len() > 1000);
        if let Some(t) = found {
            break t;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "no files appeared");
        std::thread::sleep(Duration::from_millis(20));
    };
    let t = Instant::now();
    // SAFETY: kill with a valid pid of our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["interrupted"], true);
    assert!(v["stop_reason"].as_str().unwrap().contains(named));
    let create = phase(&v, "file-create");
    assert_eq!(create["interrupted"], true);
    assert!(create["total"]["ops"].as_u64().unwrap() > 1000);
    assert!(!tree.exists());
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
    // The store has the interrupted run with its phase.
    let show = storlab(&["show", "latest", "--db", db.to_str().unwrap(), "--json"]);
    let s = ok(&show);
    assert!(s.contains("file-create"), "{s}");
}

/// Peak resident memory of a finished child, from wait4's rusage (KiB).
fn wait_maxrss(child: std::process::Child) -> (i32, u64) {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; both pointers are to live locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    assert_eq!(pid, child.id() as i32, "wait4");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, ru.ru_maxrss as u64)
}

#[test]
fn a_million_files_are_created_stated_and_deleted_within_256_mib() {
    let d = shm_dir();
    let mut child = cmd()
        .args([
            "md",
            d.path().to_str().unwrap(),
            "--files",
            "1000000",
            "--depth",
            "1",
            "--branch",
            "10",
            "--ops",
            "create,stat,delete",
            "--no-save",
            "-q",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The JSON document (three phases) fits in the pipe's buffer.
    let mut pipe = child.stdout.take().unwrap();
    let (code, maxrss_kib) = wait_maxrss(child);
    let mut text = String::new();
    std::io::Read::read_to_string(&mut pipe, &mut text).unwrap();
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&text).unwrap();
    for name in ["file-create", "file-stat", "file-delete"] {
        assert_eq!(phase(&v, name)["total"]["ops"], 1_000_000, "{name}");
    }
    assert!(
        maxrss_kib < 256 * 1024,
        "storlab md used {} MiB for a million files",
        maxrss_kib / 1024
    );
    assert!(maxrss_kib > 1024, "a real measurement ({maxrss_kib} KiB)");
    assert!(entries(d.path()).is_empty());
}
