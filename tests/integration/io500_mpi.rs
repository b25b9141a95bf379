//! `mpirun -np 4 storlab io500` (issue 25; compiled with the `mpi` feature
//! only): one stored run of kind io500 with every phase, each phase's
//! items the sum of the ranks' (the create, stat and delete counts equal
//! after a stonewalled create), ior-hard's shared file holding every
//! rank's strided transfers, only rank 0 printing, and a bad config or
//! ranks given different jobs refused by every rank with exit 2 before
//! anything is made. Every run is bounded by `timeout`.

use crate::util::{cmd, mpirun, mpirun_sh, phase, stderr, stdout, storlab_bin};
use serde_json::Value;
use std::path::{Path, PathBuf};

const PHASES: [&str; 13] = [
    "ior-easy-write",
    "mdtest-easy-write",
    "ior-hard-write",
    "mdtest-hard-write",
    "find",
    "ior-easy-read",
    "mdtest-easy-stat",
    "ior-hard-read",
    "mdtest-hard-stat",
    "mdtest-easy-delete",
    "mdtest-hard-read",
    "mdtest-hard-delete",
    "ior-rnd4K-easy-read",
];

/// mdtest's counts far beyond what a 1 s stonewall lets a rank create;
/// ior-hard's segments beyond what it lets a rank write on a busy machine.
const STONEWALLED: &str = "[ior-easy]\ntransferSize = 1m\nblockSize = 16m\n\n\
[ior-hard]\nsegmentCount = 20000\n\n[mdtest-easy]\nn = 5000000\n\n[mdtest-hard]\nn = 300000\n";

fn shm() -> tempfile::TempDir {
    if Path::new("/dev/shm").is_dir() {
        tempfile::tempdir_in("/dev/shm").expect("tempdir")
    } else {
        tempfile::tempdir().expect("tempdir")
    }
}

fn files_under(p: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![p.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn items_by_rank(p: &Value) -> Vec<u64> {
    p["params"]["md"]["items_by_rank"]
        .as_array()
        .expect("items_by_rank")
        .iter()
        .map(u)
        .collect()
}

/// Four ranks, a 1 s stonewall, `--keep` (ior-hard's file stays to be
/// looked at), the record written to `--json-out`, the human summary on
/// stdout.
#[test]
fn four_ranks_store_one_run_whose_phases_sum_the_ranks() {
    let d = shm();
    let cfg = d.path().join("config.ini");
    std::fs::write(&cfg, STONEWALLED).unwrap();
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let (db, out) = (d.path().join("db.sqlite"), d.path().join("run.json"));
    let words = format!(
        "io500 {} {} --short --stonewall 1s --keep --db {} --json-out {}",
        cfg.display(),
        target.display(),
        db.display(),
        out.display()
    );
    let Some(o) = mpirun_sh("io500_mpi", 4, 300, &words) else {
        return;
    };
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Only rank 0 prints: one summary, one score line.
    let text = stdout(&o);
    assert_eq!(text.matches("[SCORE ]").count(), 1, "{text}");
    assert_eq!(
        text.matches("[RESULT]       ior-easy-write").count(),
        1,
        "{text}"
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let names: Vec<&str> = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["params"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, PHASES, "every phase, in io500's order");
    for name in PHASES {
        let p = phase(&v, name);
        assert_eq!(p["params"]["numjobs"], 4, "{name}");
        assert_eq!(p["errors"], serde_json::json!({}), "{name}");
    }
    // mdtest: the stonewalled create's count is what stat, read and
    // delete visit, summed over the ranks.
    for (w, rest) in [
        ("mdtest-easy", &["stat", "delete"][..]),
        ("mdtest-hard", &["stat", "read", "delete"][..]),
    ] {
        let made = phase(&v, &format!("{w}-write"));
        assert_eq!(made["params"]["md"]["stonewalled"], true, "{w}: {made}");
        let by_rank = items_by_rank(made);
        assert_eq!(by_rank.len(), 4, "{w}");
        assert!(by_rank.iter().all(|&n| n > 0), "{w}: {by_rank:?}");
        let total: u64 = by_rank.iter().sum();
        assert_eq!(u(&made["total"]["ops"]), total, "{w}-write");
        for op in rest {
            let p = phase(&v, &format!("{w}-{op}"));
            assert_eq!(u(&p["total"]["ops"]), total, "{w}-{op}");
            assert_eq!(items_by_rank(p).iter().sum::<u64>(), total, "{w}-{op}");
        }
    }
    // IOR: each phase's bytes are the sum of the ranks', and each read
    // reads exactly what its write wrote.
    for (w, r) in [
        ("ior-easy-write", "ior-easy-read"),
        ("ior-hard-write", "ior-hard-read"),
    ] {
        let (w, r) = (phase(&v, w), phase(&v, r));
        let ranks = w["cluster"]["per_rank"].as_array().expect("per_rank");
        assert_eq!(ranks.len(), 4);
        let sum: u64 = ranks.iter().map(|p| u(&p["total"]["bytes"])).sum();
        assert_eq!(u(&w["total"]["bytes"]), sum);
        assert_eq!(
            u(&r["total"]["bytes"]),
            sum,
            "the read reads what was written"
        );
        assert!(sum > 0);
    }
    // ior-hard's one shared file holds every rank's 47,008-byte transfers,
    // strided: rank r's i-th transfer at (i * 4 + r) * 47,008, each
    // IOR's packets (no word zero), and nothing past the last a rank
    // wrote (the file is sparse: a hole reads as zeros).
    let files: Vec<PathBuf> = files_under(&target)
        .into_iter()
        .filter(|f| f.components().any(|c| c.as_os_str() == "ior-hard"))
        .collect();
    assert_eq!(files.len(), 1, "one shared file: {files:?}");
    let f = std::fs::File::open(&files[0]).unwrap();
    let size = f.metadata().unwrap().len();
    let t = 47_008u64;
    let transfer = |at: u64| {
        let mut b = vec![0u8; t as usize];
        std::os::unix::fs::FileExt::read_exact_at(&f, &mut b, at).unwrap();
        b
    };
    let hard = phase(&v, "ior-hard-write");
    for p in hard["cluster"]["per_rank"].as_array().unwrap() {
        let (rank, bytes) = (u(&p["rank"]), u(&p["total"]["bytes"]));
        assert_eq!(bytes % t, 0, "whole transfers");
        let n = bytes / t;
        for i in [0, n / 2, n - 1] {
            let b = transfer((i * 4 + rank) * t);
            let zero = b.chunks(8).filter(|w| w.iter().all(|&x| x == 0)).count();
            assert_eq!(zero, 0, "rank {rank}'s transfer {i} of {n} holds its data");
        }
        let past = (n * 4 + rank) * t;
        if past + t <= size {
            assert!(
                transfer(past).iter().all(|&x| x == 0),
                "rank {rank} wrote {n} transfers, and nothing after"
            );
        }
    }
    // One stored run, of kind io500.
    let runs = cmd()
        .args(["runs", "--kind", "io500", "--json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(runs.as_array().map_or(0, Vec::len), 1, "{runs}");
}

/// A config io500 refuses: every rank refuses it, rank 0 says why once,
/// exit 2, nothing made or stored.
#[test]
fn a_bad_config_is_refused_by_every_rank_before_anything_is_made() {
    let d = shm();
    let cfg = d.path().join("bad.ini");
    std::fs::write(&cfg, "[ior-easy]\ntransferSize = 2m\nblockSize = 3m\n").unwrap();
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let db = d.path().join("db.sqlite");
    let words = format!(
        "io500 {} {} --short --db {}",
        cfg.display(),
        target.display(),
        db.display()
    );
    let Some(o) = mpirun_sh("io500_mpi", 4, 60, &words) else {
        return;
    };
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(
        err.matches("not a multiple of transferSize").count(),
        1,
        "{err}"
    );
    assert!(files_under(&target).is_empty(), "nothing made");
    assert!(std::fs::read_dir(&target).unwrap().next().is_none());
    assert!(!db.exists(), "nothing stored");
    assert!(stdout(&o).is_empty());
}

/// Rank 2 is given another stonewall: the ranks resolved different jobs,
/// and every rank stops before anything is made.
#[test]
fn ranks_given_different_jobs_are_refused_before_anything_is_made() {
    let d = shm();
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let words = format!(
        "io500 {} --short --stonewall $((1 + (r == 2)))s --no-save",
        target.display()
    );
    let Some(o) = mpirun_sh("io500_mpi", 4, 60, &words) else {
        return;
    };
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.matches("different io500 jobs").count(), 1, "{err}");
    assert!(std::fs::read_dir(&target).unwrap().next().is_none());
}

/// Every rank gets SIGINT 4 s after storlab's directory appears (as a
/// batch system signals a job's processes): the phase running stops on every rank, the phases
/// done are stored (interrupted), everything made is removed, and every
/// rank exits 130.
#[test]
fn sigint_on_every_rank_stops_keeps_the_phases_done_and_removes_everything() {
    let d = shm();
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let db = d.path().join("db.sqlite");
    let script = format!(
        "(until [ -n \"$(ls '{t}')\" ]; do sleep 0.1; done; sleep 4; kill -INT $$) & \
         exec '{}' io500 '{t}' --short --stonewall 3s -q --json --db '{}'",
        storlab_bin().display(),
        db.display(),
        t = target.display()
    );
    let Some(o) = mpirun("io500_mpi", 4, 120, ["sh", "-c", &script]) else {
        return;
    };
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("one JSON document ({e}): {}\n{}", stdout(&o), stderr(&o)));
    assert_eq!(v["interrupted"], true);
    let n = v["phases"].as_array().unwrap().len();
    assert!((1..13).contains(&n), "{n} phases");
    assert!(
        v["stop_reason"].as_str().unwrap_or("").contains("SIGINT"),
        "{}",
        v["stop_reason"]
    );
    assert!(files_under(&target).is_empty(), "left behind");
    assert!(std::fs::read_dir(&target).unwrap().next().is_none());
}
