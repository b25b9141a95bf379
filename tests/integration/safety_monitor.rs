//! `storlab monitor` keeps what it samples whatever happens to standard
//! output, refuses damaged replay files with file:line, and flags counters
//! that cannot be rates (docs/SAFETY.md §4, docs/monitor.md).

use crate::util::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A shell command line with the test environment of [`cmd`] (private
/// database and config), `$STORLAB` naming the binary.
fn bash(script: &str) -> Command {
    let base = cmd();
    let mut c = Command::new("bash");
    for (k, v) in base.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    c.env("STORLAB", storlab_bin())
        .args(["-c", script])
        .stdin(Stdio::null());
    c
}

/// The intervals `--replay file` gives, as JSON lines.
fn replayed(file: &Path) -> Vec<Value> {
    let o = cmd()
        .args(["monitor", "--output-format", "jsonl", "--replay"])
        .arg(file)
        .output()
        .unwrap();
    ok(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
/// `storlab monitor --record F 0.2 5 | head -1`: the display ends with the
/// pipe, the recording does not: F holds all five intervals, replayable.
#[test]
fn record_file_keeps_every_sample_when_stdout_is_closed() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("F");
    let t = Instant::now();
    let o = bash(r#"set -o pipefail; "$STORLAB" monitor --record "$1" 0.2 5 | head -1"#)
        .arg("bash")
        .arg(&f)
        .output()
        .unwrap();
    // A closed pipe is not an error, and the monitor ran to its count.
    assert!(o.status.success(), "{:?} {}", o.status, stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 1, "{}", stdout(&o));
    assert!(
        t.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t.elapsed()
    );
    assert!(
        stderr(&o).contains("standard output was closed") && stderr(&o).contains("--count"),
        "{}",
        stderr(&o)
    );
    let text = std::fs::read_to_string(&f).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with('@')).count(), 6);
    let v = replayed(&f);
    assert_eq!(v.len(), 5, "{v:?}");
    assert!(
        v.iter()
            .all(|i| !i["devices"].as_array().unwrap().is_empty())
    );
}

/// Standard output on /dev/full: exit 2 naming standard output (the
/// display the user asked for failed), but the record is complete.
#[test]
fn record_file_is_complete_when_stdout_is_full() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("F");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = cmd()
        .args(["monitor", "--record"])
        .arg(&f)
        .args(["0.2", "5"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("cannot write to standard output") && err.contains("No space left"),
        "{err}"
    );
    assert!(err.contains("every sample is in the record file"), "{err}");
    assert_eq!(replayed(&f).len(), 5);
}

/// Bare `--record` (the results database) also survives `| head`: the
/// run is saved with every interval.
#[test]
fn record_to_the_database_survives_a_closed_stdout() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("m.db");
    let o = bash(r#"set -o pipefail; "$STORLAB" monitor --interval 200ms --count 3 --record --db "$1" | head -1"#)
        .arg("bash")
        .arg(&db)
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?} {}", o.status, stderr(&o));
    assert!(stderr(&o).contains("saved as run 1"), "{}", stderr(&o));
    let o = storlab(&["show", "1", "--json", "--db", &db.to_string_lossy()]);
    let v: Value = serde_json::from_str(&ok(&o)).unwrap();
    let totals = v[0]["report"]["monitor"]["totals"].as_array().unwrap();
    assert_eq!(totals.len(), 3, "{v}");
}

/// The record is written as it is taken: after SIGTERM, and even after
/// SIGKILL (no chance to save anything at the end), the file is a valid
/// replay file with the samples so far.
#[test]
fn record_file_is_valid_after_sigterm_and_sigkill() {
    for sig in [libc::SIGTERM, libc::SIGKILL] {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("F");
        let child = cmd()
            .args(["monitor", "--interval", "100ms", "--record"])
            .arg(&f)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Until 4 snapshots (3 intervals) are in the file, however loaded
        // the machine is.
        let t = Instant::now();
        while std::fs::read_to_string(&f)
            .map(|s| s.lines().filter(|l| l.starts_with('@')).count())
            .unwrap_or(0)
            < 4
        {
            assert!(t.elapsed() < Duration::from_secs(20), "no samples recorded");
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: kill with the pid of our own child and a valid signal number.
        unsafe { libc::kill(child.id() as i32, sig) };
        let out = wait_at_most(child, Duration::from_secs(10));
        if sig == libc::SIGTERM {
            assert!(out.status.success(), "{}", stderr(&out));
        }
        let n = replayed(&f).len();
        assert!(n >= 3, "signal {sig}: {n} intervals");
    }
}

/// `--record` never writes over a file, and a value that is surely a
/// device or a number is refused instead of becoming the file's name.
#[test]
fn record_file_refuses_existing_files_and_numbers() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("mine.txt");
    std::fs::write(&f, "precious\n").unwrap();
    let o = cmd()
        .args(["monitor", "--count", "1", "--record"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("exists"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "precious\n");
    // An empty file (mktemp) is fine.
    let e = d.path().join("empty.txt");
    std::fs::write(&e, "").unwrap();
    let o = cmd()
        .args(["monitor", "--interval", "100ms", "--count", "1", "--record"])
        .arg(&e)
        .output()
        .unwrap();
    ok(&o);
    assert_eq!(replayed(&e).len(), 1);
    let o = cmd()
        .current_dir(d.path())
        .args(["monitor", "--record", "1", "2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a file name"), "{}", stderr(&o));
    assert!(!d.path().join("1").exists());
}

const GOOD: &str = "@ 100\n 8 0 sda 1000 10 80000 500 2000 100 160000 4000 0 1000 4500\n\
                    @ 101\n 8 0 sda 1400 30 160000 1300 2600 160 208000 5800 3 2500 9100\n";

/// Each damaged replay file the fuzzer found accepted is refused: exit 2,
/// `FILE:LINE:` and what is wrong.
#[test]
fn damaged_replay_files_are_refused_with_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let cases: [(&str, String, usize, &str); 5] = [
        (
            "extra fields",
            GOOD.replace("5800 3 2500 9100", "5800 3 2500 9100 1 2 3 4 5 6 7"),
            4,
            "21 fields",
        ),
        (
            "garbage after @",
            GOOD.replace("@ 101", "@ 101 garbage"),
            3,
            "'garbage'",
        ),
        (
            "a jump to 2^32-1",
            GOOD.replace("1400 30 ", "1400 4294967295 "),
            4,
            "2^32-1",
        ),
        (
            "a device twice",
            format!("{GOOD} 8 0 sda 9000000000 0 0 0 0 0 0 0 0 0 0\n"),
            5,
            "twice",
        ),
        (
            "beyond 100 GB/s",
            GOOD.replace("1400 30 160000", "1400 30 987654321000"),
            4,
            "GB/s",
        ),
    ];
    for (what, text, line, reason) in cases {
        let f = d.path().join("r.txt");
        std::fs::write(&f, &text).unwrap();
        let rec = d.path().join("rec.txt");
        let o = cmd()
            .args(["monitor", "--replay"])
            .arg(&f)
            .arg("--record")
            .arg(&rec)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(&o));
        // Refused before anything was created.
        assert!(!rec.exists(), "{what}: the record file was created");
        let err = stderr(&o);
        assert!(
            err.contains(&format!("{}:{line}:", f.display())) && err.contains(reason),
            "{what}: {err}"
        );
        assert!(!err.contains("panicked"), "{what}: {err}");
        assert!(o.stdout.is_empty(), "{what}: {}", stdout(&o));
    }
}

/// A counter that goes backwards (a wrap, a re-created device) shows the
/// interval as `reset` in every format, never as a huge rate; the next
/// interval is measured again.
#[test]
fn a_counter_going_backwards_is_flagged_reset_in_every_format() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("r.txt");
    std::fs::write(
        &f,
        "@ 100\n 8 0 sda 1000 10 80000 500 2000 100 160000 4000 0 1000 4500\n\
         @ 101\n 8 0 sda 5 0 40 1 0 0 0 0 0 1 1\n\
         @ 102\n 8 0 sda 105 0 840 2 0 0 0 0 0 2 2\n",
    )
    .unwrap();
    let v = replayed(&f);
    assert_eq!(v.len(), 2);
    let first = &v[0]["devices"][0];
    assert_eq!(first["flag"], "reset", "{first}");
    assert_eq!(first["r_per_s"], 0.0);
    assert!(
        first["flag_detail"]
            .as_str()
            .unwrap()
            .contains("went backwards"),
        "{first}"
    );
    let second = &v[1]["devices"][0];
    assert!(second.get("flag").is_none(), "{second}");
    assert_eq!(second["r_per_s"], 100.0);

    let run = |format: &str| {
        let o = cmd()
            .args(["monitor", "--output-format", format, "--replay"])
            .arg(&f)
            .output()
            .unwrap();
        ok(&o)
    };
    let csv = run("csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let flag = header.iter().position(|c| *c == "flag").unwrap();
    let r = header.iter().position(|c| *c == "r_per_s").unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert_eq!((rows[0][flag], rows[0][r]), ("reset", ""), "{csv}");
    assert_eq!((rows[1][flag], rows[1][r]), ("", "100.00"), "{csv}");
    let json: Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(json["samples"][0]["flag"], "reset", "{json}");
    let table = run("table");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("sda") && l.contains("reset (rd_ios went backwards")),
        "{table}"
    );
    assert!(!table.contains("e9"), "{table}");
}

/// With nothing else taking the samples, a closed standard output still
/// ends the monitor at once (no --count: it would otherwise run forever).
#[test]
fn without_a_record_a_closed_stdout_ends_the_monitor() {
    let t = Instant::now();
    let o = bash(r#"set -o pipefail; "$STORLAB" monitor --interval 100ms | head -1"#)
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?} {}", o.status, stderr(&o));
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

/// A recording cut off in the middle of writing a snapshot (SIGKILL or a
/// power loss during a large write) still replays: the unfinished last
/// snapshot is left out, with a note naming its line.
#[test]
fn a_recording_cut_mid_snapshot_replays_what_came_before() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("r.txt");
    std::fs::write(&f, format!("{GOOD}@ 102\n 8 0 sda 1500 30 16")).unwrap();
    let o = cmd()
        .args(["monitor", "--output-format", "csv", "--replay"])
        .arg(&f)
        .output()
        .unwrap();
    let out = ok(&o);
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(
        stderr(&o).contains(&format!(
            "{}:5: the last snapshot is incomplete",
            f.display()
        )),
        "{}",
        stderr(&o)
    );
}

/// A replay from a FIFO with no writer waits in open(2); SIGTERM and
/// SIGINT must still end it (the signal handlers used to be in place
/// already, turning both into a flag nobody read: only SIGKILL ended it).
#[test]
fn a_replay_fifo_without_a_writer_still_stops_on_sigterm_and_sigint() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("replay.fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success(),
        "mkfifo"
    );
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let mut c = cmd();
        c.args(["monitor", "--replay"])
            .arg(&fifo)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // A shell starts a background job (`cargo test ... &` in a script)
        // with SIGINT ignored, and an ignored disposition survives exec: the
        // child must start with the default one, as from a terminal, or
        // SIGINT is ignored before storlab's handlers exist and the test
        // measures the shell, not storlab.
        // SAFETY: signal(2) is async-signal-safe; nothing else runs between
        // fork and exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut c, || {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGTERM, libc::SIG_DFL);
                Ok(())
            });
        }
        let child = c.spawn().unwrap();
        std::thread::sleep(Duration::from_millis(500));
        // SAFETY: kill(2) on our own child's pid; no memory involved.
        assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
        let t = Instant::now();
        let out = wait_at_most(child, Duration::from_secs(10));
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "signal {sig}: took {:?}",
            t.elapsed()
        );
        assert_ne!(out.status.code(), Some(0), "signal {sig}");
    }
}

/// The config file is read by the input rules: a FIFO there is named and
/// refused at once (it blocked every command without a word).
#[test]
fn a_fifo_as_the_config_file_is_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    let conf = d.path().join("storlab");
    std::fs::create_dir_all(&conf).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(conf.join("config.toml"))
            .status()
            .unwrap()
            .success()
    );
    let child = cmd()
        .env("XDG_CONFIG_HOME", d.path())
        .env_remove("STORLAB_DB")
        .arg("runs")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_at_most(child, Duration::from_secs(10));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("config.toml") && err.contains("FIFO"), "{err}");
}

/// `--record FILE` on a full file system: nothing can be recorded, so the
/// run stops at once saying so, and the empty file it made is removed (it
/// was left behind, with a message claiming earlier samples were in it).
#[test]
fn a_record_file_on_a_full_file_system_is_not_left_behind_empty() {
    let name = "a_record_file_on_a_full_file_system_is_not_left_behind_empty";
    if !is_root() {
        skip(name, "needs root (mounts a small tmpfs)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let mnt = d.path().join("full");
    // Unmounted on every path out of the test.
    let mut guard = loopdev::Stack::new();
    guard
        .mount(
            "storlab-test-full",
            &mnt,
            &["-t", "tmpfs", "-o", "size=64k"],
        )
        .expect("mount tmpfs");
    // Fill it: a write that fails with ENOSPC leaves it full.
    let _ = std::fs::write(mnt.join("filler"), vec![7u8; 1 << 20]);
    let rec = mnt.join("rec.txt");
    let replay = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/monitor/loopstack/replay.txt");
    let child = cmd()
        .args(["monitor", "--output-format", "none", "--replay"])
        .arg(&replay)
        .arg("--record")
        .arg(&rec)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_at_most(child, Duration::from_secs(30));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("nothing was recorded"), "{err}");
    assert!(!rec.exists(), "an empty record file was left behind");
}
