//! What `scripts/behaviour-diff.sh` found when it ran the old and the new
//! binary side by side (issue 21: nothing a user sees changes except where
//! a fork was a bug). Each test pins one finding.

use crate::util::{cmd, stderr, stdout};

/// `bench --dry-run` is documented as "with --ior: print how each IOR flag
/// maps to storlab and the job it makes, then stop". With a job file, an
/// fio job file, a profile or a job group instead of --ior it used to be
/// ignored without a word and the job ran for real (the shipped
/// examples/iozone-like.toml wrote 1 GiB and read for 20 s; `--profile seq`
/// wanted 2xRAM). A dry run must never do I/O. Since issue 27 it prints
/// the phases of any of them (exit 0) and still runs nothing.
#[test]
fn bench_dry_run_without_ior_prints_the_phases_and_runs_nothing() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("job.toml");
    std::fs::write(
        &job,
        "[global]\nengine = \"null\"\nsize = \"64k\"\n[[phase]]\nname = \"w\"\nrw = \"write\"\n",
    )
    .unwrap();
    let fio = d.path().join("job.fio");
    std::fs::write(&fio, "[w]\nioengine=null\nrw=write\nsize=64k\n").unwrap();
    let target = d.path().join("t");
    // fio's --directory must exist: a dry run must leave it empty.
    let fio_dir = d.path().join("fio-dir");
    std::fs::create_dir(&fio_dir).unwrap();
    let db = d.path().join("r.db");
    let (job, fio, target, fio_dir_s) = (
        job.to_str().unwrap(),
        fio.to_str().unwrap(),
        target.to_str().unwrap(),
        fio_dir.to_str().unwrap(),
    );
    let cases: [&[&str]; 4] = [
        &["bench", target, "--job", job, "--dry-run"],
        &[
            "bench",
            "--fio-job",
            fio,
            "--directory",
            fio_dir_s,
            "--dry-run",
        ],
        &[
            "bench",
            target,
            "--profile",
            "seq",
            "--dry-run",
            "--engine",
            "null",
            "--size",
            "1m",
        ],
        &[
            "bench",
            target,
            "--group",
            "rw=write",
            "--dry-run",
            "--engine",
            "null",
            "--size",
            "1m",
        ],
    ];
    for args in cases {
        let out = cmd().args(args).env("STORLAB_DB", &db).output().unwrap();
        let err = stderr(&out);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?} must be shown\nstdout:\n{}\nstderr:\n{err}",
            stdout(&out)
        );
        assert!(
            stdout(&out).contains("Dry run: nothing is run"),
            "{args:?}: {}",
            stdout(&out)
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            !std::path::Path::new(target).exists(),
            "{args:?}: a dry run created its target"
        );
        assert!(!db.exists(), "{args:?}: a dry run stored a run");
        assert_eq!(
            std::fs::read_dir(&fio_dir).unwrap().count(),
            0,
            "{args:?}: a dry run wrote under --directory"
        );
    }
}

/// The refusal leaves the documented use alone: `--ior ... --dry-run` prints
/// the mapping and stops without creating the target.
#[test]
fn bench_dry_run_with_ior_still_prints_the_mapping_and_stops() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("t");
    let out = cmd()
        .args([
            "bench",
            target.to_str().unwrap(),
            "--ior",
            "-w -t 64k -b 1m -s 2",
            "--dry-run",
        ])
        .env("STORLAB_DB", d.path().join("r.db"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("-t"), "{}", stdout(&out));
    assert!(!target.exists(), "a dry run created its target");
    assert!(!d.path().join("r.db").exists(), "a dry run stored a run");
}

/// A value the workload table refuses (a bound or a choice) is worded like
/// every other storlab error: `storlab: error: ...`, exit 2, without clap's
/// root usage line (`Usage: storlab [COMMAND]`, which names no subcommand).
/// The typed table moved these checks into flag parsing, where clap's raw
/// error printed that usage line and dropped the `storlab:` prefix.
#[test]
fn a_refused_workload_value_reads_like_every_storlab_error() {
    let dir = tempfile::tempdir().unwrap();
    for (flag, value, needle) in [
        ("--engine", "warp", "invalid engine 'warp'"),
        ("--iodepth", "0", "invalid iodepth 0"),
        ("--rw", "sideways", "sideways"),
    ] {
        let o = crate::util::storlab(&["bench", dir.path().to_str().unwrap(), flag, value]);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "{flag} {value}: {err}");
        assert!(
            err.starts_with("storlab: error: ") && err.contains(needle),
            "{flag} {value}: {err}"
        );
        assert!(
            !err.contains("Usage: storlab [COMMAND]"),
            "{flag} {value}: {err}"
        );
    }
}
