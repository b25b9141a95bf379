//! `storlab md` under a real `mpirun -np 4` (compiled with the `mpi`
//! feature only): rank 0 stores every rank's counts, the rank shift makes
//! each rank stat the next one's files after a stonewalled create, the
//! shared tree holds every rank's files, and ranks given different jobs
//! are refused before anything is made. Every run is bounded by `timeout`.

use crate::util::{json, mpirun_sh, phase, stderr, stdout};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// `mpirun -np 4` of `storlab md` in a shell that sees `$r` (the rank).
fn mpirun4(secs: u32, args: &str) -> Option<Output> {
    mpirun_sh("md_mpi", 4, secs, &format!("md {args}"))
}

fn counts(p: &Value) -> Vec<u64> {
    p["params"]["md"]["items_by_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect()
}

fn empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

#[test]
fn four_ranks_stonewalled_with_a_shift_stat_exactly_the_next_ranks_files() {
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let args = format!(
        "{} --files 50000000 -u -N 1 -W 1 --ops create,stat,delete --json --no-save",
        d.path().display()
    );
    let Some(o) = mpirun4(120, &args) else { return };
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    let made = counts(phase(&v, "file-create"));
    assert_eq!(made.len(), 4);
    assert!(made.iter().all(|&n| n > 0 && n < 50_000_000), "{made:?}");
    assert_eq!(
        phase(&v, "file-create")["params"]["md"]["stonewalled"],
        true
    );
    let stat = phase(&v, "file-stat");
    // Rank r stats rank r+1's files: its count is the next rank's.
    let want: Vec<u64> = (0..4).map(|r| made[(r + 1) % 4]).collect();
    assert_eq!(counts(stat), want);
    assert_eq!(stat["errors"], serde_json::json!({}));
    assert_eq!(counts(phase(&v, "file-delete")), made);
    let total: u64 = made.iter().sum();
    for name in ["file-create", "file-stat", "file-delete"] {
        let p = phase(&v, name);
        assert_eq!(p["total"]["ops"].as_u64().unwrap(), total, "{name}");
        assert_eq!(p["jobs"].as_array().unwrap().len(), 4);
        assert_eq!(p["params"]["numjobs"], 4);
        // The merged histogram holds every rank's operations.
        assert!(p["total"]["lat_ns"]["max"].as_u64().unwrap() > 0);
    }
    assert!(empty(d.path()), "everything removed");
}

#[test]
fn four_ranks_in_one_shared_tree_make_four_times_the_files() {
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let db = d.path().join("r.db");
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let args = format!(
        "{} --files 2000 --dirs 100 --depth 1 --branch 2 --json --db {}",
        target.display(),
        db.display()
    );
    let Some(o) = mpirun4(120, &args) else { return };
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    for name in ["file-create", "file-stat", "file-read", "file-delete"] {
        assert_eq!(phase(&v, name)["total"]["ops"], 8000, "{name}");
        assert_eq!(counts(phase(&v, name)), vec![2000; 4]);
    }
    assert_eq!(phase(&v, "dir-create")["total"]["ops"], 400);
    assert_eq!(
        phase(&v, "file-create")["params"]["md"]["unique_dir"],
        false
    );
    assert!(empty(&target));
    let runs = crate::util::storlab(&["runs", "--db", db.to_str().unwrap(), "--kind", "md"]);
    assert!(stdout(&runs).lines().count() >= 2, "{}", stdout(&runs));
}

#[test]
fn ranks_given_different_jobs_are_refused_before_anything_is_made() {
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    // Rank 2 asks for one more file than the others.
    let args = format!(
        "{} --files $((100 + (r == 2))) --no-save",
        d.path().display()
    );
    let Some(o) = mpirun4(60, &args) else { return };
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("different md jobs"), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).matches("different md jobs").count(),
        1,
        "said once"
    );
    assert!(empty(d.path()), "nothing was made");
}

/// Only rank 2 is signalled (a batch system's signal reaches the ranks at
/// different moments): rank 2 stops its create at once, the others at the
/// phase's end (here the 4 s stonewall; md's ranks meet only between
/// phases, as mdtest's do), and no later phase runs; rank 0 stores the
/// run as interrupted with rank 2's reason, naming rank 2 (it said only
/// "another rank was interrupted"), and everything made is removed.
#[test]
fn a_signal_to_one_rank_stops_all_and_rank_0_names_it() {
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let t = d.path().join("t");
    std::fs::create_dir(&t).unwrap();
    let db = d.path().join("db.sqlite");
    let script = format!(
        "if [ \"$OMPI_COMM_WORLD_RANK\" = 2 ]; then \
         (until [ -n \"$(ls '{t}')\" ]; do sleep 0.1; done; sleep 2; kill -INT $$) & fi; \
         exec '{}' md '{t}' --files 50000000 -u -W 4 --ops create,stat,delete --json -q --db '{}'",
        crate::util::storlab_bin().display(),
        db.display(),
        t = t.display()
    );
    let Some(o) = crate::util::mpirun("md_mpi", 4, 120, ["sh", "-c", &script]) else {
        return;
    };
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("one JSON document ({e}): {}\n{}", stdout(&o), stderr(&o)));
    assert_eq!(v["interrupted"], true, "{}", stderr(&o));
    let why = v["stop_reason"].as_str().unwrap_or("");
    assert!(why.ends_with("(on rank 2)"), "{why}");
    assert!(!why.contains("another rank"), "{why}");
    let names: Vec<&str> = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["params"]["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(names, ["file-create"], "no phase after the stop");
    assert!(empty(&t), "everything removed");
}
