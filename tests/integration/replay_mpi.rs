//! `storlab replay` under a real `mpirun -np 4` (compiled with the `mpi`
//! feature only): each MPI rank replays its own trace rank and rank 0
//! stores one run with every rank's exact counts; a trace with more ranks
//! than processes, and ranks given different jobs, are refused before any
//! I/O. Every run is bounded by `timeout`.

use crate::util::{mpirun_sh, stderr, stdout, storlab};
use std::path::{Path, PathBuf};
use std::process::Output;

/// `mpirun -np 4` of `storlab replay` in a shell that sees `$r` (the rank).
fn mpirun4(secs: u32, args: &str) -> Option<Output> {
    mpirun_sh("replay_mpi", 4, secs, &format!("replay {args}"))
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/darshan")
        .join(name)
}

fn empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).expect("dir").next().is_none()
}

#[test]
fn four_ranks_each_replay_their_own_trace_rank_and_rank_0_stores_one_run() {
    let d = tempfile::tempdir().expect("tempdir");
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let db = d.path().join("r.db");
    let args = format!(
        "'{}' '{}' --speed max --json --db '{}'",
        fixture("dxt-4ranks-3.41.darshan").display(),
        target.display(),
        db.display()
    );
    let Some(o) = mpirun4(300, &args) else { return };
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // One JSON document: only rank 0 printed.
    let v: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", stdout(&o)));
    let p = &v["phases"][0];
    let jobs = p["jobs"].as_array().expect("jobs");
    let ranks: Vec<u64> = jobs
        .iter()
        .map(|j| j["job"].as_u64().expect("rank"))
        .collect();
    assert_eq!(ranks, [0, 1, 2, 3]);
    for j in jobs {
        assert_eq!(j["read"]["ops"], 6126, "{j}");
        assert_eq!(j["write"]["ops"], 1497, "{j}");
        assert_eq!(j["read"]["bytes"], 22_517_726_u64, "{j}");
        assert_eq!(j["write"]["bytes"], 13_021_781_u64, "{j}");
    }
    // The merged latency histogram holds every rank's operations.
    assert_eq!(p["total"]["ops"], 4 * (6126 + 1497));
    assert!(
        !p["warnings"].to_string().contains("rank"),
        "no rank differs: {}",
        p["warnings"]
    );
    assert!(empty(&target), "laid-out files removed");
    let runs = storlab(&["runs", "--db", db.to_str().expect("utf8"), "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&stdout(&runs)).expect("runs JSON");
    assert_eq!(
        listed.as_array().map(Vec::len),
        Some(1),
        "one run stored: {listed}"
    );
}

#[test]
fn a_trace_with_more_ranks_than_processes_is_refused_naming_both() {
    let d = tempfile::tempdir().expect("tempdir");
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let db = d.path().join("r.db");
    let args = format!(
        "'{}' '{}' --db '{}'",
        fixture("sample-dxt-simple.darshan").display(),
        target.display(),
        db.display()
    );
    let Some(o) = mpirun4(120, &args) else { return };
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the trace has 16 ranks, but the job has 4 processes"),
        "{}",
        stderr(&o)
    );
    assert!(empty(&target), "nothing laid out");
    assert!(!db.exists(), "no store opened");
}

#[test]
fn ranks_given_different_jobs_are_refused_before_any_io() {
    let d = tempfile::tempdir().expect("tempdir");
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let db = d.path().join("r.db");
    // Rank 3 alone replays at twice the speed.
    let args = format!(
        "'{}' '{}' --db '{}' --speed $([ $r = 3 ] && echo 2 || echo max)",
        fixture("dxt-4ranks-3.41.darshan").display(),
        target.display(),
        db.display()
    );
    let Some(o) = mpirun4(120, &args) else { return };
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("different replays"), "{}", stderr(&o));
    assert!(empty(&target), "nothing laid out");
    assert!(!db.exists(), "no store opened");
}
