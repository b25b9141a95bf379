//! IOR/MPI users' habits under a real `mpirun` (built with `--features
//! mpi`): rank 0 alone writes, the other ranks' warnings come once,
//! naming the ranks, after the tables.

use crate::util::{cmd, have, is_root, skip, stderr, stdout, storlab_bin};
use std::process::{Command, Output};

/// `mpirun -np N storlab ARGS` with the test environment, bounded by 120 s.
fn mpirun(np: u32, args: &[&str]) -> Option<Output> {
    if !have("mpirun") {
        skip(
            "seams_mpi",
            "mpirun not found (Debian: openmpi-bin libopenmpi-dev)",
        );
        return None;
    }
    let mut c = Command::new("timeout");
    c.args(["120", "mpirun"]);
    if is_root() {
        c.arg("--allow-run-as-root");
    }
    c.args(["--oversubscribe", "-np", &np.to_string()])
        .arg(storlab_bin())
        .args(args);
    for (k, v) in cmd().get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    c.stdin(std::process::Stdio::null());
    Some(c.output().expect("run mpirun"))
}

/// Four ranks each too short to trust: rank 0 prints the warning once
/// ("…: ranks 0–3"), not once per rank with its node; the
/// tables (the phase table and the cluster table) are on stdout together,
/// with no warning among them. (Each rank's copy was printed, as "rank 1
/// (host): …", and the warnings came between the two tables.)
#[test]
fn other_ranks_warnings_are_printed_once_by_rank_0_naming_the_ranks() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let Some(out) = mpirun(
        4,
        &[
            "bench",
            dir,
            "--engine=null",
            "--rw=write",
            "--bs=4k",
            "--size=1M",
            "--no-save",
            "-q",
        ],
    ) else {
        return;
    };
    let (o, e) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{o}\n{e}");
    let short: Vec<&str> = e
        .lines()
        .filter(|l| l.contains("too short to trust"))
        .collect();
    assert_eq!(short.len(), 1, "{e}");
    assert!(short[0].ends_with(": ranks 0–3"), "{e}");
    assert!(!e.contains("rank 1 ("), "{e}");
    assert!(!o.contains("warning"), "{o}");
    let tables = o.matches('┌').count();
    assert!(tables >= 2, "the phase table and the cluster table: {o}");
}
