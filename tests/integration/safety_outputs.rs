//! Result files and messages about them (docs/SAFETY.md §2): a result file
//! replaces only storlab's own earlier output of the same kind; an SQLite
//! database never, even with --force; FIFOs, read-only mounts and
//! non-regular input files are refused before anything runs; stdout errors
//! name stdout; user text never reaches the terminal as escape sequences;
//! duplicate phase names are refused.

use crate::util::*;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

fn run(dir: &Path, args: &[&str]) -> Output {
    in_dir(dir).args(args).output().unwrap()
}

/// Import one fio result into `db` (makes an SQLite results database).
fn import_into(dir: &Path, db: &Path) {
    ok(&in_dir(dir)
        .env("STORLAB_DB", db)
        .arg("import")
        .arg(store_fixture("fio-3.33-randread.json"))
        .output()
        .unwrap());
}

fn run_count(db: &Path) -> i64 {
    if !db.exists() {
        return 0;
    }
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap_or(0)
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string that outlives the call; mkfifo only reads it.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// A campaign file of one cell (null engine, 1 MiB) in `dir`.
fn campaign_file(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("cell")).unwrap();
    let file = dir.join("camp.toml");
    std::fs::write(
        &file,
        format!(
            "[matrix]\ncell = [\"a\"]\n[template]\nname = \"{{cell}}\"\ntarget = \"{}/cell\"\n\
             run = [[\"bench\", \"--rw\", \"write\", \"--engine\", \"null\", \"--size\", \"1M\"]]\n",
            dir.display()
        ),
    )
    .unwrap();
    file
}

/// Every command that writes a result file, writing to `out`, with the
/// extra arguments `more` (`--force`); `check` is called after each.
/// Each campaign gets a directory of its own.
fn each_writer(dir: &Path, out: &str, more: &[&str], mut check: impl FnMut(&str, Output)) {
    let camp = campaign_file(dir);
    let mut all: Vec<Vec<String>> = vec![
        vec!["report", "--all", "-o", out],
        vec!["export", "--all", "-o", out],
        vec![
            "bench",
            "t.dat",
            "--rw=write",
            "--size=1M",
            "--engine=null",
            "-q",
            "--json-out",
            out,
        ],
        vec![
            "sweep",
            "s.dat",
            "--vary",
            "bs=4k,8k",
            "--rw=write",
            "--size=1M",
            "--engine=null",
            "-q",
            "--json-out",
            out,
        ],
    ]
    .into_iter()
    .map(|v| v.into_iter().map(String::from).collect())
    .collect();
    let n = std::fs::read_dir(dir).unwrap().count();
    all.push(vec![
        "campaign".into(),
        camp.display().to_string(),
        "--yes".into(),
        "--dir".into(),
        dir.join(format!("campaigns-{n}")).display().to_string(),
        "--report".into(),
        out.into(),
    ]);
    for mut args in all {
        args.extend(more.iter().map(|s| s.to_string()));
        let o = in_dir(dir).args(&args).output().unwrap();
        check(&args.join(" "), o);
    }
}

#[test]
fn an_sqlite_database_is_never_overwritten_even_with_force() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    import_into(dir, &dir.join("results.db"));
    // Another results database (the case that lost 16 runs).
    let site = dir.join("site.db");
    import_into(dir, &site);
    let before = std::fs::read(&site).unwrap();
    assert!(before.starts_with(b"SQLite format 3\0"));
    for force in [&[][..], &["--force"][..]] {
        each_writer(dir, "site.db", force, |what, out| {
            assert_eq!(out.status.code(), Some(2), "{what}: {}", stderr(&out));
            assert!(
                stderr(&out).contains("SQLite database"),
                "{what}: {}",
                stderr(&out)
            );
            assert_eq!(std::fs::read(&site).unwrap(), before, "{what}: changed");
        });
    }
    assert_eq!(run_count(&site), 1);
    // Refused before anything ran: no run of bench, sweep or campaign saved.
    assert_eq!(run_count(&dir.join("results.db")), 1);
}

#[test]
fn files_that_only_mention_storlab_need_force() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    import_into(dir, &dir.join("results.db"));
    let victims: [(&str, &str); 3] = [
        (
            "run.sh",
            "#!/bin/sh\n# storlab results\nstorlab bench /mnt --json-out r.json\n",
        ),
        (
            "job.toml",
            "# storlab job file\n[global]\nrw = \"read\"\n[[phase]]\nname = \"storlab\"\n",
        ),
        (
            "other.json",
            concat!(
                r#"{"tool": {"name": "fio", "version": "3.33"}, "note": "compared with storlab", "#,
                r#""command_line": [], "phases": []}"#,
                "\n"
            ),
        ),
    ];
    for (name, text) in victims {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        each_writer(dir, name, &[], |what, out| {
            assert_eq!(out.status.code(), Some(2), "{what}: {}", stderr(&out));
            assert!(stderr(&out).contains("--force"), "{what}: {}", stderr(&out));
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{what}");
        });
        // With --force it is the user's call, for every writer.
        each_writer(dir, name, &["--force"], |what, out| {
            ok(&out);
            assert_ne!(std::fs::read_to_string(&path).unwrap(), text, "{what}");
            std::fs::write(&path, text).unwrap();
        });
    }
}

#[test]
fn own_output_is_replaced_and_another_kind_needs_force() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    import_into(dir, &dir.join("results.db"));
    // Each writer twice to its own file: the second replaces the first.
    let same: Vec<Vec<&str>> = vec![
        vec!["report", "--all", "-o", "r.html"],
        vec!["report", "--all", "--output-format", "svg", "-o", "c.svg"],
        vec!["export", "--all", "-o", "e.json"],
        vec!["export", "--all", "--output-format", "csv", "-o", "e.csv"],
        vec!["export", "--all", "--output-format", "md", "-o", "e.md"],
        vec![
            "bench",
            "t.dat",
            "--rw=write",
            "--size=1M",
            "--engine=null",
            "-q",
            "--json-out",
            "b.json",
        ],
        vec![
            "bench",
            "t.dat",
            "--rw=write",
            "--size=1M",
            "--engine=null",
            "-q",
            "--repeat",
            "2",
            "--json-out",
            "b.json",
        ],
        vec![
            "sweep",
            "s.dat",
            "--vary",
            "bs=4k,8k",
            "--rw=write",
            "--size=1M",
            "--engine=null",
            "-q",
            "--json-out",
            "s.json",
        ],
    ];
    for args in &same {
        for round in 0..2 {
            let out = run(dir, args);
            assert!(
                out.status.success(),
                "{args:?} round {round}: {}",
                stderr(&out)
            );
        }
    }
    // PNG charts carry their mark too (when fonts exist to draw one).
    let png = ["report", "--all", "--output-format", "png", "-o", "c.png"];
    let first = run(dir, &png);
    if stderr(&first).contains("no fonts") {
        skip(
            "own_output_is_replaced_and_another_kind_needs_force",
            "PNG part: no system fonts (apt-get install fonts-dejavu-core)",
        );
    } else {
        ok(&first);
        ok(&run(dir, &png));
    }
    // A storlab file of another kind is not this command's: --force.
    let crossed: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "bench",
                "t.dat",
                "--rw=write",
                "--size=1M",
                "--engine=null",
                "-q",
                "--json-out",
            ],
            "r.html",
        ),
        (
            vec![
                "sweep",
                "s.dat",
                "--vary",
                "bs=4k,8k",
                "--rw=write",
                "--size=1M",
                "--engine=null",
                "-q",
                "--json-out",
            ],
            "b.json",
        ),
        (vec!["export", "--all", "-o"], "b.json"),
        (
            vec!["export", "--all", "--output-format", "md", "-o"],
            "e.csv",
        ),
        // (-o c.svg alone writes an SVG chart now: the HTML report is asked
        // for by name.)
        (
            vec!["report", "--all", "--output-format", "html", "-o"],
            "c.svg",
        ),
        (
            vec!["report", "--all", "--output-format", "svg", "-o"],
            "r.html",
        ),
    ];
    for (args, victim) in crossed {
        let before = std::fs::read(dir.join(victim)).unwrap();
        let out = in_dir(dir).args(&args).arg(victim).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?} {victim}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("is storlab's") && stderr(&out).contains("--force"),
            "{args:?} {victim}: {}",
            stderr(&out)
        );
        assert_eq!(std::fs::read(dir.join(victim)).unwrap(), before);
        ok(&in_dir(dir)
            .args(&args)
            .arg(victim)
            .arg("--force")
            .output()
            .unwrap());
    }
    // An empty file may be written.
    std::fs::write(dir.join("empty.json"), "").unwrap();
    ok(&run(dir, &["export", "--all", "-o", "empty.json"]));
}

#[test]
fn a_fifo_as_json_out_is_refused_before_the_run() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let fifo = dir.join("out.fifo");
    mkfifo(&fifo);
    let child = in_dir(dir)
        .args([
            "bench",
            "t.dat",
            "--rw=write",
            "--size=1M",
            "--engine=null",
            "-q",
            "--json-out",
            "out.fifo",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_named(child, Duration::from_secs(20), "--json-out FIFO");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("FIFO"), "{}", stderr(&out));
    assert_eq!(run_count(&dir.join("results.db")), 0, "nothing ran");
}

#[test]
fn json_out_on_a_read_only_mount_is_refused_before_the_run() {
    let test = "json_out_on_a_read_only_mount_is_refused_before_the_run";
    let Some(fs) = Tmpfs::new(test, "1m") else {
        return;
    };
    std::fs::write(fs.path().join("old.json"), "").unwrap();
    assert!(fs.remount_read_only(), "remount read-only");
    let work = tempfile::tempdir().unwrap();
    for name in ["new.json", "old.json"] {
        let out = in_dir(work.path())
            .args([
                "bench",
                "t.dat",
                "--rw=write",
                "--size=1M",
                "--engine=null",
                "-q",
                "--json-out",
            ])
            .arg(fs.path().join(name))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("Read-only file system"),
            "{name}: {}",
            stderr(&out)
        );
        assert_eq!(
            run_count(&work.path().join("results.db")),
            0,
            "{name}: refused before the run"
        );
    }
}

#[test]
fn a_fallback_file_is_never_left_empty() {
    let test = "a_fallback_file_is_never_left_empty";
    let Some(fs) = Tmpfs::new(test, "1m") else {
        return;
    };
    // The working directory's file system is full: the fallback file
    // cannot be written there and goes to the temporary directory.
    {
        use std::io::Write;
        let mut hog = std::fs::File::create(fs.path().join("hog")).unwrap();
        let block = vec![0x5au8; 4096];
        while hog.write_all(&block).is_ok() {}
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = cmd()
        .current_dir(fs.path())
        .env("TMPDIR", tmp.path())
        .env("STORLAB_DB", tmp.path().join("unused.db"))
        .args(["bench"])
        .arg(tmp.path().join("t.dat"))
        .args([
            "--rw=write",
            "--size=4k",
            "--engine=null",
            "--no-save",
            "-q",
            "--json-out",
            "r.json",
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(fs.path().join("hog"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let unsaved = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().contains("storlab-unsaved-"))
            .collect()
    };
    assert_eq!(
        unsaved(fs.path()),
        Vec::<PathBuf>::new(),
        "{}",
        stderr(&out)
    );
    assert!(
        !fs.path().join("r.json").exists(),
        "no empty --json-out left"
    );
    let kept = unsaved(tmp.path());
    assert_eq!(kept.len(), 1, "{}", stderr(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&kept[0]).unwrap()).unwrap();
    assert_eq!(v["phases"].as_array().unwrap().len(), 1);
    assert!(stderr(&out).contains(&kept[0].display().to_string()));
}

#[test]
fn stdout_errors_name_stdout_and_a_closed_pipe_is_quiet() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    import_into(dir, &dir.join("results.db"));
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = in_dir(dir)
        .args(["export", "--all"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot write to standard output: No space left on device"),
        "{}",
        stderr(&out)
    );
    // A reader that goes away is not an error (storlab ... | head).
    let mut child = in_dir(dir)
        .args(["export", "--all"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = wait_named(child, Duration::from_secs(20), "closed pipe");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("error"), "{}", stderr(&out));
}

#[test]
fn fifo_input_files_are_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let fifo = dir.join("in.fifo");
    mkfifo(&fifo);
    let cases: [&[&str]; 6] = [
        &["bench", "t.dat", "--engine=null", "--job", "in.fifo"],
        &[
            "sweep",
            "s.dat",
            "--engine=null",
            "--job",
            "in.fifo",
            "--vary",
            "bs=4k,8k",
        ],
        &["import", "in.fifo"],
        &["campaign", "in.fifo", "--yes"],
        &["sim", "in.fifo"],
        &["bench", "t.dat", "--engine=null", "--fio-job", "in.fifo"],
    ];
    for args in cases {
        let child = in_dir(dir)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = wait_named(child, Duration::from_secs(20), &args.join(" "));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("FIFO") && err.contains("not a regular file"),
            "{args:?}: {err}"
        );
    }
    // A directory given as a job file is named as one.
    let out = run(dir, &["bench", "t.dat", "--engine=null", "--job", "."]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("directory"), "{}", stderr(&out));
    assert!(!dir.join("t.dat").exists());
}

#[test]
fn terminal_escapes_in_notes_tags_and_phase_names_are_shown_escaped() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("job.toml"),
        "[global]\nengine = \"null\"\nsize = \"1M\"\n[[phase]]\nname = \"p\\u001b[2J\"\nrw = \"write\"\n",
    )
    .unwrap();
    let out = run(
        dir,
        &[
            "bench",
            "t.dat",
            "--job",
            "job.toml",
            "--note",
            "note\x1b[2J\u{9b}31m\x1b]0;title\x07",
        ],
    );
    let text = ok(&out);
    let raw = |o: &Output| {
        o.stdout
            .iter()
            .chain(&o.stderr)
            .any(|&b| b == 0x1b || b == 0x07)
            || String::from_utf8_lossy(&o.stdout).contains('\u{9b}')
    };
    assert!(!raw(&out), "bench table: {text}");
    assert!(text.contains("p\\x1b[2J"), "{text}");
    for args in [
        &["runs"][..],
        &["show", "latest"][..],
        &["compare", "latest", "--baseline", "latest"][..],
        &["export", "--all", "--output-format", "md"][..],
    ] {
        let out = run(dir, args);
        let text = ok(&out);
        assert!(!raw(&out), "{args:?}: {text}");
        assert!(text.contains("\\x1b[2J"), "{args:?}: {text}");
    }
    // JSON keeps the text exactly (serde escapes it).
    let out = run(dir, &["show", "latest", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    assert!(!out.stdout.contains(&0x1b));
    assert_eq!(v[0]["note"], "note\x1b[2J\u{9b}31m\x1b]0;title\x07", "{v}");
}

#[test]
fn duplicate_phase_names_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("job.toml"),
        "[global]\nengine = \"null\"\nsize = \"1M\"\n\n[[phase]]\nname = \"w\"\nrw = \"write\"\n\n\
         [[phase]]\nname = \"w\"\nrw = \"read\"\n",
    )
    .unwrap();
    let out = run(dir, &["bench", "t.dat", "--job", "job.toml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("job.toml:9:1") && err.contains("\"w\"") && err.contains("job.toml:5:1"),
        "{err}"
    );
    assert!(!dir.join("t.dat").exists(), "nothing created");
    assert!(!dir.join("results.db").exists(), "nothing created");
}

/// A run takes a while, and what sits at `--json-out`'s path can change
/// under it: the rules are checked again when the file is written, and
/// a rename places the file, so nothing that appeared at the path during
/// the run is ever written. Three things made to appear mid-run: a hard
/// link to the results database (before: written through, every stored
/// run lost to a corrupt database), a foreign file, and another SQLite
/// database with --force. Each stays byte-identical, the run is still
/// stored, the exit is 2 naming the file.
#[test]
fn what_appears_at_the_output_path_during_the_run_is_never_written() {
    let d = tempfile::tempdir().unwrap();
    let other_db = d.path().join("other.db");
    import_into(d.path(), &other_db);
    let db = d.path().join("results.db");
    let cases: [(&str, &[&str]); 3] = [
        ("link-to-db.json", &[]),
        ("foreign.json", &[]),
        ("sqlite.json", &["--force"]),
    ];
    for (name, more) in cases {
        let out = d.path().join(name);
        let mut c = in_dir(d.path());
        c.args([
            "bench",
            "--engine",
            "null",
            "--rw",
            "read",
            "--size",
            "1M",
            "--runtime",
            "3s",
            "--time-based",
            "w",
            "--json-out",
        ])
        .arg(&out)
        .args(more)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let child = c.spawn().unwrap();
        // Wait until the run is under way (its database exists), then
        // put something at the checked path.
        let t = Instant::now();
        while !db.exists() && t.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(500));
        match name {
            "link-to-db.json" => std::fs::hard_link(&db, &out).unwrap(),
            "foreign.json" => std::fs::write(&out, b"{\"precious\": true}\n").unwrap(),
            _ => {
                std::fs::copy(&other_db, &out).unwrap();
            }
        }
        let before = std::fs::read(&out).unwrap();
        let o = wait_named(child, Duration::from_secs(60), name);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(name),
            "{name}: the message names the file: {err}"
        );
        if name != "link-to-db.json" {
            assert_eq!(std::fs::read(&out).unwrap(), before, "{name} was written");
        }
        let conn = rusqlite::Connection::open(&db).unwrap();
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok", "{name}: the results database is damaged");
    }
    // One run per case, each stored whole.
    assert_eq!(run_count(&db), 3);
    assert_eq!(run_count(&other_db), 1);
    // Nothing half-written left beside the outputs.
    let leftovers: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".storlab-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A FIFO (or directory) given as the results database is named as such,
/// at once, by reading and writing commands (SQLite said "disk I/O error").
#[test]
fn a_fifo_as_the_database_is_named_at_once() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("db.fifo");
    mkfifo(&fifo);
    for args in [
        &["runs"][..],
        &[
            "bench",
            "--engine",
            "null",
            "--size",
            "1M",
            "--runtime",
            "100ms",
            "w",
        ][..],
    ] {
        let child = in_dir(d.path())
            .env("STORLAB_DB", &fifo)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let o = wait_named(child, Duration::from_secs(30), args[0]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("FIFO") && err.contains("db.fifo"),
            "{args:?}: {err}"
        );
    }
    assert!(!d.path().join("w").exists(), "bench made its target first");
}
