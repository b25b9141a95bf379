//! `storlab io500` (issue 25, io500c): a run whose phase fails is still a
//! whole stored run: the phases done before the failure, the run marked
//! INVALID with the reason, and a non-zero exit.

use crate::util::{cmd, stderr};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn entries(p: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(p)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default()
}

#[test]
fn a_phase_that_fails_leaves_a_finished_run_that_says_why() {
    let d = tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("tempdir");
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let cfg = d.path().join("config.ini");
    // mdtest-easy-write is cut by the 1 s stonewall: mdtest-hard's
    // directory is made a second or more after the data directory appears.
    std::fs::write(
        &cfg,
        "[ior-easy]\ntransferSize = 1m\nblockSize = 8m\n[ior-hard]\nsegmentCount = 64\n\
         [mdtest-easy]\nn = 100000000\n[mdtest-hard]\nn = 300\n",
    )
    .expect("config");
    let db = d.path().join("r.db");
    let child = cmd()
        .arg("io500")
        .arg(&cfg)
        .arg(&target)
        .args(["--stonewall", "1s", "-q", "--db"])
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // As soon as the run's data directory exists, put a file where
    // mdtest-hard's directory goes: that phase cannot start.
    let t0 = Instant::now();
    let blocked = loop {
        if let Some(own) = entries(&target).first()
            && own.join("datafiles").is_dir()
        {
            let p = own.join("datafiles/mdtest-hard");
            std::fs::write(&p, b"in the way").expect("block");
            break p;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "no run directory");
        std::thread::sleep(Duration::from_millis(2));
    };
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // Its own directory is removed even so (the blocking file with it).
    assert!(
        !blocked.exists() && entries(&target).is_empty(),
        "{:?}",
        entries(&target)
    );
    let show = cmd()
        .args(["show", "latest", "--json", "--db"])
        .arg(&db)
        .output()
        .expect("show");
    assert!(show.status.success(), "{}", stderr(&show));
    let v: serde_json::Value = serde_json::from_slice(&show.stdout).expect("JSON");
    let run = &v[0];
    assert_eq!(run["kind"], "io500");
    let report = &run["report"];
    let names: Vec<&str> = report["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .filter_map(|p| p["params"]["name"].as_str())
        .collect();
    assert_eq!(
        names,
        ["ior-easy-write", "mdtest-easy-write", "ior-hard-write"],
        "{report}"
    );
    let why = report["stop_reason"].as_str().expect("a stop reason");
    assert!(why.starts_with("mdtest-hard-write: "), "{why}");
    let warned = report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .any(|w| w.as_str() == Some(&format!("io500: INVALID run: failed: {why}")));
    assert!(warned, "{report}");
    assert_eq!(report["interrupted"], true);
}

/// io500's mdtest-hard makes the calls mdtest makes, per file (`strace
/// -f` of both, io500 02091cf): a create is `open(path, O_CREAT)` +
/// `lseek(fd, 0, SEEK_SET)` + `write(3901)` + `close`, a read `open` +
/// `lseek(fd, 0, SEEK_SET)` + `read(3901)` + `close` (mdtest's POSIX
/// backend seeks before every transfer); mdtest-easy's empty files are
/// `open` + `close`, no seek.
#[test]
fn mdtest_hard_seeks_before_each_write_and_read_as_mdtest_does() {
    if !crate::util::have("strace") {
        crate::util::skip(
            "mdtest_hard_seeks_before_each_write_and_read_as_mdtest_does",
            "strace not found (Debian: strace)",
        );
        return;
    }
    let d = tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("tempdir");
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let cfg = d.path().join("config.ini");
    std::fs::write(
        &cfg,
        "[ior-easy]\ntransferSize = 1m\nblockSize = 1m\n[ior-hard]\nsegmentCount = 4\n\
         [mdtest-easy]\nn = 30\n[mdtest-hard]\nn = 30\n",
    )
    .expect("config");
    let trace = d.path().join("trace");
    let mut c = std::process::Command::new("strace");
    c.args(["-f", "-e", "trace=open,openat,lseek", "-o"])
        .arg(&trace)
        .arg(crate::util::storlab_bin())
        .arg("io500")
        .arg(&cfg)
        .arg(&target)
        .args(["--np", "1", "--stonewall", "1s", "-q", "--no-save"]);
    for (k, v) in cmd().get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    let o = c.output().expect("strace");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&trace).expect("trace");
    // pid -> (fd of the last mdtest file opened, hard or easy)
    let mut open: std::collections::HashMap<String, (String, bool)> = Default::default();
    let (mut hard, mut easy, mut hard_seeks, mut easy_seeks) = (0, 0, 0, 0);
    for l in text.lines() {
        let (pid, call) = l.split_once(' ').unwrap_or(("", l));
        let call = call.trim_start();
        if (call.starts_with("open(") || call.starts_with("openat("))
            && call.contains("file.mdtest.")
        {
            let Some((_, fd)) = call.rsplit_once("= ") else {
                continue;
            };
            let is_hard = call.contains("mdtest-hard");
            if is_hard {
                hard += 1;
            } else {
                easy += 1;
            }
            open.insert(pid.to_string(), (fd.trim().to_string(), is_hard));
        } else if let Some(rest) = call.strip_prefix("lseek(") {
            let fd = rest.split(',').next().unwrap_or_default();
            if let Some((f, is_hard)) = open.remove(pid) {
                if f == fd && rest.contains(", 0, SEEK_SET)") {
                    if is_hard {
                        hard_seeks += 1;
                    } else {
                        easy_seeks += 1;
                    }
                }
            }
        }
    }
    assert_eq!(hard, 60, "30 creates and 30 reads of mdtest-hard's files");
    assert_eq!(
        hard_seeks, hard,
        "a seek to 0 after every open of a 3,901-byte file"
    );
    assert_eq!(easy, 30, "mdtest-easy's 30 creates");
    assert_eq!(easy_seeks, 0, "no seek for an empty file");
}
