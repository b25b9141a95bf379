//! Ranks started with different options (mpirun's MPMD `a : b` syntax)
//! agree on one resolved job before any I/O, and a panic on a rank ends
//! the job: real `mpirun`, built only with `--features mpi`:
//! `cargo test --features mpi --test integration mpi_agree::`. Every
//! launch is bounded by `timeout`, so a hang fails instead of blocking CI.

use crate::util::{cmd, have, is_root, skip, stderr, storlab_bin};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A test directory: an empty target directory and a database of its own.
struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    fn new() -> Lab {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("t")).unwrap();
        Lab { dir }
    }

    fn target(&self) -> PathBuf {
        self.dir.path().join("t")
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("results.db")
    }

    /// `mpirun -np N1 storlab ARGS1 : -np N2 storlab ARGS2 ...` in the
    /// lab's directory with its database, killed after `secs`; the output
    /// and how long it took.
    fn mpmd(
        &self,
        ranks: &[(u32, Vec<String>)],
        env: &[(&str, &str)],
        secs: u32,
    ) -> Option<(Output, Duration)> {
        if !have("mpirun") {
            skip(
                "mpi_agree",
                "mpirun not found (Debian: openmpi-bin libopenmpi-dev)",
            );
            return None;
        }
        let mut c = Command::new("timeout");
        c.args(["-k", "5", &secs.to_string(), "mpirun"]);
        if is_root() {
            c.arg("--allow-run-as-root");
        }
        c.arg("--oversubscribe");
        for (i, (np, args)) in ranks.iter().enumerate() {
            if i > 0 {
                c.arg(":");
            }
            c.args(["-np", &np.to_string()])
                .arg(storlab_bin())
                .args(args);
        }
        for (k, v) in cmd().get_envs() {
            if let Some(v) = v {
                c.env(k, v);
            }
        }
        c.env("STORLAB_DB", self.db());
        for (k, v) in env {
            c.env(k, v);
        }
        c.current_dir(self.dir.path());
        c.stdin(std::process::Stdio::null());
        let t0 = Instant::now();
        let o = c.output().expect("run mpirun");
        Some((o, t0.elapsed()))
    }

    /// `storlab bench TARGET` with a small psync write and `extra`.
    fn bench(&self, extra: &[&str]) -> Vec<String> {
        let target = self.target().display().to_string();
        let mut v: Vec<String> = [
            "bench",
            target.as_str(),
            "--size",
            "1M",
            "--engine",
            "psync",
            "--cache",
            "cold",
            "-q",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if !extra.contains(&"--job") {
            v.push("--rw".into());
            v.push("write".into());
        }
        if !extra.contains(&"--bs") && !extra.contains(&"--job") {
            v.push("--bs".into());
            v.push("4k".into());
        }
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    }

    /// Runs stored in the lab's database (`storlab runs --json`); none when
    /// the database was never created.
    fn stored_runs(&self) -> usize {
        if !self.db().exists() {
            return 0;
        }
        let o = cmd()
            .args(["runs", "--json"])
            .env("STORLAB_DB", self.db())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v.as_array().unwrap().len()
    }

    /// What is left in the target directory.
    fn left_in_target(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.target())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    }

    /// The launch was refused as it must be: exit 2 well before the
    /// timeout, the one message (once) containing each of `needles`, no
    /// run stored, no database created, nothing in the target directory.
    fn assert_refused(&self, out: &(Output, Duration), needles: &[&str]) {
        let (o, took) = out;
        let err = stderr(o);
        assert_eq!(o.status.code(), Some(2), "took {took:?}; stderr:\n{err}");
        assert!(*took < Duration::from_secs(30), "took {took:?}:\n{err}");
        let msg = "storlab: error: ranks were started with different options";
        assert_eq!(
            err.matches(msg).count(),
            1,
            "one message, from rank 0:\n{err}"
        );
        for n in needles
            .iter()
            .chain(&["start every rank with the same command line"])
        {
            assert!(err.contains(n), "missing {n:?} in:\n{err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(self.stored_runs(), 0);
        assert!(!self.db().exists(), "the database was created");
        assert_eq!(self.left_in_target(), Vec::<PathBuf>::new());
    }
}

fn job_file(dir: &Path) -> String {
    let p = dir.join("job.toml");
    std::fs::write(
        &p,
        r#"
[global]
bs = "4k"
size = "1M"
engine = "psync"
cache = "cold"
[[phase]]
name = "w"
rw = "write"
[[phase]]
name = "r"
rw = "read"
"#,
    )
    .unwrap();
    p.display().to_string()
}

/// Before: a panic indexing rank 0's file list, and rank 0 waiting for
/// ever at 100 % CPU.
#[test]
fn different_numjobs_are_refused_before_any_io() {
    let lab = Lab::new();
    let Some(out) = lab.mpmd(
        &[
            (1, lab.bench(&["--numjobs", "1"])),
            (1, lab.bench(&["--numjobs", "2"])),
        ],
        &[],
        60,
    ) else {
        return;
    };
    lab.assert_refused(&out, &["rank 1 has numjobs=2 where rank 0 has numjobs=1"]);
}

/// Before: a panic and a hang.
#[test]
fn different_clients_are_refused_before_any_io() {
    let lab = Lab::new();
    let Some(out) = lab.mpmd(
        &[(1, lab.bench(&[])), (1, lab.bench(&["--clients", "1,2"]))],
        &[],
        60,
    ) else {
        return;
    };
    lab.assert_refused(
        &out,
        &["rank 1 has clients=1,2 where rank 0 has clients=(none)"],
    );
}

/// Before: a hang (two phases on one rank, one on the other).
#[test]
fn a_job_file_on_one_rank_and_flags_on_another_are_refused() {
    let lab = Lab::new();
    let job = job_file(lab.dir.path());
    let Some(out) = lab.mpmd(
        &[(1, lab.bench(&["--job", &job])), (1, lab.bench(&[]))],
        &[],
        60,
    ) else {
        return;
    };
    lab.assert_refused(
        &out,
        &["rank 1 has phases=1 (", "where rank 0 has phases=2 (w, r)"],
    );
}

/// Before: exit 0 and one "finished" run mixing 4k and 64k figures.
#[test]
fn different_block_sizes_are_refused_before_any_io() {
    let lab = Lab::new();
    let Some(out) = lab.mpmd(
        &[
            (1, lab.bench(&["--bs", "4k"])),
            (1, lab.bench(&["--bs", "64k"])),
        ],
        &[],
        60,
    ) else {
        return;
    };
    lab.assert_refused(&out, &["rank 1 has bs=64k where rank 0 has bs=4k"]);
}

/// Before: exit 0, the run stored with rank 0's tags. Four ranks, the last
/// one different: the message names it and no other.
#[test]
fn different_tags_are_refused_and_the_odd_rank_is_named() {
    let lab = Lab::new();
    let Some(out) = lab.mpmd(
        &[
            (3, lab.bench(&["--tag", "ctl=a"])),
            (1, lab.bench(&["--tag", "ctl=b"])),
        ],
        &[],
        60,
    ) else {
        return;
    };
    lab.assert_refused(&out, &["rank 3 has tag.ctl=b where rank 0 has tag.ctl=a"]);
    let err = stderr(&out.0);
    assert!(
        !err.contains("rank 1 ") && !err.contains("rank 2 "),
        "{err}"
    );
}

/// A rank that cannot plan at all (its job file is missing) is still
/// reported once by rank 0, with the rank, before the jobs are compared.
#[test]
fn a_planning_failure_on_one_rank_is_still_agreed() {
    let lab = Lab::new();
    let missing = lab.dir.path().join("missing.toml").display().to_string();
    let Some((o, took)) = lab.mpmd(
        &[(1, lab.bench(&[])), (1, lab.bench(&["--job", &missing]))],
        &[],
        60,
    ) else {
        return;
    };
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "took {took:?}:\n{err}");
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assert_eq!(err.matches("storlab: error:").count(), 1, "{err}");
    assert!(
        err.contains("rank 1 on ")
            && err.contains("cannot plan the job")
            && err.contains("missing.toml"),
        "{err}"
    );
    assert!(!lab.db().exists());
    assert_eq!(lab.left_in_target(), Vec::<PathBuf>::new());
}

/// The same job spelled two ways (an absolute and a relative target that
/// name one directory, from mpirun's working directory) is one job: it
/// runs and is stored once.
#[test]
fn the_same_target_spelled_differently_agrees_and_runs() {
    let lab = Lab::new();
    let mut relative = lab.bench(&[]);
    relative[1] = "t".into();
    let Some((o, _)) = lab.mpmd(&[(1, lab.bench(&[])), (1, relative)], &[], 60) else {
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(lab.stored_runs(), 1);
    assert_eq!(lab.left_in_target(), Vec::<PathBuf>::new());
}

/// A panic on rank 1 while rank 0 waits for it in a collective step (the
/// test hook, honoured by debug builds only) ends the whole job within
/// seconds with the panic named, instead of a hang.
#[test]
fn a_panic_on_one_rank_ends_the_job_within_seconds() {
    if !cfg!(debug_assertions) {
        skip(
            "mpi_agree::a_panic_on_one_rank_ends_the_job_within_seconds",
            "STORLAB_TEST_PANIC_RANK is honoured by debug builds only",
        );
        return;
    }
    let lab = Lab::new();
    let args = lab.bench(&["--runtime", "2s"]);
    let Some((o, took)) = lab.mpmd(&[(3, args)], &[("STORLAB_TEST_PANIC_RANK", "1")], 60) else {
        return;
    };
    let err = stderr(&o);
    assert!(took < Duration::from_secs(20), "took {took:?}:\n{err}");
    assert!(!o.status.success(), "{err}");
    assert_ne!(o.status.code(), Some(124), "killed by the timeout:\n{err}");
    assert!(
        err.contains("storlab: rank 1 on ") && err.contains("test panic on rank 1"),
        "{err}"
    );
    assert!(err.contains("MPI_Abort"), "{err}");
}

/// A bad option given only to the second app context of an MPMD launch
/// is named (by that context's first rank); before, clap errors printed on
/// rank 0 only, and the user saw nothing but mpirun's "exit code 2". One
/// given to every rank is still named once.
#[test]
fn a_bad_option_on_one_mpmd_context_is_named_and_on_all_once() {
    let lab = Lab::new();
    let Some((o, took)) = lab.mpmd(
        &[(1, lab.bench(&[])), (2, lab.bench(&["--bogus-option"]))],
        &[],
        60,
    ) else {
        return;
    };
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assert_eq!(err.matches("'--bogus-option'").count(), 1, "{err}");
    let Some((o, _)) = lab.mpmd(&[(3, lab.bench(&["--bogus-option"]))], &[], 60) else {
        return;
    };
    let err = stderr(&o);
    assert_eq!(err.matches("'--bogus-option'").count(), 1, "{err}");
    assert_eq!(lab.stored_runs(), 0);
}
