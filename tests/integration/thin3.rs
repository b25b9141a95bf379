//! Issue 21, third pass: forks of the option vocabulary found while the
//! front end became glue, each a refusal that now comes from the one table.

use crate::util::{stderr, storlab};

/// `storlab runs --rw` refuses a pattern as the option table does, naming
/// every pattern: its own list had left out rmw, which it accepts.
#[test]
fn runs_rw_names_every_pattern_it_takes() {
    let out = storlab(&["runs", "--rw", "sideways"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("invalid rw 'sideways'"), "{err}");
    assert!(err.contains("rmw"), "{err}");
    let out = storlab(&["runs", "--rw", "rmw"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A sweep over a word rate_process does not take is refused before any
/// point runs, as one over a bad engine is (each point used to fail on
/// its own, the sweep run and stored).
#[test]
fn a_sweep_over_a_bad_rate_process_is_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("t");
    let out = storlab(&[
        "sweep",
        target.to_str().unwrap(),
        "--vary",
        "rate_process=linear,bursty",
        "--engine=null",
        "--rw=randread",
        "--size=1m",
        "--rate-iops=100",
        "--runtime=1s",
        "--no-save",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("invalid rate_process 'bursty': one of linear, poisson"),
        "{err}"
    );
    assert!(!target.exists(), "nothing laid out");
}

/// fallocate's words are fallocate's: `--verify=native` is refused, not
/// read as on; `--fallocate=posix` still is fio's native allocation.
#[test]
fn only_fallocate_takes_native_posix_and_none() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().to_str().unwrap();
    let out = storlab(&["bench", target, "--rw=read", "--verify=native", "--dry-run"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("invalid value 'native' for --verify: use 1 or 0"),
        "{}",
        stderr(&out)
    );
    let out = storlab(&[
        "bench",
        target,
        "--rw=read",
        "--fallocate=posix",
        "--dry-run",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
