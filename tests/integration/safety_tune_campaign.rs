//! Safety of `tune readahead` (one tuning per device, recovery only to the
//! device it saved), of `campaign` (resume runs the interrupted cell's
//! teardown first, or the teardown alone when the runs are stored, run
//! words checked before any setup, matrix values passed in the
//! environment and never spliced into shell code, teardown timeout, process groups
//! and children that die with their parent) and of user profiles (a broken
//! one is named, the others still work).

use crate::util::loopdev::Loop;
use crate::util::{
    campaign, campaign_cmd, cmd, needs_root_and, ok, run_tool, stderr, stdout, write,
};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

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
    let lo = Loop::sparse(&d.path().join("disk.img"), 2 << 30).unwrap();
    let state = d.path().join("state");
    for round in 0..3 {
        lo.set_ra(3072);
        // Each read lasts up to 2 s (2 GiB): the first holds the lock for
        // seconds, the second starts within milliseconds.
        let args = ["--values", "128k,256k", "--runtime", "2s"];
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
    let lo = Loop::sparse(&d.path().join("a.img"), 2 << 30).unwrap();
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
    if let Err(e) = run_tool("losetup", &[&lo.dev, other.to_str().unwrap()]) {
        // Another program took the free device in between: it is not ours
        // to detach.
        std::mem::forget(lo);
        panic!("could not re-attach the loop device (taken in between?): {e}");
    }
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

/// The one campaign directory under `dir/campaigns`.
fn campaign_dir(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir.join("campaigns"))
        .ok()?
        .next()
        .map(|e| e.unwrap().path())
}

/// A quick null-engine read (the campaign's run words).
const QUICK_RUN: &str = r#"[["bench", "--rw", "randread", "--engine", "null", "--size", "1M", "--runtime", "200ms", "--time-based"]]"#;

/// Killed (SIGKILL) in the middle of cell b, after its setup built
/// something (a directory standing for a mount, which a second setup
/// cannot build over): the resume runs b's teardown first, then b again,
/// so b is measured and the comparison shows every cell. (Before, the
/// resume ran b's setup over what was left, b failed, and its figures
/// vanished from the comparison without a word.) A cell that fails for
/// good (c) is a row in the comparison saying why.
#[test]
fn a_resume_after_kill_9_mid_cell_runs_its_teardown_first_and_every_cell_is_compared() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let go = dir.join("go");
    for c in ["a", "b", "c"] {
        std::fs::create_dir_all(dir.join(c)).unwrap();
    }
    let file = write(
        dir,
        "resume.toml",
        &format!(
            r#"[matrix]
cell = ["a", "b", "c"]
[template]
name = "{{cell}}"
tags = {{ letter = "{{cell}}" }}
setup = ["mkdir {{target}}/mounted", "if [ {{cell}} = b ]; then while [ ! -e {go} ]; do sleep 0.1; done; fi", "[ {{cell}} != c ] || (echo no such array >&2; false)"]
teardown = ["rmdir {{target}}/mounted"]
target = "{dir}/{{cell}}"
run = {QUICK_RUN}
"#,
            go = go.display(),
            dir = dir.display()
        ),
    );
    let mut child = campaign_cmd(dir, &[file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(60, "cell b builds its setup", || {
        dir.join("b/mounted").exists()
    });
    // The setup's shell is its child; it ends with the campaign (PDEATHSIG).
    let kids = children(child.id());
    child.kill().unwrap();
    let _ = child.wait();
    for k in &kids {
        wait_for(10, "the setup command of the killed campaign ends", || {
            !running(k)
        });
    }
    assert!(dir.join("b/mounted").exists(), "b's teardown never ran");
    std::fs::write(&go, "").unwrap();
    let id = campaign_dir(dir)
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let out = campaign(dir, &["--resume", &id, "--json"]);
    assert_eq!(out.status.code(), Some(1), "c fails: {}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("its teardown runs first"), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{err}", stdout(&out)));
    let status: Vec<&str> = doc["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(status, ["finished", "finished", "failed"], "{doc:#}\n{err}");
    let rows = doc["comparison"].as_array().unwrap();
    for name in ["a", "b"] {
        assert!(rows.iter().any(|r| r["cell"] == name), "{name}: {doc:#}");
    }
    let missing = doc["missing"].as_array().unwrap();
    assert_eq!(missing.len(), 1, "{doc:#}");
    assert_eq!(missing[0]["cell"], "c");
    assert!(
        missing[0]["reason"].as_str().unwrap().contains("setup"),
        "{doc:#}"
    );
    for c in ["a", "b", "c"] {
        assert!(!dir.join(c).join("mounted").exists(), "{c} torn down");
    }
    let log = std::fs::read_to_string(dir.join("campaigns").join(&id).join("b.log")).unwrap();
    assert!(log.contains("# resumed: the teardown"), "{log}");
    // The table says why c has no figures.
    let out = campaign(dir, &["--resume", &id]);
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.contains(" c ") && l.contains("no figures") && l.contains("setup")),
        "{text}"
    );
}

/// The cells of a campaign's runs in the results database, one entry per
/// stored run (`storlab runs --json`).
fn stored_cells(dir: &Path, id: &str) -> Vec<String> {
    let out = cmd()
        .args(["runs", "--json", "--tag", &format!("campaign={id}"), "--db"])
        .arg(dir.join("r.db"))
        .output()
        .unwrap();
    let runs: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    let mut cells: Vec<String> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["tags"]["cell"].as_str().unwrap().to_string())
        .collect();
    cells.sort();
    cells
}

/// Killed (SIGKILL) in cell a's teardown, after its run was stored: the
/// resume runs a's teardown only, not the cell again (it ran the whole
/// cell again, stored a second run with the same tags, and the comparison
/// then showed no figures for any cell). Every cell is compared, each
/// stored once. A run stored twice anyway (by an older storlab) is
/// compared once, the latest, with a note.
#[test]
fn a_kill_9_in_a_teardown_resumes_with_the_teardown_alone_and_each_cell_is_stored_once() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let t = dir.join("t");
    std::fs::create_dir(&t).unwrap();
    let file = write(
        dir,
        "c3.toml",
        &format!(
            r#"[matrix]
v = ["a", "b"]
[template]
name = "{{v}}"
setup = ["touch mark"]
teardown = ["rm -f mark; echo td {{v}} >> tdlog; touch tdmark-{{v}}; while [ ! -e go ]; do sleep 0.1; done"]
target = "{t}"
run = {QUICK_RUN}
"#,
            t = t.display()
        ),
    );
    let mut child = campaign_cmd(dir, &[file.to_str().unwrap()])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The teardown of a writes its marker, then waits for `go`.
    wait_for(120, "cell a's teardown starts", || {
        dir.join("tdmark-a").exists()
    });
    let kids = children(child.id());
    child.kill().unwrap();
    let _ = child.wait();
    for k in &kids {
        wait_for(10, "the teardown of the killed campaign ends", || {
            !running(k)
        });
    }
    let id = campaign_dir(dir)
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(stored_cells(dir, &id), ["a"], "a's run was stored");
    let state =
        std::fs::read_to_string(dir.join("campaigns").join(&id).join("state.json")).unwrap();
    assert!(state.contains("\"teardown\""), "{state}");
    std::fs::write(dir.join("go"), "").unwrap();
    let out = campaign_cmd(dir, &["--resume", &id, "--json"])
        .current_dir(dir)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("only the teardown runs again"), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{err}", stdout(&out)));
    let status: Vec<&str> = doc["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(status, ["finished", "finished"], "{doc:#}\n{err}");
    let rows = doc["comparison"].as_array().unwrap();
    for name in ["a", "b"] {
        assert!(rows.iter().any(|r| r["cell"] == name), "{name}: {doc:#}");
    }
    assert_eq!(doc["missing"].as_array().unwrap().len(), 0, "{doc:#}");
    assert_eq!(stored_cells(dir, &id), ["a", "b"], "no cell ran twice");
    let tdlog = std::fs::read_to_string(dir.join("tdlog")).unwrap();
    assert_eq!(tdlog.lines().collect::<Vec<_>>(), ["td a", "td a", "td b"]);
    assert!(!dir.join("mark").exists(), "torn down");

    // A second run of a stored with the same tags (as an older storlab's
    // resume did): the comparison takes the latest, and says so.
    let extra = cmd()
        .args(["bench", t.to_str().unwrap()])
        .args(["--rw", "randread", "--engine", "null", "--size", "1M"])
        .args(["--runtime", "200ms", "--time-based"])
        .args(["--tag", &format!("campaign={id}"), "--tag", "cell=a"])
        .args(["--tag", "campaign_run=0", "--db"])
        .arg(dir.join("r.db"))
        .output()
        .unwrap();
    ok(&extra);
    let out = campaign_cmd(dir, &["--resume", &id, "--json"])
        .current_dir(dir)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let rows = doc["comparison"].as_array().unwrap();
    for name in ["a", "b"] {
        assert!(rows.iter().any(|r| r["cell"] == name), "{name}: {doc:#}");
    }
    assert_eq!(doc["missing"].as_array().unwrap().len(), 0, "{doc:#}");
    let notes = doc["notes"].as_array().unwrap();
    assert!(
        notes.len() == 1
            && notes[0]
                .as_str()
                .unwrap()
                .contains("cell a run 0: 2 finished runs"),
        "{doc:#}"
    );
}

/// Run words are parsed (storlab's own flag definitions, the profile
/// named) before anything runs: a mistake in the last cell no longer
/// costs the first cell's setup (which may destroy data).
#[test]
fn run_words_are_checked_before_any_setup_runs() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let marker = dir.join("setup-ran");
    for (bad, needle) in [
        (
            r#"["bench", "--rw", "randread", "--no-such-flag"]"#,
            "--no-such-flag",
        ),
        (r#"["bench", "--bs", "4q"]"#, "4q"),
        (
            r#"["sweep", "--profile", "no-such-profile"]"#,
            "no-such-profile",
        ),
        // The campaign passes --db itself.
        (r#"["bench", "--db", "other.db"]"#, "--db"),
    ] {
        let file = write(
            dir,
            "c.toml",
            &format!(
                r#"[[cell]]
name = "first"
setup = ["touch {marker}"]
target = "{dir}"
run = {QUICK_RUN}

[[cell]]
name = "second"
target = "{dir}"
run = [{bad}]
"#,
                marker = marker.display(),
                dir = dir.display()
            ),
        );
        let out = campaign(dir, &[file.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains("cell second") && err.contains(needle) && err.contains("nothing was run"),
            "{bad}: {err}"
        );
        assert!(!marker.exists(), "{bad}: a setup ran");
        assert!(
            campaign_dir(dir).is_none(),
            "{bad}: a campaign directory was made"
        );
    }
}

/// Matrix values are data: a value with shell syntax is one quoted word in
/// setup commands (it was spliced raw into `sh -c` and ran), and is in the
/// environment as STORLAB_MATRIX_<KEY>. A scalar matrix value, a control
/// character in a value and a NUL in a target are refused (exit 2) with
/// file and line.
#[test]
fn matrix_values_are_quoted_and_in_the_environment_and_bad_ones_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let t = dir.join("t");
    std::fs::create_dir(&t).unwrap();
    let value = "x; touch owned; $(touch owned2)";
    let file = write(
        dir,
        "q.toml",
        &format!(
            r#"[matrix]
opt = ["{value}"]
[template]
name = "one"
setup = ["cd {{target}} && echo {{opt}} > by-placeholder", "cd {{target}} && printf '%s' \"$STORLAB_MATRIX_OPT\" > by-env"]
target = "{t}"
run = {QUICK_RUN}
"#,
            t = t.display()
        ),
    );
    let out = campaign(dir, &[file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !t.join("owned").exists() && !t.join("owned2").exists(),
        "the value ran as shell code"
    );
    let read = |f: &str| std::fs::read_to_string(t.join(f)).unwrap();
    assert_eq!(read("by-placeholder").trim_end(), value);
    assert_eq!(read("by-env"), value);
    // Refused, with file and line, before anything runs.
    for (text, line, needle) in [
        (
            "[matrix]\nfs = \"ext4\"\n[template]\ntarget = \"/tmp\"\nrun = [[\"bench\"]]\n",
            2,
            "not a list",
        ),
        (
            "[matrix]\nfs = [\"ext4\", \"a\\nb\"]\n[template]\ntarget = \"/tmp\"\nrun = [[\"bench\"]]\n",
            2,
            "control character",
        ),
        (
            "[[cell]]\nrun = [[\"bench\"]]\ntarget = \"/tmp/a\\u0000b\"\n",
            3,
            "U+0000",
        ),
    ] {
        let f = write(dir, "bad.toml", text);
        let out = campaign(dir, &[f.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{text}: {err}");
        assert!(
            err.contains(&format!("{}:{line}", f.display())) && err.contains(needle),
            "{text}: {err}"
        );
    }
}

/// A value with shell syntax put inside the template's own quotes ran as
/// shell code: `"dq {v}"` and `'sq {v}'` around one quoted word reopened
/// the quotes. Now a placeholder in a shell command is a reference to its
/// variable, never the value's text: the values arrive intact (one with a
/// quote too) and nothing they hold runs; a placeholder inside single
/// quotes is refused at load time with file:line (exit 2, nothing run).
#[test]
fn matrix_values_inside_the_templates_quotes_never_run_as_shell_code() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let t = dir.join("t");
    std::fs::create_dir(&t).unwrap();
    let values = [
        ";touch${IFS}PWN1;",
        "$(touch${IFS}PWN2)",
        "`touch${IFS}PWN3`",
        "x'y",
        "a\"b\\",
    ];
    // TOML basic strings escape `\` and `"` as Rust's Debug does.
    let list: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    let matrix = format!("[matrix]\nv = [{}]\n", list.join(", "));
    let quick = format!("target = \"{}\"\nrun = {QUICK_RUN}\n", t.display());
    let file = write(
        dir,
        "c1.toml",
        &format!(
            concat!(
                "{matrix}[template]\nname = \"c{{v}}\"\n",
                r#"setup = ["printf '%s\\n' \"dq {{v}}\" >> log", "printf '%s\\n' {{v}} >> log", "printf '%s\\n' \"$STORLAB_MATRIX_V\" >> env"]"#,
                "\n{quick}"
            ),
            matrix = matrix,
            quick = quick
        ),
    );
    let dry = campaign(dir, &[file.to_str().unwrap(), "--dry-run"]);
    let plan = stdout(&dry);
    assert!(
        plan.contains(r#"setup:    printf '%s\n' "dq ${STORLAB_MATRIX_V}" >> log"#)
            && plan.contains(r#"setup:    printf '%s\n' "${STORLAB_MATRIX_V}" >> log"#)
            && plan.contains("env:      STORLAB_MATRIX_V="),
        "the dry run shows the commands as they run:\n{plan}{}",
        stderr(&dry)
    );
    let out = campaign_cmd(dir, &[file.to_str().unwrap()])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for p in ["PWN1", "PWN2", "PWN3"] {
        assert!(
            !dir.join(p).exists(),
            "a matrix value ran as shell code: {p}"
        );
    }
    let log = std::fs::read_to_string(dir.join("log")).unwrap();
    let want: Vec<String> = values
        .iter()
        .flat_map(|v| [format!("dq {v}"), v.to_string()])
        .collect();
    assert_eq!(log.lines().collect::<Vec<_>>(), want, "{log}");
    let env = std::fs::read_to_string(dir.join("env")).unwrap();
    assert_eq!(env.lines().collect::<Vec<_>>(), values, "{env}");
    // Inside single quotes the shell expands nothing: refused, with the
    // file, the line and the fix, before anything runs.
    let file = write(
        dir,
        "c2.toml",
        &format!(
            "{matrix}[template]\nname = \"c{{v}}\"\nsetup = [\"touch ran\"]\nteardown = [\n  \"echo 'sq {{v}}' >> log\"]\n{quick}"
        ),
    );
    let out = campaign_cmd(dir, &[file.to_str().unwrap()])
        .current_dir(dir)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{}:7:", file.display()))
            && err.contains("single quotes")
            && err.contains("use double quotes"),
        "{err}"
    );
    assert!(!dir.join("ran").exists(), "a setup ran");
    for p in ["PWN1", "PWN2", "PWN3"] {
        assert!(!dir.join(p).exists(), "{p}");
    }
}

/// A teardown that hangs is stopped at `teardown_timeout` with everything
/// it started (its process group); the campaign reports the hang, marks
/// the cell and exits 2 (before, it waited for ever).
#[test]
fn a_hanging_teardown_is_stopped_at_its_timeout_and_the_campaign_exits_2() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let pid_file = dir.join("bg.pid");
    let file = write(
        dir,
        "hang.toml",
        &format!(
            r#"teardown_timeout = 2
[[cell]]
name = "stuck"
teardown = ["sleep 1000 & echo $! > {pid}; sleep 1000"]
target = "{dir}"
run = {QUICK_RUN}

[[cell]]
name = "after"
target = "{dir}"
run = {QUICK_RUN}
"#,
            pid = pid_file.display(),
            dir = dir.display()
        ),
    );
    let mut child = campaign_cmd(dir, &[file.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the campaign still waits for its teardown after 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("stuck") && err.contains("teardown") && err.contains("2 s"),
        "{err}"
    );
    let bg = std::fs::read_to_string(&pid_file).unwrap();
    wait_for(10, "the teardown's background sleep ends", || {
        !running(bg.trim())
    });
    // The plan shows the bound.
    let plan = cmd()
        .arg("campaign")
        .arg(&file)
        .args(["--dry-run", "--json"])
        .output()
        .unwrap();
    let plan: serde_json::Value = serde_json::from_str(&ok(&plan)).unwrap();
    assert_eq!(plan["teardown_timeout_s"], 2, "{plan:#}");
    let state = std::fs::read_to_string(campaign_dir(dir).unwrap().join("state.json")).unwrap();
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert_eq!(state["cells"]["stuck"]["status"], "failed", "{state:#}");
    assert!(state["cells"].get("after").is_none(), "{state:#}");
}

/// SIGTERM to the campaign while a setup command runs: the command's whole
/// process group ends (a `sleep` it started in the background lived on
/// before); SIGKILL to the campaign while a storlab bench runs: the bench
/// ends (PDEATHSIG).
#[test]
fn stopping_a_campaign_ends_its_setups_process_group_and_kill_9_ends_its_bench() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let pid_file = dir.join("bg.pid");
    let file = write(
        dir,
        "stop.toml",
        &format!(
            r#"[[cell]]
name = "one"
setup = ["sleep 1000 & echo $! > {pid}; sleep 1000"]
target = "{dir}"
run = {QUICK_RUN}
"#,
            pid = pid_file.display(),
            dir = dir.display()
        ),
    );
    let mut child = campaign_cmd(dir, &[file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(30, "the setup starts its sleep", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|p| !p.trim().is_empty())
    });
    let bg = std::fs::read_to_string(&pid_file).unwrap();
    run_tool("kill", &["-TERM", &child.id().to_string()]).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    wait_for(10, "the setup's background sleep ends", || {
        !running(bg.trim())
    });
    // SIGKILL while a long bench runs.
    let file = write(
        dir,
        "long.toml",
        &format!(
            r#"[[cell]]
name = "long"
target = "{dir}"
run = [["bench", "--rw", "randread", "--engine", "null", "--size", "1M", "--runtime", "120s", "--time-based"]]
"#,
            dir = dir.display()
        ),
    );
    let mut child = campaign_cmd(dir, &[file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut kids = Vec::new();
    wait_for(30, "the campaign starts its bench", || {
        kids = children(child.id());
        !kids.is_empty()
    });
    child.kill().unwrap();
    let _ = child.wait();
    for k in &kids {
        wait_for(15, "the bench of the killed campaign ends", || !running(k));
    }
}
