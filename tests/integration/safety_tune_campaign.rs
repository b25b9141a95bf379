//! Safety of `tune readahead` (one tuning per device, recovery only to the
//! device it saved), of `campaign` (resume runs the interrupted cell's
//! teardown first, run words checked before any setup, matrix values
//! quoted and passed in the environment, teardown timeout, process groups
//! and children that die with their parent) and of user profiles (a broken
//! one is named, the others still work).

use crate::util::{cmd, have, is_root, ok, run_tool, skip, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// A loop device over a sparse file; detached on drop.
struct Loop {
    dev: String,
}

impl Loop {
    fn new(img: &Path, size: &str) -> Result<Loop, String> {
        run_tool("truncate", &["-s", size, img.to_str().unwrap()])?;
        let dev = run_tool("losetup", &["--find", "--show", img.to_str().unwrap()])?;
        Ok(Loop { dev })
    }
    fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }
    fn ra_file(&self) -> PathBuf {
        PathBuf::from(format!("/sys/block/{}/queue/read_ahead_kb", self.name()))
    }
    fn ra(&self) -> u64 {
        std::fs::read_to_string(self.ra_file())
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
    fn set_ra(&self, kb: u64) {
        std::fs::write(self.ra_file(), kb.to_string()).unwrap();
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = run_tool("losetup", &["-d", &self.dev]);
    }
}

fn needs_root_and(test: &str, tools: &[&str]) -> bool {
    if !is_root() {
        skip(test, "needs root (loop devices, /sys writes)");
        return false;
    }
    if let Some(t) = tools.iter().find(|t| !have(t)) {
        skip(
            test,
            &format!("{t} is not installed (Debian: util-linux procps)"),
        );
        return false;
    }
    true
}

/// Whether process `pid` runs (a zombie does not: this container's init
/// may be slow to reap one).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
    })
}

/// Wait up to `secs` for `cond`.
fn wait_for(secs: u64, what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(
            t0.elapsed() < Duration::from_secs(secs),
            "waited {secs} s: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The children of `pid`.
fn children(pid: u32) -> Vec<String> {
    run_tool("pgrep", &["-P", &pid.to_string()])
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect()
}

fn tune(dev: &str, state: &Path, args: &[&str]) -> std::process::Command {
    let mut c = cmd();
    c.args(["tune", "readahead", dev, "--no-save"])
        .args(args)
        .env("STORLAB_STATE_DIR", state);
    c
}

/// Two tunings of one device started at once: exactly one runs, the
/// other is refused (exit 2, naming the device and the other's pid)
/// before it changes anything, and the read-ahead ends at its original
/// value. (Before the per-device lock both ran over one state file: the
/// read-ahead was left changed, or one failed with a bare "No such file
/// or directory".)
#[test]
fn two_tunes_of_one_device_at_once_one_runs_the_other_is_refused() {
    let t = "two_tunes_of_one_device_at_once_one_runs_the_other_is_refused";
    if !needs_root_and(t, &["losetup", "truncate"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let lo = Loop::new(&d.path().join("disk.img"), "128M").unwrap();
    let state = d.path().join("state");
    for round in 0..3 {
        lo.set_ra(3072);
        let args = ["--values", "128k,256k", "--runtime", "1s", "--size", "32M"];
        let spawn = || {
            tune(&lo.dev, &state, &args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn(), spawn());
        let outs: Vec<Output> = [a, b]
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        let codes: Vec<Option<i32>> = outs.iter().map(|o| o.status.code()).collect();
        let all = || {
            outs.iter()
                .map(|o| format!("exit {:?}: {}", o.status.code(), stderr(o)))
                .collect::<Vec<_>>()
                .join("\n---\n")
        };
        assert!(
            codes.contains(&Some(0)) && codes.contains(&Some(2)),
            "round {round}: {}",
            all()
        );
        let refused = outs.iter().find(|o| o.status.code() == Some(2)).unwrap();
        let msg = stderr(refused);
        assert!(
            msg.contains(&format!(
                "another storlab tune is running on {} (pid",
                lo.dev
            )) && msg.contains("nothing was changed"),
            "round {round}: {msg}"
        );
        assert!(!msg.contains("streaming read"), "{msg}");
        assert_eq!(lo.ra(), 3072, "round {round}: {}", all());
    }
}

/// A tuning killed with SIGKILL: its bench child ends with it
/// (PDEATHSIG); the loop device is then detached and attached to another
/// image. The next tuning does not write the saved value to the new
/// image's device: it warns why and leaves the read-ahead as it is.
#[test]
fn a_killed_tunes_value_is_not_restored_to_a_reattached_loop_device() {
    let t = "a_killed_tunes_value_is_not_restored_to_a_reattached_loop_device";
    if !needs_root_and(t, &["losetup", "truncate", "pgrep"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let lo = Loop::new(&d.path().join("a.img"), "2G").unwrap();
    let other = d.path().join("b.img");
    run_tool("truncate", &["-s", "128M", other.to_str().unwrap()]).unwrap();
    lo.set_ra(3072);
    let state = d.path().join("state");
    let mut child = tune(&lo.dev, &state, &["--values", "128k", "--runtime", "60s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(30, "the tuner changes the read-ahead", || lo.ra() != 3072);
    let mut kids = Vec::new();
    wait_for(30, "the tuner starts its bench", || {
        kids = children(child.id());
        !kids.is_empty()
    });
    child.kill().unwrap();
    let _ = child.wait();
    // Its bench ends with it (before: it read on for the whole minute).
    for k in &kids {
        wait_for(15, "the bench child of the killed tuner ends", || {
            !running(k)
        });
    }
    assert_eq!(lo.ra(), 128, "left changed by the killed run");
    let saved = state.join(format!("tune-readahead.{}.json", lo.name()));
    assert!(saved.exists(), "the state file stays for the recovery");
    // The same loop device, now over another image.
    run_tool("losetup", &["-d", &lo.dev]).unwrap();
    run_tool("losetup", &[&lo.dev, other.to_str().unwrap()]).unwrap();
    lo.set_ra(1024);
    let out = tune(
        &lo.dev,
        &state,
        &[
            "--values",
            "256k",
            "--runtime",
            "1s",
            "--size",
            "32M",
            "--json",
        ],
    )
    .output()
    .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&ok(&out))
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", stdout(&out)));
    let err = stderr(&out);
    assert!(
        err.contains("no longer the device") && err.contains("b.img"),
        "{err}"
    );
    assert!(doc["recovered_from_earlier_run"].is_null(), "{doc:#}");
    assert_eq!(
        doc["layers"][0]["original_kb"], 1024,
        "the old value was not written first: {doc:#}"
    );
    assert_eq!(lo.ra(), 1024, "the new image's read-ahead is unchanged");
    assert!(!saved.exists(), "the stale state is dropped");
}

/// One broken user profile (a TOML syntax error) no longer disables every
/// profile: `profiles list` shows the shipped and the good user profiles
/// and names the broken file; `bench --profile <good>` runs; `--profile
/// <broken>` exits 2 with the parse error and the file.
#[test]
fn a_broken_user_profile_is_named_and_the_others_still_work() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("config/storlab/profiles");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("broken.toml"), "[profile\nabout = \"half\"\n").unwrap();
    std::fs::write(
        dir.join("tiny.toml"),
        "[profile]\nabout = \"a tiny null-engine read\"\n\n[global]\nengine = \"null\"\n\
         size = \"1M\"\nruntime = \"200ms\"\ntime_based = true\n\n[[phase]]\nname = \"tiny-read\"\n\
         rw = \"randread\"\nbs = \"4k\"\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        cmd()
            .args(args)
            .current_dir(d.path())
            .env("XDG_CONFIG_HOME", d.path().join("config"))
            .env("STORLAB_DB", d.path().join("r.db"))
            .output()
            .unwrap()
    };
    let out = run(&["profiles", "list"]);
    let text = ok(&out);
    for name in ["seq", "sas", "tiny", "broken"] {
        assert!(text.contains(name), "{name} missing:\n{text}");
    }
    assert!(text.contains("BROKEN"), "{text}");
    assert!(
        stderr(&out).contains(&dir.join("broken.toml").display().to_string()),
        "the warning names the file: {}",
        stderr(&out)
    );
    // JSON: the usable profiles.
    let doc: serde_json::Value = serde_json::from_str(&ok(&run(&["profiles", "--json"]))).unwrap();
    let names: Vec<&str> = doc
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"tiny") && names.contains(&"seq"),
        "{names:?}"
    );
    assert!(!names.contains(&"broken"), "{names:?}");
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let out = run(&[
        "bench",
        target.to_str().unwrap(),
        "--profile",
        "tiny",
        "--no-save",
    ]);
    assert!(ok(&out).contains("tiny-read"), "{}", stdout(&out));
    assert!(stderr(&out).contains("broken.toml"), "{}", stderr(&out));
    let out = run(&[
        "bench",
        target.to_str().unwrap(),
        "--profile",
        "broken",
        "--no-save",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("broken.toml") && err.contains("profile broken") && !err.contains("panicked"),
        "{err}"
    );
}
